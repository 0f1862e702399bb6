/* outfile.h - where a command writes its profile: standard output, or a new file of mode 0600
 * written under a temporary name and renamed into place once complete (a device or FIFO the caller
 * may write is written in place). Whether it can be is settled before the session starts, for the
 * credentials buildtrace will have at the end: through sudo, the file is made by the user who
 * called sudo when that user may write there (it is then theirs), else by root as it will be once
 * it has dropped its capabilities. Shared by record and trace. */
#ifndef BT_OUTFILE_H
#define BT_OUTFILE_H

#include <stdio.h>

#include "base/wfile.h"
#include "cmd/live/launch.h"
#include "cmd/live/userfiles.h"
#include "output/output.h"

/* Who writes a command's outputs: one for all of them. */
struct bt_out_owner {
	const char *keep;              /* the capabilities kept once attached (bt_caps_drop's list) */
	struct bt_launch_user sudo;    /* the user who called sudo, when sudo.drop */
	struct bt_userfiles *uf;       /* writing as that user, started at the first such file */
};

/* A profile file: written under a temporary name and renamed once complete, so no reader ever sees
 * half a profile. A NULL path or "-" is standard output. */
struct bt_outfile {
	const char *path;
	enum bt_format fmt;
	struct bt_wfile w;             /* the file being written by this process, unless f is stdout */
	struct bt_userfiles *uf;       /* else the helper writing it as the user, as file id */
	unsigned id;
	FILE *f;
};

/* keep: the capabilities the command keeps once attached; the user who called sudo comes from
 * SUDO_UID and SUDO_GID when this process is root (unset, or not numbers: none). */
void bt_out_owner_init(struct bt_out_owner *own, const char *keep);
void bt_out_owner_free(struct bt_out_owner *own);

/* Opens o->path (NULL or "-": standard output) into o->f, as the user who called sudo when that
 * user may create it (and later rename it) there, else as this process, checked to be able to
 * rename it at the end with only own->keep. 0 or -errno (-EACCES: neither may); nothing is left
 * open on failure. */
int bt_out_open(struct bt_outfile *o, struct bt_out_owner *own);

/* What to say of bt_out_open's err. */
const char *bt_out_error(const struct bt_out_owner *own, int err);

/* After the profile was written into o->f with result err: closes the file and renames it into
 * place, or removes it when err (or closing) failed. Returns err, or the -errno of closing or
 * renaming. */
int bt_out_finish(struct bt_outfile *o, int err);

/* Closes what is still open and removes the temporary file (a no-op after bt_out_finish). */
void bt_out_discard(struct bt_outfile *o);

#endif
