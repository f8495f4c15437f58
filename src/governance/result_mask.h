/* result_mask.h — the result step's secret masking (issue 25, item 6): a
 * tool result's text and every string of its raw metadata pass through the
 * credential scanner (policy/secret_scan.h) right after the tool ran,
 * before the PostToolUse hooks, the session file and the model see them;
 * each value found is replaced by "[REDACTED:<kind>]" and a note tells the
 * model that values were masked. The unmasked value exists only in the
 * tool's own buffers, which are freed. Threading: none. */
#ifndef LOOM_GOVERNANCE_RESULT_MASK_H
#define LOOM_GOVERNANCE_RESULT_MASK_H

#include <stddef.h>

#include "tools/tool.h"

/* Masks res in place; returns how many values were replaced. */
size_t result_mask(tool_result *res);

#endif
