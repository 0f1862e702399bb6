/* cmdtab.c - the table of subcommands: the dispatcher (main.c) runs them from it, and
 * tools/gendoc.c makes a man page of each and the shell completion from their docs. */
#include "cmd/cli/commands.h"

const struct bt_command bt_commands[] = {
	{ "record", cmd_record, bt_record_doc },
	{ "report", cmd_report, bt_report_doc },
	{ "symbolize", cmd_symbolize, bt_symbolize_doc },
	{ "cache", cmd_cache, bt_cache_doc },
	{ "archive", cmd_archive, bt_archive_doc },
	{ "buildid-list", cmd_buildid_list, bt_buildid_list_doc },
	{ "trace", cmd_trace, bt_trace_doc },
	{ "probe", cmd_probe, bt_probe_doc },
	{ "agent", cmd_agent, bt_agent_doc },
};

const size_t bt_ncommands = sizeof(bt_commands) / sizeof(bt_commands[0]);
