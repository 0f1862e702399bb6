/* liveview.c - see liveview.h. A redraw is one write: the cursor sent home, every line rewritten and
 * cleared to its end, the rest of the screen cleared; nothing is erased first, so nothing flickers. */
#include "cmd/live/liveview.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* The text of one redraw. */
struct screen {
	char *buf;
	size_t len, cap;
};

static void put(struct screen *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct screen *s, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		size_t room = s->cap - s->len;
		va_start(ap, fmt);
		int n = vsnprintf(s->buf ? s->buf + s->len : NULL, s->buf ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if (s->buf && (size_t)n < room) {
			s->len += (size_t)n;
			return;
		}
		size_t cap = s->cap ? s->cap : 4096;
		while (cap < s->len + (size_t)n + 1)
			cap *= 2;
		char *b = realloc(s->buf, cap);
		if (!b)
			return;
		s->buf = b;
		s->cap = cap;
	}
}

static void flush(int fd, struct screen *s)
{
	size_t off = 0;
	while (off < s->len) {
		ssize_t n = write(fd, s->buf + off, s->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	free(s->buf);
	*s = (struct screen){ 0 };
}

/* The terminal's size; false when out is not one. */
static bool term_size(int fd, unsigned *rows, unsigned *cols)
{
	struct winsize ws;
	if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || !ws.ws_row || !ws.ws_col)
		return false;
	*rows = ws.ws_row;
	*cols = ws.ws_col;
	return true;
}

/* Full screen when the terminal is big enough, in the alternate screen (the shell's text comes
 * back at the end); else plain. */
static void choose_mode(struct bt_liveview *v)
{
	unsigned rows = 0, cols = 0;
	bool full = term_size(v->out, &rows, &cols) && rows >= BT_LIVEVIEW_MIN_ROWS &&
		    cols >= BT_LIVEVIEW_MIN_COLS;
	if (rows != v->rows || cols != v->cols || full != v->full)
		v->dirty = true;
	v->rows = rows;
	v->cols = cols;
	if (full && !v->alt) {
		struct screen s = { 0 };
		put(&s, "\033[?1049h\033[?25l\033[H\033[2J");
		flush(v->out, &s);
		v->alt = true;
	} else if (!full && v->alt) {
		struct screen s = { 0 };
		put(&s, "\033[?25h\033[?1049l");
		flush(v->out, &s);
		v->alt = false;
	}
	v->full = full;
}

void bt_liveview_start(struct bt_liveview *v, int out, int in, bool offcpu)
{
	memset(v, 0, sizeof(*v));
	v->out = out;
	v->in = -1;
	v->opts.offcpu = offcpu;
	v->opts.sort = offcpu ? BT_TOP_BY_OFFCPU : BT_TOP_BY_SELF;
	v->opts.filter = v->filter;
	if (in >= 0 && isatty(in) && tcgetattr(in, &v->saved) == 0) {
		/* keys one at a time, unechoed; Ctrl-C still interrupts */
		struct termios raw = v->saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		if (tcsetattr(in, TCSANOW, &raw) == 0)
			v->in = in;
	}
	choose_mode(v);
}

static const char *side_name(enum bt_top_side s)
{
	return s == BT_TOP_KERNEL ? "kernel only" : s == BT_TOP_USER ? "user only" : "kernel and user";
}

/* The first line: how the session goes. */
static void header(const struct bt_liveview *v, struct bt_live *l, char *buf, size_t len)
{
	struct bt_session *s = &l->session;
	struct bt_capture_stats st = { 0 };
	bt_capture_stats(l->cap, &st);
	unsigned e = (unsigned)v->elapsed;
	char off[64] = "";
	if (v->opts.offcpu)
		snprintf(off, sizeof(off), "  off-CPU %.1f s", (double)s->prof.offcpu_ns / 1e9);
	snprintf(buf, len, "buildtrace  %u:%02u  %llu samples  %llu/s%s  lost %llu  unresolved %llu  "
		 "processes %zu  build-ids %zu%s", e / 60, e % 60, (unsigned long long)s->stats.samples,
		 (unsigned long long)v->rate, off, (unsigned long long)bt_live_lost_samples(&st),
		 (unsigned long long)bt_profile_unresolved_frames(&s->prof), s->procs.nprocs,
		 bt_session_build_ids(s), v->paused ? "  [paused]" : "");
}

/* A line cut to the width, cleared to its end. */
static void line(struct screen *s, const char *text, unsigned cols, const char *attr)
{
	put(s, "%s%.*s%s\033[K", attr, (int)cols, text, *attr ? "\033[0m" : "");
}

static void draw_full(struct bt_liveview *v, struct bt_live *l, const struct bt_top_table *t)
{
	struct screen s = { 0 };
	char text[4096];
	size_t w = v->cols < sizeof(text) ? v->cols : sizeof(text) - 1;
	put(&s, "\033[H");
	header(v, l, text, sizeof(text));
	line(&s, text, v->cols, "\033[1m");
	snprintf(text, sizeof(text), "sort: %s  %s%s%s%s  |  q quit  s sort  / filter  p pause  k kernel  "
		 "u user  t processes", bt_top_sort_name(v->opts.sort), side_name(v->opts.side),
		 v->opts.per_process ? "  by process" : "", *v->filter ? "  filter: " : "", v->filter);
	put(&s, "\r\n");
	line(&s, text, v->cols, "");
	put(&s, "\r\n");
	bt_top_heading(w, v->opts.offcpu, text);
	line(&s, text, v->cols, "\033[7m");
	unsigned body = v->rows - 3 - (v->editing ? 1 : 0);
	for (size_t i = 0; i < t->n && i < body; i++) {
		bt_top_format(&l->session, t, i, w, text);
		put(&s, "\r\n");
		line(&s, text, v->cols, t->rows[i].process ? "\033[1m" : "");
	}
	if (v->editing) {
		/* the prompt on the last line, the rest cleared */
		put(&s, "\033[J\033[%u;1H", v->rows);
		snprintf(text, sizeof(text), "filter (Enter applies, Esc cancels): %s_", v->edit);
		line(&s, text, v->cols, "");
	} else {
		put(&s, "\033[J");
	}
	flush(v->out, &s);
}

/* Without a usable screen: a few lines now and then, no control sequences. */
static void draw_plain(struct bt_liveview *v, struct bt_live *l, const struct bt_top_table *t)
{
	struct screen s = { 0 };
	char text[512];
	header(v, l, text, sizeof(text));
	put(&s, "%s\n", text);
	for (size_t i = 0; i < t->n && i < 5; i++) {
		bt_top_format(&l->session, t, i, 100, text);
		/* trailing padding is noise in a log */
		size_t n = strlen(text);
		while (n && text[n - 1] == ' ')
			text[--n] = '\0';
		put(&s, "%s\n", text);
	}
	flush(v->out, &s);
}

static void draw(struct bt_liveview *v, struct bt_live *l)
{
	struct bt_top_table t;
	v->dirty = false;
	if (bt_top_build(&l->session, &v->opts, &t))
		return;
	if (v->full)
		draw_full(v, l, &t);
	else
		draw_plain(v, l, &t);
	bt_top_free(&t);
}

void bt_liveview_tick(struct bt_liveview *v, struct bt_live *l, double elapsed)
{
	uint64_t samples = l->session.stats.samples;
	v->rate = samples - v->last_samples;
	v->last_samples = samples;
	v->elapsed = elapsed;
	choose_mode(v);
	if (v->full) {
		if (!v->paused)
			draw(v, l);
	} else if (v->plain_at == 0 || elapsed - v->plain_at >= BT_LIVEVIEW_PLAIN_EVERY) {
		v->plain_at = elapsed;
		draw(v, l);
	}
}

static void edit_key(struct bt_liveview *v, int c)
{
	size_t n = strlen(v->edit);
	if (c == '\r' || c == '\n') {
		snprintf(v->filter, sizeof(v->filter), "%s", v->edit);
		v->editing = false;
	} else if (c == 27) {
		v->editing = false;
	} else if (c == 127 || c == 8) {
		if (n)
			v->edit[n - 1] = '\0';
	} else if (c >= 32 && c < 127 && n + 1 < sizeof(v->edit)) {
		v->edit[n] = (char)c;
		v->edit[n + 1] = '\0';
	}
}

void bt_liveview_key(struct bt_liveview *v, int c)
{
	v->dirty = true;
	if (v->editing) {
		edit_key(v, c);
		return;
	}
	switch (c) {
	case 'q': case 'Q': v->quit = true; break;
	case 's': v->opts.sort = bt_top_sort_next(v->opts.sort, v->opts.offcpu); break;
	case '/':
		v->editing = true;
		snprintf(v->edit, sizeof(v->edit), "%s", v->filter);
		break;
	case 27: v->filter[0] = '\0'; break;  /* Esc: no filter */
	case 'p': v->paused = !v->paused; break;
	case 'k': v->opts.side = v->opts.side == BT_TOP_KERNEL ? BT_TOP_BOTH : BT_TOP_KERNEL; break;
	case 'u': v->opts.side = v->opts.side == BT_TOP_USER ? BT_TOP_BOTH : BT_TOP_USER; break;
	case 't': v->opts.per_process = !v->opts.per_process; break;
	default: v->dirty = false;
	}
}

void bt_liveview_turn(struct bt_liveview *v, struct bt_live *l)
{
	unsigned char keys[64];
	ssize_t n = v->in >= 0 ? read(v->in, keys, sizeof(keys)) : 0;
	for (ssize_t i = 0; i < n; i++)
		bt_liveview_key(v, keys[i]);
	if (v->full || v->alt)
		choose_mode(v);  /* a resize (SIGWINCH) shows here at once */
	/* paused: only what the keys change is redrawn (the header says so) */
	if (v->dirty && v->full)
		draw(v, l);
}

void bt_liveview_stop(struct bt_liveview *v)
{
	if (v->in >= 0)
		tcsetattr(v->in, TCSANOW, &v->saved);
	v->in = -1;
	if (v->alt) {
		struct screen s = { 0 };
		put(&s, "\033[?25h\033[?1049l");
		flush(v->out, &s);
		v->alt = false;
	}
}
