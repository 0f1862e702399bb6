/* outfile.c - see outfile.h. */
#include "cmd/live/outfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/caps.h"
#include "cmd/cli/cli.h"

void bt_out_owner_init(struct bt_out_owner *own, const char *keep)
{
	memset(own, 0, sizeof(*own));
	own->keep = keep;
	if (bt_launch_user_for(getenv("SUDO_UID"), getenv("SUDO_GID"), geteuid(), false, &own->sudo))
		own->sudo.drop = false;
}

void bt_out_owner_free(struct bt_out_owner *own)
{
	bt_userfiles_stop(own->uf);
	own->uf = NULL;
}

/* As the user who called sudo: 0 with o->f set, or -errno. */
static int open_as_user(struct bt_outfile *o, struct bt_out_owner *own)
{
	int err = own->uf ? 0 : bt_userfiles_start(&own->sudo, &own->uf);
	int fd = err ? err : bt_userfiles_create(own->uf, o->path, &o->id);
	if (fd < 0)
		return fd;
	if (!(o->f = fdopen(fd, "we"))) {
		err = -errno;
		close(fd);
		bt_userfiles_abort(own->uf, o->id);
		return err;
	}
	o->uf = own->uf;
	return 0;
}

static int check_commit(void *w)
{
	return bt_wfile_check_commit(w);
}

/* As this process: created now, with the capabilities it has, and checked to be renamed into place
 * at the end with only those it keeps. */
static int open_as_self(struct bt_outfile *o, const struct bt_out_owner *own)
{
	int fd = bt_wfile_open_path(&o->w, o->path, BT_WFILE_MODE);
	if (fd < 0)
		return fd;
	int err = o->w.direct ? 0 : bt_caps_with_only(own->keep, check_commit, &o->w);
	if (!err && !(o->f = bt_wfile_stream(&o->w)))
		err = -errno;
	if (err)
		bt_wfile_abort(&o->w);
	return err;
}

int bt_out_open(struct bt_outfile *o, struct bt_out_owner *own)
{
	o->f = stdout;
	o->w = (struct bt_wfile)BT_WFILE_INIT;
	o->uf = NULL;
	if (!o->path || !strcmp(o->path, "-"))
		return 0;
	o->f = NULL;
	if (own->sudo.drop) {
		int err = open_as_user(o, own);
		/* only a place the user may not write is left to root */
		if (err != -EACCES && err != -EPERM)
			return err;
	}
	return open_as_self(o, own);
}

const char *bt_out_error(const struct bt_out_owner *own, int err)
{
	if (err == -EACCES)
		return own->sudo.drop ? "permission denied to the user who called sudo, and to root once it "
					"has dropped its capabilities (it keeps none to write where it may not)" :
					"permission denied once buildtrace has dropped its capabilities (it keeps none "
					"to write where it may not)";
	return bt_cli_write_error(err);
}

int bt_out_finish(struct bt_outfile *o, int err)
{
	if (o->f == stdout)
		return err;
	if (fclose(o->f) != 0 && !err)
		err = -errno;
	o->f = NULL;
	if (o->uf) {
		if (err)
			bt_userfiles_abort(o->uf, o->id);
		else
			err = bt_userfiles_commit(o->uf, o->id);
		o->uf = NULL;
		return err;
	}
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
	if (o->uf)
		bt_userfiles_abort(o->uf, o->id);
	o->uf = NULL;
	bt_wfile_abort(&o->w);
}
