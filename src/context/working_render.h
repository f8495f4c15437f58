/* working_render.h — the block C_working puts at the tail of every request.
 * Thread-safe: it takes the working memory's lock (see working.h). */
#ifndef LOOM_CONTEXT_WORKING_RENDER_H
#define LOOM_CONTEXT_WORKING_RENDER_H

#include "context/working.h"

/* The block for the tail of a request, every line ending in "\n":
 *   <working-memory>
 *   goal: Fix the build            (further lines of the goal indented by 2)
 *   dashboard: context 42% (6,712 of 16,000 tokens) · budget 120,000 of
 *     500,000 tokens used · progress: 2 of 5 plan items done · errors in
 *     last 10 steps: 1 · depth 0 · heartbeat: 3s ago · interrupt requested: no
 *   plan:
 *   ☐ … (todo_list_render, or "(no plan yet — use TodoWrite for multi-step work)")
 *   events:
 *   pending: none                  (or "pending:" then "- [id] urgency source:
 *                                   summary (detected HH:MM:SS UTC)", critical first)
 *   active risks:                  (only when some: "- [id] source: summary —
 *                                   disposition: note")
 *   recent decisions:              (only when some: "- [id] disposition: summary")
 *   knowledge: active questions 1 · evidence packs 0 · citations 2  (only when any)
 *   </working-memory>
 * (the dashboard is one line). Without a window the context reads "context
 * ~N tokens"; without a budget the budget part is left out; progress is the
 * model's text, else the plan's counts, else "not reported"; heartbeat is
 * "off" while last_hb_ms is 0. Text from events and the model is kept to one
 * line (control characters become spaces). Caller frees. */
char *working_render(working *w);

#endif
