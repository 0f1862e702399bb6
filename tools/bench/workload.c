/* workload.c - bench-work: a fixed amount of CPU-bound work on every CPU (compressing, expanding and
 * checking a fixed buffer), the load that `make bench` times with and without each profiler. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Built with frame pointers and these kept out of line, so every profiler sees the same few-deep
 * stacks a real program has, not one flat function. */
#define NOINLINE __attribute__((noinline))

#define HASH_BITS 15
#define WINDOW    (1u << 15)
#define MIN_MATCH 4
#define MAX_MATCH 258
#define MAX_CHAIN 48

struct job {
	size_t size;
	unsigned rounds;
	unsigned seed;
	uint64_t sum;
	int err;
};

/* Text-like input from a small vocabulary: compressible, with matches at every distance, and the
 * same bytes on every run. */
static void fill_input(uint8_t *buf, size_t n, unsigned seed)
{
	static const char *const words[] = {
		"profile ", "sample ", "stack ", "frame ", "symbol ", "build-id ", "kernel ", "user ",
		"mapping ", "offset ", "inline ", "function ", "the ", "of ", "and ", "a ",
	};
	uint32_t x = seed * 2654435761u + 1;
	size_t i = 0;
	while (i < n) {
		x = x * 1664525u + 1013904223u;
		const char *w = words[(x >> 24) & 15];
		for (; *w && i < n; w++)
			buf[i++] = (uint8_t)*w;
		if (((x >> 8) & 63) == 0 && i < n)
			buf[i++] = (uint8_t)('0' + ((x >> 16) % 10));
	}
}

static inline uint32_t hash4(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return (v * 2654435761u) >> (32 - HASH_BITS);
}

static NOINLINE unsigned match_length(const uint8_t *a, const uint8_t *b, size_t max)
{
	unsigned n = 0;
	while (n < max && a[n] == b[n])
		n++;
	return n;
}

/* Walks the hash chain for the longest earlier match of in[pos...]. */
static NOINLINE unsigned find_match(const uint8_t *in, size_t pos, size_t n, const int32_t *head,
				    const int32_t *prev, unsigned *dist)
{
	size_t max = n - pos < MAX_MATCH ? n - pos : MAX_MATCH;
	unsigned best = 0;
	int32_t cand = head[hash4(in + pos)];
	for (int chain = 0; cand >= 0 && chain < MAX_CHAIN; chain++) {
		if (pos - (size_t)cand > WINDOW)
			break;
		unsigned len = match_length(in + cand, in + pos, max);
		if (len > best) {
			best = len;
			*dist = (unsigned)(pos - (size_t)cand);
			if (len == max)
				break;
		}
		cand = prev[cand % WINDOW];
	}
	return best;
}

static inline void insert_pos(const uint8_t *in, size_t pos, size_t n, int32_t *head, int32_t *prev)
{
	if (n - pos < 4)
		return;
	uint32_t h = hash4(in + pos);
	prev[pos % WINDOW] = head[h];
	head[h] = (int32_t)pos;
}

static size_t put_literals(uint8_t *out, size_t o, const uint8_t *lits, size_t len)
{
	if (!len)
		return o;
	out[o++] = 0;
	out[o++] = (uint8_t)len;
	memcpy(out + o, lits, len);
	return o + len;
}

/* LZ77 tokens: 0x00 LEN BYTES... for literals, 0x01 LEN-4 DIST_LO DIST_HI for matches. */
static NOINLINE size_t compress_block(const uint8_t *in, size_t n, uint8_t *out, int32_t *head,
				      int32_t *prev)
{
	for (size_t i = 0; i < (1u << HASH_BITS); i++)
		head[i] = -1;
	size_t o = 0, lit_start = 0, pos = 0;
	while (pos < n) {
		unsigned dist = 0, len = 0;
		if (n - pos >= MIN_MATCH)
			len = find_match(in, pos, n, head, prev, &dist);
		if (len < MIN_MATCH) {
			insert_pos(in, pos, n, head, prev);
			pos++;
			if (pos - lit_start == 255 || pos == n) {
				o = put_literals(out, o, in + lit_start, pos - lit_start);
				lit_start = pos;
			}
			continue;
		}
		o = put_literals(out, o, in + lit_start, pos - lit_start);
		out[o++] = 1;
		out[o++] = (uint8_t)(len - MIN_MATCH);
		out[o++] = (uint8_t)(dist & 0xff);
		out[o++] = (uint8_t)(dist >> 8);
		for (size_t end = pos + len; pos < end; pos++)
			insert_pos(in, pos, n, head, prev);
		lit_start = pos;
	}
	return o;
}

static NOINLINE size_t expand_block(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	size_t i = 0, o = 0;
	while (i + 1 < n) {
		uint8_t kind = in[i], len = in[i + 1];
		i += 2;
		if (kind == 0) {
			if (i + len > n || o + len > cap)
				return 0;
			memcpy(out + o, in + i, len);
			i += len;
			o += len;
		} else {
			if (i + 2 > n)
				return 0;
			size_t mlen = (size_t)len + MIN_MATCH, dist = in[i] | (size_t)in[i + 1] << 8;
			i += 2;
			if (dist == 0 || dist > o || o + mlen > cap)
				return 0;
			for (size_t k = 0; k < mlen; k++, o++)
				out[o] = out[o - dist];
		}
	}
	return o;
}

static NOINLINE uint64_t checksum(const uint8_t *p, size_t n)
{
	uint64_t a = 1, b = 0;
	for (size_t i = 0; i < n; i++) {
		a = (a + p[i]) % 65521;
		b = (b + a) % 65521;
	}
	return b << 16 | a;
}

static NOINLINE int run_round(const uint8_t *in, size_t n, uint8_t *packed, uint8_t *back,
			      int32_t *head, int32_t *prev, uint64_t *sum)
{
	size_t plen = compress_block(in, n, packed, head, prev);
	size_t blen = expand_block(packed, plen, back, n);
	if (blen != n || memcmp(in, back, n) != 0)
		return -EILSEQ;
	*sum += checksum(packed, plen) ^ plen;
	return 0;
}

static void *worker(void *arg)
{
	struct job *j = arg;
	size_t n = j->size;
	/* A literal run may add 2 bytes per 255: room for the worst case. */
	uint8_t *in = malloc(n), *packed = malloc(n + n / 64 + 16), *back = malloc(n);
	int32_t *head = malloc(sizeof(int32_t) << HASH_BITS), *prev = malloc(sizeof(int32_t) * WINDOW);
	if (!in || !packed || !back || !head || !prev) {
		j->err = -ENOMEM;
		goto out;
	}
	fill_input(in, n, j->seed);
	for (unsigned r = 0; r < j->rounds && !j->err; r++)
		j->err = run_round(in, n, packed, back, head, prev, &j->sum);
out:
	free(in);
	free(packed);
	free(back);
	free(head);
	free(prev);
	return NULL;
}

static unsigned long parse_num(const char *s, unsigned long max)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v == 0 || v > max)
		return 0;
	return v;
}

int main(int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long threads = cpus > 0 ? (unsigned long)cpus : 1, rounds = 10, kib = 1024;
	int opt;
	while ((opt = getopt(argc, argv, "t:r:k:")) != -1) {
		unsigned long *dst = opt == 't' ? &threads : opt == 'r' ? &rounds : opt == 'k' ? &kib : NULL;
		if (!dst || !(*dst = parse_num(optarg, 1ul << 20))) {
			fprintf(stderr, "usage: bench-work [-t THREADS] [-r ROUNDS] [-k KIB]\n"
					"  every thread compresses, expands and checks the same KIB buffer ROUNDS times\n");
			return 2;
		}
	}
	struct job *jobs = calloc(threads, sizeof(*jobs));
	pthread_t *tids = calloc(threads, sizeof(*tids));
	if (!jobs || !tids) {
		fprintf(stderr, "bench-work: out of memory\n");
		return 1;
	}
	unsigned long started = 0;
	for (; started < threads; started++) {
		jobs[started] = (struct job){ .size = kib * 1024, .rounds = (unsigned)rounds, .seed = 1 };
		if (pthread_create(&tids[started], NULL, worker, &jobs[started]) != 0)
			break;
	}
	uint64_t sum = 0;
	int err = started == threads ? 0 : -EAGAIN;
	for (unsigned long i = 0; i < started; i++) {
		pthread_join(tids[i], NULL);
		sum += jobs[i].sum;
		if (jobs[i].err)
			err = jobs[i].err;
	}
	free(jobs);
	free(tids);
	if (err) {
		fprintf(stderr, "bench-work: %s\n", strerror(-err));
		return 1;
	}
	/* Printing the result keeps the work from being optimised away, and lets runs be compared. */
	printf("%lu threads x %lu rounds x %lu KiB: %016llx\n", threads, rounds, kib,
	       (unsigned long long)sum);
	return 0;
}
