/* kident.c - reads the running kernel's and its modules' build-ids from sysfs and /proc/modules,
 * and decides whether a vmlinux or .ko on disk is the exact binary that is running. */
#include "kernel/kident.h"
#include "base/safeopen.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NT_GNU_BUILD_ID_TYPE 3
/* sysfs note files are tiny; /proc/modules of a kernel with thousands of modules is a few 100 KiB. */
#define NOTES_MAX (64u << 10)
#define MODULES_MAX (8u << 20)
/* lib/modules/REL/kernel/drivers/net/ethernet/VENDOR/CHIP/x.ko is the deepest usual layout. */
#define WALK_DEPTH_MAX 12

static int join(char *buf, size_t len, const char *root, const char *path)
{
	int n = snprintf(buf, len, "%s%s", root ? root : "", path);
	if (n < 0)
		return -EINVAL;
	return (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Whole small file into a malloc'ed, NUL-terminated buffer. Regular files only, refused before they
 * are opened, so that a FIFO planted in a fake root cannot hang the caller. */
static int slurp(const char *path, size_t max, char **out, size_t *outlen)
{
	int fd = bt_open_regular(AT_FDCWD, path, 0, NULL);
	if (fd < 0)
		return fd;
	/* sysfs and procfs report sizes that have nothing to do with the content: read to EOF. */
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (n == cap) {
			if (cap >= max) {
				free(buf);
				close(fd);
				return -EFBIG;
			}
			size_t ncap = cap * 2 > max ? max : cap * 2;
			char *nb = realloc(buf, ncap + 1);
			if (!nb) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int err = -errno;
			free(buf);
			close(fd);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	*outlen = n;
	return 0;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static size_t round_up(size_t v, size_t align)
{
	return (v + align - 1) & ~(align - 1);
}

/* Offsets are relative to the start of each note, which is itself aligned: the descriptor begins at
 * the first aligned offset after the name, the next note at the first after the descriptor. */
static int walk_notes(const uint8_t *p, size_t len, size_t align, struct bt_build_id *out)
{
	size_t off = 0;
	while (len - off >= 12) {
		uint32_t namesz = rd32(p + off), descsz = rd32(p + off + 4), type = rd32(p + off + 8);
		size_t rest = len - off;
		size_t desc_rel = round_up(12 + (size_t)namesz, align);
		if (12 + (size_t)namesz > rest || desc_rel > rest || descsz > rest - desc_rel)
			return -EINVAL;
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 && !memcmp(p + off + 12, "GNU", 4)) {
			if (descsz == 0 || descsz > BT_BUILD_ID_MAXLEN)
				return -EINVAL;
			out->len = (uint8_t)descsz;
			memcpy(out->data, p + off + desc_rel, descsz);
			return 0;
		}
		size_t next = round_up(desc_rel + descsz, align);
		off += next > rest ? rest : next;
	}
	/* Anything left that cannot hold a note header must be padding. */
	for (; off < len; off++)
		if (p[off])
			return -EINVAL;
	return -ENODATA;
}

int bt_kident_parse_notes(const void *buf, size_t len, struct bt_build_id *out)
{
	if (!out || (!buf && len))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	int err = walk_notes(buf, len, 4, out);
	/* Some kernels were built with their .notes section padded to 8 bytes (notes emitted with
	 * .balign 8); a 4-byte walk then misreads the padding, an 8-byte walk does not. */
	if (err) {
		struct bt_build_id alt = { 0 };
		if (walk_notes(buf, len, 8, &alt) == 0) {
			*out = alt;
			return 0;
		}
		memset(out, 0, sizeof(*out));
	}
	return err;
}

static int notes_file_build_id(const char *path, struct bt_build_id *out)
{
	char *buf;
	size_t len;
	int err = slurp(path, NOTES_MAX, &buf, &len);
	if (err)
		return err;
	err = bt_kident_parse_notes(buf, len, out);
	free(buf);
	return err;
}

int bt_kident_kernel_build_id(const char *root, struct bt_build_id *out)
{
	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	char path[4096];
	int err = join(path, sizeof(path), root, "/sys/kernel/notes");
	return err ? err : notes_file_build_id(path, out);
}

/* The release becomes one path component: nothing that could climb out of it or split it. */
static bool valid_release(const char *r)
{
	return r && *r && !strchr(r, '/') && !strchr(r, '\n') && strcmp(r, ".") && strcmp(r, "..");
}

int bt_kident_release(const char *root, char *buf, size_t len)
{
	if (!buf || !len)
		return -EINVAL;
	buf[0] = '\0';
	char path[4096], *data;
	size_t n;
	int err = join(path, sizeof(path), root, "/proc/sys/kernel/osrelease");
	if (!err)
		err = slurp(path, 4096, &data, &n);
	if (err)
		return err;
	while (n && isspace((unsigned char)data[n - 1]))
		data[--n] = '\0';
	if (!valid_release(data)) {
		free(data);
		return -EINVAL;
	}
	if (n >= len) {
		free(data);
		return -ENAMETOOLONG;
	}
	memcpy(buf, data, n + 1);
	free(data);
	return 0;
}

static bool valid_modname(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (n == 0 || n >= BT_KMOD_NAME_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_' && name[i] != '-')
			return false;
	return true;
}

int bt_kident_module_build_id(const char *root, const char *name, struct bt_build_id *out)
{
	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!valid_modname(name))
		return -EINVAL;
	char rel[256], path[4096];
	snprintf(rel, sizeof(rel), "/sys/module/%s/notes/.note.gnu.build-id", name);
	int err = join(path, sizeof(path), root, rel);
	return err ? err : notes_file_build_id(path, out);
}

int bt_kident_module_notes(const char *root, bt_kident_module_fn fn, void *ctx)
{
	if (!fn)
		return -EINVAL;
	char path[4096];
	int err = join(path, sizeof(path), root, "/sys/module");
	if (err)
		return err;
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	struct dirent *de;
	int rc = 0;
	while (!rc && (de = readdir(d))) {
		struct bt_build_id id;
		/* "." and ".." fail the name check like any other non-module entry. */
		if (bt_kident_module_build_id(root, de->d_name, &id) == 0)
			rc = fn(ctx, de->d_name, &id);
	}
	closedir(d);
	return rc;
}

static int cmp_mod(const void *a, const void *b)
{
	const struct bt_kmodule *x = a, *y = b;
	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int parse_u64(const char *s, int base, uint64_t *out)
{
	if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, base);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "name size refcount deps state 0xADDR [taints]" */
static int parse_line(char *line, struct bt_kmodule *m)
{
	char *save = NULL, *f[6];
	for (int i = 0; i < 6; i++) {
		f[i] = strtok_r(i ? NULL : line, " \t", &save);
		if (!f[i])
			return -EINVAL;
	}
	if (!valid_modname(f[0]) || parse_u64(f[1], 10, &m->size) != 0)
		return -EINVAL;
	if (strncmp(f[5], "0x", 2) != 0 || parse_u64(f[5] + 2, 16, &m->base) != 0)
		return -EINVAL;
	if (m->base && m->base + m->size < m->base)
		return -EINVAL;
	strcpy(m->name, f[0]);
	return 0;
}

int bt_kident_modules_parse(const char *buf, size_t len, const char *root, struct bt_kmodules *out)
{
	if (!out || (!buf && len))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (len && memchr(buf, '\0', len))
		return -EINVAL;
	char *copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	if (len)
		memcpy(copy, buf, len);
	copy[len] = '\0';

	size_t cap = 0;
	int err = 0;
	bool any_base = false;
	char *save = NULL;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (out->n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct bt_kmodule *nm = realloc(out->mods, ncap * sizeof(*nm));
			if (!nm) {
				err = -ENOMEM;
				break;
			}
			out->mods = nm;
			cap = ncap;
		}
		struct bt_kmodule *m = &out->mods[out->n];
		memset(m, 0, sizeof(*m));
		err = parse_line(line, m);
		if (err)
			break;
		any_base |= m->base != 0;
		m->build_id_err = root ? bt_kident_module_build_id(root, m->name, &m->build_id) : -ENOENT;
		out->n++;
	}
	free(copy);
	if (err) {
		bt_kident_modules_free(out);
		return err;
	}
	out->addrs_hidden = out->n > 0 && !any_base;
	if (out->n > 1)
		qsort(out->mods, out->n, sizeof(*out->mods), cmp_mod);
	return 0;
}

int bt_kident_modules_load(const char *root, struct bt_kmodules *out)
{
	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	char path[4096], *buf;
	size_t len;
	int err = join(path, sizeof(path), root, "/proc/modules");
	if (!err)
		err = slurp(path, MODULES_MAX, &buf, &len);
	if (err)
		return err;
	err = bt_kident_modules_parse(buf, len, root ? root : "", out);
	free(buf);
	return err;
}

void bt_kident_modules_free(struct bt_kmodules *m)
{
	if (!m)
		return;
	free(m->mods);
	memset(m, 0, sizeof(*m));
}

const struct bt_kmodule *bt_kident_module_by_name(const struct bt_kmodules *m, const char *name)
{
	if (!m || !name) {
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->mods[i].name, name))
			return &m->mods[i];
	errno = ENOENT;
	return NULL;
}

const struct bt_kmodule *bt_kident_module_at(const struct bt_kmodules *m, uint64_t addr)
{
	if (!m) {
		errno = EINVAL;
		return NULL;
	}
	if (m->addrs_hidden) {
		errno = EACCES;
		return NULL;
	}
	/* last module with base <= addr */
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->mods[mid].base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0) {
		const struct bt_kmodule *k = &m->mods[lo - 1];
		if (k->base && addr - k->base < k->size)
			return k;
	}
	errno = ENOENT;
	return NULL;
}

static int file_matches(const char *path, const struct bt_build_id *want)
{
	if (!path || !want)
		return -EINVAL;
	if (want->len == 0)
		return -ENODATA;
	struct bt_build_id have;
	int err = bt_buildid_from_path(path, &have);
	if (err)
		return err;
	return bt_buildid_eq(&have, want) ? 0 : -ESTALE;
}

int bt_kident_vmlinux_matches(const char *path, const struct bt_build_id *running)
{
	return file_matches(path, running);
}

int bt_kident_module_file_matches(const char *path, const struct bt_build_id *loaded)
{
	return file_matches(path, loaded);
}

static const char *const vmlinux_paths[] = {
	"/usr/lib/debug/boot/vmlinux-%s",
	"/usr/lib/debug/lib/modules/%s/vmlinux",
	"/boot/vmlinux-%s",
	"/lib/modules/%s/build/vmlinux",
};

int bt_kident_vmlinux_candidate(const char *root, const char *release, unsigned idx, char *buf,
				size_t len)
{
	if (!valid_release(release) || !buf || !len)
		return -EINVAL;
	if (idx >= sizeof(vmlinux_paths) / sizeof(vmlinux_paths[0]))
		return -ENOENT;
	char rel[4096];
	int n = snprintf(rel, sizeof(rel), vmlinux_paths[idx], release);
	if (n < 0 || (size_t)n >= sizeof(rel))
		return -ENAMETOOLONG;
	return join(buf, len, root, rel);
}

static int copy_path(char *buf, size_t len, const char *path)
{
	size_t n = strlen(path);
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	return 0;
}

int bt_kident_find_vmlinux(const char *root, const char *override, char *buf, size_t len)
{
	if (!buf || !len)
		return -EINVAL;
	buf[0] = '\0';
	struct bt_build_id running;
	int err = bt_kident_kernel_build_id(root, &running);
	if (err)
		return err;
	if (override) {
		err = bt_kident_vmlinux_matches(override, &running);
		return err ? err : copy_path(buf, len, override);
	}
	char release[256], path[4096];
	err = bt_kident_release(root, release, sizeof(release));
	if (err)
		return err;
	bool seen = false;
	for (unsigned i = 0; bt_kident_vmlinux_candidate(root, release, i, path, sizeof(path)) == 0; i++) {
		err = bt_kident_vmlinux_matches(path, &running);
		if (err == 0)
			return copy_path(buf, len, path);
		if (err != -ENOENT && err != -ENOTDIR)
			seen = true;
	}
	return seen ? -ESTALE : -ENOENT;
}

/* ---- module files ---- */

struct modsearch {
	const char *name;                 /* as /proc/modules spells it */
	const struct bt_build_id *want;
	char *buf;
	size_t len;
	bool seen;                        /* a file of that name existed */
	bool found;
	int err;                          /* fatal error (ENOMEM, ENAMETOOLONG) */
};

static bool same_modname(const char *a, size_t alen, const char *b)
{
	if (strlen(b) != alen)
		return false;
	for (size_t i = 0; i < alen; i++) {
		char x = a[i] == '-' ? '_' : a[i], y = b[i] == '-' ? '_' : b[i];
		if (x != y)
			return false;
	}
	return true;
}

/* NAME.ko, NAME.ko.xz, NAME.ko.zst, NAME.ko.gz, NAME.ko.debug */
static bool is_module_file(const char *file, const char *name)
{
	static const char *const suffixes[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz", ".ko.debug" };
	size_t n = strlen(file);
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t s = strlen(suffixes[i]);
		if (n > s && !strcmp(file + n - s, suffixes[i]) && same_modname(file, n - s, name))
			return true;
	}
	return false;
}

static void walk_modules(const char *dir, int depth, struct modsearch *s)
{
	if (depth > WALK_DEPTH_MAX || s->found || s->err)
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	char path[4096];
	struct dirent *de;
	while (!s->found && !s->err && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (join(path, sizeof(path), dir, "/") || strlen(path) + strlen(de->d_name) >= sizeof(path))
			continue;
		strcat(path, de->d_name);
		/* lib/modules/REL/build and source are symlinks into whole kernel trees: never follow. */
		struct stat st;
		if (lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			walk_modules(path, depth + 1, s);
		} else if (S_ISREG(st.st_mode) && is_module_file(de->d_name, s->name)) {
			s->seen = true;
			if (bt_kident_module_file_matches(path, s->want) == 0) {
				s->err = copy_path(s->buf, s->len, path);
				s->found = s->err == 0;
			}
		}
	}
	closedir(d);
}

int bt_kident_find_module_file(const char *root, const char *release, const char *name,
			       const struct bt_build_id *loaded, char *buf, size_t len)
{
	if (!valid_release(release) || !valid_modname(name) || !loaded || !buf || !len)
		return -EINVAL;
	buf[0] = '\0';
	static const char *const dirs[] = { "/usr/lib/debug/lib/modules/%s", "/lib/modules/%s" };
	struct modsearch s = { .name = name, .want = loaded, .buf = buf, .len = len };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !s.found && !s.err; i++) {
		char rel[4096], dir[4096];
		int n = snprintf(rel, sizeof(rel), dirs[i], release);
		if (n < 0 || (size_t)n >= sizeof(rel))
			return -ENAMETOOLONG;
		int err = join(dir, sizeof(dir), root, rel);
		if (err)
			return err;
		walk_modules(dir, 0, &s);
	}
	if (s.err)
		return s.err;
	if (s.found)
		return 0;
	return s.seen ? -ESTALE : -ENOENT;
}
