/* trlib.c - a library built in two versions (-DVER=1 and -DVER=2) under one name: trlib_work sits
 * at another offset in each, so a probe resolved for one build would land elsewhere in the other. */
static volatile unsigned long sink;

#if VER == 2
/* Moves what follows: the versions' offsets differ. */
__attribute__((noinline, used)) void trlib_v2_padding(void)
{
	__asm__ volatile(".skip 4096, 0x90");
}
#endif

__attribute__((noinline)) void trlib_work(int i)
{
	sink += (unsigned long)i;
	__asm__ volatile("" ::: "memory");
}
