/* archive.c - `buildtrace archive`: a tarball of build-id cache entries, to take symbols to another
 * machine. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symsrc/bidcache.h"
#include "elf/buildid.h"
#include "cmd/offline/cache.h"
#include "base/wfile.h"
#include "cmd/cli/cli.h"
#include "cmd/cli/commands.h"
#include "cmd/cli/opts.h"

enum { OPT_CACHE_DIR = BT_OPT_LONG };

static const struct bt_opt archive_opts[] = {
	{ .kind = BT_OPT_OPERAND, .arg = "BUILDID", .help = "the cache entry of this build-id" },
	{ .kind = BT_OPT_OPERAND, .arg = "FILE", .help = "the entries of every build-id found in FILE (such as "
	  "the output of buildtrace buildid-list)" },
	{ 'o', "output", "FILE.tar", "the archive to write (a new file, mode 0600)", .values = "@file" },
	{ OPT_CACHE_DIR, "cache-dir", "DIR", "the build-id cache", .def = "~/.debug", .values = "@dir" },
	{ 'h', "help", NULL, "this text" },
	BT_OPT_END,
};

static const struct bt_cmd_doc archive_doc = {
	.name = "buildtrace archive",
	.summary = "write build-id cache entries to a tar archive",
	.usage = "buildtrace archive [--cache-dir DIR] -o FILE.tar [BUILDID | FILE]...",
	.about = "Writes the build-id cache entries of the given build-ids, or of every build-id found in the "
		 "given files, or of the whole cache when none is given, to a tar archive: extracted into "
		 "another machine's ~/.debug, it lets buildtrace and perf name that machine's profiles there.",
	.opts = archive_opts,
	.operands = "@file",
};

const struct bt_cmd_doc *bt_archive_doc(void)
{
	return &archive_doc;
}

static int push_id(struct bt_build_id **ids, size_t *n, size_t *cap, const struct bt_build_id *id)
{
	for (size_t i = 0; i < *n; i++)
		if (bt_buildid_eq(&(*ids)[i], id))
			return 0;
	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 32;
		struct bt_build_id *nv = realloc(*ids, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*ids = nv;
		*cap = ncap;
	}
	(*ids)[(*n)++] = *id;
	return 0;
}

/* Every run of 32 to 128 hex digits (an even number) standing alone in the file is taken as a
 * build-id; entries not in the cache are skipped later. */
static int scan_file(const char *path, struct bt_build_id **ids, size_t *n, size_t *cap)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	char tok[2 * BT_BUILD_ID_MAXLEN + 2];
	size_t len = 0;
	bool too_long = false;
	int err = 0, ch;
	do {
		ch = fgetc(f);
		if (ch != EOF && isxdigit(ch)) {
			if (len < sizeof(tok) - 1)
				tok[len++] = (char)tolower(ch);
			else
				too_long = true;
			continue;
		}
		if (!too_long && len >= 32 && len % 2 == 0 && (ch == EOF || !isalnum(ch))) {
			tok[len] = '\0';
			struct bt_build_id id;
			if (bt_buildid_parse_hex(tok, &id) == 0)
				err = push_id(ids, n, cap, &id);
		}
		len = 0;
		too_long = ch != EOF && isalnum(ch);  /* hex digits glued to a word are not one */
	} while (!err && ch != EOF);
	if (!err && ferror(f))
		err = -EIO;
	fclose(f);
	return err;
}

static bool is_hex_id(const char *s)
{
	size_t n = strlen(s);
	if (n < 2 || n % 2 || n > 2 * BT_BUILD_ID_MAXLEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

int cmd_archive(int argc, char **argv)
{
	struct bt_getopt g;
	if (bt_opts_getopt(archive_opts, ":", &g))
		return bt_cli_error(1, "too many options");
	const char *cache_opt = NULL, *out = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		case OPT_CACHE_DIR: cache_opt = optarg; break;
		case 'o': out = optarg; break;
		case 'h': bt_opts_usage(stdout, &archive_doc); return 0;
		case ':': return bt_cli_error(2, "option '%s' needs an argument", argv[optind - 1]);
		default: return bt_cli_error(2, "unknown option '%s' (see buildtrace archive --help)",
					     argv[optind - 1]);
		}
	}
	if (!out)
		return bt_cli_error(2, "archive needs -o FILE.tar");
	char cache[PATH_MAX];
	int rc = bt_cache_dir_arg(cache_opt, cache, sizeof(cache));
	if (rc)
		return rc;
	struct bt_build_id *ids = NULL;
	size_t n = 0, cap = 0;
	for (int i = optind; i < argc; i++) {
		struct bt_build_id id;
		int err;
		if (is_hex_id(argv[i]) && access(argv[i], F_OK) != 0) {
			bt_buildid_parse_hex(argv[i], &id);
			err = push_id(&ids, &n, &cap, &id);
		} else {
			err = scan_file(argv[i], &ids, &n, &cap);
		}
		if (err) {
			free(ids);
			return bt_cli_error(1, "cannot read %s: %s", argv[i], strerror(-err));
		}
	}
	if (optind < argc && n == 0) {
		free(ids);
		return bt_cli_error(1, "no build-id found in the arguments");
	}
	/* Written under a temporary name so that a failed run leaves no partial archive (a device or a
	 * FIFO is written in place). */
	struct bt_wfile w;
	int fd = bt_wfile_open_path(&w, out, BT_WFILE_MODE);
	if (fd < 0) {
		free(ids);
		return bt_cli_error(1, "cannot create %s: %s", out, bt_cli_write_error(fd));
	}
	size_t count = 0;
	int err = bt_bidcache_archive(cache, ids, n, fd, &count);
	free(ids);
	if (err)
		bt_wfile_abort(&w);
	else
		err = bt_wfile_commit(&w);
	if (err)
		return bt_cli_error(1, "cannot write %s: %s", out, strerror(-err));
	printf("archived %zu entries of %s to %s\n", count, cache, out);
	if (fflush(stdout) != 0)
		return bt_cli_error(1, "writing the output failed: %s", strerror(errno));
	return 0;
}
