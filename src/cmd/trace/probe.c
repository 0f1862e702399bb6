/* probe.c - `buildtrace probe add|list|remove`: the probe cache (perf's `perf probe --cache`
 * layout, see symsrc/probecache.h). add resolves probes as `trace` does and stores them under the
 * build-id they were resolved for; `trace cache:GROUP:EVENT` places them only in that build. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/esc.h"
#include "cmd/cli/cli.h"
#include "cmd/cli/commands.h"
#include "cmd/cli/opts.h"
#include "elf/sdt.h"
#include "session/probes.h"
#include "symsrc/bidcache.h"
#include "symsrc/probecache.h"

enum { OPT_CACHE_DIR = BT_OPT_LONG };

static const struct bt_opt probe_opts[] = {
	BT_OPT_HEAD("Commands"),
	{ .kind = BT_OPT_OPERAND, .arg = "add PROBE...", .help = "resolve each PROBE (FILE:FUNCTION, "
	  "FILE:0xADDR, BUILDID:FUNCTION or sdt:FILE:PROVIDER:NAME) and store it under the build-id it was "
	  "resolved for, named GROUP:EVENT as perf names it (probe_FILE:FUNCTION, sdt_PROVIDER:NAME)" },
	{ .kind = BT_OPT_OPERAND, .arg = "list", .help = "the cached probes, as perf probe --cache --list "
	  "shows them" },
	{ .kind = BT_OPT_OPERAND, .arg = "remove GROUP:EVENT...", .help = "drop cached probes" },
	BT_OPT_HEAD("Options"),
	{ OPT_CACHE_DIR, "cache-dir", "DIR", "the build-id cache holding the probes", .def = "~/.debug",
	  .values = "@dir" },
	{ 'h', "help", NULL, "this text" },
	BT_OPT_END,
};

static const struct bt_cmd_doc probe_doc = {
	.name = "buildtrace probe",
	.summary = "add, list or remove probes of the probe cache (perf's layout)",
	.usage = "buildtrace probe add [--cache-dir DIR] PROBE...\n"
		 "buildtrace probe list [--cache-dir DIR]\n"
		 "buildtrace probe remove [--cache-dir DIR] GROUP:EVENT...",
	.about = "The probe cache, in perf's layout (perf probe --cache --list shows it): probes resolved "
		 "against a file's build-id and kept under it, which buildtrace trace cache:GROUP:EVENT places "
		 "only in files of that build-id.",
	.opts = probe_opts,
	.operands = "add list remove",
};

const struct bt_cmd_doc *bt_probe_doc(void)
{
	return &probe_doc;
}

/* perf's event names: letters, digits and '_'. */
static void event_name(const char *s, char *out, size_t len)
{
	snprintf(out, len, "%s", s);
	for (char *c = out; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
			*c = '_';
}

/* A marker's argument spec as perf writes it after the probe (" arg1=%bp:u64 arg2=+112(%sp):s32"),
 * so that perf records the arguments of the probes buildtrace cached; "" when an argument has no
 * such form (a constant). */
static void perf_args(const char *spec, char *out, size_t len)
{
	static const char *const names[] = { "r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8",
					     "ax", "cx", "dx", "si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss" };
	struct bt_sdt_arg a[BT_SDT_MAX_ARGS];
	size_t n, pos = 0;
	out[0] = '\0';
	if (bt_sdt_parse_args(spec, a, BT_SDT_MAX_ARGS, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++) {
		char where[64];
		if (a[i].loc == BT_SDT_CONST || a[i].reg >= sizeof(names) / sizeof(names[0])) {
			out[0] = '\0';
			return;
		}
		if (a[i].loc == BT_SDT_REG)
			snprintf(where, sizeof(where), "%%%s", names[a[i].reg]);
		else
			snprintf(where, sizeof(where), "%+lld(%%%s)", (long long)a[i].off, names[a[i].reg]);
		int w = snprintf(out + pos, len - pos, " arg%zu=%s:%c%u", i + 1, where, a[i].is_signed ? 's' : 'u',
				 8u * a[i].size);
		if (w < 0 || (size_t)w >= len - pos) {
			out[0] = '\0';
			return;
		}
		pos += (size_t)w;
	}
}

static int add_one(const char *cache, const char *text)
{
	struct bt_probe_spec spec;
	if (bt_probe_spec_parse(text, &spec) || spec.kind == BT_PROBE_CACHED)
		return bt_cli_error(2, "invalid probe '%s': expected FILE:FUNCTION, FILE:0xADDR, BUILDID:FUNCTION "
				    "or sdt:FILE:PROVIDER:NAME", text);
	struct bt_probe_file f;
	struct bt_probe_site site;
	struct bt_symsrc_opts so = { .cache_dir = cache };
	char msg[1536], abs[PATH_MAX], group[192], event[160], header[512], line[PATH_MAX + 512];
	char hex[2 * BT_BUILD_ID_MAXLEN + 1];
	if (bt_probe_open_path(&spec, cache, &f, msg, sizeof(msg)))
		return bt_cli_error(1, "%s", msg);
	int rc = 0;
	if (!f.id.len)
		rc = bt_cli_error(1, "%s: %s has no GNU build-id: the probe cache keeps probes under the build "
				  "they were resolved for", text, f.path);
	else if (bt_probe_resolve(&spec, &f, &so, &site, msg, sizeof(msg)))
		rc = bt_cli_error(1, "%s", msg);
	else if (!realpath(f.path, abs))
		rc = bt_cli_error(1, "%s: %s: %s", text, f.path, strerror(errno));
	if (rc) {
		close(f.fd);
		return rc;
	}
	if (spec.kind == BT_PROBE_SDT) {
		snprintf(group, sizeof(group), "sdt_%s", spec.provider);
		event_name(spec.name, event, sizeof(event));
		snprintf(header, sizeof(header), "%s:%s=%s", group, event, event);
	} else if (spec.kind == BT_PROBE_ADDR) {
		bt_pcache_group(abs, group, sizeof(group));
		snprintf(event, sizeof(event), "abs_%llx", (unsigned long long)site.vaddr);
		snprintf(header, sizeof(header), "0x%llx", (unsigned long long)site.vaddr);
	} else {
		bt_pcache_group(abs, group, sizeof(group));
		event_name(spec.name, event, sizeof(event));
		snprintf(header, sizeof(header), "%s", spec.name);
	}
	char args[512] = "", ref[32] = "";
	if (spec.kind == BT_PROBE_SDT)
		perf_args(site.args, args, sizeof(args));
	if (site.ref_ctr_off)
		snprintf(ref, sizeof(ref), "(0x%llx)", (unsigned long long)site.ref_ctr_off);
	snprintf(line, sizeof(line), "p:%s/%s %s:0x%llx%s%s", group, event, abs, (unsigned long long)site.off, ref,
		 args);
	const char *lines[] = { line };
	int err = bt_pcache_add(cache, &f.id, abs, f.fd, spec.kind == BT_PROBE_SDT, header, lines, 1);
	close(f.fd);
	if (err == -EILSEQ)
		return bt_cli_error(1, "%s: %s: perf's probe cache cannot hold a path with white space or a "
				    "control character, nor a name with a control character", text, abs);
	if (err)
		return bt_cli_error(1, "%s: writing the probe cache in %s: %s", text, cache, strerror(-err));
	printf("%s:%s\t%s at 0x%llx (file offset 0x%llx) in %s, build-id %s\n", group, event, site.what,
	       (unsigned long long)site.vaddr, (unsigned long long)site.off, abs,
	       bt_buildid_hex(&f.id, hex, sizeof(hex)));
	return 0;
}

static int print_probe(void *ctx, const struct bt_pcache_probe *p)
{
	/* what the cache holds, perf's entries and its owner's files included: escaped */
	char hex[2 * BT_BUILD_ID_MAXLEN + 1];
	bt_esc_write(stdout, p->group, strlen(p->group));
	putchar(':');
	bt_esc_write(stdout, p->event, strlen(p->event));
	putchar('\t');
	bt_esc_write(stdout, p->path, strlen(p->path));
	printf("\t%s\t0x%llx", bt_buildid_hex(&p->id, hex, sizeof(hex)), (unsigned long long)p->off);
	if (p->ref_ctr_off)
		printf("(0x%llx)", (unsigned long long)p->ref_ctr_off);
	printf("\t%c", p->sdt ? '%' : '#');
	bt_esc_write(stdout, p->header, strlen(p->header));
	putchar('\n');
	return 0;
}

static int remove_one(const char *cache, const char *text)
{
	const char *colon = strchr(text, ':');
	char group[128];
	if (!colon || colon == text || !colon[1] || (size_t)(colon - text) >= sizeof(group))
		return bt_cli_error(2, "invalid probe '%s': expected GROUP:EVENT (buildtrace probe list)", text);
	snprintf(group, sizeof(group), "%.*s", (int)(colon - text), text);
	int n = bt_pcache_remove(cache, group, colon + 1);
	if (n < 0)
		return bt_cli_error(1, "removing %s from the probe cache in %s: %s", text, cache, strerror(-n));
	if (n == 0)
		return bt_cli_error(1, "no probe %s in the probe cache in %s", text, cache);
	return 0;
}

int cmd_probe(int argc, char **argv)
{
	struct bt_getopt g;
	if (bt_opts_getopt(probe_opts, ":", &g))
		return bt_cli_error(1, "too many options");
	const char *cache_opt = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		if (c == 'h') {
			bt_opts_usage(stdout, &probe_doc);
			return 0;
		}
		if (c == ':')
			return bt_cli_error(2, "option '%s' needs an argument", argv[optind - 1]);
		if (c != OPT_CACHE_DIR)
			return bt_cli_error(2, "unknown option '%s' (see buildtrace probe --help)", argv[optind - 1]);
		cache_opt = optarg;
	}
	if (optind >= argc)
		return bt_cli_error(2, "say what to do: buildtrace probe add|list|remove (see buildtrace probe --help)");
	const char *verb = argv[optind++];
	char cache[PATH_MAX];
	if (cache_opt)
		snprintf(cache, sizeof(cache), "%s", cache_opt);
	else if (bt_bidcache_default_dir(cache, sizeof(cache)))
		return bt_cli_error(1, "no build-id cache directory: set HOME or use --cache-dir");
	int rc = 0;
	if (!strcmp(verb, "list")) {
		int err = bt_pcache_foreach(cache, print_probe, NULL);
		return err ? bt_cli_error(1, "reading the probe cache in %s: %s", cache, strerror(-err)) : 0;
	}
	bool add = !strcmp(verb, "add");
	if (!add && strcmp(verb, "remove"))
		return bt_cli_error(2, "unknown probe subcommand '%s': add, list or remove", verb);
	if (optind >= argc)
		return bt_cli_error(2, "probe %s needs %s", verb, add ? "a PROBE" : "GROUP:EVENT");
	for (int i = optind; i < argc && !rc; i++)
		rc = add ? add_one(cache, argv[i]) : remove_one(cache, argv[i]);
	return rc;
}
