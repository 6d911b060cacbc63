#include "run/tee.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/ansi.h"
#include "lib/term.h"

/* 0, or the errno of a failed write: a closed terminal must not stop the run. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static void term_emit(void *data, const char *line, size_t len)
{
	struct tee *t = data;
	write_all(t->term_fd, line, len);
	write_all(t->term_fd, "\n", 1);
}

static void log_line(struct tee *t, const char *line, size_t len)
{
	int e;

	strbuf_reset(&t->scratch);
	strbuf_add(&t->scratch, line, len);
	strbuf_ansi_strip(&t->scratch);
	strbuf_addch(&t->scratch, '\n');
	/* Kept for the runner: a log the disk refused is a run that filled it. */
	e = write_all(t->log_fd, t->scratch.buf, t->scratch.len);
	if (e && !t->log_errno)
		t->log_errno = e;
}

/*
 * Markers the plugins print, which users grep at the start of a line. pytest
 * -v leaves "path::test " unfinished while the test runs, so the first
 * marker of a test can arrive in the middle of that line.
 */
static const char *const markers[] = {
	"BENCHMARK_DIRECT_NO_CUDAGRAPH ", "CAPTURE_FATAL ", "AUTOTUNE_REPLAY_FALLBACK ",
	"GRAPH_MEMCPY_NODES ", "GRAPH_MEMSET_NODES ", "GRAPH_NO_KERNELS ", NULL,
};

/* Offset of a marker that follows other text on the line, or 0. */
static size_t marker_offset(const char *line, size_t len)
{
	size_t best = 0;

	for (const char *const *m = markers; *m; m++) {
		const char *hit = memmem(line, len, *m, strlen(*m));
		size_t at = hit ? (size_t)(hit - line) : 0;
		if (at && line[at - 1] == ' ' && (!best || at < best))
			best = at;
	}
	return best;
}

static void one_line(struct tee *t, const char *line, size_t len, size_t shown)
{
	log_line(t, line, len);
	if (shown) {
		/* The start of this line is already on the screen: finish it as is. */
		if (len > shown)
			write_all(t->term_fd, line + shown, len - shown);
		write_all(t->term_fd, "\n", 1);
		return;
	}
	table_filter_line(&t->tf, line, len);
}

static void tee_on_line(void *ctx, const char *line, size_t len, size_t shown)
{
	struct tee *t = ctx;
	size_t split = marker_offset(line, len);

	if (split && shown <= split) {
		/* Give the marker its own line, in run.log and on the terminal. */
		size_t head = split;
		while (head && line[head - 1] == ' ')
			head--;
		one_line(t, line, head, shown < head ? shown : head);
		one_line(t, line + split, len - split, 0);
		return;
	}
	one_line(t, line, len, shown);
}

static size_t tee_on_partial(void *ctx, const char *data, size_t len)
{
	struct tee *t = ctx;

	/* Unless verbose, a line is judged whole (shown or not) when it ends. */
	if (t->verbosity < TEE_VERBOSE || table_filter_holding(&t->tf))
		return 0;
	write_all(t->term_fd, data, len);
	return len;
}

static void tee_on_interrupt(void *ctx, int sig)
{
	struct tee *t = ctx;
	char *msg = xstrfmt("zlb: interrupted (SIG%s): stopping pytest and its children; "
			    "the run directory keeps what was written",
			    sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");

	table_filter_flush(&t->tf);
	log_line(t, msg, strlen(msg));
	strbuf_reset(&t->scratch);
	term_addstr_colored(&t->scratch, t->color, TERM_YELLOW, msg);
	strbuf_addch(&t->scratch, '\n');
	write_all(t->term_fd, t->scratch.buf, t->scratch.len);
	free(msg);
}

static void vsay(struct tee *t, int shown, int c, const char *fmt, va_list ap)
	ZLB_PRINTF(4, 0);
static void vsay(struct tee *t, int shown, int c, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT, out = STRBUF_INIT;

	strbuf_vaddf(&sb, fmt, ap);
	log_line(t, sb.buf, sb.len);
	if (shown) {
		term_addstr_colored(&out, t->color && c != TEE_PLAIN,
				    c == TEE_PLAIN ? TERM_BOLD : (enum term_color)c, sb.buf);
		strbuf_addch(&out, '\n');
		write_all(t->term_fd, out.buf, out.len);
	}
	strbuf_release(&sb);
	strbuf_release(&out);
}

void tee_say(struct tee *t, int c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(t, t->verbosity > TEE_QUIET, c, fmt, ap);
	va_end(ap);
}

void tee_result(struct tee *t, int c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(t, 1, c, fmt, ap);
	va_end(ap);
}

void tee_set_verbosity(struct tee *t, enum tee_verbosity v)
{
	t->verbosity = v;
	t->tf.show = v == TEE_QUIET ? TABLE_SHOW_ERRORS : v == TEE_NORMAL ? TABLE_SHOW_TABLES
					: TABLE_SHOW_ALL;
}

const struct pump_ops tee_pump_ops = { tee_on_line, tee_on_partial, tee_on_interrupt };

int tee_open(struct tee *t, const char *log_path, int term_fd, int color)
{
	memset(t, 0, sizeof(*t));
	t->term_fd = term_fd;
	t->color = color;
	t->log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (t->log_fd < 0)
		return error_errno("cannot create %s", log_path);
	strbuf_init(&t->scratch, 256);
	table_filter_init(&t->tf, color, term_emit, t);
	tee_set_verbosity(t, TEE_VERBOSE);
	return 0;
}

void tee_flush(struct tee *t)
{
	if (t->log_fd >= 0)
		table_filter_flush(&t->tf);
}

void tee_close(struct tee *t)
{
	if (t->log_fd < 0)
		return;
	table_filter_flush(&t->tf);
	table_filter_release(&t->tf);
	strbuf_release(&t->scratch);
	close(t->log_fd);
	t->log_fd = -1;
}
