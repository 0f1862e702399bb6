/* outfile.h - where a command writes its profile: standard output, or a new file of mode 0600
 * written under a temporary name and renamed into place once complete (a device or FIFO the caller
 * may write is written in place). Shared by record and trace. */
#ifndef BT_OUTFILE_H
#define BT_OUTFILE_H

#include <stdio.h>

#include "base/wfile.h"
#include "output/output.h"

/* A profile file: written under a temporary name and renamed once complete, so no reader ever sees
 * half a profile. A NULL path or "-" is standard output. */
struct bt_outfile {
	const char *path;
	enum bt_format fmt;
	struct bt_wfile w;  /* the file being written, unless f is stdout */
	FILE *f;
};

/* Opens o->path (NULL or "-": standard output) into o->f. 0 or -errno; nothing is left open on
 * failure. */
int bt_out_open(struct bt_outfile *o);

/* After the profile was written into o->f with result err: closes the file and renames it into
 * place, or removes it when err (or closing) failed. Returns err, or the -errno of closing or
 * renaming. */
int bt_out_finish(struct bt_outfile *o, int err);

/* Closes what is still open and removes the temporary file (a no-op after bt_out_finish). */
void bt_out_discard(struct bt_outfile *o);

#endif
