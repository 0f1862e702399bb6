/* pyruntime.c - the interpreter's exported symbols and its Py_Version word, read from the file
 * through its PT_LOAD layout. */
#include "symsrc/pyruntime.h"

#include <errno.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "elf/elffile.h"

/* The file offset of vaddr, when a segment holds it in the file. */
static int vaddr_offset(const struct bt_elf_layout *l, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < l->nload && i < BT_ELF_MAX_LOADS; i++) {
		const struct bt_elf_load *s = &l->load[i];
		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			*off = vaddr - s->vaddr + s->offset;
			return 0;
		}
	}
	return -ERANGE;
}

static int inspect(struct bt_elf *e, int fd, struct bt_pyruntime *r)
{
	struct bt_elf_layout l;
	uint64_t rt, rt_size, ev, ev_size, ver, ver_size;
	int err = bt_elf_layout(e, &l);
	if (err)
		return err;
	if (bt_elf_symbol_any(e, "_PyRuntime", &rt, &rt_size) != 0 ||
	    bt_elf_symbol_any(e, "_PyEval_EvalFrameDefault", &ev, &ev_size) != 0 || !ev_size)
		return -ENOENT;
	/* a const unsigned long: 8 bytes here, whose first 4 (little-endian) hold the value */
	if (bt_elf_symbol_any(e, "Py_Version", &ver, &ver_size) != 0 || (ver_size != 4 && ver_size != 8))
		return -ENOTSUP;
	uint64_t off;
	uint32_t v;
	if (vaddr_offset(&l, ver, &off) || pread(fd, &v, sizeof(v), (off_t)off) != (ssize_t)sizeof(v))
		return -ENOEXEC;
	/* PY_VERSION_HEX: 0xMMmmuuRS */
	r->major = v >> 24;
	r->minor = (v >> 16) & 0xff;
	r->micro = (v >> 8) & 0xff;
	r->runtime_vaddr = rt;
	if (vaddr_offset(&l, ev, &r->eval_offset))
		return -ENOEXEC;
	r->eval_size = ev_size;
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

int bt_pyruntime_read(int fd, struct bt_pyruntime *out)
{
	struct bt_elf *e;
	memset(out, 0, sizeof(*out));
	int err = bt_elf_open_fd(fd, &e);
	if (err)
		return err;
	err = inspect(e, fd, out);
	bt_elf_close(e);
	return err;
}

uint64_t bt_pyruntime_addr(const struct bt_pyruntime *r, uint64_t start, uint64_t pgoff)
{
	/* start is where file offset pgoff is; text_offset is at text_vaddr plus the load bias */
	return start - pgoff + r->text_offset - r->text_vaddr + r->runtime_vaddr;
}
