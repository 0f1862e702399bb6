/* perfmap.c - perf map parsing: lines taken in file order, then one sweep turns them into a sorted,
 * non-overlapping table in which the later of two overlapping lines owns their common range (code
 * recompiled at an address replaces what was there). */
#include "symsrc/perfmap.h"
#include "base/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void bt_perfmap_init(struct bt_perfmap *m)
{
	memset(m, 0, sizeof(*m));
}

void bt_perfmap_free(struct bt_perfmap *m)
{
	free(m->raw);
	free(m->sorted);
	free(m->names);
	struct bt_membudget *b = m->budget;
	uint64_t share = m->share_max;
	bt_membudget_give(b, m->charged);
	memset(m, 0, sizeof(*m));
	m->budget = b;
	m->share_max = share;
}

/* Hex digits with an optional 0x; the position after them, or NULL. */
static const char *hex_field(const char *p, const char *end, uint64_t *out)
{
	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	uint64_t v = 0;
	int digits = 0;
	for (; p < end; p++, digits++) {
		int d;
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (digits == 16)
			return NULL;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return digits ? p : NULL;
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* One line without its newline: 1 taken, 0 garbage, -ENOMEM. */
static int take_line(struct bt_perfmap *m, const char *p, const char *end)
{
	uint64_t start, size;
	if ((size_t)(end - p) > BT_PERFMAP_LINE_MAX || memchr(p, '\0', (size_t)(end - p)))
		return 0;
	const char *q = hex_field(p, end, &start);
	if (!q || q == end || (*q != ' ' && *q != '\t'))
		return 0;
	q = hex_field(skip_blanks(q, end), end, &size);
	if (!q || q == end || (*q != ' ' && *q != '\t'))
		return 0;
	const char *name = skip_blanks(q, end);
	while (end > name && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	return bt_perfmap_add(m, start, size, name, (size_t)(end - name));
}

int bt_perfmap_add(struct bt_perfmap *m, uint64_t start, uint64_t size, const char *name, size_t nlen)
{
	if (!nlen || nlen > BT_PERFMAP_LINE_MAX || memchr(name, '\0', nlen) || size == 0 ||
	    start > UINT64_MAX - size)
		return 0;
	if (m->nraw >= BT_PERFMAP_MAX_LINES || m->names_len + nlen + 1 > BT_PERFMAP_MAX_BYTES) {
		m->truncated = true;
		return 0;
	}
	/* what every process's map together may hold */
	uint64_t cost = BT_PERFMAP_LINE_COST + 2 * ((uint64_t)nlen + 1);
	bool share_full = m->share_max && m->charged + cost > m->share_max;
	if (share_full && m->budget) {
		m->budget->refused++;
		m->budget->refused_bytes += cost;
	}
	if (share_full || !bt_membudget_take(m->budget, cost)) {
		m->truncated = true;
		m->over_budget++;
		return 0;
	}
	m->charged += cost;
	if (bt_grow((void **)&m->raw, &m->raw_cap, m->nraw + 1, sizeof(*m->raw), 64) ||
	    bt_grow((void **)&m->names, &m->names_cap, m->names_len + nlen + 1, 1, 64))
		return -ENOMEM;
	memcpy(m->names + m->names_len, name, nlen);
	m->names[m->names_len + nlen] = '\0';
	m->raw[m->nraw] = (struct bt_perfmap_entry){ .start = start, .end = start + size,
						     .name_off = (uint32_t)m->names_len,
						     .seq = (uint32_t)m->nraw };
	m->nraw++;
	m->names_len += nlen + 1;
	m->dirty = true;
	return 1;
}

int bt_perfmap_parse(struct bt_perfmap *m, const char *buf, size_t len, bool eof, size_t *used)
{
	size_t pos = 0;
	while (pos < len && !m->truncated) {
		const char *line = buf + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - line) : len - pos;
		if (!nl && !eof && !m->skipping && llen <= BT_PERFMAP_LINE_MAX)
			break;  /* unfinished: its end is still being written */
		pos += llen + (nl != NULL);
		if (m->skipping || (!nl && !eof)) {
			/* an over-long line: consumed as it comes, counted once at its end */
			m->skipping = !nl && !eof;
			if (!m->skipping) {
				m->lines++;
				m->bad_lines++;
			}
			continue;
		}
		m->lines++;
		int r = take_line(m, line, line + llen);
		if (r < 0) {
			pos -= llen + (nl != NULL);
			m->lines--;
			if (used)
				*used = pos;
			m->bytes += pos;
			return r;
		}
		m->bad_lines += r == 0;
		if (m->nraw >= BT_PERFMAP_MAX_LINES)
			m->truncated = true;
	}
	if (used)
		*used = pos;
	m->bytes += pos;
	return 0;
}

int bt_perfmap_read_fd(struct bt_perfmap *m, int fd)
{
	size_t cap = 1u << 20, have = 0;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	int err = 0;
	while (!m->truncated) {
		uint64_t room = BT_PERFMAP_MAX_BYTES - m->bytes - have;
		if (m->bytes + have >= BT_PERFMAP_MAX_BYTES) {
			m->truncated = true;
			break;
		}
		size_t want = cap - have < room ? cap - have : (size_t)room;
		ssize_t r = pread(fd, buf + have, want, (off_t)(m->bytes + have));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		have += (size_t)r;
		size_t used = 0;
		if ((err = bt_perfmap_parse(m, buf, have, false, &used)) != 0)
			break;
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	free(buf);
	return err;
}

/* ---- the lookup table ----------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Indices into the lines (ctx), by start; ties in file order. */
static int cmp_idx(const void *a, const void *b, void *ctx)
{
	const struct bt_perfmap_entry *raw = ctx;
	const struct bt_perfmap_entry *x = &raw[*(const uint32_t *)a], *y = &raw[*(const uint32_t *)b];
	if (x->start != y->start)
		return (x->start > y->start) - (x->start < y->start);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* A max-heap of raw indices: the newest line on top. */
static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;
	while (i && h[(i - 1) / 2] < v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
	uint32_t v = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

/* Every boundary of every line, in order; between two consecutive ones the newest line covering
 * them (the top of a heap of the lines begun and not yet ended) owns the range. */
static int build_sorted(struct bt_perfmap *m)
{
	size_t n = m->nraw, npts = 0, nh = 0, ai = 0, nout = 0;
	uint64_t *pts = malloc(2 * n * sizeof(*pts) + 1);
	uint32_t *order = malloc(n * sizeof(*order) + 1), *heap = malloc(n * sizeof(*heap) + 1);
	struct bt_perfmap_entry *out = malloc(2 * n * sizeof(*out) + 1);
	int err = -ENOMEM;
	if (!pts || !order || !heap || !out)
		goto done;
	for (size_t i = 0; i < n; i++) {
		pts[npts++] = m->raw[i].start;
		pts[npts++] = m->raw[i].end;
		order[i] = (uint32_t)i;
	}
	if (n) {
		qsort(pts, npts, sizeof(*pts), cmp_u64);
		qsort_r(order, n, sizeof(*order), cmp_idx, m->raw);
	}
	for (size_t k = 0; k < npts; k++) {
		uint64_t x = pts[k];
		if (k && pts[k - 1] == x)
			continue;
		while (ai < n && m->raw[order[ai]].start <= x)
			heap_push(heap, &nh, order[ai++]);
		while (nh && m->raw[heap[0]].end <= x)
			heap_pop(heap, &nh);
		if (!nh || k + 1 == npts)
			continue;
		const struct bt_perfmap_entry *owner = &m->raw[heap[0]];
		size_t next = k + 1;
		while (next < npts && pts[next] == x)
			next++;
		if (nout && out[nout - 1].seq == owner->seq && out[nout - 1].end == x) {
			out[nout - 1].end = pts[next];
			continue;
		}
		out[nout++] = (struct bt_perfmap_entry){ .start = x, .end = pts[next],
							 .name_off = owner->name_off, .seq = owner->seq };
	}
	free(m->sorted);
	/* the table keeps what it holds, not the room its sweep needed */
	struct bt_perfmap_entry *fit = nout ? realloc(out, nout * sizeof(*out)) : NULL;
	m->sorted = fit ? fit : out;
	m->nsorted = nout;
	m->dirty = false;
	out = NULL;
	err = 0;
done:
	free(pts);
	free(order);
	free(heap);
	free(out);
	return err;
}

const struct bt_perfmap_entry *bt_perfmap_lookup(struct bt_perfmap *m, uint64_t addr)
{
	if (m->dirty) {
		int err = build_sorted(m);
		if (err) {
			errno = -err;
			return NULL;
		}
	}
	return bt_perfmap_find(m, addr);
}

const struct bt_perfmap_entry *bt_perfmap_find(const struct bt_perfmap *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nsorted;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->sorted[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= m->sorted[lo - 1].end) {
		errno = ENOENT;
		return NULL;
	}
	return &m->sorted[lo - 1];
}
