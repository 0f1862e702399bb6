/* traceopts.h - `buildtrace trace`'s command line and the probes it names, resolved into the places
 * they are attached (shared with `buildtrace probe`, which resolves the same specs for the cache). */
#ifndef BT_TRACEOPTS_H
#define BT_TRACEOPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "bt_trace.h"
#include "output/output.h"
#include "session/probes.h"

struct bt_trace_args {
	int *pids;
	size_t npids;
	bool all;
	double duration;         /* seconds; 0: until stopped */
	const char *output;      /* NULL: stdout */
	const char *format;
	enum bt_format fmt;
	unsigned key_arg;        /* --key argN: N (from 1); 0: no key */
	bool key_str;            /* --key argN:str */
	bool latency;
	bool no_bid_check;
	bool force;              /* resolve again, the probe cache notwithstanding */
	bool dwarf;
	unsigned ustack_bytes;
	const char *cache_dir;
	size_t ringbuf_bytes;
	bool live, live_set;
	int verbose;
	bool keep_root;
	struct bt_probe_spec *specs;
	size_t nspecs;
	char **cmd;
};

/* One place a probe is attached: spec number probe (the attachment's cookie) in file. */
struct bt_trace_place {
	unsigned probe;
	struct bt_probe_file file;   /* owns file.fd */
	struct bt_probe_site site;
	struct bt_trace_probe_cfg cfg;
	bool from_cache;             /* the site came from the probe cache */
};

struct bt_trace_places {
	struct bt_trace_place *v;
	size_t n, cap;
	bool warned_no_bid;
};

/* Fills a from argv (argv[0] the subcommand). 0; 1 after --help (exit 0); else the exit code after
 * saying what is wrong. */
int bt_trace_parse(int argc, char **argv, struct bt_trace_args *a);
void bt_trace_args_free(struct bt_trace_args *a);

/* Every spec of a resolved into places: in each process of a->pids that maps its file, else in
 * the file its path (or the cache) names. 0, or the exit code after saying what is wrong. */
int bt_trace_resolve(const struct bt_trace_args *a, struct bt_trace_places *out);
void bt_trace_places_free(struct bt_trace_places *p);

#endif
