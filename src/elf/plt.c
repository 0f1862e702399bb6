/* plt.c - names PLT entries the way BFD's synthetic symbols and perf do: each entry's indirect jump
 * is decoded to find the GOT slot it goes through, and the dynamic relocation of that slot names
 * it (R_X86_64_JUMP_SLOT, GLOB_DAT for .plt.got, IRELATIVE for an ifunc called from inside). */
#include "elf/plt.h"

#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifndef R_X86_64_IRELATIVE
#define R_X86_64_IRELATIVE 37
#endif
/* Far more than any real file has; a hostile one cannot make the work unbounded. */
#define PLT_MAX_RELOCS (1u << 22)
#define PLT_MAX_ENTRIES (1u << 20)

struct slot {
	uint64_t offset;        /* the GOT slot's address */
	uint64_t addend;
	const char *name;       /* NULL when the relocation names no symbol */
	uint32_t namelen;
	bool irel;
};

struct slots {
	struct slot *v;
	size_t n, cap;
};

static int slot_cmp(const void *pa, const void *pb)
{
	const struct slot *a = pa, *b = pb;
	return a->offset < b->offset ? -1 : a->offset > b->offset;
}

static int slots_push(struct slots *s, const struct slot *x)
{
	if (s->n == s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 256;
		struct slot *nv = realloc(s->v, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = ncap;
	}
	s->v[s->n++] = *x;
	return 0;
}

/* The name of symbol idx of the symbol table symscn, without its version (a dynamic string table
 * holds none), or NULL. */
static const char *sym_name(Elf *elf, Elf_Scn *symscn, size_t idx, uint32_t *len)
{
	GElf_Shdr sh, strsh;
	GElf_Sym s;
	if (!symscn || !idx || idx > INT_MAX || !gelf_getshdr(symscn, &sh) ||
	    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
		return NULL;
	Elf_Data *d = elf_getdata(symscn, NULL);
	Elf_Scn *strscn = elf_getscn(elf, sh.sh_link);
	Elf_Data *sd = strscn && gelf_getshdr(strscn, &strsh) && strsh.sh_type == SHT_STRTAB
			       ? elf_getdata(strscn, NULL) : NULL;
	if (!d || d->d_type != ELF_T_SYM || !sd || !sd->d_buf || !gelf_getsym(d, (int)idx, &s) ||
	    s.st_name >= sd->d_size)
		return NULL;
	const char *name = (const char *)sd->d_buf + s.st_name;
	const char *nul = memchr(name, '\0', sd->d_size - s.st_name);
	if (!nul || nul == name || nul - name > UINT16_MAX)
		return NULL;
	*len = (uint32_t)(nul - name);
	return name;
}

/* The GOT slots that dynamic relocations fill with a function's address, sorted by address. */
static int read_slots(Elf *elf, struct slots *out)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t relsz = gelf_fsize(elf, ELF_T_RELA, 1, EV_CURRENT);
		if (!d || d->d_type != ELF_T_RELA || !relsz)
			continue;
		Elf_Scn *symscn = sh.sh_link ? elf_getscn(elf, sh.sh_link) : NULL;
		size_t nrel = d->d_size / relsz;
		for (size_t i = 0; i < nrel && i <= INT_MAX; i++) {
			GElf_Rela r;
			if (!gelf_getrela(d, (int)i, &r))
				break;
			unsigned type = GELF_R_TYPE(r.r_info);
			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
			    type != R_X86_64_IRELATIVE)
				continue;
			if (out->n == PLT_MAX_RELOCS)
				return 0;
			struct slot s = { .offset = r.r_offset, .addend = (uint64_t)r.r_addend,
					  .irel = type == R_X86_64_IRELATIVE };
			s.name = sym_name(elf, symscn, GELF_R_SYM(r.r_info), &s.namelen);
			if (!s.name && !s.irel)
				continue;
			int err = slots_push(out, &s);
			if (err)
				return err;
		}
	}
	if (out->n)  /* out->v is NULL when empty, which qsort must not be given */
		qsort(out->v, out->n, sizeof(*out->v), slot_cmp);
	return 0;
}

/* The GOT slot an entry at addr jumps through: `jmp *disp32(%rip)`, after an endbr64 and a bnd
 * prefix if present. false when the entry starts otherwise (the lazy-binding header, or a .plt
 * entry of a file built for IBT, whose jump is in .plt.sec). */
static bool entry_slot(const uint8_t *p, size_t len, uint64_t addr, uint64_t *slot)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t n = 0;
	if (len >= sizeof(endbr64) && memcmp(p, endbr64, sizeof(endbr64)) == 0)
		n += sizeof(endbr64);
	if (n < len && p[n] == 0xf2)
		n++;
	if (len < n + 6 || p[n] != 0xff || p[n + 1] != 0x25)
		return false;
	int32_t disp;
	memcpy(&disp, p + n + 2, sizeof(disp));
	*slot = addr + n + 6 + (uint64_t)(int64_t)disp;
	return true;
}

struct entries {
	struct bt_plt_entry *v;
	size_t n, cap;
};

static int entries_push(struct entries *e, const struct bt_plt_entry *x)
{
	if (e->n == e->cap) {
		size_t ncap = e->cap ? 2 * e->cap : 64;
		struct bt_plt_entry *nv = realloc(e->v, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		e->v = nv;
		e->cap = ncap;
	}
	e->v[e->n++] = *x;
	return 0;
}

/* The size of one entry, as perf takes it: sh_entsize when it is 8 or 16, else what the alignment
 * suggests. */
static uint64_t entry_size(const GElf_Shdr *sh)
{
	if (sh->sh_entsize == 8 || sh->sh_entsize == 16)
		return sh->sh_entsize;
	return sh->sh_addralign == 8 ? 8 : 16;
}

enum header { NO_HEADER, FIRST_ENTRY, WHOLE_SECTION };

/* Adds the entries of one PLT section. .plt begins with the lazy-binding header; in a file with
 * .plt.sec its other entries only push and jump to that header: all of .plt is named ".plt" then,
 * as perf names it. */
static int add_section(const GElf_Shdr *sh, Elf_Data *d, const struct slots *s, enum header hdr,
		       struct entries *out)
{
	uint64_t esz = entry_size(sh);
	size_t len = d->d_size < sh->sh_size ? d->d_size : (size_t)sh->sh_size;
	const uint8_t *p = d->d_buf;
	for (size_t i = 0; i + esz <= len && out->n < PLT_MAX_ENTRIES; i += esz) {
		uint64_t addr = sh->sh_addr + i, got;
		struct bt_plt_entry x = { .addr = addr, .size = esz };
		if (!entry_slot(p + i, esz, addr, &got)) {
			if (i != 0 || hdr == NO_HEADER)
				continue;
			/* The header: push the link map, jump to the resolver. */
			x.name = ".plt";
			x.namelen = 4;
			x.size = hdr == WHOLE_SECTION ? len : esz;
			int err = entries_push(out, &x);
			if (err || hdr == WHOLE_SECTION)
				return err;
			continue;
		}
		struct slot key = { .offset = got };
		const struct slot *hit = s->n ? bsearch(&key, s->v, s->n, sizeof(*s->v), slot_cmp) : NULL;
		if (!hit)
			continue;
		x.suffix = 1;
		if (hit->name) {
			x.name = hit->name;
			x.namelen = hit->namelen;
		} else {
			x.ifunc = hit->addend;
		}
		int err = entries_push(out, &x);
		if (err)
			return err;
	}
	return 0;
}

/* A PLT section by name with its bytes, or NULL. */
static Elf_Scn *plt_section(Elf *elf, size_t shstrndx, const char *name, GElf_Shdr *sh, Elf_Data **d)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *n;
		if (!gelf_getshdr(scn, sh) || sh->sh_type != SHT_PROGBITS || !(sh->sh_flags & SHF_EXECINSTR) ||
		    !(n = elf_strptr(elf, shstrndx, sh->sh_name)) || strcmp(n, name) != 0)
			continue;
		*d = elf_getdata(scn, NULL);
		return *d && (*d)->d_buf && (*d)->d_size ? scn : NULL;
	}
	return NULL;
}

int bt_plt_entries(struct bt_elf *be, struct bt_plt_entry **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	Elf *elf = bt_elf_handle(be);
	GElf_Ehdr eh;
	size_t shstrndx;
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	GElf_Shdr plt, sec, got;
	Elf_Data *dplt = NULL, *dsec = NULL, *dgot = NULL;
	bool has_plt = plt_section(elf, shstrndx, ".plt", &plt, &dplt) != NULL;
	bool has_sec = plt_section(elf, shstrndx, ".plt.sec", &sec, &dsec) != NULL;
	bool has_got = plt_section(elf, shstrndx, ".plt.got", &got, &dgot) != NULL;
	if (!has_plt && !has_sec && !has_got)
		return 0;
	struct slots s = { 0 };
	struct entries e = { 0 };
	int err = read_slots(elf, &s);
	if (!err && has_plt)
		err = add_section(&plt, dplt, &s, has_sec ? WHOLE_SECTION : FIRST_ENTRY, &e);
	if (!err && has_sec)
		err = add_section(&sec, dsec, &s, NO_HEADER, &e);
	if (!err && has_got)
		err = add_section(&got, dgot, &s, NO_HEADER, &e);
	free(s.v);
	if (err) {
		free(e.v);
		return err;
	}
	*out = e.v;
	*n = e.n;
	return 0;
}
