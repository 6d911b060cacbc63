/*
 * run.log tables (run/table_*.c): upstream's text table read back, the
 * block parser, the line filter the tee runs on pytest's output, rendering.
 */
#include "fuzz_util.h"

#include "lib/strvec.h"
#include "run/table.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strvec lines = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	struct table_filter tf;
	char *text = fuzz_text(data, size);
	const char *p = text;

	/* Lines as pytest writes them; the filter takes them one by one. */
	for (;;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		strvec_pushf(&lines, "%.*s", (int)len, p);
		if (!nl)
			break;
		p = nl + 1;
	}
	for (size_t i = 0; i < lines.nr; i++) {
		struct table_block b;
		int span;

		if (!table_is_title(lines.v[i]))
			continue;
		table_block_init(&b);
		span = table_parse_block((const char *const *)lines.v + i, lines.nr - i, &b);
		if (span > 0) {
			table_block_field(&b, "Gems Latency(ms)");
			table_render(&b, 1, &out);
			table_render(&b, 0, &out);
		}
		table_block_release(&b);
		table_is_row(lines.v[i]);
	}
	for (int color = 0; color < 2; color++) {
		table_filter_init(&tf, color, table_emit_strbuf, &out);
		for (size_t i = 0; i < lines.nr; i++)
			table_filter_line(&tf, lines.v[i], strlen(lines.v[i]));
		table_filter_flush(&tf);
		table_filter_release(&tf);
	}
	for (size_t i = 0; i < lines.nr; i++)
		table_decorate_line(lines.v[i], strlen(lines.v[i]), 1, &out);
	strbuf_release(&out);
	strvec_clear(&lines);
	free(text);
	return 0;
}
