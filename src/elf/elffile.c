/* elffile.c - opens ELF files through libelf (read from the file with pread, in memory, or
 * decompressed) and reads their notes, .gnu_debuglink, sections and PT_LOAD layout, validating every
 * length against the file. */
#include "elf/elffile.h"
#include "base/decompress.h"
#include "base/safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Decompressed ELF files (kernel modules) larger than this are refused, and compressed ones
 * larger than the second. */
#define BT_ELF_MAX_DECOMPRESSED ((size_t)1 << 30)
#define BT_ELF_MAX_COMPRESSED ((size_t)1 << 28)

struct bt_elf {
	Elf *elf;
	int fd;           /* our descriptor libelf reads the file through, or -1 */
	void *heap;       /* our decompressed copy, or NULL */
};

static int libelf_ready(void)
{
	/* elf_version is idempotent and cheap; calling it every time avoids global "initialised" state. */
	return elf_version(EV_CURRENT) == EV_NONE ? -ENOSYS : 0;
}

/* Opens libelf on an image that the caller keeps alive for the handle's lifetime. */
static int wrap_mem(const void *buf, size_t len, struct bt_elf **out)
{
	int err = libelf_ready();
	if (err)
		return err;
	if (len < EI_NIDENT || memcmp(buf, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	struct bt_elf *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->fd = -1;
	/* libelf only reads the image when no update is asked for; the cast is its API's. */
	e->elf = elf_memory((char *)buf, len);
	GElf_Ehdr eh;
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &eh)) {
		if (e->elf)
			elf_end(e->elf);
		free(e);
		return -ENOEXEC;
	}
	*out = e;
	return 0;
}

int bt_elf_open_mem(const void *buf, size_t len, struct bt_elf **out)
{
	if (!buf || !out)
		return -EINVAL;
	return wrap_mem(buf, len, out);
}

/* len bytes at off, all of them: a file that shrank meanwhile gives -ENOEXEC. */
static int pread_all(int fd, void *buf, size_t len, off_t off)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, off + (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOEXEC;
		got += (size_t)n;
	}
	return 0;
}

/* A compressed file read whole and decompressed onto the heap. */
static int open_compressed(int fd, size_t len, struct bt_elf **out)
{
	if (len > BT_ELF_MAX_COMPRESSED)
		return -EFBIG;
	void *raw = malloc(len);
	if (!raw)
		return -ENOMEM;
	int err = pread_all(fd, raw, len, 0);
	void *plain = NULL;
	size_t plen = 0;
	if (!err) {
		err = bt_decompress(raw, len, BT_ELF_MAX_DECOMPRESSED, &plain, &plen);
		if (err == -EINVAL)
			err = -ENOEXEC;
	}
	free(raw);
	if (err)
		return err;
	err = wrap_mem(plain, plen, out);
	if (err) {
		free(plain);
		return err;
	}
	(*out)->heap = plain;
	return 0;
}

/* A regular file is read by libelf with pread, section by section, as it is asked for: never mapped,
 * since a file that another process truncates while it is mapped here would turn the next access
 * into SIGBUS. Compressed files (when allowed) are decompressed onto the heap. */
static int open_regular_fd(int fd, bool allow_compressed, struct bt_elf **out)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size < EI_NIDENT)
		return -ENOEXEC;
	if ((uint64_t)st.st_size > SIZE_MAX)
		return -EFBIG;
	size_t len = (size_t)st.st_size;
	unsigned char magic[EI_NIDENT];
	int err = pread_all(fd, magic, sizeof(magic), 0);
	if (err)
		return err;
	if (allow_compressed && bt_compression_detect(magic, sizeof(magic)) != BT_COMP_NONE)
		return open_compressed(fd, len, out);
	if (memcmp(magic, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	err = libelf_ready();
	if (err)
		return err;
	struct bt_elf *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	/* Our own descriptor: libelf reads through it for the handle's whole life. */
	e->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (e->fd < 0) {
		err = -errno;
		free(e);
		return err;
	}
	e->elf = elf_begin(e->fd, ELF_C_READ, NULL);
	GElf_Ehdr eh;
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &eh)) {
		if (e->elf)
			elf_end(e->elf);
		close(e->fd);
		free(e);
		return -ENOEXEC;
	}
	*out = e;
	return 0;
}

int bt_elf_open_fd(int fd, struct bt_elf **out)
{
	if (fd < 0 || !out)
		return -EINVAL;
	return open_regular_fd(fd, false, out);
}

int bt_elf_open_path(const char *path, struct bt_elf **out)
{
	if (!path || !out)
		return -EINVAL;
	/* A FIFO or device planted where a library was expected is refused before it is opened. */
	int fd = bt_open_regular(AT_FDCWD, path, 0, NULL);
	if (fd < 0)
		return fd;
	int err = open_regular_fd(fd, true, out);
	close(fd);  /* the handle reads through its own descriptor, or from the heap */
	return err;
}

void bt_elf_close(struct bt_elf *e)
{
	if (!e)
		return;
	elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	free(e->heap);
	free(e);
}

Elf *bt_elf_handle(struct bt_elf *e)
{
	return e ? e->elf : NULL;
}

/* Looks for an NT_GNU_BUILD_ID note named "GNU" in one block of notes. */
static bool find_build_id(Elf_Data *d, struct bt_build_id *out)
{
	if (!d || !d->d_buf)
		return false;
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;
	/* gelf_getnote returns the next offset, 0 at the end or on a note running past the data. */
	while (off < d->d_size && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) != 0) {
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != sizeof("GNU") ||
		    memcmp((const char *)d->d_buf + name_off, "GNU", sizeof("GNU")) != 0)
			continue;
		if (nh.n_descsz == 0 || nh.n_descsz > BT_BUILD_ID_MAXLEN)
			continue;
		out->len = (uint8_t)nh.n_descsz;
		memcpy(out->data, (const char *)d->d_buf + desc_off, nh.n_descsz);
		return true;
	}
	return false;
}

int bt_elf_build_id(struct bt_elf *e, struct bt_build_id *out)
{
	if (!e || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	Elf *elf = e->elf;
	size_t phnum = 0;
	/* Segments first: they are what the loader maps, and survive section stripping. */
	if (elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE || ph.p_filesz == 0)
				continue;
			Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
							   ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
			if (find_build_id(d, out))
				return 0;
		}
	}
	/* Sections: relocatable files (kernel modules) have no segments. libelf picks the note
	 * alignment from sh_addralign. */
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = NULL;
		while ((d = elf_getdata(scn, d)) != NULL)
			if (find_build_id(d, out))
				return 0;
	}
	return -ENODATA;
}

/* The first section named name, or NULL. */
static Elf_Scn *section_by_name(Elf *elf, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, sh))
			continue;
		/* elf_strptr checks the offset against the string section's bounds. */
		const char *n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

int bt_elf_section(struct bt_elf *e, const char *name, const void **data, size_t *len)
{
	return bt_elf_section_at(e, name, data, len, NULL);
}

int bt_elf_section_at(struct bt_elf *e, const char *name, const void **data, size_t *len, uint64_t *addr)
{
	if (!e || !name || !data || !len)
		return -EINVAL;
	GElf_Shdr sh;
	Elf_Scn *scn = section_by_name(e->elf, name, &sh);
	if (!scn || sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
		return -ENODATA;
	/* The bytes as stored (never byte-swapped), read for this section alone; a file cut short
	 * gives less than the header promises. */
	Elf_Data *d = elf_rawdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size != sh.sh_size)
		return -ENOEXEC;
	*data = d->d_buf;
	*len = d->d_size;
	if (addr)
		*addr = sh.sh_addr;
	return 0;
}

/* The first defined symbol called name in the sections of type type. */
static int symbol_in(struct bt_elf *e, Elf64_Word type, const char *name, uint64_t *value, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e->elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			return -ENOEXEC;
		size_t n = d->d_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *sn;
			if (gelf_getsym(d, (int)i, &sym) && sym.st_shndx != SHN_UNDEF &&
			    (sn = elf_strptr(e->elf, sh.sh_link, sym.st_name)) && !strcmp(sn, name)) {
				*value = sym.st_value;
				if (size)
					*size = sym.st_size;
				return 0;
			}
		}
	}
	return -ENODATA;
}

int bt_elf_symbol_value(struct bt_elf *e, const char *name, uint64_t *value)
{
	if (!e || !name || !value)
		return -EINVAL;
	return symbol_in(e, SHT_SYMTAB, name, value, NULL);
}

int bt_elf_symbol_any(struct bt_elf *e, const char *name, uint64_t *value, uint64_t *size)
{
	if (!e || !name || !value || !size)
		return -EINVAL;
	int err = symbol_in(e, SHT_DYNSYM, name, value, size);
	return err == -ENODATA ? symbol_in(e, SHT_SYMTAB, name, value, size) : err;
}

int bt_elf_debuglink(struct bt_elf *e, char *name, size_t namelen, uint32_t *crc)
{
	if (!e || !name || namelen == 0 || !crc)
		return -EINVAL;
	const void *p;
	size_t len;
	int err = bt_elf_section(e, ".gnu_debuglink", &p, &len);
	if (err)
		return err;
	/* Layout: NUL-terminated name, zero padding to 4 bytes, CRC32 in the file's byte order. */
	const unsigned char *b = p;
	const unsigned char *nul = memchr(b, '\0', len);
	if (!nul || nul == b)
		return -ENOEXEC;
	size_t nlen = (size_t)(nul - b);
	size_t crc_off = (nlen + 1 + 3) & ~(size_t)3;
	if (crc_off + 4 > len)
		return -ENOEXEC;
	if (nlen + 1 > namelen)
		return -ENAMETOOLONG;
	const char *ident = elf_getident(e->elf, NULL);
	const unsigned char *c = b + crc_off;
	if (ident && ident[EI_DATA] == ELFDATA2MSB)
		*crc = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3];
	else
		*crc = (uint32_t)c[3] << 24 | (uint32_t)c[2] << 16 | (uint32_t)c[1] << 8 | c[0];
	memcpy(name, b, nlen + 1);
	return 0;
}

int bt_elf_file_crc32(int fd, uint64_t max, uint32_t *crc)
{
	if (fd < 0 || !crc)
		return -EINVAL;
	unsigned char buf[64 * 1024];
	uLong c = crc32(0L, Z_NULL, 0);
	off_t pos = 0;
	for (;;) {
		/* pread: the caller's file position stays where it was. */
		ssize_t n = pread(fd, buf, sizeof(buf), pos);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		if ((uint64_t)pos + (uint64_t)n > max)
			return -EFBIG;
		c = crc32(c, buf, (uInt)n);
		pos += n;
	}
	*crc = (uint32_t)c;
	return 0;
}

static void extend(uint64_t *end, uint64_t off, uint64_t size)
{
	uint64_t e = off + size < off ? UINT64_MAX : off + size;
	if (e > *end)
		*end = e;
}

int bt_elf_extent(struct bt_elf *e, uint64_t *end)
{
	GElf_Ehdr eh;
	size_t shnum, phnum;
	if (!e || !gelf_getehdr(e->elf, &eh) || elf_getshdrnum(e->elf, &shnum) != 0 ||
	    elf_getphdrnum(e->elf, &phnum) != 0)
		return -ENOEXEC;
	*end = eh.e_ehsize;
	extend(end, eh.e_shoff, (uint64_t)shnum * eh.e_shentsize);
	extend(end, eh.e_phoff, (uint64_t)phnum * eh.e_phentsize);
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e->elf, (int)i, &ph))
			extend(end, ph.p_offset, ph.p_filesz);
	}
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e->elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && sh.sh_type != SHT_NULL)
			extend(end, sh.sh_offset, sh.sh_size);
	}
	return 0;
}

int bt_elf_layout(struct bt_elf *e, struct bt_elf_layout *out)
{
	if (!e || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	GElf_Ehdr eh;
	if (!gelf_getehdr(e->elf, &eh))
		return -ENOEXEC;
	out->type = eh.e_type;
	size_t phnum;
	if (elf_getphdrnum(e->elf, &phnum) != 0)
		return -ENOEXEC;
	for (size_t i = 0; i < phnum && out->nload < BT_ELF_MAX_LOADS; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e->elf, (int)i, &ph))
			return -ENOEXEC;
		if (ph.p_type != PT_LOAD)
			continue;
		struct bt_elf_load *l = &out->load[out->nload++];
		l->vaddr = ph.p_vaddr;
		l->offset = ph.p_offset;
		l->filesz = ph.p_filesz;
		l->memsz = ph.p_memsz;
		l->flags = ph.p_flags;
	}
	return 0;
}

uint64_t bt_elf_raw_section_bytes(Elf *elf, const char *prefix)
{
	size_t shstrndx;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	uint64_t total = 0;
	size_t plen = strlen(prefix);
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (name = elf_strptr(elf, shstrndx, sh.sh_name)) && !strncmp(name, prefix, plen))
			total += sh.sh_size;
	}
	return total;
}

int bt_elf_interp(struct bt_elf *e, char *buf, size_t len)
{
	if (!e || !buf || !len)
		return -EINVAL;
	size_t phnum;
	if (elf_getphdrnum(e->elf, &phnum) != 0)
		return -ENOEXEC;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e->elf, (int)i, &ph))
			return -ENOEXEC;
		if (ph.p_type != PT_INTERP)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(e->elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (!d || !d->d_buf || !d->d_size)
			return -ENOEXEC;
		size_t n = strnlen(d->d_buf, d->d_size);
		if (n == 0 || n == d->d_size || n >= len)
			return n >= len ? -ENAMETOOLONG : -ENOEXEC;
		memcpy(buf, d->d_buf, n + 1);
		return 0;
	}
	return -ENODATA;
}

/* The PT_LOAD segment holding pos, an offset in the file (by_vaddr false) or an address (true), with
 * bytes present in the file; where segments overlap, the executable one. NULL when none does. */
static const struct bt_elf_load *load_holding(const struct bt_elf_layout *l, uint64_t pos, bool by_vaddr)
{
	const struct bt_elf_load *best = NULL;
	for (size_t i = 0; i < l->nload && i < BT_ELF_MAX_LOADS; i++) {
		const struct bt_elf_load *s = &l->load[i];
		uint64_t base = by_vaddr ? s->vaddr : s->offset;
		/* Written as a difference so that a hostile position + filesz cannot wrap. */
		if (pos < base || pos - base >= s->filesz)
			continue;
		if (!best || ((s->flags & PF_X) && !(best->flags & PF_X)))
			best = s;
	}
	return best;
}

int bt_elf_offset_to_vaddr(const struct bt_elf_layout *l, uint64_t offset, uint64_t *vaddr)
{
	if (!l || !vaddr)
		return -EINVAL;
	const struct bt_elf_load *s = load_holding(l, offset, false);
	if (!s)
		return -ERANGE;
	*vaddr = offset - s->offset + s->vaddr;
	return 0;
}

int bt_elf_vaddr_to_offset(const struct bt_elf_layout *l, uint64_t vaddr, uint64_t *offset)
{
	if (!l || !offset)
		return -EINVAL;
	const struct bt_elf_load *s = load_holding(l, vaddr, true);
	if (!s)
		return -ERANGE;
	*offset = vaddr - s->vaddr + s->offset;
	return 0;
}
