/* esc.c - see esc.h. */
#include "base/esc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

/* The character at s (n > 0 bytes left): its length, and whether it is written as \xHH bytes. */
static size_t next(const unsigned char *s, size_t n, bool *esc)
{
	size_t k = bt_utf8_len(s, n);
	if (k == 0) {
		*esc = true;  /* not UTF-8: the one byte */
		return 1;
	}
	*esc = (k == 1 && (s[0] < 0x20 || s[0] == 0x7f || s[0] == '\\')) || (k == 2 && s[0] == 0xc2 && s[1] < 0xa0);
	return k;
}

bool bt_esc_needed(const char *s, size_t n)
{
	bool esc = false;
	for (size_t i = 0; i < n && !esc;)
		i += next((const unsigned char *)s + i, n - i, &esc);
	return esc;
}

size_t bt_esc_len(const char *s, size_t n)
{
	size_t out = 0;
	bool esc;
	for (size_t i = 0; i < n;) {
		size_t k = next((const unsigned char *)s + i, n - i, &esc);
		out += s[i] == '\\' ? 2 : esc ? 4 * k : k;
		i += k;
	}
	return out;
}

/* Writes character s (k bytes) escaped or not into out, which has room. */
static size_t put(char *out, const unsigned char *s, size_t k, bool esc)
{
	static const char hex[] = "0123456789abcdef";
	if (!esc) {
		memcpy(out, s, k);
		return k;
	}
	if (s[0] == '\\') {
		out[0] = out[1] = '\\';
		return 2;
	}
	for (size_t j = 0; j < k; j++) {
		out[4 * j] = '\\';
		out[4 * j + 1] = 'x';
		out[4 * j + 2] = hex[s[j] >> 4];
		out[4 * j + 3] = hex[s[j] & 15];
	}
	return 4 * k;
}

void bt_esc_write(FILE *f, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t plain = 0;  /* start of the run not written yet */
	bool esc;
	for (size_t i = 0; i < n;) {
		size_t k = next(u + i, n - i, &esc);
		if (esc) {
			char buf[16];
			fwrite(s + plain, 1, i - plain, f);
			fwrite(buf, 1, put(buf, u + i, k, true), f);
			plain = i + k;
		}
		i += k;
	}
	fwrite(s + plain, 1, n - plain, f);
}

char *bt_esc_str(char *buf, size_t len, const char *s)
{
	if (!len)
		return buf;
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), o = 0;
	bool esc;
	for (size_t i = 0; i < n;) {
		size_t k = next(u + i, n - i, &esc);
		if (o + (u[i] == '\\' ? 2 : esc ? 4 * k : k) >= len)
			break;
		o += put(buf + o, u + i, k, esc);
		i += k;
	}
	buf[o] = '\0';
	return buf;
}

char *bt_esc_dup(const char *s)
{
	size_t n = bt_esc_len(s, strlen(s));
	char *d = malloc(n + 1);
	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	return bt_esc_str(d, n + 1, s);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

size_t bt_unesc(char *s)
{
	size_t o = 0;
	for (size_t i = 0; s[i];) {
		int hi, lo;
		if (s[i] == '\\' && s[i + 1] == '\\') {
			s[o++] = '\\';
			i += 2;
		} else if (s[i] == '\\' && s[i + 1] == 'x' && (hi = hexval(s[i + 2])) >= 0 && (lo = hexval(s[i + 3])) >= 0 &&
			   (hi || lo)) {
			s[o++] = (char)(hi << 4 | lo);
			i += 4;
		} else {
			s[o++] = s[i++];
		}
	}
	s[o] = '\0';
	return o;
}
