/* kmods.c - a session's kernel modules: versions kept by id (a module unloaded and loaded again is a
 * new version, so frames sampled before keep the old one), live versions sorted by base for address
 * lookups, and function symbols from a version's .ko file at the addresses its sections were loaded
 * at. */
#include "kernel/kmods.h"
#include "base/safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elffile.h"

struct kmod_sym {
	uint64_t addr, size;
	uint32_t name;   /* offset into names */
};

struct bt_kmod_syms {
	struct kmod_sym *s;
	size_t n;
	char *names;
};

static void syms_free(struct bt_kmod_syms *t)
{
	if (!t)
		return;
	free(t->s);
	free(t->names);
	free(t);
}

void bt_kmods_free(struct bt_kmods *k)
{
	for (size_t i = 0; i < k->n; i++)
		syms_free(k->v[i].syms);
	free(k->v);
	free(k->live);
	memset(k, 0, sizeof(*k));
}

static int live_cmp(const struct bt_kmods *k, uint32_t a, uint32_t b)
{
	const struct bt_kmodule *x = &k->v[a].mod, *y = &k->v[b].mod;
	return x->base < y->base ? -1 : x->base > y->base;
}

/* Rebuilds the sorted list of live versions with addresses (modules are few; loads are rare). */
static int relist(struct bt_kmods *k)
{
	uint32_t *l = realloc(k->live, (k->n ? k->n : 1) * sizeof(*l));
	if (!l)
		return -ENOMEM;
	k->live = l;
	k->nlive = 0;
	for (size_t i = 0; i < k->n; i++) {
		if (!k->v[i].live || !k->v[i].mod.base || !k->v[i].mod.size)
			continue;
		/* insertion sort: the list is short and nearly sorted */
		size_t j = k->nlive++;
		while (j > 0 && live_cmp(k, l[j - 1], (uint32_t)i) > 0) {
			l[j] = l[j - 1];
			j--;
		}
		l[j] = (uint32_t)i;
	}
	return 0;
}

static int64_t push(struct bt_kmods *k, const struct bt_kmodule *m)
{
	if (k->n == k->cap) {
		size_t ncap = k->cap ? 2 * k->cap : 64;
		struct bt_kmod_ver *nv = realloc(k->v, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		k->v = nv;
		k->cap = ncap;
	}
	struct bt_kmod_ver *v = &k->v[k->n];
	memset(v, 0, sizeof(*v));
	v->mod = *m;
	v->mod.name[sizeof(v->mod.name) - 1] = '\0';
	v->live = 1;
	return (int64_t)k->n++;
}

int bt_kmods_init(struct bt_kmods *k, const char *root)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->root, sizeof(k->root), "%s", root ? root : "");
	if (bt_kident_release(k->root, k->release, sizeof(k->release)) != 0)
		k->release[0] = '\0';
	struct bt_kmodules now = { 0 };
	int err = bt_kident_modules_load(k->root, &now);
	if (err == -ENOENT)
		err = 0;  /* a kernel without module support */
	for (size_t i = 0; !err && i < now.n; i++)
		if (push(k, &now.mods[i]) < 0)
			err = -ENOMEM;
	bt_kident_modules_free(&now);
	int lerr = relist(k);
	return err ? err : lerr;
}

int64_t bt_kmods_add(struct bt_kmods *k, const struct bt_kmodule *m)
{
	if (!m || !m->name[0])
		return -EINVAL;
	for (size_t i = 0; i < k->n; i++) {
		struct bt_kmod_ver *v = &k->v[i];
		if (!v->live)
			continue;
		bool same_name = strncmp(v->mod.name, m->name, sizeof(v->mod.name)) == 0;
		bool overlap = m->size && v->mod.size && v->mod.base < m->base + m->size &&
			       m->base < v->mod.base + v->mod.size;
		if (same_name || overlap)
			v->live = 0;
	}
	int64_t id = push(k, m);
	if (id < 0)
		return id;
	int err = relist(k);
	return err ? err : id;
}

int64_t bt_kmods_at(const struct bt_kmods *k, uint64_t addr)
{
	size_t lo = 0, hi = k->nlive;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->v[k->live[mid]].mod.base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -ENOENT;
	const struct bt_kmodule *m = &k->v[k->live[lo - 1]].mod;
	return addr - m->base < m->size ? (int64_t)k->live[lo - 1] : -ENOENT;
}

/* Where the kernel loaded section sec of module name: ROOT/sys/module/NAME/sections/SEC holds it
 * as "0x..." (readable by root only). 0 when unknown. */
static uint64_t section_base(const char *root, const char *name, const char *sec)
{
	if (!sec[0] || strchr(sec, '/') || !strcmp(sec, ".") || !strcmp(sec, ".."))
		return 0;
	char path[1024], buf[64];
	int n = snprintf(path, sizeof(path), "%s/sys/module/%s/sections/%s", root, name, sec);
	if (n < 0 || (size_t)n >= sizeof(path))
		return 0;
	int fd = bt_open_regular(AT_FDCWD, path, 0, NULL);
	if (fd < 0)
		return 0;
	ssize_t r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return 0;
	buf[r] = '\0';
	char *end;
	unsigned long long v = strtoull(buf, &end, 16);
	return end != buf && (*end == '\n' || *end == '\0') ? (uint64_t)v : 0;
}

static int sym_cmp(const void *pa, const void *pb)
{
	const struct kmod_sym *a = pa, *b = pb;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* The function symbols of a relocatable .ko, each at its section's load address. */
static int load_syms(const char *root, const char *modname, const char *path, struct bt_kmod_syms **out)
{
	struct bt_elf *e;
	int err = bt_elf_open_path(path, &e);
	if (err)
		return err;
	Elf *elf = bt_elf_handle(e);
	size_t shnum = 0, shstrndx = 0;
	struct bt_kmod_syms *t = calloc(1, sizeof(*t));
	uint64_t *bases = NULL;
	size_t names_len = 0, names_cap = 0, cap = 0;
	err = -ENOMEM;
	if (!t || elf_getshdrnum(elf, &shnum) != 0 || elf_getshdrstrndx(elf, &shstrndx) != 0)
		goto fail;
	err = -ENOMEM;
	bases = calloc(shnum ? shnum : 1, sizeof(*bases));
	if (!bases)
		goto fail;
	/* UINT64_MAX: not read yet */
	for (size_t i = 0; i < shnum; i++)
		bases[i] = UINT64_MAX;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t nsyms = d ? d->d_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < nsyms; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE || s.st_shndx >= shnum)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			if (bases[s.st_shndx] == UINT64_MAX) {
				GElf_Shdr ss;
				Elf_Scn *sec = elf_getscn(elf, s.st_shndx);
				const char *sname = sec && gelf_getshdr(sec, &ss) ? elf_strptr(elf, shstrndx, ss.sh_name) : NULL;
				bases[s.st_shndx] = sname ? section_base(root, modname, sname) : 0;
			}
			if (!bases[s.st_shndx])
				continue;
			size_t nlen = strlen(name) + 1;
			if (names_len + nlen > names_cap) {
				size_t ncap = names_cap ? 2 * names_cap : 4096;
				while (ncap < names_len + nlen)
					ncap *= 2;
				char *nn = realloc(t->names, ncap);
				if (!nn)
					goto fail;
				t->names = nn;
				names_cap = ncap;
			}
			if (t->n == cap) {
				size_t ncap = cap ? 2 * cap : 256;
				struct kmod_sym *ns = realloc(t->s, ncap * sizeof(*ns));
				if (!ns)
					goto fail;
				t->s = ns;
				cap = ncap;
			}
			memcpy(t->names + names_len, name, nlen);
			t->s[t->n++] = (struct kmod_sym){ bases[s.st_shndx] + s.st_value, s.st_size,
							  (uint32_t)names_len };
			names_len += nlen;
		}
	}
	err = -ENODATA;
	if (!t->n)
		goto fail;
	qsort(t->s, t->n, sizeof(*t->s), sym_cmp);
	free(bases);
	bt_elf_close(e);
	*out = t;
	return 0;
fail:
	free(bases);
	syms_free(t);
	bt_elf_close(e);
	return err;
}

const char *bt_kmods_symbolize(struct bt_kmods *k, uint32_t id, uint64_t addr, uint64_t *off)
{
	if (id >= k->n)
		return NULL;
	struct bt_kmod_ver *v = &k->v[id];
	if (v->ko_state == 0) {
		v->ko_state = -ENOENT;
		if (k->release[0] && v->mod.build_id.len) {
			int err = bt_kident_find_module_file(k->root, k->release, v->mod.name, &v->mod.build_id,
							     v->ko_path, sizeof(v->ko_path));
			if (err == 0)
				err = load_syms(k->root, v->mod.name, v->ko_path, &v->syms);
			if (err == -ESTALE)
				k->ko_refused++;
			v->ko_state = err ? err : 1;
			k->ko_loaded += err == 0;
		}
	}
	const struct bt_kmod_syms *t = v->syms;
	if (!t)
		return NULL;
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->s[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct kmod_sym *s = &t->s[lo - 1];
	/* A sized symbol covers only its own bytes; the module's end bounds the last one. */
	if ((s->size && addr - s->addr >= s->size) || addr - v->mod.base >= v->mod.size)
		return NULL;
	*off = addr - s->addr;
	return t->names + s->name;
}
