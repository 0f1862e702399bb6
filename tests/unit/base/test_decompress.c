/* test_decompress.c - xz, zstd and gzip decoding against data compressed by the xz, zstd and gzip
 * command-line tools; truncated, corrupted, concatenated and oversized streams. */
#include "testutil.h"
#include "base/decompress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

struct tool {
	const char *cmd;         /* compresses stdin to stdout */
	enum bt_compression kind;
};

static const struct tool tools[] = {
	{ "xz -c", BT_COMP_XZ },
	{ "zstd -q -c", BT_COMP_ZSTD },
	{ "gzip -c", BT_COMP_GZIP },
};

static void *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
	size_t r;
	while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	fclose(f);
	*len = n;
	return buf;
}

static void write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Text-like data with some randomness, so compressors produce several blocks. */
static void *make_payload(size_t len, unsigned seed)
{
	unsigned char *p = malloc(len ? len : 1);
	assert_non_null(p);
	srand(seed);
	for (size_t i = 0; i < len; i++)
		p[i] = (rand() % 4) ? (unsigned char)('a' + i % 26) : (unsigned char)rand();
	return p;
}

struct tmp {
	char dir[64];
	char plain[128], packed[128];
};

static void tmp_make(struct tmp *t)
{
	snprintf(t->dir, sizeof(t->dir), "/tmp/bt-decomp-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->plain, sizeof(t->plain), "%s/plain", t->dir);
	snprintf(t->packed, sizeof(t->packed), "%s/packed", t->dir);
}

static void tmp_clean(struct tmp *t)
{
	unlink(t->plain);
	unlink(t->packed);
	rmdir(t->dir);
}

/* Compresses payload with the given tool; returns the compressed bytes. */
static void *compress_with(struct tmp *t, const struct tool *tl, const void *payload, size_t len,
			   size_t *clen)
{
	write_file(t->plain, payload, len);
	assert_int_equal(bt_test_run(NULL, 0, "%s < %s > %s", tl->cmd, t->plain, t->packed), 0);
	return read_file(t->packed, clen);
}

static void decompress__cli_compressed__roundtrips(void **state)
{
	struct tmp t;
	tmp_make(&t);
	size_t sizes[] = { 1, 1000, 300 * 1000 };
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		void *payload = make_payload(sizes[s], (unsigned)s + 1);
		for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
			size_t clen, olen;
			void *c = compress_with(&t, &tools[i], payload, sizes[s], &clen), *o;
			assert_int_equal(bt_decompress(c, clen, 1 << 24, &o, &olen), 0);
			assert_int_equal(olen, sizes[s]);
			assert_memory_equal(o, payload, sizes[s]);
			free(o);
			free(c);
		}
		free(payload);
	}
	tmp_clean(&t);
}

static void compression_detect__tool_output__recognised(void **state)
{
	struct tmp t;
	tmp_make(&t);
	void *payload = make_payload(100, 7);
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		size_t clen;
		void *c = compress_with(&t, &tools[i], payload, 100, &clen);
		assert_int_equal(bt_compression_detect(c, clen), tools[i].kind);
		/* one byte short of the magic is no longer recognised */
		size_t magic = tools[i].kind == BT_COMP_XZ ? 6 : tools[i].kind == BT_COMP_ZSTD ? 4 : 2;
		assert_int_equal(bt_compression_detect(c, magic - 1), BT_COMP_NONE);
		free(c);
	}
	free(payload);
	tmp_clean(&t);
	size_t elen;
	void *elf = read_file("/proc/self/exe", &elen);
	assert_int_equal(bt_compression_detect(elf, elen), BT_COMP_NONE);
	assert_int_equal(bt_compression_detect(NULL, 10), BT_COMP_NONE);
	free(elf);
}

static void decompress__output_cap__efbig_only_past_it(void **state)
{
	struct tmp t;
	tmp_make(&t);
	const size_t n = 200 * 1000;
	void *payload = make_payload(n, 3);
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		size_t clen, olen;
		void *c = compress_with(&t, &tools[i], payload, n, &clen), *o = NULL;
		assert_int_equal(bt_decompress(c, clen, n - 1, &o, &olen), -EFBIG);
		assert_null(o);
		assert_int_equal(bt_decompress(c, clen, 4096, &o, &olen), -EFBIG);
		assert_int_equal(bt_decompress(c, clen, n, &o, &olen), 0);
		assert_int_equal(olen, n);
		assert_memory_equal(o, payload, n);
		free(o);
		free(c);
	}
	free(payload);
	tmp_clean(&t);
}

/* Every proper prefix of a stream is an error; checked on exactly-sized heap copies so that a
 * sanitizer build catches any read past the end. */
static void decompress__truncated_streams__einval(void **state)
{
	struct tmp t;
	tmp_make(&t);
	const size_t n = 5000;
	void *payload = make_payload(n, 11);
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		size_t clen, olen;
		void *c = compress_with(&t, &tools[i], payload, n, &clen), *o;
		for (size_t cut = 0; cut < clen; cut++) {
			void *copy = malloc(cut ? cut : 1);
			assert_non_null(copy);
			memcpy(copy, c, cut);
			int err = bt_decompress(copy, cut, 1 << 20, &o, &olen);
			if (err != -EINVAL)
				fail_msg("%s cut at %zu of %zu: %d", tools[i].cmd, cut, clen, err);
			free(copy);
		}
		free(c);
	}
	free(payload);
	tmp_clean(&t);
}

/* The streams carry checksums (xz CRC64, zstd's content checksum as the tool writes it, gzip CRC32),
 * so a flipped byte either fails or, in a field the checksum does not cover, changes nothing. */
static void decompress__corrupted_bytes__error_or_unchanged(void **state)
{
	struct tmp t;
	tmp_make(&t);
	const size_t n = 20000;
	void *payload = make_payload(n, 5);
	srand(99);
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		size_t clen, olen;
		unsigned char *c = compress_with(&t, &tools[i], payload, n, &clen);
		int errors = 0;
		for (int round = 0; round < 400; round++) {
			unsigned char *copy = malloc(clen);
			assert_non_null(copy);
			memcpy(copy, c, clen);
			size_t pos = (size_t)rand() % clen;
			copy[pos] ^= (unsigned char)(1 + rand() % 255);
			void *o = NULL;
			int err = bt_decompress(copy, clen, 1 << 20, &o, &olen);
			if (err) {
				assert_true(err == -EINVAL || err == -EFBIG);
				errors++;
			} else {
				assert_int_equal(olen, n);
				assert_memory_equal(o, payload, n);
			}
			free(o);
			free(copy);
		}
		assert_true(errors > 300);
		free(c);
	}
	free(payload);
	tmp_clean(&t);
}

/* Concatenated streams decode to the concatenation, as each tool's own decoder does. */
static void decompress__concatenated_streams__match_tool_decoder(void **state)
{
	struct tmp t;
	tmp_make(&t);
	void *a = make_payload(3000, 21), *b = make_payload(7000, 22);
	static const char *const decoders[] = { "xz -dc", "zstd -q -dc", "gzip -dc" };
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		size_t la, lb, olen, dlen;
		void *ca = compress_with(&t, &tools[i], a, 3000, &la);
		void *cb = compress_with(&t, &tools[i], b, 7000, &lb);
		unsigned char *both = malloc(la + lb);
		assert_non_null(both);
		memcpy(both, ca, la);
		memcpy(both + la, cb, lb);
		write_file(t.packed, both, la + lb);
		assert_int_equal(bt_test_run(NULL, 0, "%s < %s > %s", decoders[i], t.packed, t.plain), 0);
		void *expect = read_file(t.plain, &dlen);
		void *o;
		assert_int_equal(bt_decompress(both, la + lb, 1 << 20, &o, &olen), 0);
		assert_int_equal(olen, dlen);
		assert_memory_equal(o, expect, dlen);
		free(o);
		free(expect);
		free(both);
		free(ca);
		free(cb);
	}
	free(a);
	free(b);
	tmp_clean(&t);
}

static void decompress__empty_payload__zero_length_buffer(void **state)
{
	struct tmp t;
	tmp_make(&t);
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		size_t clen, olen = 123;
		void *c = compress_with(&t, &tools[i], "", 0, &clen), *o = NULL;
		assert_true(clen > 0);
		assert_int_equal(bt_decompress(c, clen, 0, &o, &olen), 0);
		assert_non_null(o);
		assert_int_equal(olen, 0);
		free(o);
		free(c);
	}
	tmp_clean(&t);
}

static void decompress__not_compressed__einval(void **state)
{
	size_t len, olen;
	void *elf = read_file("/proc/self/exe", &len), *o = (void *)1;
	assert_int_equal(bt_decompress(elf, len, 1 << 20, &o, &olen), -EINVAL);
	assert_null(o);
	assert_int_equal(bt_decompress(elf, 0, 1 << 20, &o, &olen), -EINVAL);
	assert_int_equal(bt_decompress(NULL, 10, 1 << 20, &o, &olen), -EINVAL);
	/* a bare magic number, nothing after it */
	static const unsigned char xz_magic[] = { 0xfd, '7', 'z', 'X', 'Z', 0x00 };
	assert_int_equal(bt_decompress(xz_magic, sizeof(xz_magic), 1 << 20, &o, &olen), -EINVAL);
	free(elf);
}

/* A small stream that expands enormously stops at the cap instead of allocating it all. */
static void decompress__bomb__stops_at_cap(void **state)
{
	struct tmp t;
	tmp_make(&t);
	assert_int_equal(bt_test_run(NULL, 0, "head -c 200000000 /dev/zero | xz -c -1 > %s", t.packed), 0);
	size_t clen, olen;
	void *c = read_file(t.packed, &clen), *o = NULL;
	assert_true(clen < 200000000 / 100);
	assert_int_equal(bt_decompress(c, clen, 1 << 20, &o, &olen), -EFBIG);
	assert_null(o);
	free(c);
	tmp_clean(&t);
}

/* Reads an xz varint (7 bits a byte, low first) at *pos. */
static uint64_t xz_varint(const unsigned char *b, size_t *pos)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 63; shift += 7) {
		unsigned char c = b[(*pos)++];
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			break;
	}
	return v;
}

/* An xz block header rewritten (with a valid CRC) to ask for a 4 GiB dictionary: refused for the
 * memory it would take, not attempted. */
static void decompress__xz_huge_dictionary__refused(void **state)
{
	struct tmp t;
	tmp_make(&t);
	void *payload = make_payload(1000, 8);
	size_t clen, olen;
	unsigned char *c = compress_with(&t, &tools[0], payload, 1000, &clen);
	/* stream header: 12 bytes; then the block header, (size byte + 1) * 4 bytes long */
	size_t hdr = 12, hlen = ((size_t)c[hdr] + 1) * 4, pos = hdr + 2;
	unsigned char flags = c[hdr + 1];
	assert_int_equal(flags & 3, 0);  /* one filter */
	if (flags & 0x40)
		xz_varint(c, &pos);
	if (flags & 0x80)
		xz_varint(c, &pos);
	assert_int_equal(xz_varint(c, &pos), 0x21);  /* LZMA2 */
	assert_int_equal(xz_varint(c, &pos), 1);     /* one property byte: the dictionary size */
	void *o = NULL;
	assert_int_equal(bt_decompress(c, clen, 1 << 20, &o, &olen), 0);
	free(o);
	c[pos] = 40;  /* the largest: 4 GiB - 1 */
	uint32_t crc = (uint32_t)crc32(0, c + hdr, (uInt)(hlen - 4));
	for (int i = 0; i < 4; i++)
		c[hdr + hlen - 4 + i] = (unsigned char)(crc >> (8 * i));
	o = NULL;
	assert_int_equal(bt_decompress(c, clen, 1 << 20, &o, &olen), -ENOMEM);
	assert_null(o);
	free(c);
	free(payload);
	tmp_clean(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decompress__cli_compressed__roundtrips),
		cmocka_unit_test(compression_detect__tool_output__recognised),
		cmocka_unit_test(decompress__output_cap__efbig_only_past_it),
		cmocka_unit_test(decompress__truncated_streams__einval),
		cmocka_unit_test(decompress__corrupted_bytes__error_or_unchanged),
		cmocka_unit_test(decompress__concatenated_streams__match_tool_decoder),
		cmocka_unit_test(decompress__empty_payload__zero_length_buffer),
		cmocka_unit_test(decompress__not_compressed__einval),
		cmocka_unit_test(decompress__bomb__stops_at_cap),
		cmocka_unit_test(decompress__xz_huge_dictionary__refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
