/* selfmem.c - this process's memory by kind: malloc's count of bytes in use, and the resident sizes
 * the kernel reports in /proc/self/status and /proc/self/smaps. */
#include "base/selfmem.h"

#include <errno.h>
#include <malloc.h>
#ifdef __SANITIZE_ADDRESS__
/* the sanitizer runtime's public allocator statistics (sanitizer/allocator_interface.h) */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t kb_field(const char *line, const char *name)
{
	size_t n = strlen(name);
	if (strncmp(line, name, n) || line[n] != ':')
		return UINT64_MAX;
	return strtoull(line + n + 1, NULL, 10) * 1024;
}

static int read_status(const char *procdir, struct bt_selfmem *out)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/self/status", procdir);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	char line[256];
	while (fgets(line, sizeof(line), f)) {
		uint64_t v;
		if ((v = kb_field(line, "VmRSS")) != UINT64_MAX)
			out->rss = v;
		else if ((v = kb_field(line, "RssAnon")) != UINT64_MAX)
			out->rss_anon = v;
	}
	fclose(f);
	return 0;
}

/* A mapping's header starts with its address range in lower-case hex; field lines with a name. */
static int is_header(const char *line)
{
	size_t n = strspn(line, "0123456789abcdef");
	return n > 0 && line[n] == '-';
}

/* smaps: a header line per mapping ("start-end perms offset dev inode [name]"), then "Key: N kB"
 * lines; the Rss of every mapping named anon_inode:bpf-map is summed. */
static int read_smaps(const char *procdir, struct bt_selfmem *out)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/self/smaps", procdir);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	char line[4096];
	int in_bpf = 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t v;
		if ((v = kb_field(line, "Rss")) != UINT64_MAX) {
			if (in_bpf)
				out->bpf_maps_rss += v;
		} else if (is_header(line)) {
			char *nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			size_t n = strlen(line);
			static const char tag[] = "anon_inode:bpf-map";
			in_bpf = n >= sizeof(tag) - 1 && !strcmp(line + n - (sizeof(tag) - 1), tag);
		}
	}
	fclose(f);
	return 0;
}

/* What the allocator in use counts as allocated: glibc's malloc, or the sanitizer's that replaces
 * it in a sanitized build (where mallinfo2 counts nothing). */
static uint64_t heap_in_use(void)
{
#ifdef __SANITIZE_ADDRESS__
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 mi = mallinfo2();
	return (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
#endif
}

int bt_selfmem_read(const char *procdir, struct bt_selfmem *out)
{
	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->heap_in_use = heap_in_use();
	int e1 = read_status(procdir ? procdir : "/proc", out);
	int e2 = read_smaps(procdir ? procdir : "/proc", out);
	return e1 && e2 ? e1 : 0;
}
