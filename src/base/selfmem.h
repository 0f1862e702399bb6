/* selfmem.h - what this process's memory is made of, so that a long-running agent can report (and a
 * test can watch) what a leak would move apart from what only looks like growth: heap bytes in use
 * (malloc's own count), anonymous resident pages, and the resident pages of BPF maps mapped into
 * this process (the ring buffer, which the reader touches page by page as the write position
 * moves around it, and is mapped twice). */
#ifndef BT_SELFMEM_H
#define BT_SELFMEM_H

#include <stdint.h>

struct bt_selfmem {
	uint64_t heap_in_use;    /* bytes malloc has handed out and not had back (arena and mmap chunks) */
	uint64_t rss;            /* VmRSS, bytes */
	uint64_t rss_anon;       /* RssAnon, bytes: the heap's pages among them, whatever is in use */
	uint64_t bpf_maps_rss;   /* resident bytes of anon_inode:bpf-map mappings */
};

/* Fills *out from malloc and from procdir/self/{status,smaps} (procdir: "/proc" but for tests).
 * Fields that cannot be read are left 0. 0 or -errno when nothing could be read. */
int bt_selfmem_read(const char *procdir, struct bt_selfmem *out);

#endif
