/*
 * What the pages of a report share (private to src/report/): the page's
 * head, number formats, the short names of markers, and the identity
 * tables (caliber and provenance, one side or two side by side).
 */
#ifndef ZLB_REPORT_INT_H
#define ZLB_REPORT_INT_H

#include <jansson.h>
#include <stddef.h>

#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "report/report.h"

/* <h1>, the subtitle, and a navigation line of "id=Name" entries (NULL-terminated). */
void report_page_head(struct strbuf *sb, const char *title, const char *subtitle,
		      const char *const *nav);

/* A latency in ms as a reader wants it: 4 significant digits ("0.02303", "129.9"). */
void report_fmt_ms(struct strbuf *sb, double ms);
/* A ratio's change in percent with two decimals: "+0.63%"; "-" for NAN. */
void report_fmt_change(struct strbuf *sb, double ratio);

/*
 * The short name a report gives a marker that weakens a row ("fallback",
 * "memcpy", "empty graph", "K differs", ...), or NULL for other markers.
 */
const char *report_marker_flag(const char *marker);
/* Push the flags of the marker names in a JSON array (without duplicates). */
void report_flags_of(const json_t *markers, struct strvec *flags);
/* "a, b, c" of sv. */
void report_join(struct strbuf *sb, const struct strvec *sv, const char *sep);

/*
 * A shape_detail as a label: "torch.Size([4096, 4096])" shortened to
 * "[4096, 4096]", so what tells rows apart is not cut off. The tables keep
 * the text as written.
 */
void report_short_shape(struct strbuf *sb, const char *shape);

/* A label: the verdict class a row shows ("FASTER" ...), any other text "UNSURE". */
const char *report_verdict_class(const char *verdict);

/*
 * One card of the summary strip: a number and what it counts. value is
 * escaped; cls colours the number (a verdict class) or NULL.
 */
void report_card(struct strbuf *sb, const char *value, const char *what, const char *cls);

/*
 * The identities of one side: every run's run_identity.json object (NULL
 * entries are runs without one).
 */
struct report_idset {
	const json_t *const *ids;
	size_t n;
};

/*
 * A table of one section ("caliber" or "provenance") of the identities:
 * one row per key (objects one level deep as "runtime.triton"), one
 * column per side with its distinct values; rows whose values differ
 * between sides are marked. Provenance keys that differ from run to run
 * by nature (command lines, times, run directories) are left out.
 */
void report_identity_table(struct strbuf *sb, const char *section, const char *caption,
			   const struct report_idset *sides, int nsides, const char *const *names);

#endif
