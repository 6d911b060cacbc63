/*
 * NVML (the NVIDIA Management Library), reached through dlopen.
 *
 * What zlb wants from it is small: the clocks a device runs at, why they
 * are not higher, whether someone pinned them, and who else is using the
 * device. Like cuda_driver.h, nothing from the CUDA toolkit is needed at
 * build time: the few types and entry points are declared in nvml.c, and
 * the library is opened at run time from $ZLB_LIBNVML (tests point it at
 * a fake) or else libnvidia-ml.so.1 / libnvidia-ml.so. Where NVML has
 * versioned entry points the newest zlb knows is used, falling back to
 * older ones where a driver lacks it (nvmlDeviceGetCurrentClocksEventReasons
 * -> ...ThrottleReasons, nvmlDeviceGetComputeRunningProcesses_v3 -> _v2 ->
 * the unversioned one).
 *
 *     struct nvml_state st;
 *     char err[256];
 *
 *     if (nvml_state_by_uuid("GPU-...", &st, err, sizeof(err)) == 0)
 *         ... st.sm_clock_mhz, st.clocks_locked ...
 *
 * This file is compiled both into zlb and into libzlbtimer.so, so it uses
 * libc and libdl only and reports errors as sentences written into a
 * caller-provided buffer (truncated to fit, always NUL-terminated when
 * errlen > 0; err may be NULL when errlen is 0). Not thread-safe: call it
 * from one thread at a time.
 */
#ifndef ZLB_NVML_H
#define ZLB_NVML_H

#include <stddef.h>

#include "lib/clock_reasons.h"   /* NVML_REASON_*, clock_reasons_text */

/* How many process ids a snapshot keeps (nprocs counts them all). */
#define NVML_STATE_PIDS 16

/*
 * A snapshot of one device. Any reading NVML refuses (not supported on
 * this board, no permission) is left 0, with the *_known flags telling
 * "none" from "could not tell" where 0 is a meaningful answer.
 */
struct nvml_state {
	int valid;                   /* 1: the device was found and read */
	unsigned sm_clock_mhz;       /* current SM clock */
	unsigned mem_clock_mhz;      /* current memory clock */
	unsigned sm_max_mhz;         /* highest SM clock the board allows */
	unsigned sm_app_mhz;         /* application clock target (nvidia-smi -ac) */
	unsigned sm_default_app_mhz; /* ... and its default */
	int reasons_known;           /* 1: reasons below were read */
	unsigned long long reasons;  /* NVML_REASON_* bits now active */
	/*
	 * Whether the SM clock is pinned (nvidia-smi -lgc, or -ac), as far as
	 * NVML can tell; it has no getter for a -lgc range, so:
	 *   1  an application clock target differs from its default (-ac), or
	 *      the driver reports NVML_REASON_APP_CLOCKS_SETTING (the clocks are
	 *      held by a user setting: -ac, or -lgc where it is what limits);
	 *   0  the device idles (NVML_REASON_GPU_IDLE) at an SM clock below
	 *      half its maximum with the application clocks at their default:
	 *      a lock as used for benchmarking (-lgc f,f, min == max) keeps an
	 *      idle GPU at f, so nothing holds the clock from below;
	 *  -1  anything else: notably a busy GPU whose clock no setting limits,
	 *      which looks the same locked (at or above that clock) or not.
	 * A -lgc cap alone (-lgc 0,f) reads 0 while the device idles.
	 */
	int clocks_locked;
	unsigned temperature_c;      /* GPU die */
	unsigned power_mw;           /* board power draw */
	int procs_known;             /* 1: the process list below was read */
	unsigned nprocs;             /* processes with a compute context on it */
	unsigned pids[NVML_STATE_PIDS]; /* the first of them */
};

/*
 * Open NVML and call nvmlInit_v2. The first call does the work; later
 * calls return the same answer (and sentence). The library is never shut
 * down: zlb and the timer read from it until they exit.
 *
 * Returns 0; 1 when there is no NVML here (no library, or nvmlInit_v2
 * reports that no NVIDIA driver is loaded): not a fault, callers go on
 * without clocks; -1 on any other failure (a library without nvmlInit_v2,
 * another init error).
 */
int nvml_load(char *err, size_t errlen);

/*
 * Read a snapshot of the device with this uuid ("GPU-xxxxxxxx-...", as
 * cuda_list_devices formats it) or PCI bus id ("0000:3B:00.0", as
 * cuDeviceGetPCIBusId gives it; NVML's own "00000000:3B:00.0" works too).
 * Returns 0 with *st filled (st->valid = 1); 1 as nvml_load (no NVML);
 * -1 when NVML does not know the device or refuses the handle. *st is
 * zeroed first in every case.
 */
int nvml_state_by_uuid(const char *uuid, struct nvml_state *st,
		       char *err, size_t errlen);
int nvml_state_by_pci(const char *pci_bus_id, struct nvml_state *st,
		      char *err, size_t errlen);

/*
 * The current SM clock of a device, by PCI bus id, for reads in a timing
 * loop: the device handle is looked up once and cached (per bus id), so a
 * read is one NVML call. Returns 0 with *mhz set; non-zero with *mhz = 0
 * when NVML is absent, does not know the device or will not tell.
 */
int nvml_sm_clock_by_pci(const char *pci_bus_id, unsigned *mhz);

/*
 * The clocks event reason bits (NVML_REASON_*) active on a device now, by
 * PCI bus id, through the same cached handle: what holds its clock below
 * the maximum while a timing loop runs. Returns 0 with *bits set; non-zero
 * with *bits = 0 when NVML is absent, does not know the device or will not
 * tell (then nothing is known, not "no reason").
 */
int nvml_reasons_by_pci(const char *pci_bus_id, unsigned long long *bits);

/*
 * The highest SM clock a device allows now, by PCI bus id, through the
 * same cached handle: its maximum, or its application clock target where
 * that is lower. Reads no current clock, so it takes nothing from a
 * sequence of clock reads. Returns 0 with *mhz set; non-zero with *mhz = 0
 * when NVML is absent, does not know the device or will not tell, or the
 * application clocks were set away from their default (nvidia-smi -ac: the
 * clock is then the user's choice, not a limit's).
 */
int nvml_sm_top_by_pci(const char *pci_bus_id, unsigned *mhz);

#endif
