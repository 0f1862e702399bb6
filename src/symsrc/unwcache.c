/* unwcache.c - the compiled tables' files in the build-id cache: written through bidcache's
 * derived-file store (a new 0600 file renamed into place), read only when this user (or root) owns
 * the file and no one else may write it, then checked whole by ehtfile. */
#include "symsrc/unwcache.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/pathfmt.h"
#include "elf/ehtfile.h"

#define NAME "unwtable"

int bt_unwcache_init(struct bt_unwcache *c, const char *dir, bool store)
{
	memset(c, 0, sizeof(*c));
	c->store = store;
	return dir ? bt_path_fmt(c->dir, sizeof(c->dir), "%s", dir) : bt_bidcache_default_dir(c->dir, sizeof(c->dir));
}

static int to_id(const uint8_t *bid, size_t len, struct bt_build_id *id)
{
	if (!bid || !len || len > BT_BUILD_ID_MAXLEN)
		return -EINVAL;
	id->len = (uint8_t)len;
	memcpy(id->data, bid, len);
	return 0;
}

int bt_unwcache_load(struct bt_unwcache *c, const uint8_t *bid, size_t len, struct bt_ehtable *t,
		     struct bt_elf_layout *lay)
{
	struct bt_build_id id;
	int err = to_id(bid, len, &id);
	if (err || !c->dir[0])
		return err ? err : -ENOENT;
	int fd = bt_bidcache_open_derived(c->dir, &id, NAME);
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) != 0)
		err = -errno;
	else if ((st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & 022))
		err = -EBADMSG;   /* derived data someone else could have written: made again */
	else
		err = bt_ehtfile_read(fd, bid, len, t, lay);
	close(fd);
	return err;
}

struct save_ctx {
	const uint8_t *bid;
	size_t len;
	const struct bt_ehtable *t;
	const struct bt_elf_layout *lay;
};

static int write_table(void *ctx, int fd)
{
	const struct save_ctx *s = ctx;
	return bt_ehtfile_write(fd, s->bid, s->len, s->t, s->lay);
}

int bt_unwcache_save(struct bt_unwcache *c, const uint8_t *bid, size_t len, const char *path,
		     const struct bt_ehtable *t, const struct bt_elf_layout *lay)
{
	struct bt_build_id id;
	int err = to_id(bid, len, &id);
	if (err)
		return err;
	if (!c->store || !c->dir[0])
		return -EPERM;
	struct save_ctx s = { bid, len, t, lay };
	return bt_bidcache_store_derived(c->dir, &c->budget, &id, path, NAME, write_table, &s);
}
