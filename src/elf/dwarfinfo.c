/* dwarfinfo.c - address -> (function, file, line) frames with libdw: a sorted index of compile-unit
 * ranges built on first use; per unit, on its first lookup, a sorted index of its functions' ranges;
 * then a walk down the one function's DIE tree through the inlined subroutines containing the
 * address; file:line from the line table and the call sites. */
#include "elf/dwarfinfo.h"
#include "elf/elffile.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Nesting deeper than this is not followed: it bounds recursion on hostile input, and real code
 * never inlines that deep. */
#define MAX_DEPTH 128

/* Sorted by lo; maxhi is the largest hi of this entry and every one before it, so that a search
 * for the entries covering an address stops as soon as none further back can. */
struct range {
	uint64_t lo, hi, maxhi;
	Dwarf_Off die;   /* the unit's or the function's DIE */
	size_t unit;     /* in a unit range: its index in bt_dwarf.units */
};

struct range_vec {
	struct range *v;
	size_t n, cap;
};

/* A compile unit's functions, indexed on the unit's first lookup: walking a large unit's DIEs for
 * every address costs far more than one walk and a binary search. */
struct unit {
	struct range_vec fns;
	bool indexed;
	int err;
};

/* A file name made absolute with its unit's compilation directory, kept for the handle's life. */
struct joined {
	const char *file, *dir;   /* libdw's strings: stable keys */
	char *path;
};

struct bt_dwarf {
	int fd;
	Elf *e;
	Dwarf *dw;
	int alt_fd;
	Elf *alt_e;
	Dwarf *alt_dw;
	bool indexed;
	struct range_vec ranges;  /* code ranges of the compile units */
	struct unit *units;
	size_t nunits;
	struct joined *paths;     /* open addressing, npaths_cap a power of two */
	size_t npaths, npaths_cap;
};

/* The last byte of a section's contents, decompressed as libdw would (it does so in place in the
 * same Elf, so libdw later finds it done). -ENODATA when the section is empty or has no bytes. */
static int last_byte(Elf_Scn *scn, const char *name, unsigned char *out)
{
	GElf_Shdr sh;
	if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
		return -ENODATA;
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return -EBADMSG;
	if (!strncmp(name, ".zdebug", 7) && elf_compress_gnu(scn, 0, 0) < 0)
		return -EBADMSG;
	Elf_Data *d = NULL, *last = NULL;
	while ((d = elf_getdata(scn, d)) != NULL)
		if (d->d_size)
			last = d;
	if (!last)
		return -ENODATA;
	if (!last->d_buf)
		return -EBADMSG;
	*out = ((const unsigned char *)last->d_buf)[last->d_size - 1];
	return 0;
}

int bt_dwarf_check_strings(Elf *e, const char **bad)
{
	static const char *const names[] = { ".debug_str", ".debug_line_str", ".zdebug_str",
					     ".zdebug_line_str" };
	size_t shstrndx;
	if (!e || elf_getshdrstrndx(e, &shstrndx) != 0)
		return -ENOEXEC;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
		for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++) {
			unsigned char c;
			if (strcmp(name, names[i]) != 0)
				continue;
			int err = last_byte(scn, name, &c);
			if (err == -ENODATA || (!err && c == '\0'))
				break;
			if (bad)
				*bad = names[i];
			return -EBADMSG;
		}
	}
	return 0;
}

/* libelf reads the sections it is asked for with pread into its own memory, where libdw can also
 * decompress SHF_COMPRESSED ones; never a mapping, which a file truncated by another process
 * would turn into SIGBUS. A string section without its final NUL is refused before libdw sees it:
 * libdw (0.188) reads such strings past the section's end. */
static int open_dwarf(int fd, int *dupfd, Elf **e, Dwarf **dw)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (nfd < 0)
		return -errno;
	*e = elf_begin(nfd, ELF_C_READ, NULL);
	if (!*e || elf_kind(*e) != ELF_K_ELF) {
		if (*e)
			elf_end(*e);
		close(nfd);
		return -ENOEXEC;
	}
	int err = bt_dwarf_check_strings(*e, NULL);
	if (err) {
		elf_end(*e);
		close(nfd);
		return err;
	}
	*dw = dwarf_begin_elf(*e, DWARF_C_READ, NULL);
	if (!*dw) {
		elf_end(*e);
		close(nfd);
		return -ENODATA;
	}
	*dupfd = nfd;
	return 0;
}

int bt_dwarf_open_fd(int fd, struct bt_dwarf **out)
{
	if (fd < 0 || !out)
		return -EINVAL;
	struct bt_dwarf *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->alt_fd = -1;
	int err = open_dwarf(fd, &d->fd, &d->e, &d->dw);
	if (err) {
		free(d);
		return err;
	}
	*out = d;
	return 0;
}

int bt_dwarf_set_alt_fd(struct bt_dwarf *d, int fd)
{
	if (!d || fd < 0 || d->alt_dw)
		return -EINVAL;
	int err = open_dwarf(fd, &d->alt_fd, &d->alt_e, &d->alt_dw);
	if (err)
		return err;
	dwarf_setalt(d->dw, d->alt_dw);
	return 0;
}

void bt_dwarf_close(struct bt_dwarf *d)
{
	if (!d)
		return;
	dwarf_end(d->dw);
	if (d->alt_dw) {
		dwarf_end(d->alt_dw);
		elf_end(d->alt_e);
		close(d->alt_fd);
	}
	elf_end(d->e);
	close(d->fd);
	free(d->ranges.v);
	for (size_t i = 0; i < d->nunits; i++)
		free(d->units[i].fns.v);
	free(d->units);
	for (size_t i = 0; i < d->npaths_cap; i++)
		free(d->paths[i].path);
	free(d->paths);
	free(d);
}

static int push_range(struct range_vec *rv, uint64_t lo, uint64_t hi, Dwarf_Off die, size_t unit)
{
	if (rv->n == rv->cap) {
		size_t ncap = rv->cap ? 2 * rv->cap : 64;
		struct range *n = realloc(rv->v, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		rv->v = n;
		rv->cap = ncap;
	}
	rv->v[rv->n++] = (struct range){ lo, hi, hi, die, unit };
	return 0;
}

static int range_cmp(const void *pa, const void *pb)
{
	const struct range *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return a->die < b->die ? -1 : a->die > b->die;
}

static void sort_ranges(struct range_vec *rv)
{
	if (!rv->n)
		return;
	qsort(rv->v, rv->n, sizeof(*rv->v), range_cmp);
	for (size_t i = 1; i < rv->n; i++)
		if (rv->v[i - 1].maxhi > rv->v[i].maxhi)
			rv->v[i].maxhi = rv->v[i - 1].maxhi;
}

/* The entry covering addr that starts nearest before it, or with first_die, the covering entry
 * whose DIE comes first in the unit (the one a walk of the DIE tree in order would find); NULL when
 * none covers it. */
static const struct range *find_range(const struct range_vec *rv, uint64_t addr, bool first_die)
{
	size_t lo = 0, hi = rv->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rv->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* v[0..lo) start at or before addr. */
	const struct range *best = NULL;
	for (size_t i = lo; i-- > 0 && rv->v[i].maxhi > addr;) {
		if (rv->v[i].hi <= addr)
			continue;
		if (!first_die)
			return &rv->v[i];
		if (!best || rv->v[i].die < best->die)
			best = &rv->v[i];
	}
	return best;
}

/* Every code range of every compile unit, sorted: .debug_aranges is optional and often
 * incomplete, the units' own ranges are not. */
static int build_index(struct bt_dwarf *d)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie;
	int r;
	while ((r = dwarf_get_units(d->dw, cu, &cu, &version, &type, &cudie, NULL)) == 0) {
		if (type != DW_UT_compile && type != DW_UT_partial && type != DW_UT_skeleton)
			continue;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		bool any = false;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			int err = push_range(&d->ranges, lo, hi, dwarf_dieoffset(&cudie), d->nunits);
			if (err)
				return err;
			any = true;
		}
		if (any)
			d->nunits++;
	}
	d->units = calloc(d->nunits ? d->nunits : 1, sizeof(*d->units));
	if (!d->units)
		return -ENOMEM;
	sort_ranges(&d->ranges);
	d->indexed = true;
	return 0;
}

/* The DIEs that can hold code directly under a unit, as the unit-level walk of lookups finds them:
 * functions and blocks, and namespaces and modules searched for the functions they define. */
static int index_children(Dwarf_Die *parent, struct range_vec *fns, unsigned depth)
{
	Dwarf_Die child;
	if (depth >= MAX_DEPTH || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_entry_point: {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				int err = push_range(fns, lo, hi, dwarf_dieoffset(&child), 0);
				if (err)
					return err;
			}
			break;
		}
		case DW_TAG_namespace:
		case DW_TAG_module: {
			int err = index_children(&child, fns, depth + 1);
			if (err)
				return err;
			break;
		}
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

static struct unit *unit_of(struct bt_dwarf *d, const struct range *ur, Dwarf_Die *cudie)
{
	struct unit *u = &d->units[ur->unit];
	if (!u->indexed) {
		u->err = index_children(cudie, &u->fns, 0);
		sort_ranges(&u->fns);
		u->indexed = true;
	}
	return u;
}

struct chain {
	Dwarf_Die die[MAX_DEPTH];
	size_t n;
};

/* Descends from parent through the DIEs whose code contains addr, recording subprograms and
 * inlined subroutines outermost first. Namespaces and modules carry no ranges but may hold
 * function definitions, so they are searched too. True once a containing DIE was found. */
static bool walk(Dwarf_Die *parent, uint64_t addr, struct chain *c, unsigned depth)
{
	Dwarf_Die child;
	if (depth >= MAX_DEPTH || dwarf_child(parent, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);
		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_entry_point:
			if (dwarf_haspc(&child, addr) <= 0)
				break;
			if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
			     tag == DW_TAG_entry_point) && c->n < MAX_DEPTH)
				c->die[c->n++] = child;
			walk(&child, addr, c, depth + 1);
			return true;
		case DW_TAG_namespace:
		case DW_TAG_module:
			if (walk(&child, addr, c, depth + 1))
				return true;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

static size_t ptr_hash(const void *a, const void *b)
{
	uint64_t h = ((uintptr_t)a * 0x9e3779b97f4a7c15ull) ^ ((uintptr_t)b * 0xc2b2ae3d27d4eb4full);
	return (size_t)(h ^ (h >> 29));
}

static int paths_grow(struct bt_dwarf *d)
{
	size_t ncap = d->npaths_cap ? 2 * d->npaths_cap : 64;
	struct joined *n = calloc(ncap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < d->npaths_cap; i++) {
		struct joined *j = &d->paths[i];
		if (!j->path)
			continue;
		size_t k = ptr_hash(j->file, j->dir) & (ncap - 1);
		while (n[k].path)
			k = (k + 1) & (ncap - 1);
		n[k] = *j;
	}
	free(d->paths);
	d->paths = n;
	d->npaths_cap = ncap;
	return 0;
}

/* file as the line table names it, relative names joined to the compilation directory as
 * compilers and addr2line tools do. Falls back to the bare name when memory runs out. */
static const char *full_path(struct bt_dwarf *d, Dwarf_Die *cudie, const char *file)
{
	if (!file || file[0] == '/')
		return file;
	Dwarf_Attribute a;
	const char *dir = dwarf_attr(cudie, DW_AT_comp_dir, &a) ? dwarf_formstring(&a) : NULL;
	if (!dir || !*dir)
		return file;
	if (2 * (d->npaths + 1) > d->npaths_cap && paths_grow(d) != 0)
		return file;
	size_t k = ptr_hash(file, dir) & (d->npaths_cap - 1);
	for (; d->paths[k].path; k = (k + 1) & (d->npaths_cap - 1))
		if (d->paths[k].file == file && d->paths[k].dir == dir)
			return d->paths[k].path;
	char *p;
	if (asprintf(&p, "%s/%s", dir, file) < 0)
		return file;
	d->paths[k] = (struct joined){ file, dir, p };
	d->npaths++;
	return p;
}

static const char *function_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s = NULL;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a))
		s = dwarf_formstring(&a);
	if (!s && dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		s = dwarf_formstring(&a);
	if (!s && dwarf_attr_integrate(die, DW_AT_name, &a))
		s = dwarf_formstring(&a);
	return s;
}

/* The call site recorded on an inlined subroutine's concrete DIE. */
static void call_site(Dwarf_Die *inl, Dwarf_Files *files, size_t nfiles, const char **file,
		      unsigned *line)
{
	Dwarf_Attribute a;
	Dwarf_Word v;
	*file = NULL;
	*line = 0;
	if (files && dwarf_attr(inl, DW_AT_call_file, &a) && dwarf_formudata(&a, &v) == 0 && v < nfiles)
		*file = dwarf_filesrc(files, v, NULL, NULL);
	if (dwarf_attr(inl, DW_AT_call_line, &a) && dwarf_formudata(&a, &v) == 0 && v <= UINT32_MAX)
		*line = (unsigned)v;
}

int bt_dwarf_lookup(struct bt_dwarf *d, uint64_t vaddr, struct bt_dwarf_frame *frames, size_t max)
{
	if (!d || (!frames && max))
		return -EINVAL;
	if (!d->indexed) {
		int err = build_index(d);
		if (err)
			return err;
	}
	Dwarf_Die cudie;
	if (!max)
		return 0;
	const struct range *ur = find_range(&d->ranges, vaddr, false);
	if (ur) {
		if (!dwarf_offdie(d->dw, ur->die, &cudie))
			return 0;
	} else if (!dwarf_addrdie(d->dw, vaddr, &cudie)) {
		/* A unit without range attributes may still be listed in .debug_aranges. */
		return 0;
	}
	struct chain *c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->n = 0;
	struct unit *u = ur ? unit_of(d, ur, &cudie) : NULL;
	if (u && !u->err) {
		const struct range *fr = find_range(&u->fns, vaddr, true);
		Dwarf_Die top;
		if (fr && dwarf_offdie(d->dw, fr->die, &top)) {
			int tag = dwarf_tag(&top);
			if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
			    tag == DW_TAG_entry_point)
				c->die[c->n++] = top;
			walk(&top, vaddr, c, 1);
		}
	} else {
		walk(&cudie, vaddr, c, 0);
	}

	const char *file = NULL;
	int lineno = 0;
	Dwarf_Line *line = dwarf_getsrc_die(&cudie, vaddr);
	if (line) {
		file = full_path(d, &cudie, dwarf_linesrc(line, NULL, NULL));
		if (dwarf_lineno(line, &lineno) != 0 || lineno < 0)
			lineno = 0;
	}
	if (!c->n) {
		free(c);
		if (!file)
			return 0;
		frames[0] = (struct bt_dwarf_frame){ NULL, file, (unsigned)lineno };
		return 1;
	}
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	if (dwarf_getsrcfiles(&cudie, &files, &nfiles) != 0)
		files = NULL;
	size_t n = 0;
	for (size_t i = c->n; i-- > 0 && n < max;) {
		frames[n].function = function_name(&c->die[i]);
		if (n == 0) {
			frames[n].file = file;
			frames[n].line = (unsigned)lineno;
		} else {
			call_site(&c->die[i + 1], files, nfiles, &frames[n].file, &frames[n].line);
			frames[n].file = full_path(d, &cudie, frames[n].file);
		}
		n++;
	}
	free(c);
	return (int)n;
}

size_t bt_dwarf_bytes(const struct bt_dwarf *d)
{
	if (!d)
		return 0;
	size_t b = sizeof(*d) + d->ranges.cap * sizeof(*d->ranges.v) + d->nunits * sizeof(*d->units) +
		   d->npaths_cap * sizeof(*d->paths);
	for (size_t i = 0; i < d->nunits; i++)
		b += d->units[i].fns.cap * sizeof(*d->units[i].fns.v);
	return b + (size_t)bt_elf_raw_section_bytes(d->e, ".debug_") +
	       (size_t)bt_elf_raw_section_bytes(d->alt_e, ".debug_");
}
