/* outfile.h - where a command writes its profile (struct bt_record_out, recordopts.h): standard
 * output, or a new file of mode 0600 written under a temporary name and renamed into place once
 * complete (a device or FIFO the caller may write is written in place). Shared by record and trace. */
#ifndef BT_OUTFILE_H
#define BT_OUTFILE_H

#include "cmd/recordopts.h"

/* Opens o->path (NULL or "-": standard output) into o->f. 0 or -errno; nothing is left open on
 * failure. */
int bt_out_open(struct bt_record_out *o);

/* After the profile was written into o->f with result err: closes the file and renames it into
 * place, or removes it when err (or closing) failed. Returns err, or the -errno of closing or
 * renaming. */
int bt_out_finish(struct bt_record_out *o, int err);

/* Closes what is still open and removes the temporary file (a no-op after bt_out_finish). */
void bt_out_discard(struct bt_record_out *o);

#endif
