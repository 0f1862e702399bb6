/* commands.h - buildtrace's subcommands, each in its program's folder of src/cmd/, dispatched by
 * src/cmd/main.c from the table in src/cmd/cmdtab.c. Each takes argv with argv[0] being the
 * subcommand's name, and returns the process exit code; each has its options' table (cli/opts.h). */
#ifndef BT_COMMANDS_H
#define BT_COMMANDS_H

#include <stddef.h>

struct bt_cmd_doc;

int cmd_record(int argc, char **argv);        /* buildtrace [-p PID | -a] ...: the live session */
int cmd_buildid_list(int argc, char **argv);  /* buildtrace buildid-list */
int cmd_symbolize(int argc, char **argv);     /* buildtrace symbolize */
int cmd_report(int argc, char **argv);        /* buildtrace report */
int cmd_cache(int argc, char **argv);         /* buildtrace cache list|add|remove|prune */
int cmd_archive(int argc, char **argv);       /* buildtrace archive */
int cmd_agent(int argc, char **argv);         /* buildtrace agent: the always-on fleet agent */
int cmd_agent_targets(int argc, char **argv); /* buildtrace agent targets: processes as the agent names them */
int cmd_trace(int argc, char **argv);         /* buildtrace trace: uprobes and SDT markers, by build-id */
int cmd_probe(int argc, char **argv);         /* buildtrace probe add|list|remove: the probe cache */

/* Each command's usage, description and options. */
const struct bt_cmd_doc *bt_record_doc(void);
const struct bt_cmd_doc *bt_buildid_list_doc(void);
const struct bt_cmd_doc *bt_symbolize_doc(void);
const struct bt_cmd_doc *bt_report_doc(void);
const struct bt_cmd_doc *bt_cache_doc(void);
const struct bt_cmd_doc *bt_archive_doc(void);
const struct bt_cmd_doc *bt_agent_doc(void);
const struct bt_cmd_doc *bt_trace_doc(void);
const struct bt_cmd_doc *bt_probe_doc(void);

struct bt_command {
	const char *name;                       /* "agent"; "record" is also the session without one */
	int (*run)(int argc, char **argv);
	const struct bt_cmd_doc *(*doc)(void);
};

/* Every subcommand, in the order --help lists them (src/cmd/cmdtab.c). */
extern const struct bt_command bt_commands[];
extern const size_t bt_ncommands;

#define BT_VERSION "0.1.0"

#endif
