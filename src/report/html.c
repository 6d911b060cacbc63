/*
 * The HTML writer (html.h). One stylesheet for every page, screen and
 * print: the plots are inline SVG styled by class, so the print rules can
 * thin lines and keep colours without touching the drawing code.
 */
#include "report/html.h"

#include <stdarg.h>
#include <string.h>

void html_escape_len(struct strbuf *sb, const char *text, size_t len)
{
	size_t start = 0;

	for (size_t i = 0; i < len; i++) {
		const char *ent;

		switch (text[i]) {
		case '&': ent = "&amp;"; break;
		case '<': ent = "&lt;"; break;
		case '>': ent = "&gt;"; break;
		case '"': ent = "&quot;"; break;
		case '\'': ent = "&#39;"; break;
		/* A NUL or other C0 control byte is no character HTML may hold. */
		default:
			if ((unsigned char)text[i] < 0x20 && text[i] != '\n' && text[i] != '\t')
				ent = "\xef\xbf\xbd";	/* U+FFFD */
			else
				continue;
		}
		strbuf_add(sb, text + start, i - start);
		strbuf_addstr(sb, ent);
		start = i + 1;
	}
	strbuf_add(sb, text + start, len - start);
}

void html_escape(struct strbuf *sb, const char *text)
{
	if (text)
		html_escape_len(sb, text, strlen(text));
}

void html_url_path(struct strbuf *sb, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p)) {
			strbuf_addch(sb, *p);
		} else {
			strbuf_addch(sb, '%');
			strbuf_addch(sb, hex[*p >> 4]);
			strbuf_addch(sb, hex[*p & 15]);
		}
	}
}

/*
 * Colours: one per verdict, the same in plots and tables. The palette is
 * readable for the common colour-vision deficiencies (blue/orange carry
 * SAME/UNSURE; FASTER/SLOWER also differ by the side of the band they sit
 * on, and every plot has a table with the verdict in words).
 */
static const char style[] =
	":root{--faster:#1a7f37;--slower:#cf222e;--same:#0969da;--unsure:#bf8700;"
	"--excluded:#8c959f;--ink:#1f2328;--muted:#59636e;--rule:#d0d7de;--band:#ddf4ff;}\n"
	"*{box-sizing:border-box}\n"
	"body{font-family:system-ui,-apple-system,'Segoe UI','DejaVu Sans',sans-serif;"
	"color:var(--ink);margin:0 auto;padding:16px 24px 32px;max-width:1500px;"
	"font-size:14px;line-height:1.4}\n"
	"h1{font-size:22px;margin:4px 0 2px}h2{font-size:18px;margin:28px 0 8px;"
	"padding-bottom:4px;border-bottom:1px solid var(--rule)}\n"
	"h3{font-size:15px;margin:16px 0 6px}\n"
	"p.sub{color:var(--muted);margin:0 0 8px}\n"
	"nav{margin:8px 0 4px}nav a{margin-right:14px}\n"
	".banner{border:1px solid var(--slower);background:#ffebe9;padding:8px 12px;"
	"margin:10px 0;border-radius:4px}\n"
	".banner.warn{border-color:var(--unsure);background:#fff8c5}\n"
	".banner.ok{border-color:var(--faster);background:#dafbe1}\n"
	".cards{display:flex;flex-wrap:wrap;gap:10px;margin:10px 0}\n"
	".card{border:1px solid var(--rule);border-radius:6px;padding:6px 12px;min-width:110px}\n"
	".card b{display:block;font-size:20px}.card span{color:var(--muted);font-size:12px}\n"
	".pair{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:18px;"
	"align-items:start;margin:8px 0 16px}\n"
	".pair>div{min-width:0}\n"
	".scroll{max-height:640px;overflow:auto;border:1px solid var(--rule);border-radius:4px}\n"
	"@media (max-width:1100px){.pair{grid-template-columns:minmax(0,1fr)}}\n"
	"svg.plot{display:block;width:100%;height:auto;max-width:900px}\n"
	"svg.plot text{font-size:13px;fill:var(--ink)}\n"
	"svg.plot .title{font-size:15px;font-weight:600}\n"
	"svg.plot .axis{stroke:var(--ink);stroke-width:1}\n"
	"svg.plot .grid{stroke:var(--rule);stroke-width:1}\n"
	"svg.plot .muted{fill:var(--muted)}\n"
	"svg.plot .band{fill:var(--band)}\n"
	"svg.plot .one{stroke:var(--ink);stroke-width:1;stroke-dasharray:3 3}\n"
	"svg.plot .ci{stroke-width:2}\n"
	"svg.plot .zebra{fill:#f6f8fa}\n"
	"svg.plot .v-FASTER{fill:var(--faster);stroke:var(--faster)}\n"
	"svg.plot .v-SLOWER{fill:var(--slower);stroke:var(--slower)}\n"
	"svg.plot .v-SAME{fill:var(--same);stroke:var(--same)}\n"
	"svg.plot .v-UNSURE{fill:var(--unsure);stroke:var(--unsure)}\n"
	"svg.plot .v-EXCLUDED{fill:#fff;stroke:var(--excluded)}\n"
	"svg.plot .flag{fill:var(--slower);font-weight:600}\n"
	"svg.plot .bar{fill:#54aeff}svg.plot .bar.lo{fill:#ff8182}svg.plot .bar.hi{fill:#4ac26b}\n"
	"svg.plot .s0{stroke:#0969da}svg.plot .s1{stroke:#bc4c00}svg.plot .s2{stroke:#8250df}\n"
	"svg.plot .s3{stroke:#1a7f37}svg.plot .s4{stroke:#cf222e}svg.plot .s5{stroke:#6e7781}\n"
	"svg.plot circle.s0{fill:#0969da}svg.plot circle.s1{fill:#bc4c00}"
	"svg.plot circle.s2{fill:#8250df}\n"
	"svg.plot circle.s3{fill:#1a7f37}svg.plot circle.s4{fill:#cf222e}"
	"svg.plot circle.s5{fill:#6e7781}svg.plot circle.torch{fill:#fff;stroke-width:1.5}\n"
	"svg.plot polyline{fill:none;stroke-width:2}\n"
	"svg.plot polyline.torch{stroke-dasharray:6 4}\n"
	"table{border-collapse:collapse;font-size:12.5px;width:100%}\n"
	"caption{text-align:left;font-weight:600;padding:4px 0}\n"
	"th,td{border-bottom:1px solid var(--rule);padding:3px 6px;text-align:left;"
	"vertical-align:top}\n"
	"th{background:#f6f8fa;position:sticky;top:0}\n"
	"td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
	"td.wrap{overflow-wrap:anywhere}\n"
	/* beside a plot, a row's label stays on one line (its title attribute has all of it) */
	"td.label{white-space:nowrap;overflow:hidden;text-overflow:ellipsis;max-width:190px}\n"
	"td.nowrap{white-space:nowrap}\n"
	"td.diff{background:#fff8c5}\n"
	"td.v-FASTER{color:var(--faster);font-weight:600}"
	"td.v-SLOWER{color:var(--slower);font-weight:600}\n"
	"td.v-SAME{color:var(--same)}td.v-UNSURE{color:var(--unsure)}"
	"td.v-EXCLUDED{color:var(--excluded)}\n"
	"td.flags{color:var(--slower)}\n"
	"code{font-size:12px}\n"
	"footer{margin-top:32px;color:var(--muted);font-size:12px}\n"
	"@page{size:A4 landscape;margin:12mm}\n"
	"@media print{body{max-width:none;padding:0;font-size:10pt}table{font-size:8pt}nav{display:none}"
	".pair{display:block}.scroll{max-height:none;overflow:visible;border:0}"
	"th{position:static}td.label{white-space:normal;max-width:none}figure,svg.plot,tr{break-inside:avoid}"
	"h2{break-after:avoid}svg.plot{max-width:75%}"
	"*{-webkit-print-color-adjust:exact;print-color-adjust:exact}"
	"a{color:inherit}}\n";

void html_begin(struct strbuf *sb, const char *title)
{
	strbuf_addstr(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		      /* nothing may load: no script, font, image or stylesheet from anywhere */
		      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		      "style-src 'unsafe-inline'\">\n"
		      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		      "<meta name=\"generator\" content=\"zlb report\">\n<title>");
	html_escape(sb, title);
	strbuf_addstr(sb, "</title>\n<style>\n");
	strbuf_addstr(sb, style);
	strbuf_addstr(sb, "</style>\n</head>\n<body>\n");
}

void html_end(struct strbuf *sb, const char *generated_at)
{
	strbuf_addstr(sb, "<footer>Written by zlb report " ZLB_VERSION);
	if (generated_at) {
		strbuf_addstr(sb, " at ");
		html_escape(sb, generated_at);
	}
	strbuf_addstr(sb, ". Self-contained: no script, nothing loaded from elsewhere; links "
		      "to IR files are relative to this file.</footer>\n</body>\n</html>\n");
}

void html_h2(struct strbuf *sb, const char *id, const char *text)
{
	strbuf_addf(sb, "<h2 id=\"%s\">", id);
	html_escape(sb, text);
	strbuf_addstr(sb, "</h2>\n");
}

void html_p(struct strbuf *sb, const char *cls, const char *text)
{
	if (cls)
		strbuf_addf(sb, "<p class=\"%s\">", cls);
	else
		strbuf_addstr(sb, "<p>");
	html_escape(sb, text);
	strbuf_addstr(sb, "</p>\n");
}

void html_table_begin(struct strbuf *sb, const char *cls, const char *caption,
		      const char *const *heads)
{
	if (cls)
		strbuf_addf(sb, "<table class=\"%s\">\n", cls);
	else
		strbuf_addstr(sb, "<table>\n");
	if (caption) {
		strbuf_addstr(sb, "<caption>");
		html_escape(sb, caption);
		strbuf_addstr(sb, "</caption>\n");
	}
	strbuf_addstr(sb, "<thead><tr>");
	for (size_t i = 0; heads && heads[i]; i++) {
		if (heads[i][0] == '#') {
			strbuf_addstr(sb, "<th class=\"num\">");
			html_escape(sb, heads[i] + 1);
		} else {
			strbuf_addstr(sb, "<th>");
			html_escape(sb, heads[i]);
		}
		strbuf_addstr(sb, "</th>");
	}
	strbuf_addstr(sb, "</tr></thead>\n<tbody>\n");
}

void html_table_end(struct strbuf *sb)
{
	strbuf_addstr(sb, "</tbody>\n</table>\n");
}

void html_tr_begin(struct strbuf *sb, const char *cls)
{
	if (cls)
		strbuf_addf(sb, "<tr class=\"%s\">", cls);
	else
		strbuf_addstr(sb, "<tr>");
}

void html_tr_end(struct strbuf *sb)
{
	strbuf_addstr(sb, "</tr>\n");
}

void html_td(struct strbuf *sb, const char *text)
{
	html_td_cls(sb, NULL, text);
}

void html_td_cls(struct strbuf *sb, const char *cls, const char *text)
{
	if (cls)
		strbuf_addf(sb, "<td class=\"%s\">", cls);
	else
		strbuf_addstr(sb, "<td>");
	html_escape(sb, text);
	strbuf_addstr(sb, "</td>");
}

void html_td_num(struct strbuf *sb, const char *fmt, ...)
{
	struct strbuf t = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&t, fmt, ap);
	va_end(ap);
	strbuf_addstr(sb, "<td class=\"num\">");
	html_escape(sb, t.buf);
	strbuf_addstr(sb, "</td>");
	strbuf_release(&t);
}

void html_td_raw(struct strbuf *sb, const char *markup)
{
	strbuf_addstr(sb, "<td>");
	strbuf_addstr(sb, markup);
	strbuf_addstr(sb, "</td>");
}

void html_td_label(struct strbuf *sb, const char *text)
{
	strbuf_addstr(sb, "<td class=\"label\" title=\"");
	html_escape(sb, text);
	strbuf_addstr(sb, "\">");
	html_escape(sb, text);
	strbuf_addstr(sb, "</td>");
}

void html_pair_begin(struct strbuf *sb, const char *id)
{
	if (id)
		strbuf_addf(sb, "<div class=\"pair\" id=\"%s\">\n<div class=\"fig\">\n", id);
	else
		strbuf_addstr(sb, "<div class=\"pair\">\n<div class=\"fig\">\n");
}

void html_pair_table(struct strbuf *sb)
{
	strbuf_addstr(sb, "</div>\n<div class=\"tab scroll\">\n");
}

void html_pair_end(struct strbuf *sb)
{
	strbuf_addstr(sb, "</div>\n</div>\n");
}
