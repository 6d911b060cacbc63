#include "providers/flaggems_child.h"

#include "lib/strbuf.h"

void flaggems_pytest_args(struct strvec *argv, const struct flaggems_args *a)
{
	strvec_pushl(argv, "--level", a->level, "--mode", "kernel", NULL);
	strvec_pushf(argv, "--warmup");
	strvec_pushf(argv, "%d", a->warmup_ms);
	strvec_pushf(argv, "--iter");
	strvec_pushf(argv, "%d", a->iter_ms);
	if (a->shape_file)
		strvec_pushl(argv, "--shape_file", a->shape_file, NULL);
	for (size_t i = 0; a->dtypes && i < a->dtypes->nr; i++)
		strvec_pushl(argv, "--dtypes", a->dtypes->v[i], NULL);
}

const char *const flaggems_vendor_vars[] = {
	"GEMS_VENDOR", "FLAGGEMS_VENDOR", "GEMS_BACKEND", "FLAGGEMS_BACKEND", NULL,
};

const char *flaggems_user_vendor(const struct strvec *env, const char **var)
{
	for (const char *const *k = flaggems_vendor_vars; *k; k++) {
		const char *v = env_get(env, *k);
		if (v && *v) {
			if (var)
				*var = *k;
			return v;
		}
	}
	return NULL;
}

void flaggems_child_env(struct strvec *env, const char *vendor, int use_flagtune,
			const char *isolated_cache)
{
	if (!flaggems_user_vendor(env, NULL))
		env_set(env, "GEMS_VENDOR", vendor);
	env_set(env, "USE_FLAGTUNE", use_flagtune ? "1" : "0");
	if (isolated_cache) {
		env_set(env, "FLAGGEMS_CACHE_DIR", isolated_cache);
		env_unset(env, "FLAGGEMS_DB_URL");
	}
}

char *flaggems_tuner_cache(const struct strvec *env, const char *isolated_cache)
{
	const char *url = env_get(env, "FLAGGEMS_DB_URL");
	const char *dir = env_get(env, "FLAGGEMS_CACHE_DIR");
	const char *home = env_get(env, "HOME");

	if (isolated_cache)
		return xstrdup("isolated");
	if (url && *url)
		return xstrfmt("shared(%s)", url);
	if (dir && *dir)
		return xstrfmt("shared(%s)", dir);
	return xstrfmt("shared(%s/.flaggems)", home && *home ? home : "~");
}
