/* trustdir.h - whether a directory, or the one that would be created there, can be changed by no
 * one but us and root: the test before a library is let loose in a directory it opens, creates
 * and deletes files in by path (libdebuginfod's cache). */
#ifndef BT_TRUSTDIR_H
#define BT_TRUSTDIR_H

#include <stdbool.h>
#include <stddef.h>

/* 0 when path (absolute), or when it does not exist yet the nearest directory above it that does,
 * belongs to us (the effective uid) or root and no one else may write it, and every directory
 * above belongs to us or root and is writable by others only when sticky (/tmp). Symlinks on the
 * way are resolved first. -EPERM when not, with why (may be NULL) saying which directory and how
 * ("/home/u belongs to uid 1000", "/srv/x may be written by others (mode 0777)"); -EINVAL for a
 * relative path; or -errno. */
int bt_dir_trusted(const char *path, char *why, size_t whylen);

/* What sshd's StrictModes accepts, for a file open as fd (named path in messages): a regular file
 * that belongs to us (the effective uid) or root, that neither its group nor others may write, and
 * whose directory bt_dir_trusted accepts (its real path: a link to the file is judged where it
 * leads); a secret (a token, a password) that neither its group nor others may read either. 0, or
 * -EPERM with why saying what is wrong ("/etc/x.conf belongs to uid 1000", "/etc/token may be read
 * by others (mode 0644)"), or -errno. */
int bt_file_trusted(int fd, const char *path, bool secret, char *why, size_t whylen);

#endif
