/* checks.c - the properties each parser of untrusted input must keep on any input: only
 * documented error codes, results that are internally consistent and that survive a round trip. */
#include "checks.h"

#include "symsrc/bidcache.h"
#include "elf/buildid.h"
#include "base/decompress.h"
#include "base/demangle.h"
#include "elf/ehtable.h"
#include "elf/ehtfile.h"
#include "elf/elffile.h"
#include "elf/goelf.h"
#include "elf/gopclntab.h"
#include "kernel/kallsyms.h"
#include "elf/minidebuginfo.h"
#include "capture/procmaps.h"
#include "cmd/net/httpreq.h"
#include "kernel/cgroup.h"
#include "output/folded.h"
#include "session/profile.h"
#include "elf/symtab.h"
#include "symsrc/perfmap.h"
#include "symsrc/jitdump.h"

#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lzma.h>

/* A failed property: the fuzz targets want the crash at the spot, the regression test an error. */
static int check_failed(void)
{
#ifdef BT_CHECK_ABORT
	abort();
#endif
	return -EPROTO;
}

/* Every function using CHECK has an int err and an out: label that releases what it holds. */
#define CHECK(cond)                            \
	do {                                   \
		if (!(cond)) {                 \
			err = check_failed();  \
			goto out;              \
		}                              \
	} while (0)

#define CHECK_OK(expr)                         \
	do {                                   \
		if ((err = (expr)) != 0)       \
			goto out;              \
	} while (0)

/* A NUL-terminated copy: the string parsers take C strings. */
static char *cstring(const uint8_t *data, size_t len)
{
	char *s = malloc(len + 1);
	if (!s)
		return NULL;
	memcpy(s, data, len);
	s[len] = '\0';
	return s;
}

/* ---- build-ids --------------------------------------------------------------------------- */

static int check_id_hex_round_trip(const struct bt_build_id *id)
{
	int err = 0;
	char hex[2 * BT_BUILD_ID_MAXLEN + 1];
	struct bt_build_id back;
	CHECK(id->len >= 1 && id->len <= BT_BUILD_ID_MAXLEN);
	bt_buildid_hex(id, hex, sizeof(hex));
	CHECK(strlen(hex) == 2u * id->len);
	CHECK(bt_buildid_parse_hex(hex, &back) == 0 && bt_buildid_eq(&back, id));
	/* A buffer one byte short gets the empty string, never a truncated id. */
	bt_buildid_hex(id, hex, 2u * id->len);
	CHECK(hex[0] == '\0');
out:
	return err;
}

int bt_check_buildid(const uint8_t *data, size_t len)
{
	int err = 0;
	struct bt_build_id id;
	memset(&id, 0x5a, sizeof(id));
	int r = bt_buildid_from_mem(data, len, &id);
	CHECK(r == 0 || r == -ENODATA || r == -ENOEXEC || r == -ENOMEM);
	if (r) {
		CHECK(id.len == 0);
		goto out;
	}
	CHECK_OK(check_id_hex_round_trip(&id));
	/* The handle-based entry point must agree with the one-shot one. */
	struct bt_elf *e = NULL;
	CHECK(bt_elf_open_mem(data, len, &e) == 0);
	struct bt_build_id again;
	r = bt_elf_build_id(e, &again);
	bt_elf_close(e);
	CHECK(r == 0 && bt_buildid_eq(&again, &id));
out:
	return err;
}

int bt_check_buildid_hex(const uint8_t *data, size_t len)
{
	int err = 0;
	char *s = cstring(data, len);
	if (!s)
		return -ENOMEM;
	size_t n = strlen(s);
	bool valid = n >= 2 && n <= 2 * BT_BUILD_ID_MAXLEN && n % 2 == 0;
	for (size_t i = 0; valid && i < n; i++)
		valid = isxdigit((unsigned char)s[i]) != 0;
	struct bt_build_id id;
	int r = bt_buildid_parse_hex(s, &id);
	CHECK(valid ? r == 0 : r == -EINVAL);
	if (r == 0) {
		char hex[2 * BT_BUILD_ID_MAXLEN + 1];
		bt_buildid_hex(&id, hex, sizeof(hex));
		CHECK(id.len == n / 2 && strlen(hex) == n);
		for (size_t i = 0; i < n; i++)
			CHECK(hex[i] == tolower((unsigned char)s[i]));
	}
out:
	free(s);
	return err;
}

/* ---- ELF files and symbol tables ----------------------------------------------------------- */

/* The translation picked one of the segments that contain offset, and applied it. */
static int check_offset_to_vaddr(const struct bt_elf_layout *l, uint64_t offset)
{
	int err = 0;
	uint64_t vaddr = 0;
	bool inside = false, matches = false;
	int r = bt_elf_offset_to_vaddr(l, offset, &vaddr);
	for (size_t i = 0; i < l->nload; i++) {
		const struct bt_elf_load *s = &l->load[i];
		if (offset >= s->offset && offset - s->offset < s->filesz) {
			inside = true;
			matches = matches || vaddr == offset - s->offset + s->vaddr;
		}
	}
	CHECK(inside ? r == 0 && matches : r == -ERANGE);
out:
	return err;
}

static int check_lookup(const struct bt_symtab *st, uint64_t vaddr)
{
	int err = 0;
	uint64_t off = UINT64_MAX;
	const struct bt_sym *s = bt_symtab_lookup(st, vaddr, &off);
	if (s) {
		CHECK(s >= bt_symtab_at(st, 0) && s <= bt_symtab_at(st, bt_symtab_count(st) - 1));
		CHECK(s->addr <= vaddr && off == vaddr - s->addr);
	}
out:
	return err;
}

static int check_symtab_result(const struct bt_symtab *st)
{
	int err = 0;
	size_t n = bt_symtab_count(st);
	CHECK(n > 0 && bt_symtab_at(st, n) == NULL && bt_symtab_layout(st) != NULL);
	const struct bt_elf_layout *l = bt_symtab_layout(st);
	CHECK(l->nload <= BT_ELF_MAX_LOADS);
	uint64_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		const struct bt_sym *s = bt_symtab_at(st, i);
		CHECK(s && s->name && s->name[0] != '\0');
		/* Sorted, one symbol per address, and never the zero address. */
		CHECK(s->addr > prev);
		prev = s->addr;
		/* A sized symbol owns its first address; at the very top of the address space its
		 * (exclusive) end cannot be represented, and the table does not claim it there. */
		uint64_t off = 1;
		if (s->size && s->addr != UINT64_MAX)
			CHECK(bt_symtab_lookup(st, s->addr, &off) == s && off == 0);
		CHECK_OK(check_lookup(st, s->addr));
		CHECK_OK(check_lookup(st, s->addr - 1));
		CHECK_OK(check_lookup(st, s->addr + (s->size ? s->size - 1 : 1)));
		CHECK_OK(check_lookup(st, s->addr + s->size));
	}
	CHECK(bt_symtab_lookup(st, bt_symtab_at(st, 0)->addr - 1, NULL) == NULL);
	CHECK_OK(check_lookup(st, UINT64_MAX));
	for (size_t i = 0; i < l->nload; i++) {
		uint64_t off = 0;
		const struct bt_sym *s = bt_symtab_lookup_offset(st, l->load[i].offset, &off);
		CHECK(!s || s->addr <= UINT64_MAX - off);
	}
out:
	return err;
}

/* A compiled table written as a file and read back is the same table; the input itself, taken as
 * such a file, is refused or holds only what the walker can read. */
static int ehtfile_roundtrip(const struct bt_ehtable *t)
{
	static const uint8_t bid[20] = { 1, 2, 3 };
	struct bt_elf_layout lay = { .type = 3, .nload = 1 }, got_lay;
	struct bt_ehtable got;
	int err = 0;
	int fd = memfd_create("ehtfile", MFD_CLOEXEC);
	if (fd < 0)
		return 0;   /* nowhere to write: nothing to check */
	CHECK(bt_ehtfile_write(fd, bid, sizeof(bid), t, &lay) == 0);
	CHECK(bt_ehtfile_read(fd, bid, sizeof(bid), &got, &got_lay) == 0);
	CHECK(got.n == t->n && got.nrules == t->nrules && got.base == t->base);
	CHECK(!memcmp(got.rows, t->rows, t->n * sizeof(*t->rows)));
	CHECK(!memcmp(got.rules, t->rules, t->nrules * sizeof(*t->rules)));
	bt_ehtable_free(&got);
out:
	close(fd);
	return err;
}

/* Any bytes taken as a table file: refused, or rows in order naming rules that exist. */
static int ehtfile_any(const uint8_t *data, size_t len)
{
	static const uint8_t bid[20] = { 1, 2, 3 };
	struct bt_ehtable t;
	struct bt_elf_layout lay;
	int err = 0;
	int r = bt_ehtfile_parse(data, len, bid, sizeof(bid), &t, &lay);
	if (r)
		return r == -EBADMSG || r == -ENOMEM ? 0 : check_failed();
	for (size_t i = 0; i < t.n; i++)
		CHECK(t.rows[i].rule < t.nrules && (!i || t.rows[i].pc > t.rows[i - 1].pc));
	CHECK(lay.nload <= BT_ELF_MAX_LOADS);
out:
	bt_ehtable_free(&t);
	return err;
}

int bt_check_ehtable(const uint8_t *data, size_t len)
{
	int err = 0;
	struct bt_ehtable t;
	if (ehtfile_any(data, len))
		return check_failed();
	int r = bt_ehtable_compile_mem(data, len, &t);
	if (r == -ENODATA || r == -ENOEXEC || r == -E2BIG || r == -ENOMEM)
		return 0;
	CHECK(r == 0);
	CHECK(t.nrules >= 1 && t.nrules <= BT_UNW_RULES_MAX && t.rules[0].cfa == BT_UNW_NONE);
	for (size_t i = 0; i < t.nrules; i++) {
		const struct bt_unw_rule *rule = &t.rules[i];
		CHECK(rule->cfa <= BT_UNW_SIGNAL && rule->rbp <= BT_UNW_RBP_LOST && rule->rbx <= BT_UNW_RBP_LOST);
	}
	CHECK(t.n >= 1 && t.rows[t.n - 1].rule == 0 && t.rows[0].pc == 0);
	for (size_t i = 0; i < t.n; i++) {
		const struct bt_unw_row *row = &t.rows[i];
		CHECK(i == 0 || row->pc > t.rows[i - 1].pc);
		CHECK(i == 0 || row->rule != t.rows[i - 1].rule);
		CHECK(row->rule < t.nrules);
		CHECK(bt_ehtable_lookup(&t, t.base + row->pc) == &t.rules[row->rule]);
	}
	CHECK(bt_ehtable_bytes(&t) == t.n * sizeof(struct bt_unw_row) + t.nrules * sizeof(struct bt_unw_rule));
	CHECK(ehtfile_roundtrip(&t) == 0);
out:
	if (r == 0)
		bt_ehtable_free(&t);
	return err;
}

int bt_check_symtab(const uint8_t *data, size_t len)
{
	int err = 0;
	struct bt_elf *e = NULL;
	struct bt_symtab *st = NULL;
	int r = bt_elf_open_mem(data, len, &e);
	CHECK(r == 0 || r == -ENOEXEC || r == -ENOMEM);
	if (r)
		goto out;
	CHECK(bt_elf_handle(e) != NULL);

	struct bt_elf_layout l;
	r = bt_elf_layout(e, &l);
	CHECK(r == 0 || r == -ENOEXEC);
	if (r == 0) {
		CHECK(l.nload <= BT_ELF_MAX_LOADS);
		for (size_t i = 0; i < l.nload; i++) {
			CHECK_OK(check_offset_to_vaddr(&l, l.load[i].offset));
			CHECK_OK(check_offset_to_vaddr(&l, l.load[i].offset + l.load[i].filesz));
			CHECK_OK(check_offset_to_vaddr(&l, l.load[i].offset - 1));
		}
	}

	struct bt_build_id id;
	r = bt_elf_build_id(e, &id);
	CHECK(r == 0 || r == -ENODATA);
	if (r == 0)
		CHECK_OK(check_id_hex_round_trip(&id));

	char name[256];
	uint32_t crc;
	memset(name, 0x5a, sizeof(name));
	r = bt_elf_debuglink(e, name, sizeof(name), &crc);
	CHECK(r == 0 || r == -ENODATA || r == -ENOEXEC || r == -ENAMETOOLONG);
	if (r == 0)
		CHECK(strnlen(name, sizeof(name)) > 0 && strnlen(name, sizeof(name)) < sizeof(name));

	/* Section bytes are handed out in place: they must lie inside the image. */
	static const char *const sections[] = { ".gnu_debugdata", ".gnu_debuglink", ".text", "" };
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		const void *p = NULL;
		size_t plen = 0;
		r = bt_elf_section(e, sections[i], &p, &plen);
		CHECK(r == 0 || r == -ENODATA || r == -ENOEXEC);
		if (r == 0)
			CHECK((const uint8_t *)p >= data && plen > 0 && plen <= len &&
			      (size_t)((const uint8_t *)p - data) <= len - plen);
	}

	r = bt_symtab_load(e, &st);
	CHECK(r == 0 || r == -ENODATA || r == -ENOEXEC || r == -ENOMEM || r == -E2BIG);
	CHECK((r == 0) == (st != NULL));
	if (st) {
		CHECK_OK(check_symtab_result(st));
		bt_symtab_free(st);
		st = NULL;
	}

	/* A Go program's function table, found in the file and merged with its symbols */
	r = bt_goelf_symtab(e, &st);
	CHECK(r == 0 || r == -ENODATA || r == -EINVAL || r == -ENOEXEC || r == -ENOMEM || r == -E2BIG);
	CHECK((r == 0) == (st != NULL));
	if (st) {
		CHECK_OK(check_symtab_result(st));
		bt_symtab_free(st);
		st = NULL;
	}

	r = bt_minidebuginfo_load(e, &st);
	CHECK(r <= 0);
	CHECK((r == 0) == (st != NULL));
	/* The table copies what it keeps, so it must outlive the file it came from. */
	bt_elf_close(e);
	e = NULL;
	if (st)
		CHECK_OK(check_symtab_result(st));
out:
	bt_symtab_free(st);
	bt_elf_close(e);
	return err;
}

/* ---- Go's function table ------------------------------------------------------------------ */

#define GO_ADDR 0x1000000ULL
#define GO_TEXT 0x400000ULL
#define GO_FRAMES 8

struct go_mem {
	const uint8_t *data;
	size_t len;
};

/* The input stands for the program's memory too, from GO_ADDR: the inline trees are read there. */
static int go_read(void *ctx, uint64_t vaddr, void *buf, size_t len)
{
	const struct go_mem *m = ctx;
	if (vaddr < GO_ADDR || vaddr - GO_ADDR > m->len || m->len - (vaddr - GO_ADDR) < len)
		return -ERANGE;
	memcpy(buf, m->data + (vaddr - GO_ADDR), len);
	return 0;
}

static bool in_input(const char *p, const uint8_t *data, size_t len)
{
	return !p || ((const uint8_t *)p >= data && (const uint8_t *)p < data + len &&
		      memchr(p, '\0', (size_t)(data + len - (const uint8_t *)p)));
}

/* Lookups at pc: a bounded number of frames, each string a NUL-terminated piece of the input. */
static int check_go_lookup(const struct bt_gopcln *g, uint64_t pc, const uint8_t *data, size_t len)
{
	int err = 0;
	struct bt_dwarf_frame fr[GO_FRAMES];
	int n = bt_gopcln_lookup(g, pc, fr, GO_FRAMES);
	CHECK(n >= 0 && n <= GO_FRAMES);
	for (int i = 0; i < n; i++)
		CHECK(in_input(fr[i].function, data, len) && in_input(fr[i].file, data, len));
out:
	return err;
}

int bt_check_gopclntab(const uint8_t *data, size_t len)
{
	int err = 0;
	struct go_mem mem = { data, len };
	/* funcdata offsets count from the table itself, so that the input's own bytes are trees */
	struct bt_gopcln_src src = { .tab = data, .len = len, .addr = GO_ADDR, .text = GO_TEXT,
				     .read = go_read, .ctx = &mem, .gofunc = GO_ADDR };
	struct bt_gopcln *g = NULL;
	int r = bt_gopcln_open(&src, &g);
	CHECK(r == 0 || r == -ENODATA || r == -EINVAL || r == -ENOMEM);
	CHECK((r == 0) == (g != NULL));
	if (r)
		goto out;
	size_t n = bt_gopcln_count(g);
	CHECK(n <= len / 8);
	for (size_t i = 0; i < n && i < 256; i++) {
		uint64_t entry, end;
		const char *name = NULL;
		r = bt_gopcln_func(g, i, &entry, &end, &name);
		CHECK(r == 0 || r == -EINVAL);
		if (r)
			continue;
		CHECK(entry < end && name && *name && in_input(name, data, len));
		CHECK_OK(check_go_lookup(g, entry, data, len));
		CHECK_OK(check_go_lookup(g, end - 1, data, len));
	}
	/* addresses the input names, wherever they fall */
	for (size_t i = 0; i + 8 <= len && i < 64 * 8; i += 8) {
		uint64_t pc;
		memcpy(&pc, data + i, 8);
		CHECK_OK(check_go_lookup(g, pc, data, len));
		CHECK_OK(check_go_lookup(g, GO_TEXT + (pc & 0xffff), data, len));
	}
	/* the input as a data section holding moduledata */
	(void)bt_gopcln_find_gofunc(g, data, len, GO_ADDR, NULL, NULL);
out:
	bt_gopcln_free(g);
	return err;
}

/* ---- HTTP request heads and cgroup paths -------------------------------------------------- */

static bool inside(const char *p, const char *buf, size_t len)
{
	return p >= buf && p <= buf + len && memchr(p, '\0', (size_t)(buf + len - p) + 1);
}

int bt_check_httpreq(const uint8_t *data, size_t len)
{
	int err = 0;
	char *buf = cstring(data, len);
	if (!buf)
		return -ENOMEM;
	struct bt_http_req r;
	int e = bt_http_parse(buf, len, &r);
	CHECK(e == 0 || e == -EAGAIN || e == -EINVAL);
	if (e)
		goto out;
	CHECK(inside(r.method, buf, len) && inside(r.target, buf, len) &&
	      (!*r.query || inside(r.query, buf, len)));
	CHECK(r.head_len <= len && r.content_length >= -1 && r.target[0] == '/' && *r.method);
	for (const char *c = r.method; *c; c++)
		CHECK(isupper((unsigned char)*c));
	for (const char *c = r.target; *c; c++)
		CHECK((unsigned char)*c > 0x20 && *c != 0x7f && *c != '?');
	CHECK(bt_http_query_seconds(r.query, 30, 300) <= 300);
out:
	free(buf);
	return err;
}

int bt_check_cgroup(const uint8_t *data, size_t len)
{
	int err = 0;
	char *path = cstring(data, len);
	if (!path)
		return -ENOMEM;
	char id[BT_CONTAINER_ID_LEN + 1];
	const char *rt = NULL;
	int e = bt_cgroup_container_id(path, id, &rt);
	CHECK(e == 0 || e == -ENOENT);
	if (e)
		goto out;
	CHECK(strlen(id) == BT_CONTAINER_ID_LEN && strstr(path, id) && rt);
	for (size_t i = 0; i < BT_CONTAINER_ID_LEN; i++)
		CHECK(isdigit((unsigned char)id[i]) || (id[i] >= 'a' && id[i] <= 'f'));
out:
	free(path);
	return err;
}

/* ---- /proc/PID/maps lines --------------------------------------------------------------- */

static bool procmap_eq(const struct bt_procmap *a, const struct bt_procmap *b)
{
	return a->start == b->start && a->end == b->end && a->offset == b->offset &&
	       a->dev_major == b->dev_major && a->dev_minor == b->dev_minor && a->ino == b->ino &&
	       strcmp(a->perms, b->perms) == 0 && a->deleted == b->deleted &&
	       strcmp(a->path, b->path) == 0;
}

int bt_check_procmap(const uint8_t *data, size_t len)
{
	int err = 0;
	char *line = cstring(data, len), *again = NULL;
	struct bt_procmap *m = malloc(sizeof(*m)), *m2 = malloc(sizeof(*m2));
	if (!line || !m || !m2) {
		err = -ENOMEM;
		goto out;
	}
	memset(m, 0x5a, sizeof(*m));
	int r = bt_procmap_parse_line(line, m);
	CHECK(r == 0 || r == -EINVAL);
	if (r)
		goto out;
	CHECK(m->start < m->end);
	CHECK(strlen(m->perms) == 4 && strchr("r-", m->perms[0]) && strchr("w-", m->perms[1]) &&
	      strchr("x-", m->perms[2]) && strchr("ps", m->perms[3]));
	size_t plen = strnlen(m->path, sizeof(m->path));
	CHECK(plen < sizeof(m->path) && !memchr(m->path, '\n', plen));
	CHECK(plen == 0 || m->path[0] != ' ');

	/* Formatted the way the kernel does, the fields read back the same. */
	size_t cap = plen + 256;
	again = malloc(cap);
	if (!again) {
		err = -ENOMEM;
		goto out;
	}
	int n = snprintf(again, cap,
			 "%" PRIx64 "-%" PRIx64 " %s %08" PRIx64 " %02" PRIx32 ":%02" PRIx32 " %" PRIu64
			 "                   %s%s\n", m->start, m->end, m->perms, m->offset,
			 m->dev_major, m->dev_minor, m->ino, m->path, m->deleted ? " (deleted)" : "");
	CHECK(n > 0 && (size_t)n < cap);
	memset(m2, 0xa5, sizeof(*m2));
	CHECK(bt_procmap_parse_line(again, m2) == 0 && procmap_eq(m, m2));
out:
	free(line);
	free(again);
	free(m);
	free(m2);
	return err;
}

/* ---- kallsyms ----------------------------------------------------------------------------- */

/* The fields of one line the parser accepted: address, type and name. */
static void kline_fields(const char *p, const char *end, uint64_t *addr, char *type,
			 const char **name, size_t *namelen)
{
	*addr = 0;
	for (; p < end && isxdigit((unsigned char)*p); p++)
		*addr = *addr << 4 | (uint64_t)(isdigit((unsigned char)*p) ? *p - '0'
							       : tolower((unsigned char)*p) - 'a' + 10);
	while (p < end && *p == ' ')
		p++;
	*type = p < end ? *p++ : '\0';
	while (p < end && *p == ' ')
		p++;
	*name = p;
	while (p < end && (unsigned char)*p > ' ' && *p != 0x7f)
		p++;
	*namelen = (size_t)(p - *name);
}

static int check_ksym_lookup(const struct bt_kallsyms *ks, uint64_t addr)
{
	int err = 0;
	uint64_t off = UINT64_MAX;
	const struct bt_ksym *s = bt_kallsyms_lookup(ks, addr, &off);
	if (s) {
		CHECK(s->addr <= addr && off == addr - s->addr && off <= BT_KALLSYMS_MAX_GAP);
		CHECK(s->name && s->name[0] && (!s->module || s->module[0]));
	}
out:
	return err;
}

int bt_check_kallsyms(const uint8_t *data, size_t len)
{
	int err = 0;
	struct bt_kallsyms *ks = NULL;
	char *name = NULL;
	int r = bt_kallsyms_parse((const char *)data, len, &ks);
	CHECK(r == 0 || r == -EINVAL || r == -ENODATA || r == -EACCES || r == -ENOMEM);
	CHECK((r == 0) == (ks != NULL));
	if (r)
		goto out;
	name = malloc(BT_KALLSYMS_LINE_MAX + 1);
	if (!name) {
		err = -ENOMEM;
		goto out;
	}
	/* Every text line was accepted, so each is found again at its own address. */
	const char *buf = (const char *)data, *end = buf + len;
	size_t text = 0, named = 0;
	for (const char *p = buf; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (le > p) {
			uint64_t addr;
			char type;
			const char *nm;
			size_t nlen;
			kline_fields(p, le, &addr, &type, &nm, &nlen);
			if (type == 't' || type == 'T' || type == 'w' || type == 'W') {
				text++;
				uint64_t off = 1;
				const struct bt_ksym *s = bt_kallsyms_lookup(ks, addr, &off);
				CHECK(s && s->addr == addr && off == 0);
				CHECK_OK(check_ksym_lookup(ks, addr - 1));
				CHECK_OK(check_ksym_lookup(ks, addr + 1));
				CHECK_OK(check_ksym_lookup(ks, addr + BT_KALLSYMS_MAX_GAP + 1));
				/* By name: the lowest address carrying it, so never above this one.
				 * A linear search, so only the first lines. */
				if (named++ < 64) {
					CHECK(nlen > 0 && nlen <= BT_KALLSYMS_LINE_MAX);
					memcpy(name, nm, nlen);
					name[nlen] = '\0';
					CHECK(bt_kallsyms_addr(ks, name) <= addr);
				}
			}
		}
		p = le + 1;
	}
	CHECK(text == bt_kallsyms_count(ks));
	CHECK_OK(check_ksym_lookup(ks, 0));
	CHECK_OK(check_ksym_lookup(ks, UINT64_MAX));
out:
	free(name);
	bt_kallsyms_free(ks);
	return err;
}

/* ---- folded stacks ------------------------------------------------------------------------ */

static int parse_folded(const void *buf, size_t len, struct bt_folded *f, size_t *bad)
{
	/* fmemopen wants a size of at least one byte; an empty line reads as an empty file does. */
	static const char empty[1] = "\n";
	FILE *in = fmemopen((void *)(len ? buf : empty), len ? len : 1, "r");
	if (!in)
		return -errno;
	int r = bt_folded_parse(in, f, bad);
	fclose(in);
	return r;
}

/* The lines read into a profile and folded again: the same total, and text that, read and folded
 * once more, comes back unchanged (a kernel frame stays one, a pid stays a pid). */
static int check_folded_profile(const struct bt_folded *f)
{
	int err = 0;
	struct bt_profile p, q;
	struct bt_folded a = { 0 }, b = { 0 };
	bt_profile_init(&p);
	bt_profile_init(&q);
	int r = bt_folded_to_profile(f, &p);
	CHECK(r == 0 || r == -ENOMEM);
	if (!r) {
		CHECK(p.total == f->total && p.per_pid == f->per_pid);
		r = bt_folded_from_profile(&p, &a);
		CHECK(r == 0 || r == -ENOMEM);
	}
	if (!r) {
		CHECK(a.total == f->total);
		r = bt_folded_to_profile(&a, &q);
	}
	if (!r)
		r = bt_folded_from_profile(&q, &b);
	if (!r) {
		CHECK(a.n == b.n && a.total == b.total);
		for (size_t i = 0; i < a.n; i++)
			CHECK(strcmp(a.v[i].text, b.v[i].text) == 0 && a.v[i].count == b.v[i].count);
	}
	err = r == -ENOMEM ? r : 0;
out:
	bt_folded_free(&a);
	bt_folded_free(&b);
	bt_profile_free(&p);
	bt_profile_free(&q);
	return err;
}

int bt_check_folded(const uint8_t *data, size_t len)
{
	int err = 0;
	struct bt_folded f = { 0 }, g = { 0 };
	char *text = NULL;
	size_t textlen = 0, bad = SIZE_MAX;
	FILE *out = NULL;
	int r = parse_folded(data, len, &f, &bad);
	CHECK(r == 0 || r == -EINVAL || r == -ENOMEM || r == -EIO);
	if (r) {
		CHECK(f.n == 0 && f.v == NULL);
		CHECK(r != -EINVAL || bad > 0);
		goto out;
	}
	CHECK(bad == 0);
	uint64_t sum = 0;
	for (size_t i = 0; i < f.n; i++) {
		/* a name may hold any byte but NUL once read (written as \xNN, read back as itself) */
		CHECK(f.v[i].text && f.v[i].text[0] != '\0');
		sum += f.v[i].count;
	}
	CHECK(sum == f.total);

	/* Written out and read back: the same lines, in the same order, with the same counts. */
	out = open_memstream(&text, &textlen);
	if (!out) {
		err = -ENOMEM;
		goto out;
	}
	CHECK(bt_folded_write(&f, out) == 0);
	fclose(out);
	out = NULL;
	/* escaped as written: one line per stack, whatever bytes its names hold */
	size_t lines = 0;
	for (size_t i = 0; i < textlen; i++)
		lines += text[i] == '\n';
	CHECK(lines == f.n);
	CHECK(parse_folded(text, textlen, &g, &bad) == 0);
	CHECK(g.n == f.n && g.total == f.total);
	for (size_t i = 0; i < f.n; i++)
		CHECK(strcmp(f.v[i].text, g.v[i].text) == 0 && f.v[i].count == g.v[i].count);
	err = check_folded_profile(&f);
out:
	if (out)
		fclose(out);
	free(text);
	bt_folded_free(&f);
	bt_folded_free(&g);
	return err;
}

/* ---- decompression ------------------------------------------------------------------------ */

/* Small enough that a fuzzed header cannot make one input slow. */
#define CHECK_DECOMPRESS_MAX ((size_t)1 << 20)

int bt_check_decompress(const uint8_t *data, size_t len)
{
	int err = 0;
	void *out = NULL, *again = NULL;
	size_t olen = SIZE_MAX, alen = 0;
	int r = bt_decompress(data, len, CHECK_DECOMPRESS_MAX, &out, &olen);
	CHECK(r == 0 || r == -EINVAL || r == -EFBIG || r == -ENOMEM);
	if (r) {
		CHECK(out == NULL);
		goto out;
	}
	CHECK(out != NULL && olen <= CHECK_DECOMPRESS_MAX);
	CHECK(bt_compression_detect(data, len) != BT_COMP_NONE);
	/* The cap is exact: the output's own size passes, one byte less does not. */
	CHECK(bt_decompress(data, len, olen, &again, &alen) == 0);
	CHECK(alen == olen && memcmp(again, out, olen) == 0);
	free(again);
	again = NULL;
	if (olen)
		CHECK(bt_decompress(data, len, olen - 1, &again, &alen) == -EFBIG && again == NULL);
out:
	free(out);
	free(again);
	return err;
}

/* ---- MiniDebugInfo ------------------------------------------------------------------------ */

/* The binary around an embedded ELF: .text (no bytes), two exported functions in .dynsym, and
 * .gnu_debugdata holding xz. Fixed, so that fuzzing reaches the embedded file, which mutated xz
 * bytes never would (their checksum breaks). */
#define OUTER_TEXT_ADDR 0x1000u
static const char outer_dynstr[] = "\0exported_fn\0other_fn";
static const char outer_shstrtab[] = "\0.text\0.dynsym\0.dynstr\0.gnu_debugdata\0.shstrtab";

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static uint8_t *outer_elf(const uint8_t *xz, size_t xzlen, size_t *outlen)
{
	Elf64_Sym syms[3] = {
		{ 0 },
		{ .st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = 1,
		  .st_value = OUTER_TEXT_ADDR, .st_size = 0x10 },
		{ .st_name = 13, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = 1,
		  .st_value = OUTER_TEXT_ADDR + 0x100, .st_size = 0x20 },
	};
	size_t off_dynsym = align8(sizeof(Elf64_Ehdr));
	size_t off_dynstr = off_dynsym + sizeof(syms);
	size_t off_data = align8(off_dynstr + sizeof(outer_dynstr));
	size_t off_shstr = align8(off_data + xzlen);
	size_t off_shdr = align8(off_shstr + sizeof(outer_shstrtab));
	size_t total = off_shdr + 6 * sizeof(Elf64_Shdr);
	uint8_t *b = calloc(1, total);
	if (!b)
		return NULL;
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
		.e_shoff = off_shdr, .e_ehsize = sizeof(Elf64_Ehdr), .e_shentsize = sizeof(Elf64_Shdr),
		.e_shnum = 6, .e_shstrndx = 5,
	};
	Elf64_Shdr sh[6] = {
		{ 0 },
		{ .sh_name = 1, .sh_type = SHT_NOBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
		  .sh_addr = OUTER_TEXT_ADDR, .sh_offset = off_data, .sh_size = 0x1000, .sh_addralign = 16 },
		{ .sh_name = 7, .sh_type = SHT_DYNSYM, .sh_flags = SHF_ALLOC, .sh_offset = off_dynsym,
		  .sh_size = sizeof(syms), .sh_link = 3, .sh_info = 1, .sh_addralign = 8,
		  .sh_entsize = sizeof(Elf64_Sym) },
		{ .sh_name = 15, .sh_type = SHT_STRTAB, .sh_flags = SHF_ALLOC, .sh_offset = off_dynstr,
		  .sh_size = sizeof(outer_dynstr), .sh_addralign = 1 },
		{ .sh_name = 23, .sh_type = SHT_PROGBITS, .sh_offset = off_data, .sh_size = xzlen,
		  .sh_addralign = 1 },
		{ .sh_name = 38, .sh_type = SHT_STRTAB, .sh_offset = off_shstr,
		  .sh_size = sizeof(outer_shstrtab), .sh_addralign = 1 },
	};
	memcpy(b, &eh, sizeof(eh));
	memcpy(b + off_dynsym, syms, sizeof(syms));
	memcpy(b + off_dynstr, outer_dynstr, sizeof(outer_dynstr));
	memcpy(b + off_data, xz, xzlen);
	memcpy(b + off_shstr, outer_shstrtab, sizeof(outer_shstrtab));
	memcpy(b + off_shdr, sh, sizeof(sh));
	*outlen = total;
	return b;
}

uint8_t *bt_check_mdi_binary(const uint8_t *elf, size_t len, size_t *outlen)
{
	size_t cap = lzma_stream_buffer_bound(len), xzlen = 0;
	uint8_t *xz = malloc(cap ? cap : 1), *outer = NULL;
	/* The lightest settings, with the smallest dictionary: the embedded file is what is under
	 * test, and both ends of the compression then start fast. */
	lzma_options_lzma opt;
	lzma_filter filters[] = {
		{ .id = LZMA_FILTER_LZMA2, .options = &opt },
		{ .id = LZMA_VLI_UNKNOWN },
	};
	if (xz && !lzma_lzma_preset(&opt, 0)) {
		opt.dict_size = LZMA_DICT_SIZE_MIN;
		if (lzma_stream_buffer_encode(filters, LZMA_CHECK_CRC32, NULL, elf, len, xz, &xzlen,
					      cap) == LZMA_OK)
			outer = outer_elf(xz, xzlen, outlen);
	}
	free(xz);
	if (!outer)
		errno = ENOMEM;
	return outer;
}

int bt_check_minidebuginfo(const uint8_t *data, size_t len)
{
	int err = 0;
	size_t olen = 0;
	uint8_t *outer = bt_check_mdi_binary(data, len, &olen);
	struct bt_elf *e = NULL;
	struct bt_symtab *st = NULL;
	if (!outer)
		return -ENOMEM;
	CHECK(bt_elf_open_mem(outer, olen, &e) == 0);
	int r = bt_minidebuginfo_load(e, &st);
	CHECK(r == 0 || r == -ENODATA || r == -EINVAL || r == -ENOMEM || r == -E2BIG || r == -EFBIG);
	CHECK((r == 0) == (st != NULL));
	bt_elf_close(e);
	e = NULL;
	if (st)
		CHECK_OK(check_symtab_result(st));
out:
	bt_symtab_free(st);
	bt_elf_close(e);
	free(outer);
	return err;
}

/* ---- symbol names ------------------------------------------------------------------------- */

int bt_check_demangle(const uint8_t *data, size_t len)
{
	int err = 0;
	char *name = cstring(data, len), *d = NULL;
	if (!name)
		return -ENOMEM;
	d = bt_demangle(name);
	/* Only _Z names are taken for mangled ones, a demangled name is never empty, and never
	 * longer than the bound (back-references can expand a short name exponentially). */
	CHECK(!d || (strncmp(name, "_Z", 2) == 0 && d[0] != '\0'));
	CHECK(!d || strlen(d) <= BT_DEMANGLE_MAX_OUT);
out:
	free(d);
	free(name);
	return err;
}

/* ---- build-id cache entries --------------------------------------------------------------- */

/* Made up for inputs whose ELF part has no build-id: the link needs a name all the same. */
static const struct bt_build_id placeholder_id = {
	.len = 20,
	.data = { 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd,
		  0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01 },
};

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

/* A fresh directory on tmpfs when there is one: every input writes a few files. */
static int make_sandbox(char *buf, size_t len)
{
	const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
	int n = snprintf(buf, len, "%s/bt-check-cache.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return mkdtemp(buf) ? 0 : -errno;
}

static bool bad_component(const char *p, size_t c)
{
	return c == 0 || (c == 1 && p[0] == '.') || (c == 2 && p[0] == '.' && p[1] == '.');
}

/* The harness itself creates DIR/TAIL only for tails that stay inside DIR. */
static bool tail_is_safe(const char *tail)
{
	if (!tail[0] || tail[0] == '/')
		return false;
	for (const char *p = tail; *p;) {
		size_t c = strcspn(p, "/");
		if (c == 2 && p[0] == '.' && p[1] == '.')
			return false;
		p += c;
		p += *p == '/';
	}
	return true;
}

static int mkdir_p(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		int r = mkdir(path, 0755);
		*p = '/';
		if (r != 0 && errno != EEXIST)
			return -errno;
	}
	return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -errno;
}

static int write_file(const char *path, const uint8_t *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t n = write(fd, data, len);
		if (n <= 0) {
			close(fd);
			return n < 0 ? -errno : -EIO;
		}
		data += n;
		len -= (size_t)n;
	}
	return close(fd) == 0 ? 0 : -errno;
}

static uint64_t tar_octal(const uint8_t *f, size_t width)
{
	uint64_t v = 0;
	for (size_t i = 0; i < width && f[i] >= '0' && f[i] <= '7'; i++)
		v = v << 3 | (uint64_t)(f[i] - '0');
	return v;
}

/* pax records: "LEN key=value\n", LEN counting the whole record. */
static bool pax_ok(const uint8_t *p, size_t len)
{
	while (len) {
		size_t n = 0, i = 0;
		for (; i < len && p[i] >= '0' && p[i] <= '9' && n < len + 1; i++)
			n = n * 10 + (size_t)(p[i] - '0');
		if (i == 0 || i >= len || p[i] != ' ' || n <= i || n > len || p[n - 1] != '\n' ||
		    !memchr(p + i, '=', n - i))
			return false;
		p += n;
		len -= n;
	}
	return true;
}

/* A tar archive read back: checksums, ustar magic, sizes, pax records and the end blocks. */
static int check_tar(int fd, size_t *members)
{
	int err = 0;
	uint8_t *buf = NULL;
	off_t size = lseek(fd, 0, SEEK_END);
	CHECK(size >= 1024 && size % 512 == 0);
	buf = malloc((size_t)size);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	CHECK(pread(fd, buf, (size_t)size, 0) == size);
	size_t pos = 0, zeros = 0;
	*members = 0;
	while (pos + 512 <= (size_t)size) {
		const uint8_t *h = buf + pos;
		size_t z = 0;
		while (z < 512 && !h[z])
			z++;
		if (z == 512) {
			zeros++;
			pos += 512;
			continue;
		}
		CHECK(zeros == 0);  /* nothing after the end blocks */
		unsigned sum = 0;
		for (size_t i = 0; i < 512; i++)
			sum += i >= 148 && i < 156 ? ' ' : h[i];
		CHECK(tar_octal(h + 148, 8) == sum);
		CHECK(memcmp(h + 257, "ustar", 5) == 0);
		uint64_t fsize = tar_octal(h + 124, 12);
		CHECK(fsize <= (uint64_t)size - pos - 512);
		if (h[156] == 'x')
			CHECK(pax_ok(h + 512, (size_t)fsize));
		else
			(*members)++;
		pos += 512 + (size_t)((fsize + 511) / 512 * 512);
	}
	CHECK(pos == (size_t)size && zeros >= 2);
out:
	free(buf);
	return err;
}

struct visit {
	const char *dir;
	const struct bt_build_id *id;
	const char *orig;  /* the orig_path expected, or NULL when any */
	size_t seen;
	bool bad;
};

static int visit_entry(void *ctx, const struct bt_bidcache_entry *e)
{
	struct visit *v = ctx;
	size_t dl = strlen(v->dir);
	v->seen++;
	if (!bt_buildid_eq(&e->id, v->id) || !e->orig_path || !e->dir ||
	    strncmp(e->dir, v->dir, dl) != 0 || e->dir[dl] != '/' ||
	    (v->orig && strcmp(e->orig_path, v->orig) != 0))
		v->bad = true;
	return 0;
}

/* Archives the cache into a memory file and reads the archive back. */
static int check_archive(const char *cache, size_t entries)
{
	int err = 0;
	int fd = memfd_create("bt-check-tar", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t count = SIZE_MAX, members = 0;
	int r = bt_bidcache_archive(cache, NULL, 0, fd, &count);
	CHECK(r <= 0);
	if (r == 0) {
		CHECK(count <= entries);
		CHECK_OK(check_tar(fd, &members));
		CHECK(members >= count);
	}
out:
	close(fd);
	return err;
}

/* A cache holding a link DIR/.build-id/xx/rest -> ../../TAIL, as perf or another machine may have
 * left it, and the ELF bytes at DIR/TAIL/elf. */
static int check_linked_entry(const char *dir, const char *tail, const uint8_t *elf, size_t elen,
			      const struct bt_build_id *id)
{
	int err = 0;
	char hex[2 * BT_BUILD_ID_MAXLEN + 1], path[1024], target[512], found[4096];
	bt_buildid_hex(id, hex, sizeof(hex));
	snprintf(path, sizeof(path), "%s/.build-id/%.2s", dir, hex);
	CHECK_OK(mkdir_p(path));
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s", dir, hex, hex + 2);
	snprintf(target, sizeof(target), "../../%s", tail);
	if (symlink(target, path) != 0)
		return -errno;
	if (tail_is_safe(tail)) {
		snprintf(path, sizeof(path), "%s/%s", dir, tail);
		if (mkdir_p(path) == 0) {
			snprintf(path, sizeof(path), "%s/%s/elf", dir, tail);
			write_file(path, elf, elen);
		}
	}

	int fd = bt_bidcache_open(dir, id, BT_BIDCACHE_ELF, found, sizeof(found));
	if (fd >= 0) {
		/* Opened means verified: inside the cache, and of the build-id asked for. */
		struct bt_build_id got;
		int r = bt_buildid_from_fd(fd, &got);
		close(fd);
		CHECK(r == 0 && bt_buildid_eq(&got, id));
		CHECK(strncmp(found, dir, strlen(dir)) == 0 && found[strlen(dir)] == '/');
	}
	/* Only an elf file was stored. */
	fd = bt_bidcache_open(dir, id, BT_BIDCACHE_DEBUG, NULL, 0);
	if (fd >= 0)
		close(fd);
	CHECK(fd < 0);

	struct visit v = { .dir = dir, .id = id };
	CHECK(bt_bidcache_foreach(dir, visit_entry, &v) == 0);
	CHECK(v.seen <= 1 && !v.bad);
	CHECK_OK(check_archive(dir, v.seen));

	/* Removal climbs directories up to the cache, never out of it. */
	bt_bidcache_remove(dir, id);
	struct stat st;
	CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
out:
	return err;
}

/* The name an entry added from path is listed under: perf's rules, written out independently. */
static void expected_orig(const char *path, char *out, size_t len)
{
	static const char deleted[] = " (deleted)";
	size_t n = strlen(path), dl = sizeof(deleted) - 1;
	if (n > dl && strcmp(path + n - dl, deleted) == 0)
		n -= dl;
	bool ok = path[0] == '/' && n > 1 && path[n - 1] != '/';
	for (size_t i = 1; ok && i < n;) {
		size_t c = 0;
		while (i + c < n && path[i + c] != '/')
			c++;
		ok = !bad_component(path + i, c) && !(i == 1 && c == 9 && !strncmp(path + 1, ".build-id", 9));
		i += c + 1;
	}
	if (!ok)
		snprintf(out, len, "[unknown]");
	else
		snprintf(out, len, "%.*s", (int)(path[1] == '[' ? n - 1 : n), path + (path[1] == '['));
}

/* A cache that receives the ELF file as if mapped from path "/TAIL". */
static int check_added_entry(const char *dir, const char *tail, const char *file,
			     const struct bt_build_id *id)
{
	int err = 0;
	char path[512], orig[512];
	snprintf(path, sizeof(path), "/%s", tail);
	expected_orig(path, orig, sizeof(orig));
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = bt_bidcache_add_fd(dir, id, path, fd);
	CHECK(r <= 0);
	if (r)
		goto out;
	/* Adding again finds the entry in place. */
	CHECK(bt_bidcache_add_fd(dir, id, path, fd) == 0);
	int got = bt_bidcache_open(dir, id, BT_BIDCACHE_ELF, NULL, 0);
	if (got >= 0)
		close(got);
	CHECK(got >= 0 || got == -EBADMSG);

	struct visit v = { .dir = dir, .id = id, .orig = orig };
	CHECK(bt_bidcache_foreach(dir, visit_entry, &v) == 0);
	CHECK(v.seen == 1 && !v.bad);
	CHECK_OK(check_archive(dir, 1));

	size_t removed = 0;
	uint64_t freed = 0;
	CHECK(bt_bidcache_prune(dir, 0, &removed, &freed) == 0 && removed == 1);
	v.seen = 0;
	CHECK(bt_bidcache_foreach(dir, visit_entry, &v) == 0 && v.seen == 0);
out:
	close(fd);
	return err;
}

/* Nothing was created next to the caches: they kept to their directories. */
static int check_sandbox(const char *sandbox)
{
	int err = 0;
	DIR *d = opendir(sandbox);
	if (!d)
		return -errno;
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		CHECK(!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || !strcmp(de->d_name, "a") ||
		      !strcmp(de->d_name, "b") || !strcmp(de->d_name, "input.elf"));
out:
	closedir(d);
	return err;
}

int bt_check_bidcache(const uint8_t *data, size_t len)
{
	int err = 0;
	char sandbox[256], a[300], b[300], file[300], tail[256];
	const uint8_t *nul = memchr(data, '\0', len < sizeof(tail) ? len : sizeof(tail));
	if (!nul)
		return 0;  /* not laid out as this check expects */
	size_t tlen = (size_t)(nul - data);
	memcpy(tail, data, tlen);
	tail[tlen] = '\0';
	const uint8_t *elf = nul + 1;
	size_t elen = len - tlen - 1;

	struct bt_build_id id;
	bool real_id = bt_buildid_from_mem(elf, elen, &id) == 0 && id.len >= 2;
	if (!real_id)
		id = placeholder_id;
	if ((err = make_sandbox(sandbox, sizeof(sandbox))) != 0)
		return err;
	snprintf(a, sizeof(a), "%s/a", sandbox);
	snprintf(b, sizeof(b), "%s/b", sandbox);
	snprintf(file, sizeof(file), "%s/input.elf", sandbox);
	if (mkdir(a, 0755) != 0 || mkdir(b, 0755) != 0 || write_file(file, elf, elen) != 0) {
		err = -errno;
		goto out;
	}
	CHECK_OK(check_linked_entry(a, tail, elf, elen, &id));
	if (real_id)
		CHECK_OK(check_added_entry(b, tail, file, &id));
	CHECK_OK(check_sandbox(sandbox));
out:
	nftw(sandbox, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return err;
}

/* ---- perf maps ---------------------------------------------------------------------------- */

/* The newest line of m holding addr, by looking at every line. */
static const struct bt_perfmap_entry *perfmap_brute(const struct bt_perfmap *m, uint64_t addr)
{
	const struct bt_perfmap_entry *best = NULL;
	for (size_t i = 0; i < m->nraw; i++)
		if (addr >= m->raw[i].start && addr < m->raw[i].end)
			best = &m->raw[i];
	return best;
}

static int check_perfmap_at(struct bt_perfmap *m, uint64_t addr)
{
	int err = 0;
	const struct bt_perfmap_entry *e = bt_perfmap_lookup(m, addr), *want = perfmap_brute(m, addr);
	CHECK((e == NULL) == (want == NULL));
	if (e) {
		CHECK(e->start <= addr && addr < e->end && e->seq == want->seq);
		CHECK(!strcmp(bt_perfmap_name(m, e), bt_perfmap_name(m, want)));
	}
out:
	return err;
}

int bt_check_perfmap(const uint8_t *data, size_t len)
{
	int err = 0;
	struct bt_perfmap whole, parts;
	bt_perfmap_init(&whole);
	bt_perfmap_init(&parts);
	size_t used = SIZE_MAX;
	CHECK_OK(bt_perfmap_parse(&whole, (const char *)data, len, true, &used));
	CHECK(used == len && whole.bytes == len);
	CHECK(whole.nraw + whole.bad_lines == whole.lines);
	/* The same bytes in two pieces, the first not the end: the same lines, whatever the cut. */
	size_t cut = len ? data[0] % (len + 1) : 0, u1 = 0, u2 = 0;
	CHECK_OK(bt_perfmap_parse(&parts, (const char *)data, cut, false, &u1));
	CHECK(u1 <= cut);
	CHECK_OK(bt_perfmap_parse(&parts, (const char *)data + u1, len - u1, true, &u2));
	CHECK(u1 + u2 == len && parts.nraw == whole.nraw && parts.bad_lines == whole.bad_lines);
	for (size_t i = 0; i < whole.nraw; i++) {
		const struct bt_perfmap_entry *a = &whole.raw[i], *b = &parts.raw[i];
		CHECK(a->start == b->start && a->end == b->end && a->start < a->end);
		const char *n = bt_perfmap_name(&whole, a);
		CHECK(n[0] && !strcmp(n, bt_perfmap_name(&parts, b)) && !strchr(n, '\n'));
	}
	/* Every line's ends and the bytes around them: the newest line holding each address. */
	for (size_t i = 0; i < whole.nraw && i < 256; i++) {
		const struct bt_perfmap_entry *e = &whole.raw[i];
		CHECK_OK(check_perfmap_at(&whole, e->start));
		CHECK_OK(check_perfmap_at(&whole, e->end - 1));
		CHECK_OK(check_perfmap_at(&whole, e->end));
		if (e->start)
			CHECK_OK(check_perfmap_at(&whole, e->start - 1));
	}
	for (size_t i = 1; i < whole.nsorted; i++)
		CHECK(whole.sorted[i - 1].end <= whole.sorted[i].start);
out:
	bt_perfmap_free(&whole);
	bt_perfmap_free(&parts);
	return err;
}

/* ---- jitdump ------------------------------------------------------------------------------ */

int bt_check_jitdump(const uint8_t *data, size_t len)
{
	int err = 0;
	struct bt_jitdump dw, dp;
	struct bt_perfmap whole, parts;
	bt_jitdump_init(&dw);
	bt_jitdump_init(&dp);
	bt_perfmap_init(&whole);
	bt_perfmap_init(&parts);
	size_t used = SIZE_MAX, u1 = 0, u2 = 0;
	int rw = bt_jitdump_parse(&dw, data, len, len, &whole, &used);
	CHECK(rw == 0 || rw == -EINVAL || rw == -EBADMSG || rw == -ENOMEM);
	if (rw == -ENOMEM) {
		err = rw;
		goto out;
	}
	CHECK(used <= len && dw.bytes == used);
	/* The same bytes in two pieces, the first of which is all there is yet: the same records. */
	size_t cut = len ? data[len - 1] % (len + 1) : 0;
	int r1 = bt_jitdump_parse(&dp, data, cut, cut, &parts, &u1);
	CHECK(u1 <= cut);
	int r2 = r1 ? r1 : bt_jitdump_parse(&dp, data + u1, len - u1, len - u1, &parts, &u2);
	CHECK(r2 == rw && (r2 || u1 + u2 == used));
	CHECK(parts.nraw == whole.nraw && dp.bad_records == dw.bad_records);
	for (size_t i = 0; i < whole.nraw; i++) {
		const struct bt_perfmap_entry *a = &whole.raw[i], *b = &parts.raw[i];
		CHECK(a->start == b->start && a->end == b->end && a->start < a->end);
		CHECK(!strcmp(bt_perfmap_name(&whole, a), bt_perfmap_name(&parts, b)));
	}
	for (size_t i = 0; i < whole.nraw && i < 256; i++) {
		const struct bt_perfmap_entry *e = &whole.raw[i];
		CHECK_OK(check_perfmap_at(&whole, e->start));
		CHECK_OK(check_perfmap_at(&whole, e->end - 1));
		CHECK_OK(check_perfmap_at(&whole, e->end));
	}
out:
	bt_jitdump_free(&dw);
	bt_jitdump_free(&dp);
	bt_perfmap_free(&whole);
	bt_perfmap_free(&parts);
	return err;
}
