/* outfile.c - see outfile.h. */
#include "cmd/live/outfile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int bt_out_open(struct bt_outfile *o)
{
	o->f = stdout;
	o->w.fd = -1;
	if (!o->path || !strcmp(o->path, "-"))
		return 0;
	o->f = NULL;
	/* A new file 0600, as profiles hold other users' stacks; a device or a FIFO (-o /dev/null, a
	 * pipe) is written in place, and never removed. */
	int fd = bt_wfile_open_path(&o->w, o->path, BT_WFILE_MODE);
	if (fd < 0)
		return fd;
	int dfd = dup(fd);
	if (dfd < 0 || !(o->f = fdopen(dfd, "w"))) {
		int e = -errno;
		if (dfd >= 0)
			close(dfd);
		bt_wfile_abort(&o->w);
		return e;
	}
	return 0;
}

int bt_out_finish(struct bt_outfile *o, int err)
{
	if (o->f == stdout)
		return err;
	if (fclose(o->f) != 0 && !err)
		err = -errno;
	o->f = NULL;
	if (err)
		bt_wfile_abort(&o->w);
	else
		err = bt_wfile_commit(&o->w);
	return err;
}

void bt_out_discard(struct bt_outfile *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	o->f = NULL;
	bt_wfile_abort(&o->w);
}
