/* Python reprs of upstream's Size Detail column (lib/pyrepr.c). */
#include "fuzz_util.h"

#include "lib/pyrepr.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pyrepr p = PYREPR_INIT;
	struct strbuf k = STRBUF_INIT, v = STRBUF_INIT;
	char *text = fuzz_text(data, size);

	if (pyrepr_split_mem((const char *)data, size, &p) >= 0) {
		for (size_t i = 0; i < p.items.nr; i++) {
			strbuf_reset(&k);
			strbuf_reset(&v);
			pyrepr_dict_item(p.items.v[i], &k, &v);
			strbuf_reset(&k);
			pyrepr_unquote(p.items.v[i], &k);
		}
		pyrepr_kind_name(p.kind);
		pyrepr_release(&p);
	}
	if (pyrepr_split(text, &p) >= 0)
		pyrepr_release(&p);
	strbuf_reset(&k);
	pyrepr_unquote(text, &k);
	strbuf_release(&k);
	strbuf_release(&v);
	free(text);
	return 0;
}
