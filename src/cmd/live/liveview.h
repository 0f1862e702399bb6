/* liveview.h - the live view on a terminal: the functions sampled so far filling the screen (see
 * topview.h), redrawn in place each second and at once after a key or a change of the terminal's
 * size, with keys to quit, sort, filter, pause, keep one side and group by process. Where stderr is
 * not a terminal, or one too small, a plain summary every few seconds instead. */
#ifndef BT_LIVEVIEW_H
#define BT_LIVEVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <termios.h>

#include "cmd/live/live.h"
#include "cmd/live/topview.h"

/* Smaller than this, the screen gets the plain summary. */
#define BT_LIVEVIEW_MIN_ROWS 8
#define BT_LIVEVIEW_MIN_COLS 50
/* Seconds between two plain summaries. */
#define BT_LIVEVIEW_PLAIN_EVERY 5.0

struct bt_liveview {
	int out;                  /* the screen: stderr */
	int in;                   /* the keys: stdin, or -1 when it is not a terminal (or not ours) */
	struct termios saved;     /* stdin's settings to restore */
	bool full;                /* full screen now (else plain summaries) */
	bool alt;                 /* the alternate screen is in use */
	unsigned rows, cols;
	struct bt_top_opts opts;
	char filter[128];
	bool editing;             /* typing a filter after '/' */
	char edit[128];
	bool paused;              /* the screen stays as it is; sampling goes on */
	bool quit;                /* 'q' was pressed */
	bool dirty;               /* redraw at the next turn */
	uint64_t last_samples;    /* at the last tick, for the rate */
	uint64_t rate;            /* samples in the last second */
	double elapsed;           /* at the last tick */
	double plain_at;          /* elapsed at the last plain summary */
};

/* Takes over the screen when out is a terminal big enough; keys are read from in when it is a
 * terminal (-1: no keys). offcpu: the session counts off-CPU time: its column, sorted by it. */
void bt_liveview_start(struct bt_liveview *v, int out, int in, bool offcpu);

/* Once a second, after the new frames are named: the rate, and a redraw unless paused. */
void bt_liveview_tick(struct bt_liveview *v, struct bt_live *l, double elapsed);

/* After every poll: keys read and acted on, the terminal's size checked, and a redraw when either
 * asks for one. */
void bt_liveview_turn(struct bt_liveview *v, struct bt_live *l);

/* Acts on one key (exposed for tests): what each does is in the header line. */
void bt_liveview_key(struct bt_liveview *v, int c);

/* Gives the screen and the keyboard back as they were. */
void bt_liveview_stop(struct bt_liveview *v);

#endif
