/* workload.c - the demo's CPU-bound program: a few named functions with distinct shares of the time,
 * so a profile of it has an obvious right answer. Runs for argv[1] seconds (default 10). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t hash_block(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

__attribute__((noinline)) static void checksum_data(unsigned char *buf, size_t n)
{
	for (int r = 0; r < 8; r++)
		sink += hash_block(buf, n);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

__attribute__((noinline)) static void sort_records(uint32_t *v, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = seed;
	}
	qsort(v, n, sizeof(*v), cmp_u32);
	sink += v[n / 2];
}

__attribute__((noinline)) static int is_prime(uint32_t x)
{
	if (x < 2)
		return 0;
	for (uint32_t d = 2; d * d <= x; d++)
		if (x % d == 0)
			return 0;
	return 1;
}

__attribute__((noinline)) static void count_primes(uint32_t from, uint32_t n)
{
	uint32_t c = 0;
	for (uint32_t x = from; x < from + n; x++)
		c += is_prime(x);
	sink += c;
}

__attribute__((noinline)) static void do_work(unsigned char *buf, size_t n, uint32_t *v, size_t vn,
					      uint32_t round)
{
	checksum_data(buf, n);        /* about half the time */
	sort_records(v, vn, round);   /* about a quarter, mostly in libc's qsort */
	count_primes(1000000, 3000);  /* the rest */
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	size_t n = 1 << 16, vn = 1 << 14;
	unsigned char *buf = malloc(n);
	uint32_t *v = malloc(vn * sizeof(*v));
	if (!buf || !v)
		return 1;
	memset(buf, 7, n);
	double end = now() + secs;
	for (uint32_t round = 0; now() < end; round++)
		do_work(buf, n, v, vn, round);
	free(buf);
	free(v);
	return 0;
}
