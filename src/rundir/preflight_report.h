/*
 * The one shape of a failed preflight check, which zlb batch reads back out
 * of its children's logs (the remark preflight=<check>):
 *
 *   PREFLIGHT_FAILED check=<check>[ side=<side>]
 *     <why>
 *     fix: <fix>
 *
 * Every command that stops before starting anything says it this way.
 */
#ifndef ZLB_PREFLIGHT_REPORT_H
#define ZLB_PREFLIGHT_REPORT_H

#include <stddef.h>

#include "lib/strbuf.h"

#define PREFLIGHT_MARK "PREFLIGHT_FAILED check="

/*
 * Append the report to sb. side (zlb ab: A or B) and fix may be NULL; the
 * first line is red when color.
 */
void preflight_report(struct strbuf *sb, const char *check, const char *side,
		      const char *why, const char *fix, int color);

/*
 * The check named by the first report in text, copied into buf (size
 * bytes, cut to fit): 1, or 0 when text holds none.
 */
int preflight_report_find(const char *text, char *buf, size_t size);

#endif
