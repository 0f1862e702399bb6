/* recordopts.h - the live session's command line (`buildtrace [OPTIONS] [-- COMMAND...]`): perf's
 * spellings, every value checked, and errors naming the option and what it expects. */
#ifndef BT_RECORDOPTS_H
#define BT_RECORDOPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cmd/live/live.h"
#include "cmd/live/outfile.h"
#include "output/output.h"

#define BT_RECORD_MAX_CPUS 4096
/* --off-cpu-rate's default: off-CPU stacks taken per second per CPU at most. */
#define BT_RECORD_OFFCPU_RATE BT_LIVE_OFFCPU_RATE

struct bt_record_args {
	int *pids;
	size_t npids;
	bool pid_opt;        /* -p was given */
	int *tids;           /* -t: only these threads' samples; their processes are in pids */
	size_t ntids;
	bool all;
	bool cpus[BT_RECORD_MAX_CPUS]; /* -C: the CPUs to sample, when cpu_list */
	bool cpu_list;
	unsigned freq;
	double duration;     /* seconds; 0: until stopped */
	const char *output;  /* NULL: stdout */
	const char *format;
	enum bt_format fmt;
	struct bt_outfile *also;   /* --also-write FMT:FILE: more formats of the same profile */
	size_t nalso;
	bool user, kernel;
	const char *cache_dir;
	bool no_debuginfod;
	bool no_cache;
	size_t cache_max_size, cache_max_file;  /* 0: the defaults */
	int verbose;
	size_t ringbuf_bytes;
	bool per_pid;
	bool per_tid;        /* --per-thread */
	bool live;           /* force the live view on or off; default: when stderr is a terminal */
	bool live_set;
	bool dwarf;          /* --call-graph dwarf-copy: user stacks unwound with call frame information */
	bool bpf_unwind;     /* --call-graph dwarf-bpf: the same, walked in BPF from compiled tables */
	unsigned ustack_bytes; /* --call-graph dwarf,SIZE; 0: the default */
	bool lines;          /* --lines: source lines (and inlined functions) in pprof and json */
	bool off_cpu;        /* --off-cpu: off-CPU time too, and the one-value outputs show it */
	bool wall;           /* --wall: on-CPU and off-CPU time in one unit, a thread's total its wall time */
	unsigned offcpu_states; /* --off-cpu-states: 1 << enum bt_offcpu_state; 0: all */
	double offcpu_min;   /* --off-cpu-min, seconds; 0: none */
	unsigned offcpu_rate; /* --off-cpu-rate: stacks per second per CPU; 0: no bound */
	bool offcpu_rate_set;
	char **cmd;          /* COMMAND [ARGS...] to start and profile; NULL: none */
	bool keep_root;      /* --keep-root: run the command as root even under sudo */
};

/* Fills a (zeroed by the caller) from argv, argv[0] being the command's name. 0; 1 when --help or
 * --version was printed (exit 0); else the exit code after saying on stderr what is wrong. */
int bt_record_parse(int argc, char **argv, struct bt_record_args *a);

/* Frees what bt_record_parse allocated. */
void bt_record_args_free(struct bt_record_args *a);

#endif
