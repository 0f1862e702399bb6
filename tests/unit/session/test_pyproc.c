/* test_pyproc.c - interpreters and their code objects: what the sampler is told when a process is
 * adopted, forks, execs; code objects read with process_vm_readv from this very process, where the
 * test lays them out as CPython 3.11 does (names, file, location table), and refused when their tag
 * differs from the sampler's (another object at that address) or their memory is not there. */
#include "testutil.h"
#include "session/pyproc.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const struct bt_pyruntime rt311 = {
	.major = 3, .minor = 11, .micro = 2, .runtime_vaddr = 0xa5b740, .eval_offset = 0x12b0f0,
	.eval_size = 0x8000, .text_vaddr = 0x41f000, .text_offset = 0x1f000,
};

static void pyproc__adopt_fork_exec__sampler_told(void **state)
{
	struct bt_pyprocs py;
	bt_pyprocs_init(&py, "");
	struct bt_mapping m = { .start = 0x41f000, .end = 0x800000, .pgoff = 0x1f000, .file_id = 7 };
	int64_t id = bt_pyprocs_adopt(&py, 100, &rt311, &m);
	assert_true(id >= 0);
	assert_int_equal(bt_pyprocs_find(&py, 100), id);
	assert_int_equal(py.procs[id].eval_lo, 0x12b0f0);
	assert_int_equal(py.procs[id].eval_hi, 0x12b0f0 + 0x8000);
	const struct bt_py_offsets *o = bt_pyoffsets_get(3, 11);
	assert_int_equal(bt_pyprocs_fork(&py, 100, 101), 0);
	assert_int_equal(bt_pyprocs_fork(&py, 55, 56), 0);   /* not an interpreter: nothing */
	bt_pyprocs_gone(&py, 100);
	assert_int_equal(bt_pyprocs_find(&py, 100), -ENOENT);
	assert_true(bt_pyprocs_find(&py, 101) >= 0);
	struct bt_py_update u[8];
	assert_int_equal(bt_pyprocs_take(&py, u, 8), 3);
	assert_int_equal(u[0].pid, 100);
	assert_true(u[0].add);
	/* a non-PIE program: _PyRuntime at its link address */
	assert_int_equal(u[0].bpf.interp_head, 0xa5b740 + o->runtime_interp_head);
	assert_int_equal(u[0].bpf.ts_tid, o->ts_tid);
	assert_int_equal(u[0].bpf.frame_entry, o->frame_entry);
	assert_int_equal(u[0].bpf.code_tag, o->code_firstlineno);
	assert_int_equal(u[0].bpf.code_adaptive, o->code_adaptive);
	/* 3.11: the native thread id, the frame through the _PyCFrame, is_entry, a pointer */
	assert_int_equal(u[0].bpf.flags, BT_PY_F_CFRAME | BT_PY_F_INSTR_PTR);
	assert_int_equal(u[0].bpf.entry, BT_PY_ENTRY_FLAG);
	assert_int_equal(u[0].bpf.frame_bytes, o->frame_entry + 1);
	assert_int_equal(u[1].pid, 101);
	assert_true(u[1].add);
	assert_int_equal(u[1].bpf.interp_head, u[0].bpf.interp_head);
	assert_int_equal(u[2].pid, 100);
	assert_false(u[2].add);
	assert_int_equal(bt_pyprocs_take(&py, u, 8), 0);
	/* a version without a table */
	struct bt_pyruntime rt = rt311;
	rt.minor = 7;
	assert_int_equal(bt_pyprocs_adopt(&py, 102, &rt, &m), -ENOTSUP);
	assert_int_equal(py.stats.procs, 2);
	bt_pyprocs_free(&py);
}

/* The layouts of the other versions, as the sampler is told them. */
static void pyproc__each_version__its_own_walk(void **state)
{
	struct bt_pyprocs py;
	bt_pyprocs_init(&py, "");
	struct bt_mapping m = { .start = 0x41f000, .end = 0x800000, .pgoff = 0x1f000, .file_id = 7 };
	struct bt_pyruntime rt = rt311;
	struct bt_py_update u;
	/* 3.8: the thread pointer names the thread, frame objects each run by a C call, f_lasti */
	rt.minor = 8;
	assert_true(bt_pyprocs_adopt(&py, 200, &rt, &m) >= 0);
	assert_int_equal(bt_pyprocs_take(&py, &u, 1), 1);
	assert_int_equal(u.bpf.flags, BT_PY_F_PTHREAD_TID);
	assert_int_equal(u.bpf.entry, BT_PY_ENTRY_EVERY);
	assert_int_equal(u.bpf.ts_frame, 24);
	assert_int_equal(u.bpf.frame_bytes, 104 + 8);   /* through f_lasti */
	assert_int_equal(u.bpf.interp_head, 0xa5b740 + 32);
	/* 3.12: the _PyCFrame still, entry frames of their own */
	rt.minor = 12;
	assert_true(bt_pyprocs_adopt(&py, 201, &rt, &m) >= 0);
	assert_int_equal(bt_pyprocs_take(&py, &u, 1), 1);
	assert_int_equal(u.bpf.flags, BT_PY_F_CFRAME | BT_PY_F_INSTR_PTR);
	assert_int_equal(u.bpf.entry, BT_PY_ENTRY_OWNER);
	assert_int_equal(u.bpf.entry_owner, BT_PY_OWNED_BY_CSTACK);
	assert_int_equal(u.bpf.frame_entry, 70);
	/* 3.13: the thread state's current frame */
	rt.minor = 13;
	assert_true(bt_pyprocs_adopt(&py, 202, &rt, &m) >= 0);
	assert_int_equal(bt_pyprocs_take(&py, &u, 1), 1);
	assert_int_equal(u.bpf.flags, BT_PY_F_INSTR_PTR);
	assert_int_equal(u.bpf.ts_frame, 72);
	assert_int_equal(u.bpf.interp_head, 0xa5b740 + 632);
	/* the instruction: f_lasti in bytes (3.8), in code units (3.10), an offset already (3.11+) */
	rt.minor = 10;
	int64_t p310 = bt_pyprocs_adopt(&py, 203, &rt, &m);
	struct bt_py_frame f = { .instr = 7 };
	assert_int_equal(bt_pyprocs_instr(&py, (uint32_t)p310, &f), 14);
	assert_int_equal(bt_pyprocs_instr(&py, (uint32_t)bt_pyprocs_find(&py, 200), &f), 7);
	assert_int_equal(bt_pyprocs_instr(&py, (uint32_t)bt_pyprocs_find(&py, 202), &f), 7);
	f.instr = -1;
	assert_int_equal(bt_pyprocs_instr(&py, (uint32_t)p310, &f), -2);
	bt_pyprocs_free(&py);
}

/* Memory laid out as 3.11's objects are. */
struct fake {
	uint8_t code[256];
	uint8_t name[128], qual[128], file[128];
	uint8_t lines[64];
};

static void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void put_str(uint8_t *obj, const struct bt_py_offsets *o, const char *s)
{
	memset(obj, 0, 128);
	put_u64(obj + o->str_length, strlen(s));
	uint32_t st = 1u << o->state_kind | 1u << o->state_compact | 1u << o->state_ascii;
	memcpy(obj + o->str_state, &st, 4);
	memcpy(obj + o->ascii_data, s, strlen(s) + 1);
}

static uint64_t make_code(struct fake *f, const struct bt_py_offsets *o)
{
	memset(f->code, 0, sizeof(f->code));
	int32_t first = 40, nlocals = 3;
	memcpy(f->code + o->code_firstlineno, &first, 4);
	memcpy(f->code + o->code_firstlineno + 4, &nlocals, 4);
	put_str(f->name, o, "is_prime");
	put_str(f->qual, o, "Sieve.is_prime");
	put_str(f->file, o, "/srv/primes.py");
	put_u64(f->code + o->code_name, (uint64_t)(uintptr_t)f->name);
	put_u64(f->code + o->code_qualname, (uint64_t)(uintptr_t)f->qual);
	put_u64(f->code + o->code_filename, (uint64_t)(uintptr_t)f->file);
	/* a bytes object: 2 code units on the first line, 3 on the line 2 further (kind 12), with
	 * their two column bytes */
	memset(f->lines, 0, sizeof(f->lines));
	const uint8_t tab[] = { 0x80 | 13 << 3 | 1, 0, 0x80 | 12 << 3 | 2, 4, 9 };
	put_u64(f->lines + o->var_size, sizeof(tab));
	memcpy(f->lines + o->bytes_data, tab, sizeof(tab));
	put_u64(f->code + o->code_linetable, (uint64_t)(uintptr_t)f->lines);
	uint64_t tag;
	memcpy(&tag, f->code + o->code_firstlineno, 8);
	return tag;
}

static void pyproc__code_in_memory__names_file_and_lines(void **state)
{
	struct bt_pyprocs py;
	bt_pyprocs_init(&py, "");
	struct bt_mapping m = { .start = 0x41f000, .end = 0x800000, .pgoff = 0x1f000 };
	int64_t proc = bt_pyprocs_adopt(&py, getpid(), &rt311, &m);
	assert_true(proc >= 0);
	const struct bt_py_offsets *o = bt_pyoffsets_get(3, 11);
	static struct fake f;
	uint64_t tag = make_code(&f, o);
	uint64_t addr = (uint64_t)(uintptr_t)f.code;
	int64_t id = bt_pyprocs_code(&py, (uint32_t)proc, addr, tag);
	assert_true(id >= 0);
	const struct bt_pycode *c = &py.codes[id];
	assert_true(c->ok);
	assert_int_equal(c->firstlineno, 40);
	assert_string_equal(bt_pyprocs_str(&py, c->name_id), "is_prime");
	assert_string_equal(bt_pyprocs_str(&py, c->qualname_id), "Sieve.is_prime");
	assert_string_equal(bt_pyprocs_str(&py, c->file_id), "/srv/primes.py");
	assert_int_equal(bt_pyprocs_line(&py, (uint32_t)id, -2), 40);
	assert_int_equal(bt_pyprocs_line(&py, (uint32_t)id, 2), 40);
	assert_int_equal(bt_pyprocs_line(&py, (uint32_t)id, 4), 42);
	assert_int_equal(bt_pyprocs_line(&py, (uint32_t)id, 8), 42);
	assert_int_equal(bt_pyprocs_line(&py, (uint32_t)id, 10), 0);
	/* read once: the same address and tag are the same object */
	put_str(f.qual, o, "changed");
	assert_int_equal(bt_pyprocs_code(&py, (uint32_t)proc, addr, tag), id);
	assert_int_equal(py.stats.code_reads, 1);
	/* another tag at that address: read again, and refused when the memory says otherwise */
	int64_t other = bt_pyprocs_code(&py, (uint32_t)proc, addr, tag + 1);
	assert_true(other >= 0 && other != id);
	assert_false(py.codes[other].ok);
	/* another object made at that address (another first line, so another tag): read anew */
	make_code(&f, o);
	int32_t first = 50;
	memcpy(f.code + o->code_firstlineno, &first, 4);
	memcpy(&tag, f.code + o->code_firstlineno, 8);
	put_str(f.qual, o, "Sieve.check");
	int64_t again = bt_pyprocs_code(&py, (uint32_t)proc, addr, tag);
	assert_true(again >= 0 && py.codes[again].ok);
	assert_string_equal(bt_pyprocs_str(&py, py.codes[again].qualname_id), "Sieve.check");
	/* memory that is not there */
	void *gone = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(gone != MAP_FAILED);
	int64_t bad = bt_pyprocs_code(&py, (uint32_t)proc, (uint64_t)(uintptr_t)gone, 0);
	assert_true(bad >= 0);
	assert_false(py.codes[bad].ok);
	assert_int_equal(bt_pyprocs_line(&py, (uint32_t)bad, 0), 0);
	munmap(gone, 4096);
	assert_int_equal(py.stats.code_failed, 2);
	bt_pyprocs_free(&py);
}

/* A 3.8 code object: no qualified name (its name stands in), lines from co_lnotab. */
static void pyproc__python38_code__name_and_lnotab(void **state)
{
	struct bt_pyprocs py;
	bt_pyprocs_init(&py, "");
	struct bt_mapping m = { .start = 0x41f000, .end = 0x800000, .pgoff = 0x1f000 };
	struct bt_pyruntime rt = rt311;
	rt.minor = 8;
	int64_t proc = bt_pyprocs_adopt(&py, getpid(), &rt, &m);
	assert_true(proc >= 0);
	const struct bt_py_offsets *o = bt_pyoffsets_get(3, 8);
	static struct fake f;
	memset(f.code, 0, sizeof(f.code));
	int32_t first = 40;
	memcpy(f.code + o->code_firstlineno, &first, 4);
	put_str(f.name, o, "step");
	put_str(f.file, o, "/srv/lib.py");
	put_u64(f.code + o->code_name, (uint64_t)(uintptr_t)f.name);
	put_u64(f.code + o->code_filename, (uint64_t)(uintptr_t)f.file);
	/* 6 bytes on line 41, then line 43 */
	const uint8_t tab[] = { 0, 1, 6, 2 };
	memset(f.lines, 0, sizeof(f.lines));
	put_u64(f.lines + o->var_size, sizeof(tab));
	memcpy(f.lines + o->bytes_data, tab, sizeof(tab));
	put_u64(f.code + o->code_linetable, (uint64_t)(uintptr_t)f.lines);
	uint64_t tag;
	memcpy(&tag, f.code + o->code_firstlineno, 8);
	int64_t id = bt_pyprocs_code(&py, (uint32_t)proc, (uint64_t)(uintptr_t)f.code, tag);
	assert_true(id >= 0 && py.codes[id].ok);
	assert_string_equal(bt_pyprocs_str(&py, py.codes[id].qualname_id), "step");
	assert_string_equal(bt_pyprocs_str(&py, py.codes[id].file_id), "/srv/lib.py");
	assert_int_equal(bt_pyprocs_line(&py, (uint32_t)id, 4), 41);
	assert_int_equal(bt_pyprocs_line(&py, (uint32_t)id, 6), 43);
	assert_int_equal(bt_pyprocs_line(&py, (uint32_t)id, -1), 40);
	bt_pyprocs_free(&py);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pyproc__adopt_fork_exec__sampler_told),
		cmocka_unit_test(pyproc__each_version__its_own_walk),
		cmocka_unit_test(pyproc__code_in_memory__names_file_and_lines),
		cmocka_unit_test(pyproc__python38_code__name_and_lnotab),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
