/* probes.c - probe specs, the files they name (mapped or by path) and their resolution by
 * build-id: see probes.h. */
#include "session/probes.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/safeopen.h"
#include "capture/procmaps.h"
#include "elf/elffile.h"
#include "elf/probeaddr.h"
#include "elf/sdt.h"
#include "elf/symtab.h"
#include "symsrc/bidcache.h"

static bool is_build_id(const char *s, size_t n)
{
	if (n < 16 || n > 2 * BT_BUILD_ID_MAXLEN || n % 2)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* s[0..n) into out as the file part: a build-id or a path. */
static int take_file(const char *s, size_t n, struct bt_probe_spec *out)
{
	if (n == 0 || n >= sizeof(out->file))
		return -EINVAL;
	if (is_build_id(s, n)) {
		char hex[2 * BT_BUILD_ID_MAXLEN + 1];
		memcpy(hex, s, n);
		hex[n] = '\0';
		return bt_buildid_parse_hex(hex, &out->id);
	}
	memcpy(out->file, s, n);
	out->file[n] = '\0';
	return 0;
}

static int take(char *dst, size_t cap, const char *s, size_t n)
{
	if (n == 0 || n >= cap)
		return -EINVAL;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

int bt_probe_spec_parse(const char *s, struct bt_probe_spec *out)
{
	memset(out, 0, sizeof(*out));
	if (!s || strlen(s) >= sizeof(out->text))
		return -EINVAL;
	strcpy(out->text, s);
	const char *last = strrchr(s, ':');
	if (!last || !last[1])
		return -EINVAL;
	if (!strncmp(s, "cache:", 6)) {
		out->kind = BT_PROBE_CACHED;
		const char *g = s + 6;
		if (last < g || take(out->provider, sizeof(out->provider), g, (size_t)(last - g)))
			return -EINVAL;
		return take(out->name, sizeof(out->name), last + 1, strlen(last + 1));
	}
	if (!strncmp(s, "sdt:", 4)) {
		out->kind = BT_PROBE_SDT;
		const char *f = s + 4, *prov = last;
		while (prov > f && prov[-1] != ':')
			prov--;
		if (take(out->provider, sizeof(out->provider), prov, (size_t)(last - prov)) ||
		    take(out->name, sizeof(out->name), last + 1, strlen(last + 1)))
			return -EINVAL;
		if (strchr(out->provider, '/'))
			return -EINVAL;
		/* sdt:PROVIDER:NAME: in whichever file has it */
		return prov == f ? 0 : prov == f + 1 ? -EINVAL : take_file(f, (size_t)(prov - 1 - f), out);
	}
	if (take_file(s, (size_t)(last - s), out))
		return -EINVAL;
	const char *what = last + 1;
	if (!strncmp(what, "0x", 2) || !strncmp(what, "0X", 2)) {
		char *end;
		errno = 0;
		out->addr = strtoull(what, &end, 16);
		if (errno || *end || end == what + 2 || out->id.len)
			return -EINVAL;
		out->kind = BT_PROBE_ADDR;
		snprintf(out->name, sizeof(out->name), "0x%llx", (unsigned long long)out->addr);
		return 0;
	}
	out->kind = BT_PROBE_FUNC;
	return take(out->name, sizeof(out->name), what, strlen(what));
}

const char *bt_probe_id_hex(const struct bt_build_id *id, char *buf, size_t len)
{
	if (!id->len) {
		snprintf(buf, len, "none");
		return buf;
	}
	return bt_buildid_hex(id, buf, len);
}

/* ---- resolution ---------------------------------------------------------------------------- */

static int say(char *msg, size_t len, int err, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int say(char *msg, size_t len, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (msg && len)
		vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return err;
}

/* The symbols of f: its build-id's from every source, else its own. */
static int load_symbols(const struct bt_probe_file *f, struct bt_elf *e, const struct bt_symsrc_opts *so,
			struct bt_symtab **st, char *origin, size_t olen)
{
	if (f->id.len) {
		struct bt_symsrc_req req = { .id = &f->id, .mapped_fd = f->fd, .path = f->path };
		return bt_symsrc_load(so, &req, st, origin, olen);
	}
	return bt_symsrc_load_elf(e, st, origin, olen);
}

static int find_function(const struct bt_probe_spec *spec, const struct bt_probe_file *f, struct bt_elf *e,
			 const struct bt_symsrc_opts *so, struct bt_probe_site *out, char *msg, size_t len)
{
	char hex[2 * BT_BUILD_ID_MAXLEN + 1];
	struct bt_symtab *st = NULL;
	int err = load_symbols(f, e, so, &st, out->origin, sizeof(out->origin));
	if (err && err != -ENODATA)
		return say(msg, len, err, "%s: reading the symbols of %s (build-id %s): %s", spec->text, f->path,
			   bt_probe_id_hex(&f->id, hex, sizeof(hex)), strerror(-err));
	bool found = false;
	for (size_t i = 0; st && i < bt_symtab_count(st); i++) {
		const struct bt_sym *s = bt_symtab_at(st, i);
		if (!strcmp(s->name, spec->name)) {
			out->vaddr = s->addr;
			found = true;
			break;
		}
	}
	bt_symtab_free(st);
	/* A name the table kept another alias of (libc's getpid is __getpid there): the file's own
	 * symbol tables know it, the dynamic one included. */
	uint64_t size = 0;
	if (!found && bt_elf_symbol_any(e, spec->name, &out->vaddr, &size) == 0 && out->vaddr)
		found = true;
	if (!found)
		return say(msg, len, -ENOENT, "%s: no function %s in %s (build-id %s, symbols from %s)", spec->text,
			   spec->name, f->path, bt_probe_id_hex(&f->id, hex, sizeof(hex)),
			   err ? "nowhere" : out->origin);
	snprintf(out->what, sizeof(out->what), "%s", spec->name);
	return 0;
}

static int find_marker(const struct bt_probe_spec *spec, const struct bt_probe_file *f, struct bt_elf *e,
		       struct bt_probe_site *out, char *msg, size_t len)
{
	struct bt_sdt_marker m;
	int err = bt_sdt_find(e, spec->provider, spec->name, &m);
	if (err == -ENOENT)
		return say(msg, len, err, "%s: no SDT marker %s:%s in %s (readelf -n lists its markers)", spec->text,
			   spec->provider, spec->name, f->path);
	if (err)
		return say(msg, len, err, "%s: reading the SDT notes of %s: %s", spec->text, f->path, strerror(-err));
	out->vaddr = m.pc;
	snprintf(out->what, sizeof(out->what), "%s:%s", m.provider, m.name);
	snprintf(out->args, sizeof(out->args), "%s", m.args);
	snprintf(out->origin, sizeof(out->origin), "sdt note");
	if (m.semaphore) {
		struct bt_elf_layout l;
		if ((err = bt_elf_layout(e, &l)) || (err = bt_elf_vaddr_to_offset(&l, m.semaphore, &out->ref_ctr_off)))
			return say(msg, len, err ? err : -ERANGE, "%s: the semaphore of %s:%s (0x%llx) is not in the file",
				   spec->text, m.provider, m.name, (unsigned long long)m.semaphore);
	}
	return 0;
}

/* Whether vaddr is known to be an instruction's first byte: a function's, or a DWARF line row's. */
static bool known_start(const struct bt_probe_file *f, struct bt_elf *e, const struct bt_symsrc_opts *so,
			uint64_t vaddr)
{
	struct bt_symtab *st = NULL;
	char origin[BT_SYMSRC_ORIGIN_LEN];
	bool known = false;
	if (load_symbols(f, e, so, &st, origin, sizeof(origin)) == 0) {
		uint64_t off;
		const struct bt_sym *s = bt_symtab_lookup(st, vaddr, &off);
		known = s && off == 0;
		bt_symtab_free(st);
	}
	return known || bt_elf_line_row_at(f->fd, vaddr) == 1;
}

int bt_probe_resolve(const struct bt_probe_spec *spec, const struct bt_probe_file *f,
		     const struct bt_symsrc_opts *so, struct bt_probe_site *out, char *msg, size_t len)
{
	memset(out, 0, sizeof(*out));
	struct bt_elf *e;
	int err = bt_elf_open_fd(f->fd, &e);
	if (err)
		return say(msg, len, err, "%s: %s is not an ELF file we can read (%s)", spec->text, f->path,
			   strerror(-err));
	switch (spec->kind) {
	case BT_PROBE_FUNC:
		err = find_function(spec, f, e, so, out, msg, len);
		break;
	case BT_PROBE_SDT:
		err = find_marker(spec, f, e, out, msg, len);
		break;
	case BT_PROBE_ADDR:
		out->vaddr = spec->addr;
		snprintf(out->what, sizeof(out->what), "0x%llx", (unsigned long long)spec->addr);
		snprintf(out->origin, sizeof(out->origin), "address");
		out->insn_unchecked = !known_start(f, e, so, spec->addr);
		break;
	default:
		err = say(msg, len, -EINVAL, "%s: not a probe that is resolved in a file", spec->text);
	}
	struct bt_elf_layout l;
	if (!err && bt_elf_code_at(e, out->vaddr, out->section, sizeof(out->section)) != 0)
		err = say(msg, len, -ERANGE, "%s: 0x%llx is outside .text and every other code section of %s",
			  spec->text, (unsigned long long)out->vaddr, f->path);
	if (!err && ((err = bt_elf_layout(e, &l)) || (err = bt_elf_vaddr_to_offset(&l, out->vaddr, &out->off))))
		err = say(msg, len, err, "%s: 0x%llx is in no loaded part of %s", spec->text,
			  (unsigned long long)out->vaddr, f->path);
	bt_elf_close(e);
	return err;
}

/* ---- the files ------------------------------------------------------------------------------ */

struct find_ctx {
	const char *root;
	int pid;
	const struct bt_probe_spec *spec;
	struct stat st;          /* the spec's path, when it could be read */
	bool have_st;
	char real[PATH_MAX];     /* where the spec's path leads; "" unknown */
	int (*fn)(void *ctx, struct bt_probe_file *f);
	void *ctx;
	uint64_t seen[16][2];    /* (dev, ino) of the files already given */
	size_t nseen;
};

static bool path_matches(const struct find_ctx *c, const struct bt_procmap *m)
{
	const char *want = c->spec->file;
	if (!strcmp(m->path, want) || (c->real[0] && !strcmp(m->path, c->real)))
		return true;
	if (c->have_st && !m->deleted && m->ino == (uint64_t)c->st.st_ino &&
	    makedev(m->dev_major, m->dev_minor) == c->st.st_dev)
		return true;
	const char *base = strrchr(m->path, '/');
	return !strchr(want, '/') && base && !strcmp(base + 1, want);
}

static bool seen_before(struct find_ctx *c, const struct bt_procmap *m)
{
	uint64_t dev = makedev(m->dev_major, m->dev_minor);
	for (size_t i = 0; i < c->nseen; i++)
		if (c->seen[i][0] == dev && c->seen[i][1] == m->ino)
			return true;
	if (c->nseen < 16) {
		c->seen[c->nseen][0] = dev;
		c->seen[c->nseen++][1] = m->ino;
	}
	return false;
}

/* A marker named without its file is looked for in every file: whether this one has it. */
static bool has_marker(int fd, const struct bt_probe_spec *spec)
{
	struct bt_elf *e;
	struct bt_sdt_marker m;
	if (bt_elf_open_fd(fd, &e) != 0)
		return false;
	bool yes = bt_sdt_find(e, spec->provider, spec->name, &m) == 0;
	bt_elf_close(e);
	return yes;
}

static int on_map(void *ctx, const struct bt_procmap *m)
{
	struct find_ctx *c = ctx;
	bool any_file = c->spec->kind == BT_PROBE_SDT && !c->spec->file[0] && !c->spec->id.len;
	if (m->perms[2] != 'x' || m->path[0] != '/')
		return 0;
	if (!c->spec->id.len && !any_file && !path_matches(c, m))
		return 0;
	if (seen_before(c, m))
		return 0;
	struct bt_probe_file f = { .pid = c->pid };
	f.fd = bt_procmaps_open_mapped(c->root, c->pid, m->start, m->end);
	if (f.fd < 0)
		return 0;  /* unmapped meanwhile, or not a regular file */
	if (any_file && !has_marker(f.fd, c->spec)) {
		close(f.fd);
		return 0;
	}
	if (bt_buildid_from_fd(f.fd, &f.id) != 0)
		f.id.len = 0;
	if (c->spec->id.len && !bt_buildid_eq(&f.id, &c->spec->id)) {
		close(f.fd);
		return 0;
	}
	snprintf(f.path, sizeof(f.path), "%s", m->path);
	return c->fn(c->ctx, &f);
}

int bt_probe_find_mapped(const char *root, int pid, const struct bt_probe_spec *spec,
			 int (*fn)(void *ctx, struct bt_probe_file *f), void *ctx)
{
	struct find_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = (struct find_ctx){ .root = root, .pid = pid, .spec = spec, .fn = fn, .ctx = ctx };
	if (!spec->id.len) {
		c->have_st = stat(spec->file, &c->st) == 0;
		if (!realpath(spec->file, c->real))
			c->real[0] = '\0';
	}
	int r = bt_procmaps_foreach(root, pid, on_map, c);
	free(c);
	return r;
}

struct path_ctx {
	const struct bt_build_id *id;
	char path[PATH_MAX];
};

static int entry_path(void *ctx, const struct bt_bidcache_entry *e)
{
	struct path_ctx *p = ctx;
	if (!bt_buildid_eq(&e->id, p->id) || e->orig_path[0] != '/')
		return 0;
	snprintf(p->path, sizeof(p->path), "%s", e->orig_path);
	return 1;
}

int bt_probe_open_path(const struct bt_probe_spec *spec, const char *cache_dir, struct bt_probe_file *f,
		       char *msg, size_t len)
{
	char hex[2 * BT_BUILD_ID_MAXLEN + 1], hex2[2 * BT_BUILD_ID_MAXLEN + 1];
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	if (spec->id.len) {
		char dir[PATH_MAX];
		struct path_ctx p = { .id = &spec->id };
		int err = 0;
		if (cache_dir && *cache_dir)
			snprintf(dir, sizeof(dir), "%s", cache_dir);
		else
			err = bt_bidcache_default_dir(dir, sizeof(dir));
		if (err || bt_bidcache_foreach(dir, entry_path, &p) != 1)
			return say(msg, len, -ENOENT, "%s: no path is known for build-id %s (the build-id cache has "
				   "no entry of it): name the file, or a process that maps it with -p", spec->text,
				   bt_buildid_hex(&spec->id, hex, sizeof(hex)));
		snprintf(f->path, sizeof(f->path), "%s", p.path);
	} else if (spec->file[0]) {
		snprintf(f->path, sizeof(f->path), "%s", spec->file);
	} else {
		return say(msg, len, -EINVAL, "%s: name the file of the marker (sdt:FILE:PROVIDER:NAME), or "
			   "processes that map it (-p)", spec->text);
	}
	struct stat st;
	f->fd = bt_open_regular(AT_FDCWD, f->path, 0, &st);
	if (f->fd < 0) {
		int err = f->fd;
		f->fd = -1;
		return say(msg, len, err, "%s: cannot open %s: %s", spec->text, f->path,
			   err == -EINVAL ? "not a regular file" : strerror(-err));
	}
	if (bt_buildid_from_fd(f->fd, &f->id) != 0)
		f->id.len = 0;
	if (spec->id.len && !bt_buildid_eq(&f->id, &spec->id)) {
		close(f->fd);
		f->fd = -1;
		return say(msg, len, -ESTALE, "%s: %s is build-id %s now, not %s", spec->text, f->path,
			   bt_probe_id_hex(&f->id, hex2, sizeof(hex2)), bt_buildid_hex(&spec->id, hex, sizeof(hex)));
	}
	return 0;
}
