/* pprof.h - the pprof profile format (proto/profile.proto, gzip-compressed on disk): written from a
 * live session, with one mapping per (build-id, file) so frames can be symbolized later by build-id;
 * written from a profile read back from a file (names only); and read back into a profile. pprof_write.c writes,
 * pprof_read.c reads.
 *
 * What a session's profile holds:
 *   sample types   samples/count and cpu/nanoseconds (count x period), period_type cpu/nanoseconds,
 *                  period, time_nanos and duration_nanos when known; off_cpu/nanoseconds (and
 *                  wall/nanoseconds) as bt_pprof_opts.view says.
 *   labels         "thread": the comm the stack was aggregated under; "pid" (numeric) as well when
 *                  the session kept processes apart (--per-pid).
 *   mappings       one per (build-id, file path), build_id the lowercase hex GNU build-id ("" when
 *                  the file has none or it was never read). The first is the profiled program's
 *                  executable (main_pid), or an empty one (no file, no range) when there is none. A
 *                  profile spans processes that mapped a file at different addresses, so a
 *                  mapping stands for the file's executable segment at its ELF virtual address (the
 *                  load bias undone): frames carry the addresses the file's own instructions have,
 *                  as nm, objdump and `pprof -disasm` know them. A file whose layout is unknown (its
 *                  symbols never loaded) gets a synthetic range in which the whole file is mapped
 *                  from offset 0. Either way address - memory_start + file_offset is the frame's
 *                  file offset. Kernel frames keep their real addresses in one mapping
 *                  named [kernel.kallsyms] carrying the running kernel's build-id, or, in a module,
 *                  in one mapping per loaded module version named [NAME] (as perf names modules)
 *                  with the module's build-id and the range it was loaded at.
 *   locations      one per sampled frame; a frame with a name has one Line, or, when the session
 *                  gave it source lines (bt_session_resolve_lines), one per function at that
 *                  instruction, innermost first, with line numbers and the functions' source files;
 *                  one without a name keeps only its address and mapping. has_functions is true for
 *                  a mapping only when all its frames have names, has_filenames, has_line_numbers
 *                  and has_inline_frames only when all its named frames have source lines.
 */
#ifndef BT_PPROF_H
#define BT_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "session/profile.h"

struct bt_session;

struct bt_pprof_opts {
	uint64_t period_ns;        /* time between two samples; 0: unknown (samples/count only) */
	int64_t time_ns;           /* start, ns since the epoch; 0: unknown */
	int64_t duration_ns;       /* 0: unknown */
	const char *kernel_root;   /* where sys/kernel/notes is read (see kident.h); NULL: "" */
	int main_pid;              /* the profiled program's process: its executable's mapping comes first,
				    * as pprof takes the first mapping for the program; 0: none (a
				    * system-wide profile): the first mapping is then an empty one */
	int view;                  /* enum bt_view. CPU: the CPU samples (samples/count, cpu/nanoseconds);
				    * OFFCPU or WALL: every stack, with off_cpu/nanoseconds after
				    * those (and wall/nanoseconds, their sum, for WALL), the default
				    * sample type the view's own */
	bool view_only;            /* with OFFCPU: off_cpu/nanoseconds and the off-CPU stacks only, a
				    * profile type of its own */
};

/* The session's profile, gzip-compressed. 0 or -errno (a write error's, e.g. -ENOSPC; -ENOMEM;
 * -E2BIG when the profile holds more mappings than synthetic ranges exist for). */
int bt_pprof_write_session(const struct bt_session *s, const struct bt_pprof_opts *o, FILE *out);

/* A profile without its session (read back from a file): the comm of each stack becomes the
 * "thread" label (and its pid the "pid" label when kept per process), each location a function by
 * its name (with the source lines it has), kernel frames in one mapping named [kernel.kallsyms],
 * the others without mapping or address. 0 or -errno. */
int bt_pprof_write_profile(const struct bt_profile *p, const struct bt_pprof_opts *o, FILE *out);

/* True when buf starts like a gzip stream, as every pprof file on disk does. */
bool bt_pprof_is_gzip(const void *buf, size_t len);

/* Decodes a profile (gzip-compressed or not) into out (initialised by the caller): a stack per
 * sample, comm the "thread" label (else empty), inlined frames expanded (caller first), counted by
 * the sample type "samples" when there is one, else by the default (or last) sample type. Frames
 * of a kernel mapping ([kernel.kallsyms]..., or [NAME] in the kernel half) are of kind
 * BT_LOC_KERNEL; frames without a name are named as buildtrace names them live: [FILE+0xOFFSET]
 * with the file's base name and offset, [unknown] without a mapping. 0, -EINVAL (not a valid
 * profile), -EFBIG (too large once decompressed, more than 2^20 frames in one sample or 2^27 in
 * all, or stacks that would fold into more than 256 MiB of text: a small input can name a long
 * function many times; or when decoding its messages would take more memory than
 * BT_PPROF_DECODE_* allow) or -ENOMEM; out then holds what was decoded so far. */
int bt_pprof_decode(const void *buf, size_t len, struct bt_profile *out);

/* Reads a whole stream and decodes it as above; -EIO for a read error. */
int bt_pprof_read(FILE *in, struct bt_profile *out);

/* Largest profile accepted, decompressed. */
#define BT_PPROF_MAX_BYTES ((size_t)128 << 20)
/* Memory the decoded messages of a profile of N bytes may take: BASE + N x FACTOR, at most MAX.
 * A real profile takes about 8 times its size (its own and those converted from folded stacks);
 * an empty sample, two bytes, takes fifty. */
#define BT_PPROF_DECODE_BASE ((size_t)16 << 20)
#define BT_PPROF_DECODE_FACTOR ((size_t)16)
#define BT_PPROF_MAX_DECODED ((size_t)1 << 30)

#endif
