/* userfiles.h - output files written as the user who called sudo: a helper process, forked while
 * buildtrace is still root and that user from then on, creates each file under a temporary name in
 * its directory (bt_wfile), hands its descriptor over, and renames it into place (or removes it)
 * when told, long after buildtrace itself has dropped the right to write there. Prints nothing. */
#ifndef BT_USERFILES_H
#define BT_USERFILES_H

#include "cmd/live/launch.h"

struct bt_userfiles;

/* Forks the helper, which becomes u's user for good (u->drop must be set), closes every descriptor
 * but its end of the channel, and is not dumpable: that user cannot trace it or borrow what it
 * holds. It exits, removing what was not committed, once *out is stopped or buildtrace is gone.
 * 0 or -errno. */
int bt_userfiles_start(const struct bt_launch_user *u, struct bt_userfiles **out);

/* The helper creates path as bt_wfile_open_path would (a new 0600 file under a temporary name,
 * or an existing device or FIFO of that user's or root's written in place), and checks that it can
 * rename it at the end. The descriptor for writing (close-on-exec), with *id naming the file in
 * the calls below, or -errno. */
int bt_userfiles_create(struct bt_userfiles *h, const char *path, unsigned *id);

/* The helper renames file id into place (bt_wfile_commit). 0 or -errno. */
int bt_userfiles_commit(struct bt_userfiles *h, unsigned id);

/* The helper removes file id's temporary file. */
void bt_userfiles_abort(struct bt_userfiles *h, unsigned id);

/* Ends the helper (what was neither committed nor aborted is removed) and waits for it. */
void bt_userfiles_stop(struct bt_userfiles *h);

#endif
