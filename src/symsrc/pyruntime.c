/* pyruntime.c - the interpreter's exported symbols, its version (the Py_Version word, or its name
 * and the PY_VERSION string of its read-only data) and its _Py_DebugOffsets, read from the file
 * through its PT_LOAD layout. */
#include "symsrc/pyruntime.h"

#include <ctype.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elf/elffile.h"

/* The file offset of vaddr, when a segment holds it (and len bytes after it) in the file. */
static int vaddr_offset(const struct bt_elf_layout *l, uint64_t vaddr, uint64_t len, uint64_t *off)
{
	for (size_t i = 0; i < l->nload && i < BT_ELF_MAX_LOADS; i++) {
		const struct bt_elf_load *s = &l->load[i];
		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz && s->filesz - (vaddr - s->vaddr) >= len) {
			*off = vaddr - s->vaddr + s->offset;
			return 0;
		}
	}
	return -ERANGE;
}

int bt_pyruntime_name_version(const char *name, unsigned *major, unsigned *minor)
{
	for (const char *p = name; (p = strstr(p, "python")) != NULL; p++) {
		unsigned ma, mi;
		int n = 0;
		if (sscanf(p + 6, "%1u.%2u%n", &ma, &mi, &n) == 2 && n >= 3 && isdigit((unsigned char)p[6]) &&
		    isdigit((unsigned char)p[8])) {
			*major = ma;
			*minor = mi;
			return 0;
		}
	}
	return -ENOENT;
}

/* PY_VERSION of major.minor in the read-only data: "3.9.18" (with a release level such as "rc1" or
 * a "+" after it), NUL-terminated; the linker may have merged it as the tail of a longer string.
 * Its micro, or -ENOENT. */
static int rodata_micro(struct bt_elf *e, unsigned major, unsigned minor)
{
	const void *data;
	size_t len;
	char want[16];
	int wl = snprintf(want, sizeof(want), "%u.%u.", major, minor);
	if (bt_elf_section(e, ".rodata", &data, &len))
		return -ENOENT;
	const char *d = data, *end = d + len;
	for (const char *p = d; (p = memmem(p, (size_t)(end - p), want, (size_t)wl)) != NULL; p++) {
		if (p > d && (isdigit((unsigned char)p[-1]) || p[-1] == '.'))
			continue;
		const char *q = p + wl;
		unsigned micro = 0, digits = 0;
		while (q < end && isdigit((unsigned char)*q) && digits < 3)
			micro = micro * 10 + (unsigned)(*q++ - '0'), digits++;
		if (!digits)
			continue;
		while (q < end && (isalnum((unsigned char)*q) || *q == '+') && q - p < 24)
			q++;
		if (q < end && *q == '\0')
			return (int)micro;
	}
	return -ENOENT;
}

/* The version: Py_Version (3.11+: PY_VERSION_HEX, 0xMMmmuuRS), else the name's, confirmed. */
static int version(struct bt_elf *e, int fd, const struct bt_elf_layout *l, const char *name,
		   struct bt_pyruntime *r)
{
	uint64_t ver, ver_size, off;
	if (bt_elf_symbol_any(e, "Py_Version", &ver, &ver_size) == 0 && (ver_size == 4 || ver_size == 8)) {
		/* a const unsigned long: 8 bytes here, whose first 4 (little-endian) hold the value */
		uint32_t v;
		if (vaddr_offset(l, ver, sizeof(v), &off) || pread(fd, &v, sizeof(v), (off_t)off) != (ssize_t)sizeof(v))
			return -ENOEXEC;
		r->major = v >> 24;
		r->minor = (v >> 16) & 0xff;
		r->micro = (v >> 8) & 0xff;
		return 0;
	}
	unsigned major, minor;
	if (!name || bt_pyruntime_name_version(name, &major, &minor))
		return -ENOTSUP;
	int micro = rodata_micro(e, major, minor);
	if (micro < 0)
		return -ENOTSUP;
	r->major = major;
	r->minor = minor;
	r->micro = (unsigned)micro;
	/* a name saying 3.11 or later of a file without Py_Version is not what it says */
	return major > 3 || (major == 3 && minor >= 11) ? -ENOTSUP : 0;
}

/* The interpreter's own description of its layout at the start of _PyRuntime (3.13+): 0 (taken,
 * or none there), or -ENOTSUP when it describes a layout this does not read (a free-threaded
 * build, another version's description, figures out of range): no table fits it either. */
static int debug_offsets(int fd, const struct bt_elf_layout *l, struct bt_pyruntime *r)
{
	uint8_t d[BT_PY_DEBUG_OFFSETS_BYTES];
	uint64_t off;
	if (r->major != 3 || r->minor < 13 || vaddr_offset(l, r->runtime_vaddr, sizeof(d), &off) ||
	    pread(fd, d, sizeof(d), (off_t)off) != (ssize_t)sizeof(d))
		return 0;
	struct bt_py_offsets o;
	int err = bt_pyoffsets_from_debug(d, sizeof(d), &o);
	if (err == -ENOENT)
		return 0;
	if (err || o.major != r->major || o.minor != r->minor)
		return -ENOTSUP;
	r->debug = o;
	r->have_debug = true;
	return 0;
}

static int inspect(struct bt_elf *e, int fd, const char *name, struct bt_pyruntime *r)
{
	struct bt_elf_layout l;
	uint64_t rt, rt_size, ev, ev_size, gv, gv_size;
	int err = bt_elf_layout(e, &l);
	if (err)
		return err;
	if (bt_elf_symbol_any(e, "Py_GetVersion", &gv, &gv_size) != 0)
		return -ENOENT;
	if ((err = version(e, fd, &l, name, r)))
		return err;
	if (bt_elf_symbol_any(e, "_PyRuntime", &rt, &rt_size) != 0 ||
	    bt_elf_symbol_any(e, "_PyEval_EvalFrameDefault", &ev, &ev_size) != 0 || !ev_size)
		return -ENOTSUP;
	r->runtime_vaddr = rt;
	if (vaddr_offset(&l, ev, 1, &r->eval_offset))
		return -ENOEXEC;
	r->eval_size = ev_size;
	if (debug_offsets(fd, &l, r) || !bt_pyruntime_offsets(r))
		return -ENOTSUP;
	for (size_t i = 0; i < l.nload && i < BT_ELF_MAX_LOADS; i++) {
		const struct bt_elf_load *s = &l.load[i];
		if ((s->flags & PF_X) && ev >= s->vaddr && ev - s->vaddr < s->filesz) {
			r->text_vaddr = s->vaddr;
			r->text_offset = s->offset;
			return 0;
		}
	}
	return -ENOEXEC;
}

int bt_pyruntime_read(int fd, const char *name, struct bt_pyruntime *out)
{
	struct bt_elf *e;
	memset(out, 0, sizeof(*out));
	int err = bt_elf_open_fd(fd, &e);
	if (err)
		return err;
	err = inspect(e, fd, name, out);
	bt_elf_close(e);
	return err;
}

const struct bt_py_offsets *bt_pyruntime_offsets(const struct bt_pyruntime *r)
{
	return r->have_debug ? &r->debug : bt_pyoffsets_get(r->major, r->minor);
}

uint64_t bt_pyruntime_addr(const struct bt_pyruntime *r, uint64_t start, uint64_t pgoff)
{
	/* start is where file offset pgoff is; text_offset is at text_vaddr plus the load bias */
	return start - pgoff + r->text_offset - r->text_vaddr + r->runtime_vaddr;
}
