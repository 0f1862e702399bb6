/* test_ehtfile.c - the compiled table as a file: libc's table written and read back the same (rows,
 * rules, base, load layout); refused when it is another build-id's, truncated, or has any byte
 * changed (header, rules or rows); a file of random bytes never taken. */
#include "testutil.h"
#include "elf/ehtfile.h"
#include "elf/buildid.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fx {
	char path[64];
	struct bt_ehtable t;
	struct bt_elf_layout lay;
	struct bt_build_id id;
	uint8_t *bytes;    /* the file written */
	size_t len;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char libc[4096];
	if (!f || bt_test_run(libc, sizeof(libc), "awk '$6 ~ /libc\\.so/ {printf \"%%s\", $6; exit}' /proc/%d/maps",
			      (int)getpid()) != 0)
		return -1;
	int fd = open(libc, O_RDONLY | O_CLOEXEC);
	struct bt_elf *e = NULL;
	if (fd < 0 || bt_ehtable_compile(fd, &f->t) || bt_elf_open_fd(fd, &e) || bt_elf_layout(e, &f->lay) ||
	    bt_buildid_from_fd(fd, &f->id))
		return -1;
	bt_elf_close(e);
	close(fd);
	strcpy(f->path, "/tmp/bt-ehtfile-XXXXXX");
	int out = mkstemp(f->path);
	if (out < 0 || bt_ehtfile_write(out, f->id.data, f->id.len, &f->t, &f->lay) != 0)
		return -1;
	close(out);
	f->bytes = bt_test_read_file(f->path, &f->len);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	unlink(f->path);
	bt_ehtable_free(&f->t);
	free(f->bytes);
	free(f);
	return 0;
}

static void ehtfile__written_then_read__the_same_table(void **state)
{
	struct fx *f = *state;
	struct bt_ehtable t;
	struct bt_elf_layout lay;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(bt_ehtfile_read(fd, f->id.data, f->id.len, &t, &lay), 0);
	close(fd);
	assert_int_equal(t.n, f->t.n);
	assert_int_equal(t.nrules, f->t.nrules);
	assert_int_equal(t.base, f->t.base);
	assert_memory_equal(t.rows, f->t.rows, t.n * sizeof(*t.rows));
	assert_memory_equal(t.rules, f->t.rules, t.nrules * sizeof(*t.rules));
	assert_int_equal(lay.type, f->lay.type);
	assert_int_equal(lay.nload, f->lay.nload);
	assert_memory_equal(lay.load, f->lay.load, lay.nload * sizeof(lay.load[0]));
	/* the same answers for an address */
	uint64_t pc = f->t.base + f->t.rows[f->t.n / 2].pc;
	assert_memory_equal(bt_ehtable_lookup(&t, pc), bt_ehtable_lookup(&f->t, pc), sizeof(struct bt_unw_rule));
	bt_ehtable_free(&t);
	printf("# libc: %zu rows, %zu rules, %zu bytes on file\n", f->t.n, f->t.nrules, f->len);
}

static void ehtfile__another_build_id_or_truncated__refused(void **state)
{
	struct fx *f = *state;
	struct bt_ehtable t;
	struct bt_elf_layout lay;
	uint8_t other[BT_BUILD_ID_MAX];
	memcpy(other, f->id.data, f->id.len);
	other[0] ^= 1;
	assert_int_equal(bt_ehtfile_parse(f->bytes, f->len, other, f->id.len, &t, &lay), -EBADMSG);
	assert_int_equal(bt_ehtfile_parse(f->bytes, f->len, f->id.data, f->id.len - 1, &t, &lay), -EBADMSG);
	assert_int_equal(bt_ehtfile_parse(f->bytes, f->len - 8, f->id.data, f->id.len, &t, &lay), -EBADMSG);
	assert_int_equal(bt_ehtfile_parse(f->bytes, 100, f->id.data, f->id.len, &t, &lay), -EBADMSG);
	assert_int_equal(bt_ehtfile_parse(f->bytes, f->len, f->id.data, f->id.len, &t, &lay), 0);
	bt_ehtable_free(&t);
}

static void ehtfile__any_byte_changed__refused(void **state)
{
	struct fx *f = *state;
	struct bt_ehtable t;
	struct bt_elf_layout lay;
	uint8_t *b = malloc(f->len);
	assert_non_null(b);
	/* every byte of the header, then bytes spread over the rules and the rows */
	size_t checked = 0;
	for (size_t i = 0; i < f->len; i += i < 1024 ? 1 : 997) {
		memcpy(b, f->bytes, f->len);
		b[i] ^= 0x40;
		if (bt_ehtfile_parse(b, f->len, f->id.data, f->id.len, &t, &lay) != -EBADMSG)
			fail_msg("a change at byte %zu of %zu was taken", i, f->len);
		checked++;
	}
	printf("# %zu changed copies refused\n", checked);
	free(b);
}

static void ehtfile__random_bytes__refused(void **state)
{
	struct fx *f = *state;
	struct bt_ehtable t;
	struct bt_elf_layout lay;
	uint8_t *b = malloc(f->len);
	assert_non_null(b);
	unsigned seed = 7;
	for (int round = 0; round < 50; round++) {
		for (size_t i = 0; i < f->len; i++)
			b[i] = (uint8_t)rand_r(&seed);
		/* with the real header, so that the body is what is checked */
		if (round % 2)
			memcpy(b, f->bytes, 720);
		assert_int_equal(bt_ehtfile_parse(b, f->len, f->id.data, f->id.len, &t, &lay), -EBADMSG);
	}
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ehtfile__written_then_read__the_same_table),
		cmocka_unit_test(ehtfile__another_build_id_or_truncated__refused),
		cmocka_unit_test(ehtfile__any_byte_changed__refused),
		cmocka_unit_test(ehtfile__random_bytes__refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
