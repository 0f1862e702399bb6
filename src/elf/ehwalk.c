/* ehwalk.c - the sampler's frame step in C (bt_unw_caller of bpf/bt_unwind.h), rule for rule: a
 * stack finished in userspace gets the frames the sampler would have given it. */
#include "elf/ehwalk.h"

static bool rd(bt_ehwalk_read_fn read, void *ctx, uint64_t addr, void *buf, size_t len, uint32_t *flags)
{
	if (read(ctx, addr, buf, len))
		return true;
	*flags |= BT_UWALK_READ;
	return false;
}

/* The caller by frame pointer: [rbp] is the caller's rbp, [rbp + 8] the return address. An rbp
 * of 0 marks the outermost frame. */
static bool by_fp(struct bt_ehwalk_regs *r, bt_ehwalk_read_fn read, void *ctx, uint64_t *cfa, uint64_t *ra,
		  uint32_t *flags)
{
	uint64_t fr[2];
	if (!r->bp)
		*flags |= BT_UWALK_DONE;
	if (r->bp < r->sp || !read(ctx, r->bp, fr, sizeof(fr)))
		return false;
	*cfa = r->bp + 16;
	*ra = fr[1];
	r->bp = fr[0];
	*flags |= BT_UWALK_FP;
	return true;
}

/* A callee-saved register of the caller by its rule (c: the callee's CFA). */
static bool restore(uint8_t kind, int16_t off, uint64_t c, uint64_t *reg, bt_ehwalk_read_fn read, void *ctx,
		    uint32_t *flags)
{
	if (kind == BT_UNW_RBP_CFA)
		return rd(read, ctx, c + (uint64_t)(int64_t)off, reg, sizeof(*reg), flags);
	if (kind == BT_UNW_RBP_LOST)
		*reg = 0;
	return true;
}

/* Out of a signal trampoline: the interrupted thread's registers from the sigcontext. */
static bool signal_frame(struct bt_ehwalk_regs *r, const struct bt_unw_rule *u, bt_ehwalk_read_fn read,
			 void *ctx, uint64_t *cfa, uint64_t *ra, uint32_t *flags)
{
	uint64_t sprip[2], bp, bx;
	if (!rd(read, ctx, r->sp + (uint64_t)(int64_t)u->cfa_off, sprip, sizeof(sprip), flags) ||
	    !rd(read, ctx, r->sp + (uint64_t)(int64_t)u->rbp_off, &bp, sizeof(bp), flags) ||
	    !rd(read, ctx, r->sp + (uint64_t)(int64_t)u->rbx_off, &bx, sizeof(bx), flags))
		return false;
	*cfa = sprip[0];
	*ra = sprip[1];
	r->bp = bp;
	r->bx = bx;
	r->next_exact = true;
	return true;
}

static bool by_rule(struct bt_ehwalk_regs *r, const struct bt_unw_rule *u, bt_ehwalk_read_fn read, void *ctx,
		    uint64_t *cfa, uint64_t *ra, uint32_t *flags)
{
	uint64_t c;
	switch (u->cfa) {
	case BT_UNW_CFA_RSP:
		c = r->sp + (uint64_t)(int64_t)u->cfa_off;
		break;
	case BT_UNW_CFA_RBP:
		c = r->bp + (uint64_t)(int64_t)u->cfa_off;
		break;
	case BT_UNW_CFA_RBX:
		c = r->bx + (uint64_t)(int64_t)u->cfa_off;
		break;
	case BT_UNW_CFA_PLT:
		c = r->sp + (uint64_t)(int64_t)u->cfa_off + ((r->pc & 15) >= (uint64_t)(int64_t)u->rbp_off ? 8 : 0);
		break;
	case BT_UNW_CFA_DEREF:
		if (!rd(read, ctx, r->bp + (uint64_t)(int64_t)u->cfa_off, &c, sizeof(c), flags))
			return false;
		break;
	case BT_UNW_SIGNAL:
		return signal_frame(r, u, read, ctx, cfa, ra, flags);
	case BT_UNW_END:
		*flags |= BT_UWALK_DONE;
		return false;
	default:
		return by_fp(r, read, ctx, cfa, ra, flags);
	}
	if (!restore(u->rbx, u->rbx_off, c, &r->bx, read, ctx, flags))
		return false;
	*cfa = c;
	if (!rd(read, ctx, c - 8, ra, sizeof(*ra), flags))
		return false;
	return u->cfa == BT_UNW_CFA_PLT || restore(u->rbp, u->rbp_off, c, &r->bp, read, ctx, flags);
}

bool bt_ehwalk_step(struct bt_ehwalk_regs *r, const struct bt_unw_rule *rule, bt_ehwalk_read_fn read,
		    void *ctx, uint32_t *flags)
{
	uint64_t cfa = 0, ra = 0;
	bool ok = rule && rule->cfa != BT_UNW_NONE ? by_rule(r, rule, read, ctx, &cfa, &ra, flags)
						    : by_fp(r, read, ctx, &cfa, &ra, flags);
	/* The stack grows down: each caller's frame lies above its callee's. */
	if (!ok || cfa <= r->sp || ra == 0)
		return false;
	r->sp = cfa;
	r->pc = ra;
	r->exact = r->next_exact;
	r->next_exact = false;
	return true;
}
