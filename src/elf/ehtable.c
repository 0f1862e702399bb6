/* ehtable.c - compiles a file's CFI into the BPF walker's table: the FDEs are listed from the raw
 * section (dwarf_next_cfi, their address fields decoded here), and libdw evaluates the frame state
 * of each row of each FDE, which is reduced to the few rule shapes the walker evaluates (a CFA
 * based on rsp, rbp or rbx, the PLT expression, a realigned frame's saved CFA, a signal
 * trampoline's sigcontext; the return address at CFA - 8; rbp and rbx unchanged or saved at an
 * offset from the CFA). Gaps between FDEs get a row of
 * BT_UNW_NONE, so the walker falls back to frame pointers there. */
#include "elf/ehtable.h"
#include "base/grow.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A bound on what a file (possibly crafted by a hostile process) makes the compiler do: more FDEs
 * than the largest libraries have (libLLVM: about 100,000). */
#define MAX_FDES (1u << 20)

#define REG_RBX 3
#define REG_RBP 6
#define REG_RSP 7
#define REG_RIP 16

/* Pointer encodings of .eh_frame (the LSB's DW_EH_PE_*). */
#define PE_OMIT 0xff
#define PE_FORMAT 0x0f
#define PE_APPL 0x70
#define PE_PCREL 0x10

struct cie_enc {
	uint64_t offset;   /* the CIE's offset in the section */
	uint8_t enc;       /* how its FDEs encode their addresses */
	bool z;            /* its FDEs carry augmentation data before their instructions */
};

struct range {
	uint64_t lo, hi;
};

struct build {
	Elf *elf;
	Dwarf *dw;
	Dwarf_CFI *cfi;
	bool cfi_from_elf;
	Elf_Data *data;
	uint64_t sec_addr;      /* the section's address, for pc-relative fields */
	bool eh;
	struct cie_enc *cies;
	size_t ncies, capcies;
	struct range *fdes;
	size_t nfdes, capfdes;
	uint64_t base;           /* the first FDE's address: row pcs are relative to it */
	struct bt_unw_row *rows;
	size_t n, cap;
	struct bt_unw_ruleset rules;  /* each distinct rule once, rows name them by index */
	size_t bad;
	uint64_t cost;           /* what libdw's runs of the FDEs will take (CFI_MAX_COST) */
};

/* The FDE address encoding of a CIE: the 'R' entry of its augmentation data ('z' strings only;
 * .debug_frame and augmentation-less CIEs use absolute 8-byte addresses). */
static uint8_t cie_encoding(const Dwarf_CIE *cie)
{
	const char *aug = cie->augmentation;
	const uint8_t *d = cie->augmentation_data, *end = d + cie->augmentation_data_size;
	if (!aug || aug[0] != 'z' || !d)
		return 0;
	for (const char *a = aug + 1; *a && d < end; a++) {
		switch (*a) {
		case 'R':
			return *d;
		case 'L':
			d++;
			break;
		case 'P': {
			/* the personality pointer: skip it by its own encoding's size */
			uint8_t pe = *d++;
			static const uint8_t size[16] = { 8, 0, 2, 4, 8, 0, 0, 0, 0, 0, 2, 4, 8 };
			if ((pe & PE_FORMAT) > 12 || !size[pe & PE_FORMAT])
				return PE_OMIT;
			d += size[pe & PE_FORMAT];
			break;
		}
		case 'S':
		case 'B':
			break;
		default:
			return PE_OMIT;
		}
	}
	return 0;
}

/* An encoded address at *p (within [*p, end)); advances *p. pcrel is applied for the start
 * address, not for the range. */
static bool read_encoded(struct build *b, const uint8_t **p, const uint8_t *end, uint8_t enc,
			 bool apply, uint64_t *out)
{
	const uint8_t *q = *p;
	uint64_t v;
	size_t sz;
	switch (enc & PE_FORMAT) {
	case 0x00: case 0x04: case 0x0c: sz = 8; break;
	case 0x03: case 0x0b: sz = 4; break;
	case 0x02: case 0x0a: sz = 2; break;
	default: return false;
	}
	if ((size_t)(end - q) < sz)
		return false;
	if (sz == 8) {
		uint64_t x;
		memcpy(&x, q, 8);
		v = x;
	} else if (sz == 4) {
		uint32_t x;
		memcpy(&x, q, 4);
		v = (enc & 0x08) ? (uint64_t)(int64_t)(int32_t)x : x;
	} else {
		uint16_t x;
		memcpy(&x, q, 2);
		v = (enc & 0x08) ? (uint64_t)(int64_t)(int16_t)x : x;
	}
	if (apply) {
		if ((enc & PE_APPL) == PE_PCREL)
			v += b->sec_addr + (uint64_t)(q - (const uint8_t *)b->data->d_buf);
		else if (enc & PE_APPL)
			return false;
	}
	*p = q + sz;
	*out = v;
	return true;
}

static const struct cie_enc *find_cie(const struct build *b, uint64_t off)
{
	for (size_t i = b->ncies; i-- > 0;)
		if (b->cies[i].offset == off)
			return &b->cies[i];
	return NULL;
}

/* What libdw would allocate for a crafted FDE stays small: it grows a frame's register array to the
 * highest register number an instruction names (up to 2^27 of them, gigabytes) and copies the frame
 * for each DW_CFA_remember_state. So the instructions are read here first, and refused when they
 * name a register past any architecture's (x86-64's and AArch64's end below 130), nest remembered
 * states deeper than compilers do, or cannot be read to their end: the file's CFI is malformed. */
#define CFI_MAX_REG 1023
#define CFI_MAX_DEPTH 64
/* libdw runs an FDE's instructions from its start for each of its rows: n rows cost n^2 steps (an
 * FDE of 80,000 rows: 7 s). An FDE has at most 32,768 rows and a file's sum of n^2 is at most about
 * fifteen times the largest real one's (cc1: 6.9e7, its longest FDE 6,678 rows, all compiled in a
 * quarter second), so that no crafted file holds the compiler much longer than cc1 does. */
#define CFI_MAX_COST (1ull << 30)

static bool uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t c = *(*p)++;
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

static bool skip(const uint8_t **p, const uint8_t *end, uint64_t n)
{
	if ((uint64_t)(end - *p) < n)
		return false;
	*p += n;
	return true;
}

static bool reg_ok(const uint8_t **p, const uint8_t *end)
{
	uint64_t r;
	return uleb(p, end, &r) && r <= CFI_MAX_REG;
}

static bool cfi_insns_sane(struct build *b, const uint8_t *p, const uint8_t *end, uint8_t enc, uint64_t *rows)
{
	unsigned depth = 0;
	uint64_t v;
	*rows = 1;
	while (p < end) {
		uint8_t op = *p++;
		bool ok = true;
		switch (op & 0xc0) {
		case 0x40:   /* DW_CFA_advance_loc */
			++*rows;
			continue;
		case 0xc0:   /* DW_CFA_restore: register in the low bits */
			continue;
		case 0x80:   /* DW_CFA_offset */
			ok = uleb(&p, end, &v);
			if (!ok)
				return false;
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_set_loc:
			ok = read_encoded(b, &p, end, enc, false, &v);
			++*rows;
			break;
		case DW_CFA_advance_loc1: ok = skip(&p, end, 1); ++*rows; break;
		case DW_CFA_advance_loc2: ok = skip(&p, end, 2); ++*rows; break;
		case DW_CFA_advance_loc4: ok = skip(&p, end, 4); ++*rows; break;
		case DW_CFA_MIPS_advance_loc8: ok = skip(&p, end, 8); ++*rows; break;
		case DW_CFA_remember_state:
			ok = ++depth <= CFI_MAX_DEPTH;
			break;
		case DW_CFA_restore_state:
			depth -= depth > 0;
			break;
		case DW_CFA_restore_extended:
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			ok = reg_ok(&p, end);
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa:
		case DW_CFA_def_cfa_sf:
		case DW_CFA_val_offset:
		case DW_CFA_val_offset_sf:
		case DW_CFA_GNU_negative_offset_extended:
			ok = reg_ok(&p, end) && uleb(&p, end, &v);   /* an SLEB is read as a ULEB */
			break;
		case DW_CFA_register:
			ok = reg_ok(&p, end) && reg_ok(&p, end);
			break;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_def_cfa_offset_sf:
		case DW_CFA_GNU_args_size:
			ok = uleb(&p, end, &v);
			break;
		case DW_CFA_def_cfa_expression:
			ok = uleb(&p, end, &v) && skip(&p, end, v);
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			ok = reg_ok(&p, end) && uleb(&p, end, &v) && skip(&p, end, v);
			break;
		default:
			return false;
		}
		if (!ok)
			return false;
	}
	return true;
}

/* Lists every FDE's address range. */
static int list_fdes(struct build *b)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(b->elf, &eh))
		return -ENOEXEC;
	Dwarf_Off off = 0, next;
	for (;;) {
		Dwarf_CFI_Entry e;
		int r = dwarf_next_cfi(eh.e_ident, b->data, b->eh, off, &next, &e);
		if (r > 0)
			break;
		if (r < 0)
			return -ENOEXEC;
		if (dwarf_cfi_cie_p(&e)) {
			if (bt_grow((void **)&b->cies, &b->capcies, b->ncies + 1, sizeof(*b->cies), 256))
				return -ENOMEM;
			uint8_t enc = b->eh ? cie_encoding(&e.cie) : 0;
			uint64_t rows;
			if (!cfi_insns_sane(b, e.cie.initial_instructions, e.cie.initial_instructions_end, enc, &rows))
				return -ENOEXEC;
			b->cies[b->ncies++] = (struct cie_enc){
				off, enc, e.cie.augmentation && e.cie.augmentation[0] == 'z'
			};
		} else {
			/* libdw gives the CIE's section offset; were it the raw field of .eh_frame
			 * (relative to itself, 4 bytes into the FDE), this finds it too */
			const struct cie_enc *c = find_cie(b, e.fde.CIE_pointer);
			if (!c && b->eh && e.fde.CIE_pointer <= off + 4)
				c = find_cie(b, off + 4 - e.fde.CIE_pointer);
			const uint8_t *p = e.fde.start;
			uint64_t lo, len;
			if (!c || c->enc == PE_OMIT || !read_encoded(b, &p, e.fde.end, c->enc, true, &lo) ||
			    !read_encoded(b, &p, e.fde.end, c->enc & PE_FORMAT, false, &len))
				return -ENOEXEC;
			if (len) {
				if (b->nfdes == MAX_FDES)
					return -E2BIG;
				if (bt_grow((void **)&b->fdes, &b->capfdes, b->nfdes + 1, sizeof(*b->fdes), 256))
					return -ENOMEM;
				uint64_t auglen = 0, rows;
				if ((c->z && !(uleb(&p, e.fde.end, &auglen) && skip(&p, e.fde.end, auglen))) ||
				    !cfi_insns_sane(b, p, e.fde.end, c->enc, &rows))
					return -ENOEXEC;
				if (rows > (1u << 15) || (b->cost += rows * rows) > CFI_MAX_COST)
					return -E2BIG;
				b->fdes[b->nfdes++] = (struct range){ lo, lo + len };
			}
		}
		if (next <= off)
			break;
		off = next;
	}
	return b->nfdes ? 0 : -ENODATA;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The offset from the CFA of a register's "saved at CFA + N" rule as libdw spells it; false for
 * any other rule. */
static bool cfa_offset_rule(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	if (nops == 3 && ops[0].atom == DW_OP_call_frame_cfa &&
	    (ops[1].atom == DW_OP_consts || ops[1].atom == DW_OP_constu) && ops[2].atom == DW_OP_plus) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/* The register and offset of "register + offset" (DW_OP_bregN or DW_OP_bregx); -1 otherwise. */
static int breg(const Dwarf_Op *o, int64_t *off)
{
	if (o->atom >= DW_OP_breg0 && o->atom <= DW_OP_breg31) {
		*off = (int64_t)o->number;
		return o->atom - DW_OP_breg0;
	}
	if (o->atom == DW_OP_bregx) {
		*off = (int64_t)o->number2;
		return o->number > 31 ? -1 : (int)o->number;
	}
	return -1;
}

/* The PLT's CFA: rsp + N, plus 8 once the entry has pushed its index:
 * breg7 N; breg16 0; lit15; and; litK; ge; lit3; shl; plus. */
static bool plt_rule(const Dwarf_Op *ops, size_t nops, struct bt_unw_rule *row)
{
	int64_t off, zero;
	if (nops != 9 || breg(&ops[0], &off) != REG_RSP || breg(&ops[1], &zero) != REG_RIP || zero ||
	    ops[2].atom != DW_OP_lit15 || ops[3].atom != DW_OP_and || ops[4].atom < DW_OP_lit0 ||
	    ops[4].atom > DW_OP_lit15 || ops[5].atom != DW_OP_ge || ops[6].atom != DW_OP_lit3 ||
	    ops[7].atom != DW_OP_shl || ops[8].atom != DW_OP_plus)
		return false;
	row->cfa = BT_UNW_CFA_PLT;
	row->cfa_off = (int32_t)off;
	row->rbp_off = (int16_t)(ops[4].atom - DW_OP_lit0);
	return off == (int32_t)off;
}

static void compile_cfa(Dwarf_Frame *f, bool signal, struct bt_unw_rule *row)
{
	Dwarf_Op *ops = NULL;
	size_t nops = 0;
	int64_t off = 0;
	row->cfa = BT_UNW_BAD;
	if (dwarf_frame_cfa(f, &ops, &nops) != 0 || !nops)
		return;
	int reg = breg(&ops[0], &off);
	bool fits = off == (int32_t)off;
	if (nops == 1 && fits && (reg == REG_RSP || reg == REG_RBP || reg == REG_RBX)) {
		row->cfa = reg == REG_RSP ? BT_UNW_CFA_RSP : reg == REG_RBP ? BT_UNW_CFA_RBP : BT_UNW_CFA_RBX;
		row->cfa_off = (int32_t)off;
	} else if (nops == 2 && fits && reg == REG_RBP && ops[1].atom == DW_OP_deref) {
		row->cfa = BT_UNW_CFA_DEREF;
		row->cfa_off = (int32_t)off;
	} else if (nops == 2 && fits && signal && reg == REG_RSP && ops[1].atom == DW_OP_deref) {
		row->cfa = BT_UNW_SIGNAL;   /* confirmed by the other registers' rules */
		row->cfa_off = (int32_t)off;
	} else if (!plt_rule(ops, nops, row)) {
		row->cfa = BT_UNW_BAD;
		row->cfa_off = 0;
		row->rbp_off = 0;
	}
}

/* A callee-saved register's rule: unchanged, saved at CFA + off, or lost to the walker. */
static void saved_rule(Dwarf_Frame *f, int regno, uint8_t *kind, int16_t *off16)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t nops = 0;
	int64_t off;
	if (dwarf_frame_register(f, regno, mem, &ops, &nops) != 0) {
		*kind = BT_UNW_RBP_LOST;
	} else if (nops == 0) {
		/* same value, or undefined: libdw gives the latter for an rbx no rule mentions, which the
		 * ABI has the callee keep (an explicit DW_CFA_undefined of a callee-saved register is
		 * not seen in practice) */
		*kind = BT_UNW_RBP_SAME;
	} else if (cfa_offset_rule(ops, nops, &off) && off == (int16_t)off) {
		*kind = BT_UNW_RBP_CFA;
		*off16 = (int16_t)off;
	} else {
		*kind = BT_UNW_RBP_LOST;
	}
}

/* A signal frame's register saved in the sigcontext at rsp + off: its offset, or -1. libdw puts
 * the CFA on the stack before an expression rule's own operations, which here do not use it. */
static int32_t sigcontext_slot(Dwarf_Frame *f, int regno)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t nops = 0;
	int64_t off;
	if (dwarf_frame_register(f, regno, mem, &ops, &nops) != 0 || nops < 1)
		return -1;
	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa) {
		ops++;
		nops--;
	}
	if (nops != 1 || breg(&ops[0], &off) != REG_RSP || off < 0 || off > INT16_MAX)
		return -1;
	return (int32_t)off;
}

/* The return address, rbp and rbx rules; the CFA's is already in row. */
static void compile_regs(Dwarf_Frame *f, struct bt_unw_rule *row)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t nops = 0;
	int64_t off;
	if (row->cfa == BT_UNW_SIGNAL) {
		int32_t rbp = sigcontext_slot(f, REG_RBP), rbx = sigcontext_slot(f, REG_RBX);
		if (sigcontext_slot(f, REG_RIP) != row->cfa_off + 8 || rbp < 0 || rbx < 0) {
			row->cfa = BT_UNW_BAD;
			row->cfa_off = 0;
			return;
		}
		row->rbp_off = (int16_t)rbp;
		row->rbx_off = (int16_t)rbx;
		return;
	}
	if (dwarf_frame_register(f, REG_RIP, mem, &ops, &nops) != 0) {
		row->cfa = BT_UNW_BAD;
	} else if (nops == 0 && ops) {
		row->cfa = BT_UNW_END;  /* undefined: no caller */
		row->cfa_off = 0;
		row->rbp_off = 0;
		return;
	} else if (!cfa_offset_rule(ops, nops, &off) || off != -8) {
		row->cfa = BT_UNW_BAD;
	}
	if (row->cfa == BT_UNW_BAD)
		return;
	if (row->cfa != BT_UNW_CFA_PLT)   /* the PLT keeps its threshold in rbp_off; rbp is unchanged */
		saved_rule(f, REG_RBP, &row->rbp, &row->rbp_off);
	saved_rule(f, REG_RBX, &row->rbx, &row->rbx_off);
}

static bool rule_eq(void *ctx, uint64_t val, const void *key)
{
	const struct bt_unw_ruleset *s = ctx;
	return !memcmp(&s->rules[val], key, sizeof(struct bt_unw_rule));
}

void bt_unw_ruleset_init(struct bt_unw_ruleset *s)
{
	memset(s, 0, sizeof(*s));
	bt_htab_init(&s->index);
}

void bt_unw_ruleset_free(struct bt_unw_ruleset *s)
{
	free(s->rules);
	bt_htab_free(&s->index);
	memset(s, 0, sizeof(*s));
}

int64_t bt_unw_ruleset_intern(struct bt_unw_ruleset *s, const struct bt_unw_rule *rule, bool *added)
{
	struct bt_unw_rule r = *rule;
	r.pad = 0;
	*added = false;
	uint32_t h = bt_hash_bytes(&r, sizeof(r), 0);
	uint64_t *v = bt_htab_find(&s->index, h, rule_eq, s, &r);
	if (v)
		return (int64_t)*v;
	if (s->n == BT_UNW_RULES_MAX)
		return -E2BIG;   /* real files have hundreds, all of a machine's a few thousand */
	if (bt_grow((void **)&s->rules, &s->cap, s->n + 1, sizeof(*s->rules), 64) ||
	    bt_htab_insert(&s->index, h, s->n))
		return -ENOMEM;
	s->rules[s->n] = r;
	*added = true;
	return (int64_t)s->n++;
}

void bt_unw_ruleset_pop(struct bt_unw_ruleset *s)
{
	if (!s->n)
		return;
	s->n--;
	bt_htab_remove(&s->index, bt_hash_bytes(&s->rules[s->n], sizeof(s->rules[s->n]), 0), rule_eq, s,
		       &s->rules[s->n]);
}

static int push_row(struct build *b, uint64_t pc, const struct bt_unw_rule *rule)
{
	if (pc - b->base > UINT32_MAX)
		return -E2BIG;   /* the code it covers spans more than 4 GiB */
	bool added;
	int64_t k = bt_unw_ruleset_intern(&b->rules, rule, &added);
	if (k < 0)
		return (int)k;
	uint32_t rel = (uint32_t)(pc - b->base);
	if (b->n && b->rows[b->n - 1].pc == rel)
		b->n--;   /* an empty range: the later row wins */
	/* a row that changes nothing the walker reads is merged into the one before */
	if (b->n && b->rows[b->n - 1].rule == (uint32_t)k)
		return 0;
	if (b->n == BT_UNW_ROWS_MAX)
		return -E2BIG;   /* more than the walker's array could ever hold */
	if (bt_grow((void **)&b->rows, &b->cap, b->n + 1, sizeof(*b->rows), 256))
		return -ENOMEM;
	b->rows[b->n++] = (struct bt_unw_row){ rel, (uint32_t)k };
	return 0;
}

/* The rows of one FDE's range [lo, hi), one per change libdw reports. */
static int compile_fde(struct build *b, uint64_t lo, uint64_t hi)
{
	uint64_t pc = lo;
	while (pc < hi) {
		Dwarf_Frame *f = NULL;
		struct bt_unw_rule row = { 0 };
		if (dwarf_cfi_addrframe(b->cfi, pc, &f) != 0 || !f) {
			row.cfa = BT_UNW_BAD;
			b->bad++;
			return push_row(b, pc, &row);
		}
		Dwarf_Addr start = pc, end = hi;
		bool signal = false;
		if (dwarf_frame_info(f, &start, &end, &signal) < 0 || end <= pc)
			end = pc + 1;
		compile_cfa(f, signal, &row);
		compile_regs(f, &row);
		free(f);
		if (row.cfa == BT_UNW_BAD)
			b->bad++;
		int err = push_row(b, pc, &row);
		if (err)
			return err;
		pc = end < hi ? end : hi;
	}
	return 0;
}

static int compile_all(struct build *b)
{
	int err = list_fdes(b);
	if (err)
		return err;
	qsort(b->fdes, b->nfdes, sizeof(*b->fdes), cmp_range);
	uint64_t covered = b->fdes[0].lo;
	b->base = covered;
	/* rule 0 is the one of no CFI, as in the walker's shared array */
	struct bt_unw_rule none = { 0 };
	bool added;
	if ((err = (int)bt_unw_ruleset_intern(&b->rules, &none, &added)) < 0)
		return err;
	for (size_t i = 0; i < b->nfdes; i++) {
		uint64_t lo = b->fdes[i].lo, hi = b->fdes[i].hi;
		if (hi <= covered)
			continue;   /* inside an FDE already compiled */
		if (lo < covered)
			lo = covered;
		if (lo > covered) {
			if ((err = push_row(b, covered, &none)))
				return err;
		}
		if ((err = compile_fde(b, lo, hi)))
			return err;
		covered = hi;
	}
	/* past the last FDE: no CFI (merged into a NONE row already there) */
	return push_row(b, covered, &none);
}

/* The section to read: .eh_frame, else .debug_frame (decompressed when it is). */
static int open_cfi(struct build *b)
{
	size_t shstrndx;
	if (elf_kind(b->elf) != ELF_K_ELF || elf_getshdrstrndx(b->elf, &shstrndx) != 0)
		return -ENOEXEC;
	Elf_Scn *eh = NULL, *dbg = NULL;
	for (Elf_Scn *s = NULL; (s = elf_nextscn(b->elf, s));) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(s, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(b->elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".eh_frame") && sh.sh_size)
			eh = s;
		else if (!strcmp(name, ".debug_frame") && sh.sh_size)
			dbg = s;
	}
	Elf_Scn *s = eh ? eh : dbg;
	if (!s)
		return -ENODATA;
	GElf_Shdr sh;
	if (!gelf_getshdr(s, &sh))
		return -ENOEXEC;
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(s, 0, 0) < 0)
		return -ENOEXEC;
	b->eh = s == eh;
	b->sec_addr = sh.sh_addr;
	b->data = elf_getdata(s, NULL);
	if (!b->data || !b->data->d_buf)
		return -ENOEXEC;
	if (b->eh) {
		b->cfi = dwarf_getcfi_elf(b->elf);
		b->cfi_from_elf = b->cfi != NULL;
	} else {
		b->dw = dwarf_begin_elf(b->elf, DWARF_C_READ, NULL);
		b->cfi = b->dw ? dwarf_getcfi(b->dw) : NULL;
	}
	return b->cfi ? 0 : -ENOEXEC;
}

static int compile_elf(Elf *elf, struct bt_ehtable *out)
{
	memset(out, 0, sizeof(*out));
	struct build b = { .elf = elf };
	bt_unw_ruleset_init(&b.rules);
	int err = open_cfi(&b);
	if (!err)
		err = compile_all(&b);
	if (!err) {
		out->base = b.base;
		out->rows = b.rows;
		out->n = b.n;
		out->rules = b.rules.rules;
		out->nrules = b.rules.n;
		out->fdes = b.nfdes;
		out->bad = b.bad;
		out->debug_frame = !b.eh;
		b.rows = NULL;
		b.rules.rules = NULL;
	}
	if (b.cfi_from_elf)
		dwarf_cfi_end(b.cfi);
	if (b.dw)
		dwarf_end(b.dw);
	free(b.rows);
	bt_unw_ruleset_free(&b.rules);
	free(b.cies);
	free(b.fdes);
	return err;
}

int bt_ehtable_compile(int fd, struct bt_ehtable *out)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	int err = compile_elf(elf, out);
	elf_end(elf);
	return err;
}

int bt_ehtable_compile_mem(const void *buf, size_t len, struct bt_ehtable *out)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	Elf *elf = elf_memory((char *)buf, len);
	if (!elf)
		return -ENOEXEC;
	int err = compile_elf(elf, out);
	elf_end(elf);
	return err;
}

void bt_ehtable_free(struct bt_ehtable *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->rules);
	memset(t, 0, sizeof(*t));
}

const struct bt_unw_rule *bt_ehtable_lookup(const struct bt_ehtable *t, uint64_t vaddr)
{
	if (!t->n || vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return NULL;
	uint32_t x = (uint32_t)(vaddr - t->base);
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->rows[mid].pc <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || t->rows[lo - 1].rule >= t->nrules)
		return NULL;
	return &t->rules[t->rows[lo - 1].rule];
}

size_t bt_ehtable_bytes(const struct bt_ehtable *t)
{
	return t ? t->n * sizeof(*t->rows) + t->nrules * sizeof(*t->rules) : 0;
}
