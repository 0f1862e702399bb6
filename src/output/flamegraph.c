/* flamegraph.c - boxes come from one pass over the sorted folded lines: frames shared with the
 * previous line continue, the rest close, as in the classic flame graph layout. Positions are kept in
 * sample units (data-s, data-n) so the embedded script can zoom without recomputing the layout. */
#include "output/flamegraph.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

#define ROW 16
#define PAD_TOP 48
#define PAD_BOTTOM 24
#define PAD_SIDE 10

struct box {
	const char *name;   /* points into a folded line */
	size_t len;
	uint64_t start, count;
	unsigned depth;
};

struct boxes {
	struct box *v;
	size_t n, cap;
	unsigned max_depth;
};

static int push(struct boxes *b, const char *name, size_t len, uint64_t start, uint64_t count,
		unsigned depth)
{
	if (b->n == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 1024;
		struct box *nv = realloc(b->v, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		b->v = nv;
		b->cap = ncap;
	}
	b->v[b->n++] = (struct box){ name, len, start, count, depth };
	if (depth > b->max_depth)
		b->max_depth = depth;
	return 0;
}

/* Frames of a line, split at ';'. */
struct frames {
	const char **name;
	size_t *len;
	size_t n, cap;
};

static int split(const char *text, struct frames *fr)
{
	fr->n = 0;
	for (const char *p = text;;) {
		const char *e = strchr(p, ';');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (fr->n == fr->cap) {
			size_t ncap = fr->cap ? fr->cap * 2 : 64;
			const char **nn = realloc(fr->name, ncap * sizeof(*nn));
			if (!nn)
				return -ENOMEM;
			fr->name = nn;
			size_t *nl = realloc(fr->len, ncap * sizeof(*nl));
			if (!nl)
				return -ENOMEM;
			fr->len = nl;
			fr->cap = ncap;
		}
		fr->name[fr->n] = p;
		fr->len[fr->n] = len;
		fr->n++;
		if (!e)
			return 0;
		p = e + 1;
	}
}

/* Builds the boxes: an open box per depth, closed when the next line's frame at that depth differs. */
static int layout(const struct bt_folded *f, struct boxes *out)
{
	struct frames cur = { 0 }, open = { 0 };
	uint64_t *open_start = NULL;
	size_t open_cap = 0;
	uint64_t x = 0;
	int err = 0;
	for (size_t i = 0; i <= f->n && !err; i++) {
		size_t common = 0;
		if (i < f->n) {
			if ((err = split(f->v[i].text, &cur)))
				break;
			while (common < cur.n && common < open.n && cur.len[common] == open.len[common] &&
			       memcmp(cur.name[common], open.name[common], cur.len[common]) == 0)
				common++;
		} else {
			cur.n = 0;
		}
		for (size_t d = open.n; d-- > common;)
			if ((err = push(out, open.name[d], open.len[d], open_start[d], x - open_start[d],
					(unsigned)d + 1)))
				break;
		if (err || i == f->n)
			break;
		if (cur.n > open_cap) {
			uint64_t *ns = realloc(open_start, cur.n * sizeof(*ns));
			if (!ns) {
				err = -ENOMEM;
				break;
			}
			open_start = ns;
			open_cap = cur.n;
		}
		for (size_t d = common; d < cur.n; d++)
			open_start[d] = x;
		/* the open frames are now the current line's */
		struct frames t = open;
		open = cur;
		cur = t;
		x += f->v[i].count;
	}
	free(cur.name);
	free(cur.len);
	free(open.name);
	free(open.len);
	free(open_start);
	return err;
}

/* The character at s (n bytes left): its length in bytes, and whether XML 1.0 allows it as it is.
 * Names are whatever bytes a program chose: a byte that starts no valid UTF-8 sequence is one
 * character, replaced; so are control characters and U+FFFE, U+FFFF, which XML forbids. */
static size_t xml_char(const unsigned char *s, size_t n, bool *ok)
{
	size_t k = bt_utf8_len(s, n);
	*ok = k && !(k == 1 && s[0] < 0x20) &&
	      !(k == 3 && s[0] == 0xef && s[1] == 0xbf && (s[2] == 0xbe || s[2] == 0xbf));
	return k ? k : 1;
}

/* Characters in s as put_escaped counts them. */
static size_t xml_chars(const char *s, size_t len)
{
	size_t n = 0;
	bool ok;
	for (size_t i = 0; i < len; n++)
		i += xml_char((const unsigned char *)s + i, len - i, &ok);
	return n;
}

/* Writes the first max characters of s (len bytes) as XML text or attribute value: markup
 * characters escaped, what XML cannot hold replaced (control characters by '?', the rest by
 * U+FFFD), never a character cut in two. */
static void put_escaped(FILE *out, const char *s, size_t len, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	bool ok;
	for (size_t i = 0, n = 0; i < len && n < max; n++) {
		size_t k = xml_char(u + i, len - i, &ok);
		switch (ok ? u[i] : 0) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		case 0: fputs(k == 1 && u[i] < 0x20 ? "?" : "\xef\xbf\xbd", out); break;
		default: fwrite(u + i, 1, k, out);
		}
		i += k;
	}
}

static uint32_t name_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/* Kernel frames in orange-browns, user frames in reds to yellows, unresolved frames in grey. */
static void colour(const struct box *b, char *buf, size_t len)
{
	uint32_t h = name_hash(b->name, b->len);
	unsigned v1 = h % 55, v2 = (h >> 8) % 55;
	if (bt_folded_is_kernel(b->name, b->len))
		snprintf(buf, len, "rgb(%u,%u,%u)", 200 + v1 % 40, 120 + v2, 40 + v1 % 30);
	else if (b->len && b->name[0] == '[')
		snprintf(buf, len, "rgb(%u,%u,%u)", 170 + v1 % 20, 170 + v1 % 20, 170 + v1 % 20);
	else if (b->depth == 1)
		snprintf(buf, len, "rgb(%u,%u,%u)", 120 + v1, 160 + v2, 200);
	else
		snprintf(buf, len, "rgb(%u,%u,%u)", 225 + v1 % 30, 80 + v2 * 2, 50 + v1 % 20);
}

static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"'use strict';\n"
	"var W, TOTAL, PAD, frames, details, zoomed = null;\n"
	"function init(evt) {\n"
	"  var svg = document.documentElement;\n"
	"  W = +svg.getAttribute('data-width'); TOTAL = +svg.getAttribute('data-total'); PAD = +svg.getAttribute('data-pad');\n"
	"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
	"  details = document.getElementById('details');\n"
	"  frames.forEach(function (g) {\n"
	"    g.addEventListener('click', function () { zoom(g); });\n"
	"    g.addEventListener('mouseover', function () { details.textContent = g.querySelector('title').textContent; });\n"
	"    g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
	"  });\n"
	"  document.getElementById('reset').addEventListener('click', function () { zoom(null); });\n"
	"  document.getElementById('search').addEventListener('click', function () { search(prompt('Search (regular expression)', '')); });\n"
	"  draw(0, TOTAL, 0);\n"
	"}\n"
	"function fit(g, w) {\n"
	"  var t = g.querySelector('text'), name = g.getAttribute('data-name');\n"
	"  var chars = Math.floor((w - 6) / 7);\n"
	"  var cs = Array.from(name);  /* characters, not UTF-16 units: a pair is never cut */\n"
	"  t.textContent = chars < 3 ? '' : (cs.length <= chars ? name : cs.slice(0, chars - 2).join('') + '..');\n"
	"}\n"
	"function draw(s0, n0, d0) {\n"
	"  frames.forEach(function (g) {\n"
	"    var s = +g.getAttribute('data-s'), n = +g.getAttribute('data-n'), d = +g.getAttribute('data-d');\n"
	"    var r = g.querySelector('rect'), t = g.querySelector('text');\n"
	"    var inside = s >= s0 && s + n <= s0 + n0, above = d < d0 && s <= s0 && s + n >= s0 + n0;\n"
	"    if (!inside && !above) { g.style.display = 'none'; return; }\n"
	"    var x = above ? PAD : PAD + (s - s0) / n0 * W, w = above ? W : n / n0 * W;\n"
	"    g.style.display = ''; g.style.opacity = above ? 0.6 : 1;\n"
	"    r.setAttribute('x', x); r.setAttribute('width', Math.max(w - 0.5, 0.1)); t.setAttribute('x', x + 3); fit(g, w);\n"
	"  });\n"
	"}\n"
	"function zoom(g) {\n"
	"  zoomed = g;\n"
	"  document.getElementById('reset').style.opacity = g ? 1 : 0;\n"
	"  if (!g) { draw(0, TOTAL, 0); return; }\n"
	"  draw(+g.getAttribute('data-s'), +g.getAttribute('data-n'), +g.getAttribute('data-d'));\n"
	"}\n"
	"function search(re) {\n"
	"  var matched = [], m = document.getElementById('matched');\n"
	"  frames.forEach(function (g) { g.querySelector('rect').removeAttribute('stroke'); g.classList.remove('hit'); });\n"
	"  if (!re) { m.textContent = ' '; return; }\n"
	"  var rx; try { rx = new RegExp(re); } catch (e) { m.textContent = 'bad expression'; return; }\n"
	"  frames.forEach(function (g) {\n"
	"    if (rx.test(g.getAttribute('data-name'))) {\n"
	"      g.classList.add('hit'); g.querySelector('rect').setAttribute('stroke', 'rgb(230,0,230)');\n"
	"      matched.push([+g.getAttribute('data-s'), +g.getAttribute('data-n')]);\n"
	"    }\n"
	"  });\n"
	"  /* samples covered by matches, nested matches counted once */\n"
	"  matched.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
	"  var covered = 0, end = -1;\n"
	"  matched.forEach(function (r) { if (r[0] >= end) { covered += r[1]; end = r[0] + r[1]; } else if (r[0] + r[1] > end) { covered += r[0] + r[1] - end; end = r[0] + r[1]; } });\n"
	"  m.textContent = 'Matched: ' + (100 * covered / TOTAL).toFixed(1) + '%';\n"
	"}\n"
	"]]></script>\n";

int bt_flamegraph_write(const struct bt_folded *f, const struct bt_flamegraph_opts *o, FILE *out)
{
	struct boxes b = { 0 };
	int err = layout(f, &b);
	if (err) {
		free(b.v);
		return err;
	}
	unsigned width = o && o->width ? o->width : 1200;
	const char *title = o && o->title ? o->title : "buildtrace flame graph";
	const char *unit = o && o->unit ? o->unit : "samples";
	unsigned inner = width - 2 * PAD_SIDE;
	unsigned height = PAD_TOP + (b.max_depth + 1) * ROW + PAD_BOTTOM;
	uint64_t total = f->total ? f->total : 1;
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" onload=\"init(evt)\" "
		"xmlns=\"http://www.w3.org/2000/svg\" data-width=\"%u\" data-total=\"%llu\" data-pad=\"%u\">\n",
		width, height, width, height, inner, (unsigned long long)total, PAD_SIDE);
	fputs("<style>text { font-family: monospace; font-size: 12px; fill: rgb(0,0,0); } "
	      "g.f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; cursor: pointer; } "
	      "#title { font-size: 17px; } .ui { cursor: pointer; }</style>\n", out);
	fputs(script, out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"rgb(245,245,235)\"/>\n", width,
		height);
	fprintf(out, "<text id=\"title\" x=\"%u\" y=\"24\" text-anchor=\"middle\">", width / 2);
	put_escaped(out, title, strlen(title), SIZE_MAX);
	fprintf(out, "</text>\n<text id=\"reset\" class=\"ui\" x=\"%u\" y=\"24\" style=\"opacity:0\">Reset Zoom</text>\n"
		"<text id=\"search\" class=\"ui\" x=\"%u\" y=\"24\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"> </text>\n"
		"<text id=\"details\" x=\"%u\" y=\"%u\"> </text>\n",
		PAD_SIDE, width - PAD_SIDE, width - PAD_SIDE, height - 6, PAD_SIDE, height - 6);
	/* the root box: every sample */
	unsigned root_y = height - PAD_BOTTOM - ROW;
	fprintf(out, "<g class=\"f\" data-s=\"0\" data-n=\"%llu\" data-d=\"0\" data-name=\"all\">"
		"<title>all (%llu %s, 100%%)</title><rect x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" "
		"fill=\"rgb(220,220,210)\" rx=\"2\"/><text x=\"%u\" y=\"%u\">all</text></g>\n",
		(unsigned long long)total, (unsigned long long)f->total, unit, PAD_SIDE, root_y, inner, ROW - 1,
		PAD_SIDE + 3, root_y + 12);
	for (size_t i = 0; i < b.n; i++) {
		const struct box *x = &b.v[i];
		double px = PAD_SIDE + (double)x->start / total * inner;
		double pw = (double)x->count / total * inner;
		unsigned y = root_y - x->depth * ROW;
		char fill[32];
		colour(x, fill, sizeof(fill));
		fprintf(out, "<g class=\"f\" data-s=\"%llu\" data-n=\"%llu\" data-d=\"%u\" data-name=\"",
			(unsigned long long)x->start, (unsigned long long)x->count, x->depth);
		put_escaped(out, x->name, x->len, SIZE_MAX);
		fputs("\"><title>", out);
		put_escaped(out, x->name, x->len, SIZE_MAX);
		fprintf(out, " (%llu %s, %.2f%%)</title><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%u\" "
			"fill=\"%s\" rx=\"2\"/><text x=\"%.2f\" y=\"%u\">",
			(unsigned long long)x->count, unit, 100.0 * x->count / total, px, y,
			pw > 0.5 ? pw - 0.5 : 0.1, ROW - 1, fill, px + 3, y + 12);
		/* the same truncation the script applies, for viewers that run no script */
		long chars = (long)((pw - 6) / 7);
		if (chars >= 3) {
			if ((size_t)chars >= xml_chars(x->name, x->len)) {
				put_escaped(out, x->name, x->len, SIZE_MAX);
			} else {
				put_escaped(out, x->name, x->len, (size_t)chars - 2);
				fputs("..", out);
			}
		}
		fputs("</text></g>\n", out);
	}
	fputs("</svg>\n", out);
	free(b.v);
	/* A failed write left its errno (ENOSPC, EIO ...); stdio keeps only the error flag. */
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}
