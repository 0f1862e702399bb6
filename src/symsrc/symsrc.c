/* symsrc.c - finds, for one build-id, the binary (mapped fd, path, cache) and the separate debug
 * files (debug directory, debuglink, cache), checks each one's identity, and loads the first good
 * symbol table or DWARF, translating offsets with the binary's own program headers. */
#include "base/pathfmt.h"
#include "base/safeopen.h"
#include "symsrc/symsrc.h"
#include "symsrc/bidcache.h"
#include "elf/elffile.h"
#include "elf/goelf.h"
#include "elf/minidebuginfo.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEXLEN (2 * BT_BUILD_ID_MAXLEN + 1)


static void set_origin(char *origin, size_t len, const char *name)
{
	if (origin && len)
		snprintf(origin, len, "%s", name);
}

static const char *root_of(const struct bt_symsrc_opts *o)
{
	return o && o->root ? o->root : "";
}

int bt_symsrc_cache_dir(const struct bt_symsrc_opts *o, char *buf, size_t len)
{
	if (o && o->cache_dir && *o->cache_dir)
		return bt_path_fmt(buf, len, "%s", o->cache_dir);
	return bt_bidcache_default_dir(buf, len);
}

/* How a candidate's last component is treated: the debug directory's build-id links (a tree root
 * installs, often of symlinks) are followed; a name a binary chose for itself (.gnu_debuglink,
 * .gnu_debugaltlink) must be the file itself, not a link that could lead anywhere. Either way only a
 * regular file is ever opened. */
enum { FOLLOW = 0, NOFOLLOW = BT_OPEN_NOFOLLOW };

static int open_regular(const char *path, unsigned flags)
{
	return bt_open_regular(AT_FDCWD, path, flags, NULL);
}

/* 0 when fd holds an ELF file with build-id id. */
static int same_id(int fd, const struct bt_build_id *id)
{
	struct bt_build_id got;
	int err = bt_buildid_from_fd(fd, &got);
	if (err)
		return err;
	return bt_buildid_eq(&got, id) ? 0 : -ESTALE;
}

static int open_matching(const char *path, unsigned flags, const struct bt_build_id *id)
{
	int fd = open_regular(path, flags);
	if (fd < 0)
		return fd;
	int err = same_id(fd, id);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* The binary of a build-id, opened. */
struct binary {
	int fd;            /* -1 when not found */
	bool own_fd;
	struct bt_elf *e;
	const char *origin;  /* "file" or "cache" */
};

static void binary_close(struct binary *b)
{
	if (b->e)
		bt_elf_close(b->e);
	if (b->own_fd && b->fd >= 0)
		close(b->fd);
	b->e = NULL;
	b->fd = -1;
}

static int binary_open(const struct bt_symsrc_opts *o, const struct bt_symsrc_req *req,
		       struct binary *b)
{
	*b = (struct binary){ .fd = -1, .origin = "file" };
	if (req->mapped_fd >= 0 && same_id(req->mapped_fd, req->id) == 0) {
		b->fd = req->mapped_fd;
	} else {
		char full[PATH_MAX];
		if (req->path && bt_path_fmt(full, sizeof(full), "%s%s", root_of(o), req->path) == 0)
			b->fd = open_matching(full, FOLLOW, req->id);
		if (b->fd < 0) {
			char cache[PATH_MAX];
			b->fd = -1;
			if (bt_symsrc_cache_dir(o, cache, sizeof(cache)) == 0)
				b->fd = bt_bidcache_open(cache, req->id, BT_BIDCACHE_ELF, NULL, 0);
			if (b->fd < 0) {
				b->fd = -1;
				return -ENOENT;
			}
			b->origin = "cache";
		}
		b->own_fd = true;
	}
	int err = bt_elf_open_fd(b->fd, &b->e);
	if (err) {
		b->e = NULL;
		binary_close(b);
	}
	return err;
}

static bool has_section_type(struct bt_elf *e, Elf64_Word type)
{
	Elf *elf = bt_elf_handle(e);
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type && sh.sh_size)
			return true;
	}
	return false;
}

/* A layout that can translate an offset of executable code: some PT_LOAD with PF_X has bytes. */
static bool layout_usable(const struct bt_elf_layout *l)
{
	for (size_t i = 0; i < l->nload && i < BT_ELF_MAX_LOADS; i++)
		if ((l->load[i].flags & PF_X) && l->load[i].filesz)
			return true;
	return false;
}

/* Gives a table loaded from a debug file the binary's program headers, which describe the bytes
 * that were actually mapped. symtab.h has no setter; the table is still exclusively ours here and
 * its storage is not const, so writing through the accessor's pointer is sound. */
static void adopt_layout(struct bt_symtab *st, const struct binary *b)
{
	struct bt_elf_layout l;
	if (!b || !b->e || bt_elf_layout(b->e, &l) != 0 || !layout_usable(&l))
		return;
	*(struct bt_elf_layout *)bt_symtab_layout(st) = l;
}

/* The separate debug files of a build-id, in order; each call yields the next one that exists and
 * matches, or -ENOENT when they are exhausted. */
struct debug_iter {
	const struct bt_symsrc_opts *o;
	const struct bt_build_id *id;
	const struct binary *bin;   /* for .gnu_debuglink; may be NULL or without e */
	const char *path;           /* the binary's path, for the debuglink directories */
	unsigned state;
	char found[PATH_MAX];       /* the path of the last file yielded */
};

/* Whether fd could be a debug file, decided from its size, its holes and its headers, before a
 * byte of its contents is read for the CRC: a sparse 20 GiB file named by a hostile debuglink must
 * cost nothing. 0, -EFBIG or -EBADMSG. */
static int plausible_debug(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -errno;
	if ((uint64_t)st.st_size > BT_DEBUGLINK_MAX_BYTES)
		return -EFBIG;
	off_t hole = lseek(fd, 0, SEEK_HOLE);
	lseek(fd, 0, SEEK_SET);
	if (hole >= 0 && hole < st.st_size)
		return -EBADMSG;
	struct bt_elf *e = NULL;
	uint64_t end = 0;
	if (bt_elf_open_fd(fd, &e) != 0)
		return -EBADMSG;
	int err = bt_elf_extent(e, &end) ? -EBADMSG : 0;
	bt_elf_close(e);
	if (!err && (uint64_t)st.st_size > end && (uint64_t)st.st_size - end > BT_DEBUGLINK_SLACK)
		err = -EBADMSG;
	return err;
}

/* A debuglink candidate matches when it is plausible, its build-id, if it has one, is ours, and
 * its CRC is the one recorded (checked last: it reads the whole file). */
static int open_debuglink(const char *path, uint32_t crc, const struct bt_build_id *id)
{
	int fd = open_regular(path, NOFOLLOW);
	if (fd < 0)
		return fd;
	int err = plausible_debug(fd);
	if (!err) {
		struct bt_build_id fid;
		int r = bt_buildid_from_fd(fd, &fid);
		if (r == 0 && !bt_buildid_eq(&fid, id))
			err = -ESTALE;
		else if (r && r != -ENODATA)
			err = r;
	}
	uint32_t got;
	if (!err && (err = bt_elf_file_crc32(fd, BT_DEBUGLINK_MAX_BYTES, &got)) == 0 && got != crc)
		err = -EBADMSG;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static int debug_next(struct debug_iter *it, const char **origin)
{
	char hex[HEXLEN], cache[PATH_MAX], link[NAME_MAX + 1], dir[PATH_MAX];
	const char *root = root_of(it->o);
	bt_buildid_hex(it->id, hex, sizeof(hex));
	uint32_t crc = 0;
	bool have_link = false;
	dir[0] = '\0';
	while (it->state < 5) {
		unsigned s = it->state++;
		int fd = -ENOENT;
		if (s == 0) {
			*origin = "debug-dir";
			if (bt_path_fmt(it->found, sizeof(it->found), "%s/usr/lib/debug/.build-id/%.2s/%s.debug",
				root, hex, hex + 2) == 0)
				fd = open_matching(it->found, FOLLOW, it->id);
		} else if (s <= 3) {
			*origin = "debuglink";
			if (!have_link) {
				have_link = it->bin && it->bin->e && it->path && it->path[0] == '/' &&
					    bt_elf_debuglink(it->bin->e, link, sizeof(link), &crc) == 0 &&
					    link[0] && !strchr(link, '/') && strcmp(link, ".") &&
					    strcmp(link, "..");
				const char *slash = it->path ? strrchr(it->path, '/') : NULL;
				if (have_link && slash && (size_t)(slash - it->path) < sizeof(dir)) {
					memcpy(dir, it->path, (size_t)(slash - it->path));
					dir[slash - it->path] = '\0';
				} else {
					have_link = false;
				}
			}
			if (!have_link)
				continue;
			/* Next to the file, in .debug/ beside it, and mirrored under /usr/lib/debug. */
			int r = s == 1 ? bt_path_fmt(it->found, sizeof(it->found), "%s%s/%s", root, dir, link)
			      : s == 2 ? bt_path_fmt(it->found, sizeof(it->found), "%s%s/.debug/%s", root, dir, link)
				       : bt_path_fmt(it->found, sizeof(it->found), "%s/usr/lib/debug%s/%s", root,
					     dir, link);
			if (r == 0)
				fd = open_debuglink(it->found, crc, it->id);
		} else {
			*origin = "cache";
			if (bt_symsrc_cache_dir(it->o, cache, sizeof(cache)) == 0)
				fd = bt_bidcache_open(cache, it->id, BT_BIDCACHE_DEBUG, it->found,
						      sizeof(it->found));
		}
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

/* The symbols of the debug file open as fd; its PLT entries from code, the mapped binary, when
 * there is one (a debug file's PLT holds no bytes). */
static int load_fd(int fd, struct bt_elf *code, struct bt_symtab **out)
{
	struct bt_elf *e = NULL;
	int err = bt_elf_open_fd(fd, &e);
	if (err)
		return err;
	err = bt_symtab_load_with_plt(e, code ? code : e, out);
	bt_elf_close(e);
	return err;
}

int bt_symsrc_load(const struct bt_symsrc_opts *o, const struct bt_symsrc_req *req,
		   struct bt_symtab **out, char *origin, size_t originlen)
{
	if (!req || !req->id || !req->id->len || !out)
		return -EINVAL;
	*out = NULL;
	struct binary b;
	int berr = binary_open(o, req, &b);
	int err = berr ? -ENOENT : -ENODATA;
	if (!berr) {
		if (has_section_type(b.e, SHT_SYMTAB) && bt_symtab_load(b.e, out) == 0) {
			set_origin(origin, originlen, b.origin);
			binary_close(&b);
			return 0;
		}
		if (bt_minidebuginfo_load(b.e, out) == 0) {
			adopt_layout(*out, &b);
			set_origin(origin, originlen, "minidebuginfo");
			binary_close(&b);
			return 0;
		}
	}
	struct debug_iter it = { .o = o, .id = req->id, .bin = berr ? NULL : &b, .path = req->path };
	const char *src;
	int fd;
	while ((fd = debug_next(&it, &src)) >= 0) {
		int r = load_fd(fd, berr ? NULL : b.e, out);
		close(fd);
		if (r == 0) {
			adopt_layout(*out, berr ? NULL : &b);
			set_origin(origin, originlen, src);
			binary_close(&b);
			return 0;
		}
		err = -ENODATA;
	}
	if (!berr) {
		/* A Go program names its functions in .gopclntab, stripped or not; else only the
		 * exported functions: better than nothing, and the caller may fetch more. */
		err = bt_goelf_symtab(b.e, out);
		if (!err) {
			set_origin(origin, originlen, "gopclntab");
		} else {
			err = bt_symtab_load(b.e, out);
			if (!err)
				set_origin(origin, originlen, "dynsym");
		}
		binary_close(&b);
	}
	return err;
}

int bt_symsrc_load_elf(struct bt_elf *e, struct bt_symtab **out, char *origin, size_t originlen)
{
	if (!e || !out)
		return -EINVAL;
	*out = NULL;
	if (!has_section_type(e, SHT_SYMTAB) && bt_goelf_symtab(e, out) == 0) {
		set_origin(origin, originlen, "gopclntab");
		return 0;
	}
	set_origin(origin, originlen, "file");
	return bt_symtab_load(e, out);
}

int bt_symsrc_adopt_debug_fd(const struct bt_symsrc_opts *o, const struct bt_build_id *id,
			     int debug_fd, int mapped_fd, const char *path, struct bt_symtab **out)
{
	if (!id || !id->len || debug_fd < 0 || !out)
		return -EINVAL;
	*out = NULL;
	int err = same_id(debug_fd, id);
	if (err)
		return err == -ESTALE ? -EINVAL : err;
	char cache[PATH_MAX];
	if (bt_symsrc_cache_dir(o, cache, sizeof(cache)) == 0)
		bt_bidcache_add_debug_fd(cache, id, path, debug_fd);
	struct binary b;
	struct bt_symsrc_req req = { .id = id, .mapped_fd = mapped_fd, .path = path };
	bool have_bin = binary_open(o, &req, &b) == 0;
	err = load_fd(debug_fd, have_bin ? b.e : NULL, out);
	if (!err && have_bin)
		adopt_layout(*out, &b);
	if (have_bin)
		binary_close(&b);
	return err;
}

int bt_symsrc_open_debug(const struct bt_symsrc_opts *o, const struct bt_symsrc_req *req,
			 char *origin, size_t originlen)
{
	if (!req || !req->id || !req->id->len)
		return -EINVAL;
	struct binary b;
	int berr = binary_open(o, req, &b);
	struct debug_iter it = { .o = o, .id = req->id, .bin = berr ? NULL : &b, .path = req->path };
	const char *src = NULL;
	int fd = debug_next(&it, &src);
	if (fd >= 0)
		set_origin(origin, originlen, src);
	if (!berr)
		binary_close(&b);
	return fd;
}

/* Resolves a dwz .gnu_debugaltlink ("name\0" then the alt file's build-id) under the root. */
static void attach_alt(const struct bt_symsrc_opts *o, struct bt_dwarf *d, int fd)
{
	struct bt_elf *e = NULL;
	if (bt_elf_open_fd(fd, &e) != 0)
		return;
	const void *data;
	size_t len;
	if (bt_elf_section(e, ".gnu_debugaltlink", &data, &len) == 0) {
		const char *name = data;
		const char *nul = memchr(name, '\0', len);
		size_t idlen = nul ? len - (size_t)(nul + 1 - name) : 0;
		if (nul && idlen >= 2 && idlen <= BT_BUILD_ID_MAXLEN) {
			struct bt_build_id alt = { .len = (uint8_t)idlen };
			memcpy(alt.data, nul + 1, idlen);
			char hex[HEXLEN], path[PATH_MAX];
			bt_buildid_hex(&alt, hex, sizeof(hex));
			int afd = -1;
			if (bt_path_fmt(path, sizeof(path), "%s/usr/lib/debug/.build-id/%.2s/%s.debug",
				root_of(o), hex, hex + 2) == 0)
				afd = open_matching(path, FOLLOW, &alt);
			if (afd < 0 && name[0] == '/' &&
			    bt_path_fmt(path, sizeof(path), "%s%s", root_of(o), name) == 0)
				afd = open_matching(path, NOFOLLOW, &alt);
			if (afd >= 0) {
				bt_dwarf_set_alt_fd(d, afd);
				close(afd);
			}
		}
	}
	bt_elf_close(e);
}

static int dwarf_from_fd(const struct bt_symsrc_opts *o, int fd, struct bt_dwarf **out)
{
	int err = bt_dwarf_open_fd(fd, out);
	if (!err)
		attach_alt(o, *out, fd);
	return err;
}

int bt_symsrc_open_dwarf(const struct bt_symsrc_opts *o, const struct bt_symsrc_req *req,
			 struct bt_dwarf **out, char *origin, size_t originlen)
{
	if (!req || !req->id || !req->id->len || !out)
		return -EINVAL;
	*out = NULL;
	struct binary b;
	int berr = binary_open(o, req, &b);
	int err = berr ? -ENODATA : dwarf_from_fd(o, b.fd, out);
	if (!err) {
		set_origin(origin, originlen, b.origin);
		binary_close(&b);
		return 0;
	}
	if (err != -EBADMSG)
		err = -ENODATA;  /* a debug file may still have it; a refused one is worth telling */
	struct debug_iter it = { .o = o, .id = req->id, .bin = berr ? NULL : &b, .path = req->path };
	const char *src;
	int fd;
	while ((fd = debug_next(&it, &src)) >= 0) {
		int r = dwarf_from_fd(o, fd, out);
		close(fd);
		if (r == 0) {
			set_origin(origin, originlen, src);
			err = 0;
			break;
		}
		if (r != -ENODATA) {
			err = r;
			break;
		}
	}
	if (!berr)
		binary_close(&b);
	return err;
}

int bt_symsrc_open_golines(const struct bt_symsrc_opts *o, const struct bt_symsrc_req *req,
			   struct bt_golines **out)
{
	if (!req || !req->id || !req->id->len || !out)
		return -EINVAL;
	*out = NULL;
	struct binary b;
	int err = binary_open(o, req, &b);
	if (err)
		return -ENODATA;
	err = bt_goelf_is_go(b.e) ? bt_golines_open(b.fd, out) : -ENODATA;
	binary_close(&b);
	return err;
}

static int copy_path(const char *path, char *out, size_t outlen)
{
	return bt_path_fmt(out, outlen, "%s", path);
}

int bt_symsrc_find_path(const struct bt_symsrc_opts *o, const struct bt_build_id *id,
			const char *hint_path, char *out, size_t outlen)
{
	if (!id || !id->len || !out)
		return -EINVAL;
	int fd;
	if (hint_path && (fd = open_matching(hint_path, FOLLOW, id)) >= 0) {
		close(fd);
		return copy_path(hint_path, out, outlen);
	}
	char hex[HEXLEN], path[PATH_MAX], cache[PATH_MAX];
	bt_buildid_hex(id, hex, sizeof(hex));
	int err = bt_path_fmt(path, sizeof(path), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root_of(o), hex,
		      hex + 2);
	if (!err && (fd = open_matching(path, FOLLOW, id)) >= 0) {
		close(fd);
		return copy_path(path, out, outlen);
	}
	if (bt_symsrc_cache_dir(o, cache, sizeof(cache)) != 0)
		return -ENOENT;
	static const enum bt_bidcache_kind kinds[] = { BT_BIDCACHE_DEBUG, BT_BIDCACHE_ELF };
	for (size_t i = 0; i < 2; i++) {
		fd = bt_bidcache_open(cache, id, kinds[i], path, sizeof(path));
		if (fd >= 0) {
			close(fd);
			return copy_path(path, out, outlen);
		}
	}
	return -ENOENT;
}
