/* minidebuginfo.c - decompresses .gnu_debugdata and merges the binary's .dynsym functions into the
 * embedded ELF's .symtab (rewritten with libelf in an anonymous memory file), so that one symbol
 * table answers for both the exported and the internal functions. */
#include "elf/minidebuginfo.h"
#include "base/decompress.h"
#include "base/wfile.h"

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static Elf_Scn *first_of_type(Elf *elf, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, sh) && sh->sh_type == type)
			return scn;
	return NULL;
}

static const char *section_name(Elf *elf, size_t ndx)
{
	size_t shstrndx;
	GElf_Shdr sh;
	Elf_Scn *scn = elf_getscn(elf, ndx);
	if (!scn || !gelf_getshdr(scn, &sh) || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	return elf_strptr(elf, shstrndx, sh.sh_name);
}

/* The section of the embedded ELF that stands for the binary's section bin_ndx: the one of the
 * same name, else an allocated one containing addr; SHN_ABS when there is none. */
static Elf64_Section map_section(Elf *bin, size_t bin_ndx, Elf *mini, uint64_t addr)
{
	const char *want = section_name(bin, bin_ndx);
	size_t shstrndx;
	if (elf_getshdrstrndx(mini, &shstrndx) != 0)
		return SHN_ABS;
	Elf_Scn *scn = NULL, *containing = NULL;
	while ((scn = elf_nextscn(mini, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(mini, shstrndx, sh.sh_name);
		if (want && name && !strcmp(name, want))
			return elf_ndxscn(scn) < SHN_LORESERVE ? (Elf64_Section)elf_ndxscn(scn) : SHN_ABS;
		if (!containing && (sh.sh_flags & SHF_ALLOC) && addr >= sh.sh_addr &&
		    addr - sh.sh_addr < sh.sh_size)
			containing = scn;
	}
	if (containing && elf_ndxscn(containing) < SHN_LORESERVE)
		return (Elf64_Section)elf_ndxscn(containing);
	return SHN_ABS;
}

struct extra {
	GElf_Sym *syms;
	size_t n;
	char *names;
	size_t names_len;
};

/* The binary's defined .dynsym functions, with names relative to strbase and sections renumbered
 * into the embedded ELF's. */
static int collect_dynsym(Elf *bin, Elf *mini, size_t strbase, struct extra *x)
{
	GElf_Shdr sh;
	Elf_Scn *scn = first_of_type(bin, SHT_DYNSYM, &sh);
	if (!scn)
		return 0;
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t symsz = gelf_fsize(bin, ELF_T_SYM, 1, EV_CURRENT);
	if (!d || !symsz)
		return 0;
	size_t count = d->d_size / symsz, cap = 0;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s))
			break;
		unsigned type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
		    s.st_shndx >= SHN_LORESERVE || !s.st_value)
			continue;
		const char *name = elf_strptr(bin, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		size_t nl = strlen(name) + 1;
		if (x->n == cap) {
			size_t ncap = cap ? 2 * cap : 256;
			GElf_Sym *ns = realloc(x->syms, ncap * sizeof(*ns));
			if (!ns)
				return -ENOMEM;
			x->syms = ns;
			cap = ncap;
		}
		char *nn = realloc(x->names, x->names_len + nl);
		if (!nn)
			return -ENOMEM;
		x->names = nn;
		memcpy(x->names + x->names_len, name, nl);
		s.st_name = (Elf64_Word)(strbase + x->names_len);
		s.st_shndx = map_section(bin, s.st_shndx, mini, s.st_value);
		x->names_len += nl;
		x->syms[x->n++] = s;
	}
	return 0;
}

/* Appends the extra symbols and names to the embedded ELF open read-write on fd. */
static int merge_into(int fd, Elf *bin)
{
	Elf *mini = elf_begin(fd, ELF_C_RDWR, NULL);
	if (!mini || elf_kind(mini) != ELF_K_ELF) {
		if (mini)
			elf_end(mini);
		return -EINVAL;
	}
	struct extra x = { 0 };
	GElf_Shdr symsh, strsh;
	Elf_Scn *symscn = first_of_type(mini, SHT_SYMTAB, &symsh);
	Elf_Scn *strscn = symscn ? elf_getscn(mini, symsh.sh_link) : NULL;
	int err = 0;
	if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB ||
	    strsh.sh_size > UINT32_MAX)
		goto out;  /* nothing to merge into: the embedded ELF stays as it is */
	if ((err = collect_dynsym(bin, mini, strsh.sh_size, &x)) != 0 || !x.n)
		goto out;
	size_t symsz = gelf_fsize(mini, ELF_T_SYM, 1, EV_CURRENT);
	Elf_Data *sd = elf_newdata(symscn), *nd = elf_newdata(strscn);
	void *symbuf = calloc(x.n, symsz ? symsz : 1);
	if (!sd || !nd || !symbuf || !symsz) {
		free(symbuf);
		err = sd && nd && symsz ? -ENOMEM : -EINVAL;
		goto out;
	}
	sd->d_type = ELF_T_SYM;
	sd->d_buf = symbuf;
	sd->d_size = x.n * symsz;
	sd->d_align = gelf_getclass(mini) == ELFCLASS64 ? 8 : 4;
	sd->d_version = EV_CURRENT;
	for (size_t i = 0; i < x.n; i++)
		if (!gelf_update_sym(sd, (int)i, &x.syms[i]))
			err = -EINVAL;
	nd->d_type = ELF_T_BYTE;
	nd->d_buf = x.names;
	nd->d_size = x.names_len;
	nd->d_align = 1;
	nd->d_version = EV_CURRENT;
	/* libelf lays the file out again; the program headers are kept as they were. A hostile
	 * section alignment would make that layout (and the memory file written) gigantic, so its
	 * size is computed first and held to the cap the decompressed section already has. */
	if (!err) {
		int64_t size = elf_update(mini, ELF_C_NULL);
		if (size < 0 || (uint64_t)size > BT_MINIDEBUGINFO_MAX)
			err = size < 0 ? -EINVAL : -EFBIG;
	}
	if (!err && elf_update(mini, ELF_C_WRITE) < 0)
		err = -EINVAL;
	elf_end(mini);
	mini = NULL;
	free(symbuf);
out:
	if (mini)
		elf_end(mini);
	free(x.syms);
	free(x.names);
	return err;
}

int bt_minidebuginfo_load(struct bt_elf *binary, struct bt_symtab **out)
{
	if (!binary || !out)
		return -EINVAL;
	const void *data;
	size_t len;
	int err = bt_elf_section(binary, ".gnu_debugdata", &data, &len);
	if (err)
		return err;
	void *plain = NULL;
	size_t plen = 0;
	err = bt_decompress(data, len, BT_MINIDEBUGINFO_MAX, &plain, &plen);
	if (err)
		return err == -EFBIG ? err : -EINVAL;
	int fd = memfd_create("bt-minidebuginfo", MFD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(plain);
		return err;
	}
	err = bt_write_all(fd, plain, plen);
	free(plain);
	if (!err)
		err = merge_into(fd, bt_elf_handle(binary));
	struct bt_elf *mini = NULL;
	if (!err)
		err = bt_elf_open_fd(fd, &mini);
	if (!err) {
		err = bt_symtab_load_with_plt(mini, binary, out);
		bt_elf_close(mini);
	}
	close(fd);
	return err == -ENOEXEC ? -EINVAL : err;
}
