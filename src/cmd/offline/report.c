/* report.c - `buildtrace report FILE -f FORMAT [-o OUT]`: converts a saved profile (folded or
 * pprof) offline. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "base/wfile.h"
#include "cmd/cli/cli.h"
#include "cmd/cli/commands.h"
#include "cmd/cli/opts.h"
#include "output/folded.h"
#include "output/output.h"
#include "output/pprof.h"
#include "session/profile.h"

/* Input is read whole: at most this much (the help says it). */
#define REPORT_MAX_INPUT_MIB 256
#define REPORT_MAX_INPUT ((size_t)REPORT_MAX_INPUT_MIB << 20)
#define STR(x) STR_(x)
#define STR_(x) #x

enum { OPT_TITLE = BT_OPT_LONG };

static const struct bt_opt report_opts[] = {
	{ .kind = BT_OPT_OPERAND, .arg = "FILE", .help = "folded stacks, or a pprof profile (gzip-compressed, "
	  "or FILE.pb / FILE.pprof uncompressed); - reads standard input" },
	{ 'f', "format", "FORMAT", "folded, svg, pprof or json", .def = "folded", .values = "@format-totals" },
	{ 'o', "output", "OUT", "where to write (default: standard output)", .values = "@file" },
	{ OPT_TITLE, "title", "TEXT", "the flame graph's title" },
	{ 'h', "help", NULL, "this text" },
	BT_OPT_END,
};

static const struct bt_cmd_doc report_doc = {
	.name = "buildtrace report",
	.summary = "convert a saved profile (folded -> svg ...)",
	.usage = "buildtrace report FILE.folded|FILE.pb.gz [-f FORMAT] [-o OUT] [--title TEXT]",
	.about = "Converts a saved profile, folded stacks or pprof, into another format. It reads at most "
		 STR(REPORT_MAX_INPUT_MIB) " MiB of input; a pprof profile may be at most 128 MiB once "
		 "decompressed.",
	.opts = report_opts,
	.operands = "@file",
};

const struct bt_cmd_doc *bt_report_doc(void)
{
	return &report_doc;
}

/* Whether the whole input is a pprof profile: gzip data always is, an uncompressed one is named so. */
static bool is_pprof(const char *name, const void *buf, size_t len)
{
	size_t n = strlen(name);
	return bt_pprof_is_gzip(buf, len) || (n > 3 && !strcmp(name + n - 3, ".pb")) ||
	       (n > 6 && !strcmp(name + n - 6, ".pprof"));
}

/* The most report reads of its input, whatever the format: more is refused, not read to the end
 * (`report /dev/zero`). */

/* Reads all of fd into a malloc'ed *buf, at most max bytes: 0, -EFBIG past max, -ENOMEM, -errno. */
static int read_capped(int fd, size_t max, char **buf, size_t *len)
{
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > max)
		return -EFBIG;
	size_t cap = 0, n = 0;
	char *b = NULL;
	for (;;) {
		if (n == cap) {
			/* one byte past max tells "exactly max" from "more" */
			size_t ncap = cap ? (cap > max / 2 ? max + 1 : cap * 2) : 65536;
			if (cap == max + 1) {
				free(b);
				return -EFBIG;
			}
			char *nb = realloc(b, ncap);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap = ncap;
		}
		ssize_t k = read(fd, b + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int err = -errno;
			free(b);
			return err;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	if (n > max) {
		free(b);
		return -EFBIG;
	}
	*buf = b;
	*len = n;
	return 0;
}

/* Reads the profile to convert into p (initialised), whichever format it is in. 0, or the exit code
 * after printing why it failed. */
static int read_input(const char *input, struct bt_profile *p, const char **source)
{
	int fd = strcmp(input, "-") ? open(input, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (fd < 0)
		return bt_cli_error(1, "cannot read %s: %s", input, strerror(errno));
	/* the whole input first: standard input cannot be read twice */
	char *buf = NULL;
	size_t len = 0;
	int err = read_capped(fd, REPORT_MAX_INPUT, &buf, &len);
	if (fd != STDIN_FILENO)
		close(fd);
	if (err == -EFBIG)
		return bt_cli_error(1, "%s: larger than %zu MiB, the most report reads", input,
				    REPORT_MAX_INPUT >> 20);
	if (err)
		return bt_cli_error(1, "cannot read %s: %s", input, strerror(-err));
	*source = "folded";
	if (is_pprof(input, buf, len)) {
		*source = "pprof";
		err = bt_pprof_decode(buf, len, p);
		free(buf);
		if (err == -EINVAL)
			return bt_cli_error(1, "%s: not a valid pprof profile", input);
		if (err == -EFBIG)
			return bt_cli_error(1, "%s: pprof profile too large to convert (the limits: %zu MiB "
					    "decompressed, %zu times its size in memory decoded, 2^20 frames in "
					    "a sample, 2^27 in all, 256 MiB of folded stacks)", input,
					    BT_PPROF_MAX_BYTES >> 20, BT_PPROF_DECODE_FACTOR);
		if (err)
			return bt_cli_error(1, "cannot read %s: %s", input, strerror(-err));
		return 0;
	}
	size_t bad = 0;
	struct bt_folded f = { 0 };
	FILE *text = len ? fmemopen(buf, len, "r") : NULL;
	if (len)
		err = text ? bt_folded_parse(text, &f, &bad) : -errno;
	if (text)
		fclose(text);
	free(buf);
	if (!err)
		err = bt_folded_to_profile(&f, p);
	bt_folded_free(&f);
	if (err == -EINVAL)
		return bt_cli_error(1, "%s:%zu: not a folded stack line (expected 'frame;frame;... COUNT')",
				    input, bad);
	if (err)
		return bt_cli_error(1, "cannot read %s: %s", input, strerror(-err));
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct bt_getopt g;
	if (bt_opts_getopt(report_opts, ":", &g))
		return bt_cli_error(1, "too many options");
	const char *format = "folded", *output = NULL, *title = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'o': output = optarg; break;
		case OPT_TITLE: title = optarg; break;
		case 'h': bt_opts_usage(stdout, &report_doc); return 0;
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
	if (bt_format_per_sample(fmt))
		return bt_cli_error(2, "-f %s shows samples one by one, in time: a saved profile holds their totals "
				    "only (write it from the session: buildtrace -f %s ...)", format, format);
	const char *input = argv[optind];
	struct bt_profile p;
	bt_profile_init(&p);
	const char *source = NULL;
	int err = read_input(input, &p, &source);
	if (err) {
		bt_profile_free(&p);
		return err;
	}
	/* A new file 0600 beside OUT, renamed over it once complete; a device or FIFO written in place.
	 * After a failure only the temporary file is removed, never what OUT names. */
	if (output && !strcmp(output, "-"))
		output = NULL;
	struct bt_wfile w = { .fd = -1 };
	FILE *out = stdout;
	if (output) {
		int fd = bt_wfile_open_path(&w, output, BT_WFILE_MODE);
		if (fd < 0 || !(out = bt_wfile_stream(&w))) {
			int e = fd < 0 ? fd : -errno;
			bt_wfile_abort(&w);
			bt_profile_free(&p);
			return bt_cli_error(1, "cannot write %s: %s", output, bt_cli_write_error(e));
		}
	}
	struct bt_output_opts oo = { .title = title, .source = source };
	err = bt_output_profile(&p, fmt, &oo, out);
	bt_profile_free(&p);
	if (out != stdout && fclose(out) != 0 && !err)
		err = -errno;
	else if (out == stdout && fflush(stdout) != 0 && !err)
		err = -errno;
	if (output && err)
		bt_wfile_abort(&w);
	else if (output)
		err = bt_wfile_commit(&w);
	if (err)
		return bt_cli_error(1, "writing %s failed: %s", output ? output : "the output", strerror(-err));
	return 0;
}
