/* unwind.c - the CFI unwinder: libdw reads a file's .eh_frame (or .debug_frame); the frame state
 * for a pc is compiled once into a rule that holds for the whole pc range libdw reports, cached in
 * a sorted array, and evaluated on the sample's registers and stack copy. x86_64 DWARF register
 * numbers: 3 rbx, 6 rbp, 7 rsp, 12-15 r12-r15, 16 the return address. */
#include "elf/unwind.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elffile.h"

#define REG_BP 6
#define REG_SP 7
#define REG_RA 16
/* The registers a callee saves for its caller (rbx, rbp, r12-r15): where a frame saved them, the
 * caller's values are known, and a caller whose CFA or return address rule is based on one of
 * them (a frame that realigns its stack, say) can be walked. */
static const uint8_t SAVED[] = { 3, REG_BP, 12, 13, 14, 15 };
#define NSAVED (sizeof(SAVED) / sizeof(SAVED[0]))
#define CFA_MAX_OPS 16
#define EVAL_STACK 16

enum rule_kind { R_UNDEF, R_SAME, R_LOC, R_VAL, R_BAD };

struct reg_rule {
	uint8_t kind;
	uint8_t nops;
	const Dwarf_Op *ext;     /* libdw's own, alive as long as the CFI; else the copy in mem */
	Dwarf_Op mem[3];
};

struct rule {
	uint64_t start, end;     /* pc range it holds for */
	bool bad;                /* no usable rule: unwinding stops here */
	bool signal;             /* a signal frame: its return address is an exact pc */
	uint8_t cfa_nops;
	Dwarf_Op cfa[CFA_MAX_OPS];
	struct reg_rule ra;
	struct reg_rule saved[NSAVED];  /* one per SAVED register */
};

struct bt_cfi {
	int fd;
	Elf *elf;
	Dwarf *dw;               /* for .debug_frame only */
	Dwarf_CFI *cfi;
	bool cfi_from_elf;
	struct bt_elf_layout layout;
	struct rule *rules;      /* sorted by start, not overlapping */
	size_t n, cap;
};

/* The CFI of an opened libelf handle: .eh_frame, else .debug_frame. */
static int cfi_from(struct bt_cfi *c)
{
	c->cfi = dwarf_getcfi_elf(c->elf);
	c->cfi_from_elf = c->cfi != NULL;
	if (!c->cfi) {
		c->dw = dwarf_begin_elf(c->elf, DWARF_C_READ, NULL);
		c->cfi = c->dw ? dwarf_getcfi(c->dw) : NULL;
	}
	return c->cfi ? 0 : -ENODATA;
}

static void cfi_undo(struct bt_cfi *c)
{
	if (c->dw)
		dwarf_end(c->dw);
	if (c->elf)
		elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

int bt_cfi_open(int fd, struct bt_cfi **out)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	struct bt_cfi *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (c->fd < 0) {
		int e = -errno;
		free(c);
		return e;
	}
	int err = -ENOEXEC;
	struct bt_elf *be = NULL;
	/* the layout through the ELF core, the CFI through libdw, both read with pread */
	if (bt_elf_open_fd(c->fd, &be) != 0 || bt_elf_layout(be, &c->layout) != 0) {
		bt_elf_close(be);
		cfi_undo(c);
		return err;
	}
	bt_elf_close(be);
	c->elf = elf_begin(c->fd, ELF_C_READ, NULL);
	if (!c->elf || elf_kind(c->elf) != ELF_K_ELF || (err = cfi_from(c)) != 0) {
		cfi_undo(c);
		return err;
	}
	*out = c;
	return 0;
}

int bt_cfi_open_mem(const void *buf, size_t len, struct bt_cfi **out)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	struct bt_cfi *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = -1;
	struct bt_elf *be = NULL;
	int err = -ENOEXEC;
	if (bt_elf_open_mem(buf, len, &be) != 0 || bt_elf_layout(be, &c->layout) != 0) {
		bt_elf_close(be);
		cfi_undo(c);
		return err;
	}
	bt_elf_close(be);
	c->elf = elf_memory((char *)buf, len);
	if (!c->elf || elf_kind(c->elf) != ELF_K_ELF || (err = cfi_from(c)) != 0) {
		cfi_undo(c);
		return err;
	}
	*out = c;
	return 0;
}

void bt_cfi_close(struct bt_cfi *c)
{
	if (!c)
		return;
	if (c->cfi_from_elf)
		dwarf_cfi_end(c->cfi);
	if (c->dw)
		dwarf_end(c->dw);
	elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	free(c->rules);
	free(c);
}

int bt_cfi_offset_to_vaddr(const struct bt_cfi *c, uint64_t offset, uint64_t *vaddr)
{
	return bt_elf_offset_to_vaddr(&c->layout, offset, vaddr);
}

size_t bt_cfi_cached(const struct bt_cfi *c)
{
	return c ? c->n : 0;
}

size_t bt_cfi_bytes(const struct bt_cfi *c)
{
	if (!c)
		return 0;
	uint64_t sections = bt_elf_raw_section_bytes(c->elf, c->cfi_from_elf ? ".eh_frame" : ".debug_");
	return sizeof(*c) + c->cap * sizeof(*c->rules) + (size_t)sections;
}

static void compile_reg(Dwarf_Frame *f, int regno, struct reg_rule *r)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t nops = 0;
	memset(r, 0, sizeof(*r));
	if (dwarf_frame_register(f, regno, mem, &ops, &nops) != 0) {
		r->kind = R_BAD;
		return;
	}
	if (nops == 0) {
		r->kind = ops ? R_UNDEF : R_SAME;
		return;
	}
	r->kind = ops[nops - 1].atom == DW_OP_stack_value ? R_VAL : R_LOC;
	if (r->kind == R_VAL)
		nops--;
	if (nops > 255) {
		r->kind = R_BAD;
		return;
	}
	r->nops = (uint8_t)nops;
	if (ops == mem) {
		memcpy(r->mem, mem, nops * sizeof(*mem));
		r->ext = NULL;
	} else {
		r->ext = ops;
	}
}

/* The rule for vaddr: from the cache, else compiled from libdw's frame state and cached. */
static const struct rule *rule_for(struct bt_cfi *c, uint64_t vaddr)
{
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->rules[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && vaddr < c->rules[lo - 1].end)
		return &c->rules[lo - 1];
	Dwarf_Frame *f = NULL;
	if (dwarf_cfi_addrframe(c->cfi, vaddr, &f) != 0 || !f)
		return NULL;
	struct rule r = { 0 };
	Dwarf_Addr start = vaddr, end = vaddr + 1;
	bool sig = false;
	if (dwarf_frame_info(f, &start, &end, &sig) < 0 || start > vaddr || end <= vaddr) {
		start = vaddr;
		end = vaddr + 1;
	}
	r.start = start;
	r.end = end;
	r.signal = sig;
	Dwarf_Op *ops = NULL;
	size_t nops = 0;
	if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops == 0 || nops > CFA_MAX_OPS) {
		r.bad = true;
	} else {
		memcpy(r.cfa, ops, nops * sizeof(*ops));
		r.cfa_nops = (uint8_t)nops;
	}
	compile_reg(f, REG_RA, &r.ra);
	for (size_t i = 0; i < NSAVED; i++)
		compile_reg(f, SAVED[i], &r.saved[i]);
	free(f);
	/* Ranges of one CFI do not overlap; the new one goes where the search ended. */
	if (lo < c->n && c->rules[lo].start < r.end)
		r.end = c->rules[lo].start;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 64;
		struct rule *nr = realloc(c->rules, ncap * sizeof(*nr));
		if (!nr)
			return NULL;
		c->rules = nr;
		c->cap = ncap;
	}
	memmove(&c->rules[lo + 1], &c->rules[lo], (c->n - lo) * sizeof(*c->rules));
	c->rules[lo] = r;
	c->n++;
	return &c->rules[lo];
}

struct regs {
	uint64_t v[17];
	uint32_t known;          /* bit per register */
};

struct mem {
	const uint8_t *stack;
	size_t len;
	uint64_t base;
};

static bool read_u64(const struct mem *m, uint64_t addr, uint64_t *out)
{
	if (addr < m->base || addr - m->base > m->len || m->len - (addr - m->base) < 8)
		return false;
	memcpy(out, m->stack + (addr - m->base), 8);
	return true;
}

/* What CFI expressions are evaluated against: the callee's registers, the copy of the stack, and
 * the CFA once it is known (DW_OP_call_frame_cfa pushes it; the CFA's own rule cannot). */
struct eval_ctx {
	const struct regs *r;
	const struct mem *m;
	uint64_t cfa;
	bool have_cfa;
};

struct eval_stack {
	uint64_t v[EVAL_STACK];
	size_t n;
};

/* An arithmetic or comparison operation on x (below) and b (on top of the stack). */
static uint64_t binop(uint8_t atom, uint64_t x, uint64_t b)
{
	int64_t sx = (int64_t)x, sb = (int64_t)b;
	switch (atom) {
	case DW_OP_plus: return x + b;
	case DW_OP_minus: return x - b;
	case DW_OP_and: return x & b;
	case DW_OP_or: return x | b;
	case DW_OP_xor: return x ^ b;
	case DW_OP_shl: return b < 64 ? x << b : 0;
	case DW_OP_shr: return b < 64 ? x >> b : 0;
	case DW_OP_mul: return x * b;
	case DW_OP_ge: return sx >= sb;
	case DW_OP_gt: return sx > sb;
	case DW_OP_le: return sx <= sb;
	case DW_OP_lt: return sx < sb;
	case DW_OP_eq: return x == b;
	default: return x != b;
	}
}

/* One operation of an expression, applied to the stack; false when it cannot be evaluated. */
static bool step(const struct eval_ctx *x, const Dwarf_Op *o, struct eval_stack *s)
{
	const struct regs *r = x->r;
#define PUSH(v_) do { if (s->n == EVAL_STACK) return false; s->v[s->n++] = (v_); } while (0)
#define NEED(k) do { if (s->n < (k)) return false; } while (0)
	uint8_t a = o->atom;
	if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
		PUSH((uint64_t)(a - DW_OP_lit0));
		return true;
	}
	if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
		unsigned reg = a - DW_OP_breg0;
		if (reg > 16 || !(r->known & (1u << reg)))
			return false;
		PUSH(r->v[reg] + (uint64_t)(int64_t)o->number);
		return true;
	}
	switch (a) {
	case DW_OP_bregx:
		if (o->number > 16 || !(r->known & (1u << o->number)))
			return false;
		PUSH(r->v[o->number] + (uint64_t)(int64_t)o->number2);
		return true;
	case DW_OP_call_frame_cfa:
		if (!x->have_cfa)
			return false;
		PUSH(x->cfa);
		return true;
	case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u: case DW_OP_const8u:
	case DW_OP_constu: case DW_OP_addr:
		PUSH(o->number);
		return true;
	case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s: case DW_OP_const8s:
	case DW_OP_consts:
		PUSH((uint64_t)(int64_t)o->number);
		return true;
	case DW_OP_plus_uconst:
		NEED(1);
		s->v[s->n - 1] += o->number;
		return true;
	case DW_OP_deref: {
		NEED(1);
		uint64_t v;
		if (!read_u64(x->m, s->v[s->n - 1], &v))
			return false;
		s->v[s->n - 1] = v;
		return true;
	}
	case DW_OP_dup: {
		NEED(1);
		uint64_t t = s->v[s->n - 1];
		PUSH(t);
		return true;
	}
	case DW_OP_drop:
		NEED(1);
		s->n--;
		return true;
	case DW_OP_swap: {
		NEED(2);
		uint64_t t = s->v[s->n - 1];
		s->v[s->n - 1] = s->v[s->n - 2];
		s->v[s->n - 2] = t;
		return true;
	}
	case DW_OP_nop:
		return true;
	case DW_OP_plus: case DW_OP_minus: case DW_OP_and: case DW_OP_or: case DW_OP_xor:
	case DW_OP_shl: case DW_OP_shr: case DW_OP_mul:
	case DW_OP_ge: case DW_OP_gt: case DW_OP_le: case DW_OP_lt: case DW_OP_eq: case DW_OP_ne:
		NEED(2);
		s->n--;
		s->v[s->n - 1] = binop(a, s->v[s->n - 1], s->v[s->n]);
		return true;
	default:
		return false;
	}
#undef PUSH
#undef NEED
}

/* A DWARF expression of the kinds CFI uses: the value left on top of the stack. */
static bool eval(const struct eval_ctx *x, const Dwarf_Op *ops, size_t n, uint64_t *out)
{
	struct eval_stack s;
	s.n = 0;
	for (size_t i = 0; i < n; i++)
		if (!step(x, &ops[i], &s))
			return false;
	if (s.n == 0)
		return false;
	*out = s.v[s.n - 1];
	return true;
}

/* A register of the caller by its rule; false when it cannot be had (undefined included). */
static bool caller_reg(const struct eval_ctx *x, const struct reg_rule *rr, int regno, uint64_t *out)
{
	uint64_t v;
	switch (rr->kind) {
	case R_SAME:
		if (!(x->r->known & (1u << regno)))
			return false;
		*out = x->r->v[regno];
		return true;
	case R_LOC:
		return eval(x, rr->ext ? rr->ext : rr->mem, rr->nops, &v) && read_u64(x->m, v, out);
	case R_VAL:
		return eval(x, rr->ext ? rr->ext : rr->mem, rr->nops, out);
	default:
		return false;
	}
}

/* The caller's values of the SAVED registers, by the rules of the callee's frame, into r (which
 * x reads the callee's from): known where the rule gives one. */
static void caller_saved(const struct eval_ctx *x, const struct rule *rule, struct regs *r)
{
	uint64_t v[NSAVED];
	uint32_t known = (1u << REG_SP) | (1u << REG_RA);
	for (size_t i = 0; i < NSAVED; i++)
		if (caller_reg(x, &rule->saved[i], SAVED[i], &v[i]))
			known |= 1u << SAVED[i];
	for (size_t i = 0; i < NSAVED; i++)
		r->v[SAVED[i]] = known & (1u << SAVED[i]) ? v[i] : 0;
	r->known = known;
}

void bt_unwind(const struct bt_unwind_in *in, struct bt_unwind_out *out)
{
	enum bt_unwind_stop stop = BT_UNWIND_MAX;
	struct mem m = { in->stack, in->len, in->regs.sp };
	struct regs r = { .known = (1u << REG_SP) | (1u << REG_BP) | (1u << REG_RA) };
	r.v[REG_SP] = in->regs.sp;
	r.v[REG_BP] = in->regs.bp;
	r.v[REG_RA] = in->regs.ip;
	if (in->regs.have_saved) {
		const uint64_t v[] = { in->regs.bx, in->regs.r12, in->regs.r13, in->regs.r14, in->regs.r15 };
		const uint8_t regno[] = { 3, 12, 13, 14, 15 };
		for (size_t i = 0; i < sizeof(regno); i++) {
			r.v[regno[i]] = v[i];
			r.known |= 1u << regno[i];
		}
	}
	size_t n = 0, max = out->max;
	bool exact = true;   /* the first pc is where the thread was; the others are return addresses */
	while (n < max) {
		uint64_t pc = r.v[REG_RA];
		if (out->exact)
			out->exact[n] = exact;
		out->ips[n++] = pc;
		if (n == max)
			break;
		struct bt_cfi *cfi = NULL;
		uint64_t bias = 0;
		const struct rule *rule = NULL;
		uint64_t look = exact ? pc : pc - 1;
		int found = in->find(in->ctx, look, &cfi, &bias);
		if (found == 0 && cfi) {
			rule = rule_for(cfi, look - bias);
		} else if (found == -EAGAIN) {
			stop = BT_UNWIND_NO_CFI;
			break;
		}
		uint64_t cfa = 0, ra = 0, bp = 0;
		if (rule && !rule->bad) {
			if (rule->ra.kind == R_UNDEF) {
				stop = BT_UNWIND_END;
				break;
			}
			struct eval_ctx x = { .r = &r, .m = &m };
			bool have_cfa = eval(&x, rule->cfa, rule->cfa_nops, &cfa);
			x.cfa = cfa;
			x.have_cfa = true;
			if (!have_cfa || !caller_reg(&x, &rule->ra, REG_RA, &ra)) {
				stop = cfa >= m.base + m.len ? BT_UNWIND_STACK : BT_UNWIND_BAD;
				break;
			}
			caller_saved(&x, rule, &r);
			exact = rule->signal;
		} else {
			/* No CFI: the frame pointer chain, if this frame keeps one. */
			uint64_t fp = r.v[REG_BP];
			if (!(r.known & (1u << REG_BP)) || fp < r.v[REG_SP] || !read_u64(&m, fp + 8, &ra) ||
			    !read_u64(&m, fp, &bp)) {
				stop = rule ? BT_UNWIND_BAD : BT_UNWIND_NO_CFI;
				break;
			}
			cfa = fp + 16;
			r.known = (1u << REG_SP) | (1u << REG_RA) | (1u << REG_BP);
			r.v[REG_BP] = bp;
			exact = false;
		}
		/* The stack grows down: each caller's frame is above its callee's. */
		if (cfa <= r.v[REG_SP] || ra == 0) {
			stop = ra == 0 ? BT_UNWIND_END : BT_UNWIND_BAD;
			break;
		}
		r.v[REG_SP] = cfa;
		r.v[REG_RA] = ra;
	}
	out->n = n;
	out->why = stop;
}
