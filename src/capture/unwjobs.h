/* unwjobs.h - the BPF walker's tables made away from the thread that reads the ring buffer: a
 * worker thread takes each build-id's table from the store (the build-id cache) or compiles it
 * from the file (and stores it), while samples keep being read. */
#ifndef BT_UNWJOBS_H
#define BT_UNWJOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bt_proto.h"
#include "elf/ehtable.h"
#include "elf/elffile.h"

/* Where compiled tables are kept between sessions (symsrc/unwcache.h behind callbacks, since
 * capture/ sits beside symsrc/). Called from the worker thread only. load: 0, -ENOENT (none),
 * -EBADMSG (one was refused as corrupt or untrusted), or -errno; save: 0 or -errno. */
struct bt_unwtables_store {
	int (*load)(void *ctx, const uint8_t *bid, size_t len, struct bt_ehtable *t, struct bt_elf_layout *lay);
	int (*save)(void *ctx, const uint8_t *bid, size_t len, const char *path, const struct bt_ehtable *t,
		    const struct bt_elf_layout *lay);
	void *ctx;
};

/* One table to make. The submitter fills the first part; the worker the results. */
struct bt_unwjob {
	uint8_t bid_len;
	uint8_t bid[BT_BUILD_ID_MAX];
	int fd;                 /* the file (closed by the worker), or -1: compile image instead */
	const void *image;      /* an ELF image in memory (the vDSO), which outlives the job */
	size_t image_len;
	char path[BT_PATH_MAX]; /* the file's path, naming its cache entry */
	/* results */
	int err;                /* 0: t and lay hold the table */
	bool from_cache;        /* loaded from the store, not compiled */
	bool refused;           /* the store had one, refused (corrupt or untrusted) */
	bool stored;            /* compiled and stored */
	uint64_t compile_ns;
	struct bt_ehtable t;
	struct bt_elf_layout lay;
	struct bt_unwjob *next;
};

struct bt_unwjobs;

/* store may be NULL (every table compiled, none kept). The thread starts at bt_unwjobs_start: after
 * the caller has dropped the capabilities it does not need (threads keep those they start with).
 * 0 or -errno. */
int bt_unwjobs_new(const struct bt_unwtables_store *store, struct bt_unwjobs **out);
int bt_unwjobs_start(struct bt_unwjobs *j);
/* Hands a job over (freed with the result); made in order, once the thread runs. */
void bt_unwjobs_submit(struct bt_unwjobs *j, struct bt_unwjob *job);
/* A finished job (the caller frees it with bt_unwjobs_free_job), or NULL. */
struct bt_unwjob *bt_unwjobs_take(struct bt_unwjobs *j);
/* Readable while finished jobs wait to be taken (an eventfd). */
int bt_unwjobs_fd(const struct bt_unwjobs *j);
/* Jobs submitted and not taken yet. */
size_t bt_unwjobs_pending(const struct bt_unwjobs *j);
/* Makes the jobs queued so far in the calling thread (no thread started yet, or a test). */
void bt_unwjobs_run_here(struct bt_unwjobs *j);
/* Waits up to timeout_ms for a finished job; whether there is one. */
bool bt_unwjobs_wait(struct bt_unwjobs *j, int timeout_ms);
void bt_unwjobs_free_job(struct bt_unwjob *job);
/* Stops the thread (after the job it is making) and frees every job. */
void bt_unwjobs_free(struct bt_unwjobs *j);

#endif
