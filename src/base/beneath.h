/* beneath.h - paths opened and created under a directory fd without following any link on the way
 * (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, or O_NOFOLLOW at each step): a directory others can
 * write, such as a build-id cache, cannot send a reader or writer anywhere else. */
#ifndef BT_BENEATH_H
#define BT_BENEATH_H

#include <sys/types.h>

/* openat2(root, rel, flags) with no link and no ".." escape allowed. fd or -errno (-ELOOP: a link
 * on the way, -EXDEV: an escape). */
int bt_beneath_open(int root, const char *rel, int flags);

/* A regular file under root for reading, checked before it is opened (O_PATH, fstat, then the
 * same file reopened): never a FIFO or a device. fd or -errno (-EINVAL: not a regular file). */
int bt_beneath_open_reg(int root, const char *rel);

/* The directory that holds rel's last component, opened as by bt_beneath_open, with *base pointing
 * at that component inside rel: for fstatat, readlinkat, unlinkat on the entry itself. fd or
 * -errno. */
int bt_beneath_parent(int root, const char *rel, const char **base);

/* Creates the directories of rel under root as needed (mode), none through a link; the last one
 * opened O_RDONLY|O_DIRECTORY. fd or -errno. */
int bt_beneath_mkdirs(int root, const char *rel, mode_t mode);

#endif
