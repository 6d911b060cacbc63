/*
 * Device enumeration through a vendor runtime loaded with dlopen, for the
 * backends whose runtimes follow the "init / count / name" shape. Nothing
 * is linked at build time, so zlb builds and runs where the stack is absent
 * and then says so.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/dlload.h"

typedef int (*init_fn)(unsigned);
typedef int (*init_null_fn)(const char *);
typedef int (*count_fn)(int *);
typedef int (*name_fn)(char *, int, int);
typedef int (*version_fn)(int *);

int dl_count_devices(const struct dl_count_probe *p, struct device_list *out,
		     struct strbuf *why)
{
	void *h = NULL;
	const char *const *lib;
	const char *over = p->env_override ? getenv(p->env_override) : NULL;
	char loaded[512], err[512];
	int count = 0, rc;

	memset(out, 0, sizeof(*out));
	if (over && *over) {
		/* The override is the library, not a hint: one that fails is said. */
		h = dl_open_library(p->what ? p->what : "runtime", p->env_override, p->libs,
				    loaded, sizeof(loaded), err, sizeof(err));
		if (!h) {
			strbuf_addstr(why, err);
			return 1;
		}
	}
	for (lib = p->libs; *lib && !h; lib++)
		h = dlopen(*lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		strbuf_addf(why, "none of its runtime libraries could be loaded (%s)",
			    p->libs[0]);
		return 1;
	}
	if (p->init_sym) {
		void *sym = dlsym(h, p->init_sym);
		if (sym) {
			rc = p->init_takes_null ? ((init_null_fn)sym)(NULL)
						: ((init_fn)sym)(0);
			if (rc) {
				strbuf_addf(why, "%s returned %d", p->init_sym, rc);
				dlclose(h);
				return 1;
			}
		}
	}
	count_fn cnt = (count_fn)dlsym(h, p->count_sym);
	if (!cnt) {
		strbuf_addf(why, "%s is missing from the runtime", p->count_sym);
		dlclose(h);
		return 1;
	}
	rc = cnt(&count);
	if (rc || count <= 0) {
		strbuf_addf(why, "%s reports no device (rc %d)", p->count_sym, rc);
		dlclose(h);
		return 1;
	}
	out->v = xcalloc((size_t)count, sizeof(*out->v));
	out->nr = count;
	name_fn nm = p->name_sym ? (name_fn)dlsym(h, p->name_sym) : NULL;
	for (int i = 0; i < count; i++) {
		char name[256] = "";
		out->v[i].index = i;
		if (nm && !nm(name, (int)sizeof(name), i))
			out->v[i].name = xstrdup(name);
		else
			out->v[i].name = xstrfmt("device %d", i);
	}
	version_fn ver = p->version_sym ? (version_fn)dlsym(h, p->version_sym) : NULL;
	int v = 0;
	if (ver && !ver(&v))
		out->driver_version = xstrfmt("%d", v);
	/* Runtimes keep state once initialised; the handle stays open on purpose. */
	return 0;
}
