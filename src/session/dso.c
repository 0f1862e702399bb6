/* dso.c - file versions and build-ids. Symbols are read only from bytes proven to carry the captured
 * build-id: the mapping itself via /proc/PID/map_files, or a path whose build-id matches. */
#include "session/dso.h"
#include "base/safeopen.h"
#include "elf/dwarfinfo.h"
#include "elf/goelf.h"
#include "elf/unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symsrc/bidcache.h"
#include "capture/procmaps.h"

void bt_dso_registry_init(struct bt_dso_registry *r, const char *proc_root,
			  const struct bt_symsrc_opts *symsrc, bool cache_store)
{
	memset(r, 0, sizeof(*r));
	if (symsrc)
		r->symsrc = *symsrc;
	r->cache_store = cache_store;
	bt_htab_init(&r->file_index);
	bt_htab_init(&r->bid_index);
	bt_strtab_init(&r->paths);
	r->proc_root = proc_root ? proc_root : "";
}

void bt_dso_registry_free(struct bt_dso_registry *r)
{
	for (size_t i = 0; i < r->ndsos; i++) {
		if (r->dsos[i].fd >= 0)
			close(r->dsos[i].fd);
		bt_symtab_free(r->dsos[i].symtab);
		bt_cfi_close(r->dsos[i].cfi);
		bt_dwarf_close(r->dsos[i].dwarf);
		bt_golines_close(r->dsos[i].golines);
	}
	free(r->files);
	free(r->dsos);
	bt_htab_free(&r->file_index);
	bt_htab_free(&r->bid_index);
	bt_strtab_free(&r->paths);
	memset(r, 0, sizeof(*r));
}

struct file_key {
	dev_t dev;
	uint64_t ino, mtime_ns;
};

static bool file_eq(void *ctx, uint64_t val, const void *k)
{
	const struct bt_dso_registry *r = ctx;
	const struct file_key *key = k;
	const struct bt_file *f = &r->files[val];
	return f->dev == key->dev && f->ino == key->ino && f->mtime_ns == key->mtime_ns;
}

static uint32_t file_hash(const struct file_key *k)
{
	return bt_hash_u64(k->ino ^ ((uint64_t)k->dev << 40) ^ (k->mtime_ns * 0x9e3779b97f4a7c15ULL));
}

int64_t bt_dso_file(struct bt_dso_registry *r, dev_t dev, uint64_t ino, uint64_t mtime_ns,
		    const char *path)
{
	struct file_key key = { dev, ino, mtime_ns };
	uint32_t h = file_hash(&key);
	uint64_t *v = bt_htab_find(&r->file_index, h, file_eq, r, &key);
	if (v)
		return (int64_t)*v;
	if (r->nfiles == r->files_cap) {
		size_t ncap = r->files_cap ? r->files_cap * 2 : 64;
		struct bt_file *nf = realloc(r->files, ncap * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		r->files = nf;
		r->files_cap = ncap;
	}
	int64_t pid = bt_strtab_add(&r->paths, path ? path : "");
	if (pid < 0)
		return pid;
	r->files[r->nfiles] = (struct bt_file){
		.dev = dev, .ino = ino, .mtime_ns = mtime_ns, .path_id = (uint32_t)pid, .dso_id = BT_NO_ID,
	};
	if (bt_htab_insert(&r->file_index, h, r->nfiles))
		return -ENOMEM;
	return (int64_t)r->nfiles++;
}

static bool bid_eq(void *ctx, uint64_t val, const void *k)
{
	const struct bt_dso_registry *r = ctx;
	return bt_buildid_eq(&r->dsos[val].build_id, k);
}

static int64_t new_dso(struct bt_dso_registry *r, const struct bt_build_id *id, uint32_t path_id)
{
	if (r->ndsos == r->dsos_cap) {
		size_t ncap = r->dsos_cap ? r->dsos_cap * 2 : 64;
		struct bt_dso *nd = realloc(r->dsos, ncap * sizeof(*nd));
		if (!nd)
			return -ENOMEM;
		r->dsos = nd;
		r->dsos_cap = ncap;
	}
	struct bt_dso *d = &r->dsos[r->ndsos];
	memset(d, 0, sizeof(*d));
	d->fd = -1;
	d->path_id = path_id;
	if (id)
		d->build_id = *id;
	return (int64_t)r->ndsos++;
}

/* Opens the bytes of a mapping: first the mapping itself, then the path if it still is the same
 * version (checked by build-id when there is one, by device and inode otherwise). */
static int open_exact(struct bt_dso_registry *r, const struct bt_file *f, const struct bt_build_id *want,
		      const struct bt_dso_mapping *where)
{
	int pid = where->pid;
	uint64_t start = where->start, end = where->end;
	if (pid > 0 && end > start) {
		int fd = bt_procmaps_open_mapped(r->proc_root, pid, start, end);
		if (fd >= 0) {
			struct bt_build_id got;
			if (!want || (bt_buildid_from_fd(fd, &got) == 0 && bt_buildid_eq(&got, want)))
				return fd;
			r->mismatches++;
			close(fd);
		}
	}
	const char *path = bt_strtab_get(&r->paths, f->path_id);
	if (!path || path[0] != '/')
		return -ENOENT;
	/* The path as the process sees it, inside its root (a container's files are not ours). Once
	 * the process is gone its root is unknown: then our own file of that path, which the build-id
	 * (or device and inode) check below accepts only if it is the very same file. */
	int fd = pid > 0 ? bt_procmaps_open_in_root(r->proc_root, pid, path) : -ESRCH;
	if (fd == -ESRCH)
		fd = bt_open_regular(AT_FDCWD, path, 0, NULL);
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st)) {
		int err = -errno;
		close(fd);
		return err;
	}
	if (want) {
		struct bt_build_id got;
		if (bt_buildid_from_fd(fd, &got) == 0 && bt_buildid_eq(&got, want))
			return fd;
	} else if (st.st_dev == f->dev && st.st_ino == f->ino) {
		return fd;
	}
	r->mismatches++;
	close(fd);
	return -ESTALE;
}

int64_t bt_dso_set_build_id(struct bt_dso_registry *r, uint32_t file_id, const struct bt_build_id *id,
			    enum bt_bid_origin origin, const struct bt_dso_mapping *where)
{
	struct bt_file *f = bt_dso_file_get(r, file_id);
	if (!f || !id || !id->len)
		return -EINVAL;
	uint32_t h = bt_hash_bytes(id->data, id->len, id->len);
	uint64_t *v = bt_htab_find(&r->bid_index, h, bid_eq, r, id);
	int64_t dso_id;
	if (v) {
		dso_id = (int64_t)*v;
	} else {
		dso_id = new_dso(r, id, f->path_id);
		if (dso_id < 0)
			return dso_id;
		if (bt_htab_insert(&r->bid_index, h, (uint64_t)dso_id))
			return -ENOMEM;
		r->dsos[dso_id].origin = origin;
	}
	f->dso_id = (uint32_t)dso_id;
	struct bt_dso *d = &r->dsos[dso_id];
	if (d->fd < 0 && d->sym_state == BT_SYMS_UNTRIED) {
		int fd = open_exact(r, f, id, where);
		if (fd >= 0)
			d->fd = fd;
	}
	return dso_id;
}

int64_t bt_dso_set_no_build_id(struct bt_dso_registry *r, uint32_t file_id,
			       const struct bt_dso_mapping *where)
{
	struct bt_file *f = bt_dso_file_get(r, file_id);
	if (!f)
		return -EINVAL;
	if (f->dso_id != BT_NO_ID)
		return f->dso_id;
	int64_t dso_id = new_dso(r, NULL, f->path_id);
	if (dso_id < 0)
		return dso_id;
	f->no_build_id = true;
	f->dso_id = (uint32_t)dso_id;
	int fd = open_exact(r, f, NULL, where);
	if (fd >= 0)
		r->dsos[dso_id].fd = fd;
	return dso_id;
}

int64_t bt_dso_vdso(struct bt_dso_registry *r, int fd, bool *kept)
{
	*kept = false;
	struct bt_build_id id;
	int err = bt_buildid_from_fd(fd, &id);
	if (err)
		return err;
	/* device 0 holds no file; the build-id's first 16 bytes stand for the inode and time */
	uint64_t key[2] = { 0, 0 };
	memcpy(key, id.data, id.len < sizeof(key) ? id.len : sizeof(key));
	int64_t fid = bt_dso_file(r, 0, key[0], key[1], "[vdso]");
	if (fid < 0)
		return fid;
	struct bt_file *f = &r->files[fid];
	if (f->dso_id != BT_NO_ID)
		return bt_buildid_eq(&r->dsos[f->dso_id].build_id, &id) ? fid : -EEXIST;
	struct bt_dso_mapping nowhere = { .pid = 0 };
	int64_t dso_id = bt_dso_set_build_id(r, (uint32_t)fid, &id, BT_ORIGIN_USERSPACE, &nowhere);
	if (dso_id < 0)
		return dso_id;
	struct bt_dso *d = &r->dsos[dso_id];
	if (d->fd < 0 && d->sym_state == BT_SYMS_UNTRIED) {
		d->fd = fd;
		d->image = true;
		*kept = true;
	}
	return fid;
}

/* The symbols of a file without a build-id, from its own bytes; whether it is a Go program. */
static int load_own(int fd, struct bt_symtab **out, char *origin, size_t originlen, bool *go)
{
	struct bt_elf *e;
	int err = bt_elf_open_fd(fd, &e);
	if (!err) {
		err = bt_symsrc_load_elf(e, out, origin, originlen);
		*go = bt_goelf_is_go(e);
		bt_elf_close(e);
	}
	return err;
}

const struct bt_symtab *bt_dso_symtab(struct bt_dso_registry *r, uint32_t dso_id)
{
	struct bt_dso *d = bt_dso_get(r, dso_id);
	if (!d)
		return NULL;
	d->last_use = r->epoch;
	if (d->sym_state != BT_SYMS_UNTRIED)
		return d->symtab;
	const char *path = bt_strtab_get(&r->paths, d->path_id);
	int err;
	if (d->build_id.len) {
		struct bt_symsrc_req req = { .id = &d->build_id, .mapped_fd = d->fd,
					     .path = path && *path == '/' ? path : NULL };
		err = bt_symsrc_load(&r->symsrc, &req, &d->symtab, d->sym_origin, sizeof(d->sym_origin));
		/* The exact bytes, kept for later sessions: a build-id with samples is worth caching. Not
		 * the vDSO: perf keeps it in a layout of its own ([vdso]/BUILDID/vdso), which an entry
		 * of ours under the same build-id would hide from it. */
		if (r->cache_store && d->fd >= 0 && !d->image) {
			char dir[4096];
			int serr = bt_symsrc_cache_dir(&r->symsrc, dir, sizeof(dir));
			if (!serr)
				serr = bt_bidcache_store(dir, &r->cache_budget, BT_BIDCACHE_ELF, &d->build_id, path,
							 d->fd);
			if (!serr) {
				r->cache_stored++;
			} else if (serr != -EFBIG && serr != -ENOSPC) {  /* the budget counts those */
				r->cache_errors++;
				r->cache_last_err = serr;
			}
		}
	} else {
		snprintf(d->sym_origin, sizeof(d->sym_origin), "file");
		err = d->fd >= 0 ? load_own(d->fd, &d->symtab, d->sym_origin, sizeof(d->sym_origin), &d->go)
				 : -ENOENT;
	}
	d->sym_state = err ? BT_SYMS_FAILED : BT_SYMS_LOADED;
	d->sym_err = err;
	if (!err)
		r->symtabs_loaded++;
	/* Only exported functions, or nothing: a debug file from debuginfod would give more. The
	 * descriptor stays open so that debug file's addresses can be laid out like the binary's. */
	if (r->debuginfod && d->build_id.len && (err || !strcmp(d->sym_origin, "dynsym")) &&
	    bt_debuginfod_request(r->debuginfod, &d->build_id) == 0) {
		d->debuginfod_pending = true;
		return d->symtab;
	}
	/* The table holds what it needs; the descriptor is no longer useful, unless it is the only
	 * copy there is, or the one file a Go program's lines can come from. */
	if (d->fd >= 0 && !d->image && !d->go) {
		close(d->fd);
		d->fd = -1;
	}
	return d->symtab;
}

void bt_dso_set_debuginfod(struct bt_dso_registry *r, struct bt_debuginfod *c)
{
	r->debuginfod = c;
}

struct adopt_ctx {
	struct bt_dso_registry *r;
	void (*fn)(void *ctx, uint32_t dso_id);
	void *ctx;
	int adopted;
};

static void on_debuginfod(void *ctx, const struct bt_build_id *id, int fd, const char *path, int err)
{
	struct adopt_ctx *a = ctx;
	struct bt_dso_registry *r = a->r;
	uint64_t *v = bt_htab_find(&r->bid_index, bt_hash_bytes(id->data, id->len, id->len), bid_eq, r, id);
	if (!v)
		return;
	struct bt_dso *d = &r->dsos[*v];
	d->debuginfod_pending = false;
	struct bt_symtab *st = NULL;
	const char *bin_path = bt_strtab_get(&r->paths, d->path_id);
	if (!err && fd >= 0 &&
	    bt_symsrc_adopt_debug_fd(&r->symsrc, id, fd, d->fd, bin_path && *bin_path == '/' ? bin_path : NULL,
				     &st) == 0) {
		bt_symtab_free(d->symtab);
		d->symtab = st;
		d->sym_state = BT_SYMS_LOADED;
		d->sym_err = 0;
		snprintf(d->sym_origin, sizeof(d->sym_origin), "debuginfod");
		r->debuginfod_adopted++;
		a->adopted++;
		if (a->fn)
			a->fn(a->ctx, (uint32_t)*v);
	}
	if (d->fd >= 0 && !d->image) {
		close(d->fd);
		d->fd = -1;
	}
}

int bt_dso_poll_debuginfod(struct bt_dso_registry *r, int timeout_ms,
			   void (*fn)(void *ctx, uint32_t dso_id), void *ctx)
{
	if (!r->debuginfod)
		return 0;
	struct adopt_ctx a = { r, fn, ctx, 0 };
	if (timeout_ms < 0 && !bt_debuginfod_pending(r->debuginfod))
		return 0;
	int err = bt_debuginfod_poll(r->debuginfod, on_debuginfod, &a, timeout_ms);
	return err < 0 ? err : a.adopted;
}

const char *bt_dso_file_basename(struct bt_dso_registry *r, uint32_t file_id)
{
	struct bt_file *f = bt_dso_file_get(r, file_id);
	if (!f)
		return "unknown";
	const char *p = bt_strtab_get(&r->paths, f->path_id);
	if (!p || !*p)
		return "unknown";
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

size_t bt_dso_evict(struct bt_dso_registry *r, uint64_t before)
{
	size_t n = 0;
	for (size_t i = 0; i < r->ndsos; i++) {
		struct bt_dso *d = &r->dsos[i];
		if (d->sym_state != BT_SYMS_LOADED || d->last_use >= before || d->debuginfod_pending)
			continue;
		bt_symtab_free(d->symtab);
		d->symtab = NULL;
		d->sym_state = BT_SYMS_UNTRIED;
		bt_cfi_close(d->cfi);
		d->cfi = NULL;
		d->cfi_err = 0;
		bt_dwarf_close(d->dwarf);
		d->dwarf = NULL;
		if (d->dwarf_err != -EBADMSG)  /* a file refused as corrupt stays refused, counted once */
			d->dwarf_err = 0;
		bt_golines_close(d->golines);
		d->golines = NULL;
		d->golines_err = 0;
		n++;
	}
	r->symtabs_evicted += n;
	return n;
}

struct bt_cfi *bt_dso_cfi(struct bt_dso_registry *r, uint32_t dso_id)
{
	struct bt_dso *d = bt_dso_get(r, dso_id);
	if (!d || d->cfi_err)
		return NULL;
	if (!d->cfi) {
		d->cfi_err = d->fd >= 0 ? bt_cfi_open(d->fd, &d->cfi) : -ENOENT;
		if (d->cfi_err)
			d->cfi = NULL;
	}
	return d->cfi;
}

struct bt_dwarf *bt_dso_dwarf(struct bt_dso_registry *r, uint32_t dso_id)
{
	struct bt_dso *d = bt_dso_get(r, dso_id);
	if (!d || d->dwarf_err)
		return NULL;
	if (!d->dwarf) {
		const char *path = bt_strtab_get(&r->paths, d->path_id);
		char origin[BT_SYMSRC_ORIGIN_LEN];
		struct bt_symsrc_req req = { .id = &d->build_id, .mapped_fd = d->fd,
					     .path = path && *path == '/' ? path : NULL };
		d->dwarf_err = d->build_id.len
				       ? bt_symsrc_open_dwarf(&r->symsrc, &req, &d->dwarf, origin, sizeof(origin))
				       : -ENODATA;
		if (d->dwarf_err)
			d->dwarf = NULL;
		if (d->dwarf_err == -EBADMSG)
			r->dwarf_refused++;
	}
	return d->dwarf;
}

struct bt_golines *bt_dso_golines(struct bt_dso_registry *r, uint32_t dso_id)
{
	struct bt_dso *d = bt_dso_get(r, dso_id);
	if (!d || d->golines_err)
		return NULL;
	if (!d->golines) {
		const char *path = bt_strtab_get(&r->paths, d->path_id);
		struct bt_symsrc_req req = { .id = &d->build_id, .mapped_fd = d->fd,
					     .path = path && *path == '/' ? path : NULL };
		d->golines_err = d->build_id.len ? bt_symsrc_open_golines(&r->symsrc, &req, &d->golines)
			       : d->go && d->fd >= 0 ? bt_golines_open(d->fd, &d->golines) : -ENODATA;
		if (d->golines_err)
			d->golines = NULL;
	}
	return d->golines;
}

/* Which of the Go runtime's outermost functions name is (BT_OUTERMOST_*), as .gopclntab or .symtab
 * (with its ABI suffix) names it; 0 for none. */
static int go_top_name(const char *name)
{
	static const struct { const char *name; int kind; } tops[] = {
		{ "runtime.goexit", BT_OUTERMOST_ALWAYS }, { "runtime.mstart", BT_OUTERMOST_ALWAYS },
		{ "runtime.rt0_go", BT_OUTERMOST_ALWAYS }, { "runtime.systemstack", BT_OUTERMOST_SWITCH },
		{ "runtime.mcall", BT_OUTERMOST_SWITCH }, { "runtime.morestack", BT_OUTERMOST_SWITCH },
		{ "runtime.nanotime1", BT_OUTERMOST_CFI_CALLER }, { "runtime.walltime", BT_OUTERMOST_CFI_CALLER },
		{ "runtime.walltime1", BT_OUTERMOST_CFI_CALLER }, { "time.now", BT_OUTERMOST_CFI_CALLER },
		{ "runtime.vgetrandom1", BT_OUTERMOST_CFI_CALLER }, { "runtime.asmcgocall", BT_OUTERMOST_CFI_CALLER },
		{ "runtime.sigreturn", BT_OUTERMOST_CFI }, { "runtime.sigreturn__sigaction", BT_OUTERMOST_CFI },
	};
	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
		size_t n = strlen(tops[i].name);
		if (!strncmp(name, tops[i].name, n) && (!name[n] || !strcmp(name + n, ".abi0")))
			return tops[i].kind;
	}
	return 0;
}

/* The dso's outermost functions, once it is known whether it is a Go program: from its file while
 * that is open, else from symbols loaded already. */
static void find_tops(struct bt_dso_registry *r, uint32_t dso_id, struct bt_dso *d)
{
	bool go = d->go;
	struct bt_elf *e = NULL;
	if (!go && d->fd >= 0 && bt_elf_open_fd(d->fd, &e) == 0) {
		go = bt_goelf_is_go(e);
		bt_elf_close(e);
	} else if (!go && d->sym_state == BT_SYMS_UNTRIED) {
		return;  /* nothing to tell by yet */
	}
	d->tops_done = true;
	const struct bt_symtab *st = go || d->sym_state == BT_SYMS_LOADED ? bt_dso_symtab(r, dso_id) : NULL;
	size_t n = bt_symtab_count(st);
	for (size_t i = 0; i < n && d->ntops < sizeof(d->tops) / sizeof(d->tops[0]); i++) {
		const struct bt_sym *sym = bt_symtab_at(st, i);
		uint64_t lo, hi;
		int kind = sym->size ? go_top_name(sym->name) : 0;
		if (!kind || bt_elf_vaddr_to_offset(bt_symtab_layout(st), sym->addr, &lo) != 0 ||
		    bt_elf_vaddr_to_offset(bt_symtab_layout(st), sym->addr + sym->size - 1, &hi) != 0)
			continue;
		d->tops[d->ntops].lo = lo;
		d->tops[d->ntops].hi = hi + 1;
		d->tops[d->ntops++].kind = (uint8_t)kind;
	}
}

bool bt_dso_outermost(struct bt_dso_registry *r, uint32_t dso_id, uint64_t off, bool caller, bool cfi)
{
	struct bt_dso *d = bt_dso_get(r, dso_id);
	if (!d)
		return false;
	if (!d->tops_done)
		find_tops(r, dso_id, d);
	for (size_t i = 0; i < d->ntops; i++) {
		unsigned k = d->tops[i].kind;
		if (off < d->tops[i].lo || off >= d->tops[i].hi)
			continue;
		if (k == BT_OUTERMOST_ALWAYS || (k == BT_OUTERMOST_SWITCH && (caller || cfi)) ||
		    (k == BT_OUTERMOST_CFI_CALLER && caller && cfi) || (k == BT_OUTERMOST_CFI && cfi))
			return true;
	}
	return false;
}

size_t bt_dso_registry_bytes(const struct bt_dso_registry *r)
{
	const struct bt_strtab *p = &r->paths;
	return r->files_cap * sizeof(*r->files) + r->dsos_cap * sizeof(*r->dsos) +
	       (r->file_index.cap + r->bid_index.cap + p->index.cap) * sizeof(struct bt_htab_slot) +
	       p->cap + p->offs_cap * sizeof(*p->offs);
}

size_t bt_dso_tables_bytes(const struct bt_dso_registry *r)
{
	size_t b = 0;
	for (size_t i = 0; i < r->ndsos; i++)
		b += bt_symtab_bytes(r->dsos[i].symtab) + bt_cfi_bytes(r->dsos[i].cfi) +
		     bt_dwarf_bytes(r->dsos[i].dwarf) + bt_golines_bytes(r->dsos[i].golines);
	return b;
}
