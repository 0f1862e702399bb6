/* test_callgraph.c - the call-graph mode as users write it. */
#include "testutil.h"
#include "capture/callgraph.h"

#include <errno.h>

static void callgraph__modes__parsed(void **state)
{
	bool dwarf = false, bpf = true;
	unsigned bytes = 1;
	assert_int_equal(bt_call_graph_parse("dwarf", &dwarf, &bytes, &bpf), 0);
	assert_true(dwarf != bpf);
	assert_int_equal(bytes, 0);
	assert_int_equal(bt_call_graph_parse("fp", &dwarf, &bytes, &bpf), 0);
	assert_false(dwarf);
	assert_int_equal(bt_call_graph_parse("dwarf,16384", &dwarf, &bytes, &bpf), 0);
	assert_true(dwarf);
	assert_int_equal(bytes, 16384);
	/* the bounds themselves */
	assert_int_equal(bt_call_graph_parse("dwarf,256", &dwarf, &bytes, &bpf), 0);
	assert_int_equal(bytes, 256);
	assert_int_equal(bt_call_graph_parse("dwarf,65536", &dwarf, &bytes, &bpf), 0);
	assert_int_equal(bytes, 65536);
	/* the two ways of using call frame information by name */
	assert_int_equal(bt_call_graph_parse("dwarf-bpf", &dwarf, &bytes, &bpf), 0);
	assert_true(bpf);
	assert_false(dwarf);
	assert_int_equal(bytes, 0);
	assert_int_equal(bt_call_graph_parse("dwarf-copy", &dwarf, &bytes, &bpf), 0);
	assert_false(bpf);
	assert_true(dwarf);
	assert_int_equal(bytes, 0);
	assert_int_equal(bt_call_graph_parse("dwarf-copy,32768", &dwarf, &bytes, &bpf), 0);
	assert_true(dwarf);
	assert_int_equal(bytes, 32768);
	/* dwarf alone is the default of the two; dwarf,SIZE the copy */
	assert_int_equal(bt_call_graph_parse("dwarf", &dwarf, &bytes, &bpf), 0);
	assert_true(dwarf != bpf);
	assert_int_equal(bt_call_graph_parse("dwarf,4096", &dwarf, &bytes, &bpf), 0);
	assert_true(dwarf);
	assert_false(bpf);
}

static void callgraph__bad_modes__einval(void **state)
{
	static const char *const bad[] = {
		"", "lbr", "DWARF", "dwarf,", "dwarf,0", "dwarf,248", "dwarf,65544", "dwarf,1000001",
		"dwarf,8193", "dwarf,-8192", "dwarf,+8192", "dwarf, 8192", "dwarf,8192k", "dwarfs", "fp,8192",
		"dwarf,99999999999999999999999", "dwarf-bpf,8192", "dwarf-copy,", "dwarf-copy8192",
		"dwarf-copy,100", "dwarf-", "dwarf-bpfx",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		bool dwarf = true, bpf = true;
		unsigned bytes = 7;
		if (bt_call_graph_parse(bad[i], &dwarf, &bytes, &bpf) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
		/* nothing changed on a refusal */
		assert_true(dwarf);
		assert_true(bpf);
		assert_int_equal(bytes, 7);
	}
	bool d, p;
	unsigned b;
	assert_int_equal(bt_call_graph_parse(NULL, &d, &b, &p), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(callgraph__modes__parsed),
		cmocka_unit_test(callgraph__bad_modes__einval),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
