#include "cli/output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/usage.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "rundir/exit_codes.h"

const char *const output_formats[] = { "table", "json", "csv", "md", NULL };

enum output_format output_format_of(const char *word)
{
	if (word && !strcmp(word, "json"))
		return OUTPUT_JSON;
	if (word && !strcmp(word, "csv"))
		return OUTPUT_CSV;
	if (word && !strcmp(word, "md"))
		return OUTPUT_MD;
	return OUTPUT_TABLE;
}

int output_dir_prepare(const char *cmd, const char *dir)
{
	if (!*dir)
		return usage_error(cmd, "--out needs a directory");
	if (!strcmp(dir, "-"))
		return usage_error(cmd, "--out takes a directory for the files; standard output "
				   "gets the report already (--format json|csv|md|table)");
	if (mkdir_p(dir, 0777)) {
		fprintf(stderr, "zlb %s: cannot create '%s': %s\n", cmd, dir, last_error());
		return ZLB_EXIT_IO;
	}
	return 0;
}

void output_json(struct strbuf *out, const json_t *j)
{
	/* 15 digits: every double this writes reads back as itself, 0.05 stays 0.05 */
	char *text = json_dumps_parallel(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
					 JSON_REAL_PRECISION(15));

	strbuf_addstr(out, text ? text : "null");
	strbuf_addch(out, '\n');
	free(text);
}

void output_stdout(const struct strbuf *text)
{
	fwrite(text->buf, 1, text->len, stdout);
}
