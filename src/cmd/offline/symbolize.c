/* symbolize.c - `buildtrace symbolize`: the session's symbolizer offline. Addresses in an ELF
 * file (--elf), in a running process (--pid), in the file of a build-id (--build-id) or in the
 * running kernel (--kernel), from the arguments or standard input, one output line per frame:
 * inlined frames (from DWARF) innermost first, then the function the symbol table names. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/esc.h"
#include "elf/buildid.h"
#include "cmd/cli/cli.h"
#include "cmd/cli/commands.h"
#include "cmd/cli/opts.h"
#include "symsrc/debuginfod_client.h"
#include "base/demangle.h"
#include "base/safeopen.h"
#include "elf/dwarfinfo.h"
#include "elf/elffile.h"
#include "kernel/kallsyms.h"
#include "kernel/kframe.h"
#include "kernel/kident.h"
#include "kernel/kmods.h"
#include "capture/procmaps.h"
#include "session/jitmap.h"
#include "symsrc/symsrc.h"
#include "elf/symtab.h"

#define MAX_FRAMES 64

enum { OPT_ELF = BT_OPT_LONG, OPT_PID, OPT_BUILD_ID, OPT_KERNEL, OPT_VMLINUX, OPT_CACHE_DIR, OPT_ROOT,
       OPT_NO_DEBUGINFOD, OPT_NO_DEMANGLE };

static const struct bt_opt symbolize_opts[] = {
	BT_OPT_HEAD("Where the addresses are (one of)"),
	{ OPT_ELF, "elf", "FILE", "in FILE's own address space (as nm shows them)", .values = "@file" },
	{ OPT_PID, "pid", "PID", "in the running process PID (JIT code named from its jitdump or "
	  "/tmp/perf-PID.map)", .values = "@pid" },
	{ OPT_BUILD_ID, "build-id", "HEX", "in the file with this build-id" },
	{ OPT_KERNEL, "kernel", NULL, "in the running kernel (as in /proc/kallsyms): names from kallsyms (a "
	  "module's .ko file when kallsyms lacks them), file:line from a vmlinux whose build-id is the "
	  "running kernel's (from --vmlinux, /usr/lib/debug/boot, /boot ..., the debug directories, the "
	  "build-id cache or debuginfod); one with another build-id is refused" },
	BT_OPT_HEAD("Options"),
	{ OPT_VMLINUX, "vmlinux", "FILE", "the vmlinux to use with --kernel", .values = "@file" },
	{ OPT_CACHE_DIR, "cache-dir", "DIR", "the build-id cache", .def = "~/.debug", .values = "@dir" },
	{ OPT_ROOT, "root", "DIR", "look for system debug files (and, with --kernel, /proc, /sys, /boot, "
	  "/lib/modules) under DIR instead of /", .values = "@dir" },
	{ OPT_NO_DEBUGINFOD, "no-debuginfod", NULL, "do not ask debuginfod servers" },
	{ OPT_NO_DEMANGLE, "no-demangle", NULL, "print C++ names as they are in the file" },
	{ 'v', "verbose", NULL, "tell on standard error where each file's symbols came from" },
	{ 'h', "help", NULL, "this text" },
	BT_OPT_END,
};

static const struct bt_cmd_doc symbolize_doc = {
	.name = "buildtrace symbolize",
	.summary = "name addresses of a file, a process or a build-id",
	.usage = "buildtrace symbolize (--elf FILE | --pid PID | --build-id HEX | --kernel) [options] [ADDR...]",
	.about = "Reads hexadecimal addresses from the arguments, or one per line from standard input, and "
		 "prints ADDR<TAB>FUNCTION+0xOFFSET<TAB>FILE:LINE for each frame, inlined frames (named without "
		 "an offset) innermost first; FILE:LINE is empty when unknown.\n\n"
		 "Symbols come from the file, its MiniDebugInfo, /usr/lib/debug/.build-id, its .gnu_debuglink, "
		 "the build-id cache, then debuginfod (DEBUGINFOD_URLS).",
	.opts = symbolize_opts,
};

const struct bt_cmd_doc *bt_symbolize_doc(void)
{
	return &symbolize_doc;
}

/* One file's symbols and DWARF, loaded on first use. */
struct target {
	struct bt_build_id id;       /* len 0: the file has none */
	int fd;                      /* the file itself, or -1 */
	char *path;                  /* its path, or NULL */
	bool loaded;
	int err;
	struct bt_symtab *st;
	char origin[BT_SYMSRC_ORIGIN_LEN];
	struct bt_elf_layout layout; /* the binary's, for --pid offsets */
	bool have_layout;
	bool dwarf_tried;
	struct bt_dwarf *dwarf;
	bool golines_tried;
	struct bt_golines *golines;  /* a Go program's lines, when it has no DWARF */
	int debug_fd;                /* a debug file fetched from debuginfod, or -1 */
};

struct symbolizer {
	bool demangle, verbose;
	struct bt_symsrc_opts so;
	struct bt_debuginfod *dbgd;
	int pid;
	struct pid_map {
		uint64_t start, end, offset;
		struct target t;
	} *maps;
	size_t nmaps;
	struct target one;           /* --elf / --build-id */
	struct bt_jitmaps jit;       /* --pid: its perf map and jitdump, read on first use */
	bool jit_on;
	struct kernel_syms {         /* --kernel */
		bool on;
		struct bt_kallsyms *ks;
		struct bt_kmods mods;
		struct bt_dwarf *vmlinux;
		int64_t slide;           /* running address - vmlinux address (KASLR) */
	} k;
};

static void target_init(struct target *t)
{
	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->debug_fd = -1;
}

static void target_free(struct target *t)
{
	if (t->fd >= 0)
		close(t->fd);
	if (t->debug_fd >= 0)
		close(t->debug_fd);
	bt_symtab_free(t->st);
	bt_dwarf_close(t->dwarf);
	bt_golines_close(t->golines);
	free(t->path);
}

struct fetched {
	struct symbolizer *s;
	struct target *t;
};

static void on_fetched(void *ctx, const struct bt_build_id *id, int fd, const char *path, int err)
{
	struct fetched *f = ctx;
	struct target *t = f->t;
	if (err || !bt_buildid_eq(id, &t->id))
		return;
	struct bt_symtab *st = NULL;
	if (bt_symsrc_adopt_debug_fd(&f->s->so, id, fd, t->fd, t->path, &st) != 0)
		return;
	bt_symtab_free(t->st);
	t->st = st;
	t->err = 0;
	snprintf(t->origin, sizeof(t->origin), "debuginfod");
	t->debug_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

/* Asks debuginfod for the debug file when the local sources gave no full symbol table; the
 * command line may wait for the answer, unlike the live session. */
static void try_debuginfod(struct symbolizer *s, struct target *t)
{
	int err;
	if (!s->so.debuginfod || !t->id.len || (!t->err && strcmp(t->origin, "dynsym") != 0) ||
	    !bt_debuginfod_configured())
		return;
	if (!s->dbgd && (err = bt_debuginfod_new(NULL, &s->dbgd)) != 0) {
		s->dbgd = NULL;
		if (err == -EPERM) {
			char why[PATH_MAX + 64] = "";
			bt_debuginfod_cache_check(why, sizeof(why));
			bt_cli_error(0, "debuginfod not used: its cache is not safe, %s (set DEBUGINFOD_CACHE_PATH "
				     "to a directory only you can change)", why);
		}
		s->so.debuginfod = false;  /* said once */
		return;
	}
	if (bt_debuginfod_request(s->dbgd, &t->id) != 0)
		return;
	struct fetched f = { s, t };
	bt_debuginfod_poll(s->dbgd, on_fetched, &f, -1);
}

static void target_load(struct symbolizer *s, struct target *t)
{
	if (t->loaded)
		return;
	t->loaded = true;
	struct bt_elf *e = NULL;
	if (t->fd >= 0 && bt_elf_open_fd(t->fd, &e) == 0) {
		t->have_layout = bt_elf_layout(e, &t->layout) == 0;
		if (!t->id.len)
			bt_elf_build_id(e, &t->id);
	}
	if (t->id.len) {
		struct bt_symsrc_req req = { .id = &t->id, .mapped_fd = t->fd, .path = t->path };
		t->err = bt_symsrc_load(&s->so, &req, &t->st, t->origin, sizeof(t->origin));
		try_debuginfod(s, t);
	} else if (e) {
		t->err = bt_symsrc_load_elf(e, &t->st, t->origin, sizeof(t->origin));
	} else {
		t->err = -ENOENT;
	}
	if (e)
		bt_elf_close(e);
	if (s->verbose) {
		char hex[2 * BT_BUILD_ID_MAXLEN + 1];
		const char *name = t->id.len ? bt_buildid_hex(&t->id, hex, sizeof(hex)) : t->path;
		if (t->st)
			bt_cli_error(0, "symbols of %s: %s", name ? name : "?", t->origin);
		else
			bt_cli_error(0, "no symbols for %s: %s", name ? name : "?", strerror(-t->err));
	}
}

/* Says once why a file's DWARF was refused: which string section, when it is the file's own. */
static void tell_dwarf_refused(const struct target *t)
{
	const char *bad = NULL;
	struct bt_elf *e = NULL;
	if (t->fd >= 0 && bt_elf_open_fd(t->fd, &e) == 0)
		bt_dwarf_check_strings(bt_elf_handle(e), &bad);
	bt_elf_close(e);
	char hex[2 * BT_BUILD_ID_MAXLEN + 1];
	const char *name = t->path ? t->path : t->id.len ? bt_buildid_hex(&t->id, hex, sizeof(hex)) : "?";
	bt_cli_error(0, "no line info for %s: %s does not end with a NUL (corrupt DWARF strings)", name,
		     bad ? bad : "a string section (.debug_str or .debug_line_str)");
}

static struct bt_dwarf *target_dwarf(struct symbolizer *s, struct target *t)
{
	if (t->dwarf_tried)
		return t->dwarf;
	t->dwarf_tried = true;
	char origin[BT_SYMSRC_ORIGIN_LEN];
	if (t->debug_fd >= 0 && bt_dwarf_open_fd(t->debug_fd, &t->dwarf) == 0)
		return t->dwarf;
	t->dwarf = NULL;
	struct bt_symsrc_req req = { .id = &t->id, .mapped_fd = t->fd, .path = t->path };
	int err = -ENODATA;
	if (t->id.len)
		err = bt_symsrc_open_dwarf(&s->so, &req, &t->dwarf, origin, sizeof(origin));
	else if (t->fd >= 0)
		err = bt_dwarf_open_fd(t->fd, &t->dwarf);
	if (err) {
		t->dwarf = NULL;
		if (err == -EBADMSG)
			tell_dwarf_refused(t);
	}
	return t->dwarf;
}

/* A Go program's lines from its .gopclntab, for one without DWARF. */
static struct bt_golines *target_golines(struct symbolizer *s, struct target *t)
{
	if (t->golines_tried)
		return t->golines;
	t->golines_tried = true;
	struct bt_symsrc_req req = { .id = &t->id, .mapped_fd = t->fd, .path = t->path };
	int err = -ENODATA;
	if (t->id.len)
		err = bt_symsrc_open_golines(&s->so, &req, &t->golines);
	else if (t->fd >= 0)
		err = bt_golines_open(t->fd, &t->golines);
	if (err)
		t->golines = NULL;
	return t->golines;
}

/* The frames of vaddr in t, innermost first: from its DWARF, else from a Go program's table. */
static int target_lines(struct symbolizer *s, struct target *t, uint64_t vaddr, struct bt_dwarf_frame *frames,
			size_t max)
{
	struct bt_dwarf *d = target_dwarf(s, t);
	int nf = d ? bt_dwarf_lookup(d, vaddr, frames, max) : 0;
	struct bt_golines *g;
	if (nf <= 0 && !d && (g = target_golines(s, t)) != NULL)
		nf = bt_golines_lookup(g, vaddr, frames, max);
	return nf > 0 ? nf : 0;
}

static int collect_map(void *ctx, const struct bt_procmap *m)
{
	struct symbolizer *s = ctx;
	if (m->perms[2] != 'x' || m->path[0] != '/')
		return 0;
	struct pid_map *n = realloc(s->maps, (s->nmaps + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->maps = n;
	n += s->nmaps;
	n->start = m->start;
	n->end = m->end;
	n->offset = m->offset;
	target_init(&n->t);
	n->t.path = strdup(m->path);
	if (!n->t.path)
		return -ENOMEM;
	s->nmaps++;
	return 0;
}

/* The process's vDSO, named from a copy of its image as any mapped file is (no [vdso]: nothing). */
static int collect_vdso(struct symbolizer *s)
{
	uint64_t start, end;
	int fd = bt_procmaps_open_vdso("", s->pid, &start, &end);
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	struct pid_map *n = realloc(s->maps, (s->nmaps + 1) * sizeof(*n));
	if (!n) {
		close(fd);
		return -ENOMEM;
	}
	s->maps = n;
	n += s->nmaps++;
	*n = (struct pid_map){ .start = start, .end = end, .offset = 0 };
	target_init(&n->t);
	n->t.fd = fd;
	return 0;
}

static void print_name(struct symbolizer *s, FILE *out, const char *name)
{
	char *dm = s->demangle && name ? bt_demangle(name) : NULL;
	const char *text = dm ? dm : name ? name : "??";
	bt_esc_write(out, text, strlen(text));  /* a file's choice: no control reaches the terminal */
	free(dm);
}

static void print_line(FILE *out, const struct bt_dwarf_frame *f)
{
	if (f && f->file) {
		bt_esc_write(out, f->file, strlen(f->file));
		fprintf(out, ":%u", f->line);
	}
	fputc('\n', out);
}

/* Inlined frames: DWARF's functions other than the outermost, one line each. */
static void print_inlined(struct symbolizer *s, FILE *out, uint64_t addr, const struct bt_dwarf_frame *frames,
			  int nf)
{
	for (int i = 0; i + 1 < nf; i++) {
		fprintf(out, "0x%" PRIx64 "\t", addr);
		print_name(s, out, frames[i].function);
		fputc('\t', out);
		print_line(out, &frames[i]);
	}
}

/* A vmlinux with the running kernel's build-id, and how far KASLR moved it: the running _text (from
 * kallsyms) less the file's. A vmlinux of another build is named and refused, never used. */
static void kernel_open_vmlinux(struct symbolizer *s, const char *override)
{
	const char *root = s->so.root ? s->so.root : "";
	struct bt_build_id running;
	char rhex[2 * BT_BUILD_ID_MAXLEN + 1], hex[2 * BT_BUILD_ID_MAXLEN + 1], path[4096];
	if (bt_kident_kernel_build_id(root, &running) != 0) {
		bt_cli_error(0, "the running kernel's build-id is unknown (%s/sys/kernel/notes): no line info",
			     root);
		return;
	}
	bt_buildid_hex(&running, rhex, sizeof(rhex));
	int err = bt_kident_find_vmlinux(root, override, path, sizeof(path));
	int fd = -1;
	if (err == 0) {
		fd = bt_open_regular(AT_FDCWD, path, 0, NULL);
		if (fd >= 0 && bt_dwarf_open_fd(fd, &s->k.vmlinux) != 0)
			s->k.vmlinux = NULL;
	} else if (override) {
		struct bt_build_id got;
		if (err == -ESTALE && bt_buildid_from_path(override, &got) == 0)
			bt_cli_error(0, "%s has build-id %s, the running kernel %s: not used for line info",
				     override, bt_buildid_hex(&got, hex, sizeof(hex)), rhex);
		else
			bt_cli_error(0, "%s cannot give line info for the running kernel: %s", override,
				     err == -ENODATA ? "it has no build-id" : err == -ENOEXEC ? "not an ELF file "
				     "(a compressed boot image?)" : strerror(-err));
		return;
	} else {
		/* By build-id: the debug directories, the build-id cache, debuginfod. */
		char origin[BT_SYMSRC_ORIGIN_LEN];
		struct bt_symsrc_req req = { .id = &running, .mapped_fd = -1 };
		if (bt_symsrc_open_dwarf(&s->so, &req, &s->k.vmlinux, origin, sizeof(origin)) != 0)
			s->k.vmlinux = NULL;
		if (!s->k.vmlinux) {
			bt_cli_error(0, err == -ESTALE ? "no vmlinux with the running kernel's build-id %s (those "
				     "found have others): no line info" : "no vmlinux with the running kernel's "
				     "build-id %s: no line info", rhex);
			return;
		}
	}
	if (!s->k.vmlinux) {
		if (fd >= 0)
			close(fd);
		bt_cli_error(0, "%s has no DWARF: no line info", path);
		return;
	}
	/* the file's _text: read from the same file the DWARF came from when we opened it */
	uint64_t file_text = 0;
	struct bt_elf *e = NULL;
	bool have = fd >= 0 && bt_elf_open_fd(fd, &e) == 0 && bt_elf_symbol_value(e, "_text", &file_text) == 0;
	bt_elf_close(e);
	if (fd >= 0)
		close(fd);
	uint64_t run_text = bt_kallsyms_addr(s->k.ks, "_text");
	if (!have || !run_text) {
		bt_cli_error(0, "cannot place the vmlinux at the running kernel's addresses (no _text "
			     "symbol): no line info");
		bt_dwarf_close(s->k.vmlinux);
		s->k.vmlinux = NULL;
		return;
	}
	s->k.slide = (int64_t)(run_text - file_text);
	if (s->verbose)
		bt_cli_error(0, "line info from %s (build-id %s), KASLR offset 0x%" PRIx64, err == 0 ? path :
			     "the running kernel's debug file", rhex, (uint64_t)s->k.slide);
}


/* Whether addr is in one of the process's file mappings. */
static bool in_file(const struct symbolizer *s, uint64_t addr)
{
	for (size_t i = 0; i < s->nmaps; i++)
		if (addr >= s->maps[i].start && addr < s->maps[i].end)
			return true;
	return false;
}

/* An address outside the process's file mappings: JIT code, named as its jitdump or perf map names
 * it (not demangled: runtimes write them as they want them shown). */
static int symbolize_jit(struct symbolizer *s, uint64_t addr, FILE *out)
{
	if (!s->jit_on) {
		bt_jitmaps_init(&s->jit, "");
		s->jit_on = true;
	}
	bool final = true;
	uint64_t off = 0;
	int64_t id = bt_jitmaps_proc(&s->jit, s->pid, 1);
	const char *name = id >= 0 ? bt_jitmaps_name(&s->jit, (uint32_t)id, addr, 1, &final, &off) : NULL;
	fprintf(out, "0x%" PRIx64 "\t", addr);
	if (!name) {
		fputs("??\t\n", out);
		return 1;
	}
	bt_esc_write(out, name, strlen(name));  /* the process's choice */
	fprintf(out, "+0x%" PRIx64 "\t\n", off);
	return 0;
}
/* A running-kernel address named as the session names it (kframe.h), with lines from the vmlinux
 * for the kernel image's addresses. */
static int symbolize_kernel(struct symbolizer *s, uint64_t addr, FILE *out)
{
	struct bt_kframe kf;
	bool named = bt_kframe_name(NULL, s->k.ks, &s->k.mods, bt_kmods_at(&s->k.mods, addr), addr, &kf) == 0;
	struct bt_dwarf_frame frames[MAX_FRAMES];
	int nf = 0;
	if (s->k.vmlinux && !kf.mod && !(kf.ksym && kf.ksym->module)) {
		nf = bt_dwarf_lookup(s->k.vmlinux, addr - (uint64_t)s->k.slide, frames, MAX_FRAMES);
		if (nf < 0)
			nf = 0;
	}
	print_inlined(s, out, addr, frames, nf);
	fprintf(out, "0x%" PRIx64 "\t", addr);
	if (named) {
		bt_esc_write(out, kf.name, strlen(kf.name));
		if (kf.mod) {
			fputs(" [", out);
			bt_esc_write(out, kf.mod->mod.name, strlen(kf.mod->mod.name));
			fputc(']', out);
		}
		fprintf(out, "+0x%" PRIx64 "\t", kf.off);
	} else {
		fputs("??\t", out);
	}
	print_line(out, nf > 0 ? &frames[nf - 1] : NULL);
	return named ? 0 : 1;
}

static int symbolize_one(struct symbolizer *s, const char *text, FILE *out)
{
	while (isspace((unsigned char)*text))
		text++;
	if (!*text)
		return 0;
	char *end;
	errno = 0;
	uint64_t addr = strtoull(text, &end, 16);
	while (isspace((unsigned char)*end))
		end++;
	if (errno || end == text || *end) {
		bt_esc_write(out, text, strlen(text));
		fputs("\t??\t\n", out);
		return -EINVAL;
	}
	if (s->k.on)
		return symbolize_kernel(s, addr, out);
	if (s->pid && !in_file(s, addr))
		return symbolize_jit(s, addr, out);
	/* The address as the file's symbols express it. */
	struct target *t = NULL;
	uint64_t vaddr = addr;
	bool have_vaddr = true;
	if (s->pid) {
		for (size_t i = 0; i < s->nmaps && !t; i++) {
			struct pid_map *m = &s->maps[i];
			if (addr < m->start || addr >= m->end)
				continue;
			t = &m->t;
			if (t->fd < 0 && !t->loaded)
				t->fd = bt_procmaps_open_mapped("", s->pid, m->start, m->end);
			target_load(s, t);
			const struct bt_elf_layout *l = t->have_layout ? &t->layout
							: t->st ? bt_symtab_layout(t->st) : NULL;
			have_vaddr = l && bt_elf_offset_to_vaddr(l, addr - m->start + m->offset, &vaddr) == 0;
		}
	} else {
		t = &s->one;
		target_load(s, t);
	}
	uint64_t off = 0;
	const struct bt_sym *sym = t && t->st && have_vaddr ? bt_symtab_lookup(t->st, vaddr, &off) : NULL;
	struct bt_dwarf_frame frames[MAX_FRAMES];
	int nf = t && have_vaddr ? target_lines(s, t, vaddr, frames, MAX_FRAMES) : 0;
	print_inlined(s, out, addr, frames, nf);
	const struct bt_dwarf_frame *outer = nf > 0 ? &frames[nf - 1] : NULL;
	fprintf(out, "0x%" PRIx64 "\t", addr);
	if (sym) {
		print_name(s, out, sym->name);
		fprintf(out, "+0x%" PRIx64 "\t", off);
	} else if (outer && outer->function) {
		print_name(s, out, outer->function);
		fputc('\t', out);
	} else {
		fputs("??\t", out);
	}
	print_line(out, outer);
	return sym || (outer && outer->function) ? 0 : 1;
}

/* What the command line asks for besides the symbolizer's own settings. */
struct symbolize_args {
	const char *elf, *bid, *vmlinux;
	unsigned pid;
};

/* Fills a and s from the options: -1 to go on, else the command's exit status. */
static int parse_args(int argc, char **argv, struct symbolize_args *a, struct symbolizer *s)
{
	struct bt_getopt g;
	if (bt_opts_getopt(symbolize_opts, ":", &g))
		return bt_cli_error(1, "too many options");
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		case OPT_ELF: a->elf = optarg; break;
		case OPT_PID:
			if (bt_cli_parse_uint(optarg, 1, 0x7fffffff, &a->pid))
				return bt_cli_error(2, "invalid pid '%s'", optarg);
			break;
		case OPT_BUILD_ID: a->bid = optarg; break;
		case OPT_KERNEL: s->k.on = true; break;
		case OPT_VMLINUX: a->vmlinux = optarg; break;
		case OPT_CACHE_DIR: s->so.cache_dir = optarg; break;
		case OPT_ROOT: s->so.root = optarg; break;
		case OPT_NO_DEBUGINFOD: s->so.debuginfod = false; break;
		case OPT_NO_DEMANGLE: s->demangle = false; break;
		case 'v': s->verbose = true; break;
		case 'h': bt_opts_usage(stdout, &symbolize_doc); return 0;
		case ':': return bt_cli_error(2, "option '%s' needs an argument", argv[optind - 1]);
		default: return bt_cli_error(2, "unknown option '%s' (see buildtrace symbolize --help)",
					     argv[optind - 1]);
		}
	}
	if (!!a->elf + !!a->pid + !!a->bid + s->k.on != 1)
		return bt_cli_error(2, "symbolize needs exactly one of --elf FILE, --pid PID, --build-id HEX, "
				    "--kernel");
	if (a->vmlinux && !s->k.on)
		return bt_cli_error(2, "--vmlinux goes with --kernel");
	return -1;
}

static void symbolizer_free(struct symbolizer *s)
{
	target_free(&s->one);
	for (size_t i = 0; i < s->nmaps; i++)
		target_free(&s->maps[i].t);
	free(s->maps);
	bt_kallsyms_free(s->k.ks);
	if (s->k.on)
		bt_kmods_free(&s->k.mods);
	bt_dwarf_close(s->k.vmlinux);
	bt_debuginfod_free(s->dbgd);
	if (s->jit_on)
		bt_jitmaps_free(&s->jit);
}

/* What is wrong with a file given as --elf. */
static const char *elf_problem(int err)
{
	switch (err) {
	case -EINVAL:
		return "not a regular file";
	case -ENOEXEC:
		return "not an ELF file";
	default:
		return strerror(-err);
	}
}

/* --elf: only a regular file is opened (a FIFO or a device is refused before it is opened), and
 * it must be ELF: -1 when ready, else the exit status. */
static int open_elf(struct symbolizer *s, const char *path)
{
	char real[PATH_MAX];
	int fd = bt_open_regular(AT_FDCWD, path, 0, NULL);
	if (fd < 0)
		return bt_cli_error(1, "cannot open %s: %s", path, elf_problem(fd));
	s->one.fd = fd;
	struct bt_elf *e = NULL;
	int err = bt_elf_open_fd(fd, &e);
	bt_elf_close(e);
	if (err)
		return bt_cli_error(1, "cannot read %s: %s", path, elf_problem(err));
	/* The real path, so that its .gnu_debuglink is looked for in the right directory. */
	s->one.path = strdup(realpath(path, real) ? real : path);
	if (!s->one.path)
		return bt_cli_error(1, "out of memory");
	target_load(s, &s->one);
	if (!s->one.st)
		return bt_cli_error(1, "cannot read symbols of %s: %s", path, s->one.err == -ENODATA
				    ? "it has no function symbols" : strerror(-s->one.err));
	return -1;
}

/* Loads what the addresses are looked up in: -1 when ready, else the command's exit status. */
static int open_source(struct symbolizer *s, const struct symbolize_args *a)
{
	int err;
	if (s->k.on) {
		const char *root = s->so.root ? s->so.root : "";
		if ((err = bt_kallsyms_load(root, &s->k.ks)) != 0)
			return bt_cli_error(1, "cannot read kernel symbols from %s/proc/kallsyms: %s", root,
					    err == -EACCES ? "addresses are hidden (kptr_restrict; run as root)"
					    : strerror(-err));
		bt_kmods_init(&s->k.mods, root);
		kernel_open_vmlinux(s, a->vmlinux);
	} else if (a->elf) {
		return open_elf(s, a->elf);
	} else if (a->bid) {
		if (bt_buildid_parse_hex(a->bid, &s->one.id))
			return bt_cli_error(2, "invalid build-id '%s': expected hex digits", a->bid);
		target_load(s, &s->one);
		if (!s->one.st)
			return bt_cli_error(1, "no symbols for build-id %s in the debug directories, the "
					    "build-id cache%s", a->bid, s->so.debuginfod ? " or debuginfod" : "");
	} else {
		s->pid = (int)a->pid;
		if ((err = bt_procmaps_foreach("", s->pid, collect_map, s)) != 0 || (err = collect_vdso(s)) != 0)
			return bt_cli_error(1, "cannot read the mappings of pid %u: %s", a->pid, strerror(-err));
	}
	return -1;
}

/* The addresses of the arguments after the options, else of standard input's lines: the exit
 * status. */
static int symbolize_all(struct symbolizer *s, int argc, char **argv)
{
	int rc = 0;
	if (optind < argc) {
		for (int i = optind; i < argc; i++)
			if (symbolize_one(s, argv[i], stdout) < 0)
				rc = bt_cli_error(2, "not a hexadecimal address: '%s'", argv[i]);
	} else {
		char *line = NULL;
		size_t cap = 0;
		while (getline(&line, &cap, stdin) > 0)
			if (symbolize_one(s, line, stdout) < 0)
				rc = 2;
		free(line);
	}
	if (fflush(stdout) != 0)
		rc = bt_cli_error(1, "writing the output failed: %s", strerror(errno));
	return rc;
}

int cmd_symbolize(int argc, char **argv)
{
	struct symbolize_args a = { 0 };
	struct symbolizer s = { .demangle = true, .so = { .debuginfod = true } };
	target_init(&s.one);
	int rc = parse_args(argc, argv, &a, &s);
	if (rc < 0)
		rc = open_source(&s, &a);
	if (rc < 0)
		rc = symbolize_all(&s, argc, argv);
	symbolizer_free(&s);
	return rc;
}
