/* test_unwind.c - the CFI unwinder on this very process: registers and a copy of the stack taken
 * deep in a chain of functions (this test is built without frame pointers), unwound through the
 * test binary, cmocka and libc, against glibc's backtrace() (libgcc's own .eh_frame unwinder) at the
 * same point; through a signal handler, against the interrupted pc the kernel saved; and its
 * refusals: a copy too short, no CFI anywhere. */
#include <errno.h>
#include "testutil.h"
#include "capture/procmaps.h"
#include "elf/unwind.h"

#include <execinfo.h>
#include <inttypes.h>
#include <fcntl.h>
#include <signal.h>
#include <ucontext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct map {
	uint64_t start, end, offset;
	char path[4096];
	struct bt_cfi *cfi;
	int tried;
};

struct maps {
	struct map m[128];
	size_t n;
	uint64_t stack_end;
};

static int collect(void *ctx, const struct bt_procmap *pm)
{
	struct maps *ms = ctx;
	if (!strcmp(pm->path, "[stack]"))
		ms->stack_end = pm->end;
	if (pm->perms[2] != 'x' || pm->path[0] != '/' || ms->n == 128)
		return 0;
	struct map *m = &ms->m[ms->n++];
	memset(m, 0, sizeof(*m));
	m->start = pm->start;
	m->end = pm->end;
	m->offset = pm->offset;
	snprintf(m->path, sizeof(m->path), "%s", pm->path);
	return 0;
}

static int find(void *ctx, uint64_t pc, struct bt_cfi **cfi, uint64_t *bias)
{
	struct maps *ms = ctx;
	for (size_t i = 0; i < ms->n; i++) {
		struct map *m = &ms->m[i];
		if (pc < m->start || pc >= m->end)
			continue;
		if (!m->tried) {
			m->tried = 1;
			int fd = open(m->path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				if (bt_cfi_open(fd, &m->cfi) != 0)
					m->cfi = NULL;
				close(fd);
			}
		}
		uint64_t vaddr;
		if (!m->cfi || bt_cfi_offset_to_vaddr(m->cfi, pc - m->start + m->offset, &vaddr) != 0)
			return -1;
		*cfi = m->cfi;
		*bias = pc - vaddr;
		return 0;
	}
	return -1;
}

static int nofind(void *ctx, uint64_t pc, struct bt_cfi **cfi, uint64_t *bias)
{
	return -1;
}

/* Every pc is in a file whose build-id has not arrived yet. */
static int notyet(void *ctx, uint64_t pc, struct bt_cfi **cfi, uint64_t *bias)
{
	return -EAGAIN;
}

struct shot {
	struct bt_unwind_regs regs;
	uint8_t stack[16384];
	size_t len;
	void *bt[64];
	int nbt;
	uint64_t caller_bp;
};

/* A copy of live stack memory, other frames' included: not instrumented, as AddressSanitizer
 * would take the reads of their redzones for overflows. */
__attribute__((no_sanitize_address, noinline)) static void copy_stack(uint8_t *dst, uint64_t src, size_t len)
{
	const volatile uint8_t *p = (const volatile uint8_t *)(uintptr_t)src;
	for (size_t i = 0; i < len; i++)
		dst[i] = p[i];
}

/* Registers, then the stack above them, then backtrace(): all at one point of this function. */
__attribute__((noinline)) static void capture(struct shot *s, uint64_t stack_end)
{
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(s->regs.ip), "=r"(s->regs.sp), "=r"(s->regs.bp));
	s->len = stack_end - s->regs.sp < sizeof(s->stack) ? stack_end - s->regs.sp : sizeof(s->stack);
	copy_stack(s->stack, s->regs.sp, s->len);
	s->nbt = backtrace(s->bt, 64);
	__asm__ volatile("" ::: "memory");
}

/* level3 also keeps its rbp as it is at the call to capture (rbp changes only in prologues and
 * epilogues): what a PLT entry called from there would see. */
__attribute__((noinline)) static void level3(struct shot *s, uint64_t e)
{
	__asm__ volatile("mov %%rbp, %0" : "=r"(s->caller_bp));
	capture(s, e);
	__asm__ volatile("");
}
__attribute__((noinline)) static void level2(struct shot *s, uint64_t e) { level3(s, e); __asm__ volatile(""); }
__attribute__((noinline)) static void level1(struct shot *s, uint64_t e) { level2(s, e); __asm__ volatile(""); }

static void unwind__own_stack__same_return_addresses_as_backtrace(void **state)
{
	static struct maps ms_;
	static struct shot s_;
	struct maps *ms = &ms_;
	struct shot *s = &s_;
	assert_non_null(ms);
	assert_non_null(s);
	assert_int_equal(bt_procmaps_foreach("", getpid(), collect, ms), 0);
	assert_true(ms->stack_end > 0);
	level1(s, ms->stack_end);
	uint64_t ips[64];
	struct bt_unwind_in in = { .regs = s->regs, .stack = s->stack, .len = s->len, .find = find, .ctx = ms };
	struct bt_unwind_out out = { .ips = ips, .max = 64 };
	bt_unwind(&in, &out);
	size_t n = out.n;
	enum bt_unwind_stop why = out.why;
	/* ips[0] and bt[0] are two points inside capture(); from there on both list return addresses */
	print_message("unwound %zu frames (stop %d), backtrace %d\n", n, (int)why, s->nbt);
	assert_true(n >= 6);
	assert_int_equal(why, BT_UNWIND_END);
	/* backtrace() may itself be called through a wrapper (AddressSanitizer's): align on the first
	 * return address, then both lists must agree to the end */
	int k = 0;
	while (k < s->nbt && (uint64_t)(uintptr_t)s->bt[k] != ips[1])
		k++;
	assert_true(k < 3);
	assert_int_equal(n - 1, (size_t)(s->nbt - k));
	for (size_t i = 1; i < n; i++)
		if (ips[i] != (uint64_t)(uintptr_t)s->bt[k + i - 1])
			fail_msg("frame %zu: 0x%llx, backtrace 0x%llx", i, (unsigned long long)ips[i],
				 (unsigned long long)(uintptr_t)s->bt[k + i - 1]);
	/* rules are cached per pc range: a second walk compiles nothing new */
	size_t cached = 0;
	for (size_t i = 0; i < ms->n; i++)
		cached += bt_cfi_cached(ms->m[i].cfi);
	bt_unwind(&in, &out);
	assert_int_equal(out.n, n);
	size_t again = 0;
	for (size_t i = 0; i < ms->n; i++)
		again += bt_cfi_cached(ms->m[i].cfi);
	assert_int_equal(again, cached);
	/* max frames honoured */
	out.max = 3;
	bt_unwind(&in, &out);
	assert_int_equal(out.n, 3);
	assert_int_equal(out.why, BT_UNWIND_MAX);
	/* a copy that ends inside the first frames: the walk stops there, past the copy */
	in.len = 64;
	out.max = 64;
	bt_unwind(&in, &out);
	n = out.n;
	why = out.why;
	assert_true(n >= 1 && n < 6);
	assert_true(why == BT_UNWIND_STACK || why == BT_UNWIND_BAD);
	/* no CFI anywhere and a frame pointer that is not one: one frame, and why */
	in.len = s->len;
	in.find = nofind;
	bt_unwind(&in, &out);
	n = out.n;
	assert_true(n >= 1);
	for (size_t i = 0; i < ms->n; i++)
		bt_cfi_close(ms->m[i].cfi);
}

/* A stack whose rbp looks like a frame pointer: with no CFI the walk follows it; where the file at
 * the pc is only not known yet, the walk stops at the first frame instead of guessing. */
static void unwind__file_not_known_yet__no_frame_pointer_guess(void **state)
{
	uint64_t stack[8] = { 0 };
	const uint64_t sp = 0x7ffff000;
	stack[2] = sp + 48;         /* saved rbp of the caller, at rbp = sp + 16 */
	stack[3] = 0x401234;        /* return address */
	stack[6] = 0;               /* the caller's frame: saved rbp 0 ... */
	stack[7] = 0;               /* ... and return address 0: the end */
	uint64_t ips[8];
	struct bt_unwind_in in = { .regs = { .ip = 0x400100, .sp = sp, .bp = sp + 16 }, .stack = (uint8_t *)stack,
				   .len = sizeof(stack), .find = nofind };
	struct bt_unwind_out out = { .ips = ips, .max = 8 };
	bt_unwind(&in, &out);
	assert_int_equal(out.n, 2);
	assert_int_equal(ips[1], 0x401234);
	in.find = notyet;
	bt_unwind(&in, &out);
	assert_int_equal(out.n, 1);
	assert_int_equal(ips[0], 0x400100);
	assert_int_equal(out.why, BT_UNWIND_NO_CFI);
}

/* What the signal handler saw: its own registers and stack, and the kernel's record of the
 * interrupted thread. Handlers get no context argument of ours: these live for the one test. */
static struct shot sig_shot;
static uint64_t sig_stack_end, sig_interrupted_ip;

static void on_usr1(int sig, siginfo_t *si, void *uc_)
{
	(void)sig;
	(void)si;
	const ucontext_t *uc = uc_;
	sig_interrupted_ip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	capture(&sig_shot, sig_stack_end);
	__asm__ volatile("");  /* a call, not a tail jump: on_usr1 keeps its frame */
}

static void unwind__through_a_signal_handler__interrupted_pc_is_exact(void **state)
{
	static struct maps ms_;
	struct maps *ms = &ms_;
	assert_int_equal(bt_procmaps_foreach("", getpid(), collect, ms), 0);
	sig_stack_end = ms->stack_end;
	struct sigaction sa, old, cur;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO;
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	assert_int_equal(sigaction(SIGUSR1, NULL, &cur), 0);
	assert_int_equal(raise(SIGUSR1), 0);
	sigaction(SIGUSR1, &old, NULL);
	assert_true(sig_interrupted_ip != 0);
	uint64_t ips[64];
	uint8_t exact[64];
	struct bt_unwind_in in = { .regs = sig_shot.regs, .stack = sig_shot.stack, .len = sig_shot.len,
				   .find = find, .ctx = ms };
	struct bt_unwind_out out = { .ips = ips, .exact = exact, .max = 64 };
	bt_unwind(&in, &out);
	size_t n = out.n;
	enum bt_unwind_stop why = out.why;
	size_t j = 0;
	while (j < n && ips[j] != sig_interrupted_ip)
		j++;
	print_message("unwound %zu frames (stop %d); the interrupted pc is frame %zu\n", n, (int)why, j);
	/* capture <- on_usr1 <- the trampoline <- the interrupted pc <- ... <- _start */
	assert_true(j >= 3 && j < n);
	assert_int_equal(ips[j - 1], (uint64_t)(uintptr_t)cur.sa_restorer);
	assert_int_equal(why, BT_UNWIND_END);
	assert_true(n > j + 3);
	/* exact: where the thread was, the first pc and the one the signal interrupted; every other
	 * frame is a return address */
	for (size_t i = 0; i < n; i++)
		if (exact[i] != (i == 0 || i == j))
			fail_msg("frame %zu (0x%llx): exact %d", i, (unsigned long long)ips[i], exact[i]);
	for (size_t i = 0; i < ms->n; i++)
		bt_cfi_close(ms->m[i].cfi);
}

/* A frame whose CFA only rbx knows: rbx_frame saves rbx, keeps its entry rsp in it and realigns
 * rsp, as code built with -mstackrealign does, and describes it so (DW_CFA_def_cfa_register rbx).
 * Its callee saves rbx in turn, so a walk knows rbx there only from the stack. */
void rbx_frame(struct shot *s, uint64_t e);
__asm__(".text\n"
	".type rbx_frame, @function\n"
	"rbx_frame:\n"
	".cfi_startproc\n"
	"push %rbx\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset rbx, -16\n"
	"mov %rsp, %rbx\n"
	".cfi_def_cfa_register rbx\n"
	"and $-64, %rsp\n"
	"sub $64, %rsp\n"
	"call rbx_callee\n"
	"mov %rbx, %rsp\n"
	".cfi_def_cfa_register rsp\n"
	"pop %rbx\n"
	".cfi_def_cfa_offset 8\n"
	"ret\n"
	".cfi_endproc\n"
	".size rbx_frame, .-rbx_frame\n");

__attribute__((noinline, used)) void rbx_callee(struct shot *s, uint64_t e)
{
	__asm__ volatile("xor %%ebx, %%ebx" ::: "rbx");  /* saved on entry, with its CFI */
	capture(s, e);
	__asm__ volatile("");
}

/* Walks through rbx_frame: the caller's rbx is the value its callee saved on the stack. */
static void unwind__cfa_based_on_rbx__register_restored_from_the_stack(void **state)
{
	static struct maps ms_;
	static struct shot s_;
	struct maps *ms = &ms_;
	struct shot *s = &s_;
	assert_int_equal(bt_procmaps_foreach("", getpid(), collect, ms), 0);
	rbx_frame(s, ms->stack_end);
	uint64_t ips[64];
	struct bt_unwind_in in = { .regs = s->regs, .stack = s->stack, .len = s->len, .find = find, .ctx = ms };
	struct bt_unwind_out out = { .ips = ips, .max = 64 };
	bt_unwind(&in, &out);
	print_message("unwound %zu frames (stop %d), backtrace %d\n", out.n, (int)out.why, s->nbt);
	assert_int_equal(out.why, BT_UNWIND_END);
	int k = 0;
	while (k < s->nbt && (uint64_t)(uintptr_t)s->bt[k] != ips[1])
		k++;
	assert_true(k < 3);
	assert_int_equal(out.n - 1, (size_t)(s->nbt - k));
	for (size_t i = 1; i < out.n; i++)
		assert_int_equal(ips[i], (uint64_t)(uintptr_t)s->bt[k + i - 1]);
	/* rbx_frame's return address is among them: the walk went through it */
	bool through = false;
	for (size_t i = 0; i < out.n; i++)
		through |= ips[i] > (uint64_t)(uintptr_t)rbx_frame && ips[i] < (uint64_t)(uintptr_t)rbx_frame + 64;
	assert_true(through);
	for (size_t i = 0; i < ms->n; i++)
		bt_cfi_close(ms->m[i].cfi);
}

int main(void);

/* The run-time address of this program's PLT entry for func, from objdump and nm's address of
 * main. */
static uint64_t plt_entry(const char *func)
{
	char out[128];
	bt_test_run(out, sizeof(out), "objdump -d -j .plt /proc/%d/exe | awk '$2==\"<%s@plt>:\"{print $1}'",
		    (int)getpid(), func);
	uint64_t entry = strtoull(out, NULL, 16);
	bt_test_run(out, sizeof(out), "nm /proc/%d/exe | awk '$3==\"main\"{print $1}'", (int)getpid());
	uint64_t file_main = strtoull(out, NULL, 16);
	assert_true(entry != 0 && file_main != 0);
	return entry - file_main + (uint64_t)(uintptr_t)&main;
}

/* A thread stopped in a PLT entry: sp at the return address its call pushed (and, past the lazy
 * entry's push, one word more). The PLT's CFA is a DWARF expression of rsp and rip (nine
 * operations): the walk goes on through the caller, to the same frames as from the function the
 * entry leads to. */
static void unwind__in_a_plt_entry__walks_through_it(void **state)
{
	static struct maps ms_;
	static struct shot s_;
	static uint8_t stack[sizeof(s_.stack) + 8];
	struct maps *ms = &ms_;
	struct shot *s = &s_;
	assert_int_equal(bt_procmaps_foreach("", getpid(), collect, ms), 0);
	level1(s, ms->stack_end);
	uint64_t ips[64], pips[64];
	struct bt_unwind_in in = { .regs = s->regs, .stack = s->stack, .len = s->len, .find = find, .ctx = ms };
	struct bt_unwind_out out = { .ips = ips, .max = 64 };
	bt_unwind(&in, &out);
	assert_int_equal(out.why, BT_UNWIND_END);
	size_t n = out.n;
	/* capture()'s return address in the copy: where sp was when level3 called it. A stale copy of
	 * the value may lie below it in capture's frame (a sanitized build keeps some): the highest
	 * one within the first KiB is the slot the call pushed. */
	size_t off = SIZE_MAX;
	for (size_t o = 0; o + 8 <= s->len && o < 1024; o += 8)
		if (memcmp(s->stack + o, &ips[1], 8) == 0)
			off = o;
	assert_true(off != SIZE_MAX);
	uint64_t entry = plt_entry("raise");
	for (int pushed = 0; pushed <= 1; pushed++) {
		/* +0: the jump through the GOT slot; +11: the jump to the header, after a push */
		memset(stack, 0xee, 8);
		memcpy(stack + 8, s->stack + off, s->len - off);
		struct bt_unwind_in pin = { .regs = { .ip = entry + (pushed ? 11 : 0),
						      .sp = s->regs.sp + off - (pushed ? 8 : 0),
						      .bp = s->caller_bp },
					    .stack = pushed ? stack : stack + 8, .len = s->len - off + (pushed ? 8 : 0),
					    .find = find, .ctx = ms };
		struct bt_unwind_out pout = { .ips = pips, .max = 64 };
		bt_unwind(&pin, &pout);
		print_message("from the PLT (+%d): %zu frames (stop %d), from capture: %zu\n", pushed ? 11 : 0,
			      pout.n, (int)pout.why, n);
		assert_int_equal(pout.why, BT_UNWIND_END);
		assert_int_equal(pout.n, n);
		assert_int_equal(pips[0], pin.regs.ip);
		for (size_t i = 1; i < n; i++)
			assert_int_equal(pips[i], ips[i]);
	}
	for (size_t i = 0; i < ms->n; i++)
		bt_cfi_close(ms->m[i].cfi);
}

static void unwind__not_elf_or_no_cfi__refused(void **state)
{
	struct bt_cfi *c = NULL;
	int fd = open("/etc/hostname", O_RDONLY);
	if (fd < 0)
		fd = open("/proc/self/status", O_RDONLY);
	assert_true(fd >= 0);
	assert_true(bt_cfi_open(fd, &c) < 0);
	close(fd);
	assert_true(bt_cfi_open(-1, &c) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unwind__own_stack__same_return_addresses_as_backtrace),
		cmocka_unit_test(unwind__file_not_known_yet__no_frame_pointer_guess),
		cmocka_unit_test(unwind__through_a_signal_handler__interrupted_pc_is_exact),
		cmocka_unit_test(unwind__in_a_plt_entry__walks_through_it),
		cmocka_unit_test(unwind__cfa_based_on_rbx__register_restored_from_the_stack),
		cmocka_unit_test(unwind__not_elf_or_no_cfi__refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
