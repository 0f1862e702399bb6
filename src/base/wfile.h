/* wfile.h - files written into a directory given as an fd without ever following a link: a new file
 * under a random temporary name (O_CREAT|O_EXCL|O_NOFOLLOW, 0600 by default), renamed over the
 * final name within that directory once complete; on failure only that temporary file is removed. */
#ifndef BT_WFILE_H
#define BT_WFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#define BT_WFILE_MODE 0600

struct bt_wfile {
	int fd;               /* where to write; -1 once committed or aborted */
	int dirfd;            /* the directory holding tmp and name */
	bool own_dir;         /* dirfd was opened here and is closed here */
	bool direct;          /* fd is an existing device, FIFO or trusted link, written in place */
	char tmp[32];         /* the temporary name in dirfd; "" when direct */
	char name[NAME_MAX + 1];
	dev_t dev;            /* the temporary file's identity */
	ino_t ino;
};

/* A writer that holds nothing yet: bt_wfile_abort on it does nothing. */
#define BT_WFILE_INIT { .fd = -1, .dirfd = -1 }


/* Creates a temporary file in dirfd (borrowed, kept open by the caller until commit) that
 * bt_wfile_commit renames to name, a plain name without '/'. Returns the fd or -errno
 * (-EINVAL for a name with '/', ".", ".."). */
int bt_wfile_open(struct bt_wfile *w, int dirfd, const char *name, mode_t mode);

/* bt_wfile_open in path's directory (links in the directory part are followed: the caller chose
 * it), for path's last component, whatever is there now. fd or -errno. */
int bt_wfile_create(struct bt_wfile *w, const char *path, mode_t mode);

/* For a path the invoking user named (-o FILE), which may also be a device or a FIFO (/dev/null, a
 * pipe): a missing or regular file is written as by bt_wfile_open in its parent directory (the
 * final name replaced, never followed); an existing device, FIFO or symbolic link is written in
 * place only when it belongs to the caller or root, and is never removed. Returns the fd, -EISDIR,
 * -EPERM for a link, FIFO or device of another user, or -errno. */
int bt_wfile_open_path(struct bt_wfile *w, const char *path, mode_t mode);

/* Whether bt_wfile_commit could rename the temporary file over the final name with the
 * credentials and capabilities in effect now: the directory writable and searchable (access with
 * the effective ids), and, in a sticky directory (/tmp), an existing final name ours or the
 * directory ours (as without CAP_FOWNER). 0 (also for a file written in place), or -EACCES,
 * -EROFS ... */
int bt_wfile_check_commit(const struct bt_wfile *w);

/* Closes the file and renames the temporary file to the final name (after checking that the
 * temporary name still is the file written). On failure the temporary file is removed.
 * 0 or -errno; w is released either way. */
int bt_wfile_commit(struct bt_wfile *w);

/* Closes the file and removes the temporary file, if it still is ours; nothing else is removed.
 * A no-op after commit or abort. */
void bt_wfile_abort(struct bt_wfile *w);

/* Writes all len bytes of buf to fd (again after EINTR and short writes). 0 or -errno (-EIO for a
 * write of nothing). */
int bt_write_all(int fd, const void *buf, size_t len);

/* A scratch file in directory dir that no name ever leads to: O_TMPFILE|O_EXCL (never linked), or
 * where the file system lacks it a new file under a random name (O_CREAT|O_EXCL|O_NOFOLLOW) removed
 * at once; mode 0600, read-write, close-on-exec. It goes when the fd is closed. fd or -errno. */
int bt_wfile_scratch(const char *dir);

/* A stdio stream writing into w's file, through a close-on-exec duplicate of its descriptor (a
 * command started later must not inherit it). NULL with errno on failure; fclose it before
 * bt_wfile_commit. */
FILE *bt_wfile_stream(const struct bt_wfile *w);

/* Opens a directory for writing into it without following a link at its last component
 * (O_DIRECTORY|O_NOFOLLOW), for fchown or as the dirfd of bt_wfile_open. fd or -errno (-ELOOP: a
 * link). */
int bt_wfile_open_dir(const char *path);

#endif
