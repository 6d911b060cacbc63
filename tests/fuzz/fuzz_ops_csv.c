/*
 * The CSV tables zlb reads back (lib/csvfile.c): any CSV text, and an
 * inventory of operators (batch/inventory.c) as zlb batch --all loads it.
 */
#include "fuzz_util.h"

#include "batch/inventory.h"
#include "lib/csvfile.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct csv_table t;
	struct inventory inv = INVENTORY_INIT;
	char *path;

	memset(&t, 0, sizeof(t));
	if (!csv_parse_text((const char *)data, size, "fuzz.csv", &t)) {
		for (size_t r = 0; r < t.nrows; r++) {
			csv_get(&t, r, "op");
			csv_get(&t, r, "status");
		}
	}
	csv_table_free(&t);
	path = fuzz_put(fuzz_dir(), "inventory_main.csv", data, size);
	if (!inventory_load(fuzz_dir(), &inv))
		for (size_t r = 0; r < inv.nr; r++)
			free(inventory_spec(&inv, r));
	inventory_release(&inv);
	free(path);
	return 0;
}
