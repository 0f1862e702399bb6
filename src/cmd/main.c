/* main.c - buildtrace's entry point: dispatches subcommands; without one, runs the live session. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cli/commands.h"
#include "cmd/record/recordopts.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{ "record", cmd_record, "profile processes live (the default)" },
	{ "report", cmd_report, "convert a saved profile (folded -> svg ...)" },
	{ "symbolize", cmd_symbolize, "name addresses of a file, a process or a build-id" },
	{ "cache", cmd_cache, "list, add, remove or prune build-id cache entries" },
	{ "archive", cmd_archive, "write build-id cache entries to a tar archive" },
	{ "buildid-list", cmd_buildid_list, "list the build-ids of the files processes map, live" },
	{ "trace", cmd_trace, "count the hits of uprobes and SDT markers per stack, placed by build-id" },
	{ "probe", cmd_probe, "add, list or remove probes of the probe cache (perf's layout)" },
	{ "agent", cmd_agent, "sample the whole machine always, a profile per interval (fleet agent)" },
};

static void usage(FILE *f)
{
	bt_record_usage(f);
	fprintf(f, "\nSubcommands: buildtrace SUBCOMMAND [ARGS] (buildtrace SUBCOMMAND --help for its options)\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].help);
}

int main(int argc, char **argv)
{
	/* Large transient buffers (the kernel's BTF while the programs load, a file read whole) go
	 * back to the system when freed: with malloc's adaptive threshold they would land in the
	 * heap after the first one and stay resident in a long-running agent. */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--version")) {
		printf("buildtrace %s\n", BT_VERSION);
		return 0;
	}
	if (argc > 1 && argv[1][0] != '-') {
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[1], commands[i].name))
				return commands[i].run(argc - 1, argv + 1);
		fprintf(stderr, "buildtrace: unknown subcommand '%s' (to profile a program: buildtrace [OPTIONS] "
			"-- %s ...; see buildtrace --help)\n", argv[1], argv[1]);
		return 2;
	}
	return cmd_record(argc, argv);
}
