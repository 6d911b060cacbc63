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

size_t report_batch_gpus(const struct summary *s)
{
	json_t *devs = summary_devices(s), *d;
	size_t n = 0, i;

	json_array_foreach(devs, i, d)
		n += known(d);
	json_decref(devs);
	return n;
}

size_t report_batch_uuid_len(const struct summary *s)
{
	json_t *devs = summary_devices(s), *d;
	const char **uuids;
	size_t n = json_array_size(devs), len = 0, i;

	if (report_batch_gpus(s) > 1) {
		uuids = xcalloc(n + 1, sizeof(*uuids));
		json_array_foreach(devs, i, d)
			uuids[i] = json_str(d, "device_uuid");
		len = uuid_abbrev_len(uuids, n, UUID_ABBREV_MIN);
		free(uuids);
	}
	json_decref(devs);
	return len;
}

void report_batch_gpu_label(struct strbuf *sb, const char *gpu, const char *uuid,
			    size_t uuid_len)
{
	strbuf_addstr(sb, gpu && *gpu ? gpu : "(unknown)");
	if (uuid_len && uuid && *uuid)
		strbuf_addf(sb, " %.*s", (int)uuid_len, uuid);
}

void report_batch_devices(const struct summary *s, struct strbuf *sb)
{
	json_t *devs = summary_devices(s), *d;
	size_t n = json_array_size(devs), len, i;
	struct hbar *bars;
	struct strvec labels = STRVEC_INIT, texts = STRVEC_INIT;
	struct hbars h = { "Operators by device", "operators", NULL, 0, 0 };
	static const char *const heads[] = { "backend", "GPU", "uuid", "#operators", NULL };
	struct strbuf t = STRBUF_INIT;

	/* one card: the caliber's table already names it, a chart of one bar says nothing */
	if (report_batch_gpus(s) < 2) {
		json_decref(devs);
		return;
	}
	len = report_batch_uuid_len(s);
	bars = xcalloc(n + 1, sizeof(*bars));
	json_array_foreach(devs, i, d) {
		strbuf_reset(&t);
		report_batch_gpu_label(&t, json_str(d, "device"), json_str(d, "device_uuid"), len);
		strvec_push(&labels, t.buf);
		strvec_pushf(&texts, "%lld", (long long)json_integer_value(json_object_get(d, "ops")));
	}
	json_array_foreach(devs, i, d) {
		bars[i].label = labels.v[i];
		bars[i].value = (double)json_integer_value(json_object_get(d, "ops"));
		bars[i].cls = "bar";
		bars[i].text = texts.v[i];
		bars[i].tooltip = json_str(d, "device_uuid");
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
		html_td(sb, *json_str(d, "device") ? json_str(d, "device") : "(unknown)");
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
	json_decref(devs);
}
