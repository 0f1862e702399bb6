/* vmlinux.c - a stand-in vmlinux for the kernel line-info tests: a _text label as the kernel's linker
 * script defines it, functions with DWARF lines, and an inlined function. Never run. */
__asm__(".text\n.globl _text\n_text:\n");

static inline __attribute__((always_inline)) int fxk_inner(int x)
{
	return x * 3 + 1;
}

int fxk_syscall(int x);
int fxk_irq(int x);

int fxk_syscall(int x)
{
	int r = 0;
	for (int i = 0; i < x; i++)
		r += fxk_inner(i);
	return r;
}

int fxk_irq(int x)
{
	return fxk_syscall(x) ^ fxk_inner(x);
}
