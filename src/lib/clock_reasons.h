/*
 * NVML's clocks event ("throttle") reasons: the bits a driver sets for
 * what holds a GPU's clock below its maximum, and the names zlb writes
 * for them in records (clock_reasons), device states and reports. Kept
 * apart from backends/nvml.c, which reads them, so that whoever reads a
 * record back (compare) knows the names without reaching for NVML.
 */
#ifndef ZLB_CLOCK_REASONS_H
#define ZLB_CLOCK_REASONS_H

#include <stddef.h>

/* The bits, as nvml.h numbers them. */
#define NVML_REASON_GPU_IDLE            0x0000000000000001ull
#define NVML_REASON_APP_CLOCKS_SETTING  0x0000000000000002ull
#define NVML_REASON_SW_POWER_CAP        0x0000000000000004ull
#define NVML_REASON_HW_SLOWDOWN         0x0000000000000008ull
#define NVML_REASON_SYNC_BOOST          0x0000000000000010ull
#define NVML_REASON_SW_THERMAL          0x0000000000000020ull
#define NVML_REASON_HW_THERMAL          0x0000000000000040ull
#define NVML_REASON_HW_POWER_BRAKE      0x0000000000000080ull
#define NVML_REASON_DISPLAY_CLOCK       0x0000000000000100ull

/*
 * Name reason bits, comma-separated, in bit order: gpu_idle,
 * app_clocks_setting, sw_power_cap, hw_slowdown, sync_boost,
 * sw_thermal_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown,
 * display_clock_setting; bits without a name are added as one hex number
 * ("0x8000000000000000"); 0 is "none". Truncated to fit, always
 * terminated (len > 0).
 */
void clock_reasons_text(unsigned long long bits, char *buf, size_t len);

/* The bit clock_reasons_text names name; 0 for any other string or NULL. */
unsigned long long clock_reason_bit(const char *name);

#endif
