/*
 * The batch page's devices (report_batch.h): which card each operator ran
 * on, and, for a batch spread over several, how many operators each took.
 */
#include "report/report_batch.h"

#include <stdlib.h>
#include <string.h>

#include "lib/jsonfile.h"
#include "lib/uuid_abbrev.h"
#include "report/html.h"
#include "report/plot.h"

/* An entry of summary_devices() that names a card: operators whose run recorded none do not. */
static int known(const json_t *d)
{
	return *json_str(d, "device") || *json_str(d, "device_uuid");
}

void report_batch_cards(const struct summary *s, struct report_batch_cards *c)
{
	const char **uuids;
	json_t *d;
	size_t n, i;

	c->devs = summary_devices(s);
	n = json_array_size(c->devs);
	c->known = c->uuid_len = 0;
	json_array_foreach(c->devs, i, d)
		c->known += known(d);
	if (c->known > 1) {
		uuids = xcalloc(n + 1, sizeof(*uuids));
		json_array_foreach(c->devs, i, d)
			uuids[i] = json_str(d, "device_uuid");
		c->uuid_len = uuid_abbrev_len(uuids, n, UUID_ABBREV_MIN);
		free(uuids);
	}
}

void report_batch_cards_release(struct report_batch_cards *c)
{
	json_decref(c->devs);
	c->devs = NULL;
}

void report_batch_gpu_label(struct strbuf *sb, const char *gpu, const char *uuid,
			    size_t uuid_len)
{
	strbuf_addstr(sb, gpu && *gpu ? gpu : "(unknown)");
	if (uuid_len && uuid && *uuid)
		strbuf_addf(sb, " %.*s", (int)uuid_len, uuid);
}

void report_batch_devices(const struct report_batch_cards *c, struct strbuf *sb)
{
	const json_t *devs = c->devs;
	json_t *d;
	size_t n = json_array_size(devs), i;
	struct hbar *bars = xcalloc(n + 1, sizeof(*bars));
	struct strvec labels = STRVEC_INIT, texts = STRVEC_INIT;
	struct hbars h = { "Operators by device", "operators", NULL, 0, 0 };
	static const char *const heads[] = { "backend", "GPU", "uuid", "#operators", NULL };
	struct strbuf t = STRBUF_INIT;

	json_array_foreach(devs, i, d) {
		json_int_t ops = json_integer_value(json_object_get(d, "ops"));

		strbuf_reset(&t);
		report_batch_gpu_label(&t, json_str(d, "device"), json_str(d, "device_uuid"),
				       c->uuid_len);
		strvec_push(&labels, t.buf);
		strvec_pushf(&texts, "%lld", (long long)ops);
		bars[i] = (struct hbar){ .label = labels.v[i], .value = (double)ops, .cls = "bar",
					 .text = texts.v[i], .tooltip = json_str(d, "device_uuid") };
	}
	h.bars = bars;
	h.nr = n;
	html_h2(sb, "devices", "Devices");
	html_p(sb, "sub", "The batch's operators ran on more than one card: how many each "
	       "took (the card of an operator's last attempt, as its run recorded it; "
	       "(unknown): an operator that recorded none).");
	html_pair_begin(sb, NULL);
	plot_hbars(sb, &h);
	html_pair_table(sb);
	html_table_begin(sb, "devices", NULL, heads);
	json_array_foreach(devs, i, d) {
		html_tr_begin(sb, NULL);
		html_td(sb, json_str(d, "backend"));
		strbuf_reset(&t);
		report_batch_gpu_label(&t, json_str(d, "device"), NULL, 0);
		html_td(sb, t.buf);
		html_td_cls(sb, "wrap", json_str(d, "device_uuid"));
		html_td_num(sb, "%s", texts.v[i]);
		html_tr_end(sb);
	}
	html_table_end(sb);
	html_pair_end(sb);
	free(bars);
	strvec_clear(&labels);
	strvec_clear(&texts);
	strbuf_release(&t);
}
