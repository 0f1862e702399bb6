/* sideband.c - a dummy software perf event per CPU that asks only for mmap records: the kernel
 * writes one into the CPU's ring when an executable mapping is made there, nothing otherwise.
 * Rings are read without waking: whoever delivers samples drains them first (bt_sideband_drain),
 * and the records from every CPU are merged in time order. */
#include "capture/sideband.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>


struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size;      /* bytes of data, a power of two */
};

struct item {
	struct bt_sb_rec m;
	char *path;
};

struct bt_sideband {
	unsigned what;      /* BT_SB_* asked for */
	struct ring *rings;
	size_t nrings;
	struct item *q;     /* queued records, q[head .. n) in time order */
	size_t head, n, cap;
	uint64_t lost;
	unsigned char *rec; /* one record, copied out of the ring when it wraps */
	size_t rec_cap;
};

/* The MMAP2 record before its file name, as written for listeners that did not ask for build-ids. */
struct mmap2_head {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
};

/* What sample_id_all appends to every record: PERF_SAMPLE_TID then PERF_SAMPLE_TIME. */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

static int open_ring(int cpu, size_t pages, unsigned what, struct ring *r)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.sample_id_all = 1;
	a.mmap = !!(what & BT_SB_MMAP);
	a.mmap2 = !!(what & BT_SB_MMAP);
	a.ksymbol = !!(what & BT_SB_KSYMBOL);
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;  /* the clock of bpf_ktime_get_ns, so both streams merge */
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.watermark = 1;  /* a wakeup when a quarter of the ring is used, none per record */
	a.wakeup_watermark = (uint32_t)(pages * (size_t)sysconf(_SC_PAGESIZE) / 4);
	r->fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return errno == EINVAL || errno == E2BIG ? -EOPNOTSUPP : -errno;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, (pages + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (m == MAP_FAILED) {
		int err = -errno;
		close(r->fd);
		r->fd = -1;
		return err;
	}
	r->meta = m;
	r->data = (unsigned char *)m + page;
	r->size = (uint64_t)pages * page;
	return 0;
}

int bt_sideband_open(const int *cpus, size_t ncpus, size_t pages, unsigned what,
		     struct bt_sideband **out)
{
	if (!out || !cpus || !ncpus || !pages || (pages & (pages - 1)))
		return -EINVAL;
	*out = NULL;
	struct bt_sideband *sb = calloc(1, sizeof(*sb));
	if (!sb || !(sb->rings = calloc(ncpus, sizeof(*sb->rings)))) {
		free(sb);
		return -ENOMEM;
	}
	sb->what = what;
	for (size_t i = 0; i < ncpus; i++) {
		int err = open_ring(cpus[i], pages, what, &sb->rings[i]);
		if (err) {
			bt_sideband_close(sb);
			return err;
		}
		sb->nrings++;
	}
	*out = sb;
	return 0;
}

int bt_sideband_add_to_epoll(struct bt_sideband *sb, int epfd, uint64_t data)
{
	if (!sb)
		return -EINVAL;
	for (size_t i = 0; i < sb->nrings; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = data };
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, sb->rings[i].fd, &ev) != 0)
			return -errno;
	}
	return 0;
}

/* The record at tail, contiguous: in place, or copied out when it wraps around the ring's end. */
static const unsigned char *record_at(struct bt_sideband *sb, const struct ring *r, uint64_t tail,
				      size_t len)
{
	uint64_t off = tail & (r->size - 1);
	if (off + len <= r->size)
		return r->data + off;
	if (len > sb->rec_cap) {
		unsigned char *n = realloc(sb->rec, len);
		if (!n)
			return NULL;
		sb->rec = n;
		sb->rec_cap = len;
	}
	size_t first = (size_t)(r->size - off);
	memcpy(sb->rec, r->data + off, first);
	memcpy(sb->rec + first, r->data, len - first);
	return sb->rec;
}

static int queue(struct bt_sideband *sb, const struct bt_sb_rec *m, const char *path, size_t plen)
{
	if (sb->head && sb->head == sb->n)
		sb->head = sb->n = 0;
	if (sb->n == sb->cap) {
		size_t ncap = sb->cap ? sb->cap * 2 : 64;
		struct item *nq = realloc(sb->q, ncap * sizeof(*nq));
		if (!nq)
			return -ENOMEM;
		sb->q = nq;
		sb->cap = ncap;
	}
	char *p = malloc(plen + 1);
	if (!p)
		return -ENOMEM;
	memcpy(p, path, plen);
	p[plen] = '\0';
	sb->q[sb->n].m = *m;
	sb->q[sb->n].path = p;
	sb->n++;
	return 0;
}

/* An MMAP2 record of len bytes into the queue. Malformed ones are counted as lost. */
static int parse_mmap2(struct bt_sideband *sb, const unsigned char *rec, size_t len)
{
	struct mmap2_head h;
	struct sample_id sid;
	if (len < sizeof(h) + sizeof(sid)) {
		sb->lost++;
		return 0;
	}
	memcpy(&h, rec, sizeof(h));
	memcpy(&sid, rec + len - sizeof(sid), sizeof(sid));
	const char *name = (const char *)rec + sizeof(h);
	size_t room = len - sizeof(h) - sizeof(sid);
	size_t plen = strnlen(name, room);
	if (plen == room) {
		sb->lost++;
		return 0;
	}
	struct bt_sb_rec m = {
		.kind = BT_SB_REC_MMAP, .time_ns = sid.time, .pid = h.pid, .tid = h.tid, .start = h.addr,
		.len = h.len, .pgoff = h.pgoff, .prot = h.prot, .flags = h.flags,
	};
	/* Anonymous executable memory is named "//anon"; other names in brackets ([vdso], [heap])
	 * are the kernel's own. */
	m.anon = name[0] != '/' || !strcmp(name, "//anon");
	/* Device and inode, whatever the misc field says (see BT_SB_KSYMBOL in sideband.h). */
	m.dev = (h.maj << 20) | (h.min & 0xfffff);
	m.ino = h.ino;
	return queue(sb, &m, name, plen);
}

/* A KSYMBOL record: the code's address, size, type, whether it went away, and its name. */
static int parse_ksymbol(struct bt_sideband *sb, const unsigned char *rec, size_t len)
{
	struct {
		struct perf_event_header h;
		uint64_t addr;
		uint32_t len;
		uint16_t type, flags;
	} k;
	struct sample_id sid;
	if (len < sizeof(k) + sizeof(sid)) {
		sb->lost++;
		return 0;
	}
	memcpy(&k, rec, sizeof(k));
	memcpy(&sid, rec + len - sizeof(sid), sizeof(sid));
	const char *name = (const char *)rec + sizeof(k);
	size_t room = len - sizeof(k) - sizeof(sid);
	size_t nlen = strnlen(name, room);
	if (nlen == room) {
		sb->lost++;
		return 0;
	}
	struct bt_sb_rec m = {
		.kind = BT_SB_REC_KSYMBOL, .time_ns = sid.time, .pid = sid.pid, .tid = sid.tid,
		.start = k.addr, .len = k.len, .ksym_type = k.type,
		.unregister = (k.flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) != 0,
	};
	return queue(sb, &m, name, nlen);
}

static int drain_ring(struct bt_sideband *sb, struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	int n = 0, err = 0;
	while (tail < head && !err) {
		struct perf_event_header h;
		const unsigned char *p = record_at(sb, r, tail, sizeof(h));
		if (!p)
			return -ENOMEM;
		memcpy(&h, p, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail) {
			sb->lost++;  /* cannot happen with a sane kernel; resynchronise at head */
			tail = head;
			break;
		}
		if (!(p = record_at(sb, r, tail, h.size)))
			return -ENOMEM;
		if (h.type == PERF_RECORD_MMAP2) {
			err = parse_mmap2(sb, p, h.size);
			n += !err;
		} else if (h.type == PERF_RECORD_KSYMBOL) {
			err = parse_ksymbol(sb, p, h.size);
			n += !err;
		} else if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
			uint64_t lost;
			memcpy(&lost, p + sizeof(h) + 8, sizeof(lost));
			sb->lost += lost;
		}
		tail += h.size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return err ? err : n;
}

static int by_time(const void *a, const void *b)
{
	uint64_t x = ((const struct item *)a)->m.time_ns, y = ((const struct item *)b)->m.time_ns;
	return (x > y) - (x < y);
}

int bt_sideband_drain(struct bt_sideband *sb)
{
	if (!sb)
		return -EINVAL;
	int total = 0;
	for (size_t i = 0; i < sb->nrings; i++) {
		int n = drain_ring(sb, &sb->rings[i]);
		if (n < 0)
			return n;
		total += n;
	}
	/* Each ring is in time order, the rings together are not: merge what came in with what
	 * waited (rare enough that sorting the queue's tail with its head is cheap). */
	if (total > 0)
		qsort(sb->q + sb->head, sb->n - sb->head, sizeof(*sb->q), by_time);
	return total;
}

uint64_t bt_sideband_next_time(const struct bt_sideband *sb)
{
	return sb && sb->head < sb->n ? sb->q[sb->head].m.time_ns : UINT64_MAX;
}

int bt_sideband_deliver(struct bt_sideband *sb, uint64_t until_ns, bt_sb_fn fn, void *ctx)
{
	if (!sb || !fn)
		return -EINVAL;
	int n = 0;
	while (sb->head < sb->n && sb->q[sb->head].m.time_ns <= until_ns) {
		struct item *it = &sb->q[sb->head++];
		it->m.path = it->path;
		int r = fn(ctx, &it->m);
		free(it->path);
		it->path = NULL;
		if (r)
			return r;
		n++;
	}
	return n;
}

uint64_t bt_sideband_lost(const struct bt_sideband *sb)
{
	return sb ? sb->lost : 0;
}

void bt_sideband_close(struct bt_sideband *sb)
{
	if (!sb)
		return;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	for (size_t i = 0; i < sb->nrings; i++) {
		munmap(sb->rings[i].meta, sb->rings[i].size + page);
		close(sb->rings[i].fd);
	}
	for (size_t i = sb->head; i < sb->n; i++)
		free(sb->q[i].path);
	free(sb->rings);
	free(sb->q);
	free(sb->rec);
	free(sb);
}
