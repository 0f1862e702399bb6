/* agentconf.h - the fleet agent's settings: defaults, a "key = value" config file, command-line
 * options on top, and the checks that name what is wrong. */
#ifndef BT_AGENTCONF_H
#define BT_AGENTCONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/cli/opts.h"
#include "cmd/net/push.h"

#define BT_AGENT_MAX_LABELS 16
#define BT_AGENT_STR 512
#define BT_AGENT_MAX_HEADERS 8
#define BT_AGENT_MAX_RULES 64
#define BT_AGENT_RULE_LEN 1024
#define BT_AGENT_MAX_ENV 16
/* process-data-max by default: with the agent's own tables, within the unit's MemoryMax=256M */
#define BT_AGENT_PROCESS_DATA (64ULL << 20)

struct bt_agent_conf {
	char output_dir[BT_AGENT_STR];   /* default /var/lib/buildtrace/profiles */
	double interval_s;               /* default 60 */
	unsigned freq_hz;                /* default 19 */
	bool fmt_pprof, fmt_folded;      /* default both */
	unsigned max_files;              /* per format; default 60 */
	char push_url[BT_AGENT_STR];     /* "" : no push */
	char app_name[128];              /* service_name of processes no rule names; "" (the default):
					  * "unspecified", as Grafana Alloy */
	struct bt_push_label labels[BT_AGENT_MAX_LABELS];
	size_t nlabels;
	char user[64];                   /* "" : stay root */
	char spool_dir[BT_AGENT_STR];    /* default OUTPUT_DIR/spool */
	unsigned spool_max_files;        /* default 100 */
	uint64_t spool_max_bytes;        /* default 64 MiB */
	uint64_t process_data_max;       /* what profiled processes' perf maps, jitdumps and Python code
					  * objects may make the agent hold in all; default BT_AGENT_PROCESS_DATA */
	char status_file[BT_AGENT_STR];  /* default OUTPUT_DIR/status.json */
	double evict_s;                  /* symbol tables unused this long are dropped; default 600 */
	size_t ringbuf_bytes;            /* default 4 MiB */
	bool dwarf;                      /* call-graph: dwarf-copy (the stack copy) */
	bool bpf_unwind;                 /* call-graph: dwarf-bpf (the walk in BPF) */
	unsigned ustack_bytes;           /* call-graph: dwarf,SIZE; 0 the default */
	bool lines;                      /* lines: source lines in pprof profiles (default no) */
	/* Pushing */
	bool push_folded;                /* push-format: folded, else pprof (the default) */
	bool push_empty;                 /* push-empty: send intervals without samples (default no) */
	char basic_auth_file[BT_AGENT_STR];   /* a file holding USER:PASSWORD; "" none */
	char bearer_token_file[BT_AGENT_STR]; /* a file holding the token; "" none */
	char headers[BT_AGENT_MAX_HEADERS][256]; /* header: "Name: value", e.g. X-Scope-OrgID: team */
	size_t nheaders;
	char ca_file[BT_AGENT_STR];      /* ca-file: certificates to verify the server with; "" the system's */
	bool tls_verify;                 /* tls-verify: default yes */
	double drain_s;                  /* push-drain: at stop, how long to go on sending (default 10) */
	bool sample_labels;              /* sample-labels: pid, tid, comm, exe, build-id, cgroup (default yes) */
	bool idle;                       /* idle: count idle CPU time as swapper (default no) */
	bool off_cpu;                    /* off-cpu: off-CPU time too, a profile type of its own (default no) */
	char listen[BT_AGENT_STR];       /* listen: ADDR:PORT, PORT or unix:PATH of the pull endpoint; "" none */
	char listen_token_file[BT_AGENT_STR]; /* listen-token-file: the token pull requests carry */
	char listen_host[256];           /* listen-host: a host name the pull endpoint answers to */
	/* Targets: each process's labels, and so its series */
	char relabel[BT_AGENT_MAX_RULES][BT_AGENT_RULE_LEN];  /* relabel: rules, in order (checked) */
	size_t nrelabel;
	char target_env[BT_AGENT_MAX_ENV][64];  /* target-env: variables read as __meta_process_env_NAME */
	size_t ntarget_env;
	unsigned max_series;             /* max-series: series per interval, besides "other" (default 100) */
};

/* The defaults. */
void bt_agent_conf_defaults(struct bt_agent_conf *c);

/* Sets one setting by its config-file key ("interval", "format", "label" ...); the command-line
 * options use the same keys. 0, or -EINVAL / -ERANGE / -ENAMETOOLONG / -E2BIG (too many labels)
 * with a message in err naming the key and what is expected; -ENOENT for an unknown key. */
int bt_agent_conf_set(struct bt_agent_conf *c, const char *key, const char *value, char *err, size_t errlen);

/* The settings as options (cli/opts.h), in the order --help lists them: each one's long name is its
 * key. Their ids are first + their index, but for those with a short form (freq: 'F'). How many were
 * written, at most max. */
size_t bt_agent_conf_options(struct bt_opt *out, size_t max, int first);

/* The other spelling config files may give a key (output_dir for output-dir), or NULL. */
const char *bt_agent_conf_alias(const char *key);

/* Reads a config file: "key = value" lines, '#' comments, blank lines. 0 or -errno, with a message
 * naming the file and line in err. */
int bt_agent_conf_load(struct bt_agent_conf *c, const char *path, char *err, size_t errlen);

/* Fills the settings derived from others (spool and status paths under the output directory) and
 * checks the whole: 0 or -EINVAL with a message. */
int bt_agent_conf_finish(struct bt_agent_conf *c, char *err, size_t errlen);

#endif
