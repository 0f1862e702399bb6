/* test_records.c - the ring buffer record check: every type at its exact size, one byte short,
 * longer (a newer producer), and records whose header or contents cannot be trusted, with the
 * struct sizes of bt_proto.h as the oracle. */
#include "testutil.h"
#include "capture/records.h"

#include <stdlib.h>
#include <string.h>

/* Every known type and the size of its struct (a sample's fixed part: it ends in its ips). */
static const struct {
	unsigned type;
	size_t size;
} types[] = {
	{ BT_REC_SAMPLE, offsetof(struct bt_rec_sample, ips) },
	{ BT_REC_EXEC, sizeof(struct bt_rec_exec) },
	{ BT_REC_FORK, sizeof(struct bt_rec_fork) },
	{ BT_REC_EXIT, sizeof(struct bt_rec_exit) },
	{ BT_REC_MMAP, sizeof(struct bt_rec_mapping) },
	{ BT_REC_MUNMAP, sizeof(struct bt_rec_munmap) },
	{ BT_REC_VMA, sizeof(struct bt_rec_mapping) },
	{ BT_REC_MODULE, sizeof(struct bt_rec_module) },
	{ BT_REC_USTACK, sizeof(struct bt_rec_ustack) },
	{ BT_REC_DLSTATE, sizeof(struct bt_rec_exit) },
	{ BT_REC_KSYM, sizeof(struct bt_rec_ksym) },
	{ BT_REC_PYSTACK, offsetof(struct bt_rec_pystack, frames) },
	{ BT_REC_UCONT, sizeof(struct bt_rec_ucont) },
	{ BT_REC_OFFCPU_STACK, offsetof(struct bt_rec_offcpu_stack, s) + offsetof(struct bt_rec_sample, ips) },
	{ BT_REC_OFFCPU, sizeof(struct bt_rec_offcpu) },
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

/* A zeroed record of cap bytes (strings empty, counts 0) whose header says type and size. */
static struct bt_rec_hdr *rec(unsigned type, size_t size, size_t cap)
{
	struct bt_rec_hdr *h = calloc(1, cap < sizeof(*h) ? sizeof(*h) : cap);
	assert_non_null(h);
	h->type = (uint16_t)type;
	h->version = BT_PROTO_VERSION;
	h->size = (uint32_t)size;
	return h;
}

static void records__every_type_at_its_exact_size__valid(void **state)
{
	assert_int_equal(NTYPES, BT_REC_TYPE_MAX - 1);
	for (size_t i = 0; i < NTYPES; i++) {
		assert_int_equal(bt_rec_min_size(types[i].type), types[i].size);
		struct bt_rec_hdr *h = rec(types[i].type, types[i].size, types[i].size);
		if (!bt_rec_valid(h, types[i].size))
			fail_msg("type %u at %zu bytes rejected", types[i].type, types[i].size);
		free(h);
	}
}

static void records__one_byte_short__invalid(void **state)
{
	for (size_t i = 0; i < NTYPES; i++) {
		size_t n = types[i].size - 1;
		struct bt_rec_hdr *h = rec(types[i].type, n, types[i].size);
		/* whether the bytes read stop there too or go on */
		if (bt_rec_valid(h, n) || bt_rec_valid(h, types[i].size))
			fail_msg("type %u at %zu bytes accepted", types[i].type, n);
		free(h);
	}
}

/* A newer producer may append fields: the record is still read, its known part as it is. */
static void records__longer_than_its_type__valid(void **state)
{
	for (size_t i = 0; i < NTYPES; i++) {
		size_t n = types[i].size + 64;
		struct bt_rec_hdr *h = rec(types[i].type, n, n);
		assert_true(bt_rec_valid(h, n));
		free(h);
	}
}

/* The header claims more than the ring buffer handed over. */
static void records__size_beyond_the_bytes_read__invalid(void **state)
{
	size_t n = sizeof(struct bt_rec_exit);
	struct bt_rec_hdr *h = rec(BT_REC_EXIT, n, n + 8);
	assert_true(bt_rec_valid(h, n + 8));
	assert_false(bt_rec_valid(h, n - 1));
	h->size = (uint32_t)(n + 8);
	assert_false(bt_rec_valid(h, n));
	free(h);
}

static void records__shorter_than_a_header__invalid(void **state)
{
	struct bt_rec_hdr *h = rec(BT_REC_EXIT, sizeof(struct bt_rec_exit), sizeof(struct bt_rec_exit));
	for (size_t len = 0; len < sizeof(*h); len++)
		assert_false(bt_rec_valid(h, len));
	assert_false(bt_rec_valid(NULL, sizeof(struct bt_rec_exit)));
	free(h);
}

static void records__wrong_version__invalid(void **state)
{
	for (size_t i = 0; i < NTYPES; i++) {
		struct bt_rec_hdr *h = rec(types[i].type, types[i].size, types[i].size);
		h->version = BT_PROTO_VERSION + 1;
		assert_false(bt_rec_valid(h, types[i].size));
		h->version = 0;
		assert_false(bt_rec_valid(h, types[i].size));
		free(h);
	}
}

static void records__unknown_type__invalid(void **state)
{
	const unsigned unknown[] = { 0, BT_REC_TYPE_MAX, BT_REC_TYPE_MAX + 1, 0xffff };
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		assert_int_equal(bt_rec_min_size(unknown[i]), 0);
		struct bt_rec_hdr *h = rec(unknown[i], 4096, 4096);
		assert_false(bt_rec_valid(h, 4096));
		free(h);
	}
}

/* len says how many stack bytes were copied; they must lie within the record. */
/* A stack copy the walker left to userspace: its bytes within the record, and never more than the
 * walker copies. */
static void records__ucont_len_beyond_its_size__invalid(void **state)
{
	size_t n = sizeof(struct bt_rec_ucont) + 256;
	struct bt_rec_hdr *h = rec(BT_REC_UCONT, n, n);
	struct bt_rec_ucont *u = (struct bt_rec_ucont *)h;
	u->len = 256;
	assert_true(bt_rec_valid(h, n));
	u->len = 257;
	assert_false(bt_rec_valid(h, n));
	free(h);
	n = sizeof(struct bt_rec_ucont) + BT_UCONT_BYTES + 8;
	h = rec(BT_REC_UCONT, n, n);
	u = (struct bt_rec_ucont *)h;
	u->len = BT_UCONT_BYTES;
	assert_true(bt_rec_valid(h, n));
	u->len = BT_UCONT_BYTES + 8;
	assert_false(bt_rec_valid(h, n));
	free(h);
}

static void records__ustack_len_beyond_its_size__invalid(void **state)
{
	size_t n = sizeof(struct bt_rec_ustack) + 256;
	struct bt_rec_hdr *h = rec(BT_REC_USTACK, n, n);
	struct bt_rec_ustack *u = (struct bt_rec_ustack *)h;
	u->len = 256;
	assert_true(bt_rec_valid(h, n));
	u->len = 257;
	assert_false(bt_rec_valid(h, n));
	u->len = UINT32_MAX;
	assert_false(bt_rec_valid(h, n));
	free(h);

	/* never more than the largest copy the sampler can be asked for, whatever the size */
	n = sizeof(struct bt_rec_ustack) + BT_USTACK_MAX + 8;
	h = rec(BT_REC_USTACK, n, n);
	u = (struct bt_rec_ustack *)h;
	u->len = BT_USTACK_MAX;
	assert_true(bt_rec_valid(h, n));
	u->len = BT_USTACK_MAX + 8;
	assert_false(bt_rec_valid(h, n));
	free(h);
}

/* kern_n + user_n ips must follow the fixed part, and never more than two whole stacks. */
static void records__sample_ips_beyond_its_size__invalid(void **state)
{
	size_t fixed = offsetof(struct bt_rec_sample, ips), full = sizeof(struct bt_rec_sample);
	struct bt_rec_hdr *h = rec(BT_REC_SAMPLE, fixed + 3 * 8, full);
	struct bt_rec_sample *s = (struct bt_rec_sample *)h;
	s->kern_n = 1;
	s->user_n = 2;
	assert_true(bt_rec_valid(h, full));
	s->user_n = 3;
	assert_false(bt_rec_valid(h, full));
	h->size = (uint32_t)full;
	s->kern_n = BT_MAX_STACK;
	s->user_n = BT_MAX_STACK;
	assert_true(bt_rec_valid(h, full));
	s->user_n = BT_MAX_STACK + 1;
	assert_false(bt_rec_valid(h, full));
	free(h);
}

/* Python frames counted beyond the record, or a walk of no known kind. */
static void records__pystack_frames_beyond_its_size__invalid(void **state)
{
	size_t n = offsetof(struct bt_rec_pystack, frames) + 2 * sizeof(struct bt_py_frame);
	struct bt_rec_hdr *h = rec(BT_REC_PYSTACK, n, sizeof(struct bt_rec_pystack));
	struct bt_rec_pystack *p = (struct bt_rec_pystack *)h;
	p->n = 2;
	assert_true(bt_rec_valid(h, n));
	p->n = 3;
	assert_false(bt_rec_valid(h, n));
	p->n = BT_PY_MAX_FRAMES + 1;
	h->size = sizeof(struct bt_rec_pystack);
	assert_false(bt_rec_valid(h, sizeof(struct bt_rec_pystack)));
	p->n = 0;
	p->walk = BT_PY_WALK_MAX;
	assert_false(bt_rec_valid(h, sizeof(struct bt_rec_pystack)));
	p->walk = BT_PY_WALK_FAULT;
	assert_true(bt_rec_valid(h, sizeof(struct bt_rec_pystack)));
	free(h);
}

/* An off-CPU stack's frames are a sample's: their count within the record, its comm terminated; an
 * off-CPU sum's state one of the states. */
static void records__offcpu_counts_beyond_their_record__invalid(void **state)
{
	size_t n = offsetof(struct bt_rec_offcpu_stack, s) + offsetof(struct bt_rec_sample, ips) + 3 * 8;
	struct bt_rec_hdr *h = rec(BT_REC_OFFCPU_STACK, n, sizeof(struct bt_rec_offcpu_stack));
	struct bt_rec_offcpu_stack *d = (struct bt_rec_offcpu_stack *)h;
	d->s.kern_n = 1;
	d->s.user_n = 2;
	assert_true(bt_rec_valid(h, n));
	d->s.user_n = 3;
	assert_false(bt_rec_valid(h, n));
	d->s.user_n = 2;
	memset(d->s.comm, 'a', BT_COMM_LEN);
	assert_false(bt_rec_valid(h, n));
	free(h);

	n = sizeof(struct bt_rec_offcpu);
	h = rec(BT_REC_OFFCPU, n, n);
	struct bt_rec_offcpu *v = (struct bt_rec_offcpu *)h;
	v->state = BT_OFFCPU_RUNQ;
	assert_true(bt_rec_valid(h, n));
	v->state = BT_OFFCPU_NSTATES;
	assert_false(bt_rec_valid(h, n));
	free(h);
}

/* Strings a consumer prints or copies as C strings, and lengths it indexes with. */
static void records__unterminated_strings_and_long_lengths__invalid(void **state)
{
	size_t n = sizeof(struct bt_rec_sample);
	struct bt_rec_hdr *h = rec(BT_REC_SAMPLE, n, n);
	memset(((struct bt_rec_sample *)h)->comm, 'a', BT_COMM_LEN);
	assert_false(bt_rec_valid(h, n));
	free(h);

	n = sizeof(struct bt_rec_exec);
	h = rec(BT_REC_EXEC, n, n);
	memset(((struct bt_rec_exec *)h)->filename, 'a', BT_PATH_MAX);
	assert_false(bt_rec_valid(h, n));
	free(h);

	n = sizeof(struct bt_rec_fork);
	h = rec(BT_REC_FORK, n, n);
	memset(((struct bt_rec_fork *)h)->comm, 'a', BT_COMM_LEN);
	assert_false(bt_rec_valid(h, n));
	free(h);

	n = sizeof(struct bt_rec_mapping);
	h = rec(BT_REC_MMAP, n, n);
	struct bt_rec_mapping *m = (struct bt_rec_mapping *)h;
	strcpy(m->path, "/usr/bin/true");
	m->path_len = sizeof("/usr/bin/true");
	m->build_id_len = BT_BUILD_ID_MAX;
	assert_true(bt_rec_valid(h, n));
	m->path_len--;   /* its last byte is not the NUL */
	assert_false(bt_rec_valid(h, n));
	m->path_len = BT_PATH_MAX + 1;
	assert_false(bt_rec_valid(h, n));
	m->path_len = 0;   /* unknown */
	assert_true(bt_rec_valid(h, n));
	m->build_id_len = BT_BUILD_ID_MAX + 1;
	assert_false(bt_rec_valid(h, n));
	m->build_id_len = 0;
	memset(m->path, 'a', BT_PATH_MAX);
	assert_false(bt_rec_valid(h, n));
	free(h);

	n = sizeof(struct bt_rec_module);
	h = rec(BT_REC_MODULE, n, n);
	struct bt_rec_module *mod = (struct bt_rec_module *)h;
	mod->build_id_len = BT_BUILD_ID_MAX + 1;
	assert_false(bt_rec_valid(h, n));
	mod->build_id_len = BT_BUILD_ID_MAX;
	memset(mod->name, 'a', BT_MODNAME_LEN);
	assert_false(bt_rec_valid(h, n));
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records__every_type_at_its_exact_size__valid),
		cmocka_unit_test(records__one_byte_short__invalid),
		cmocka_unit_test(records__longer_than_its_type__valid),
		cmocka_unit_test(records__size_beyond_the_bytes_read__invalid),
		cmocka_unit_test(records__shorter_than_a_header__invalid),
		cmocka_unit_test(records__wrong_version__invalid),
		cmocka_unit_test(records__unknown_type__invalid),
		cmocka_unit_test(records__ustack_len_beyond_its_size__invalid),
		cmocka_unit_test(records__ucont_len_beyond_its_size__invalid),
		cmocka_unit_test(records__sample_ips_beyond_its_size__invalid),
		cmocka_unit_test(records__pystack_frames_beyond_its_size__invalid),
		cmocka_unit_test(records__offcpu_counts_beyond_their_record__invalid),
		cmocka_unit_test(records__unterminated_strings_and_long_lengths__invalid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
