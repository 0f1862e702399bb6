/* symtab.c - loads the function symbols of an ELF file into one sorted array with a single name
 * arena, resolves aliases once at load time, and answers address lookups by binary search. */
#include "elf/symtab.h"
#include "elf/plt.h"

#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NO_COVER UINT32_MAX
#define PLT_SUFFIX "@plt"
#define BT_SYMTAB_MAX_NESTING 64

struct bt_symtab {
	size_t n;
	struct bt_sym *syms;    /* sorted by addr, one per address */
	uint64_t *end;          /* first address past each symbol's extent */
	/* Index of the nearest earlier symbol whose extent ends later than syms[i]'s: the way out when
	 * an address lies past a nested symbol but inside an enclosing one. */
	uint32_t *cover;
	char *arena;            /* every name, NUL-terminated */
	size_t arena_bytes;
	struct bt_elf_layout layout;
};

/* One function symbol while loading; name points into the ELF's string table. */
struct cand {
	uint64_t addr, size;
	uint64_t sec_end;       /* end of the symbol's section, UINT64_MAX when unknown */
	const char *name;
	uint32_t namelen;
	uint8_t bind;           /* STB_GLOBAL, STB_WEAK, STB_LOCAL (GNU_UNIQUE counts as global) */
	uint8_t suffix;         /* 1: a PLT entry, named name@plt */
	bool label;             /* STT_NOTYPE in code: hand-written assembly's entry points */
	uint32_t fulllen;       /* the name's length with its version (name@@VER), which namelen leaves out */
	const char *ver;        /* the symbol's version (GLIBC_2.14), verlen bytes; NULL: none */
	uint32_t verlen;
	bool ver_default;       /* name@@VER, not hidden: the version a link binds to today */
	uint64_t order;         /* place in the file: .symtab first, then .dynsym, then the PLT */
};

struct cands {
	struct cand *v;
	size_t n, cap;
};

static int cands_push(struct cands *c, const struct cand *x)
{
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 1024;
		if (ncap > SIZE_MAX / sizeof(*c->v))
			return -ENOMEM;
		struct cand *nv = realloc(c->v, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		c->v = nv;
		c->cap = ncap;
	}
	c->v[c->n++] = *x;
	return 0;
}

static uint8_t bind_of(unsigned bind)
{
	switch (bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return STB_GLOBAL;
	case STB_WEAK:
		return STB_WEAK;
	default:
		return STB_LOCAL;
	}
}

static size_t leading_underscores(const char *s, size_t len)
{
	size_t n = 0;
	while (n < len && s[n] == '_')
		n++;
	return n;
}

#define PREFER(cond_a, cond_b) do { bool a_ = (cond_a), b_ = (cond_b); if (a_ != b_) return a_ ? -1 : 1; } while (0)

/* Orders by address, and within one address puts the preferred alias first, as perf chooses
 * (choose_best_symbol): a sized symbol over an unsized one, a function over an untyped label,
 * non-weak over weak, global over local, fewer leading underscores, the longer name (with its
 * version, as perf compares them), then the first in the file. */
static int cand_cmp(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	PREFER(a->size != 0, b->size != 0);
	PREFER(!a->label, !b->label);
	PREFER(a->bind != STB_WEAK, b->bind != STB_WEAK);
	PREFER(a->bind == STB_GLOBAL, b->bind == STB_GLOBAL);
	size_t ua = leading_underscores(a->name, a->namelen), ub = leading_underscores(b->name, b->namelen);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	if (a->fulllen != b->fulllen)
		return a->fulllen > b->fulllen ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}
#undef PREFER

struct sec {
	uint64_t end;           /* UINT64_MAX for sections that occupy no address range */
	bool code;              /* SHF_EXECINSTR */
};

/* Each section's end address (for zero-size symbols) and whether it holds code, indexed by
 * section number. */
static int section_info(Elf *elf, struct sec **out, size_t *count)
{
	size_t shnum;
	if (elf_getshdrnum(elf, &shnum) != 0)
		return -ENOEXEC;
	struct sec *secs = malloc((shnum ? shnum : 1) * sizeof(*secs));
	if (!secs)
		return -ENOMEM;
	for (size_t i = 0; i < shnum; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(elf, i);
		secs[i] = (struct sec){ .end = UINT64_MAX };
		if (!scn || !gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_size && sh.sh_addr <= UINT64_MAX - sh.sh_size)
			secs[i].end = sh.sh_addr + sh.sh_size;
		secs[i].code = (sh.sh_flags & SHF_EXECINSTR) != 0;
	}
	*out = secs;
	*count = shnum;
	return 0;
}

/* The SHT_SYMTAB_SHNDX data belonging to symbol table section symndx, if any: it holds the real
 * section numbers of symbols whose st_shndx is SHN_XINDEX. */
static Elf_Data *xindex_data(Elf *elf, size_t symndx)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB_SHNDX && sh.sh_link == symndx)
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* What the symbol tables of one file share: the file, whether its addresses carry ARM's Thumb bit,
 * and its sections (symbols name theirs by index). */
struct symfile {
	Elf *elf;
	bool thumb;
	const struct sec *secs;
	size_t nsecs;
};

/* The version definitions of a dynamic symbol table: the name of each version index (vd_ndx), and
 * the table's versym entries, for dynsym_version. Absent sections leave both empty. */
struct dynvers {
	Elf_Data *versym;
	const char *names[256];   /* by version index; libraries define a few dozen */
};

static void dynvers_load(Elf *elf, size_t dynsym_ndx, struct dynvers *v)
{
	memset(v, 0, sizeof(*v));
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_GNU_versym && sh.sh_link == dynsym_ndx) {
			v->versym = elf_getdata(scn, NULL);
		} else if (sh.sh_type == SHT_GNU_verdef) {
			Elf_Data *d = elf_getdata(scn, NULL);
			size_t off = 0;
			for (size_t k = 0; d && k < sh.sh_info && k < 1024; k++) {
				GElf_Verdef vd;
				GElf_Verdaux va;
				if (!gelf_getverdef(d, (int)off, &vd))
					break;
				const char *nm;
				if (vd.vd_ndx < 256 && !(vd.vd_flags & VER_FLG_BASE) &&
				    gelf_getverdaux(d, (int)(off + vd.vd_aux), &va) &&
				    (nm = elf_strptr(elf, sh.sh_link, va.vda_name)) != NULL)
					v->names[vd.vd_ndx] = nm;
				if (!vd.vd_next)
					break;
				off += vd.vd_next;
			}
		}
	}
}

/* The version a dynamic symbol is defined with, or NULL; *dflt: it is the default one (not
 * hidden: readelf's name@@VER). */
static const char *dynsym_version(const struct dynvers *v, size_t i, bool *dflt)
{
	GElf_Versym vs;
	if (!v->versym || !gelf_getversym(v->versym, (int)i, &vs))
		return NULL;
	*dflt = !(vs & 0x8000);
	unsigned ndx = vs & 0x7fff;
	return ndx > 1 && ndx < 256 ? v->names[ndx] : NULL;
}

/* Adds the function symbols of one symbol table section, and the untyped labels placed in code
 * (as perf, addr2line and eu-addr2line name them: ld.so's _start is one). Malformed tables are
 * skipped rather than failing the whole file: the other table may still be good. */
static int add_table(const struct symfile *f, Elf_Scn *scn, const GElf_Shdr *sh, struct cands *c)
{
	Elf *elf = f->elf;
	Elf_Data *d = elf_getdata(scn, NULL);
	Elf_Scn *strscn = elf_getscn(elf, sh->sh_link);
	GElf_Shdr strsh;
	if (!d || !strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB)
		return 0;
	Elf_Data *sd = elf_getdata(strscn, NULL);
	if (!sd || !sd->d_buf || sd->d_size == 0)
		return 0;
	size_t symsz = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!symsz || d->d_type != ELF_T_SYM)
		return 0;
	size_t nsyms = d->d_size / symsz;
	Elf_Data *xd = NULL;
	bool xd_looked = false;
	const char *strs = sd->d_buf;
	struct dynvers vers;
	bool dyn = sh->sh_type == SHT_DYNSYM;
	if (dyn)
		dynvers_load(elf, elf_ndxscn(scn), &vers);
	/* Entry 0 is the reserved null symbol; libelf indexes in int. */
	for (size_t i = 1; i < nsyms && i <= INT_MAX; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s))
			break;
		unsigned type = GELF_ST_TYPE(s.st_info);
		bool label = type == STT_NOTYPE;
		if ((type != STT_FUNC && type != STT_GNU_IFUNC && !label) || s.st_shndx == SHN_UNDEF)
			continue;
		uint64_t addr = s.st_value;
		if (f->thumb)
			addr &= ~(uint64_t)1;  /* the low bit marks Thumb code, not an address */
		if (addr == 0 || s.st_name >= sd->d_size)
			continue;
		const char *name = strs + s.st_name;
		const char *nul = memchr(name, '\0', sd->d_size - s.st_name);
		if (!nul || nul == name || (size_t)(nul - name) > UINT32_MAX / 2)
			continue;
		size_t shndx = s.st_shndx;
		if (s.st_shndx == SHN_XINDEX) {
			if (!xd_looked) {
				xd = xindex_data(elf, elf_ndxscn(scn));
				xd_looked = true;
			}
			GElf_Sym tmp;
			Elf32_Word x;
			shndx = xd && gelf_getsymshndx(d, xd, (int)i, &tmp, &x) ? x : SHN_UNDEF;
		}
		bool in_sec = (shndx < SHN_LORESERVE || s.st_shndx == SHN_XINDEX) && shndx < f->nsecs &&
			      shndx != SHN_UNDEF;
		/* Labels only in code, and not those of the tools: local (.L), mapping ($x, $d),
		 * annotation (.annobin_*) labels. */
		if (label && (!in_sec || !f->secs[shndx].code || name[0] == '$' || name[0] == '.'))
			continue;
		/* a version (name@@VER, name@VER in .symtab) is not part of the name, but kept beside it;
		 * a dynamic symbol's is in .gnu.version */
		const char *at = memchr(name + 1, '@', (size_t)(nul - name) - 1);
		const char *ver = NULL;
		size_t verlen = 0;
		bool ver_default = false;
		if (at) {
			ver_default = at[1] == '@';
			ver = ver_default ? at + 2 : at + 1;
			verlen = (size_t)(nul - ver);
		} else if (dyn && (ver = dynsym_version(&vers, i, &ver_default)) != NULL) {
			verlen = strnlen(ver, 256);
		}
		if (!verlen || verlen >= 256)
			ver = NULL, verlen = 0;
		struct cand k = {
			.addr = addr,
			.size = label ? 0 : s.st_size,
			.sec_end = in_sec ? f->secs[shndx].end : UINT64_MAX,
			.name = name,
			.namelen = (uint32_t)((at ? at : nul) - name),
			.bind = bind_of(GELF_ST_BIND(s.st_info)),
			.label = label,
			.fulllen = (uint32_t)(nul - name),
			.ver = ver,
			.verlen = (uint32_t)verlen,
			.ver_default = ver_default,
			.order = (sh->sh_type == SHT_DYNSYM ? (uint64_t)1 << 32 : 0) | i,
		};
		int err = cands_push(c, &k);
		if (err)
			return err;
	}
	return 0;
}

/* Drops the labels inside a sized function (a loop's entry in hand-written assembly, say): the
 * function names those addresses. c is sorted; a function at a label's address names it anyway. */
static void drop_inner_labels(struct cands *c)
{
	uint64_t fn_end = 0;
	size_t w = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct cand *x = &c->v[i];
		if (x->label && x->addr < fn_end)
			continue;
		if (!x->label && x->size && x->addr + x->size > fn_end)
			fn_end = x->addr + x->size < x->addr ? UINT64_MAX : x->addr + x->size;
		c->v[w++] = *x;
	}
	c->n = w;
}

/* Where the version of the group c->v[i..j) (one address, the preferred alias first) comes from:
 * of the entries with the chosen name (in either table: .symtab's getpid has none, .dynsym's
 * GLIBC_2.2.5), the default version (name@@VER) before an older one kept for old binaries
 * (pthread_attr_getstacksize@GLIBC_2.2.5 beside @@GLIBC_2.34); none for a PLT entry. NULL: none. */
static const struct cand *group_version(const struct cands *c, size_t i, size_t j)
{
	const struct cand *first = &c->v[i], *best = NULL;
	if (first->suffix)
		return NULL;
	for (size_t m = i; m < j; m++) {
		const struct cand *x = &c->v[m];
		if (!x->ver || x->namelen != first->namelen || memcmp(x->name, first->name, first->namelen))
			continue;
		if (!best || (x->ver_default && !best->ver_default))
			best = x;
	}
	return best;
}

/* Collapses each address to its preferred alias, copies the names into one arena, and computes
 * every symbol's extent. c is sorted. */
static int build(struct bt_symtab *st, const struct cands *c)
{
	size_t n = 0, bytes = 0;
	for (size_t i = 0, j; i < c->n; i = j) {
		for (j = i + 1; j < c->n && c->v[j].addr == c->v[i].addr; j++)
			;
		n++;
		const struct cand *v = group_version(c, i, j);
		size_t vl = v ? v->verlen : 0;
		if (bytes > SIZE_MAX - c->v[i].namelen - sizeof(PLT_SUFFIX) - vl - 1)
			return -ENOMEM;
		/* the name, then its version (an empty string when none) */
		bytes += c->v[i].namelen + 1 + (c->v[i].suffix ? sizeof(PLT_SUFFIX) - 1 : 0) + vl + 1;
	}
	if (n >= NO_COVER)
		return -E2BIG;
	st->syms = malloc(n * sizeof(*st->syms));
	st->end = malloc(n * sizeof(*st->end));
	st->cover = malloc(n * sizeof(*st->cover));
	st->arena = malloc(bytes);
	st->arena_bytes = bytes;
	if (!st->syms || !st->end || !st->cover || !st->arena)
		return -ENOMEM;
	/* Per address: the first candidate names it; the group's largest size and section end win, so
	 * that a sized duplicate from the other table is not lost to an unsized alias. */
	uint64_t *sec_end = st->end;  /* holds section ends until the extents replace them */
	char *w = st->arena;
	size_t k = 0;
	for (size_t i = 0; i < c->n; k++) {
		const struct cand *first = &c->v[i];
		uint64_t size = 0, send = 0;
		size_t j = i;
		for (; j < c->n && c->v[j].addr == first->addr; j++) {
			if (c->v[j].size > size)
				size = c->v[j].size;
			if (c->v[j].sec_end > send)
				send = c->v[j].sec_end;
		}
		size_t len = first->namelen;
		memcpy(w, first->name, len);
		if (first->suffix) {
			memcpy(w + len, PLT_SUFFIX, sizeof(PLT_SUFFIX) - 1);
			len += sizeof(PLT_SUFFIX) - 1;
		}
		w[len] = '\0';
		st->syms[k] = (struct bt_sym){ .addr = first->addr, .size = size, .name = w };
		sec_end[k] = send;
		w += len + 1;
		const struct cand *v = group_version(c, i, j);
		size_t vl = v ? v->verlen : 0;
		if (vl)
			memcpy(w, v->ver, vl);
		w[vl] = '\0';
		w += vl + 1;
		i = j;
	}
	st->n = n;
	for (size_t i = 0; i < n; i++) {
		struct bt_sym *s = &st->syms[i];
		uint64_t e;
		if (s->size) {
			e = s->addr + s->size < s->addr ? UINT64_MAX : s->addr + s->size;
		} else {
			/* Zero size: up to the next symbol, but never past the section. Without either
			 * bound it covers just its own address. */
			uint64_t next = i + 1 < n ? st->syms[i + 1].addr : UINT64_MAX;
			e = next < sec_end[i] ? next : sec_end[i];
			if (e == UINT64_MAX)
				e = s->addr + 1;
		}
		st->end[i] = e;
	}
	/* A stack of strictly decreasing ends gives each symbol the nearest earlier one ending later.
	 * A lookup past syms[i]'s end can skip every symbol in between: none of them ends later. */
	uint32_t *stack = malloc((n ? n : 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	size_t sp = 0;
	for (size_t i = 0; i < n; i++) {
		while (sp && st->end[stack[sp - 1]] <= st->end[i])
			sp--;
		st->cover[i] = sp ? stack[sp - 1] : NO_COVER;
		stack[sp++] = (uint32_t)i;
	}
	free(stack);
	return 0;
}

void bt_symtab_free(struct bt_symtab *st)
{
	if (!st)
		return;
	free(st->syms);
	free(st->end);
	free(st->cover);
	free(st->arena);
	free(st);
}

/* The first candidate (the preferred alias) at addr in the sorted c, or NULL. */
static const struct cand *cand_at(const struct cands *c, uint64_t addr)
{
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->n && c->v[lo].addr == addr ? &c->v[lo] : NULL;
}

/* Adds code's PLT entries to the sorted c, and sorts it again. An ifunc's entry takes the name the
 * table gives the ifunc; one whose ifunc has no symbol stays unnamed. Names point into code. */
static int add_plt(struct bt_elf *code, struct cands *c)
{
	struct bt_plt_entry *pe;
	size_t np;
	int err = bt_plt_entries(code, &pe, &np);
	if (err || np == 0)
		return err;
	size_t base = c->n;
	for (size_t i = 0; !err && i < np; i++) {
		/* as for symbols: nothing at address zero, nothing past the end of the address space */
		if (pe[i].addr == 0 || pe[i].addr > UINT64_MAX - pe[i].size)
			continue;
		struct cand k = { .addr = pe[i].addr, .size = pe[i].size, .sec_end = pe[i].addr + pe[i].size,
				  .name = pe[i].name, .namelen = pe[i].namelen, .fulllen = pe[i].namelen,
				  .suffix = pe[i].suffix,
				  .bind = STB_GLOBAL, .order = ((uint64_t)2 << 32) | i };
		if (!k.name) {
			const struct cand *f = cand_at(c, pe[i].ifunc);
			if (!f || f >= c->v + base)
				continue;
			k.name = f->name;
			k.namelen = f->namelen;
		}
		err = cands_push(c, &k);
	}
	free(pe);
	if (!err && c->n)
		qsort(c->v, c->n, sizeof(*c->v), cand_cmp);
	return err;
}

/* The candidates of every symbol table of e, sorted. */
static int collect(Elf *elf, bool thumb, struct cands *c)
{
	struct sec *secs = NULL;
	size_t nsecs = 0;
	int err = section_info(elf, &secs, &nsecs);
	if (err)
		return err;
	struct symfile f = { .elf = elf, .thumb = thumb, .secs = secs, .nsecs = nsecs };
	Elf_Scn *scn = NULL;
	while (!err && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			err = add_table(&f, scn, &sh, c);
	}
	free(secs);
	if (!err && c->n)  /* c->v is NULL when empty, which qsort must not be given */
		qsort(c->v, c->n, sizeof(*c->v), cand_cmp);
	return err;
}

/* Adds the n functions of more to c, and sorts it again. Names point into more. */
static int add_more(const struct bt_sym *more, size_t n, struct cands *c)
{
	int err = 0;
	for (size_t i = 0; !err && i < n; i++) {
		const struct bt_sym *m = &more[i];
		size_t len = m->name ? strlen(m->name) : 0;
		if (!m->addr || !m->size || m->addr > UINT64_MAX - m->size || !len || len > UINT32_MAX / 2)
			continue;
		struct cand k = { .addr = m->addr, .size = m->size, .sec_end = m->addr + m->size,
				  .name = m->name, .namelen = (uint32_t)len, .fulllen = (uint32_t)len,
				  .bind = STB_GLOBAL, .order = ((uint64_t)3 << 32) | (i & 0xffffffffu) };
		err = cands_push(c, &k);
	}
	if (!err && c->n)
		qsort(c->v, c->n, sizeof(*c->v), cand_cmp);
	return err;
}

/* The table of e's symbols (with code's PLT entries when code is given) and n more functions. */
static int load_all(struct bt_elf *e, struct bt_elf *code, const struct bt_sym *more, size_t n,
		    struct bt_symtab **out)
{
	if (!e || !out)
		return -EINVAL;
	*out = NULL;
	Elf *elf = bt_elf_handle(e);
	GElf_Ehdr eh;
	if (!elf || !gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	struct bt_symtab *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	int err = bt_elf_layout(e, &st->layout);
	if (err) {
		free(st);
		return err;
	}
	struct cands c = { 0 };
	err = collect(elf, eh.e_machine == EM_ARM, &c);
	if (!err && code)
		err = add_plt(code, &c);
	if (!err && n)
		err = add_more(more, n, &c);
	if (!err && c.n == 0)
		err = -ENODATA;
	if (!err) {
		drop_inner_labels(&c);
		err = build(st, &c);
	}
	free(c.v);
	if (err) {
		bt_symtab_free(st);
		return err;
	}
	*out = st;
	return 0;
}

int bt_symtab_load_with_plt(struct bt_elf *e, struct bt_elf *code, struct bt_symtab **out)
{
	return load_all(e, code, NULL, 0, out);
}

int bt_symtab_load_more(struct bt_elf *e, const struct bt_sym *more, size_t n, struct bt_symtab **out)
{
	return load_all(e, e, more, n, out);
}

int bt_symtab_load(struct bt_elf *e, struct bt_symtab **out)
{
	return bt_symtab_load_with_plt(e, e, out);
}

int bt_symtab_load_path(const char *path, struct bt_symtab **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	struct bt_elf *e;
	int err = bt_elf_open_path(path, &e);
	if (err)
		return err;
	err = bt_symtab_load(e, out);
	bt_elf_close(e);  /* the table copied everything it keeps */
	return err;
}

size_t bt_symtab_count(const struct bt_symtab *st)
{
	return st ? st->n : 0;
}

const struct bt_sym *bt_symtab_at(const struct bt_symtab *st, size_t i)
{
	return st && i < st->n ? &st->syms[i] : NULL;
}

const struct bt_elf_layout *bt_symtab_layout(const struct bt_symtab *st)
{
	return st ? &st->layout : NULL;
}

const struct bt_sym *bt_symtab_lookup(const struct bt_symtab *st, uint64_t vaddr, uint64_t *off)
{
	if (!st || st->n == 0)
		return NULL;
	/* The last symbol starting at or before vaddr. */
	size_t lo = 0, hi = st->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	/* Each step reaches a symbol that ends later; real nesting is a level or two deep, and a bound
	 * keeps hostile tables (thousands of nested symbols) from making lookups slow. */
	uint32_t i = (uint32_t)(lo - 1);
	for (int steps = 0; i != NO_COVER && st->end[i] <= vaddr; steps++) {
		if (steps == BT_SYMTAB_MAX_NESTING)
			return NULL;
		i = st->cover[i];
	}
	if (i == NO_COVER)
		return NULL;
	if (off)
		*off = vaddr - st->syms[i].addr;
	return &st->syms[i];
}

const struct bt_sym *bt_symtab_lookup_offset(const struct bt_symtab *st, uint64_t file_off,
					     uint64_t *off)
{
	uint64_t vaddr;
	if (!st || bt_elf_offset_to_vaddr(&st->layout, file_off, &vaddr) != 0)
		return NULL;
	return bt_symtab_lookup(st, vaddr, off);
}

size_t bt_symtab_bytes(const struct bt_symtab *st)
{
	if (!st)
		return 0;
	return sizeof(*st) + st->n * (sizeof(*st->syms) + sizeof(*st->end) + sizeof(*st->cover)) +
	       st->arena_bytes;
}

const char *bt_symtab_version(const struct bt_symtab *st, const struct bt_sym *sym)
{
	if (!st || !sym || st->n == 0 || sym < st->syms || sym >= st->syms + st->n)
		return NULL;
	const char *v = sym->name + strlen(sym->name) + 1;
	return *v ? v : NULL;
}
