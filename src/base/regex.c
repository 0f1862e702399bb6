/* regex.c - RE2 patterns translated into POSIX extended ones, one pass over the pattern: groups
 * renumbered (non-capturing groups become plain ones that no $N names), Perl classes and escapes
 * spelled out, bracket expressions reordered so that ']', '^', '-' and '[' mean themselves. */
#include "base/regex.h"
#include "base/grow.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sbuf {
	char *p;
	size_t len, cap;
	int err;
};

static void put(struct sbuf *b, const char *s, size_t n)
{
	if (b->err || bt_grow((void **)&b->p, &b->cap, b->len + n + 1, 1, 64)) {
		b->err = -ENOMEM;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void puts_(struct sbuf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void putch(struct sbuf *b, char c)
{
	put(b, &c, 1);
}

struct xlate {
	const char *p;        /* the pattern still to read */
	struct sbuf out;
	struct bt_regex *r;
	char *err;
	size_t errlen;
};

static int fail(struct xlate *x, const char *fmt, ...)
{
	if (x->err && x->errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(x->err, x->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* One byte meaning itself outside brackets. */
static void literal(struct sbuf *b, unsigned char c)
{
	if (strchr(".[]()*+?{}|^$\\", c))
		putch(b, '\\');
	putch(b, (char)c);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* \xHH or \x{H...} at x->p (past the backslash and the x): the byte, or -1. */
static int hex_escape(struct xlate *x)
{
	const char *p = x->p;
	int v = 0;
	if (*p == '{') {
		int n = 0;
		for (p++; *p && *p != '}'; p++, n++)
			if (hexval(*p) < 0 || n > 6 || (v = v * 16 + hexval(*p)) > 0xff)
				return -1;
		if (*p != '}' || n == 0)
			return -1;
		x->p = p + 1;
		return v;
	}
	if (hexval(p[0]) < 0 || hexval(p[1]) < 0)
		return -1;
	x->p = p + 2;
	return hexval(p[0]) * 16 + hexval(p[1]);
}

/* The control character an escape letter names (\n, \t ...), or 0. */
static char control(char c)
{
	switch (c) {
	case 'n': return '\n';
	case 't': return '\t';
	case 'r': return '\r';
	case 'f': return '\f';
	case 'v': return '\v';
	case 'a': return '\a';
	}
	return 0;
}

/* Perl classes: what goes between brackets for them (negated: the same after '^'). */
static const char *perl_class(char c)
{
	switch (c | 0x20) {
	case 'd': return "0-9";
	case 'w': return "0-9A-Za-z_";
	case 's': return "\t\n\f\r ";
	}
	return NULL;
}

/* An escape outside brackets; x->p at the backslash. */
static int escape_out(struct xlate *x)
{
	char c = x->p[1];
	if (!c)
		return fail(x, "a trailing backslash");
	x->p += 2;
	const char *cls = perl_class(c);
	if (cls) {
		puts_(&x->out, c >= 'a' ? "[" : "[^");
		puts_(&x->out, cls);
		putch(&x->out, ']');
	} else if (control(c)) {
		putch(&x->out, control(c));
	} else if (c == 'x') {
		int v = hex_escape(x);
		if (v <= 0)
			return fail(x, v == 0 ? "\\x00: text never holds a NUL byte" : "a malformed \\x escape");
		literal(&x->out, (unsigned char)v);
	} else if (c == 'b' || c == 'B') {
		putch(&x->out, '\\');
		putch(&x->out, c);
	} else if (c == 'A' || c == 'z') {
		putch(&x->out, c == 'A' ? '^' : '$');
	} else if (isdigit((unsigned char)c)) {
		return fail(x, "\\%c: back-references are not supported (RE2 has none either)", c);
	} else if (isalnum((unsigned char)c)) {
		return fail(x, "\\%c is not supported (POSIX regular expressions have no such escape)", c);
	} else {
		literal(&x->out, (unsigned char)c);
	}
	return 0;
}

/* A bracket expression's parts: its bytes and ranges, and the bytes POSIX gives a place of their own. */
struct bracket {
	struct sbuf items;
	bool neg, rbracket, caret, dash, lbracket;
};

/* One member of a bracket expression at x->p: a byte (returned, 1..255), or a class appended to
 * br->items (returned 0), or -EINVAL. */
static int bracket_atom(struct xlate *x, struct bracket *br)
{
	const char *p = x->p;
	if (p[0] == '[' && p[1] == ':') {
		const char *end = strstr(p + 2, ":]");
		if (!end || p[2] == '^')
			return fail(x, "a malformed or negated [:class:] in brackets");
		put(&br->items, p, (size_t)(end + 2 - p));
		x->p = end + 2;
		return 0;
	}
	if (p[0] == '[' && (p[1] == '.' || p[1] == '='))
		return fail(x, "'[%c' in brackets is not supported", p[1]);
	if (p[0] != '\\') {
		x->p = p + 1;
		return (unsigned char)p[0];
	}
	char c = p[1];
	x->p = p + 2;
	if (!c)
		return fail(x, "a trailing backslash");
	if (perl_class(c) && c >= 'a') {
		puts_(&br->items, perl_class(c));
		return 0;
	}
	if (perl_class(c))
		return fail(x, "\\%c in brackets is not supported", c);
	if (control(c))
		return (unsigned char)control(c);
	if (c == 'x') {
		int v = hex_escape(x);
		return v < 0 ? fail(x, "a malformed \\x escape") : v == 0 ? 256 : v;  /* 256: NUL */
	}
	if (isalnum((unsigned char)c))
		return fail(x, "\\%c in brackets is not supported", c);
	return (unsigned char)c;
}

/* A byte of a bracket expression that POSIX would read otherwise in some places gets its place. */
static void bracket_byte(struct bracket *br, int c)
{
	if (c == ']')
		br->rbracket = true;
	else if (c == '^')
		br->caret = true;
	else if (c == '-')
		br->dash = true;
	else if (c == '[')
		br->lbracket = true;
	else if (c != 256)  /* a NUL never matches text */
		putch(&br->items, (char)c);
}

static void bracket_emit(struct xlate *x, struct bracket *br)
{
	struct sbuf *o = &x->out;
	if (!br->neg && !br->rbracket && !br->items.len && !br->lbracket && br->caret) {
		puts_(o, br->dash ? "[-^]" : "\\^");
		return;
	}
	if (!br->rbracket && !br->items.len && !br->lbracket && !br->caret && !br->dash) {
		puts_(o, br->neg ? "[\x01-\xff]" : "[^\x01-\xff]");  /* nothing but NUL: any byte, or none */
		return;
	}
	puts_(o, br->neg ? "[^" : "[");
	if (br->rbracket)
		putch(o, ']');
	if (br->items.len)
		put(o, br->items.p, br->items.len);
	if (br->lbracket)
		putch(o, '[');
	if (br->caret)
		putch(o, '^');
	if (br->dash)
		putch(o, '-');
	putch(o, ']');
}

/* A bracket expression; x->p at its '['. */
static int bracket(struct xlate *x)
{
	struct bracket br = { 0 };
	x->p++;
	if (*x->p == '^') {
		br.neg = true;
		x->p++;
	}
	int err = 0;
	for (bool first = true; !err; first = false) {
		if (!*x->p) {
			err = fail(x, "a '[' without its ']'");
			break;
		}
		if (*x->p == ']' && !first) {
			x->p++;
			break;
		}
		int lo = bracket_atom(x, &br);
		if (lo < 0)
			err = lo;
		if (lo <= 0)
			continue;
		if (x->p[0] == '-' && x->p[1] && x->p[1] != ']') {
			x->p++;
			int hi = bracket_atom(x, &br);
			if (hi <= 0 || (lo != 256 && hi < lo) || hi == 256) {
				err = hi < 0 ? hi : fail(x, "a bad range in brackets");
				break;
			}
			if ((lo < 256 && strchr("]^-[", lo)) || strchr("]^-[", hi)) {
				err = fail(x, "a range from or to ']', '^', '-' or '[' is not supported");
				break;
			}
			char range[3] = { (char)(lo == 256 ? 1 : lo), '-', (char)hi };
			put(&br.items, range, 3);
			continue;
		}
		bracket_byte(&br, lo);
	}
	if (!err)
		bracket_emit(x, &br);
	free(br.items.p);
	return err ? err : br.items.err;
}

/* The group starting at x->p ('('): capturing, named, or not capturing. */
static int group(struct xlate *x)
{
	struct bt_regex *r = x->r;
	const char *p = x->p + 1;
	char *name = NULL;
	bool capture = true;
	if (*p == '?') {
		if (p[1] == ':') {
			capture = false;
			p += 2;
		} else if (p[1] == '<' || (p[1] == 'P' && p[2] == '<')) {
			const char *n = p + (p[1] == '<' ? 2 : 3), *e = n;
			while (isalnum((unsigned char)*e) || *e == '_')
				e++;
			if (*e != '>' || e == n)
				return fail(x, "a malformed group name");
			if (!(name = strndup(n, (size_t)(e - n))))
				return -ENOMEM;
			p = e + 1;
		} else {
			return fail(x, "(?%c...): flags are not supported (only a leading (?i))", p[1]);
		}
	}
	if (r->nsub >= 255 || (capture && r->ngroups >= BT_REGEX_MAX_GROUPS)) {
		free(name);
		return fail(x, "too many groups (at most %d capturing ones)", BT_REGEX_MAX_GROUPS);
	}
	r->nsub++;
	if (capture) {
		r->ngroups++;
		r->map[r->ngroups] = (unsigned char)r->nsub;
		r->names[r->ngroups] = name;
	}
	putch(&x->out, '(');
	x->p = p;
	return 0;
}

/* A '{' at x->p: a repetition {n}, {n,} or {n,m} is kept, anything else is a literal brace. */
static int brace(struct xlate *x)
{
	const char *p = x->p + 1, *d = p;
	while (isdigit((unsigned char)*p))
		p++;
	bool ok = p > d;
	if (ok && *p == ',') {
		p++;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (ok && *p == '}') {
		put(&x->out, x->p, (size_t)(p + 1 - x->p));
		x->p = p + 1;
		if (*x->p == '?')
			return fail(x, "lazy quantifiers ({n,m}?) are not supported");
	} else {
		literal(&x->out, '{');
		x->p++;
	}
	return 0;
}

static int translate(struct xlate *x)
{
	int err = 0;
	while (!err && *x->p && !x->out.err) {
		char c = *x->p;
		if (c == '\\') {
			err = escape_out(x);
		} else if (c == '[') {
			err = bracket(x);
		} else if (c == '(') {
			err = group(x);
		} else if (c == '{') {
			err = brace(x);
		} else if (c == '}') {
			literal(&x->out, '}');
			x->p++;
		} else if (c == '.') {
			puts_(&x->out, "[^\n]");  /* RE2's '.' leaves out the newline */
			x->p++;
		} else {
			putch(&x->out, c);
			x->p++;
			if ((c == '*' || c == '+' || c == '?') && *x->p == '?')
				err = fail(x, "lazy quantifiers (%c?) are not supported", c);
		}
	}
	return err ? err : x->out.err;
}

int bt_regex_compile(struct bt_regex *r, const char *pattern, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	struct xlate x = { .p = pattern, .r = r, .err = err, .errlen = errlen };
	int flags = REG_EXTENDED;
	if (!strncmp(x.p, "(?i)", 4)) {
		flags |= REG_ICASE;
		x.p += 4;
	}
	r->nsub = 1;  /* the group that anchors the whole */
	puts_(&x.out, "^(");
	int e = translate(&x);
	puts_(&x.out, ")$");
	if (!e && x.out.err)
		e = x.out.err;
	if (!e) {
		int rc = regcomp(&r->re, x.out.p, flags);
		if (rc) {
			char msg[128];
			regerror(rc, &r->re, msg, sizeof(msg));
			e = rc == REG_ESPACE ? -ENOMEM : fail(&x, "%s", msg);
		} else {
			r->compiled = true;
		}
	}
	free(x.out.p);
	if (e)
		bt_regex_free(r);
	return e;
}

bool bt_regex_match(const struct bt_regex *r, const char *s, struct bt_regex_match *m)
{
	regmatch_t pm[256];
	if (!r->compiled || regexec(&r->re, s, r->nsub + 1, pm, 0) != 0)
		return false;
	if (m) {
		m->start[0] = (int)pm[0].rm_so;
		m->end[0] = (int)pm[0].rm_eo;
		for (unsigned i = 1; i <= r->ngroups; i++) {
			m->start[i] = (int)pm[r->map[i]].rm_so;
			m->end[i] = (int)pm[r->map[i]].rm_eo;
		}
		for (unsigned i = r->ngroups + 1; i <= BT_REGEX_MAX_GROUPS; i++)
			m->start[i] = m->end[i] = -1;
	}
	return true;
}

/* The group a "$..." at t names, as Go's template syntax reads it: *group set (-1: names no group of
 * r) and the bytes it takes returned; 0 when t starts no reference (the '$' is then kept). */
static size_t reference(const struct bt_regex *r, const char *t, int *group)
{
	bool brace = t[1] == '{';
	const char *n = t + (brace ? 2 : 1), *e = n;
	while (isalnum((unsigned char)*e) || *e == '_')
		e++;
	if (e == n || (brace && *e != '}'))
		return 0;
	size_t len = (size_t)(e - n);
	*group = -1;
	long num = 0;
	for (size_t i = 0; i < len && num >= 0; i++)
		num = isdigit((unsigned char)n[i]) && num < 100000000 ? num * 10 + (n[i] - '0') : -1;
	if (n[0] == '0' && len > 1)
		num = -1;  /* no leading zeros */
	if (num >= 0 && num <= (long)r->ngroups)
		*group = (int)num;
	for (unsigned i = 1; num < 0 && i <= r->ngroups; i++)
		if (r->names[i] && strlen(r->names[i]) == len && !memcmp(r->names[i], n, len))
			*group = (int)i;
	return (size_t)(e - t) + brace;
}

char *bt_regex_expand(const struct bt_regex *r, const char *tmpl, const char *s,
		      const struct bt_regex_match *m)
{
	struct sbuf b = { 0 };
	puts_(&b, "");
	for (const char *t = tmpl; *t && !b.err;) {
		const char *dollar = strchr(t, '$');
		if (!dollar) {
			puts_(&b, t);
			break;
		}
		put(&b, t, (size_t)(dollar - t));
		t = dollar;
		int g;
		size_t n;
		if (t[1] == '$') {
			putch(&b, '$');
			t += 2;
		} else if ((n = reference(r, t, &g)) != 0) {
			if (g >= 0 && m->start[g] >= 0)
				put(&b, s + m->start[g], (size_t)(m->end[g] - m->start[g]));
			t += n;
		} else {
			putch(&b, '$');
			t++;
		}
	}
	if (b.err) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

void bt_regex_free(struct bt_regex *r)
{
	if (r->compiled)
		regfree(&r->re);
	for (unsigned i = 0; i <= BT_REGEX_MAX_GROUPS; i++)
		free(r->names[i]);
	memset(r, 0, sizeof(*r));
}
