/* commands.h - buildtrace's subcommands, each in its program's folder of src/cmd/, dispatched by
 * src/cmd/main.c. Each takes argv with argv[0] being the subcommand's name, and returns the process
 * exit code. */
#ifndef BT_COMMANDS_H
#define BT_COMMANDS_H

int cmd_record(int argc, char **argv);        /* buildtrace [-p PID | -a] ...: the live session */
int cmd_buildid_list(int argc, char **argv);  /* buildtrace buildid-list */
int cmd_symbolize(int argc, char **argv);     /* buildtrace symbolize */
int cmd_report(int argc, char **argv);        /* buildtrace report */
int cmd_cache(int argc, char **argv);         /* buildtrace cache list|add|remove|prune */
int cmd_archive(int argc, char **argv);       /* buildtrace archive */
int cmd_agent(int argc, char **argv);         /* buildtrace agent: the always-on fleet agent */
int cmd_trace(int argc, char **argv);         /* buildtrace trace: uprobes and SDT markers, by build-id */
int cmd_probe(int argc, char **argv);         /* buildtrace probe add|list|remove: the probe cache */

#define BT_VERSION "0.1.0"

#endif
