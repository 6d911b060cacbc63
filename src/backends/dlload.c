#include "backends/dlload.h"
#include "lib/errbuf.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *dl_open_library(const char *what, const char *env_var,
		      const char *const *sonames, char *loaded, size_t loaded_len,
		      char *err, size_t errlen)
{
	const char *env = env_var ? getenv(env_var) : NULL;
	void *h;

	if (env && *env) {
		h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			errbuf_printf(err, errlen, "no %s: cannot load $%s (%s)", what,
				      env_var, dlerror());
		else
			snprintf(loaded, loaded_len, "%s", env);
		return h;
	}
	for (size_t i = 0; sonames[i]; i++) {
		h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
		if (h) {
			snprintf(loaded, loaded_len, "%s", sonames[i]);
			return h;
		}
		/* Name the first soname: it is the one a real install has. */
		if (!i)
			errbuf_printf(err, errlen, "no %s: %s", what, dlerror());
	}
	return NULL;
}

int dl_resolve(void *h, const char *what, const char *loaded,
	       const struct dl_sym *syms, size_t nsyms, void *base,
	       char *err, size_t errlen)
{
	for (size_t i = 0; i < nsyms; i++) {
		const struct dl_sym *s = &syms[i];
		void *fn = NULL;

		for (size_t j = 0; j < DL_SYM_NAMES && s->names[j] && !fn; j++)
			fn = dlsym(h, s->names[j]);
		if (!fn && s->required) {
			errbuf_printf(err, errlen, "the %s %s lacks %s (driver too old?)",
				      what, loaded, s->names[0]);
			return -1;
		}
		/* POSIX guarantees that a function pointer fits a void *. */
		memcpy((char *)base + s->offset, &fn, sizeof(fn));
	}
	return 0;
}
