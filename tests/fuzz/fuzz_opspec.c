/* Operator specs [repo:]op[@file] (batch/opspec.c): one spec, and an ops file. */
#include "fuzz_util.h"

#include "batch/opspec.h"
#include "lib/strvec.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	char *path = fuzz_put(fuzz_dir(), "ops.txt", data, size);
	struct strvec specs = STRVEC_INIT;
	struct op_spec s;

	if (!opspec_parse(&s, text)) {
		/* What it accepted makes a directory name that cannot escape. */
		if (!name_is_safe(s.key))
			abort();
		opspec_release(&s);
	}
	if (!opspec_read_file(path, &specs))
		for (size_t i = 0; i < specs.nr; i++)
			if (!opspec_parse(&s, specs.v[i])) {
				if (!name_is_safe(s.key))
					abort();
				opspec_release(&s);
			}
	strvec_clear(&specs);
	free(path);
	free(text);
	return 0;
}
