/* ttgir/index.tsv (ir/ir_index.c): the reader of zlb ir diff, with its path checks. */
#include "fuzz_util.h"

#include "ir/ir_index.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const stages[] = { "ttgir", "ptx", "cubin", "", "." };
	char *path = fuzz_put(fuzz_dir(), IR_INDEX_FILE, data, size);
	struct ir_index idx = IR_INDEX_INIT;
	struct strbuf sb = STRBUF_INIT;

	if (!ir_index_load(path, &idx))
		for (size_t i = 0; i < idx.nr; i++)
			for (size_t k = 0; k < sizeof(stages) / sizeof(stages[0]); k++)
				ir_index_file(&idx.e[i], stages[k]);
	ir_index_release(&idx);
	/* The escaping both ways, on the raw bytes. */
	ir_tsv_unescape((const char *)data, size, &sb);
	{
		struct strbuf back = STRBUF_INIT;
		ir_tsv_escape(sb.buf, &back);
		strbuf_release(&back);
	}
	strbuf_release(&sb);
	free(path);
	return 0;
}
