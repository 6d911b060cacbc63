/*
 * The static read of FlagGems' benchmark sources (providers/flaggems*.c):
 * the inventory's scan of a module, and the class chain behind a test.
 */
#include "fuzz_util.h"

#include "providers/flaggems.h"
#include "providers/flaggems_scan.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const ops[] = { "softmax", "fooBenchmark", "x", "mm" };
	char *text = fuzz_text(data, size);
	struct flaggems_scan scan = FLAGGEMS_SCAN_INIT;

	/* dir holds no benchmark/base.py: the chain ends in the module itself. */
	flaggems_scan_text(fuzz_dir(), "benchmark/test_fuzz.py", text, &scan);
	for (size_t i = 0; i < scan.nr; i++) {
		struct flaggems_target t;

		memset(&t, 0, sizeof(t));
		strvec_init(&t.chain);
		t.dir = (char *)fuzz_dir();
		t.op = scan.v[i].op;
		flaggems_scan_benchmark(&t, text);
		free(t.op_name);
		strvec_clear(&t.chain);
		free(t.hardcoding_class);
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct flaggems_target t;

		memset(&t, 0, sizeof(t));
		strvec_init(&t.chain);
		t.dir = (char *)fuzz_dir();
		t.op = (char *)ops[i];
		flaggems_scan_benchmark(&t, text);
		free(t.op_name);
		strvec_clear(&t.chain);
		free(t.hardcoding_class);
	}
	flaggems_scan_release(&scan);
	free(text);
	return 0;
}
