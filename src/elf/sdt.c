/* sdt.c - reads .note.stapsdt: each note's addresses (moved by .stapsdt.base), provider, name and
 * argument spec; parses argument specs in the assembler's AT&T syntax. */
#include "elf/sdt.h"

#include <ctype.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NT_STAPSDT 3

/* The address .stapsdt.base has in this file (0 with found = false when there is none). */
static uint64_t base_addr(Elf *elf, bool *found)
{
	size_t shstrndx;
	*found = false;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(n, ".stapsdt.base")) {
			*found = true;
			return sh.sh_addr;
		}
	}
	return 0;
}

static uint64_t get_addr(const unsigned char *p, size_t w)
{
	uint64_t v = 0;
	for (size_t i = w; i-- > 0;)   /* little-endian: the only byte order markers are read in here */
		v = v << 8 | p[i];
	return v;
}

/* Copies the NUL-terminated string at p (within end) into out; the byte after it, or NULL. */
static const char *take_str(const char *p, const char *end, char *out, size_t len)
{
	const char *z = memchr(p, '\0', (size_t)(end - p));
	if (!z || (size_t)(z - p) >= len)
		return NULL;
	memcpy(out, p, (size_t)(z - p) + 1);
	return z + 1;
}

/* One note's description into m; -ENOEXEC when it does not hold together. */
static int parse_desc(const unsigned char *d, size_t n, size_t w, struct bt_sdt_marker *m)
{
	if (n < 3 * w)
		return -ENOEXEC;
	m->pc = get_addr(d, w);
	m->semaphore = get_addr(d + 2 * w, w);
	const char *p = (const char *)d + 3 * w, *end = (const char *)d + n;
	if (!(p = take_str(p, end, m->provider, sizeof(m->provider))) ||
	    !(p = take_str(p, end, m->name, sizeof(m->name))) || !take_str(p, end, m->args, sizeof(m->args)))
		return -ENOEXEC;
	return 0;
}

int bt_sdt_foreach(struct bt_elf *e, int (*fn)(void *ctx, const struct bt_sdt_marker *m), void *ctx)
{
	Elf *elf = bt_elf_handle(e);
	GElf_Ehdr eh;
	if (!elf || !gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	if (eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return -ENOTSUP;
	size_t w = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	const void *data;
	size_t len;
	int err = bt_elf_section(e, ".note.stapsdt", &data, &len);
	if (err == -ENODATA)
		return 0;
	if (err)
		return err;
	bool has_base;
	uint64_t actual = base_addr(elf, &has_base);
	const unsigned char *p = data;
	size_t pos = 0;
	while (len - pos >= 12) {
		uint32_t namesz, descsz, type;
		memcpy(&namesz, p + pos, 4);
		memcpy(&descsz, p + pos + 4, 4);
		memcpy(&type, p + pos + 8, 4);
		pos += 12;
		size_t nalign = ((size_t)namesz + 3) & ~(size_t)3, dalign = ((size_t)descsz + 3) & ~(size_t)3;
		if (nalign > len - pos || dalign > len - pos - nalign)
			return -ENOEXEC;
		const unsigned char *name = p + pos, *desc = p + pos + nalign;
		pos += nalign + dalign;
		if (type != NT_STAPSDT || namesz != 8 || memcmp(name, "stapsdt", 8) != 0)
			continue;
		struct bt_sdt_marker m;
		if ((err = parse_desc(desc, descsz, w, &m)))
			return err;
		uint64_t note_base = get_addr(desc + w, w);
		/* A prelinked file moved its code: the note's base says where .stapsdt.base was. */
		if (has_base && note_base) {
			m.pc += actual - note_base;
			if (m.semaphore)
				m.semaphore += actual - note_base;
		}
		int r = fn(ctx, &m);
		if (r)
			return r;
	}
	return 0;
}

struct find_ctx {
	const char *provider, *name;
	struct bt_sdt_marker *out;
};

static int find_one(void *ctx, const struct bt_sdt_marker *m)
{
	struct find_ctx *f = ctx;
	if (strcmp(m->provider, f->provider) || strcmp(m->name, f->name))
		return 0;
	*f->out = *m;
	return 1;
}

int bt_sdt_find(struct bt_elf *e, const char *provider, const char *name, struct bt_sdt_marker *out)
{
	struct find_ctx f = { .provider = provider, .name = name, .out = out };
	int r = bt_sdt_foreach(e, find_one, &f);
	return r == 1 ? 0 : r < 0 ? r : -ENOENT;
}

/* The 64-bit register each AT&T name stands for, with its narrower names. */
static const struct {
	const char *names[5];
	uint8_t reg;
} regs[] = {
	{ { "rax", "eax", "ax", "al" }, 10 },  { { "rbx", "ebx", "bx", "bl" }, 5 },
	{ { "rcx", "ecx", "cx", "cl" }, 11 },  { { "rdx", "edx", "dx", "dl" }, 12 },
	{ { "rsi", "esi", "si", "sil" }, 13 }, { { "rdi", "edi", "di", "dil" }, 14 },
	{ { "rbp", "ebp", "bp", "bpl" }, 4 },  { { "rsp", "esp", "sp", "spl" }, 19 },
	{ { "r8", "r8d", "r8w", "r8b", "r8l" }, 9 },     { { "r9", "r9d", "r9w", "r9b", "r9l" }, 8 },
	{ { "r10", "r10d", "r10w", "r10b", "r10l" }, 7 }, { { "r11", "r11d", "r11w", "r11b", "r11l" }, 6 },
	{ { "r12", "r12d", "r12w", "r12b", "r12l" }, 3 }, { { "r13", "r13d", "r13w", "r13b", "r13l" }, 2 },
	{ { "r14", "r14d", "r14w", "r14b", "r14l" }, 1 }, { { "r15", "r15d", "r15w", "r15b", "r15l" }, 0 },
};

int bt_sdt_reg(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		for (size_t j = 0; j < 5 && regs[i].names[j]; j++)
			if (strlen(regs[i].names[j]) == len && !strncmp(regs[i].names[j], name, len))
				return regs[i].reg;
	return -EINVAL;
}

/* "%NAME" at p: its register number, *end past it. */
static int parse_reg(const char *p, const char **end)
{
	if (*p != '%')
		return -EINVAL;
	const char *q = ++p;
	while (isalnum((unsigned char)*q))
		q++;
	*end = q;
	if (q - p == 3 && !strncmp(p, "rip", 3))
		return -ENOTSUP;
	int r = bt_sdt_reg(p, (size_t)(q - p));
	/* segment registers and the like name no place a probe can read */
	return r >= 0 ? r : (q > p ? -ENOTSUP : -EINVAL);
}

/* One argument "[-]SIZE@LOC" (or a bare LOC, 8 bytes, as old notes have it). */
static int parse_one(const char *s, const char *end, struct bt_sdt_arg *a)
{
	memset(a, 0, sizeof(*a));
	a->size = 8;
	const char *at = memchr(s, '@', (size_t)(end - s));
	if (at) {
		char *e;
		long sz = strtol(s, &e, 10);
		if (e != at)
			return -EINVAL;
		a->is_signed = sz < 0;
		sz = labs(sz);
		if (sz != 1 && sz != 2 && sz != 4 && sz != 8)
			return -EINVAL;
		a->size = (uint8_t)sz;
		s = at + 1;
	}
	char *e;
	if (s == end)
		return -EINVAL;
	if (*s == '$') {
		a->loc = BT_SDT_CONST;
		a->off = strtoll(s + 1, &e, 0);
		return e == end && e != s + 1 ? 0 : -EINVAL;
	}
	if (*s == '%') {
		const char *q;
		int r = parse_reg(s, &q);
		if (r < 0)
			return r;
		if (q != end)
			return q < end && *q == ':' ? -ENOTSUP : -EINVAL;
		a->loc = BT_SDT_REG;
		a->reg = (uint8_t)r;
		return 0;
	}
	/* OFF(%REG), with OFF optional; anything else (a symbol, an index) is read at no fixed place */
	a->loc = BT_SDT_MEM;
	if (*s != '(') {
		if (!(*s == '-' || *s == '+' || isdigit((unsigned char)*s)))
			return -ENOTSUP;
		a->off = strtoll(s, &e, 0);
		if (e == s)
			return -EINVAL;
		s = e;
	}
	if (*s != '(')
		return -EINVAL;
	const char *q;
	int r = parse_reg(s + 1, &q);
	if (r < 0)
		return r;
	if (*q == ',')
		return -ENOTSUP;
	if (*q != ')' || q + 1 != end)
		return -EINVAL;
	a->reg = (uint8_t)r;
	return 0;
}

int bt_sdt_parse_args(const char *spec, struct bt_sdt_arg *args, size_t max, size_t *n)
{
	*n = 0;
	const char *p = spec;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			return 0;
		const char *end = p;
		while (*end && *end != ' ' && *end != '\t')
			end++;
		if (*n == max)
			return -EINVAL;
		int err = parse_one(p, end, &args[*n]);
		if (err)
			return err;
		(*n)++;
		p = end;
	}
}
