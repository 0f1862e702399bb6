/* decompress.c - one-shot decompression of xz, zstd and gzip buffers into a growing heap buffer,
 * capped so that a hostile stream cannot make buildtrace allocate without bound. */
#include "base/decompress.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

enum bt_compression bt_compression_detect(const void *buf, size_t len)
{
	static const uint8_t xz[] = { 0xfd, '7', 'z', 'X', 'Z', 0x00 };
	static const uint8_t zst[] = { 0x28, 0xb5, 0x2f, 0xfd };
	static const uint8_t gz[] = { 0x1f, 0x8b };
	if (!buf)
		return BT_COMP_NONE;
	if (len >= sizeof(xz) && memcmp(buf, xz, sizeof(xz)) == 0)
		return BT_COMP_XZ;
	if (len >= sizeof(zst) && memcmp(buf, zst, sizeof(zst)) == 0)
		return BT_COMP_ZSTD;
	if (len >= sizeof(gz) && memcmp(buf, gz, sizeof(gz)) == 0)
		return BT_COMP_GZIP;
	return BT_COMP_NONE;
}

#define BT_XZ_MEMLIMIT ((uint64_t)256 << 20)

/* The output buffer: grows geometrically, never beyond max. */
struct outbuf {
	uint8_t *p;
	size_t len, cap, max;
};

/* Makes room for at least one more byte; -EFBIG once the cap is reached. */
static int outbuf_grow(struct outbuf *o)
{
	if (o->len < o->cap)
		return 0;
	if (o->cap >= o->max)
		return -EFBIG;
	size_t ncap = o->cap ? o->cap * 2 : 64 * 1024;
	if (ncap < o->cap || ncap > o->max)
		ncap = o->max;
	uint8_t *np = realloc(o->p, ncap);
	if (!np)
		return -ENOMEM;
	o->p = np;
	o->cap = ncap;
	return 0;
}

static int unxz(const uint8_t *in, size_t len, struct outbuf *o)
{
	lzma_stream s = LZMA_STREAM_INIT;
	/* LZMA_CONCATENATED: xz files may hold several streams and stream padding. The memory limit
	 * stops a header that asks for a gigantic dictionary; real ones use a few MiB. */
	if (lzma_stream_decoder(&s, BT_XZ_MEMLIMIT, LZMA_CONCATENATED) != LZMA_OK)
		return -ENOMEM;
	s.next_in = in;
	s.avail_in = len;
	int err = 0;
	for (;;) {
		if ((err = outbuf_grow(o)) != 0)
			break;
		s.next_out = o->p + o->len;
		s.avail_out = o->cap - o->len;
		lzma_ret r = lzma_code(&s, s.avail_in ? LZMA_RUN : LZMA_FINISH);
		o->len = o->cap - s.avail_out;
		if (r == LZMA_STREAM_END)
			break;
		if (r == LZMA_MEM_ERROR || r == LZMA_MEMLIMIT_ERROR) {
			err = -ENOMEM;
			break;
		}
		if (r != LZMA_OK) {  /* corrupt, truncated, or not xz */
			err = -EINVAL;
			break;
		}
	}
	lzma_end(&s);
	return err;
}

static int unzstd(const uint8_t *in, size_t len, struct outbuf *o)
{
	ZSTD_DStream *ds = ZSTD_createDStream();
	if (!ds)
		return -ENOMEM;
	ZSTD_inBuffer ib = { in, len, 0 };
	int err = 0;
	size_t last = 1;  /* ZSTD_decompressStream's hint; 0 means a frame just ended */
	while (ib.pos < ib.size) {
		if ((err = outbuf_grow(o)) != 0)
			break;
		ZSTD_outBuffer ob = { o->p, o->cap, o->len };
		size_t before_in = ib.pos, before_out = ob.pos;
		last = ZSTD_decompressStream(ds, &ob, &ib);
		o->len = ob.pos;
		if (ZSTD_isError(last)) {
			err = ZSTD_getErrorCode(last) == ZSTD_error_memory_allocation ? -ENOMEM : -EINVAL;
			break;
		}
		/* No progress with room left in both buffers cannot happen with valid input. */
		if (ib.pos == before_in && ob.pos == before_out && ob.pos < ob.size) {
			err = -EINVAL;
			break;
		}
	}
	/* Input used up in the middle of a frame: truncated. The decoder may still hold output. */
	while (!err && last != 0) {
		if ((err = outbuf_grow(o)) != 0)
			break;
		ZSTD_outBuffer ob = { o->p, o->cap, o->len };
		size_t before_out = ob.pos;
		last = ZSTD_decompressStream(ds, &ob, &ib);
		o->len = ob.pos;
		if (ZSTD_isError(last) || (ob.pos == before_out && last != 0))
			err = -EINVAL;
	}
	ZSTD_freeDStream(ds);
	return err;
}

static int ungzip(const uint8_t *in, size_t len, struct outbuf *o)
{
	if (len > UINT32_MAX)  /* zlib counts input in uInt */
		return -EFBIG;
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)  /* 16: gzip wrapper only */
		return -ENOMEM;
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	int err = 0;
	for (;;) {
		if ((err = outbuf_grow(o)) != 0)
			break;
		size_t room = o->cap - o->len;
		z.next_out = o->p + o->len;
		z.avail_out = room > UINT32_MAX ? UINT32_MAX : (uInt)room;
		uInt before = z.avail_out;
		int r = inflate(&z, Z_NO_FLUSH);
		o->len += before - z.avail_out;
		if (r == Z_STREAM_END) {
			/* gzip allows concatenated members; other trailing bytes are ignored, as gzip -d does. */
			if (z.avail_in >= 2 && z.next_in[0] == 0x1f && z.next_in[1] == 0x8b) {
				if (inflateReset(&z) != Z_OK) {
					err = -EINVAL;
					break;
				}
				continue;
			}
			break;
		}
		if (r == Z_MEM_ERROR) {
			err = -ENOMEM;
			break;
		}
		/* Z_DATA_ERROR: corrupt; Z_BUF_ERROR or input used up with room left: truncated. */
		if (r != Z_OK || (z.avail_in == 0 && z.avail_out != 0)) {
			err = -EINVAL;
			break;
		}
	}
	inflateEnd(&z);
	return err;
}

int bt_decompress(const void *buf, size_t len, size_t max_out, void **out, size_t *outlen)
{
	if (!buf || !out || !outlen)
		return -EINVAL;
	*out = NULL;
	*outlen = 0;
	/* One byte of slack tells "exactly max_out" from "more than max_out". */
	struct outbuf o = { .max = max_out == SIZE_MAX ? max_out : max_out + 1 };
	int err;
	switch (bt_compression_detect(buf, len)) {
	case BT_COMP_XZ:
		err = unxz(buf, len, &o);
		break;
	case BT_COMP_ZSTD:
		err = unzstd(buf, len, &o);
		break;
	case BT_COMP_GZIP:
		err = ungzip(buf, len, &o);
		break;
	default:
		return -EINVAL;
	}
	if (!err && o.len > max_out)
		err = -EFBIG;
	if (err) {
		free(o.p);
		return err;
	}
	if (!o.p) {  /* an empty stream: still hand back a valid pointer */
		o.p = malloc(1);
		if (!o.p)
			return -ENOMEM;
	}
	*out = o.p;
	*outlen = o.len;
	return 0;
}
