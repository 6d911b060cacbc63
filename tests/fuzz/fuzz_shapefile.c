/* Shape files (run/shapefile.c): loading as PyYAML would read them, and the lookup. */
#include "fuzz_util.h"

#include "lib/strvec.h"
#include "run/shapefile.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const chain[] = { "UnaryReductionBenchmark", "Benchmark", NULL };
	static const char *const ops[] = { "softmax", "mm", "Benchmark", "a", "" };
	char *text = fuzz_text(data, size);
	struct shape_file sf;

	if (!shape_file_load(&sf, "fuzz.yaml", text)) {
		struct strvec keys = STRVEC_INIT;

		shape_file_keys(&sf, &keys);
		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
			struct shape_lookup l;
			shape_file_lookup(&sf, ops[i], chain, &l);
			free(l.problem);
		}
		/* Every key the file has, looked up as an op: each walk stays bounded. */
		for (size_t i = 0; i < keys.nr && i < 64; i++) {
			struct shape_lookup l;
			shape_file_lookup(&sf, keys.v[i], NULL, &l);
			free(l.problem);
		}
		strvec_clear(&keys);
	}
	shape_file_release(&sf);
	free(text);
	return 0;
}
