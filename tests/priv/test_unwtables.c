/* test_unwtables.c - the BPF walker's tables kept from records, on real BPF maps: this process's
 * executable mappings reported as the kernel reports them, then a sample the walker left to
 * userspace (its registers and stack copied here, as the sampler copies them): it waits for the
 * tables it needs, made by the worker, then is finished with the frames glibc's backtrace() finds
 * on the same stack; this process's entry in unw_procs then leads from a libc pc to the row and
 * rule the compiler gives for it; a second process mapping the same libc shares the rows; the
 * tables outlive the processes, until the room is needed for another, least recently used first. */
#include "testutil.h"
#include "capture/procmaps.h"
#include "capture/unwtables.h"
#include "elf/buildid.h"
#include "elf/ehtable.h"
#include "elf/elffile.h"

#include <bpf/bpf.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROWS 400000

struct maps_ctx {
	struct bt_unwtables *u;
	uint32_t pid;
	const char *only;        /* report only paths containing this; NULL: every one */
	uint64_t libc_start, libc_end, libc_pgoff;
	uint64_t stack_end;
	char libc[4096];
};

static void record(struct bt_unwtables *u, const struct bt_rec_hdr *h)
{
	const struct bt_rec_hdr *out;
	uint64_t ticket;
	assert_int_equal(bt_unwtables_record(u, h, &out, &ticket), 0);
}

/* Each executable file mapping as a BT_REC_VMA with its build-id. */
static int report(void *ctx, const struct bt_procmap *m)
{
	struct maps_ctx *mc = ctx;
	if (!strcmp(m->path, "[stack]"))
		mc->stack_end = m->end;
	if (m->perms[2] != 'x' || m->path[0] != '/' || (mc->only && !strstr(m->path, mc->only)))
		return 0;
	struct bt_rec_mapping r = { .hdr = { .type = BT_REC_VMA, .size = sizeof(r) }, .pid = mc->pid,
				    .start = m->start, .end = m->end, .pgoff = m->offset };
	struct bt_build_id id;
	if (bt_buildid_from_path(m->path, &id) == 0 && id.len <= BT_BUILD_ID_MAX) {
		r.build_id_status = BT_BID_OK;
		r.build_id_len = id.len;
		memcpy(r.build_id, id.data, id.len);
	} else {
		r.build_id_status = BT_BID_NONE;
	}
	snprintf(r.path, sizeof(r.path), "%.255s", m->path);
	r.path_len = (uint16_t)(strlen(r.path) + 1);
	record(mc->u, &r.hdr);
	if (strstr(m->path, "/libc.so")) {
		mc->libc_start = m->start;
		mc->libc_end = m->end;
		mc->libc_pgoff = m->offset;
		snprintf(mc->libc, sizeof(mc->libc), "%s", m->path);
	}
	return 0;
}

/* A sample of this thread as the walker leaves it to userspace: its first frame, and in c this
 * frame's registers and the stack above them (up to the stack's end, at most BT_UCONT_BYTES);
 * glibc's own unwinder's view of the same stack into bt. */
static __attribute__((noinline)) void snap(struct bt_rec_ucont *c, struct bt_rec_sample *s, uint64_t stack_end,
					   void **bt, int *nbt)
{
	uint64_t pc, sp, bp, bx;
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2\n\tmov %%rbx, %3"
			 : "=r"(pc), "=r"(sp), "=r"(bp), "=r"(bx));
	size_t len = stack_end - sp < BT_UCONT_BYTES ? stack_end - sp : BT_UCONT_BYTES;
	memcpy(c->data, (const void *)sp, len);
	*nbt = backtrace(bt, 64);
	c->hdr = (struct bt_rec_hdr){ .type = BT_REC_UCONT, .version = BT_PROTO_VERSION,
				      .size = (uint32_t)(sizeof(*c) + len), .time_ns = 1000 };
	c->pid = s->pid = (uint32_t)getpid();
	c->tid = s->tid = (uint32_t)gettid();
	c->pc = pc;
	c->sp = sp;
	c->bp = bp;
	c->bx = bx;
	c->exact = 1;
	c->len = (uint32_t)len;
	s->hdr = (struct bt_rec_hdr){ .type = BT_REC_SAMPLE, .version = BT_PROTO_VERSION,
				      .size = offsetof(struct bt_rec_sample, ips) + 8, .time_ns = 1000 };
	s->kern_n = 0;
	s->user_n = 1;
	s->user_err = BT_UWALK_CONT | BT_UWALK_NO_TABLE;
	s->ips[0] = pc;
}

/* The row and rule the BPF walker finds for pc in process pid: its map entry, then a search of
 * unw_rows, then unw_rules. */
static bool walker_rule(int procs_fd, int rows_fd, int rules_fd, uint32_t pid, uint64_t pc,
			struct bt_unw_rule *out, struct bt_unw_map *map)
{
	static struct bt_unw_proc p;
	if (bpf_map_lookup_elem(procs_fd, &pid, &p))
		return false;
	const struct bt_unw_map *m = NULL;
	for (uint32_t i = 0; i < p.n; i++)
		if (pc >= p.maps[i].start && pc < p.maps[i].end)
			m = &p.maps[i];
	if (!m || m->row_lo >= m->row_hi)
		return false;
	*map = *m;
	uint32_t key = (uint32_t)(pc - m->adj), lo = m->row_lo, hi = m->row_hi;
	struct bt_unw_row r;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		assert_int_equal(bpf_map_lookup_elem(rows_fd, &mid, &r), 0);
		if (r.pc <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == m->row_lo)
		return false;
	lo--;
	return bpf_map_lookup_elem(rows_fd, &lo, &r) == 0 && bpf_map_lookup_elem(rules_fd, &r.rule, out) == 0;
}

struct maps {
	int rows, rules, procs;
};

static struct bt_unwtables *open_tables(uint32_t rows_flags, uint32_t rows, struct maps *m)
{
	LIBBPF_OPTS(bpf_map_create_opts, ro, .map_flags = rows_flags);
	m->rows = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_unw_rows", 4, sizeof(struct bt_unw_row), rows, &ro);
	m->rules = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_unw_rules", 4, sizeof(struct bt_unw_rule),
				  BT_UNW_RULES_MAX, NULL);
	LIBBPF_OPTS(bpf_map_create_opts, ho, .map_flags = BPF_F_NO_PREALLOC);
	m->procs = bpf_map_create(BPF_MAP_TYPE_HASH, "t_unw_procs", 4, sizeof(struct bt_unw_proc), 64, &ho);
	assert_true(m->rows >= 0 && m->rules >= 0 && m->procs >= 0);
	struct bt_unwtables_opts o = { .rows_fd = m->rows, .rules_fd = m->rules, .procs_fd = m->procs,
				       .rows_max = rows, .proc_root = "" };
	struct bt_unwtables *u;
	assert_int_equal(bt_unwtables_new(&o, &u), 0);
	return u;
}

static void close_tables(struct bt_unwtables *u, struct maps *m)
{
	bt_unwtables_free(u);
	close(m->rows);
	close(m->rules);
	close(m->procs);
}

/* Gives the sample to u: kept to be finished once the tables it needs are made, then finished
 * with backtrace()'s frames; the finished record. */
static void finished_as_backtrace(struct bt_unwtables *u, struct maps_ctx *mc)
{
	struct bt_rec_ucont *c = malloc(sizeof(*c) + BT_UCONT_BYTES);
	struct bt_rec_sample *s = calloc(1, sizeof(*s));
	void *bt[64];
	int nbt = 0;
	assert_non_null(c);
	assert_non_null(s);
	snap(c, s, mc->stack_end, bt, &nbt);
	assert_true(nbt > 3);
	const struct bt_rec_hdr *out;
	uint64_t ticket = 0;
	assert_int_equal(bt_unwtables_record(u, &c->hdr, &out, &ticket), 0);
	assert_null(out);
	assert_int_equal(bt_unwtables_record(u, &s->hdr, &out, &ticket), BT_UNWTABLES_LATER);
	assert_true(ticket != 0);
	assert_null(bt_unwtables_finished(u, ticket));
	while (bt_unwtables_pending(u) && bt_unwtables_wait(u, 10000))
		bt_unwtables_collect(u);
	const struct bt_rec_sample *f = (const void *)bt_unwtables_finished(u, ticket);
	assert_non_null(f);
	print_message("finished: %u frames, flags %#x; backtrace(): %d frames\n", f->user_n, f->user_err, nbt);
	/* backtrace()'s first address is its own return into snap, then the same return addresses */
	assert_true(f->user_err & BT_UWALK_DONE);
	assert_true(f->user_err & BT_UWALK_USER);
	assert_false(f->user_err & BT_UWALK_CONT);
	assert_int_equal(f->user_n, nbt);
	for (int i = 1; i < nbt; i++)
		assert_int_equal(f->ips[i], (uint64_t)(uintptr_t)bt[i]);
	bt_unwtables_release(u, ticket);
	struct bt_unwtables_stats st;
	bt_unwtables_stats(u, &st);
	assert_int_equal(st.walks_user, 1);
	assert_int_equal(st.walks_user_done, 1);
	assert_int_equal(st.walks_held, 1);
	free(c);
	free(s);
}

/* rows_flags: BPF_F_MMAPABLE as the loader creates unw_rows (rows copied in through a mapping),
 * or 0 (rows written by batch updates). */
static void finished_shared_and_kept(uint32_t rows_flags)
{
	bt_test_require_priv();
	struct maps mp;
	struct bt_unwtables *u = open_tables(rows_flags, ROWS, &mp);
	struct maps_ctx mc = { .u = u, .pid = (uint32_t)getpid() };
	assert_int_equal(bt_procmaps_foreach("", getpid(), report, &mc), 0);
	assert_true(mc.libc_start != 0 && mc.stack_end != 0);
	assert_int_equal(bt_unwtables_flush(u), 0);
	struct bt_unw_rule rule;
	struct bt_unw_map map;
	uint64_t pc = (uint64_t)(uintptr_t)&qsort;
	assert_true(pc >= mc.libc_start && pc < mc.libc_end);
	/* known mapping, no table yet */
	assert_false(walker_rule(mp.procs, mp.rows, mp.rules, mc.pid, pc, &rule, &map));
	finished_as_backtrace(u, &mc);
	assert_int_equal(bt_unwtables_flush(u), 0);
	struct bt_unwtables_stats st;
	bt_unwtables_stats(u, &st);
	assert_true(st.tables >= 2);   /* this program's and libc's, at least */
	assert_int_equal(st.compiled, st.loads);
	uint64_t loads = st.loads;
	assert_true(walker_rule(mp.procs, mp.rows, mp.rules, mc.pid, pc, &rule, &map));
	/* the same rule as the table compiled here from the file */
	struct bt_ehtable t;
	int fd = open(mc.libc, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(bt_ehtable_compile(fd, &t), 0);
	struct bt_elf *be;
	struct bt_elf_layout lay;
	assert_int_equal(bt_elf_open_fd(fd, &be), 0);
	assert_int_equal(bt_elf_layout(be, &lay), 0);
	bt_elf_close(be);
	close(fd);
	uint64_t vaddr;
	assert_int_equal(bt_elf_offset_to_vaddr(&lay, pc - mc.libc_start + mc.libc_pgoff, &vaddr), 0);
	const struct bt_unw_rule *want = bt_ehtable_lookup(&t, vaddr);
	assert_non_null(want);
	assert_memory_equal(&rule, want, sizeof(rule));
	assert_int_equal(map.row_hi - map.row_lo, t.n);
	/* every row as compiled, the first and the last of the range included, naming its rule */
	for (uint32_t i = 0; i < t.n; i++) {
		uint32_t k = map.row_lo + i;
		struct bt_unw_row got;
		struct bt_unw_rule r;
		assert_int_equal(bpf_map_lookup_elem(mp.rows, &k, &got), 0);
		assert_int_equal(got.pc, t.rows[i].pc);
		assert_int_equal(bpf_map_lookup_elem(mp.rules, &got.rule, &r), 0);
		assert_memory_equal(&r, &t.rules[t.rows[i].rule], sizeof(r));
	}
	/* another process mapping the same libc: the same rows, nothing compiled again */
	mc.pid += 1000000;
	assert_int_equal(bt_procmaps_foreach("", getpid(), report, &mc), 0);
	assert_int_equal(bt_unwtables_flush(u), 0);
	struct bt_unw_map map2;
	assert_true(walker_rule(mp.procs, mp.rows, mp.rules, mc.pid, pc, &rule, &map2));
	assert_int_equal(map2.row_lo, map.row_lo);
	bt_unwtables_stats(u, &st);
	assert_int_equal(st.loads, loads);
	/* both gone: their entries removed, the tables kept for the next process mapping them */
	struct bt_rec_exit e = { .hdr = { .type = BT_REC_EXIT, .size = sizeof(e) }, .pid = mc.pid };
	record(u, &e.hdr);
	e.pid = (uint32_t)getpid();
	record(u, &e.hdr);
	assert_int_equal(bt_unwtables_flush(u), 0);
	bt_unwtables_stats(u, &st);
	assert_int_equal(st.tables, loads);
	assert_int_equal(st.evicted, 0);
	uint32_t pid = (uint32_t)getpid();
	static struct bt_unw_proc p;
	assert_int_not_equal(bpf_map_lookup_elem(mp.procs, &pid, &p), 0);
	mc.pid = pid + 2000000;
	assert_int_equal(bt_procmaps_foreach("", getpid(), report, &mc), 0);
	assert_int_equal(bt_unwtables_flush(u), 0);
	assert_true(walker_rule(mp.procs, mp.rows, mp.rules, mc.pid, pc, &rule, &map2));
	bt_unwtables_stats(u, &st);
	assert_int_equal(st.loads, loads);
	bt_ehtable_free(&t);
	close_tables(u, &mp);
}

static void unwtables__sample_left_to_userspace__finished_as_backtrace_shared_and_kept(void **state)
{
	finished_shared_and_kept(BPF_F_MMAPABLE);
}

static void unwtables__rows_array_not_mappable__written_by_batches(void **state)
{
	finished_shared_and_kept(0);
}

/* A process pid that maps just the files of this process whose path contains only, and a sample
 * there the walker left: finished at once when their table is loaded, else once it is made. */
static void load_for(struct bt_unwtables *u, uint32_t pid, const char *only)
{
	struct maps_ctx mc = { .u = u, .pid = pid, .only = only };
	assert_int_equal(bt_procmaps_foreach("", getpid(), report, &mc), 0);
	struct bt_rec_ucont c = { .hdr = { .type = BT_REC_UCONT, .version = BT_PROTO_VERSION, .size = sizeof(c),
					   .time_ns = 5 }, .pid = pid, .tid = pid, .exact = 1 };
	struct bt_rec_sample s = { .hdr = { .type = BT_REC_SAMPLE, .version = BT_PROTO_VERSION,
					    .size = offsetof(struct bt_rec_sample, ips) + 8, .time_ns = 5 },
				   .pid = pid, .tid = pid, .user_n = 1, .user_err = BT_UWALK_CONT };
	/* a pc in the first file reported: its text */
	struct bt_procmap first = { 0 };
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4200];
	while (f && fgets(line, sizeof(line), f))
		if (bt_procmap_parse_line(line, &first) == 0 && first.perms[2] == 'x' && strstr(first.path, only))
			break;
	fclose(f);
	c.pc = s.ips[0] = first.start + 16;
	const struct bt_rec_hdr *out;
	uint64_t ticket = 0;
	record(u, &c.hdr);
	if (bt_unwtables_record(u, &s.hdr, &out, &ticket) == BT_UNWTABLES_LATER) {
		while (bt_unwtables_pending(u) && bt_unwtables_wait(u, 10000))
			bt_unwtables_collect(u);
		out = bt_unwtables_finished(u, ticket);
		assert_non_null(out);
		bt_unwtables_release(u, ticket);
	}
	assert_true(((const struct bt_rec_sample *)out)->user_err & BT_UWALK_USER);
	assert_int_equal(bt_unwtables_flush(u), 0);
}

static void unwtables__room_needed__least_recently_used_unmapped_table_evicted(void **state)
{
	bt_test_require_priv();
	/* room for libc's table (28,000 rows) and ld.so's (2,400), not for libdw's (7,600) as well */
	struct maps mp;
	struct bt_unwtables *u = open_tables(BPF_F_MMAPABLE, 35000, &mp);
	load_for(u, 100, "/libc.so");
	load_for(u, 101, "/ld-linux");
	struct bt_unwtables_stats st;
	bt_unwtables_stats(u, &st);
	assert_int_equal(st.tables, 2);
	struct bt_rec_exit e = { .hdr = { .type = BT_REC_EXIT, .size = sizeof(e) }, .pid = 100 };
	record(u, &e.hdr);
	e.pid = 101;
	record(u, &e.hdr);
	assert_int_equal(bt_unwtables_flush(u), 0);
	bt_unwtables_stats(u, &st);
	assert_int_equal(st.tables, 2);   /* kept, though no process maps them */
	/* ld.so used again, then libdw's table needs the room libc's takes */
	load_for(u, 102, "/ld-linux");
	e.pid = 102;
	record(u, &e.hdr);
	load_for(u, 103, "/libdw");
	bt_unwtables_stats(u, &st);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(st.tables, 2);
	assert_int_equal(st.loads, 3);
	/* ld.so's was kept: a process mapping it loads nothing again */
	load_for(u, 104, "/ld-linux");
	bt_unwtables_stats(u, &st);
	assert_int_equal(st.loads, 3);
	close_tables(u, &mp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unwtables__sample_left_to_userspace__finished_as_backtrace_shared_and_kept),
		cmocka_unit_test(unwtables__rows_array_not_mappable__written_by_batches),
		cmocka_unit_test(unwtables__room_needed__least_recently_used_unmapped_table_evicted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
