/* cmd_report.c - `buildtrace report FILE -f FORMAT [-o OUT]`: converts a saved profile offline. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "output.h"
#include "profile.h"

static void report_usage(FILE *f)
{
	fprintf(f,
		"usage: buildtrace report FILE.folded [-f FORMAT] [-o OUT] [--title TEXT]\n"
		"  Converts a saved folded profile (\"-\" reads standard input).\n"
		"  -f, --format FORMAT  %s (default folded)\n"
		"  -o, --output OUT     default: standard output\n"
		"      --title TEXT     the flame graph's title\n", bt_format_names());
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *format = "folded", *output = NULL, *title = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'o': output = optarg; break;
		case 't': title = optarg; break;
		case 'h': report_usage(stdout); return 0;
		case ':': return bt_cli_error(2, "option '%s' needs an argument", argv[optind - 1]);
		default: return bt_cli_error(2, "unknown option '%s' (see buildtrace report --help)",
					     argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		return bt_cli_error(2, "report needs exactly one input file (see buildtrace report --help)");
	enum bt_format fmt;
	if (bt_format_parse(format, &fmt))
		return bt_cli_error(2, "unknown output format '%s' (supported: %s)", format, bt_format_names());
	const char *input = argv[optind];
	FILE *in = strcmp(input, "-") ? fopen(input, "re") : stdin;
	if (!in)
		return bt_cli_error(1, "cannot read %s: %s", input, strerror(errno));
	struct bt_folded f;
	size_t bad = 0;
	int err = bt_folded_parse(in, &f, &bad);
	if (in != stdin)
		fclose(in);
	if (err == -EINVAL)
		return bt_cli_error(1, "%s:%zu: not a folded stack line (expected 'frame;frame;... COUNT')",
				    input, bad);
	if (err)
		return bt_cli_error(1, "cannot read %s: %s", input, strerror(-err));
	FILE *out = stdout;
	if (output && strcmp(output, "-") && !(out = fopen(output, "we"))) {
		bt_folded_free(&f);
		return bt_cli_error(1, "cannot write %s: %s", output, strerror(errno));
	}
	struct bt_output_opts oo = { .title = title };
	err = bt_output_folded(&f, fmt, &oo, out);
	bt_folded_free(&f);
	if (out != stdout && fclose(out) != 0 && !err)
		err = -errno;
	if (err) {
		if (output)
			unlink(output);
		return bt_cli_error(1, "writing %s failed: %s", output ? output : "the output", strerror(-err));
	}
	return 0;
}
