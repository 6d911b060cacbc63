/*
 * Loading a vendor library at run time (the way nvtop reaches NVML): open
 * it from an override path or the first soname that loads, then fill a
 * table of function pointers, each from the first of its names the library
 * exports. Nothing is linked at build time, so zlb and libzlbtimer build
 * and run where the library is absent, and then say so.
 *
 * Like the driver code that uses it, this depends only on libc and libdl
 * and reports into caller buffers: it is linked into libzlbtimer too.
 */
#ifndef ZLB_DLLOAD_H
#define ZLB_DLLOAD_H

#include <stddef.h>

/*
 * Open $env_var's path when it is set (tests point it at a fake), else the
 * first of sonames (NULL-terminated) that loads. `what` names the library
 * in messages ("CUDA driver"). On success the path loaded is copied into
 * loaded; on failure err says why ("no CUDA driver: ..."). RTLD_LOCAL: the
 * library's symbols stay out of the global namespace, and a library the
 * process already has (torch loaded the driver) comes back as that copy.
 */
void *dl_open_library(const char *what, const char *env_var,
		      const char *const *sonames, char *loaded, size_t loaded_len,
		      char *err, size_t errlen);

#define DL_SYM_NAMES 3

/* One entry point: its slot in the caller's table, and the names to try. */
struct dl_sym {
	size_t offset;                       /* of the pointer in the table */
	int required;                        /* missing: the load fails */
	const char *names[DL_SYM_NAMES];     /* versioned names first */
};

/*
 * Fill the table at base from handle h. A missing optional symbol leaves
 * its pointer NULL. Returns 0, or -1 with err naming the first missing
 * required symbol ("the CUDA driver <path> lacks cuInit (driver too old?)").
 */
int dl_resolve(void *h, const char *what, const char *loaded,
	       const struct dl_sym *syms, size_t nsyms, void *base,
	       char *err, size_t errlen);

#endif
