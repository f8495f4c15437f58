/* risk_writes_impl.h — what risk_writes.c shares with risk_unknown.c:
 * the sink write targets go to, and the full target rules. Private to
 * policy/risk_*.c. Reentrant: a sink lives on its caller's stack.
 */
#ifndef LOOM_POLICY_RISK_WRITES_IMPL_H
#define LOOM_POLICY_RISK_WRITES_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/risk_args.h"
#include "shell/bash_parse.h"

typedef struct rw_sink {
    risk_emit_fn fn;
    void *ctx;
} rw_sink;

/* Reports path to the sink (ctx is a rw_sink), unless it is harmless
 * (/dev/null and friends, "-") or find's "{}" placeholder. */
void rw_put(void *ctx, const char *path);
/* rw_put for each operand from index `from` on. */
void rw_put_ops(rw_sink *s, const risk_args *a, size_t from);
/* Is s one of the NULL-ended set? */
bool rw_in_set(const char *s, const char *const *set);
/* The last component of p, trailing slashes ignored. */
const char *rw_base_of(const char *p);
/* Reports the targets of c (redirections and the program's own writes, as
 * risk_write_targets); returns whether they are all there is (false: the
 * program is not one these rules know whole). */
bool rw_write_targets(const bash_cmd *c, risk_emit_fn fn, void *ctx);

#endif
