/* Dismiss lists of zlb batch --all (batch/dismiss.c). */
#include "fuzz_util.h"

#include "batch/dismiss.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct dismiss_list dl = DISMISS_LIST_INIT;
	char *repo, *op, *file;

	if (!dismiss_parse(text, "fuzz.txt", &dl)) {
		dismiss_match(&dl, "main", "softmax", NULL);
		dismiss_match(&dl, "vllm", "mm", "mm");
		for (size_t i = 0; i < dl.nr; i++)
			dismiss_match(&dl, dl.v[i].repo, dl.v[i].op, dl.v[i].op_file);
	}
	dismiss_release(&dl);
	if (!dismiss_parse_spec(text, &repo, &op, &file)) {
		free(repo);
		free(op);
		free(file);
	}
	free(text);
	return 0;
}
