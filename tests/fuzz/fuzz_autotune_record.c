/* autotune_records/<op>.json (rundir/autotune_records.c): the check a replay's preflight makes. */
#include "fuzz_util.h"

#include "rundir/autotune_records.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t err;
	json_t *doc = json_loadb((const char *)data, size, 0, &err);
	const char *dir = fuzz_dir();
	char *rec = path_join(dir, AUTOTUNE_RECORDS_DIR);
	char *path;

	if (doc)
		autotune_record_check(doc, "fuzz.json");
	json_decref(doc);
	/* The directory check too: read from the file, as preflight does. */
	mkdir_p(rec, 0755);
	path = fuzz_put(rec, "op.json", data, size);
	autotune_records_check_dir(dir);
	free(path);
	free(rec);
	return 0;
}
