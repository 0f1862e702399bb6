/* goelf.c - finds a Go program's .gopclntab in its ELF file, the start of its code and its
 * moduledata (through the relocations of a position-independent build, whose pointers the file holds
 * as relocation addends), and serves its functions as a symbol table and its lines by address. */
#include "elf/goelf.h"
#include "elf/gopclntab.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The sections the table is found in: the Go linker's, and the external linker's for a
 * position-independent build. */
static const char *const TABLE_SECTIONS[] = { ".gopclntab", ".data.rel.ro.gopclntab" };

/* The relocations that fill pointers of a position-independent build at load time: where, and the
 * address stored there (the addend of R_X86_64_RELATIVE, R_X86_64_64 without a symbol). */
struct relocs {
	Elf *elf;
	bool loaded;             /* read on first use: most Go programs are not position-independent */
	struct reloc {
		uint64_t where, value;
	} *v;
	size_t n;
};

static int reloc_cmp(const void *a, const void *b)
{
	const struct reloc *x = a, *y = b;
	return x->where < y->where ? -1 : x->where > y->where;
}

#define RELOCS_MAX (16u << 20)

static int relocs_load(struct relocs *r)
{
	Elf *elf = r->elf;
	r->loaded = true;
	size_t cap = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)) || d->d_type != ELF_T_RELA)
			continue;
		size_t n = d->d_size / sh.sh_entsize;
		for (size_t i = 0; i < n && i <= INT32_MAX && r->n < RELOCS_MAX; i++) {
			GElf_Rela ra;
			if (!gelf_getrela(d, (int)i, &ra))
				break;
			unsigned type = GELF_R_TYPE(ra.r_info);
			if (type != R_X86_64_RELATIVE && !(type == R_X86_64_64 && GELF_R_SYM(ra.r_info) == 0))
				continue;
			if (r->n == cap) {
				cap = cap ? 2 * cap : 1024;
				struct reloc *nv = realloc(r->v, cap * sizeof(*nv));
				if (!nv)
					return -ENOMEM;
				r->v = nv;
			}
			r->v[r->n++] = (struct reloc){ ra.r_offset, (uint64_t)ra.r_addend };
		}
	}
	if (r->n)
		qsort(r->v, r->n, sizeof(*r->v), reloc_cmp);
	return 0;
}

/* The address a relocation stores at where, or 0. */
static uint64_t reloc_value(void *ctx, uint64_t where)
{
	struct relocs *r = ctx;
	if (!r->loaded && relocs_load(r) != 0)
		r->n = 0;
	size_t lo = 0, hi = r->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->v[mid].where < where)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n && r->v[lo].where == where ? r->v[lo].value : 0;
}

/* Where the table is, and where Go's code starts when its header leaves that to a relocation. */
static int table_src(struct bt_elf *e, struct relocs *rel, struct bt_gopcln_src *src)
{
	memset(src, 0, sizeof(*src));
	int err = -ENODATA;
	for (size_t i = 0; err && i < sizeof(TABLE_SECTIONS) / sizeof(TABLE_SECTIONS[0]); i++)
		err = bt_elf_section_at(e, TABLE_SECTIONS[i], &src->tab, &src->len, &src->addr);
	if (err)
		return err == -ENOEXEC ? -EINVAL : err;
	const unsigned char *t = src->tab;
	unsigned ptr = src->len >= 8 ? t[7] : 0;
	if ((ptr != 4 && ptr != 8) || src->len < 8 + 3 * (size_t)ptr || (t[0] != 0xf0 && t[0] != 0xf1))
		return 0;  /* 1.16's entries are addresses; or not a table, which bt_gopcln_open tells */
	uint64_t text = 0;
	for (unsigned i = ptr; i-- > 0;)
		text = text << 8 | t[8 + 2 * ptr + i];
	if (text)
		return 0;
	src->text = reloc_value(rel, src->addr + 8 + 2 * ptr);
	const void *d;
	size_t len;
	if (!src->text && bt_elf_section_at(e, ".text", &d, &len, &src->text) != 0)
		src->text = 0;
	return 0;
}

bool bt_goelf_is_go(struct bt_elf *e)
{
	const void *d;
	size_t len;
	return bt_elf_section(e, TABLE_SECTIONS[0], &d, &len) == 0 ||
	       bt_elf_section(e, TABLE_SECTIONS[1], &d, &len) == 0;
}

/* The table of e, read for names alone. */
static int open_table(struct bt_elf *e, struct bt_gopcln **out)
{
	struct relocs rel = { .elf = bt_elf_handle(e) };
	struct bt_gopcln_src src;
	int err = table_src(e, &rel, &src);
	free(rel.v);
	return err ? err : bt_gopcln_open(&src, out);
}

int bt_goelf_symtab(struct bt_elf *e, struct bt_symtab **out)
{
	if (!e || !out)
		return -EINVAL;
	*out = NULL;
	struct bt_gopcln *g;
	int err = open_table(e, &g);
	if (err)
		return err;
	size_t n = bt_gopcln_count(g), k = 0;
	struct bt_sym *syms = malloc((n ? n : 1) * sizeof(*syms));
	if (!syms) {
		bt_gopcln_free(g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t entry, end;
		const char *name;
		if (bt_gopcln_func(g, i, &entry, &end, &name) == 0)
			syms[k++] = (struct bt_sym){ .addr = entry, .size = end - entry, .name = name };
	}
	err = k ? bt_symtab_load_more(e, syms, k, out) : -ENODATA;
	free(syms);
	bt_gopcln_free(g);
	return err;
}

struct bt_golines {
	struct bt_elf *e;        /* holds the table's bytes */
	int fd;                  /* for the inline trees, read as they are asked for */
	struct bt_elf_layout layout;
	struct bt_gopcln *g;
	size_t tab_len;
	bool inlines;
};

/* Bytes at an address of the program, from the file: all of them inside one segment's file bytes. */
static int read_at(void *ctx, uint64_t vaddr, void *buf, size_t len)
{
	struct bt_golines *gl = ctx;
	uint64_t off, last;
	if (!len || vaddr > UINT64_MAX - len || bt_elf_vaddr_to_offset(&gl->layout, vaddr, &off) != 0 ||
	    bt_elf_vaddr_to_offset(&gl->layout, vaddr + len - 1, &last) != 0 || last != off + len - 1)
		return -ERANGE;
	ssize_t n = pread(gl->fd, buf, len, (off_t)off);
	return n == (ssize_t)len ? 0 : -EIO;
}

/* Go 1.18 on: moduledata.gofunc, from the data sections that may hold moduledata. */
static uint64_t find_gofunc(struct bt_elf *e, const struct bt_gopcln *g, struct relocs *rel)
{
	static const char *const data[] = { ".noptrdata", ".data.rel.ro", ".data" };
	for (size_t i = 0; i < sizeof(data) / sizeof(data[0]); i++) {
		const void *d;
		size_t len;
		uint64_t addr, gofunc;
		if (bt_elf_section_at(e, data[i], &d, &len, &addr) == 0 &&
		    (gofunc = bt_gopcln_find_gofunc(g, d, len, addr, reloc_value, rel)) != 0)
			return gofunc;
	}
	return 0;
}

static int golines_init(struct bt_golines *gl)
{
	struct relocs rel = { .elf = bt_elf_handle(gl->e) };
	struct bt_gopcln_src src;
	int err = table_src(gl->e, &rel, &src);
	if (!err)
		err = bt_elf_layout(gl->e, &gl->layout);
	if (!err) {
		src.read = read_at;
		src.ctx = gl;
		err = bt_gopcln_open(&src, &gl->g);
	}
	if (!err && bt_gopcln_version(gl->g) != 116) {
		/* the table is parsed once more, knowing where its funcdata offsets start */
		src.gofunc = find_gofunc(gl->e, gl->g, &rel);
		if (src.gofunc) {
			bt_gopcln_free(gl->g);
			gl->g = NULL;
			err = bt_gopcln_open(&src, &gl->g);
		}
	}
	gl->inlines = !err && (bt_gopcln_version(gl->g) == 116 || src.gofunc);
	gl->tab_len = err ? 0 : src.len;
	free(rel.v);
	return err;
}

int bt_golines_open(int fd, struct bt_golines **out)
{
	if (fd < 0 || !out)
		return -EINVAL;
	*out = NULL;
	struct bt_golines *gl = calloc(1, sizeof(*gl));
	if (!gl)
		return -ENOMEM;
	gl->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	int err = gl->fd < 0 ? -errno : bt_elf_open_fd(fd, &gl->e);
	if (!err)
		err = golines_init(gl);
	if (err) {
		bt_golines_close(gl);
		return err;
	}
	*out = gl;
	return 0;
}

int bt_golines_lookup(struct bt_golines *g, uint64_t vaddr, struct bt_dwarf_frame *out, size_t max)
{
	return g ? bt_gopcln_lookup(g->g, vaddr, out, max) : 0;
}

bool bt_golines_inlines(const struct bt_golines *g)
{
	return g && g->inlines;
}

size_t bt_golines_bytes(const struct bt_golines *g)
{
	return g ? sizeof(*g) + g->tab_len : 0;
}

void bt_golines_close(struct bt_golines *g)
{
	if (!g)
		return;
	bt_gopcln_free(g->g);
	bt_elf_close(g->e);
	if (g->fd >= 0)
		close(g->fd);
	free(g);
}
