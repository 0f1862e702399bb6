/* nofp_fp.c - the frame-pointer half of the nofp test program: called from code without frame
 * pointers, calling back into it. */
int nofp_leaf(int n);

__attribute__((noinline)) int fp_layer(int n)
{
	volatile int r = nofp_leaf(n);
	return r + 1;
}
