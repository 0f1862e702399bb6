/* btdl.c - the small shared library the capture tests load with dlopen(). */
volatile unsigned long btdl_sink;

__attribute__((noinline)) unsigned long btdl_work(int n)
{
	for (int i = 0; i < n; i++)
		btdl_sink += i;
	return btdl_sink;
}
