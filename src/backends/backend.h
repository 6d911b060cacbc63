/*
 * Accelerator backends: everything that differs between vendors lives in
 * one struct backend_ops per vendor (src/backends/<vendor>.c), listed once
 * in registry.c. Code outside src/backends/ asks a backend; it never names
 * a vendor.
 */
#ifndef ZLB_BACKEND_H
#define ZLB_BACKEND_H

#include <sys/types.h>

#include <stdint.h>

#include "lib/strbuf.h"
#include "lib/strvec.h"

struct device_info {
	int index;          /* ordinal as this process sees it */
	char *name;         /* e.g. "NVIDIA H200" */
	char *uuid;         /* vendor's stable id, or NULL */
	uint64_t total_mem; /* bytes, 0 if unknown */
};

/* What a device is doing at one moment: clocks, limits, users. */
struct device_state {
	unsigned sm_clock_mhz, mem_clock_mhz, sm_max_mhz;
	int reasons_known;
	char reasons[256];       /* clock limit ("throttle") reasons, "none" */
	int clocks_locked;       /* 1, 0, or -1 when it cannot be told */
	unsigned temperature_c;
	unsigned power_mw;
	int procs_known;
	unsigned nprocs;         /* compute processes on the device */
	unsigned pids[16];       /* the first of them */
};

/*
 * Leave pid out of st's compute processes: the warm worker that runs the
 * measurement is not another user of the card (in a process of its own, the
 * measured pytest never shows: it starts after the first look and has ended
 * by the last). Nothing when pid <= 0 or the processes are not known.
 */
void device_state_drop_pid(struct device_state *st, pid_t pid);

struct device_list {
	struct device_info *v;
	int nr;
	char *driver_version; /* or NULL */
};

void device_list_release(struct device_list *list);

enum backend_cap {
	/* zlb's graph timer (capture, then timed replays) works on this backend. */
	BACKEND_CAP_GRAPH_TIMER = 1 << 0,
	/*
	 * The Hopper fp16 mm cluster-kernel workaround (--mm-cluster-fix,
	 * python/zlbench/mm_cluster_fix.py) applies: FlagGems' cluster path
	 * exists only in its NVIDIA Hopper mm.
	 */
	BACKEND_CAP_MM_CLUSTER_FIX = 1 << 1,
};

/*
 * How the graph timer times the replays of a captured graph, passed to the
 * measured process as ZLB_GRAPH_REPLAY.
 */
#define BACKEND_REPLAY_DRIVER "driver"  /* libzlbtimer replays the raw graph exec through
					   the vendor's driver API (CUDA) */
#define BACKEND_REPLAY_EVENTS "events"  /* the timing plugin calls graph.replay() between
					   the device module's timing events (torch_musa
					   exposes no raw graph exec to hand to C) */

struct backend_ops {
	const char *name;                      /* canonical, e.g. "cuda" */
	const char *const *aliases;            /* NULL-terminated */
	const char *description;
	/* Visibility variables this backend writes (all set to the device id). */
	const char *const *visibility_keys;
	/*
	 * FlagGems' vendor name: exported as GEMS_VENDOR so flag_gems skips its
	 * probe (unless the user set GEMS_VENDOR or FLAGGEMS_VENDOR).
	 */
	const char *flaggems_vendor;
	/*
	 * The vendor part of FlagTree's compiler switches, FLAGTREE_<VENDOR>_...:
	 * "MUSA" for FLAGTREE_MUSA_RLC_ENHANCE, "" where the switches carry no
	 * vendor (FlagTree's NVIDIA/AMD build reads FLAGTREE_RLC_ENHANCE), NULL
	 * where zlb does not know the spelling.
	 */
	const char *flagtree_vendor;
	unsigned caps;                         /* enum backend_cap bits */
	/* torch's device module for this vendor: torch.<torch_module> ("cuda", "musa"). */
	const char *torch_module;
	/* With BACKEND_CAP_GRAPH_TIMER: BACKEND_REPLAY_DRIVER or BACKEND_REPLAY_EVENTS. */
	const char *graph_replay;
	/*
	 * A graph-capture failure is one of three kinds, told apart by exact
	 * vendor texts (found verbatim in the error or what led to it). A text
	 * belongs to one backend: the same words from another vendor's stack
	 * mean nothing here.
	 *
	 * fatal: the device is broken; falling back would hide it. The row
	 *   stops with the error.
	 * poisoned: the context is unusable for the rest of the process (MUSA's
	 *   "unknown error"): the row stops, and nothing later in that process
	 *   is measured (a warm worker ends after the run).
	 * recoverable: anything else. The row falls back to direct timing.
	 */
	const char *const *capture_fatal_texts;
	const char *const *capture_poison_texts;
	/*
	 * Tests whose measurements are never captured on this backend, direct
	 * timing instead: keyed by the pytest function name without "test_"
	 * (zlb's operator name: "unique2" for test_unique.py::test_unique2).
	 */
	const char *const *capture_deny;
	/* In-process plugins only this backend needs, loaded before all others. */
	const char *const *compat_plugins;
	/*
	 * Enumerate the devices visible to this process.
	 * Returns 0 (list filled, possibly empty), 1 when the vendor's stack is
	 * absent, or -1 on error (with error() called).
	 */
	int (*list_devices)(struct device_list *out, struct strbuf *why);
	/*
	 * Snapshot dev's state (NULL where the vendor offers no way). Returns
	 * 0, or 1 when it cannot be read here (why says so).
	 */
	int (*device_state)(const struct device_info *dev, struct device_state *st,
			    struct strbuf *why);
};

/* Find a backend by name or alias (case-insensitive); NULL if unknown. */
const struct backend_ops *backend_find(const char *name);
/* All registered backends, NULL-terminated, in registry order. */
const struct backend_ops *const *backend_all(void);
/* "cuda (nvidia, nv), musa (...), ..." for messages. Fresh allocation. */
char *backend_names_help(void);

/*
 * The physical device id for the logical index the user asked for:
 * when the inherited environment already restricts visibility (say
 * CUDA_VISIBLE_DEVICES=6,7), logical 1 is "7", so a caller who picked idle
 * cards is never moved onto others. Returns NULL (with error()) when the
 * index is outside the inherited list.
 */
char *backend_physical_device(const struct backend_ops *b,
			      const struct strvec *env, int logical);

/*
 * Write the backend's visibility variables into env (all set to
 * physical_id) and remove every other backend's keys.
 */
void backend_apply_visibility(const struct backend_ops *b, struct strvec *env,
			      const char *physical_id);

/* Helpers shared by the vendor files (dlprobe.c). */
struct dl_count_probe {
	const char *what;           /* the runtime, in messages ("MUSA driver") */
	const char *env_override;   /* a path in this variable wins (tests: a fake runtime) */
	const char *const *libs;    /* tried in order with dlopen */
	const char *init_sym;       /* int init(unsigned) or NULL */
	int init_takes_null;        /* init(NULL) instead of init(0) */
	const char *count_sym;      /* int count(int *) */
	const char *name_sym;       /* int name(char *, int, int dev) or NULL */
	const char *version_sym;    /* int version(int *) or NULL */
};
int dl_count_devices(const struct dl_count_probe *p, struct device_list *out,
		     struct strbuf *why);

#endif
