/* test_unwtables.c - the BPF walker's tables kept from records, on real BPF maps: this process's
 * executable mappings reported as the kernel reports them, then a sample whose walk met libc
 * without a table: libc's table is compiled and loaded, and this process's entry in unw_procs
 * leads from a libc pc to the same row the compiler gives for it; a second process mapping the
 * same libc shares the rows; the tables are freed once no process maps them. */
#include "testutil.h"
#include "capture/procmaps.h"
#include "capture/unwtables.h"
#include "elf/buildid.h"
#include "elf/ehtable.h"
#include "elf/elffile.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROWS 200000

struct maps_ctx {
	struct bt_unwtables *u;
	uint32_t pid;
	uint64_t libc_start, libc_end, libc_pgoff;
	char libc[4096];
};

/* Each executable file mapping as a BT_REC_VMA with its build-id. */
static int report(void *ctx, const struct bt_procmap *m)
{
	struct maps_ctx *mc = ctx;
	if (m->perms[2] != 'x' || m->path[0] != '/')
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
	bt_unwtables_record(mc->u, &r.hdr);
	if (strstr(m->path, "/libc.so")) {
		mc->libc_start = m->start;
		mc->libc_end = m->end;
		mc->libc_pgoff = m->offset;
		snprintf(mc->libc, sizeof(mc->libc), "%s", m->path);
	}
	return 0;
}

static void sample_in(struct bt_unwtables *u, uint32_t pid, uint64_t pc, uint32_t flags)
{
	struct bt_rec_sample s;
	memset(&s, 0, offsetof(struct bt_rec_sample, ips) + 8);
	s.hdr.type = BT_REC_SAMPLE;
	s.hdr.size = offsetof(struct bt_rec_sample, ips) + 8;
	s.pid = pid;
	s.user_n = 1;
	s.user_err = (int32_t)flags;
	s.ips[0] = pc;
	bt_unwtables_record(u, &s.hdr);
}

/* The row the BPF walker finds for pc in process pid: its map entry, then a search of unw_rows. */
static bool walker_row(int procs_fd, int rows_fd, uint32_t pid, uint64_t pc, struct bt_unw_row *out,
		       struct bt_unw_map *map)
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
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		struct bt_unw_row r;
		assert_int_equal(bpf_map_lookup_elem(rows_fd, &mid, &r), 0);
		if (r.pc <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == m->row_lo)
		return false;
	lo--;
	return bpf_map_lookup_elem(rows_fd, &lo, out) == 0;
}

/* rows_flags: BPF_F_MMAPABLE as the loader creates unw_rows (rows copied in through a mapping),
 * or 0 (rows written by batch updates). */
static void libc_met_without_table(uint32_t rows_flags)
{
	bt_test_require_priv();
	LIBBPF_OPTS(bpf_map_create_opts, ro, .map_flags = rows_flags);
	int rows_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_unw_rows", 4, sizeof(struct bt_unw_row), ROWS, &ro);
	LIBBPF_OPTS(bpf_map_create_opts, ho, .map_flags = BPF_F_NO_PREALLOC);
	int procs_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_unw_procs", 4, sizeof(struct bt_unw_proc), 64, &ho);
	assert_true(rows_fd >= 0 && procs_fd >= 0);
	struct bt_unwtables *u;
	assert_int_equal(bt_unwtables_new(rows_fd, ROWS, procs_fd, "", false, &u), 0);
	struct maps_ctx mc = { .u = u, .pid = (uint32_t)getpid() };
	assert_int_equal(bt_procmaps_foreach("", getpid(), report, &mc), 0);
	assert_true(mc.libc_start != 0);
	assert_int_equal(bt_unwtables_flush(u), 0);
	struct bt_unw_row row;
	struct bt_unw_map map;
	uint64_t pc = (uint64_t)(uintptr_t)&qsort;
	assert_true(pc >= mc.libc_start && pc < mc.libc_end);
	/* known mapping, no table yet */
	assert_false(walker_row(procs_fd, rows_fd, mc.pid, pc, &row, &map));
	sample_in(u, mc.pid, pc, BT_UWALK_NO_TABLE | BT_UWALK_FP);
	assert_int_equal(bt_unwtables_flush(u), 0);
	struct bt_unwtables_stats st;
	bt_unwtables_stats(u, &st);
	assert_int_equal(st.loads, 1);
	assert_int_equal(st.tables, 1);
	assert_true(walker_row(procs_fd, rows_fd, mc.pid, pc, &row, &map));
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
	const struct bt_unw_row *want = bt_ehtable_lookup(&t, vaddr);
	assert_non_null(want);
	assert_memory_equal(&row, want, sizeof(row));
	assert_int_equal(map.row_hi - map.row_lo, t.n);
	assert_int_equal(st.rows, t.n);
	assert_int_equal(st.rows_copied, rows_flags & BPF_F_MMAPABLE ? t.n : 0);
	/* every row as compiled, the first and the last of the range included */
	for (uint32_t i = 0; i < t.n; i++) {
		uint32_t k = map.row_lo + i;
		struct bt_unw_row got;
		assert_int_equal(bpf_map_lookup_elem(rows_fd, &k, &got), 0);
		assert_memory_equal(&got, &t.rows[i], sizeof(got));
	}
	/* another process mapping the same libc: the same rows, nothing compiled again */
	mc.pid += 1000000;
	assert_int_equal(bt_procmaps_foreach("", getpid(), report, &mc), 0);
	assert_int_equal(bt_unwtables_flush(u), 0);
	struct bt_unw_map map2;
	assert_true(walker_row(procs_fd, rows_fd, mc.pid, pc, &row, &map2));
	assert_int_equal(map2.row_lo, map.row_lo);
	bt_unwtables_stats(u, &st);
	assert_int_equal(st.loads, 1);
	/* both gone: their entries removed, the table freed */
	struct bt_rec_exit e = { .hdr = { .type = BT_REC_EXIT, .size = sizeof(e) }, .pid = mc.pid };
	bt_unwtables_record(u, &e.hdr);
	assert_int_equal(bt_unwtables_flush(u), 0);
	bt_unwtables_stats(u, &st);
	assert_int_equal(st.tables, 1);
	e.pid = (uint32_t)getpid();
	bt_unwtables_record(u, &e.hdr);
	assert_int_equal(bt_unwtables_flush(u), 0);
	bt_unwtables_stats(u, &st);
	assert_int_equal(st.tables, 0);
	assert_int_equal(st.rows, 0);
	assert_int_equal(st.evicted, 1);
	uint32_t pid = (uint32_t)getpid();
	static struct bt_unw_proc p;
	assert_int_not_equal(bpf_map_lookup_elem(procs_fd, &pid, &p), 0);
	bt_ehtable_free(&t);
	bt_unwtables_free(u);
	close(rows_fd);
	close(procs_fd);
}

static void unwtables__libc_met_without_table__loaded_shared_and_evicted(void **state)
{
	libc_met_without_table(BPF_F_MMAPABLE);
}

static void unwtables__rows_array_not_mappable__written_by_batches(void **state)
{
	libc_met_without_table(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unwtables__libc_met_without_table__loaded_shared_and_evicted),
		cmocka_unit_test(unwtables__rows_array_not_mappable__written_by_batches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
