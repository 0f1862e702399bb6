/* probeaddr.c - addresses of an ELF file as uprobes need them: in code or not, an instruction's start or not. */
#include "elf/probeaddr.h"

#include <errno.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>

static int code_segment(struct bt_elf *e, uint64_t vaddr, char *sect, size_t len)
{
	struct bt_elf_layout l;
	int err = bt_elf_layout(e, &l);
	if (err)
		return err;
	for (size_t i = 0; i < l.nload && i < BT_ELF_MAX_LOADS; i++) {
		const struct bt_elf_load *s = &l.load[i];
		if ((s->flags & PF_X) && vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			if (sect && len)
				snprintf(sect, len, "an executable segment");
			return 0;
		}
	}
	return -ERANGE;
}

int bt_elf_code_at(struct bt_elf *e, uint64_t vaddr, char *sect, size_t len)
{
	Elf *elf = bt_elf_handle(e);
	size_t shstrndx, nsec = 0;
	if (!elf || elf_getshdrnum(elf, &nsec) != 0 || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -ENOEXEC;
	if (nsec <= 1)
		return code_segment(e, vaddr, sect, len);
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) || sh.sh_type != SHT_PROGBITS)
			continue;
		if (vaddr < sh.sh_addr || vaddr - sh.sh_addr >= sh.sh_size)
			continue;
		if (sect && len) {
			const char *n = elf_strptr(elf, shstrndx, sh.sh_name);
			snprintf(sect, len, "%s", n ? n : "?");
		}
		return 0;
	}
	return -ERANGE;
}

int bt_elf_line_row_at(int fd, uint64_t vaddr)
{
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw)
		return 0;
	Dwarf_Die cu;
	Dwarf_Lines *lines;
	size_t n = 0;
	int known = 0;
	if (dwarf_addrdie(dw, vaddr, &cu) && dwarf_getsrclines(&cu, &lines, &n) == 0) {
		for (size_t i = 0; i < n && !known; i++) {
			Dwarf_Addr a;
			Dwarf_Line *l = dwarf_onesrcline(lines, i);
			known = l && dwarf_lineaddr(l, &a) == 0 && a == vaddr;
		}
	}
	dwarf_end(dw);
	return known;
}
