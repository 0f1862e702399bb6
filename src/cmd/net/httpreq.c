/* httpreq.c - HTTP/1 request heads, parsed in place. */
#include "cmd/net/httpreq.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The end of the head: the index just past "\r\n\r\n" (or "\n\n"), or 0. */
static size_t head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (buf[i] == '\n' && buf[i + 1] == '\n')
			return i + 2;
		if (i + 3 < len && !memcmp(buf + i, "\r\n\r\n", 4))
			return i + 4;
	}
	return 0;
}

/* Content-Length among the header lines in h (NUL-terminated): its value, -1 when absent, -2 when
 * it is not a number. */
static long content_length(const char *h)
{
	for (const char *l = h; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncasecmp(l, "Content-Length:", 15))
			continue;
		const char *v = l + 15;
		while (*v == ' ' || *v == '\t')
			v++;
		if (!isdigit((unsigned char)*v))
			return -2;
		char *end;
		long n = strtol(v, &end, 10);
		while (*end == ' ' || *end == '\t' || *end == '\r')
			end++;
		return (*end && *end != '\n') || n < 0 || n == __LONG_MAX__ ? -2 : n;
	}
	return -1;
}

/* The value of header name (with its colon) among the lines in h into out: 0, -ENOENT when absent,
 * -EINVAL when given twice or longer than len - 1. */
static int header(const char *h, const char *name, char *out, size_t len)
{
	size_t nl = strlen(name);
	int found = -ENOENT;
	out[0] = '\0';
	for (const char *l = h; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncasecmp(l, name, nl))
			continue;
		if (found == 0)
			return -EINVAL;
		const char *v = l + nl;
		while (*v == ' ' || *v == '\t')
			v++;
		size_t n = strcspn(v, "\r\n");
		while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		if (n >= len)
			return -EINVAL;
		memcpy(out, v, n);
		out[n] = '\0';
		found = 0;
	}
	return found;
}

int bt_http_parse(char *buf, size_t len, struct bt_http_req *out)
{
	size_t end = head_end(buf, len);
	if (!end)
		return memchr(buf, '\0', len) ? -EINVAL : -EAGAIN;
	if (memchr(buf, '\0', end))
		return -EINVAL;
	/* the request line: METHOD SP TARGET SP HTTP/1.x */
	char *eol = memchr(buf, '\n', end);
	char *sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || sp1 == buf || (size_t)(eol - sp2 - 1) < 8 || strncmp(sp2 + 1, "HTTP/1.", 7) ||
	    sp1[1] != '/')
		return -EINVAL;
	for (char *c = buf; c < sp1; c++)
		if (!isupper((unsigned char)*c))
			return -EINVAL;
	for (char *c = sp1 + 1; c < sp2; c++)
		if ((unsigned char)*c <= 0x20 || *c == 0x7f)
			return -EINVAL;
	buf[end - 1] = '\0';
	long cl = content_length(eol + 1);
	char host[sizeof(out->host)], auth[sizeof(out->auth)];
	if (cl == -2 || header(eol + 1, "Host:", host, sizeof(host)) == -EINVAL ||
	    header(eol + 1, "Authorization:", auth, sizeof(auth)) == -EINVAL)
		return -EINVAL;
	*sp1 = *sp2 = '\0';
	char *q = memchr(sp1 + 1, '?', (size_t)(sp2 - sp1 - 1));
	if (q)
		*q++ = '\0';
	*out = (struct bt_http_req){ .method = buf, .target = sp1 + 1, .query = q ? q : "", .content_length = cl,
				     .head_len = end };
	memcpy(out->host, host, sizeof(host));
	memcpy(out->auth, auth, sizeof(auth));
	return 0;
}

/* a and b equal, in a time that does not depend on where they differ */
static bool same_secret(const char *a, size_t an, const char *b)
{
	size_t bn = strlen(b);
	unsigned char diff = an != bn;
	for (size_t i = 0; i < an; i++)
		diff |= (unsigned char)(a[i] ^ b[i % (bn ? bn : 1)]);
	return !diff && bn;
}

static int b64(char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : c >= '0' && c <= '9' ? c - '0' + 52
	       : c == '+' ? 62 : c == '/' ? 63 : -1;
}

bool bt_http_auth_ok(const char *auth, const char *token)
{
	if (!token || !*token)
		return false;
	if (!strncasecmp(auth, "Bearer ", 7))
		return same_secret(auth + 7, strlen(auth + 7), token);
	if (strncasecmp(auth, "Basic ", 6))
		return false;
	char plain[sizeof(((struct bt_http_req *)0)->auth)];
	size_t n = 0;
	unsigned acc = 0, bits = 0;
	for (const char *p = auth + 6; *p && *p != '='; p++) {
		int v = b64(*p);
		if (v < 0 || n + 1 >= sizeof(plain))
			return false;
		acc = acc << 6 | (unsigned)v;
		if ((bits += 6) >= 8) {
			bits -= 8;
			plain[n++] = (char)(acc >> bits & 0xff);
		}
	}
	plain[n] = '\0';
	const char *colon = memchr(plain, ':', n);
	bool ok = colon && same_secret(colon + 1, n - (size_t)(colon + 1 - plain), token);
	explicit_bzero(plain, sizeof(plain));
	return ok;
}

bool bt_http_host_ok(const char *host, const char *extra)
{
	char name[256];
	if (host[0] == '[') {  /* an IPv6 literal, then maybe a port */
		const char *close = strchr(host, ']');
		struct in6_addr a6;
		if (!close || (size_t)(close - host - 1) >= sizeof(name))
			return false;
		snprintf(name, sizeof(name), "%.*s", (int)(close - host - 1), host + 1);
		return inet_pton(AF_INET6, name, &a6) == 1 && (!close[1] || close[1] == ':');
	}
	size_t n = strcspn(host, ":");
	if (!n || n >= sizeof(name))
		return false;
	snprintf(name, sizeof(name), "%.*s", (int)n, host);
	struct in_addr a4;
	return inet_pton(AF_INET, name, &a4) == 1 || !strcasecmp(name, "localhost") ||
	       (extra && *extra && !strcasecmp(name, extra));
}

unsigned bt_http_query_seconds(const char *q, unsigned dflt, unsigned max)
{
	for (const char *p = q; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
		if (strncmp(p, "seconds=", 8))
			continue;
		const char *v = p + 8;
		unsigned long n = 0;
		size_t i = 0;
		for (; isdigit((unsigned char)v[i]) && i < 9; i++)
			n = n * 10 + (unsigned long)(v[i] - '0');
		if (!i || (v[i] && v[i] != '&') || n < 1 || n > max)
			return 0;
		return (unsigned)n;
	}
	return dflt;
}

/* q[0..n) percent-decoded into out: 0 or -EINVAL. */
static int decode(const char *q, size_t n, char *out, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)q[i];
		if (c == '%') {
			if (i + 2 >= n || !isxdigit((unsigned char)q[i + 1]) || !isxdigit((unsigned char)q[i + 2]))
				return -EINVAL;
			char hex[3] = { q[i + 1], q[i + 2], 0 };
			c = (int)strtol(hex, NULL, 16);
			i += 2;
		} else if (c == '+') {
			c = ' ';
		}
		if (c < 0x20 || c == 0x7f || o + 1 >= len)
			return -EINVAL;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

int bt_http_query_next(const char *query, size_t *pos, char *name, size_t nl, char *value, size_t vl)
{
	const char *p = query + *pos;
	while (*p == '&')
		p++;
	if (!*p)
		return 0;
	const char *end = strchrnul(p, '&'), *eq = memchr(p, '=', (size_t)(end - p));
	const char *ne = eq ? eq : end;
	*pos = (size_t)(end - query);
	if (decode(p, (size_t)(ne - p), name, nl) || decode(eq ? eq + 1 : end, eq ? (size_t)(end - eq - 1) : 0, value, vl))
		return -EINVAL;
	return 1;
}
