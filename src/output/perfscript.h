/* perfscript.h - a session's samples one by one in time order, in the text layout `perf script`
 * prints (-F comm,pid,tid,cpu,time,period,event,ip,sym,symoff,dso), so what reads perf script
 * (speedscope, the Firefox Profiler, FlameScope, stackcollapse-perf.pl) reads it unchanged. */
#ifndef BT_PERFSCRIPT_H
#define BT_PERFSCRIPT_H

#include <stdint.h>
#include <stdio.h>

struct bt_session;

struct bt_perfscript_opts {
	uint64_t period_ns;       /* the sampling period, printed as perf prints cpu-clock's */
	int64_t time_ns;          /* the session's start, ns since the epoch; 0: unknown */
	uint64_t mono_ns;         /* the same moment on the samples' clock (CLOCK_MONOTONIC); 0: unknown */
	int64_t duration_ns;
};

/* Writes the header (perf's "# ========" block, with the session's start) and every sample of
 * s->log: its comm, pid/tid, [cpu], time in seconds on CLOCK_MONOTONIC, period and event, then its
 * frames innermost first ("\tADDRESS SYMBOL+0xOFF (FILE)", see bt_session_frame_place), and an
 * empty line. Control characters in names and paths are written as \xHH. 0, -EOPNOTSUPP when the
 * session kept no log, or -errno. */
int bt_perfscript_write(const struct bt_session *s, const struct bt_perfscript_opts *o, FILE *out);

#endif
