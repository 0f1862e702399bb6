/* uprobes.c - loads bpf/trace.bpf.c beside a capture (its ring buffer and watched set reused),
 * attaches its programs as uprobes and uretprobes, and reads back what they counted. */
#include "capture/uprobes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "trace.skel.h"

#define MAX_LINKS (2 * 4 * BT_TRACE_MAX_PROBES)  /* entry and return, a few processes each */
#define VERIFIER_LOG_SIZE (64 * 1024)

struct bt_uprobes {
	struct trace_bpf *skel;
	struct bpf_link *links[MAX_LINKS];
	unsigned nlinks;
	int ncpus;
};

static int fail(char *msg, size_t len, int err, const char *what)
{
	if (msg && len)
		snprintf(msg, len, "%s: %s", what, strerror(-err));
	return err;
}

int bt_uprobes_open(struct bt_capture *c, const struct bt_uprobes_opts *o, struct bt_uprobes **out,
		    char *msg, size_t len)
{
	*out = NULL;
	int events_fd, watched_fd;
	int err = bt_capture_shared_fds(c, &events_fd, &watched_fd);
	if (err)
		return fail(msg, len, err, "the session's ring buffer");
	struct bt_uprobes *u = calloc(1, sizeof(*u));
	char *vlog = malloc(VERIFIER_LOG_SIZE);
	if (!u || !vlog) {
		free(u);
		free(vlog);
		return fail(msg, len, -ENOMEM, "allocating the probes");
	}
	vlog[0] = '\0';
	u->ncpus = libbpf_num_possible_cpus();
	LIBBPF_OPTS(bpf_object_open_opts, oo, .kernel_log_buf = vlog, .kernel_log_size = VERIFIER_LOG_SIZE,
		    .kernel_log_level = 0);
	u->skel = trace_bpf__open_opts(&oo);
	if (!u->skel) {
		err = fail(msg, len, -errno, "opening the probe programs");
		goto out;
	}
	u->skel->rodata->cfg_flags = (o->all ? BT_TCFG_ALL : 0) | (o->dwarf ? BT_TCFG_DWARF : 0);
	u->skel->rodata->ustack_bytes = o->ustack_bytes ? o->ustack_bytes : BT_USTACK_BYTES;
	if ((err = bpf_map__reuse_fd(u->skel->maps.events, events_fd)) ||
	    (err = bpf_map__reuse_fd(u->skel->maps.watched, watched_fd))) {
		fail(msg, len, err, "sharing the session's maps with the probe programs");
		goto out;
	}
	if ((err = trace_bpf__load(u->skel))) {
		/* the last line of the verifier's log says why, when it refused */
		char *nl;
		while ((nl = strrchr(vlog, '\n')) && nl[1] == '\0')
			*nl = '\0';
		const char *why = (nl = strrchr(vlog, '\n')) ? nl + 1 : vlog;
		snprintf(msg, len, "loading the probe programs failed: %s%s%s%s", strerror(-err),
			 *why ? " (verifier: " : "", why, *why ? ")" : "");
		goto out;
	}
out:
	free(vlog);
	if (err) {
		bt_uprobes_close(u);
		return err;
	}
	*out = u;
	return 0;
}

static int attach_one(struct bt_uprobes *u, struct bpf_program *prog, bool ret, unsigned probe, int fd,
		      uint64_t off, uint64_t ref_ctr_off, int pid)
{
	if (u->nlinks == MAX_LINKS)
		return -E2BIG;
	/* The file this process holds open, whatever its path names now. */
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = ret, .bpf_cookie = probe,
		    .ref_ctr_offset = (size_t)ref_ctr_off);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, pid, path, (size_t)off, &uo);
	if (!l)
		return -errno;
	u->links[u->nlinks++] = l;
	return 0;
}

int bt_uprobes_attach(struct bt_uprobes *u, unsigned probe, const struct bt_trace_probe_cfg *cfg, int fd,
		      uint64_t off, uint64_t ref_ctr_off, int pid)
{
	if (!u || probe >= BT_TRACE_MAX_PROBES || fd < 0)
		return -EINVAL;
	if (bpf_map__update_elem(u->skel->maps.probe_cfg, &probe, sizeof(probe), cfg, sizeof(*cfg), 0))
		return -errno;
	/* The return first: an entry seen without its return program would time nothing. */
	int err = 0;
	if (cfg->flags & BT_TPROBE_LATENCY)
		err = attach_one(u, u->skel->progs.on_return, true, probe, fd, off, 0, pid);
	if (!err)
		err = attach_one(u, u->skel->progs.on_hit, false, probe, fd, off, ref_ctr_off, pid);
	return err;
}

/* Sums a per-CPU u64 array entry. */
static int percpu_sum(struct bt_uprobes *u, struct bpf_map *map, uint32_t idx, uint64_t *sum)
{
	uint64_t vals[u->ncpus > 0 ? u->ncpus : 1];
	*sum = 0;
	if (bpf_map__lookup_elem(map, &idx, sizeof(idx), vals, sizeof(vals), 0))
		return -errno;
	for (int i = 0; i < u->ncpus; i++)
		*sum += vals[i];
	return 0;
}

int bt_uprobes_counters(struct bt_uprobes *u, unsigned probe, uint64_t out[BT_TCNT_MAX])
{
	if (!u || probe >= BT_TRACE_MAX_PROBES)
		return -EINVAL;
	for (uint32_t i = 0; i < BT_TCNT_MAX; i++) {
		int err = percpu_sum(u, u->skel->maps.tcounters, probe * BT_TCNT_MAX + i, &out[i]);
		if (err)
			return err;
	}
	return 0;
}

int bt_uprobes_latency(struct bt_uprobes *u, unsigned probe, uint64_t out[BT_TRACE_LAT_BUCKETS])
{
	if (!u || probe >= BT_TRACE_MAX_PROBES)
		return -EINVAL;
	for (uint32_t b = 0; b < BT_TRACE_LAT_BUCKETS; b++) {
		int err = percpu_sum(u, u->skel->maps.lat_hist, probe * BT_TRACE_LAT_BUCKETS + b, &out[b]);
		if (err)
			return err;
	}
	return 0;
}

int bt_uprobes_foreach_key(struct bt_uprobes *u,
			   int (*fn)(void *ctx, const struct bt_trace_key *k, uint64_t count), void *ctx)
{
	if (!u)
		return -EINVAL;
	int fd = bpf_map__fd(u->skel->maps.keyed);
	struct bt_trace_key key, next;
	const struct bt_trace_key *prev = NULL;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		uint64_t count;
		if (bpf_map_lookup_elem(fd, &next, &count) == 0) {
			int r = fn(ctx, &next, count);
			if (r)
				return r;
		}
		key = next;
		prev = &key;
	}
	return 0;
}

void bt_uprobes_detach(struct bt_uprobes *u)
{
	if (!u)
		return;
	for (unsigned i = 0; i < u->nlinks; i++)
		bpf_link__destroy(u->links[i]);
	u->nlinks = 0;
}

void bt_uprobes_close(struct bt_uprobes *u)
{
	if (!u)
		return;
	bt_uprobes_detach(u);
	trace_bpf__destroy(u->skel);
	free(u);
}
