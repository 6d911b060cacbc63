/* NVML's clocks event reasons by name (clock_reasons.h). */
#include "lib/clock_reasons.h"

#include <stdio.h>
#include <string.h>

static const struct {
	unsigned long long bit;
	const char *name;
} reasons[] = {
	{ NVML_REASON_GPU_IDLE, "gpu_idle" },
	{ NVML_REASON_APP_CLOCKS_SETTING, "app_clocks_setting" },
	{ NVML_REASON_SW_POWER_CAP, "sw_power_cap" },
	{ NVML_REASON_HW_SLOWDOWN, "hw_slowdown" },
	{ NVML_REASON_SYNC_BOOST, "sync_boost" },
	{ NVML_REASON_SW_THERMAL, "sw_thermal_slowdown" },
	{ NVML_REASON_HW_THERMAL, "hw_thermal_slowdown" },
	{ NVML_REASON_HW_POWER_BRAKE, "hw_power_brake_slowdown" },
	{ NVML_REASON_DISPLAY_CLOCK, "display_clock_setting" },
};

unsigned long long clock_reason_bit(const char *name)
{
	for (size_t i = 0; name && i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (!strcmp(name, reasons[i].name))
			return reasons[i].bit;
	return 0;
}

void clock_reasons_text(unsigned long long bits, char *buf, size_t len)
{
	unsigned long long rest = bits;
	size_t used = 0;

	if (!buf || !len)
		return;
	buf[0] = '\0';
	if (!bits) {
		snprintf(buf, len, "none");
		return;
	}
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		if (!(bits & reasons[i].bit))
			continue;
		rest &= ~reasons[i].bit;
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s",
						 used ? "," : "", reasons[i].name);
	}
	if (rest && used < len)
		snprintf(buf + used, len - used, "%s0x%llx", used ? "," : "", rest);
}
