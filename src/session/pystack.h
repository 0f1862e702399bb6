/* pystack.h - the Python frames of a sample in its native stack: each eval-loop frame of the
 * native stack replaced by the Python frames it ran; those no walked eval-loop frame took placed
 * outer to the native stack, which they show was cut short, behind a [truncated] mark; and a mark
 * wherever the stack is known to be cut (the Python walk's or the native walk's end). Part of the
 * session. */
#ifndef BT_PYSTACK_H
#define BT_PYSTACK_H

#include <stdbool.h>
#include <stddef.h>
#include "session/session.h"

/* What is known of how the native user stack's walk ended. */
enum bt_native_walk {
	BT_NATIVE_UNKNOWN = 0,   /* frame pointers: a walk says nothing of where it ended */
	BT_NATIVE_COMPLETE,      /* it took a frame for the outermost */
	BT_NATIVE_CUT,           /* it ended short of the outermost frame */
};

/* The Python frames of the last BT_REC_PYSTACK, when they are the sample's (same thread and time)
 * and its process an interpreter: plans where they go among the user frames uips[0..un)
 * (innermost first; exact as bt_unwind gives it, NULL for frame pointers) and returns true. */
bool bt_pystack_plan(struct bt_session *s, const struct bt_rec_sample *r, const struct bt_process *p,
		     const __u64 *uips, const uint8_t *exact, size_t un, enum bt_native_walk native);
/* The frames that go outer to every native frame, into s->scratch at *n (outermost first). */
int bt_pystack_root(struct bt_session *s, size_t *n);
/* The Python frames user frame i ran, in its place: 1 when it has some (then they are in s->scratch
 * at *n), 0 when it keeps its native frame, or -ENOMEM. */
int bt_pystack_frame(struct bt_session *s, size_t i, size_t *n);
/* Python location id of profile prof gets its one source line: its code object's qualified name
 * and file, and the line of its instruction. 0 or -ENOMEM. */
int bt_pystack_lines(struct bt_session *s, struct bt_profile *prof, uint32_t id);
/* The plan's frames are counted; the Python frames are the sample's no more. */
void bt_pystack_done(struct bt_session *s, bool planned);

#endif
