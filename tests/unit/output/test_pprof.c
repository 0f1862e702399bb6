/* test_pprof.c - the pprof writer and reader, checked with tools that do not share its code: gzip and
 * protoc --decode_raw for the encoding, the pprof-format npm package for the content, readelf and nm
 * for build-ids and offsets. */
#include "outputs_session.h"

#include <errno.h>
#include <stdint.h>

#include "output/pprof.h"
#include "proto/profile.pb-c.h"

#define DUMP "NODE_PATH=build/npm/node_modules node tests/outputs/pprof_dump.cjs"
#define PERIOD 10101010ULL

/* The test-local node_modules (build/npm) with pprof-format; 0, or skips (fails under CI=true) when
 * npm cannot install it. */
static int require_npm(void)
{
	char out[2048];
	int rc = bt_test_run(out, sizeof(out), "tests/outputs/npm-setup.sh 2>&1");
	if (rc == 0)
		return 0;
	if (bt_test_in_ci())
		fail_msg("npm packages unavailable under CI: %s", out);
	print_message("skipped: npm packages unavailable: %s\n", out);
	skip();
	return -1;
}

static int setup(void **state)
{
	return bt_test_run(NULL, 0, "mkdir -p " OS_TMP) == 0 ? 0 : -1;
}

static void write_session(struct os_fixture *x, const char *path, uint64_t period)
{
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	struct bt_pprof_opts o = { .period_ns = period, .time_ns = 1700000000123456789LL,
				   .duration_ns = 2500000000LL, .kernel_root = x->root };
	assert_int_equal(bt_pprof_write_session(&x->s, &o, f), 0);
	assert_int_equal(fclose(f), 0);
}

/* pprof-format's reading of pb, into pb.dump (see tests/outputs/pprof_dump.cjs). */
static void dump(const char *pb)
{
	require_npm();
	char out[2048];
	int rc = bt_test_run(out, sizeof(out), DUMP " %s 2>&1 > %s.dump", pb, pb);
	if (rc)
		print_message("%s\n", out);
	assert_int_equal(rc, 0);
}

/* One field (1-based, tab-separated) of the first dump line matching an awk condition. */
static int dump_field(char *out, size_t len, const char *pb, const char *cond, int field)
{
	return bt_test_run(out, len, "awk -F'\\t' '%s { printf \"%%s\", $%d; exit }' %s.dump", cond, field, pb);
}

static void slurp(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "re");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	*buf = malloc((size_t)n + 1);
	assert_non_null(*buf);
	assert_int_equal(fread(*buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
}

/* bt_pprof_decode into a profile, seen as its folded lines (out zeroed on failure). */
static int decode_folded(const void *buf, size_t len, struct bt_folded *out)
{
	struct bt_profile p;
	bt_profile_init(&p);
	memset(out, 0, sizeof(*out));
	int err = bt_pprof_decode(buf, len, &p);
	if (!err)
		err = bt_folded_from_profile(&p, out);
	bt_profile_free(&p);
	return err;
}

/* Folded lines read into a profile and written as pprof. */
static int write_from_folded(const struct bt_folded *f, const struct bt_pprof_opts *o, FILE *out)
{
	struct bt_profile p;
	bt_profile_init(&p);
	int err = bt_folded_to_profile(f, &p);
	if (!err)
		err = bt_pprof_write_profile(&p, o, out);
	bt_profile_free(&p);
	return err;
}

static void write_folded(const struct bt_folded *f, const char *path)
{
	FILE *o = fopen(path, "we");
	assert_non_null(o);
	assert_int_equal(bt_folded_write(f, o), 0);
	assert_int_equal(fclose(o), 0);
}

/* bt_pprof_decode(file) and pprof-format's reading of it give exactly the folded file want. */
static void assert_decodes_to(const char *pb, const char *want)
{
	uint8_t *buf;
	size_t len;
	slurp(pb, &buf, &len);
	struct bt_folded got;
	assert_int_equal(decode_folded(buf, len, &got), 0);
	free(buf);
	write_folded(&got, OS_TMP "/decoded.folded");
	bt_folded_free(&got);
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "cmp " OS_TMP "/decoded.folded %s 2>&1 && "
			     DUMP " %s | awk -F'\\t' '$1 == \"folded\" { print $2 \" \" $3 }' | sort > "
			     OS_TMP "/js.folded && sort %s | cmp - " OS_TMP "/js.folded 2>&1", want, pb, want);
	if (rc)
		print_message("%s\n", out);
	assert_int_equal(rc, 0);
}

static void pprof__session__decodes_with_protoc_and_pprof_format(void **state)
{
	struct os_fixture *x = os_setup(false);
	write_session(x, OS_TMP "/s.pb.gz", PERIOD);
	char out[4096];
	/* gzip on disk, and a well-formed protobuf whatever the schema */
	assert_int_equal(bt_test_run(out, sizeof(out), "gzip -t " OS_TMP "/s.pb.gz 2>&1"), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "gzip -dc " OS_TMP "/s.pb.gz | protoc --decode_raw "
				     ">/dev/null 2>&1 && echo ok"), 0);
	assert_string_equal(out, "ok\n");
	dump(OS_TMP "/s.pb.gz");
	os_teardown(x);
}

static void pprof__mappings__carry_build_ids_of_readelf(void **state)
{
	struct os_fixture *x = os_setup(false);
	write_session(x, OS_TMP "/m.pb.gz", PERIOD);
	dump(OS_TMP "/m.pb.gz");
	char cond[PATH_MAX + 64], out[512];
	snprintf(cond, sizeof(cond), "$1 == \"mapping\" && $3 == \"%s\"", x->prog);
	assert_int_equal(dump_field(out, sizeof(out), OS_TMP "/m.pb.gz", cond, 4), 0);
	assert_string_equal(out, x->prog_bid);
	/* a frame of the program has no name: has_functions must say so */
	dump_field(out, sizeof(out), OS_TMP "/m.pb.gz", cond, 8);
	assert_string_equal(out, "false");
	snprintf(cond, sizeof(cond), "$1 == \"mapping\" && $3 == \"%s\"", x->lib);
	dump_field(out, sizeof(out), OS_TMP "/m.pb.gz", cond, 4);
	assert_string_equal(out, x->lib_bid);
	dump_field(out, sizeof(out), OS_TMP "/m.pb.gz", cond, 8);
	assert_string_equal(out, "true");
	/* no source files, lines or inlined frames are claimed */
	for (int field = 9; field <= 11; field++) {
		dump_field(out, sizeof(out), OS_TMP "/m.pb.gz", cond, field);
		assert_string_equal(out, "false");
	}
	const char *kcond = "$1 == \"mapping\" && $3 == \"[kernel.kallsyms]\"";
	dump_field(out, sizeof(out), OS_TMP "/m.pb.gz", kcond, 4);
	assert_string_equal(out, OS_KERNEL_BID);
	/* three files, no more: one mapping per (build-id, file), after an empty first one (no program
	 * was named: the first mapping is what pprof calls the program) */
	bt_test_run(out, sizeof(out), "cat " OS_TMP "/m.pb.gz.dump | grep -c '^mapping'");
	assert_string_equal(out, "4\n");
	bt_test_run(out, sizeof(out), "grep -m1 '^mapping' " OS_TMP "/m.pb.gz.dump");
	assert_string_equal(out, "mapping\t1\t\t\t0x0\t0x0\t0x0\tfalse\tfalse\tfalse\tfalse\n");
	os_teardown(x);
}

static void pprof__locations__offsets_and_names_match_nm(void **state)
{
	struct os_fixture *x = os_setup(false);
	write_session(x, OS_TMP "/l.pb.gz", PERIOD);
	dump(OS_TMP "/l.pb.gz");
	char out[512], want[64];
	/* address - memory_start + file_offset is the sampled file offset */
	dump_field(out, sizeof(out), OS_TMP "/l.pb.gz", "$1 == \"location\" && $6 == \"main\"", 5);
	snprintf(want, sizeof(want), "0x%llx", (unsigned long long)x->off_main + 1);
	assert_string_equal(out, want);
	dump_field(out, sizeof(out), OS_TMP "/l.pb.gz", "$1 == \"location\" && $6 == \"fx_static_helper\"", 5);
	snprintf(want, sizeof(want), "0x%llx", (unsigned long long)x->off_helper + 2);
	assert_string_equal(out, want);
	dump_field(out, sizeof(out), OS_TMP "/l.pb.gz", "$1 == \"location\" && $6 == \"fxl_exported\"", 5);
	snprintf(want, sizeof(want), "0x%llx", (unsigned long long)x->off_lib + 1);
	assert_string_equal(out, want);
	/* and its address is the one the file's own instructions have, as nm knows them */
	char nm[64];
	assert_int_equal(bt_test_run(nm, sizeof(nm), "nm " OS_PROG " | awk '$3 == \"main\" { print $1 }'"), 0);
	dump_field(out, sizeof(out), OS_TMP "/l.pb.gz", "$1 == \"location\" && $6 == \"main\"", 4);
	assert_int_equal(strtoull(out, NULL, 16), strtoull(nm, NULL, 16) + 1);
	/* the unnamed frame keeps its address and mapping, for symbolizing later */
	snprintf(want, sizeof(want), "0x%llx", (unsigned long long)OS_NOSYM_OFF);
	char cond[128];
	snprintf(cond, sizeof(cond), "$1 == \"location\" && $5 == \"%s\"", want);
	dump_field(out, sizeof(out), OS_TMP "/l.pb.gz", cond, 6);
	assert_string_equal(out, "-");
	dump_field(out, sizeof(out), OS_TMP "/l.pb.gz", cond, 3);
	assert_string_not_equal(out, "0");
	/* kernel names lose the folded _[k] suffix and keep their real address */
	dump_field(out, sizeof(out), OS_TMP "/l.pb.gz", "$1 == \"location\" && $6 == \"" OS_KSYM_NAME "\"", 4);
	snprintf(want, sizeof(want), "0x%llx", (unsigned long long)OS_KSYM_ADDR + 0x10);
	assert_string_equal(out, want);
	/* a frame outside every mapping: its raw address, no mapping, no name */
	snprintf(want, sizeof(want), "0x%llx", (unsigned long long)OS_UNMAPPED_ADDR);
	snprintf(cond, sizeof(cond), "$1 == \"location\" && $4 == \"%s\"", want);
	dump_field(out, sizeof(out), OS_TMP "/l.pb.gz", cond, 3);
	assert_string_equal(out, "0");
	os_teardown(x);
}

static void pprof__samples__values_period_and_labels(void **state)
{
	struct os_fixture *x = os_setup(false);
	write_session(x, OS_TMP "/v.pb.gz", PERIOD);
	dump(OS_TMP "/v.pb.gz");
	char out[4096];
	bt_test_run(out, sizeof(out), "cat " OS_TMP "/v.pb.gz.dump | awk -F'\\t' '$1 == \"sample_type\" || "
		    "$1 == \"period\" || $1 == \"time\" || $1 == \"duration\"'");
	assert_string_equal(out, "sample_type\tsamples\tcount\nsample_type\tcpu\tnanoseconds\n"
			    "period\tcpu\tnanoseconds\t10101010\ntime\t1700000000123456789\n"
			    "duration\t2500000000\n");
	/* every sample: count, count x period; its comm as "thread", no pid without --per-pid */
	int rc = bt_test_run(out, sizeof(out), "cat " OS_TMP "/v.pb.gz.dump | awk -F'\\t' '$1 == \"sample\" "
			     "{ split($2, v, \",\"); if (v[2] != v[1] * %llu || $3 !~ /^(thread=[^,]+)?$/) bad++; n += v[1] } "
			     "END { printf \"%%d %%d\", bad, n }'", PERIOD);
	assert_int_equal(rc, 0);
	char want[64];
	snprintf(want, sizeof(want), "0 %llu", (unsigned long long)x->total);
	assert_string_equal(out, want);
	os_teardown(x);

	x = os_setup(true);
	write_session(x, OS_TMP "/pid.pb.gz", PERIOD);
	dump(OS_TMP "/pid.pb.gz");
	bt_test_run(out, sizeof(out), "cat " OS_TMP "/pid.pb.gz.dump | awk -F'\\t' '$1 == \"sample\" { print $3 }' "
		    "| sort -u | tr '\\n' ' '");
	assert_string_equal(out, "pid=103 thread=prog,pid=100 thread=prog,pid=101 thread=worker,pid=102 ");
	os_teardown(x);
}

/* A profile of series: each sample carries its series' labels besides its own, as pprof-format
 * reads them. */
static void pprof__series__labels_on_every_sample(void **state)
{
	struct os_fixture *x = os_setup(false);
	struct bt_profile *p = &x->s.prof;
	int64_t a = bt_strtab_add(&p->names, "env=ci,service_name=alpha"), b = bt_strtab_add(&p->names, "service_name=beta");
	assert_true(a >= 0 && b >= 0);
	for (size_t i = 0; i < p->nstacks; i++)
		p->stacks[i].series_id = (uint32_t)(i % 2 ? b : a);
	write_session(x, OS_TMP "/series.pb.gz", PERIOD);
	dump(OS_TMP "/series.pb.gz");
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "cat " OS_TMP "/series.pb.gz.dump | awk -F'\\t' '$1 == \"sample\" "
			     "{ if ($3 ~ /(^|,)env=ci(,|$)/ && $3 ~ /(^|,)service_name=alpha(,|$)/) na++; "
			     "else if ($3 ~ /(^|,)service_name=beta(,|$)/ && $3 !~ /env=/) nb++; else bad++ } "
			     "END { printf \"%%d %%d %%d\", na, nb, bad }'");
	assert_int_equal(rc, 0);
	char want[64];
	snprintf(want, sizeof(want), "%zu %zu 0", (p->nstacks + 1) / 2, p->nstacks / 2);
	assert_string_equal(out, want);
	os_teardown(x);
}

/* Off-CPU stacks (main -> fx_static_helper, asleep) beside the fixture's CPU samples. */
static void add_offcpu(struct os_fixture *x, uint64_t ns)
{
	const struct bt_stack *cpu = &x->s.prof.stacks[0];
	uint32_t ids[3] = { x->s.prof.frames[cpu->first], x->s.prof.frames[cpu->first + 1] };
	int64_t st = bt_profile_named_loc(&x->s.prof, BT_LOC_OFFCPU, "off-CPU: sleeping (S)", 21);
	assert_true(st >= 0);
	ids[2] = (uint32_t)st;
	int64_t c = bt_strtab_add(&x->s.prof.names, "prog");
	struct bt_sample_key k = { .comm_id = (uint32_t)c, .pid = 0, .tid = 0, .exe_file = BT_NAME_UNSET,
				    .cgroup_id = BT_NAME_UNSET, .series_id = BT_NAME_UNSET, .kind = BT_VALUE_OFFCPU };
	assert_int_equal(bt_profile_add_key(&x->s.prof, &k, ids, 3, ns), 0);
}

static void write_view(struct os_fixture *x, const char *path, int view, bool only)
{
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	struct bt_pprof_opts o = { .period_ns = PERIOD, .kernel_root = x->root, .view = view, .view_only = only };
	assert_int_equal(bt_pprof_write_session(&x->s, &o, f), 0);
	assert_int_equal(fclose(f), 0);
}

/* Off-CPU time in its own value type: beside samples/count and cpu/nanoseconds (an off-CPU stack has
 * 0 in those, a CPU stack 0 off-CPU), the default; alone in a profile of its own type (the CPU
 * stacks left out); with wall/nanoseconds, their sum per sample, for the wall-clock view. The CPU
 * view leaves the off-CPU stacks out. */
static void pprof__offcpu__own_value_type_per_view(void **state)
{
	struct os_fixture *x = os_setup(false);
	add_offcpu(x, 1234567);
	char out[4096];
	write_view(x, OS_TMP "/off.pb.gz", BT_VIEW_OFFCPU, false);
	dump(OS_TMP "/off.pb.gz");
	bt_test_run(out, sizeof(out), "awk -F'\t' '$1 ~ /sample_type/' " OS_TMP "/off.pb.gz.dump");
	assert_string_equal(out, "sample_type\tsamples\tcount\nsample_type\tcpu\tnanoseconds\n"
			    "sample_type\toff_cpu\tnanoseconds\ndefault_sample_type\toff_cpu\n");
	int rc = bt_test_run(out, sizeof(out), "awk -F'\t' '$1 == \"sample\" { split($2, v, \",\"); "
			     "if (v[3] > 0 && (v[1] || v[2])) bad++; if (v[3] == 0 && v[2] != v[1] * %llu) bad++; "
			     "n += v[1]; off += v[3] } END { printf \"%%d %%d %%d\", bad, n, off }' " OS_TMP "/off.pb.gz.dump",
			     PERIOD);
	assert_int_equal(rc, 0);
	char want[64];
	snprintf(want, sizeof(want), "0 %llu 1234567", (unsigned long long)x->total);
	assert_string_equal(out, want);
	/* its own profile type: off-CPU stacks only */
	write_view(x, OS_TMP "/only.pb.gz", BT_VIEW_OFFCPU, true);
	dump(OS_TMP "/only.pb.gz");
	bt_test_run(out, sizeof(out), "awk -F'\t' '$1 ~ /sample_type/ || $1 == \"sample\" { print $1, $2 }' "
		    OS_TMP "/only.pb.gz.dump");
	assert_string_equal(out, "sample_type off_cpu\ndefault_sample_type off_cpu\nsample 1234567\n");
	/* wall: the fourth value is the sum of cpu and off_cpu */
	write_view(x, OS_TMP "/wall.pb.gz", BT_VIEW_WALL, false);
	dump(OS_TMP "/wall.pb.gz");
	rc = bt_test_run(out, sizeof(out), "awk -F'\t' '$1 == \"default_sample_type\" { d = $2 } $1 == \"sample\" "
			 "{ split($2, v, \",\"); if (v[4] != v[2] + v[3]) bad++; w += v[4] } END { printf \"%%s %%d %%d\", "
			 "d, bad, w }' " OS_TMP "/wall.pb.gz.dump");
	snprintf(want, sizeof(want), "wall 0 %llu", (unsigned long long)(x->total * PERIOD + 1234567));
	assert_string_equal(out, want);
	/* the CPU view: as before, without the off-CPU stack */
	write_view(x, OS_TMP "/cpu.pb.gz", BT_VIEW_CPU, false);
	dump(OS_TMP "/cpu.pb.gz");
	bt_test_run(out, sizeof(out), "awk -F'\t' '$1 == \"sample\" { split($2, v, \",\"); n += v[1]; k++ } "
		    "$1 ~ /sample_type/ { t++ } END { printf \"%%d %%d %%d\", t, k, n }' " OS_TMP "/cpu.pb.gz.dump");
	snprintf(want, sizeof(want), "2 %zu %llu", x->s.prof.nstacks - 1, (unsigned long long)x->total);
	assert_string_equal(out, want);
	os_teardown(x);
}

static void pprof__unknown_period__samples_only(void **state)
{
	struct os_fixture *x = os_setup(false);
	write_session(x, OS_TMP "/np.pb.gz", 0);
	dump(OS_TMP "/np.pb.gz");
	char out[1024];
	bt_test_run(out, sizeof(out), "cat " OS_TMP "/np.pb.gz.dump | awk -F'\\t' '$1 == \"sample_type\" || "
		    "$1 == \"period\"'");
	assert_string_equal(out, "sample_type\tsamples\tcount\n");
	os_teardown(x);
}

static void pprof__session__round_trips_to_the_same_folded(void **state)
{
	struct os_fixture *x = os_setup(false);
	write_session(x, OS_TMP "/rt.pb.gz", PERIOD);
	os_write_folded(x, OS_TMP "/rt.folded");
	/* the unnamed frames are written as the live output names them */
	char out[4096];
	bt_test_run(out, sizeof(out), "grep -c -F -e '[fx-sha1+0x40]' -e '[kernel.kallsyms]_[k]' "
		    "-e '[unknown]' " OS_TMP "/rt.folded");
	assert_string_equal(out, "4\n");
	require_npm();
	assert_decodes_to(OS_TMP "/rt.pb.gz", OS_TMP "/rt.folded");
	os_teardown(x);
}

static const char folded_text[] =
	"app;main;run;compute 10\n"
	"app;main;run;[libfoo.so+0x1a2b] 3\n"
	"app;main;read;entry_SYSCALL_64_[k];do_syscall_64_[k] 4\n"
	"other thread;start_thread;worker 2\n"
	"solo 1\n";

static void pprof__folded_input__round_trips(void **state)
{
	FILE *in = fmemopen((void *)folded_text, sizeof(folded_text) - 1, "r");
	struct bt_folded f;
	size_t bad;
	assert_int_equal(bt_folded_parse(in, &f, &bad), 0);
	fclose(in);
	write_folded(&f, OS_TMP "/in.folded");
	FILE *o = fopen(OS_TMP "/in.pb.gz", "we");
	struct bt_pprof_opts po = { 0 };
	assert_int_equal(write_from_folded(&f, &po, o), 0);
	assert_int_equal(fclose(o), 0);
	bt_folded_free(&f);
	require_npm();
	assert_decodes_to(OS_TMP "/in.pb.gz", OS_TMP "/in.folded");
	dump(OS_TMP "/in.pb.gz");
	/* names become functions once each, without mappings but for the kernel frames, which share
	 * one kernel mapping (so that read back they are kernel frames again) */
	char out[256];
	bt_test_run(out, sizeof(out), "cat " OS_TMP "/in.pb.gz.dump | awk -F'\\t' '$1 == \"location\" { n++; "
		    "if ($3 != \"0\") m++ } $1 == \"mapping\" { mm++ } END { printf \"%%d %%d %%d\", n, m, mm }'");
	assert_string_equal(out, "9 2 1");
}

/* Stacks kept per thread (--per-thread): pid and tid labels on every sample, read back as the same
 * comm-PID/TID lines. */
static void pprof__per_thread__tids_read_back(void **state)
{
	static const char text[] = "a-10/11;main;f 3\na-10/12;main;f 2\nb-20/20;main;g 1\n";
	FILE *in = fmemopen((void *)text, sizeof(text) - 1, "r");
	struct bt_folded f, got;
	size_t bad;
	assert_int_equal(bt_folded_parse(in, &f, &bad), 0);
	fclose(in);
	assert_true(f.per_tid);
	char *pb = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&pb, &len);
	struct bt_pprof_opts po = { 0 };
	assert_int_equal(write_from_folded(&f, &po, o), 0);
	assert_int_equal(fclose(o), 0);
	assert_int_equal(decode_folded(pb, len, &got), 0);
	free(pb);
	assert_true(got.per_tid);
	assert_int_equal(got.n, f.n);
	for (size_t i = 0; i < f.n; i++) {
		assert_string_equal(got.v[i].text, f.v[i].text);
		assert_int_equal(got.v[i].count, f.v[i].count);
	}
	bt_folded_free(&f);
	bt_folded_free(&got);
}

/* A profile from another encoder (pprof-format), shaped as other profilers write them: inlined
 * frames, several sample types, addresses and offsets (see tests/outputs/pprof_make.cjs). */
static void pprof__foreign_profile__decodes_as_pprof_format_reads_it(void **state)
{
	require_npm();
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "NODE_PATH=build/npm/node_modules node "
			     "tests/outputs/pprof_make.cjs " OS_TMP "/foreign.pb.gz 2>&1");
	if (rc)
		print_message("%s\n", out);
	assert_int_equal(rc, 0);
	/* by the rules of docs/pprof-format.md: the inlined callee after its caller, the "samples"
	 * type counting, zero samples left out, unnamed frames by file and offset */
	static const char want[] =
		"[unknown];[unknown] 3\n"
		"io;main;handle;parse_inlined 7\n"
		"server;main;[server+0x4000] 2\n"
		"server;main;handle;parse_inlined 5\n"
		"server;main;handle;parse_inlined;sys_write_[k] 1\n"
		"server;main;sys_write_[k];[kernel.kallsyms]_[k] 1\n";
	os_write(OS_TMP "/foreign.folded", want, sizeof(want) - 1);
	assert_decodes_to(OS_TMP "/foreign.pb.gz", OS_TMP "/foreign.folded");
}

/* ---- malformed input ---------------------------------------------------------------------------- */

typedef Perftools__Profiles__Profile Prof;

/* A small valid profile: one sample of one location in one function, in one mapping. */
struct mini {
	Prof p;
	Perftools__Profiles__ValueType vt, *vtp[1];
	Perftools__Profiles__Sample s, *sp[1];
	uint64_t loc_ids[1];
	int64_t values[1];
	Perftools__Profiles__Label lab, *labp[1];
	Perftools__Profiles__Mapping m, *mp[1];
	Perftools__Profiles__Location l, *lp[1];
	Perftools__Profiles__Line ln, *lnp[1];
	Perftools__Profiles__Function fn, *fnp[1];
	char *strs[6];
};

static void mini_init(struct mini *m)
{
	memset(m, 0, sizeof(*m));
	perftools__profiles__profile__init(&m->p);
	perftools__profiles__value_type__init(&m->vt);
	perftools__profiles__sample__init(&m->s);
	perftools__profiles__label__init(&m->lab);
	perftools__profiles__mapping__init(&m->m);
	perftools__profiles__location__init(&m->l);
	perftools__profiles__line__init(&m->ln);
	perftools__profiles__function__init(&m->fn);
	static char e[] = "", samples[] = "samples", count[] = "count", thread[] = "thread", t[] = "t",
		    f[] = "f";
	char *strs[] = { e, samples, count, thread, t, f };
	memcpy(m->strs, strs, sizeof(strs));
	m->p.string_table = m->strs;
	m->p.n_string_table = 6;
	m->vt.type = 1;
	m->vt.unit = 2;
	m->vtp[0] = &m->vt;
	m->p.sample_type = m->vtp;
	m->p.n_sample_type = 1;
	m->fn.id = 1;
	m->fn.name = 5;
	m->fnp[0] = &m->fn;
	m->p.function = m->fnp;
	m->p.n_function = 1;
	m->m.id = 1;
	m->mp[0] = &m->m;
	m->p.mapping = m->mp;
	m->p.n_mapping = 1;
	m->ln.function_id = 1;
	m->lnp[0] = &m->ln;
	m->l.id = 1;
	m->l.mapping_id = 1;
	m->l.line = m->lnp;
	m->l.n_line = 1;
	m->lp[0] = &m->l;
	m->p.location = m->lp;
	m->p.n_location = 1;
	m->loc_ids[0] = 1;
	m->values[0] = 3;
	m->s.location_id = m->loc_ids;
	m->s.n_location_id = 1;
	m->s.value = m->values;
	m->s.n_value = 1;
	m->lab.key = 3;
	m->lab.str = 4;
	m->labp[0] = &m->lab;
	m->s.label = m->labp;
	m->s.n_label = 1;
	m->sp[0] = &m->s;
	m->p.sample = m->sp;
	m->p.n_sample = 1;
}

static int mini_decode(struct mini *m, struct bt_folded *out)
{
	size_t len = perftools__profiles__profile__get_packed_size(&m->p);
	uint8_t *buf = malloc(len + 1);
	assert_non_null(buf);
	perftools__profiles__profile__pack(&m->p, buf);
	int err = decode_folded(buf, len, out);
	free(buf);
	return err;
}

static void pprof__decode__valid_mini_profile(void **state)
{
	struct mini m;
	mini_init(&m);
	struct bt_folded f;
	assert_int_equal(mini_decode(&m, &f), 0);
	assert_int_equal(f.n, 1);
	assert_string_equal(f.v[0].text, "t;f");
	assert_int_equal(f.v[0].count, 3);
	bt_folded_free(&f);
}

static void pprof__decode__broken_references_are_einval(void **state)
{
	struct mini m;
	struct bt_folded f;
	mini_init(&m);
	m.loc_ids[0] = 9;           /* no such location */
	assert_int_equal(mini_decode(&m, &f), -EINVAL);
	mini_init(&m);
	m.l.mapping_id = 2;         /* no such mapping */
	assert_int_equal(mini_decode(&m, &f), -EINVAL);
	mini_init(&m);
	m.ln.function_id = 7;       /* no such function */
	assert_int_equal(mini_decode(&m, &f), -EINVAL);
	mini_init(&m);
	m.fn.name = 6;              /* past the string table */
	assert_int_equal(mini_decode(&m, &f), -EINVAL);
	mini_init(&m);
	m.lab.str = -1;
	assert_int_equal(mini_decode(&m, &f), -EINVAL);
	mini_init(&m);
	m.values[0] = -1;           /* folded counts cannot be negative */
	assert_int_equal(mini_decode(&m, &f), -EINVAL);
	mini_init(&m);
	m.s.n_value = 0;            /* fewer values than sample types */
	assert_int_equal(mini_decode(&m, &f), -EINVAL);
	mini_init(&m);
	m.l.id = 0;                 /* ids are nonzero */
	assert_int_equal(mini_decode(&m, &f), -EINVAL);
	mini_init(&m);
	m.vt.type = 40;
	assert_int_equal(mini_decode(&m, &f), -EINVAL);
}

static void pprof__decode__garbage_and_truncation_are_einval(void **state)
{
	struct bt_folded f;
	const uint8_t junk[] = { 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01 };
	assert_int_equal(decode_folded(junk, sizeof(junk), &f), -EINVAL);
	const uint8_t text[] = "app;main 3\n";
	assert_int_equal(decode_folded(text, sizeof(text) - 1, &f), -EINVAL);
	/* a real profile cut short, compressed and not */
	struct os_fixture *x = os_setup(false);
	write_session(x, OS_TMP "/cut.pb.gz", PERIOD);
	os_teardown(x);
	uint8_t *buf;
	size_t len;
	slurp(OS_TMP "/cut.pb.gz", &buf, &len);
	assert_int_equal(decode_folded(buf, len / 2, &f), -EINVAL);
	buf[len / 2] ^= 0xff;
	assert_int_equal(decode_folded(buf, len, &f), -EINVAL);
	free(buf);
	assert_int_equal(bt_test_run(NULL, 0, "gzip -dc " OS_TMP "/cut.pb.gz > " OS_TMP "/cut.pb"), 0);
	slurp(OS_TMP "/cut.pb", &buf, &len);
	/* inside the first sample type, and inside the last field (the comment) */
	assert_int_equal(decode_folded(buf, 3, &f), -EINVAL);
	assert_int_equal(decode_folded(buf, len - 1, &f), -EINVAL);
	free(buf);
	/* nothing at all is a valid, empty profile */
	assert_int_equal(decode_folded("", 0, &f), 0);
	assert_int_equal(f.n, 0);
	bt_folded_free(&f);
}

/* A small profile that names a long function a thousand times in a location used a hundred times
 * in one sample would fold into gigabytes: refused instead. */
static void pprof__amplifying_profile__efbig(void **state)
{
	struct mini m;
	mini_init(&m);
	char *longname = malloc(65537);
	assert_non_null(longname);
	memset(longname, 'x', 65536);
	longname[65536] = '\0';
	m.strs[5] = longname;
	Perftools__Profiles__Line **lines = calloc(1000, sizeof(*lines));
	uint64_t ids[100];
	assert_non_null(lines);
	for (int i = 0; i < 1000; i++)
		lines[i] = &m.ln;
	for (int i = 0; i < 100; i++)
		ids[i] = 1;
	m.l.line = lines;
	m.l.n_line = 1000;
	m.s.location_id = ids;
	m.s.n_location_id = 100;
	struct bt_folded f;
	size_t len = perftools__profiles__profile__get_packed_size(&m.p);
	assert_true(len < 100000);
	assert_int_equal(mini_decode(&m, &f), -EFBIG);
	/* the same location once is fine: 64 MiB of text */
	m.s.n_location_id = 1;
	assert_int_equal(mini_decode(&m, &f), 0);
	assert_int_equal(f.n, 1);
	assert_int_equal(strlen(f.v[0].text), 1 + 1000 * 65537);
	bt_folded_free(&f);
	free(lines);
	free(longname);
}

/* A million empty samples are two bytes each on the wire and a message struct each decoded: past
 * the decoding budget, -EFBIG, where without one they took 90 MB. Zeros decompressing past
 * BT_PPROF_MAX_BYTES are refused before they are decoded. */
static void pprof__expanding_input__efbig(void **state)
{
	(void)state;
	size_t n = 2u << 20;
	uint8_t *empty = malloc(n);
	assert_non_null(empty);
	for (size_t i = 0; i < n; i += 2) {
		empty[i] = 0x12;  /* field 2 (sample), length-delimited */
		empty[i + 1] = 0;
	}
	struct bt_folded f;
	assert_int_equal(decode_folded(empty, n, &f), -EFBIG);
	/* a few of them are decoded (and then refused: a sample needs a value) */
	assert_int_equal(decode_folded(empty, 2000, &f), -EINVAL);
	free(empty);
	assert_int_equal(bt_test_run(NULL, 0, "head -c %zu /dev/zero | gzip -1 > " OS_TMP "/zeros.pb.gz",
				     BT_PPROF_MAX_BYTES + 1), 0);
	uint8_t *buf;
	size_t len;
	slurp(OS_TMP "/zeros.pb.gz", &buf, &len);
	assert_int_equal(decode_folded(buf, len, &f), -EFBIG);
	free(buf);
}

/* /dev/full fails every write with ENOSPC: that is the error reported, not a generic one. */
static void pprof__write_error__keeps_its_errno(void **state)
{
	struct os_fixture *x = os_setup(false);
	FILE *full = fopen("/dev/full", "we");
	assert_non_null(full);
	struct bt_pprof_opts o = { .period_ns = PERIOD, .kernel_root = x->root };
	assert_int_equal(bt_pprof_write_session(&x->s, &o, full), -ENOSPC);
	fclose(full);
	os_teardown(x);
}

/* Comms are whatever bytes a task named itself: they must survive, protobuf strings or not. */
static void pprof__odd_bytes_in_names__round_trip(void **state)
{
	static const char text[] = "\xff\xfe;f\"n\\;g\tx 2\n";
	FILE *in = fmemopen((void *)text, sizeof(text) - 1, "r");
	struct bt_folded f, back;
	size_t bad;
	assert_int_equal(bt_folded_parse(in, &f, &bad), 0);
	fclose(in);
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	assert_int_equal(write_from_folded(&f, NULL, o), 0);
	fclose(o);
	assert_int_equal(decode_folded(buf, len, &back), 0);
	assert_int_equal(back.n, 1);
	assert_string_equal(back.v[0].text, f.v[0].text);
	assert_int_equal(back.v[0].count, 2);
	free(buf);
	bt_folded_free(&f);
	bt_folded_free(&back);
}

/* A module's frames: a mapping of their own, [fx_mod] with the module's build-id at its loaded
 * range; decoded back, the same folded stacks as the live output. */
static void pprof__module_frames__own_mapping_and_round_trip(void **state)
{
	struct os_fixture *x = os_setup(false);
	char mod_bid[2 * BT_BUILD_ID_MAXLEN + 1];
	os_add_module(x, mod_bid, sizeof(mod_bid));
	write_session(x, OS_TMP "/mod.pb.gz", PERIOD);
	os_write_folded(x, OS_TMP "/mod.folded");
	char out[4096];
	bt_test_run(out, sizeof(out), "grep -c -F -e 'modprobe;main_[k]' -e 'modprobe;[fx_mod]_[k]' " OS_TMP "/mod.folded");
	assert_string_equal(out, "2\n");
	require_npm();
	assert_decodes_to(OS_TMP "/mod.pb.gz", OS_TMP "/mod.folded");
	dump(OS_TMP "/mod.pb.gz");
	const char *cond = "$1 == \"mapping\" && $3 == \"[fx_mod]\"";
	assert_int_equal(dump_field(out, sizeof(out), OS_TMP "/mod.pb.gz", cond, 4), 0);
	assert_string_equal(out, mod_bid);
	os_teardown(x);
}

/* JIT frames of process 200: a mapping of their own, "[jit] 200" without build-id, in which each
 * frame's file offset is its run-time address, named or not. */
static void pprof__jit_frames__own_mapping_and_real_addresses(void **state)
{
	struct os_fixture *x = os_setup(false);
	uint32_t jit = os_add_jit(x);
	uint32_t hot = os_loc(x, BT_LOC_JIT, jit, OS_JIT_ADDR + 0x10, false);
	uint32_t miss = os_loc(x, BT_LOC_JIT, jit, 0x7f0000009000, true);
	os_add(x, "node", 200, (uint32_t[]){ miss, hot }, 2, 3);
	assert_int_equal(bt_session_resolve(&x->s), 0);
	write_session(x, OS_TMP "/j.pb.gz", PERIOD);
	dump(OS_TMP "/j.pb.gz");
	char id[32], out[512];
	const char *mcond = "$1 == \"mapping\" && $3 == \"[jit] 200\"";
	assert_int_equal(dump_field(id, sizeof(id), OS_TMP "/j.pb.gz", mcond, 2), 0);
	assert_true(id[0] >= '1' && id[0] <= '9');
	dump_field(out, sizeof(out), OS_TMP "/j.pb.gz", mcond, 4);
	assert_string_equal(out, "");
	/* one frame has no name: has_functions says so */
	dump_field(out, sizeof(out), OS_TMP "/j.pb.gz", mcond, 8);
	assert_string_equal(out, "false");
	char cond[128];
	snprintf(cond, sizeof(cond), "$1 == \"location\" && $5 == \"0x%llx\"", OS_JIT_ADDR + 0x10);
	dump_field(out, sizeof(out), OS_TMP "/j.pb.gz", cond, 6);
	assert_string_equal(out, "JS:*hot /srv/x.js:1:1");
	dump_field(out, sizeof(out), OS_TMP "/j.pb.gz", cond, 3);
	assert_string_equal(out, id);
	snprintf(cond, sizeof(cond), "$1 == \"location\" && $5 == \"0x7f0000009000\"");
	dump_field(out, sizeof(out), OS_TMP "/j.pb.gz", cond, 6);
	assert_string_equal(out, "-");
	dump_field(out, sizeof(out), OS_TMP "/j.pb.gz", cond, 3);
	assert_string_equal(out, id);
	bt_test_run(out, sizeof(out), "awk -F'\\t' '$1 == \"folded\" && $2 ~ /^node;/ { print $2 \" \" $3 }' "
		    OS_TMP "/j.pb.gz.dump");
	/* the unnamed one as docs/pprof-format.md spells frames without a name: [FILE+0xOFFSET] */
	assert_string_equal(out, "node;[[jit] 200+0x7f0000009000];JS:*hot /srv/x.js:1:1 3\n");
	os_teardown(x);
}

/* A walk gone astray in JIT code gives addresses anywhere, text read as an address among them: the
 * profile is still written, every location in its mapping, each keeping its run-time address. */
static void pprof__jit_frames_at_any_address__profile_written(void **state)
{
	struct os_fixture *x = os_setup(false);
	uint32_t jit = os_add_jit(x);
	uint32_t hot = os_loc(x, BT_LOC_JIT, jit, OS_JIT_ADDR + 0x10, false);
	uint32_t zero = os_loc(x, BT_LOC_JIT, jit, 0, true);
	uint32_t text = os_loc(x, BT_LOC_JIT, jit, 0x6f6f6c6620303120ULL, true);
	uint32_t top = os_loc(x, BT_LOC_JIT, jit, UINT64_MAX, true);
	os_add(x, "node", 200, (uint32_t[]){ top, text, zero, hot }, 4, 2);
	assert_int_equal(bt_session_resolve(&x->s), 0);
	write_session(x, OS_TMP "/jany.pb.gz", PERIOD);
	/* pprof_dump refuses a location outside its mapping */
	dump(OS_TMP "/jany.pb.gz");
	char out[512];
	bt_test_run(out, sizeof(out), "awk -F'\\t' '$1 == \"location\" && $5 ~ /^0x(0|6f6f6c6620303120|ffffffffffffffff)$/ "
		    "{ n++ } END { print n }' " OS_TMP "/jany.pb.gz.dump");
	assert_string_equal(out, "3\n");
	os_teardown(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pprof__session__decodes_with_protoc_and_pprof_format),
		cmocka_unit_test(pprof__mappings__carry_build_ids_of_readelf),
		cmocka_unit_test(pprof__module_frames__own_mapping_and_round_trip),
		cmocka_unit_test(pprof__locations__offsets_and_names_match_nm),
		cmocka_unit_test(pprof__jit_frames__own_mapping_and_real_addresses),
		cmocka_unit_test(pprof__jit_frames_at_any_address__profile_written),
		cmocka_unit_test(pprof__samples__values_period_and_labels),
		cmocka_unit_test(pprof__series__labels_on_every_sample),
		cmocka_unit_test(pprof__unknown_period__samples_only),
		cmocka_unit_test(pprof__offcpu__own_value_type_per_view),
		cmocka_unit_test(pprof__session__round_trips_to_the_same_folded),
		cmocka_unit_test(pprof__folded_input__round_trips),
		cmocka_unit_test(pprof__per_thread__tids_read_back),
		cmocka_unit_test(pprof__foreign_profile__decodes_as_pprof_format_reads_it),
		cmocka_unit_test(pprof__decode__valid_mini_profile),
		cmocka_unit_test(pprof__decode__broken_references_are_einval),
		cmocka_unit_test(pprof__decode__garbage_and_truncation_are_einval),
		cmocka_unit_test(pprof__amplifying_profile__efbig),
		cmocka_unit_test(pprof__expanding_input__efbig),
		cmocka_unit_test(pprof__write_error__keeps_its_errno),
		cmocka_unit_test(pprof__odd_bytes_in_names__round_trip),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
