/* run_identity.json (rundir/identity.c) as every reader loads it. */
#include "fuzz_util.h"

#include "rundir/identity.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dir = fuzz_dir();
	char *path = fuzz_put(dir, "run_identity.json", data, size);
	json_t *id = NULL;

	if (!identity_load(dir, &id)) {
		identity_section(id, "caliber");
		identity_section(id, "provenance");
		identity_section(id, "outcome");
	}
	json_decref(id);
	free(path);
	return 0;
}
