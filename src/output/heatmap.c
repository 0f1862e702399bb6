/* heatmap.c - samples are counted per (cell, folded line) from the session's log; the page carries
 * the folded lines and those counts, and its script lays out the flame graph of a range of cells
 * as flamegraph.c lays out the whole session (the lines are sorted frame by frame already). */
#include "output/heatmap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/utf8.h"
#include "output/folded.h"
#include "session/session.h"

#define PAD 10
#define TOP 44       /* title and status lines above the heat map */
#define CELL_H 8
#define ROW 16       /* a flame graph box's height */
#define BUCKET_NS (1000000000ULL / BT_HEATMAP_ROWS)

/* Samples counted per (cell, folded line): the log is in time order, so each cell's samples come
 * together; they are gathered, sorted by line and counted when the next cell begins. */
struct count {
	uint32_t cell, line;
	uint64_t n;
};

struct gather {
	const struct bt_profile *p;
	const uint32_t *line_of;
	uint64_t t0;
	uint32_t cell;           /* the cell being gathered */
	uint32_t *cur;           /* its samples' lines */
	size_t ncur, curcap;
	struct count *v;         /* the cells before it, counted */
	size_t n, cap;
	uint64_t total;
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int flush_cell(struct gather *g)
{
	if (g->ncur)
		qsort(g->cur, g->ncur, sizeof(*g->cur), cmp_u32);
	for (size_t i = 0, j; i < g->ncur; i = j) {
		for (j = i; j < g->ncur && g->cur[j] == g->cur[i]; j++)
			;
		if (bt_grow((void **)&g->v, &g->cap, g->n + 1, sizeof(*g->v), 256))
			return -ENOMEM;
		g->v[g->n++] = (struct count){ g->cell, g->cur[i], j - i };
	}
	g->ncur = 0;
	return 0;
}

static int gather_one(void *ctx, const struct bt_sample_rec *r)
{
	struct gather *g = ctx;
	if (r->stack >= g->p->nstacks)
		return -EINVAL;
	uint64_t dt = r->time_ns > g->t0 ? r->time_ns - g->t0 : 0;
	uint64_t cell = dt / 1000000000ULL * BT_HEATMAP_ROWS + dt % 1000000000ULL / BUCKET_NS;
	if (cell > UINT32_MAX)
		cell = UINT32_MAX;
	int err = 0;
	if (g->ncur && cell != g->cell)
		err = flush_cell(g);
	if (err || bt_grow((void **)&g->cur, &g->curcap, g->ncur + 1, sizeof(*g->cur), 256))
		return err ? err : -ENOMEM;
	g->cell = (uint32_t)cell;
	g->cur[g->ncur++] = g->line_of[r->stack];
	g->total++;
	return 0;
}

static int first_time(void *ctx, const struct bt_sample_rec *r)
{
	*(uint64_t *)ctx = r->time_ns;
	return 1;
}

/* s as a JavaScript string inside CDATA: quotes and backslashes escaped, markup characters and
 * control characters as \uXXXX (so "]]>" never appears), bytes that are no UTF-8 as U+FFFD. */
static void put_js_string(FILE *out, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s);
	fputc('"', out);
	for (size_t i = 0; i < len;) {
		size_t k = bt_utf8_len(u + i, len - i);
		if (!k) {
			fputs("\\ufffd", out);
			i++;
			continue;
		}
		if (k == 1 && (u[i] < 0x20 || u[i] == '<' || u[i] == '>' || u[i] == '&' || u[i] == 0x7f))
			fprintf(out, "\\u%04x", u[i]);
		else if (k == 1 && (u[i] == '"' || u[i] == '\\'))
			fprintf(out, "\\%c", u[i]);
		else if (k == 3 && u[i] == 0xe2 && u[i + 1] == 0x80 && (u[i + 2] == 0xa8 || u[i + 2] == 0xa9))
			fprintf(out, "\\u%04x", u[i + 2] == 0xa8 ? 0x2028 : 0x2029);
		else
			fwrite(u + i, 1, k, out);
		i += k;
	}
	fputc('"', out);
}

static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"'use strict';\n"
	"var svg, FW, PAD, ROOT_Y, ROWS, pick = null;\n"
	"function init(evt) {\n"
	"  svg = document.documentElement;\n"
	"  FW = +svg.getAttribute('data-flame-width'); PAD = +svg.getAttribute('data-pad');\n"
	"  ROOT_Y = +svg.getAttribute('data-root-y'); ROWS = +svg.getAttribute('data-rows');\n"
	"  Array.prototype.forEach.call(document.querySelectorAll('rect.c'), function (r) {\n"
	"    r.addEventListener('click', function () { choose(r); });\n"
	"    r.addEventListener('mouseover', function () { say('details', when(cellOf(r)) + ': ' + r.getAttribute('data-n') + ' samples'); });\n"
	"  });\n"
	"  document.getElementById('all').addEventListener('click', function () { pick = null; draw(0, Infinity); });\n"
	"  draw(0, Infinity);\n"
	"}\n"
	"function say(id, t) { document.getElementById(id).textContent = t; }\n"
	"function cellOf(r) { return +r.getAttribute('data-c') * ROWS + +r.getAttribute('data-r'); }\n"
	"function when(c) { return (Math.floor(c / ROWS) + (c % ROWS) / ROWS).toFixed(2) + ' s'; }\n"
	"function choose(r) {\n"
	"  var c = cellOf(r);\n"
	"  if (pick === null) { pick = c; mark(c, c); say('range', 'from ' + when(c) + ': click the last cell'); return; }\n"
	"  var a = Math.min(pick, c), b = Math.max(pick, c); pick = null; draw(a, b);\n"
	"}\n"
	"function mark(a, b) {\n"
	"  Array.prototype.forEach.call(document.querySelectorAll('rect.c'), function (r) {\n"
	"    var c = cellOf(r);\n"
	"    if (c >= a && c <= b) r.setAttribute('stroke', 'rgb(0,0,200)'); else r.removeAttribute('stroke');\n"
	"  });\n"
	"}\n"
	"function colour(name, d) {\n"
	"  var h = 0; for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;\n"
	"  var v1 = h % 55, v2 = (h >>> 8) % 55;\n"
	"  if (/_\\[k\\]$/.test(name)) return 'rgb(' + (200 + v1 % 40) + ',' + (120 + v2) + ',' + (40 + v1 % 30) + ')';\n"
	"  if (name.charAt(0) === '[') return 'rgb(180,180,180)';\n"
	"  if (d === 1) return 'rgb(' + (120 + v1) + ',' + (160 + v2) + ',200)';\n"
	"  return 'rgb(' + (225 + v1 % 30) + ',' + (80 + v2 * 2) + ',' + (50 + v1 % 20) + ')';\n"
	"}\n"
	"function el(tag, attrs, parent) {\n"
	"  var e = document.createElementNS('http://www.w3.org/2000/svg', tag);\n"
	"  for (var k in attrs) e.setAttribute(k, attrs[k]);\n"
	"  parent.appendChild(e); return e;\n"
	"}\n"
	"/* the flame graph of cells a..b: lines in their (folded) order, a box per shared prefix */\n"
	"function draw(a, b) {\n"
	"  if (b !== Infinity) mark(a, b); else mark(1, 0);\n"
	"  var counts = {}, total = 0;\n"
	"  CELLS.forEach(function (c) {\n"
	"    if (c[0] < a || c[0] > b) return;\n"
	"    for (var i = 1; i < c.length; i += 2) { counts[c[i]] = (counts[c[i]] || 0) + c[i + 1]; total += c[i + 1]; }\n"
	"  });\n"
	"  var g = document.getElementById('flame');\n"
	"  while (g.firstChild) g.removeChild(g.firstChild);\n"
	"  g.setAttribute('data-total', total); g.setAttribute('data-from', a); g.setAttribute('data-to', b === Infinity ? -1 : b);\n"
	"  say('range', (b === Infinity ? 'the whole session' : when(a) + ' to ' + when(b + 1)) + ': ' + total + ' samples');\n"
	"  var boxes = [], open = [], start = [], x = 0;\n"
	"  function close(to) { for (var d = open.length - 1; d >= to; d--) boxes.push([open[d], d + 1, start[d], x - start[d]]); }\n"
	"  Object.keys(counts).map(Number).sort(function (p, q) { return p - q; }).forEach(function (li) {\n"
	"    var fr = LINES[li].split(';'), c = 0;\n"
	"    while (c < fr.length && c < open.length && fr[c] === open[c]) c++;\n"
	"    close(c);\n"
	"    for (var d = c; d < fr.length; d++) start[d] = x;\n"
	"    open = fr; x += counts[li];\n"
	"  });\n"
	"  close(0);\n"
	"  boxes.unshift(['all', 0, 0, total]);\n"
	"  boxes.forEach(function (bx) {\n"
	"    var w = total ? bx[3] / total * FW : 0, px = PAD + (total ? bx[2] / total * FW : 0), y = ROOT_Y - bx[1] * 16;\n"
	"    var f = el('g', { 'class': 'f', 'data-name': bx[0], 'data-d': bx[1], 'data-s': bx[2], 'data-n': bx[3] }, g);\n"
	"    var tip = bx[0] + ' (' + bx[3] + ' samples, ' + (total ? 100 * bx[3] / total : 0).toFixed(2) + '%)';\n"
	"    el('title', {}, f).textContent = tip;\n"
	"    el('rect', { x: px, y: y, width: Math.max(w - 0.5, 0.1), height: 15, rx: 2, fill: bx[1] ? colour(bx[0], bx[1]) : 'rgb(220,220,210)' }, f);\n"
	"    var chars = Math.floor((w - 6) / 7), cs = Array.from(bx[0]);\n"
	"    el('text', { x: px + 3, y: y + 12 }, f).textContent = chars < 3 ? '' : cs.length <= chars ? bx[0] : cs.slice(0, chars - 2).join('') + '..';\n"
	"    f.addEventListener('mouseover', function () { say('details', tip); });\n"
	"  });\n"
	"}\n"
	"]]></script>\n";

/* The data the script reads: the folded lines, and per cell with samples its lines and counts. */
static void put_data(FILE *out, const struct bt_folded *f, const struct count *v, size_t n)
{
	fputs("<script type=\"text/ecmascript\"><![CDATA[\nvar LINES = [", out);
	for (size_t i = 0; i < f->n; i++) {
		fputs(i ? ",\n" : "\n", out);
		put_js_string(out, f->v[i].text);
	}
	fputs("];\nvar CELLS = [", out);
	for (size_t i = 0; i < n;) {
		fprintf(out, "%s[%u", i ? ",\n" : "\n", v[i].cell);
		size_t j = i;
		for (; j < n && v[j].cell == v[i].cell; j++)
			fprintf(out, ",%u,%llu", v[j].line, (unsigned long long)v[j].n);
		fputc(']', out);
		i = j;
	}
	fputs("];\n]]></script>\n", out);
}

/* The samples of the cell at v[i] (its counts end at *end). */
static uint64_t cell_samples(const struct count *v, size_t n, size_t i, size_t *end)
{
	uint64_t sum = 0;
	size_t j = i;
	for (; j < n && v[j].cell == v[i].cell; j++)
		sum += v[j].n;
	*end = j;
	return sum;
}

/* The cells with samples: white to red by their share of the fullest cell. */
static void put_cells(FILE *out, const struct count *v, size_t n, unsigned cw)
{
	uint64_t max = 1;
	size_t k;
	for (size_t i = 0; i < n; i = k) {
		uint64_t c = cell_samples(v, n, i, &k);
		if (c > max)
			max = c;
	}
	for (size_t i = 0; i < n; i = k) {
		uint64_t c = cell_samples(v, n, i, &k);
		unsigned col = v[i].cell / BT_HEATMAP_ROWS, row = v[i].cell % BT_HEATMAP_ROWS;
		unsigned shade = (unsigned)(225 - 225 * c / max);
		fprintf(out, "<rect class=\"c\" data-c=\"%u\" data-r=\"%u\" data-n=\"%llu\" x=\"%u\" y=\"%u\" "
			"width=\"%u\" height=\"%u\" fill=\"rgb(255,%u,%u)\"><title>%u.%02u s: %llu samples</title></rect>\n",
			col, row, (unsigned long long)c, PAD + col * cw, TOP + row * CELL_H, cw - 1, CELL_H - 1, shade,
			shade, col, row * 100 / BT_HEATMAP_ROWS, (unsigned long long)c);
	}
}

static void put_page(FILE *out, const struct bt_folded *f, const struct gather *g, int64_t duration_ns)
{
	const struct count *v = g->v;
	size_t n = g->n;
	unsigned cols = n ? v[n - 1].cell / BT_HEATMAP_ROWS + 1 : 1;
	if (duration_ns > 0 && duration_ns / 1000000000 < 1000000 && (unsigned)((duration_ns + 999999999) / 1000000000) > cols)
		cols = (unsigned)((duration_ns + 999999999) / 1000000000);
	unsigned cw = 1180 / cols > 40 ? 40 : 1180 / cols < 4 ? 4 : 1180 / cols;
	unsigned width = 2 * PAD + cols * cw < 1200 ? 1200 : 2 * PAD + cols * cw;
	unsigned depth = 1;
	for (size_t i = 0; i < f->n; i++) {
		unsigned d = 1;
		for (const char *c = f->v[i].text; *c; c++)
			d += *c == ';';
		if (d > depth)
			depth = d;
	}
	unsigned map_end = TOP + BT_HEATMAP_ROWS * CELL_H;
	unsigned height = map_end + 40 + (depth + 1) * ROW + 30, root_y = height - 30 - ROW;
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" onload=\"init(evt)\" "
		"xmlns=\"http://www.w3.org/2000/svg\" data-start-ns=\"%llu\" data-bucket-ns=\"%llu\" data-rows=\"%u\" "
		"data-cols=\"%u\" data-total=\"%llu\" data-flame-width=\"%u\" data-pad=\"%u\" data-root-y=\"%u\">\n",
		width, height, width, height, (unsigned long long)g->t0, (unsigned long long)BUCKET_NS, BT_HEATMAP_ROWS,
		cols, (unsigned long long)g->total, width - 2 * PAD, PAD, root_y);
	fputs("<style>text { font-family: monospace; font-size: 12px; fill: rgb(0,0,0); } rect.c:hover, "
	      "g.f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; cursor: pointer; } #title { font-size: 17px; } "
	      ".ui { cursor: pointer; fill: rgb(0,0,160); }</style>\n", out);
	fputs(script, out);
	put_data(out, f, v, n);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"rgb(250,250,245)\"/>\n", width, height);
	fprintf(out, "<text id=\"title\" x=\"%u\" y=\"20\" text-anchor=\"middle\">%s</text>\n", width / 2,
		"buildtrace heat map");
	fprintf(out, "<text x=\"%u\" y=\"38\">x: seconds, y: %llu ms steps within each; click a first and a last "
		"cell for their flame graph</text>\n", PAD, (unsigned long long)(BUCKET_NS / 1000000));
	fprintf(out, "<text id=\"all\" class=\"ui\" x=\"%u\" y=\"20\" text-anchor=\"end\">Whole session</text>\n",
		width - PAD);
	fprintf(out, "<rect x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" fill=\"rgb(255,255,255)\" stroke=\"rgb(200,200,200)\"/>\n",
		PAD, TOP, cols * cw, BT_HEATMAP_ROWS * CELL_H);
	put_cells(out, v, n, cw);
	for (unsigned c = 0; c < cols; c += cw >= 30 ? 1 : (30 + cw - 1) / cw)
		fprintf(out, "<text x=\"%u\" y=\"%u\">%u</text>\n", PAD + c * cw, map_end + 14, c);
	fprintf(out, "<text id=\"range\" x=\"%u\" y=\"%u\"> </text>\n", PAD, map_end + 32);
	fprintf(out, "<g id=\"flame\"></g>\n<text id=\"details\" x=\"%u\" y=\"%u\"> </text>\n</svg>\n", PAD, height - 8);
}

int bt_heatmap_write(const struct bt_session *s, const struct bt_heatmap_opts *o, FILE *out)
{
	if (!s->log)
		return -EOPNOTSUPP;
	const struct bt_profile *p = &s->prof;
	struct bt_folded f;
	uint32_t *line_of = malloc((p->nstacks + 1) * sizeof(*line_of));
	struct gather g = { .p = p, .line_of = line_of };
	int err = !line_of ? -ENOMEM : bt_folded_from_profile_map(p, &f, line_of);
	if (err) {
		free(line_of);
		return err;
	}
	uint64_t first = 0;
	bt_samplelog_each(s->log, first_time, &first);
	g.t0 = o && o->mono_ns && (!first || o->mono_ns < first) ? o->mono_ns : first;
	err = bt_samplelog_each(s->log, gather_one, &g);
	if (!err)
		err = flush_cell(&g);
	if (!err)
		put_page(out, &f, &g, o ? o->duration_ns : 0);
	bt_folded_free(&f);
	free(line_of);
	free(g.cur);
	free(g.v);
	if (err)
		return err;
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}
