/* main.c - buildtrace's entry point: dispatches subcommands (src/cmd/cmdtab.c); without one, runs
 * the live session. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cli/commands.h"
#include "cmd/cli/opts.h"

static void usage(FILE *f)
{
	bt_opts_usage(f, bt_record_doc());
	fprintf(f, "\nSubcommands: buildtrace SUBCOMMAND [ARGS] (buildtrace SUBCOMMAND --help for its options)\n");
	for (size_t i = 0; i < bt_ncommands; i++)
		fprintf(f, "  %-14s %s\n", bt_commands[i].name, bt_commands[i].doc()->summary);
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
		for (size_t i = 0; i < bt_ncommands; i++)
			if (!strcmp(argv[1], bt_commands[i].name))
				return bt_commands[i].run(argc - 1, argv + 1);
		fprintf(stderr, "buildtrace: unknown subcommand '%s' (to profile a program: buildtrace [OPTIONS] "
			"-- %s ...; see buildtrace --help)\n", argv[1], argv[1]);
		return 2;
	}
	return cmd_record(argc, argv);
}
