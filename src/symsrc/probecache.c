/* probecache.c - perf's probe cache files in the build-id cache's entries: read, added to and
 * removed from, without following links below the cache directory. See probecache.h. */
#include "symsrc/probecache.h"
#include "base/esc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/beneath.h"
#include "base/wfile.h"
#include "symsrc/bidcache.h"

#define PROBES_MAX (4u << 20)   /* a probes file larger than this is not read */

int bt_pcache_parse_line(const char *line, struct bt_pcache_probe *p)
{
	if ((line[0] != 'p' && line[0] != 'r') || line[1] != ':')
		return -EINVAL;
	p->ret = line[0] == 'r';
	const char *g = line + 2, *slash = strchr(g, '/'), *sp = slash ? strchr(slash, ' ') : NULL;
	if (!slash || !sp || slash == g || sp == slash + 1 || (size_t)(slash - g) >= sizeof(p->group) ||
	    (size_t)(sp - slash - 1) >= sizeof(p->event))
		return -EINVAL;
	snprintf(p->group, sizeof(p->group), "%.*s", (int)(slash - g), g);
	snprintf(p->event, sizeof(p->event), "%.*s", (int)(sp - slash - 1), slash + 1);
	const char *tok = sp + 1, *end = tok + strcspn(tok, " ");
	const char *colon = NULL;
	for (const char *c = tok; c < end; c++)
		if (*c == ':')
			colon = c;
	if (!colon || colon == tok || (size_t)(colon - tok) >= sizeof(p->path))
		return -EINVAL;
	snprintf(p->path, sizeof(p->path), "%.*s", (int)(colon - tok), tok);
	char *e;
	errno = 0;
	p->off = strtoull(colon + 1, &e, 16);
	if (errno || e == colon + 1 || strncmp(colon + 1, "0x", 2))
		return -EINVAL;
	p->ref_ctr_off = 0;
	if (*e == '(') {
		const char *r = e + 1;
		p->ref_ctr_off = strtoull(r, &e, 16);
		if (e == r || *e != ')')
			return -EINVAL;
		e++;
	}
	if (e != end)
		return -EINVAL;
	while (*end == ' ')
		end++;
	snprintf(p->args, sizeof(p->args), "%s", end);
	return 0;
}

/* The whole probes file of the entry directory dfd, NUL-terminated, in *buf; -ENOENT when none. */
static int read_probes(int dfd, char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	int fd = bt_beneath_open_reg(dfd, "probes");
	if (fd < 0)
		return fd;
	char *b = malloc(PROBES_MAX + 1);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	size_t n = 0;
	ssize_t r;
	while (n < PROBES_MAX && (r = read(fd, b + n, PROBES_MAX - n)) > 0)
		n += (size_t)r;
	close(fd);
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

struct walk {
	const char *cache;
	int root;
	int (*fn)(void *ctx, const struct bt_pcache_probe *p);
	void *ctx;
	struct bt_pcache_probe p;
};

static int walk_text(struct walk *w, char *text)
{
	bool in_entry = false;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] == '#' || line[0] == '%') {
			w->p.sdt = line[0] == '%';
			snprintf(w->p.header, sizeof(w->p.header), "%s", line + 1);
			in_entry = true;
			continue;
		}
		if (!in_entry || bt_pcache_parse_line(line, &w->p) != 0)
			continue;
		int r = w->fn(w->ctx, &w->p);
		if (r)
			return r;
	}
	return 0;
}

/* The entry directory of e, opened beneath the cache root. */
static int open_entry(int root, const char *cache, const char *dir)
{
	size_t cl = strlen(cache);
	if (strncmp(dir, cache, cl) || dir[cl] != '/')
		return -EINVAL;
	return bt_beneath_open(root, dir + cl + 1, O_RDONLY | O_DIRECTORY);
}

static int walk_entry(void *ctx, const struct bt_bidcache_entry *e)
{
	struct walk *w = ctx;
	int dfd = open_entry(w->root, w->cache, e->dir);
	if (dfd < 0)
		return 0;
	char *text;
	size_t len;
	int r = read_probes(dfd, &text, &len);
	close(dfd);
	if (r)
		return r == -ENOMEM ? r : 0;
	w->p.id = e->id;
	r = walk_text(w, text);
	free(text);
	return r;
}

int bt_pcache_foreach(const char *cache_dir, int (*fn)(void *ctx, const struct bt_pcache_probe *p),
		      void *ctx)
{
	struct walk *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->cache = cache_dir;
	w->fn = fn;
	w->ctx = ctx;
	w->root = bt_bidcache_open_root(cache_dir, false);
	int r = w->root == -ENOENT ? 0 : w->root;
	if (w->root >= 0) {
		r = bt_bidcache_foreach(cache_dir, walk_entry, w);
		close(w->root);
	}
	free(w);
	return r;
}

void bt_pcache_group(const char *path, char *out, size_t len)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strcspn(base, "-._");
	snprintf(out, len, "probe_%.*s", (int)n, base);
	for (char *c = out; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
			*c = '_';
}

/* ---- rewriting a probes file ---------------------------------------------------------------- */

/* Appends text[0..n) to the growing buffer b. */
struct sbuf {
	char *s;
	size_t n, cap;
	int err;
};

static void put(struct sbuf *b, const char *text, size_t n)
{
	if (b->err)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->n + n + 1) * 2;
		char *s = realloc(b->s, cap);
		if (!s) {
			b->err = -ENOMEM;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	memcpy(b->s + b->n, text, n);
	b->n += n;
	b->s[b->n] = '\0';
}

/* Copies the entries of text that keep() keeps into b; how many were dropped. */
static size_t filter_entries(const char *text, struct sbuf *b, bool (*keep)(const void *arg, const char *entry,
									   size_t len), const void *arg)
{
	size_t dropped = 0;
	const char *p = text;
	while (*p) {
		/* an entry: its header line and the lines up to the next header */
		const char *end = p;
		do {
			end += strcspn(end, "\n");
			if (*end == '\n')
				end++;
		} while (*end && *end != '#' && *end != '%');
		if (keep(arg, p, (size_t)(end - p)))
			put(b, p, (size_t)(end - p));
		else
			dropped++;
		p = end;
	}
	return dropped;
}

/* Writes b as the probes file of the entry directory dfd, replacing it whole. */
static int write_probes(int dfd, const struct sbuf *b)
{
	struct bt_wfile w = BT_WFILE_INIT;
	int fd = bt_wfile_open(&w, dfd, "probes", BT_WFILE_MODE);
	if (fd < 0)
		return fd;
	size_t off = 0;
	while (off < b->n) {
		ssize_t r = write(fd, b->s + off, b->n - off);
		if (r <= 0) {
			bt_wfile_abort(&w);
			return r < 0 ? -errno : -EIO;
		}
		off += (size_t)r;
	}
	return bt_wfile_commit(&w);
}

struct find_dir {
	const struct bt_build_id *id;
	char dir[PATH_MAX];
};

static int find_dir(void *ctx, const struct bt_bidcache_entry *e)
{
	struct find_dir *f = ctx;
	if (!bt_buildid_eq(&e->id, f->id))
		return 0;
	snprintf(f->dir, sizeof(f->dir), "%s", e->dir);
	return 1;
}

struct header_arg {
	char header[520];   /* with its # or %, and the line end */
};

static bool other_header(const void *arg, const char *entry, size_t len)
{
	const struct header_arg *h = arg;
	size_t hl = strlen(h->header);
	return !(len >= hl && !strncmp(entry, h->header, hl));
}

/* Whether text fits perf's format: one line, no control character; a path (fields are split at
 * white space) no space either. */
static bool fits(const char *text, bool is_path)
{
	return !bt_esc_needed(text, strlen(text)) && (!is_path || !strpbrk(text, " \t"));
}

int bt_pcache_add(const char *cache_dir, const struct bt_build_id *id, const char *path, int fd, bool sdt,
		  const char *header, const char *const *lines, size_t nlines)
{
	bool ok = path && fits(path, true) && fits(header, false);
	for (size_t i = 0; ok && i < nlines; i++)
		ok = fits(lines[i], false);
	if (!ok)
		return -EILSEQ;  /* a newline there would forge a line, another probe */
	int err = bt_bidcache_add_fd(cache_dir, id, path, fd);
	if (err)
		return err;
	struct find_dir *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->id = id;
	int root = bt_bidcache_open_root(cache_dir, false), dfd = -1;
	err = root < 0 ? root : bt_bidcache_foreach(cache_dir, find_dir, f) == 1 ? 0 : -ENOENT;
	if (!err && (dfd = open_entry(root, cache_dir, f->dir)) < 0)
		err = dfd;
	char *old = NULL;
	size_t oldlen;
	if (!err && (err = read_probes(dfd, &old, &oldlen)) == -ENOENT)
		err = 0;
	struct sbuf b = { 0 };
	struct header_arg h;
	snprintf(h.header, sizeof(h.header), "%c%s\n", sdt ? '%' : '#', header);
	if (!err) {
		if (old)
			filter_entries(old, &b, other_header, &h);
		put(&b, h.header, strlen(h.header));
		for (size_t i = 0; i < nlines; i++) {
			put(&b, lines[i], strlen(lines[i]));
			put(&b, "\n", 1);
		}
		err = b.err ? b.err : write_probes(dfd, &b);
	}
	free(b.s);
	free(old);
	free(f);
	if (dfd >= 0)
		close(dfd);
	if (root >= 0)
		close(root);
	return err;
}

struct event_arg {
	char p[256], r[256];   /* "p:GROUP/EVENT " and "r:GROUP/EVENT " */
};

static bool without_event(const void *arg, const char *entry, size_t len)
{
	const struct event_arg *ev = arg;
	for (const char *l = entry; l < entry + len;) {
		if (!strncmp(l, ev->p, strlen(ev->p)) || !strncmp(l, ev->r, strlen(ev->r)))
			return false;
		const char *nl = memchr(l, '\n', (size_t)(entry + len - l));
		if (!nl)
			break;
		l = nl + 1;
	}
	return true;
}

struct remove_ctx {
	const char *cache;
	int root;
	struct event_arg ev;
	int removed;
	int err;
};

static int remove_in_entry(void *ctx, const struct bt_bidcache_entry *e)
{
	struct remove_ctx *rc = ctx;
	int dfd = open_entry(rc->root, rc->cache, e->dir);
	if (dfd < 0)
		return 0;
	char *text;
	size_t len;
	if (read_probes(dfd, &text, &len) == 0) {
		struct sbuf b = { 0 };
		put(&b, "", 0);
		size_t n = filter_entries(text, &b, without_event, &rc->ev);
		if (n && !b.err && (rc->err = write_probes(dfd, &b)) == 0)
			rc->removed += (int)n;
		free(b.s);
		free(text);
	}
	close(dfd);
	return rc->err;
}

int bt_pcache_remove(const char *cache_dir, const char *group, const char *event)
{
	struct remove_ctx rc = { .cache = cache_dir };
	snprintf(rc.ev.p, sizeof(rc.ev.p), "p:%s/%s ", group, event);
	snprintf(rc.ev.r, sizeof(rc.ev.r), "r:%s/%s ", group, event);
	rc.root = bt_bidcache_open_root(cache_dir, false);
	if (rc.root < 0)
		return rc.root == -ENOENT ? 0 : rc.root;
	int err = bt_bidcache_foreach(cache_dir, remove_in_entry, &rc);
	close(rc.root);
	return err ? err : rc.removed;
}
