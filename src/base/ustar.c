/* ustar.c - writes tar archives block by block: ustar headers, pax extended headers where a name,
 * link target or size does not fit them, file data padded to 512 bytes, two zero blocks at the end. */
#include "base/ustar.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK 512
#define USTAR_MAX_OCTAL11 077777777777ULL  /* the largest size a 12-byte field holds */

void bt_ustar_init(struct bt_ustar *t, int fd)
{
	t->fd = fd;
	t->err = 0;
	t->written = 0;
}

static int write_all(struct bt_ustar *t, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(t->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			t->err = n < 0 ? -errno : -EIO;
			return t->err;
		}
		p += n;
		len -= (size_t)n;
		t->written += (uint64_t)n;
	}
	return 0;
}

static int pad(struct bt_ustar *t, uint64_t size)
{
	static const char zeros[BLOCK];
	size_t rem = (size_t)(size % BLOCK);
	return rem ? write_all(t, zeros, BLOCK - rem) : 0;
}

/* width-1 octal digits and a NUL, as every tar reader accepts; callers keep v in range. */
static void octal(char *field, size_t width, uint64_t v)
{
	field[width - 1] = '\0';
	for (size_t i = width - 1; i-- > 0; v >>= 3)
		field[i] = (char)('0' + (v & 7));
}

static bool safe_name(const char *name)
{
	if (!name || !*name || name[0] == '/')
		return false;
	for (const char *p = name; *p;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return false;
		p += n;
		if (*p)
			p++;
	}
	return true;
}

/* Splits name into ustar's prefix (<=155) and name (<=100) fields at a '/'; false when impossible. */
static bool split_name(const char *name, char *hdr)
{
	size_t len = strlen(name);
	if (len <= 100) {
		memcpy(hdr, name, len);
		return true;
	}
	for (size_t i = len > 101 ? len - 101 : 0; i < len && i <= 155; i++) {
		if (name[i] != '/' || i == 0 || len - i - 1 > 100 || len - i - 1 == 0)
			continue;
		memcpy(hdr + 345, name, i);
		memcpy(hdr, name + i + 1, len - i - 1);
		return true;
	}
	return false;
}

static void checksum(char *hdr)
{
	unsigned sum = 0;
	memset(hdr + 148, ' ', 8);
	for (size_t i = 0; i < BLOCK; i++)
		sum += (unsigned char)hdr[i];
	snprintf(hdr + 148, 8, "%06o", sum);
	hdr[155] = ' ';
}

/* What a member's header says about it. */
struct member {
	const char *name;
	char type;          /* '0' file, '2' symlink, '5' directory, 'x' pax extended header */
	mode_t mode;
	uint64_t size;
	int64_t mtime;
	const char *link;   /* a symlink's target, else NULL */
};

/* The fixed fields; name and link are placed by the caller, as they may need a pax record. */
static void fill_header(char *hdr, const struct member *m)
{
	octal(hdr + 100, 8, m->mode & 07777);
	octal(hdr + 108, 8, 0);
	octal(hdr + 116, 8, 0);
	octal(hdr + 124, 12, m->size <= USTAR_MAX_OCTAL11 ? m->size : 0);
	octal(hdr + 136, 12, m->mtime > 0 ? (uint64_t)m->mtime : 0);
	hdr[156] = m->type;
	memcpy(hdr + 257, "ustar", 6);
	memcpy(hdr + 263, "00", 2);
	memcpy(hdr + 265, "root", 4);
	memcpy(hdr + 297, "root", 4);
}

/* Appends one "LEN key=value\n" record, whose LEN counts its own digits. */
static int pax_record(char **buf, size_t *len, const char *key, const char *value)
{
	size_t body = 1 + strlen(key) + 1 + strlen(value) + 1;  /* " key=value\n" */
	size_t total = body + 1, digits = 1;
	for (;;) {
		size_t d = 0;
		for (size_t v = total; v; v /= 10)
			d++;
		if (d == digits)
			break;
		digits = d;
		total = body + digits;
	}
	char *n = realloc(*buf, *len + total + 1);
	if (!n)
		return -ENOMEM;
	*buf = n;
	snprintf(n + *len, total + 1, "%zu %s=%s\n", total, key, value);
	*len += total;
	return 0;
}

/* The header (and, when needed, the pax header before it) of one member. */
static int header(struct bt_ustar *t, const struct member *m)
{
	const char *name = m->name, *link = m->link;
	if (t->err)
		return t->err;
	if (!safe_name(name))
		return -EINVAL;
	char hdr[BLOCK] = { 0 };
	char *pax = NULL;
	size_t paxlen = 0;
	int err = 0;
	if (!split_name(name, hdr)) {
		memcpy(hdr, name, 100);
		err = pax_record(&pax, &paxlen, "path", name);
	}
	if (!err && link) {
		size_t ll = strlen(link);
		if (ll > 100)
			err = pax_record(&pax, &paxlen, "linkpath", link);
		memcpy(hdr + 157, link, ll > 100 ? 100 : ll);
	}
	if (!err && m->size > USTAR_MAX_OCTAL11) {
		char num[32];
		snprintf(num, sizeof(num), "%" PRIu64, m->size);
		err = pax_record(&pax, &paxlen, "size", num);
	}
	if (!err && pax) {
		char xh[BLOCK] = { 0 };
		snprintf(xh, 100, "PaxHeaders/%s", strrchr(name, '/') ? strrchr(name, '/') + 1 : name);
		struct member x = { .type = 'x', .mode = 0644, .size = paxlen, .mtime = m->mtime };
		fill_header(xh, &x);
		checksum(xh);
		err = write_all(t, xh, BLOCK);
		if (!err)
			err = write_all(t, pax, paxlen);
		if (!err)
			err = pad(t, paxlen);
	}
	free(pax);
	if (err) {
		if (!t->err)
			t->err = err;
		return err;
	}
	fill_header(hdr, m);
	checksum(hdr);
	return write_all(t, hdr, BLOCK);
}

int bt_ustar_add_dir(struct bt_ustar *t, const char *name, mode_t mode, int64_t mtime)
{
	if (!name || !*name)
		return -EINVAL;
	struct member m = { .name = name, .type = '5', .mode = mode, .mtime = mtime };
	size_t n = strlen(name);
	if (name[n - 1] == '/')
		return header(t, &m);
	/* Directory members conventionally end in a slash. */
	char *slashed = malloc(n + 2);
	if (!slashed)
		return -ENOMEM;
	memcpy(slashed, name, n);
	memcpy(slashed + n, "/", 2);
	m.name = slashed;
	int err = header(t, &m);
	free(slashed);
	return err;
}

int bt_ustar_add_symlink(struct bt_ustar *t, const char *name, const char *target, int64_t mtime)
{
	if (!target || !*target)
		return -EINVAL;
	return header(t, &(struct member){ .name = name, .type = '2', .mode = 0777, .mtime = mtime,
					  .link = target });
}

int bt_ustar_add_file(struct bt_ustar *t, const char *name, mode_t mode, int64_t mtime, int fd,
		      uint64_t size)
{
	int err = header(t, &(struct member){ .name = name, .type = '0', .mode = mode, .size = size,
					     .mtime = mtime });
	if (err)
		return err;
	char *buf = malloc(1 << 16);
	if (!buf)
		return t->err = -ENOMEM;
	uint64_t off = 0;
	while (!err && off < size) {
		size_t want = size - off < (1 << 16) ? (size_t)(size - off) : (1 << 16);
		ssize_t n = pread(fd, buf, want, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* The header promised size bytes: a short file would corrupt the archive. */
			err = t->err = n < 0 ? -errno : -EIO;
			break;
		}
		err = write_all(t, buf, (size_t)n);
		off += (uint64_t)n;
	}
	free(buf);
	return err ? err : pad(t, size);
}

int bt_ustar_finish(struct bt_ustar *t)
{
	static const char zeros[2 * BLOCK];
	if (t->err)
		return t->err;
	return write_all(t, zeros, sizeof(zeros));
}
