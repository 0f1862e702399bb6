/* checks.h - one input fed to one parser of untrusted data, and the properties its result must
 * have. Shared by the libFuzzer targets (fuzz/fuzz_*.c) and the test replaying fuzz/regress/. */
#ifndef BT_FUZZ_CHECKS_H
#define BT_FUZZ_CHECKS_H

#include <stddef.h>
#include <stdint.h>

/* Each returns 0 when the parser handled the input (accepted or refused it) and every property of
 * its result held, -EPROTO when one did not, or another -errno when the check itself could not
 * run (no memory, no temporary directory). Built with -DBT_CHECK_ABORT (as the fuzz targets
 * are), a failed property aborts on the spot instead, so the crash report points at it. Crashes and
 * sanitizer reports are not caught: they are what the callers look for. */

/* ELF notes: bt_buildid_from_mem, with the hex form round-tripped. */
int bt_check_buildid(const uint8_t *data, size_t len);
/* A hex build-id string: bt_buildid_parse_hex against the input's own digits. */
int bt_check_buildid_hex(const uint8_t *data, size_t len);
/* An ELF image: bt_elf_open_mem, layout, debuglink, sections, build-id, bt_symtab_load and its
 * lookups, a Go program's function table merged with its symbols, and MiniDebugInfo. */
int bt_check_symtab(const uint8_t *data, size_t len);
/* Go's function table (.gopclntab): bt_gopcln_open, every function read, and lookups at their ends
 * and at addresses the input names, with the input also standing for the memory its inline trees
 * point into; every string handed out lies inside the input. */
int bt_check_gopclntab(const uint8_t *data, size_t len);
/* An ELF image's call frame information: bt_ehtable_compile_mem, rows sorted by address, every
 * rule one the walker knows, the last row without CFI, each row found again by its address, the
 * table written as a file and read back the same; the input taken as such a file refused or valid. */
int bt_check_ehtable(const uint8_t *data, size_t len);
/* An ELF file embedded as MiniDebugInfo: the input is compressed with xz and carried in the
 * .gnu_debugdata of a fixed binary, then bt_minidebuginfo_load merges and loads it. */
int bt_check_minidebuginfo(const uint8_t *data, size_t len);
/* That binary (malloc'ed, *outlen bytes) around the ELF file elf; NULL with errno set. */
uint8_t *bt_check_mdi_binary(const uint8_t *elf, size_t len, size_t *outlen);
/* One /proc/PID/maps line: bt_procmap_parse_line, the fields formatted back and read again. */
int bt_check_procmap(const uint8_t *data, size_t len);
/* An HTTP request head: bt_http_parse (its strings inside the buffer, a target starting with '/'),
 * and bt_http_query_seconds on its query within its bounds. */
int bt_check_httpreq(const uint8_t *data, size_t len);
/* A cgroup path: bt_cgroup_container_id gives 64 lowercase hex digits found in the path, or -ENOENT. */
int bt_check_cgroup(const uint8_t *data, size_t len);
/* A kallsyms buffer: bt_kallsyms_parse, every text line found again by address and by name. */
int bt_check_kallsyms(const uint8_t *data, size_t len);
/* Folded stacks: bt_folded_parse, then written and parsed again to the same lines; read into a
 * profile and folded again, twice, to the same text. */
int bt_check_folded(const uint8_t *data, size_t len);
/* xz/zstd/gzip data: bt_decompress, its output cap exact to the byte. */
int bt_check_decompress(const uint8_t *data, size_t len);
/* A symbol name as an ELF file may carry it: bt_demangle (C++ through __cxa_demangle, Rust). */
int bt_check_demangle(const uint8_t *data, size_t len);
/* Build-id cache entries from "TAIL\0ELF-BYTES", each in a fresh cache under /dev/shm (or TMPDIR):
 * a link ../../TAIL as another tool may have left it, opened, listed, archived and removed; and
 * the ELF file added as if mapped from "/TAIL", then listed, archived and pruned. */
int bt_check_bidcache(const uint8_t *data, size_t len);
/* A perf map: bt_perfmap_parse whole and in two pieces (the same lines), and bt_perfmap_lookup at
 * every line's ends against the newest line holding the address. */
int bt_check_perfmap(const uint8_t *data, size_t len);
/* A jitdump file: bt_jitdump_parse whole and in two pieces (the same records), and the table's
 * lookups at every record's ends against the newest record holding the address. */
int bt_check_jitdump(const uint8_t *data, size_t len);

#endif
