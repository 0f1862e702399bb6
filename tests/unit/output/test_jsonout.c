/* test_jsonout.c - the JSON profile writer, read back by Python's json module (strict UTF-8) through
 * tests/outputs/json_fold.py, which checks the documented schema; build-ids and offsets against
 * readelf and nm, the start time against date(1). */
#include "outputs_session.h"

#include <errno.h>

#include "output/jsonout.h"

/* Debian's python3 (tools/deps.sh), not whatever wrapper PATH finds first: it starts fast */
#define PY "/usr/bin/python3"
#define FOLD PY " tests/outputs/json_fold.py"
#define PERIOD 10101010ULL
#define START_NS 1700000000123456789LL

static int setup(void **state)
{
	return bt_test_run(NULL, 0, "mkdir -p " OS_TMP) == 0 ? 0 : -1;
}

static void write_session(struct os_fixture *x, const char *path)
{
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	struct bt_json_opts o = { .period_ns = PERIOD, .time_ns = START_NS, .duration_ns = 2500000000LL,
				  .kernel_root = x->root };
	assert_int_equal(bt_json_write_session(&x->s, &o, f), 0);
	assert_int_equal(fclose(f), 0);
}

/* One field (1-based) of the frame line of json_fold.py whose fields match an awk condition. */
static void frame_field(char *out, size_t len, const char *json, const char *cond, int field)
{
	bt_test_run(out, len, FOLD " %s frames | awk -F'\\t' '%s { printf \"%%s\", $%d; exit }'", json, cond,
		    field);
}

static void jsonout__session__valid_json_with_the_documented_header(void **state)
{
	struct os_fixture *x = os_setup(false);
	write_session(x, OS_TMP "/h.json");
	char out[2048], want[512], date[64];
	assert_int_equal(bt_test_run(out, sizeof(out), PY " -m json.tool " OS_TMP "/h.json >/dev/null 2>&1"), 0);
	int rc = bt_test_run(out, sizeof(out), FOLD " " OS_TMP "/h.json header 2>&1");
	assert_int_equal(rc, 0);
	bt_test_run(date, sizeof(date), "date -u -d @%lld +%%Y-%%m-%%dT%%H:%%M:%%S | tr -d '\\n'",
		    START_NS / 1000000000);
	snprintf(want, sizeof(want), "source\t\"session\"\nunit\t\"samples\"\nperiod_ns\t%llu\n"
		 "start_time\t\"%s.%09lldZ\"\nduration_ns\t2500000000\nper_pid\tfalse\ntotal\t%llu\n",
		 PERIOD, date, START_NS % 1000000000, (unsigned long long)x->total);
	assert_string_equal(out, want);
	os_teardown(x);
}

static void jsonout__frames__carry_build_ids_and_offsets(void **state)
{
	struct os_fixture *x = os_setup(false);
	write_session(x, OS_TMP "/f.json");
	char out[3 * PATH_MAX], want[3 * PATH_MAX];
	/* main: a return address one byte into it, in the program, named */
	frame_field(out, sizeof(out), OS_TMP "/f.json", "$3 == \"main\"", 0);
	snprintf(want, sizeof(want), "user\tmain\t%s\t%s\t0x%llx\ttrue\ttrue", x->prog, x->prog_bid,
		 (unsigned long long)x->off_main + 1);
	assert_non_null(strstr(out, want));
	frame_field(out, sizeof(out), OS_TMP "/f.json", "$3 == \"fxl_exported\"", 0);
	snprintf(want, sizeof(want), "user\tfxl_exported\t%s\t%s\t0x%llx\ttrue\ttrue", x->lib, x->lib_bid,
		 (unsigned long long)x->off_lib + 1);
	assert_non_null(strstr(out, want));
	/* the frame no function covers keeps file, build-id and offset, for symbolizing later */
	snprintf(want, sizeof(want), "user\t[fx-sha1+0x%llx]\t%s\t%s\t0x%llx\tfalse\tfalse",
		 (unsigned long long)OS_NOSYM_OFF, x->prog, x->prog_bid, (unsigned long long)OS_NOSYM_OFF);
	frame_field(out, sizeof(out), OS_TMP "/f.json", "$6 == \"0x40\"", 0);
	assert_non_null(strstr(out, want));
	/* kernel frames: the running kernel's build-id, names without the folded suffix */
	frame_field(out, sizeof(out), OS_TMP "/f.json", "$3 == \"" OS_KSYM_NAME "\"", 0);
	snprintf(want, sizeof(want), "kernel\t" OS_KSYM_NAME "\t[kernel.kallsyms]\t" OS_KERNEL_BID "\t0x%llx\t"
		 "false\ttrue", (unsigned long long)OS_KSYM_ADDR + 0x10);
	assert_non_null(strstr(out, want));
	frame_field(out, sizeof(out), OS_TMP "/f.json", "$3 == \"[kernel.kallsyms]\"", 8);
	assert_string_equal(out, "false");
	frame_field(out, sizeof(out), OS_TMP "/f.json", "$2 == \"unmapped\"", 0);
	snprintf(want, sizeof(want), "unmapped\t[unknown]\tNone\tNone\t0x%llx\tfalse\tfalse",
		 (unsigned long long)OS_UNMAPPED_ADDR);
	assert_non_null(strstr(out, want));
	os_teardown(x);
}

static void jsonout__session__folds_to_the_same_stacks(void **state)
{
	struct os_fixture *x = os_setup(false);
	write_session(x, OS_TMP "/s.json");
	os_write_folded(x, OS_TMP "/s.folded");
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), FOLD " " OS_TMP "/s.json | sort > " OS_TMP "/s.json.folded && "
			     "sort " OS_TMP "/s.folded | cmp - " OS_TMP "/s.json.folded 2>&1");
	if (rc)
		print_message("%s\n", out);
	assert_int_equal(rc, 0);
	os_teardown(x);
}

static void jsonout__per_pid__stacks_carry_pids(void **state)
{
	struct os_fixture *x = os_setup(true);
	write_session(x, OS_TMP "/p.json");
	char out[256];
	int rc = bt_test_run(out, sizeof(out), PY " -c 'import json, sys; d = json.load(open(sys.argv[1])); "
			     "print(d[\"per_pid\"], sorted(set(s[\"pid\"] for s in d[\"stacks\"])))' " OS_TMP "/p.json");
	assert_int_equal(rc, 0);
	assert_string_equal(out, "True [100, 101, 102, 103]\n");
	/* without --per-pid there is no pid to give */
	os_teardown(x);
	x = os_setup(false);
	write_session(x, OS_TMP "/np.json");
	bt_test_run(out, sizeof(out), PY " -c 'import json, sys; d = json.load(open(sys.argv[1])); "
		    "print(any(\"pid\" in s for s in d[\"stacks\"]))' " OS_TMP "/np.json");
	assert_string_equal(out, "False\n");
	os_teardown(x);
}

static const char folded_text[] =
	"app;main;run;compute 10\n"
	"app;main;run;[libfoo.so+0x1a2b] 3\n"
	"app;main;read;entry_SYSCALL_64_[k];do_syscall_64_[k] 4\n"
	"other thread;start_thread;worker 2\n"
	"solo 1\n";

static void jsonout__folded_input__round_trips(void **state)
{
	FILE *in = fmemopen((void *)folded_text, sizeof(folded_text) - 1, "r");
	struct bt_folded f;
	size_t bad;
	assert_int_equal(bt_folded_parse(in, &f, &bad), 0);
	fclose(in);
	struct bt_profile p;
	bt_profile_init(&p);
	assert_int_equal(bt_folded_to_profile(&f, &p), 0);
	bt_folded_free(&f);
	os_write(OS_TMP "/in.folded", folded_text, sizeof(folded_text) - 1);
	FILE *o = fopen(OS_TMP "/in.json", "we");
	struct bt_json_opts jo = { .source = "folded" };
	assert_int_equal(bt_json_write_profile(&p, &jo, o), 0);
	assert_int_equal(fclose(o), 0);
	bt_profile_free(&p);
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), FOLD " " OS_TMP "/in.json | sort > " OS_TMP "/in.json.folded && "
			     "sort " OS_TMP "/in.folded | cmp - " OS_TMP "/in.json.folded 2>&1");
	if (rc)
		print_message("%s\n", out);
	assert_int_equal(rc, 0);
	/* kernel frames are told apart by kind, their names without the suffix */
	bt_test_run(out, sizeof(out), FOLD " " OS_TMP "/in.json frames | awk -F'\\t' '$2 == \"kernel\" "
		    "{ printf \"%%s \", $3 }'");
	assert_string_equal(out, "entry_SYSCALL_64 do_syscall_64 ");
	/* the placeholder is a frame buildtrace could not name */
	bt_test_run(out, sizeof(out), FOLD " " OS_TMP "/in.json frames | awk -F'\\t' '$8 == \"false\" "
		    "{ printf \"%%s \", $3 }'");
	assert_string_equal(out, "[libfoo.so+0x1a2b] ");
	bt_test_run(out, sizeof(out), FOLD " " OS_TMP "/in.json header | awk -F'\\t' '$1 == \"period_ns\" || "
		    "$1 == \"start_time\" || $1 == \"total\" { printf \"%%s \", $2 }'");
	assert_string_equal(out, "null null 20 ");
}

/* Python decodes the bytes strictly as UTF-8 and the escapes as JSON: what it reads back is the
 * expected text, each invalid byte a U+FFFD. */
static void jsonout__strings__escaped_into_valid_utf8(void **state)
{
	static const char raw[] = "a\"b\\c\n\t\x01\x7f" "\xc3\xa9" "\xe2\x82\xac" "\xf0\x9f\x94\xa5"
				  "|\xff|\xc0\xaf|\xed\xa0\x80|\xe2\x82";
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	bt_json_put_string(o, raw, sizeof(raw));  /* the terminating NUL too */
	fclose(o);
	os_write(OS_TMP "/str.json", buf, len);
	free(buf);
	char out[512];
	int rc = bt_test_run(out, sizeof(out), PY " -c 'import json, sys; "
			     "s = json.loads(open(sys.argv[1], \"rb\").read().decode(\"utf-8\")); "
			     "print(ascii(s))' " OS_TMP "/str.json");
	assert_int_equal(rc, 0);
	assert_string_equal(out, "'a\"b\\\\c\\n\\t\\x01\\x7f\\xe9\\u20ac\\U0001f525|\\ufffd|\\ufffd\\ufffd|"
			    "\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\\x00'\n");
}

/* /dev/full fails every write with ENOSPC: that is the error reported, not a generic one. */
static void jsonout__write_error__keeps_its_errno(void **state)
{
	struct os_fixture *x = os_setup(false);
	FILE *full = fopen("/dev/full", "we");
	assert_non_null(full);
	struct bt_json_opts o = { .kernel_root = x->root };
	assert_int_equal(bt_json_write_session(&x->s, &o, full), -ENOSPC);
	fclose(full);
	os_teardown(x);
}

/* A module loaded during the session: its frames name the module and carry its own build-id, the
 * function from its .ko file where one covers the address. */
static void jsonout__module_frames__module_file_and_build_id(void **state)
{
	struct os_fixture *x = os_setup(false);
	char mod_bid[2 * BT_BUILD_ID_MAXLEN + 1];
	os_add_module(x, mod_bid, sizeof(mod_bid));
	write_session(x, OS_TMP "/mod.json");
	char out[3 * PATH_MAX], want[3 * PATH_MAX];
	frame_field(out, sizeof(out), OS_TMP "/mod.json", "$4 == \"[fx_mod]\" && $8 == \"true\"", 0);
	snprintf(want, sizeof(want), "kernel\tmain\t[fx_mod]\t%s\t", mod_bid);
	assert_non_null(strstr(out, want));
	frame_field(out, sizeof(out), OS_TMP "/mod.json", "$4 == \"[fx_mod]\" && $8 == \"false\"", 0);
	snprintf(want, sizeof(want), "kernel\t[fx_mod]\t[fx_mod]\t%s\t0x%llx", mod_bid,
		 (unsigned long long)OS_MOD_BASE + 0x1000);
	assert_non_null(strstr(out, want));
	/* the kernel image's frames keep the kernel's build-id */
	frame_field(out, sizeof(out), OS_TMP "/mod.json", "$3 == \"" OS_KSYM_NAME "\"", 5);
	assert_string_equal(out, OS_KERNEL_BID);
	os_teardown(x);
}

/* Process 200 writes a perf map in its own /tmp (its root under the fake /proc), as pid 9 of its
 * namespace: a frame in its code is named from it, one outside every line is not. */
static void jsonout__jit_frames__pid_and_where_the_name_came_from(void **state)
{
	struct os_fixture *x = os_setup(false);
	uint32_t jit = os_add_jit(x);
	uint32_t hot = os_loc(x, BT_LOC_JIT, jit, OS_JIT_ADDR + 0x10, false);
	uint32_t miss = os_loc(x, BT_LOC_JIT, jit, 0x7f0000009000, true);
	os_add(x, "node", 200, (uint32_t[]){ miss, hot }, 2, 3);
	bt_jitmaps_gone(&x->s.jit, 200, 2);   /* exited: the miss is final */
	assert_int_equal(bt_session_resolve(&x->s), 0);
	write_session(x, OS_TMP "/jit.json");
	char out[1024];
	assert_int_equal(bt_test_run(out, sizeof(out), FOLD " " OS_TMP "/jit.json | grep '^node;'"), 0);
	assert_string_equal(out, "node;[unknown];JS:*hot /srv/x.js:1:1 3\n");
	assert_int_equal(bt_test_run(out, sizeof(out), PY " -c '"
				     "import json; d = json.load(open(\"" OS_TMP "/jit.json\")); "
				     "print(*[(f[\"name\"], f[\"pid\"], f[\"address\"], f[\"name_from\"]) "
				     "for f in d[\"frames\"] if f[\"kind\"] == \"jit\"], sep=\"\\n\")'"), 0);
	assert_string_equal(out, "('JS:*hot /srv/x.js:1:1', 200, '0x7f0000001010', 'perf-map')\n"
			    "('[unknown]', 200, '0x7f0000009000', None)\n");
	os_teardown(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jsonout__session__valid_json_with_the_documented_header),
		cmocka_unit_test(jsonout__frames__carry_build_ids_and_offsets),
		cmocka_unit_test(jsonout__module_frames__module_file_and_build_id),
		cmocka_unit_test(jsonout__jit_frames__pid_and_where_the_name_came_from),
		cmocka_unit_test(jsonout__session__folds_to_the_same_stacks),
		cmocka_unit_test(jsonout__per_pid__stacks_carry_pids),
		cmocka_unit_test(jsonout__folded_input__round_trips),
		cmocka_unit_test(jsonout__strings__escaped_into_valid_utf8),
		cmocka_unit_test(jsonout__write_error__keeps_its_errno),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
