/* samplelog.c - records sorted by insertion from the newest end (they arrive nearly in order); when
 * memory is full its older half is appended to the scratch file, which so stays in order too. */
#include "session/samplelog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/wfile.h"

int bt_samplelog_init(struct bt_samplelog *l, const char *dir, size_t keep)
{
	memset(l, 0, sizeof(*l));
	l->fd = -1;
	l->cap = keep ? (keep < 2 ? 2 : keep) : BT_SAMPLELOG_KEEP;
	snprintf(l->dir, sizeof(l->dir), "%s", dir && *dir ? dir : "/var/tmp");
	l->mem = malloc(l->cap * sizeof(*l->mem));
	return l->mem ? 0 : -ENOMEM;
}

void bt_samplelog_free(struct bt_samplelog *l)
{
	free(l->mem);
	if (l->fd >= 0)
		close(l->fd);
	memset(l, 0, sizeof(*l));
	l->fd = -1;
}

/* The older half of memory to the file. */
static int spill(struct bt_samplelog *l)
{
	if (l->fd < 0) {
		int fd = bt_wfile_scratch(l->dir);
		if (fd < 0)
			return fd;
		l->fd = fd;
	}
	size_t half = l->n / 2;
	int err = bt_write_all(l->fd, l->mem, half * sizeof(*l->mem));
	if (err)
		return err;
	l->spilled += half;
	l->spilled_until = l->mem[half - 1].time_ns;
	memmove(l->mem, l->mem + half, (l->n - half) * sizeof(*l->mem));
	l->n -= half;
	return 0;
}

int bt_samplelog_add(struct bt_samplelog *l, const struct bt_sample_rec *r)
{
	if (l->n == l->cap) {
		int err = spill(l);
		if (err)
			return err;
	}
	struct bt_sample_rec rec = *r;
	if (l->spilled && rec.time_ns < l->spilled_until) {
		rec.time_ns = l->spilled_until;
		l->late++;
	}
	size_t i = l->n;
	while (i > 0 && l->mem[i - 1].time_ns > rec.time_ns)
		i--;
	memmove(l->mem + i + 1, l->mem + i, (l->n - i) * sizeof(*l->mem));
	l->mem[i] = rec;
	l->n++;
	return 0;
}

int bt_samplelog_each(const struct bt_samplelog *l, bt_samplelog_fn fn, void *ctx)
{
	struct bt_sample_rec buf[1024];
	uint64_t done = 0;
	while (done < l->spilled) {
		size_t want = l->spilled - done < 1024 ? (size_t)(l->spilled - done) : 1024;
		ssize_t got = pread(l->fd, buf, want * sizeof(*buf), (off_t)(done * sizeof(*buf)));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0 || got % sizeof(*buf))
			return got < 0 ? -errno : -EIO;
		for (size_t i = 0; i < (size_t)got / sizeof(*buf); i++) {
			int r = fn(ctx, &buf[i]);
			if (r)
				return r;
		}
		done += (size_t)got / sizeof(*buf);
	}
	for (size_t i = 0; i < l->n; i++) {
		int r = fn(ctx, &l->mem[i]);
		if (r)
			return r;
	}
	return 0;
}
