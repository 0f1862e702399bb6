/* debuginfod_client.h - debug files fetched from debuginfod servers (libdebuginfod, DEBUGINFOD_URLS)
 * off the event path: requests are queued to a worker thread, each lookup is bounded by a timeout,
 * results are collected by polling, and a failed build-id is not asked for again in the session,
 * so a server that is down or slow costs at most one timeout per build-id. */
#ifndef BT_DEBUGINFOD_CLIENT_H
#define BT_DEBUGINFOD_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "elf/buildid.h"

struct bt_debuginfod;

struct bt_debuginfod_opts {
	unsigned timeout_ms;   /* one lookup, connection included; 0: 10 s */
};

struct bt_debuginfod_stats {
	uint64_t requests;     /* lookups started */
	uint64_t found;
	uint64_t failed;       /* not found, server errors, timeouts */
	uint64_t timeouts;
};

/* True when DEBUGINFOD_URLS names at least one server. */
bool bt_debuginfod_configured(void);

/* Starts the worker. 0, -EPERM (its cache is not trusted: bt_debuginfod_cache_check), -ENOSYS
 * (libdebuginfod unusable), -ENOMEM or -errno. */
int bt_debuginfod_new(const struct bt_debuginfod_opts *o, struct bt_debuginfod **out);

/* The directory libdebuginfod keeps its downloads in, chosen as it documents it
 * (debuginfod-client-config(7)): $DEBUGINFOD_CACHE_PATH; else ~/.debuginfod_client_cache while it
 * exists; else $XDG_CACHE_HOME/debuginfod_client; else ~/.cache/debuginfod_client. 0 or -errno. */
int bt_debuginfod_cache_dir(char *buf, size_t len);

/* Whether that directory can be trusted (base/trustdir.h): libdebuginfod opens, creates and
 * removes files in it by path, so one that another user can change (root's HOME left pointing to
 * a user's) could hand it a FIFO or a symlink. 0, or -EPERM with why (may be NULL) saying which
 * directory and how, or -errno. */
int bt_debuginfod_cache_check(char *why, size_t whylen);

/* Queues a lookup of id's debug file; never blocks on the network. 0 when queued, -EALREADY when
 * it is queued, running or already answered with a file, -ENOENT when it already failed in this
 * session, -ENOMEM. */
int bt_debuginfod_request(struct bt_debuginfod *c, const struct bt_build_id *id);

/* Called once per finished lookup: on success fd is the debug file (owned by the client: dup it to
 * keep it) and path its location in libdebuginfod's cache; on failure fd is -1 and err -errno. */
typedef void (*bt_debuginfod_fn)(void *ctx, const struct bt_build_id *id, int fd, const char *path,
				 int err);

/* Delivers the lookups finished so far. When none is ready it waits up to timeout_ms for one
 * (0: returns at once; a negative value: until every queued lookup has finished). Returns the
 * number delivered, or -errno. */
int bt_debuginfod_poll(struct bt_debuginfod *c, bt_debuginfod_fn fn, void *ctx, int timeout_ms);

/* Lookups queued or running. */
unsigned bt_debuginfod_pending(struct bt_debuginfod *c);

void bt_debuginfod_get_stats(struct bt_debuginfod *c, struct bt_debuginfod_stats *out);

/* Stops the worker (a lookup in flight is abandoned) and frees everything. */
void bt_debuginfod_free(struct bt_debuginfod *c);

#endif
