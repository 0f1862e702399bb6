/* demangle.c - C++ names through libiberty's callback demangler, bounded in output and work;
 * Rust legacy names (Itanium-shaped with a trailing hash) are decoded here into the form Rust tools
 * print: path::to::fn, no hash. */
#include "base/demangle.h"

#include <ctype.h>
#include <libiberty/demangle.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Growing output string for the Rust decoder. */
struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sb_putn(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap : 64;
		while (ncap < b->len + n + 1)
			ncap *= 2;
		char *np = realloc(b->p, ncap);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_puts(struct sbuf *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

/* A legacy Rust hash segment: 'h' and 16 hex digits. A real 64-bit hash practically always uses
 * several distinct digits; demanding five keeps C++ names that merely end like one (h0000...) C++. */
static bool is_rust_hash(const char *s, size_t n)
{
	if (n != 17 || s[0] != 'h')
		return false;
	unsigned seen = 0;
	for (size_t i = 1; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
		seen |= 1u << (isdigit((unsigned char)s[i]) ? s[i] - '0' : tolower((unsigned char)s[i]) - 'a' + 10);
	}
	return __builtin_popcount(seen) >= 5;
}

/* Decodes the $..$ escapes and ".." separators of one path segment; false on anything unknown,
 * so that a name that only looks like Rust falls back to C++ demangling. */
static bool rust_segment(struct sbuf *b, const char *s, size_t n)
{
	static const struct { const char *esc, *out; } escs[] = {
		{ "$SP$", "@" }, { "$BP$", "*" }, { "$RF$", "&" }, { "$LT$", "<" }, { "$GT$", ">" },
		{ "$LP$", "(" }, { "$RP$", ")" }, { "$C$", "," },
	};
	size_t i = 0;
	/* A segment starting with '$' is written with a '_' in front of it. */
	if (n >= 2 && s[0] == '_' && s[1] == '$')
		i = 1;
	while (i < n) {
		if (s[i] == '$') {
			const char *end = memchr(s + i + 1, '$', n - i - 1);
			if (!end)
				return false;
			size_t elen = (size_t)(end - (s + i)) + 1;
			bool known = false;
			for (size_t k = 0; k < sizeof(escs) / sizeof(escs[0]); k++) {
				if (strlen(escs[k].esc) == elen && memcmp(s + i, escs[k].esc, elen) == 0) {
					sb_puts(b, escs[k].out);
					known = true;
					break;
				}
			}
			if (!known) {
				/* $uXX$: an ASCII character by hex code. */
				if (elen < 5 || elen > 6 || s[i + 1] != 'u')
					return false;
				unsigned v = 0;
				for (size_t k = i + 2; k < i + elen - 1; k++) {
					if (!isxdigit((unsigned char)s[k]))
						return false;
					v = v * 16 + (unsigned)(isdigit((unsigned char)s[k]) ? s[k] - '0'
								 : tolower((unsigned char)s[k]) - 'a' + 10);
				}
				if (v < 0x20 || v > 0x7e)
					return false;
				char c = (char)v;
				sb_putn(b, &c, 1);
			}
			i += elen;
		} else if (s[i] == '.' && i + 1 < n && s[i + 1] == '.') {
			sb_puts(b, "::");
			i += 2;
		} else {
			if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '.')
				return false;
			sb_putn(b, s + i, 1);
			i++;
		}
	}
	return true;
}

/* _ZN <len><segment>... 17h<16 hex> E [.llvm.<id>]. NULL when name is not of that shape. */
static char *rust_legacy(const char *name)
{
	if (strncmp(name, "_ZN", 3) != 0)
		return NULL;
	const char *p = name + 3;
	struct sbuf b = { 0 };
	size_t nseg = 0;
	bool hashed = false;
	while (*p && *p != 'E') {
		if (!isdigit((unsigned char)*p) || hashed)
			goto fail;
		size_t len = 0;
		while (isdigit((unsigned char)*p)) {
			len = len * 10 + (size_t)(*p - '0');
			if (len > 4096)
				goto fail;
			p++;
		}
		if (len == 0 || strnlen(p, len) < len)
			goto fail;
		if (is_rust_hash(p, len)) {
			hashed = true;
		} else {
			if (nseg++)
				sb_puts(&b, "::");
			if (!rust_segment(&b, p, len))
				goto fail;
		}
		p += len;
	}
	/* Without the hash as last segment this is a C++ name. */
	if (*p != 'E' || !hashed || nseg == 0 || b.oom)
		goto fail;
	p++;
	/* LLVM's ThinLTO renaming suffix says nothing about the function; other suffixes make it a
	 * name this decoder does not know. */
	if (*p && strncmp(p, ".llvm.", 6) != 0)
		goto fail;
	return b.p;
fail:
	free(b.p);
	return NULL;
}

/* Longer names are left alone: no real symbol comes close, and the demangler's stack use (it
 * allocates nothing, keeping its tables on the stack) grows with the name. */
#define BT_DEMANGLE_MAX_NAME (16 * 1024)

/* Output accumulated from the demangler's callback. Back-references let a short name expand
 * exponentially (a few hundred bytes can mean gigabytes); once the output passes
 * BT_DEMANGLE_MAX_OUT, the callback jumps out, which bounds both memory and time. The demangler
 * allocates nothing itself, so leaving it that way leaks nothing. */
struct dm_out {
	jmp_buf over;
	struct sbuf b;
};

static void dm_put(const char *s, size_t n, void *opaque)
{
	struct dm_out *o = opaque;
	if (o->b.len + n > BT_DEMANGLE_MAX_OUT)
		longjmp(o->over, 1);
	sb_putn(&o->b, s, n);
}

char *bt_demangle(const char *name)
{
	/* Only _Z names: the demangler also decodes bare type encodings, turning "i" into "int". */
	if (!name || strncmp(name, "_Z", 2) != 0 || strnlen(name, BT_DEMANGLE_MAX_NAME) == BT_DEMANGLE_MAX_NAME)
		return NULL;
	char *r = rust_legacy(name);
	if (r)
		return r;
	/* volatile: read after longjmp */
	struct dm_out *volatile o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	volatile int ok = 0;
	if (setjmp(o->over) == 0)
		ok = cplus_demangle_v3_callback(name, DMGL_PARAMS | DMGL_ANSI, dm_put, o);
	r = ok && !o->b.oom && o->b.p ? o->b.p : NULL;
	if (!r)
		free(o->b.p);
	free(o);
	return r;
}
