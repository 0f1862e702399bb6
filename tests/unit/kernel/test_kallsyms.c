/* test_kallsyms.c - kernel symbol loading and lookup: the real /proc/kallsyms against awk and grep as
 * oracles, kptr_restrict simulated through a root prefix, and hostile buffers. */
#include "testutil.h"
#include "kernel/kallsyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <sys/syscall.h>

#define TEXT_AWK "$2 ~ /^[tTwW]$/"

static struct bt_kallsyms *parse_str(const char *s, int want)
{
	struct bt_kallsyms *ks = NULL;
	assert_int_equal(bt_kallsyms_parse(s, strlen(s), &ks), want);
	if (want == 0)
		assert_non_null(ks);
	else
		assert_null(ks);
	return ks;
}

static struct bt_kallsyms *load_real(void)
{
	if (access("/proc/kallsyms", R_OK) != 0)
		skip();
	struct bt_kallsyms *ks = NULL;
	int err = bt_kallsyms_load("", &ks);
	if (err == -EACCES) {
		/* kptr_restrict hides the addresses from this process: nothing to compare */
		if (bt_test_in_ci())
			fail_msg("/proc/kallsyms addresses are hidden under CI");
		skip();
	}
	assert_int_equal(err, 0);
	return ks;
}

/* Number of text symbols at address hex (16 digits, as the file prints it) named name, or of any
 * name when name is NULL, per awk. */
static int oracle_aliases(const char *hex, const char *name)
{
	char out[64];
	if (name)
		bt_test_run(out, sizeof(out),
			    "awk '" TEXT_AWK " && $1 == \"%s\" && $3 == \"%s\"' /proc/kallsyms | wc -l",
			    hex, name);
	else
		bt_test_run(out, sizeof(out), "awk '" TEXT_AWK " && $1 == \"%s\"' /proc/kallsyms | wc -l",
			    hex);
	return atoi(out);
}

static void kallsyms__real_file__count_matches_awk(void **state)
{
	/* BPF programs come and go in kallsyms whenever any tool loads one: both counts are taken from
	 * one copy of the file, loaded through a root prefix */
	struct bt_kallsyms *real = load_real();
	bt_kallsyms_free(real);
	char dir[] = "/tmp/bt-kallsyms-XXXXXX", path[256], out[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/proc", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(bt_test_run(NULL, 0, "cat /proc/kallsyms > %s/proc/kallsyms", dir), 0);
	struct bt_kallsyms *ks = NULL;
	assert_int_equal(bt_kallsyms_load(dir, &ks), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "awk '" TEXT_AWK "' %s/proc/kallsyms | wc -l", dir), 0);
	size_t want = strtoull(out, NULL, 10);
	size_t got = bt_kallsyms_count(ks);
	bt_kallsyms_free(ks);
	bt_test_run(NULL, 0, "rm -rf %s", dir);
	assert_true(want > 1000);
	assert_int_equal(got, want);
}

static void kallsyms__schedule__resolves_at_and_just_after_its_address(void **state)
{
	struct bt_kallsyms *ks = load_real();
	char hex[64];
	assert_int_equal(bt_test_run(hex, sizeof(hex),
				     "grep -m1 -E '^[0-9a-f]+ [tT] schedule$' /proc/kallsyms | cut -d' ' -f1"),
			 0);
	hex[strcspn(hex, "\n")] = '\0';
	assert_true(strlen(hex) > 0);
	uint64_t addr = strtoull(hex, NULL, 16);
	assert_int_equal(bt_kallsyms_addr(ks, "schedule"), addr);

	uint64_t off = 99;
	const struct bt_ksym *s = bt_kallsyms_lookup(ks, addr, &off);
	assert_non_null(s);
	assert_int_equal(s->addr, addr);
	assert_int_equal(off, 0);
	assert_null(s->module);
	if (oracle_aliases(hex, NULL) == 1)
		assert_string_equal(s->name, "schedule");
	else
		assert_int_equal(oracle_aliases(hex, s->name), 1);

	s = bt_kallsyms_lookup(ks, addr + 1, &off);
	assert_non_null(s);
	assert_int_equal(s->addr, addr);
	assert_int_equal(off, 1);
	bt_kallsyms_free(ks);
}

static void kallsyms__byte_before_schedule__resolves_to_previous_symbol(void **state)
{
	struct bt_kallsyms *ks = load_real();
	char out[128];
	/* fixed-width lowercase hex compares correctly as strings, which awk's doubles could not */
	assert_int_equal(bt_test_run(out, sizeof(out),
				     "a=$(grep -m1 -E '^[0-9a-f]+ [tT] schedule$' /proc/kallsyms | cut -d' ' -f1);"
				     "awk -v a=$a '" TEXT_AWK " && $1 < a && $1 > m { m = $1 } END { print m }' "
				     "/proc/kallsyms"),
			 0);
	out[strcspn(out, "\n")] = '\0';
	assert_true(strlen(out) > 0);
	uint64_t prev = strtoull(out, NULL, 16);
	uint64_t addr = bt_kallsyms_addr(ks, "schedule");
	assert_true(prev < addr);
	uint64_t off = 0;
	const struct bt_ksym *s = bt_kallsyms_lookup(ks, addr - 1, &off);
	assert_non_null(s);
	assert_int_equal(s->addr, prev);
	assert_int_equal(off, addr - 1 - prev);
	assert_int_equal(oracle_aliases(out, s->name), 1);
	bt_kallsyms_free(ks);
}

static void kallsyms__sampled_symbols__resolve_to_an_alias_at_their_address(void **state)
{
	struct bt_kallsyms *ks = load_real();
	char out[4096];
	assert_int_equal(bt_test_run(out, sizeof(out),
				     "awk '" TEXT_AWK " && NR %% 4001 == 7 { print $1 }' /proc/kallsyms"),
			 0);
	int checked = 0;
	for (char *save, *tok = strtok_r(out, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
		uint64_t addr = strtoull(tok, NULL, 16);
		uint64_t off = 1;
		const struct bt_ksym *s = bt_kallsyms_lookup(ks, addr, &off);
		assert_non_null(s);
		assert_int_equal(s->addr, addr);
		assert_int_equal(off, 0);
		if (oracle_aliases(tok, s->name) < 1)
			fail_msg("%s resolved to %s, which is not a text symbol there", tok, s->name);
		checked++;
	}
	assert_true(checked >= 10);
	bt_kallsyms_free(ks);
}

/* Loads "return 0" as a socket filter named name with the raw bpf() call (no libbpf below the
 * loader): its descriptor, or -errno. While it is open the kernel lists it in /proc/kallsyms as
 * "bpf_prog_TAG_NAME [bpf]", so the test does not depend on what else runs on the machine. */
static int load_named_prog(const char *name)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.insn_cnt = 2;
	attr.license = (uint64_t)(uintptr_t)"GPL";
	snprintf(attr.prog_name, sizeof(attr.prog_name), "%s", name);
	int fd = (int)syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

static void kallsyms__module_line__carries_module_name(void **state)
{
	/* A quiet machine has no [module]-style line at all: the test makes its own */
	int fd = load_named_prog("bt_kstest");
	if (fd < 0) {
		if (bt_test_in_ci())
			fail_msg("cannot load a BPF program under CI: %s", strerror(-fd));
		skip();  /* unprivileged: the parser's tests of literal [bpf] lines still run */
	}
	char jit[8] = "";
	bt_test_run(jit, sizeof(jit), "cat /proc/sys/net/core/bpf_jit_kallsyms 2>/dev/null");
	if (atoi(jit) != 1) {
		close(fd);
		if (bt_test_in_ci())
			fail_msg("net.core.bpf_jit_kallsyms is not 1: BPF programs are not in kallsyms");
		skip();
	}
	struct bt_kallsyms *ks = load_real();
	char out[512];
	bt_test_run(out, sizeof(out),
		    "awk '" TEXT_AWK " && NF == 4 && $3 ~ /_bt_kstest$/ { print $1, $3, $4; exit }' /proc/kallsyms");
	close(fd);
	char hex[32], name[256], mod[128];
	if (sscanf(out, "%31s %255s [%127[^]]]", hex, name, mod) != 3)
		fail_msg("the program just loaded is not in /proc/kallsyms: '%s'", out);
	const struct bt_ksym *s = bt_kallsyms_lookup(ks, strtoull(hex, NULL, 16), NULL);
	assert_non_null(s);
	assert_non_null(s->module);
	assert_string_equal(s->module, "bpf");
	assert_string_equal(s->module, mod);
	assert_string_equal(s->name, name);
	assert_int_equal(s->addr, strtoull(hex, NULL, 16));
	bt_kallsyms_free(ks);
}

static void kallsyms__zeroed_copy_under_root__eacces(void **state)
{
	char dir[] = "/tmp/bt_kallsyms_XXXXXX";
	assert_non_null(mkdtemp(dir));
	assert_int_equal(bt_test_run(NULL, 0,
				     "mkdir %s/proc && sed 's/^[0-9a-f]*/0000000000000000/' /proc/kallsyms "
				     "> %s/proc/kallsyms",
				     dir, dir),
			 0);
	struct bt_kallsyms *ks = (void *)1;
	assert_int_equal(bt_kallsyms_load(dir, &ks), -EACCES);
	assert_null(ks);
	bt_test_run(NULL, 0, "rm -rf %s", dir);
}

static void kallsyms__file_under_root__loads_its_text_symbols(void **state)
{
	char dir[] = "/tmp/bt_kallsyms_XXXXXX";
	assert_non_null(mkdtemp(dir));
	assert_int_equal(bt_test_run(NULL, 0,
				     "mkdir %s/proc && printf 'ffffffff81000000 T _stext\\n"
				     "ffffffff81000100 t helper\\nffffffff81000200 D data\\n' > %s/proc/kallsyms",
				     dir, dir),
			 0);
	struct bt_kallsyms *ks = NULL;
	assert_int_equal(bt_kallsyms_load(dir, &ks), 0);
	assert_int_equal(bt_kallsyms_count(ks), 2);
	assert_int_equal(bt_kallsyms_addr(ks, "helper"), 0xffffffff81000100ULL);
	bt_kallsyms_free(ks);
	bt_test_run(NULL, 0, "rm -rf %s", dir);
}

/* A file read in several chunks (larger than the reader's 256 KiB), lines cut at each chunk's end:
 * the kernel image in address order with aliases, then modules' and BPF programs' symbols out of
 * order and below and above it, the last line without a newline. Every symbol resolves to itself
 * (the global one where aliased), as the same buffer parsed whole does. */
static void kallsyms__file_in_chunks__every_symbol_resolves(void **state)
{
	enum { KERN = 30000, MODS = 3000, BPFS = 500 };
	size_t cap = 64u << 20, len = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
	for (int i = 0; i < KERN; i++) {
		uint64_t a = 0xffffffff81000000ULL + (uint64_t)i * 0x40;
		if (i % 100 == 0)
			len += (size_t)snprintf(buf + len, cap - len, "%016llx t __k_alias_%d\n", (unsigned long long)a, i);
		len += (size_t)snprintf(buf + len, cap - len, "%016llx T k_%d\n", (unsigned long long)a, i);
	}
	for (int i = 0; i < MODS; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%016llx t m_%d\t[mod%d]\n",
					0xffffffffc0000000ULL + (uint64_t)((i * 7919) % MODS) * 0x40, i, i % 5);
	for (int i = 0; i < BPFS; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%016llx t bpf_prog_%d\t[bpf]\n",
					0xffffffffa0000000ULL + (uint64_t)((i * 31) % BPFS) * 0x100, i);
	len--;  /* no final newline */
	assert_true(len > 3 * (256u << 10));  /* four chunks */
	char dir[] = "/tmp/bt_kallsyms_XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	assert_int_equal(bt_test_run(NULL, 0, "mkdir %s/proc", dir), 0);
	snprintf(path, sizeof(path), "%s/proc/kallsyms", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	struct bt_kallsyms *ks = NULL, *whole = NULL;
	assert_int_equal(bt_kallsyms_load(dir, &ks), 0);
	assert_int_equal(bt_kallsyms_parse(buf, len, &whole), 0);
	assert_int_equal(bt_kallsyms_count(ks), KERN + KERN / 100 + MODS + BPFS);
	assert_int_equal(bt_kallsyms_count(whole), bt_kallsyms_count(ks));
	char want[64];
	uint64_t off;
	for (int i = 0; i < KERN; i++) {
		const struct bt_ksym *s = bt_kallsyms_lookup(ks, 0xffffffff81000000ULL + (uint64_t)i * 0x40 + 4, &off);
		snprintf(want, sizeof(want), "k_%d", i);
		assert_non_null(s);
		assert_string_equal(s->name, want);
		assert_int_equal(off, 4);
		assert_null(s->module);
	}
	for (int i = 0; i < MODS; i++) {
		const struct bt_ksym *s = bt_kallsyms_lookup(ks, 0xffffffffc0000000ULL + (uint64_t)((i * 7919) % MODS) * 0x40, &off);
		snprintf(want, sizeof(want), "m_%d", i);
		assert_non_null(s);
		assert_string_equal(s->name, want);
		snprintf(want, sizeof(want), "mod%d", i % 5);
		assert_string_equal(s->module, want);
		const struct bt_ksym *w = bt_kallsyms_lookup(whole, s->addr, &off);
		assert_non_null(w);
		assert_string_equal(w->name, s->name);
	}
	for (int i = 0; i < BPFS; i++) {
		const struct bt_ksym *s = bt_kallsyms_lookup(ks, 0xffffffffa0000000ULL + (uint64_t)((i * 31) % BPFS) * 0x100 + 8, &off);
		snprintf(want, sizeof(want), "bpf_prog_%d", i);
		assert_non_null(s);
		assert_string_equal(s->name, want);
		assert_string_equal(s->module, "bpf");
	}
	bt_kallsyms_free(ks);
	bt_kallsyms_free(whole);
	/* one line longer than a chunk, never ended: refused, not waited on */
	memset(buf, 'a', 300u << 10);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, 300u << 10, f), 300u << 10);
	fclose(f);
	assert_int_equal(bt_kallsyms_load(dir, &ks), -EINVAL);
	assert_null(ks);
	free(buf);
	bt_test_run(NULL, 0, "rm -rf %s", dir);
}

static void kallsyms__fifo_or_missing_file__error_not_hang(void **state)
{
	char dir[] = "/tmp/bt_kallsyms_XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct bt_kallsyms *ks = NULL;
	assert_int_equal(bt_kallsyms_load(dir, &ks), -ENOENT);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir %s/proc && mkfifo %s/proc/kallsyms", dir, dir), 0);
	assert_int_equal(bt_kallsyms_load(dir, &ks), -EINVAL);
	assert_null(ks);
	bt_test_run(NULL, 0, "rm -rf %s", dir);
}

static void kallsyms__literal_lines__text_only_sorted_with_modules(void **state)
{
	struct bt_kallsyms *ks = parse_str("ffffffffc0002000 t mod_b\t[nls_ascii]\n"
					   "ffffffff81000000 T _stext\n"
					   "ffffffff81000040 D some_data\n"
					   "ffffffff81000080 W weak_fn\n"
					   "ffffffff810000c0 r rodata\n"
					   "ffffffffc0001000 t mod_a\t[nls_ascii]\n"
					   "ffffffff81000100 t local_fn\n",
					   0);
	assert_int_equal(bt_kallsyms_count(ks), 5);
	uint64_t off;
	const struct bt_ksym *s = bt_kallsyms_lookup(ks, 0xffffffff81000050ULL, &off);
	assert_string_equal(s->name, "_stext");
	assert_int_equal(off, 0x50);
	assert_null(s->module);
	s = bt_kallsyms_lookup(ks, 0xffffffff810000c8ULL, &off);
	assert_string_equal(s->name, "weak_fn");
	s = bt_kallsyms_lookup(ks, 0xffffffffc0001004ULL, &off);
	assert_string_equal(s->name, "mod_a");
	assert_string_equal(s->module, "nls_ascii");
	const struct bt_ksym *b = bt_kallsyms_lookup(ks, 0xffffffffc0002000ULL, &off);
	assert_string_equal(b->name, "mod_b");
	/* interned: one copy of the module name, shared by its symbols */
	assert_ptr_equal(s->module, b->module);
	assert_int_equal(bt_kallsyms_addr(ks, "some_data"), 0);
	assert_int_equal(bt_kallsyms_addr(ks, "no_such_symbol"), 0);
	bt_kallsyms_free(ks);
}

static void kallsyms__bpf_program_lines__module_is_bpf(void **state)
{
	struct bt_kallsyms *ks = parse_str("ffffffff81000000 T _stext\n"
					   "ffffffffa0001000 t bpf_prog_6deef7357e7b4530_sd_fw_egress\t[bpf]\n"
					   "ffffffffa0003000 t bpf_prog_ee0e253c78993a24_profile\t[bpf]\n",
					   0);
	uint64_t off;
	const struct bt_ksym *s = bt_kallsyms_lookup(ks, 0xffffffffa0003010ULL, &off);
	assert_non_null(s);
	assert_string_equal(s->name, "bpf_prog_ee0e253c78993a24_profile");
	assert_string_equal(s->module, "bpf");
	assert_int_equal(off, 0x10);
	assert_int_equal(bt_kallsyms_addr(ks, "bpf_prog_6deef7357e7b4530_sd_fw_egress"),
			 0xffffffffa0001000ULL);
	bt_kallsyms_free(ks);
}

static void kallsyms__aliases__global_then_fewer_underscores_then_smallest(void **state)
{
	struct bt_kallsyms *ks = parse_str("1000 t a_local\n1000 T __b_global\n1000 W c_weak\n"
					   "2000 t __x\n2000 t _y\n2000 t __a\n"
					   "3000 T zeta\n3000 T beta\n3000 t alpha\n",
					   0);
	assert_string_equal(bt_kallsyms_lookup(ks, 0x1000, NULL)->name, "__b_global");
	assert_string_equal(bt_kallsyms_lookup(ks, 0x2001, NULL)->name, "_y");
	assert_string_equal(bt_kallsyms_lookup(ks, 0x3fff, NULL)->name, "beta");
	assert_int_equal(bt_kallsyms_count(ks), 9);
	bt_kallsyms_free(ks);
}

static void kallsyms__gap_guard__far_beyond_a_symbol_is_null(void **state)
{
	struct bt_kallsyms *ks = parse_str("ffffffff81000000 T first\n"
					   "ffffffff81001000 T last_kernel\n"
					   "ffffffffc0000000 t mod_fn\t[m]\n",
					   0);
	uint64_t off = 0;
	assert_null(bt_kallsyms_lookup(ks, 0xffffffff80ffffffULL, &off));
	const uint64_t last = 0xffffffffc0000000ULL;
	const struct bt_ksym *s = bt_kallsyms_lookup(ks, last + BT_KALLSYMS_MAX_GAP, &off);
	assert_non_null(s);
	assert_int_equal(off, BT_KALLSYMS_MAX_GAP);
	assert_null(bt_kallsyms_lookup(ks, last + BT_KALLSYMS_MAX_GAP + 1, &off));
	assert_null(bt_kallsyms_lookup(ks, UINT64_MAX, &off));
	/* the hole between the kernel image and the modules is no symbol's either */
	assert_null(bt_kallsyms_lookup(ks, 0xffffffff81001000ULL + BT_KALLSYMS_MAX_GAP + 1, &off));
	assert_string_equal(bt_kallsyms_lookup(ks, 0xffffffff81001fffULL, &off)->name, "last_kernel");
	bt_kallsyms_free(ks);
}

static void kallsyms__all_addresses_zero__eacces(void **state)
{
	parse_str("0000000000000000 T _stext\n0000000000000000 t helper\t[mod]\n", -EACCES);
	/* one visible address is enough: that is not kptr_restrict */
	struct bt_kallsyms *ks = parse_str("0000000000000000 T zero_based\n0000000000000010 t next\n", 0);
	assert_int_equal(bt_kallsyms_count(ks), 2);
	bt_kallsyms_free(ks);
}

static void kallsyms__no_text_symbols__enodata(void **state)
{
	parse_str("", -ENODATA);
	parse_str("\n\n", -ENODATA);
	parse_str("ffffffff81000000 D data\nffffffff81000100 b bss\n", -ENODATA);
	struct bt_kallsyms *ks = (void *)1;
	assert_int_equal(bt_kallsyms_parse(NULL, 0, &ks), -ENODATA);
	assert_int_equal(bt_kallsyms_parse(NULL, 5, &ks), -EINVAL);
}

static void kallsyms__no_final_newline__last_line_counts(void **state)
{
	struct bt_kallsyms *ks = parse_str("1000 T a\n2000 T tail_without_newline", 0);
	assert_int_equal(bt_kallsyms_count(ks), 2);
	assert_string_equal(bt_kallsyms_lookup(ks, 0x2004, NULL)->name, "tail_without_newline");
	bt_kallsyms_free(ks);
}

static void kallsyms__malformed_lines__einval(void **state)
{
	static const char *bad[] = {
		"ffffzz T bad_hex\n",
		"g000 T bad_hex\n",
		"10000000000000000 T seventeen_digits\n",
		"1000 T\n",
		"1000 T \n",
		"1000\n",
		" 1000 T leading_space\n",
		"1000 TT two_letter_type\n",
		"1000 1 digit_type\n",
		"1000 T name [unterminated\n",
		"1000 T name []\n",
		"1000 T name [mod] trailing\n",
		"1000 T two words\n",
		"1000 T ok\n1000 T ok2\ngarbage\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bt_kallsyms *ks = (void *)1;
		int err = bt_kallsyms_parse(bad[i], strlen(bad[i]), &ks);
		if (err != -EINVAL)
			fail_msg("\"%s\": %d", bad[i], err);
		assert_null(ks);
	}
	/* an embedded NUL is not part of any valid name */
	static const char nul[] = "1000 T na\0me\n";
	struct bt_kallsyms *ks = NULL;
	assert_int_equal(bt_kallsyms_parse(nul, sizeof(nul) - 1, &ks), -EINVAL);
}

static void kallsyms__huge_line__einval(void **state)
{
	size_t n = 4 << 20;
	char *buf = malloc(n);
	assert_non_null(buf);
	memcpy(buf, "1000 T ", 7);
	memset(buf + 7, 'x', n - 8);
	buf[n - 1] = '\n';
	struct bt_kallsyms *ks = NULL;
	assert_int_equal(bt_kallsyms_parse(buf, n, &ks), -EINVAL);
	/* the longest line allowed still parses */
	memset(buf + 7, 'y', BT_KALLSYMS_LINE_MAX - 7);
	assert_int_equal(bt_kallsyms_parse(buf, BT_KALLSYMS_LINE_MAX, &ks), 0);
	assert_int_equal(strlen(bt_kallsyms_lookup(ks, 0x1000, NULL)->name), BT_KALLSYMS_LINE_MAX - 7);
	bt_kallsyms_free(ks);
	free(buf);
}

static void kallsyms__random_mutations__error_codes_only(void **state)
{
	static const char base[] = "ffffffff81000000 T _stext\n"
				   "ffffffff81000100 t helper\t[mod]\n"
				   "ffffffff81000200 W weak\n";
	char buf[sizeof(base)];
	srand(1234);
	int ok = 0, einval = 0;
	for (int round = 0; round < 20000; round++) {
		memcpy(buf, base, sizeof(base));
		size_t len = sizeof(base) - 1 - (size_t)(rand() % 8);
		for (int k = rand() % 4; k >= 0; k--)
			buf[rand() % len] = (char)(rand() % 256);
		struct bt_kallsyms *ks = NULL;
		int err = bt_kallsyms_parse(buf, len, &ks);
		if (err == 0) {
			ok++;
			assert_true(bt_kallsyms_count(ks) >= 1);
			bt_kallsyms_lookup(ks, 0xffffffff81000150ULL, NULL);
			bt_kallsyms_free(ks);
		} else {
			if (err != -EINVAL && err != -ENODATA && err != -EACCES)
				fail_msg("unexpected %d", err);
			assert_null(ks);
			einval += err == -EINVAL;
		}
	}
	/* both outcomes must occur, or the mutations did not exercise the parser */
	assert_true(ok > 0);
	assert_true(einval > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kallsyms__real_file__count_matches_awk),
		cmocka_unit_test(kallsyms__schedule__resolves_at_and_just_after_its_address),
		cmocka_unit_test(kallsyms__byte_before_schedule__resolves_to_previous_symbol),
		cmocka_unit_test(kallsyms__sampled_symbols__resolve_to_an_alias_at_their_address),
		cmocka_unit_test(kallsyms__module_line__carries_module_name),
		cmocka_unit_test(kallsyms__zeroed_copy_under_root__eacces),
		cmocka_unit_test(kallsyms__file_under_root__loads_its_text_symbols),
		cmocka_unit_test(kallsyms__file_in_chunks__every_symbol_resolves),
		cmocka_unit_test(kallsyms__fifo_or_missing_file__error_not_hang),
		cmocka_unit_test(kallsyms__literal_lines__text_only_sorted_with_modules),
		cmocka_unit_test(kallsyms__bpf_program_lines__module_is_bpf),
		cmocka_unit_test(kallsyms__aliases__global_then_fewer_underscores_then_smallest),
		cmocka_unit_test(kallsyms__gap_guard__far_beyond_a_symbol_is_null),
		cmocka_unit_test(kallsyms__all_addresses_zero__eacces),
		cmocka_unit_test(kallsyms__no_text_symbols__enodata),
		cmocka_unit_test(kallsyms__no_final_newline__last_line_counts),
		cmocka_unit_test(kallsyms__malformed_lines__einval),
		cmocka_unit_test(kallsyms__huge_line__einval),
		cmocka_unit_test(kallsyms__random_mutations__error_codes_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
