/* test_liveview.c - the live view's keys and its plain summary, without a terminal: what each key
 * changes, typing a filter, and the summary written where stderr is a file (no control sequences).
 * The screen itself is tested in a real terminal by tests/priv/test_record_liveview.c. */
#include "testutil.h"
#include "cmd/live/liveview.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void type(struct bt_liveview *v, const char *keys)
{
	for (const char *k = keys; *k; k++)
		bt_liveview_key(v, (unsigned char)*k);
}

static void liveview__keys__change_the_view(void **state)
{
	struct bt_liveview v;
	int null = open("/dev/null", O_WRONLY);
	bt_liveview_start(&v, null, -1, false);
	assert_false(v.full);  /* not a terminal */
	assert_int_equal(v.in, -1);
	assert_int_equal(v.opts.sort, BT_TOP_BY_SELF);
	type(&v, "s");
	assert_int_equal(v.opts.sort, BT_TOP_BY_TOTAL);
	type(&v, "sss");
	assert_int_equal(v.opts.sort, BT_TOP_BY_SELF);
	type(&v, "k");
	assert_int_equal(v.opts.side, BT_TOP_KERNEL);
	type(&v, "u");
	assert_int_equal(v.opts.side, BT_TOP_USER);
	type(&v, "u");
	assert_int_equal(v.opts.side, BT_TOP_BOTH);
	type(&v, "t");
	assert_true(v.opts.per_process);
	type(&v, "t");
	assert_false(v.opts.per_process);
	type(&v, "p");
	assert_true(v.paused);
	type(&v, "p");
	assert_false(v.paused);
	/* a key with no meaning changes nothing */
	v.dirty = false;
	type(&v, "z");
	assert_false(v.dirty);
	assert_false(v.quit);
	type(&v, "q");
	assert_true(v.quit);
	bt_liveview_stop(&v);
	close(null);
}

static void liveview__filter__typed_applied_cancelled(void **state)
{
	struct bt_liveview v;
	int null = open("/dev/null", O_WRONLY);
	bt_liveview_start(&v, null, -1, false);
	type(&v, "/work");
	assert_true(v.editing);
	assert_string_equal(v.filter, "");
	/* while typing, keys are text: q does not quit */
	type(&v, "q\x7f");
	assert_false(v.quit);
	assert_string_equal(v.edit, "work");
	type(&v, "\r");
	assert_false(v.editing);
	assert_string_equal(v.filter, "work");
	assert_string_equal(v.opts.filter, "work");
	/* Esc while typing keeps the filter; Esc after clears it */
	type(&v, "/xyz\x1b");
	assert_false(v.editing);
	assert_string_equal(v.filter, "work");
	type(&v, "\x1b");
	assert_string_equal(v.filter, "");
	bt_liveview_stop(&v);
	close(null);
}

static void liveview__plain__summary_without_control_sequences(void **state)
{
	char path[] = "/tmp/bt-liveview-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	struct bt_live *l = calloc(1, sizeof(*l));
	bt_profile_init(&l->session.prof);
	uint32_t comm = (uint32_t)bt_strtab_intern(&l->session.prof.names, "prog", 4);
	int64_t loc = bt_profile_loc(&l->session.prof, BT_LOC_UNMAPPED, 0, 0x1234, false);
	uint32_t id = (uint32_t)loc;
	assert_int_equal(bt_profile_add(&l->session.prof, comm, 1, &id, 1, 5), 0);
	l->session.prof.locs[id].name_id = comm;  /* named "prog" */
	l->session.stats.samples = 5;
	struct bt_liveview v;
	bt_liveview_start(&v, fd, -1, false);
	bt_liveview_tick(&v, l, 1.0);
	bt_liveview_tick(&v, l, 2.0);  /* within BT_LIVEVIEW_PLAIN_EVERY: nothing more */
	char out[4096];
	ssize_t n = pread(fd, out, sizeof(out) - 1, 0);
	assert_true(n > 0);
	out[n] = '\0';
	assert_non_null(strstr(out, "buildtrace  0:01  5 samples  5/s"));
	assert_non_null(strstr(out, "100.0%  100.0% prog"));
	assert_null(strchr(out, '\033'));
	assert_null(strstr(strstr(out, "buildtrace") + 1, "buildtrace"));  /* one summary */
	bt_liveview_tick(&v, l, 1.0 + BT_LIVEVIEW_PLAIN_EVERY);
	n = pread(fd, out, sizeof(out) - 1, 0);
	out[n] = '\0';
	assert_non_null(strstr(strstr(out, "buildtrace") + 1, "buildtrace"));  /* a second one */
	bt_liveview_stop(&v);
	bt_profile_free(&l->session.prof);
	free(l);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(liveview__keys__change_the_view),
		cmocka_unit_test(liveview__filter__typed_applied_cancelled),
		cmocka_unit_test(liveview__plain__summary_without_control_sequences),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
