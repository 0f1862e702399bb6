/* procmeta.h - what /proc says of one process, for naming it: its comm, executable, command line,
 * cgroup (v2) and the values of a few environment variables named by the caller. Everything read
 * is text a profiled process chose: callers escape it wherever it leaves buildtrace. */
#ifndef BT_PROCMETA_H
#define BT_PROCMETA_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define BT_PROCMETA_CMDLINE_MAX 4096   /* bytes of command line kept */
#define BT_PROCMETA_MAX_ENV 16

struct bt_procmeta {
	int pid;
	char comm[64];           /* /proc/PID/comm; "" unknown */
	char exe[4096];          /* /proc/PID/exe's target (" (deleted)" kept); "" unknown (a kernel thread) */
	char *cmdline;           /* arguments joined by blanks, at most BT_PROCMETA_CMDLINE_MAX bytes; never NULL once read */
	char cgroup[4096];       /* the "0::" line of /proc/PID/cgroup; "" unknown */
	uid_t uid;               /* real uid, (uid_t)-1 unknown */
	bool env_read;           /* the environment was read: the process lets its owner read it */
	char *env[BT_PROCMETA_MAX_ENV];  /* values of the names asked for, NULL when unset */
};

/* Reads process pid under root ("" the real /proc). The environment is read for the variables in
 * env_names only, and only when the process is dumpable, the condition under which its owner may
 * read /proc/PID/environ (a process that made itself undumpable, such as one holding secrets, or a
 * set-id one, keeps its environment to itself); its other variables are never kept. 0, or -ENOENT
 * when the process is gone (m is then freed), -ENOMEM. Fields that cannot be read stay empty. */
int bt_procmeta_read(const char *root, int pid, const char *const *env_names, size_t nenv,
		     struct bt_procmeta *m);

void bt_procmeta_free(struct bt_procmeta *m);

/* The comm of thread tid of process pid now (/proc/PID/task/TID/comm) into buf: 0, or -ENOENT when
 * the thread is gone, -errno. */
int bt_procmeta_thread_comm(const char *root, int pid, int tid, char *buf, size_t len);

#endif
