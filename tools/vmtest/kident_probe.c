/* kident_probe.c - exercises the kident module on the kernel it runs on, for the in-guest checks of
 * `make vmtest` (a kernel with modules); prints one result line per query for the checks to compare. */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel/kident.h"

static int usage(void)
{
	fprintf(stderr,
		"usage: kident-probe kernel\n"
		"       kident-probe modules [--drop]    (--drop: read as uid/gid 65534 without groups)\n"
		"       kident-probe match-ko PATH NAME  (a .ko file against the loaded module NAME)\n"
		"       kident-probe find-module NAME\n"
		"       kident-probe find-vmlinux [PATH]\n");
	return 2;
}

static int print_err(const char *what, int err)
{
	printf("%s error %d %s\n", what, err, strerror(-err));
	return 1;
}

static int cmd_kernel(void)
{
	struct bt_build_id id;
	char hex[2 * BT_BUILD_ID_MAXLEN + 1];
	int err = bt_kident_kernel_build_id("", &id);
	if (err)
		return print_err("kernel", err);
	printf("kernel %s\n", bt_buildid_hex(&id, hex, sizeof(hex)));
	return 0;
}

static int drop_privileges(void)
{
	if (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 ||
	    setresuid(65534, 65534, 65534) != 0)
		return -errno;
	return 0;
}

static int cmd_modules(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[2], "--drop")) {
		int err = drop_privileges();
		if (err)
			return print_err("drop", err);
	}
	struct bt_kmodules m;
	int err = bt_kident_modules_load("", &m);
	if (err)
		return print_err("modules", err);
	printf("hidden %d\n", m.addrs_hidden ? 1 : 0);
	for (size_t i = 0; i < m.n; i++) {
		const struct bt_kmodule *k = &m.mods[i];
		char hex[2 * BT_BUILD_ID_MAXLEN + 1] = "-";
		if (k->build_id.len)
			bt_buildid_hex(&k->build_id, hex, sizeof(hex));
		/* which module the middle of this one resolves to: itself, unless lookups are broken */
		const struct bt_kmodule *at = bt_kident_module_at(&m, k->base + k->size / 2);
		printf("module %s 0x%llx %llu %s %d %s\n", k->name, (unsigned long long)k->base,
		       (unsigned long long)k->size, hex, k->build_id_err, at ? at->name : "-");
	}
	bt_kident_modules_free(&m);
	return 0;
}

static int cmd_match_ko(const char *path, const char *name)
{
	struct bt_build_id loaded;
	int err = bt_kident_module_build_id("", name, &loaded);
	if (err)
		return print_err("loaded", err);
	err = bt_kident_module_file_matches(path, &loaded);
	printf("match %d\n", err);
	return 0;
}

static int cmd_find_module(const char *name)
{
	struct bt_build_id loaded;
	char release[256], path[4096];
	int err = bt_kident_module_build_id("", name, &loaded);
	if (!err)
		err = bt_kident_release("", release, sizeof(release));
	if (!err)
		err = bt_kident_find_module_file("", release, name, &loaded, path, sizeof(path));
	if (err)
		return print_err("find-module", err);
	printf("found %s\n", path);
	return 0;
}

static int cmd_find_vmlinux(const char *override)
{
	char path[4096];
	int err = bt_kident_find_vmlinux("", override, path, sizeof(path));
	if (err)
		return print_err("find-vmlinux", err);
	printf("found %s\n", path);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "kernel"))
		return cmd_kernel();
	if (!strcmp(argv[1], "modules"))
		return cmd_modules(argc, argv);
	if (!strcmp(argv[1], "match-ko") && argc == 4)
		return cmd_match_ko(argv[2], argv[3]);
	if (!strcmp(argv[1], "find-module") && argc == 3)
		return cmd_find_module(argv[2]);
	if (!strcmp(argv[1], "find-vmlinux"))
		return cmd_find_vmlinux(argc > 2 ? argv[2] : NULL);
	return usage();
}
