/* cache.c - `buildtrace cache list|add|remove|prune` over the perf-compatible build-id cache. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/esc.h"
#include "symsrc/bidcache.h"
#include "elf/buildid.h"
#include "cmd/offline/cache.h"
#include "base/safeopen.h"
#include "cmd/cli/cli.h"
#include "cmd/cli/commands.h"
#include "cmd/cli/opts.h"
#include "symsrc/symsrc.h"

#define HEXLEN (2 * BT_BUILD_ID_MAXLEN + 1)

enum { OPT_CACHE_DIR = BT_OPT_LONG, OPT_MAX_SIZE };

static const struct bt_opt cache_opts[] = {
	BT_OPT_HEAD("Commands"),
	{ .kind = BT_OPT_OPERAND, .arg = "list [-l]", .help = "BUILDID PATH per entry; -l adds SIZE and the "
	  "files held" },
	{ .kind = BT_OPT_OPERAND, .arg = "add FILE...", .help = "store FILE and, when one is found, its debug "
	  "file" },
	{ .kind = BT_OPT_OPERAND, .arg = "remove BUILDID...", .help = "drop entries" },
	{ .kind = BT_OPT_OPERAND, .arg = "prune --max-size SIZE", .help = "drop the least recently used "
	  "entries down to SIZE (K, M, G)" },
	BT_OPT_HEAD("Options"),
	{ 'l', "long", NULL, "list: the size and the files of each entry too" },
	{ OPT_MAX_SIZE, "max-size", "SIZE", "prune: what the cache may hold" },
	{ OPT_CACHE_DIR, "cache-dir", "DIR", "the cache to use", .def = "~/.debug", .values = "@dir" },
	{ 'h', "help", NULL, "this text" },
	BT_OPT_END,
};

static const struct bt_cmd_doc cache_doc = {
	.name = "buildtrace cache",
	.summary = "list, add, remove or prune build-id cache entries",
	.usage = "buildtrace cache [--cache-dir DIR] COMMAND [ARGS]",
	.about = "The build-id cache, in perf's layout (~/.debug/PATH/BUILDID/ and "
		 "~/.debug/.build-id/xx/rest), shared with perf buildid-cache: buildtrace stores the binaries "
		 "that get samples there and looks symbols up there.",
	.opts = cache_opts,
	.operands = "list add remove prune",
};

const struct bt_cmd_doc *bt_cache_doc(void)
{
	return &cache_doc;
}

struct listing {
	struct row {
		char hex[HEXLEN];
		char *path;
		uint64_t size;
		bool elf, debug;
	} *rows;
	size_t n, cap;
};

static int collect_row(void *ctx, const struct bt_bidcache_entry *e)
{
	struct listing *l = ctx;
	if (l->n == l->cap) {
		size_t ncap = l->cap ? 2 * l->cap : 64;
		struct row *nr = realloc(l->rows, ncap * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		l->rows = nr;
		l->cap = ncap;
	}
	struct row *r = &l->rows[l->n];
	bt_buildid_hex(&e->id, r->hex, sizeof(r->hex));
	r->path = strdup(e->orig_path);
	if (!r->path)
		return -ENOMEM;
	r->size = e->size;
	r->elf = e->has_elf;
	r->debug = e->has_debug;
	l->n++;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->hex, ((const struct row *)b)->hex);
}

static int do_list(const char *cache, bool longfmt)
{
	struct listing l = { 0 };
	int err = bt_bidcache_foreach(cache, collect_row, &l);
	if (!err) {
		if (l.n)
			qsort(l.rows, l.n, sizeof(*l.rows), row_cmp);
		for (size_t i = 0; i < l.n; i++) {
			const struct row *r = &l.rows[i];
			if (longfmt)
				printf("%s %10" PRIu64 " %-9s ", r->hex, r->size,
				       r->elf && r->debug ? "elf+debug" : r->debug ? "debug"
				       : r->elf ? "elf" : "-");
			else
				printf("%s ", r->hex);
			/* the path a profiled program had: no newline of its forges an entry */
			bt_esc_write(stdout, r->path, strlen(r->path));
			putchar('\n');
		}
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.rows[i].path);
	free(l.rows);
	return err ? bt_cli_error(1, "cannot read the cache %s: %s", cache, strerror(-err)) : 0;
}

static int add_one(const char *cache, const char *file)
{
	char real[PATH_MAX];
	if (!realpath(file, real))
		return bt_cli_error(1, "cannot add %s: %s", file, strerror(errno));
	int fd = bt_open_regular(AT_FDCWD, real, 0, NULL);
	if (fd < 0)
		return bt_cli_error(1, "cannot open %s: %s", file,
				    fd == -EINVAL ? "not a regular file" : strerror(-fd));
	struct bt_build_id id;
	int err = bt_buildid_from_fd(fd, &id);
	if (err) {
		close(fd);
		return bt_cli_error(1, "cannot add %s: %s", file,
				    err == -ENODATA ? "it has no build-id"
				    : err == -ENOEXEC ? "not an ELF file" : strerror(-err));
	}
	err = bt_bidcache_add_fd(cache, &id, real, fd);
	char hex[HEXLEN], origin[BT_SYMSRC_ORIGIN_LEN] = "";
	bt_buildid_hex(&id, hex, sizeof(hex));
	if (err) {
		close(fd);
		return bt_cli_error(1, "cannot add %s to %s: %s", file, cache, strerror(-err));
	}
	/* Like perf, keep the separate debug file too, so the entry alone symbolizes. */
	struct bt_symsrc_opts so = { .cache_dir = cache };
	struct bt_symsrc_req req = { .id = &id, .mapped_fd = fd, .path = real };
	int dfd = bt_symsrc_open_debug(&so, &req, origin, sizeof(origin));
	bool with_debug = false;
	if (dfd >= 0) {
		if (strcmp(origin, "cache") != 0)
			with_debug = bt_bidcache_add_debug_fd(cache, &id, real, dfd) == 0;
		else
			with_debug = true;
		close(dfd);
	}
	close(fd);
	printf("%s ", hex);
	bt_esc_write(stdout, real, strlen(real));
	printf("%s\n", with_debug ? " (with debug file)" : "");
	return 0;
}

static int do_remove(const char *cache, const char *hex)
{
	struct bt_build_id id;
	if (bt_buildid_parse_hex(hex, &id))
		return bt_cli_error(2, "invalid build-id '%s': expected hex digits", hex);
	int err = bt_bidcache_remove(cache, &id);
	if (err == -ENOENT)
		return bt_cli_error(1, "%s is not in the cache %s", hex, cache);
	if (err)
		return bt_cli_error(1, "cannot remove %s: %s", hex, strerror(-err));
	return 0;
}

int bt_cache_dir_arg(const char *given, char *buf, size_t len)
{
	struct bt_symsrc_opts so = { .cache_dir = given };
	int err = bt_symsrc_cache_dir(&so, buf, len);
	if (err)
		return bt_cli_error(1, "no cache directory: %s (use --cache-dir)", strerror(-err));
	return 0;
}

int cmd_cache(int argc, char **argv)
{
	struct bt_getopt g;
	if (bt_opts_getopt(cache_opts, ":", &g))
		return bt_cli_error(1, "too many options");
	const char *cache_opt = NULL, *max_opt = NULL;
	bool longfmt = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		case OPT_CACHE_DIR: cache_opt = optarg; break;
		case OPT_MAX_SIZE: max_opt = optarg; break;
		case 'l': longfmt = true; break;
		case 'h': bt_opts_usage(stdout, &cache_doc); return 0;
		case ':': return bt_cli_error(2, "option '%s' needs an argument", argv[optind - 1]);
		default: return bt_cli_error(2, "unknown option '%s' (see buildtrace cache --help)",
					     argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		bt_opts_usage(stderr, &cache_doc);
		return 2;
	}
	const char *sub = argv[optind++];
	char cache[PATH_MAX];
	int rc = bt_cache_dir_arg(cache_opt, cache, sizeof(cache));
	if (rc)
		return rc;
	if (!strcmp(sub, "list")) {
		if (optind < argc)
			return bt_cli_error(2, "cache list takes no arguments");
		rc = do_list(cache, longfmt);
	} else if (!strcmp(sub, "add") || !strcmp(sub, "remove")) {
		if (optind >= argc)
			return bt_cli_error(2, "cache %s needs at least one %s", sub,
					    sub[0] == 'a' ? "FILE" : "BUILDID");
		for (int i = optind; i < argc; i++) {
			int r = sub[0] == 'a' ? add_one(cache, argv[i]) : do_remove(cache, argv[i]);
			if (r > rc)
				rc = r;
		}
	} else if (!strcmp(sub, "prune")) {
		size_t max;
		if (!max_opt)
			return bt_cli_error(2, "cache prune needs --max-size SIZE");
		if (bt_cli_parse_size(max_opt, &max))
			return bt_cli_error(2, "invalid size '%s' (bytes, or with K, M or G)", max_opt);
		if (optind < argc)
			return bt_cli_error(2, "cache prune takes no arguments besides --max-size");
		size_t removed = 0;
		uint64_t freed = 0;
		int err = bt_bidcache_prune(cache, max, &removed, &freed);
		if (err)
			return bt_cli_error(1, "cannot prune %s: %s", cache, strerror(-err));
		printf("removed %zu entries, %" PRIu64 " bytes\n", removed, freed);
	} else {
		return bt_cli_error(2, "unknown cache command '%s' (list, add, remove, prune)", sub);
	}
	if (fflush(stdout) != 0)
		rc = bt_cli_error(1, "writing the output failed: %s", strerror(errno));
	return rc;
}
