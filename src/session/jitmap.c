/* jitmap.c - per-process perf maps and jitdumps: a map found inside the process's root under its
 * namespaced pid, a jitdump through the process's mapping of it; both kept open and read again only
 * for what was appended, on a miss and at most once a second. */
#include "session/jitmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "base/safeopen.h"
#include "capture/procmaps.h"

void bt_jitmaps_init(struct bt_jitmaps *j, const char *proc_root)
{
	memset(j, 0, sizeof(*j));
	j->proc_root = proc_root ? proc_root : "";
	bt_htab_init(&j->index);
}

void bt_jitmaps_free(struct bt_jitmaps *j)
{
	for (size_t i = 0; i < j->n; i++) {
		struct bt_jitproc *p = &j->procs[i];
		if (p->fd >= 0)
			close(p->fd);
		if (p->dump_fd >= 0)
			close(p->dump_fd);
		bt_perfmap_free(&p->map);
		bt_perfmap_free(&p->dump_map);
		bt_jitdump_free(&p->dump);
	}
	free(j->procs);
	free(j->free_ids);
	bt_htab_free(&j->index);
	memset(j, 0, sizeof(*j));
}

static bool pid_eq(void *ctx, uint64_t val, const void *key)
{
	const struct bt_jitmaps *j = ctx;
	return j->procs[val].pid == *(const int *)key;
}

/* Who a process is, from its status: its pid in its own (innermost) pid namespace, and the
 * credentials it opens files with. */
struct who {
	int nspid;
	unsigned uid[4], gid[4];    /* real, effective, saved, file system */
	unsigned groups[64];
	size_t ngroups;
};

static void parse_ids(const char *s, unsigned *v, size_t max, size_t *n)
{
	char *end;
	*n = 0;
	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s < '0' || *s > '9' || *n == max)
			return;
		v[(*n)++] = (unsigned)strtoul(s, &end, 10);
		s = end;
	}
}

/* ROOT/proc/PID/status read into w; the nspid is the host pid when the kernel gives none. 0 or
 * -ESRCH, -EIO when the ids are missing. */
static int who_is(const char *root, int pid, struct who *w)
{
	char path[4096], line[1024];
	size_t nu = 0, ng = 0;
	memset(w, 0, sizeof(*w));
	w->nspid = pid;
	snprintf(path, sizeof(path), "%s/proc/%d/status", root, pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Uid:", 4)) {
			parse_ids(line + 4, w->uid, 4, &nu);
		} else if (!strncmp(line, "Gid:", 4)) {
			parse_ids(line + 4, w->gid, 4, &ng);
		} else if (!strncmp(line, "Groups:", 7)) {
			parse_ids(line + 7, w->groups, 64, &w->ngroups);
		} else if (!strncmp(line, "NSpid:", 6)) {
			char *last = NULL;
			for (char *save, *t = strtok_r(line + 6, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save))
				last = t;
			if (last && atoi(last) > 0)
				w->nspid = atoi(last);
		}
	}
	fclose(f);
	return nu == 4 && ng == 4 ? 0 : -EIO;
}

/* File systems whose files are the kernel's, not a runtime's: reading one may act (kmsg) or show
 * what the process itself could not read. */
static bool kernel_fs(int fd)
{
	static const unsigned long magic[] = { PROC_SUPER_MAGIC, SYSFS_MAGIC, DEBUGFS_MAGIC, TRACEFS_MAGIC,
					       SECURITYFS_MAGIC, BPF_FS_MAGIC, CGROUP_SUPER_MAGIC,
					       CGROUP2_SUPER_MAGIC };
	struct statfs sf;
	if (fstatfs(fd, &sf) != 0)
		return true;
	for (size_t i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
		if ((unsigned long)sf.f_type == magic[i])
			return true;
	return false;
}

/* Whether the process could have written the file and can read it: one of its users owns it (root
 * only for a root process), its file system credentials may read it, and it is no kernel file.
 * fd may be an O_PATH descriptor. */
static bool its_own(const struct who *w, int fd, const struct stat *st)
{
	bool owner = false, group = st->st_gid == w->gid[3];
	for (size_t i = 0; i < 4; i++)
		owner |= st->st_uid == w->uid[i];
	for (size_t i = 0; i < w->ngroups; i++)
		group |= st->st_gid == w->groups[i];
	if (!owner || kernel_fs(fd))
		return false;
	if (w->uid[3] == 0)
		return true;
	mode_t need = st->st_uid == w->uid[3] ? S_IRUSR : group ? S_IRGRP : S_IROTH;
	return (st->st_mode & need) != 0;
}

/* When the process started, in seconds since the epoch (the boot time of ROOT/proc/stat plus the
 * start of ROOT/proc/PID/stat), or -1 when unknown. */
static long long start_time(const char *root, int pid)
{
	char path[4096], buf[1024];
	long long btime = -1;
	unsigned long long ticks = 0;
	snprintf(path, sizeof(path), "%s/proc/stat", root);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "btime %lld", &btime) == 1)
			break;
	fclose(f);
	snprintf(path, sizeof(path), "%s/proc/%d/stat", root, pid);
	if (btime < 0 || !(f = fopen(path, "re")))
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after the command name, which may hold anything but ends at the last ')' */
	const char *p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 &ticks) != 1)
		return -1;
	return btime + (long long)(ticks / (unsigned long long)sysconf(_SC_CLK_TCK));
}

static int check_own(void *w, int pfd, const struct stat *st)
{
	return its_own(w, pfd, st) ? 0 : -EPERM;
}

/* The process's map, opened as the process could: a regular file inside its root reached through
 * no link at all (so none leads out of its /tmp), its own by its credentials (its_own), and written
 * since the process started (not left by an earlier process of the same pid): someone else's file in
 * a shared /tmp, a link or a bind mount to a file only root may read, a kernel file, name nothing.
 * fd or -errno. */
static int open_map(struct bt_jitmaps *j, struct bt_jitproc *p)
{
	char path[4096];
	struct stat st;
	struct who w;
	int err = who_is(j->proc_root, p->pid, &w);
	if (err)
		return err;
	p->nspid = w.nspid;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", w.nspid);
	int rootfd = bt_procmaps_root_fd(j->proc_root, p->pid);
	if (rootfd < 0)
		return rootfd;
	/* checked before it is opened for reading: a refused file is never opened */
	int fd = bt_open_regular_checked(rootfd, path, BT_OPEN_IN_ROOT | BT_OPEN_NO_SYMLINKS, &st, check_own, &w);
	close(rootfd);
	if (fd == -EINVAL || fd == -ELOOP || fd == -EPERM)
		j->refused++;
	if (fd < 0)
		return fd;
	/* slack: the start is counted in clock ticks from a boot time in whole seconds */
	long long started = start_time(j->proc_root, p->pid);
	if (started >= 0 && (long long)st.st_mtime + 2 < started) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* Whether name (a path) ends in jit-DIGITS.dump, as the runtimes name their jitdumps. */
static bool is_jitdump(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	if (strncmp(b, "jit-", 4) != 0)
		return false;
	const char *d = b + 4;
	while (*d >= '0' && *d <= '9')
		d++;
	return d > b + 4 && !strcmp(d, ".dump");
}

struct dump_where {
	uint64_t start, end;
};

static int find_dump(void *ctx, const struct bt_procmap *m)
{
	struct dump_where *w = ctx;
	if (!is_jitdump(m->path))
		return 0;
	w->start = m->start;
	w->end = m->end;
	return 1;
}

/* The jitdump the process maps, through its mapping (the very file, whatever its path holds now),
 * its own as for a map (its_own). fd or -errno. */
static int open_dump(struct bt_jitmaps *j, struct bt_jitproc *p)
{
	struct stat st;
	struct who w;
	struct dump_where dw = { 0 };
	int err = who_is(j->proc_root, p->pid, &w);
	if (err)
		return err;
	if (bt_procmaps_foreach(j->proc_root, p->pid, find_dump, &dw) != 1)
		return -ENOENT;
	int fd = bt_procmaps_open_mapped(j->proc_root, p->pid, dw.start, dw.end);
	if (fd == -EINVAL)
		j->refused++;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) != 0 || !its_own(&w, fd, &st)) {
		j->refused++;
		close(fd);
		return -EPERM;
	}
	return fd;
}

static int64_t new_entry(struct bt_jitmaps *j, int pid)
{
	size_t id;
	if (j->nfree) {
		id = j->free_ids[--j->nfree];
	} else {
		if (j->n == j->cap) {
			size_t cap = j->cap ? 2 * j->cap : 16;
			void *v = realloc(j->procs, cap * sizeof(*j->procs));
			if (!v)
				return -ENOMEM;
			j->procs = v;
			j->cap = cap;
		}
		id = j->n++;
	}
	struct bt_jitproc *p = &j->procs[id];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->fd = -1;
	p->dump_fd = -1;
	bt_perfmap_init(&p->map);
	bt_perfmap_init(&p->dump_map);
	/* no process takes more than a quarter of what all may hold: the others' names still fit */
	p->map.budget = p->dump_map.budget = j->budget;
	p->map.share_max = p->dump_map.share_max = j->budget ? j->budget->max / BT_JITMAP_SHARES : 0;
	bt_jitdump_init(&p->dump);
	if (bt_htab_insert(&j->index, bt_hash_u64((uint64_t)pid), id)) {
		p->pid = 0;
		if (id + 1 == j->n)
			j->n--;
		else
			j->free_ids[j->nfree++] = (uint32_t)id;  /* it came from there */
		return -ENOMEM;
	}
	return (int64_t)id;
}

static void read_map(struct bt_jitmaps *j, struct bt_jitproc *p, uint64_t now_ns)
{
	p->checked_ns = now_ns;
	j->reads++;
	struct stat st;
	/* A map written anew from its start (a shorter file) is read again whole. */
	if (p->fd >= 0 && fstat(p->fd, &st) == 0 && (uint64_t)st.st_size < p->map.bytes) {
		bt_perfmap_free(&p->map);  /* the budget stays */
	}
	if (p->fd >= 0)
		bt_perfmap_read_fd(&p->map, p->fd);
	if (p->dump_fd >= 0)
		bt_jitdump_read_fd(&p->dump, p->dump_fd, &p->dump_map);
}

int64_t bt_jitmaps_proc(struct bt_jitmaps *j, int pid, uint64_t now_ns)
{
	if (pid <= 0)
		return -ENOENT;
	uint64_t *v = bt_htab_find(&j->index, bt_hash_u64((uint64_t)pid), pid_eq, j, &pid);
	int64_t id = v ? (int64_t)*v : new_entry(j, pid);
	if (id < 0)
		return id;
	struct bt_jitproc *p = &j->procs[id];
	if (p->has_map)
		return id;
	if (p->checked_ns && now_ns < p->checked_ns + (BT_JITMAP_REREAD_NS << (p->looks < 6 ? p->looks : 6)))
		return -ENOENT;
	p->checked_ns = now_ns ? now_ns : 1;
	int fd = open_map(j, p), dfd = open_dump(j, p);
	if (fd < 0 && dfd < 0) {
		p->looks += p->looks < 6;
		return -ENOENT;
	}
	p->fd = fd < 0 ? -1 : fd;
	p->dump_fd = dfd < 0 ? -1 : dfd;
	p->has_map = true;
	read_map(j, p, p->checked_ns);
	return id;
}

/* The jitdump's records first (they are exact about moves), then the map's lines. */
static const char *lookup(struct bt_jitproc *p, uint64_t addr, uint64_t *off)
{
	const struct bt_perfmap *m = &p->dump_map;
	const struct bt_perfmap_entry *e = bt_perfmap_lookup(&p->dump_map, addr);
	if (!e) {
		m = &p->map;
		e = bt_perfmap_lookup(&p->map, addr);
	}
	if (!e)
		return NULL;
	/* the start of the line's code, which an overlapping newer line may have cut into */
	const struct bt_perfmap_entry *line = &m->raw[e->seq];
	if (off)
		*off = addr - line->start;
	return bt_perfmap_name(m, e);
}

const char *bt_jitmaps_name(struct bt_jitmaps *j, uint32_t id, uint64_t addr, uint64_t now_ns,
			    bool *final, uint64_t *off)
{
	*final = true;
	if (id >= j->n || !j->procs[id].has_map)
		return NULL;
	struct bt_jitproc *p = &j->procs[id];
	const char *name = lookup(p, addr, off);
	if (!name && !p->gone && (p->fd >= 0 || p->dump_fd >= 0) &&
	    now_ns >= p->checked_ns + BT_JITMAP_REREAD_NS) {
		read_map(j, p, now_ns);
		name = lookup(p, addr, off);
	}
	if (!name)
		*final = p->gone;
	return name;
}

const char *bt_jitmaps_source(const struct bt_jitmaps *j, uint32_t id, uint64_t addr)
{
	if (id >= j->n)
		return NULL;
	const struct bt_jitproc *p = &j->procs[id];
	if (bt_perfmap_find(&p->dump_map, addr))
		return "jitdump";
	return bt_perfmap_find(&p->map, addr) ? "perf-map" : NULL;
}

int bt_jitmaps_pid(const struct bt_jitmaps *j, uint32_t id)
{
	return id < j->n ? j->procs[id].pid : 0;
}

void bt_jitmaps_gone(struct bt_jitmaps *j, int pid, uint64_t now_ns)
{
	uint32_t h = bt_hash_u64((uint64_t)pid);
	uint64_t *v = bt_htab_find(&j->index, h, pid_eq, j, &pid);
	if (!v)
		return;
	size_t id = (size_t)*v;
	bt_htab_remove(&j->index, h, pid_eq, j, &pid);
	struct bt_jitproc *p = &j->procs[id];
	/* What the runtime wrote last (a buffered writer flushes as it exits) is read before the
	 * files are let go. */
	if (p->has_map)
		read_map(j, p, now_ns);
	if (p->fd >= 0)
		close(p->fd);
	if (p->dump_fd >= 0)
		close(p->dump_fd);
	p->fd = p->dump_fd = -1;
	p->gone = true;
	p->gone_ns = now_ns;
	if (p->has_map)
		return;
	/* No location names this entry: it may serve another process. */
	if (j->nfree == j->free_cap) {
		size_t cap = j->free_cap ? 2 * j->free_cap : 16;
		void *f = realloc(j->free_ids, cap * sizeof(*j->free_ids));
		if (!f)
			return;  /* kept unused: a little memory, nothing wrong */
		j->free_ids = f;
		j->free_cap = cap;
	}
	j->free_ids[j->nfree++] = (uint32_t)id;
}

void bt_jitmaps_reap(struct bt_jitmaps *j, uint64_t now_ns, uint64_t grace_ns)
{
	for (size_t i = 0; i < j->n; i++) {
		struct bt_jitproc *p = &j->procs[i];
		if (p->gone && p->has_map && now_ns > p->gone_ns + grace_ns) {
			bt_perfmap_free(&p->map);
			bt_perfmap_free(&p->dump_map);
			bt_jitdump_free(&p->dump);
		}
	}
}
