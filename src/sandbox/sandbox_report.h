/* sandbox_report.h — what the sandbox blocked, read back from a command's
 * output, as the structured denial of seed 001 §3.6 (sandboxDenied,
 * sandboxBlockedPaths, plus networkBlocked) and a note for the model.
 *
 * The kernel does not tell the parent what Landlock or seccomp refused, so
 * the evidence is the command's own error messages: a path named next to
 * "Permission denied" / "Operation not permitted" / "Read-only file system"
 * counts when the policy explains the refusal (a write outside the writable
 * set that the user's own permissions would allow, or anything under a denied
 * read path); a refused socket or connection counts when the network is
 * denied. It can miss a denial a program reports in its own words, and it
 * never invents one the policy could not have caused.
 */
#ifndef LOOM_SANDBOX_SANDBOX_REPORT_H
#define LOOM_SANDBOX_SANDBOX_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/str.h"
#include "sandbox/sandbox.h"

typedef struct sandbox_denial {
    bool denied;            /* sandboxDenied: any of the below */
    bool network_blocked;   /* networkBlocked */
    sandbox_paths paths;    /* sandboxBlockedPaths, absolute, no duplicates */
    sandbox_paths read_paths; /* the subset that is under a denied read path */
    char proxy_refused[256];  /* hosts the filtering proxy refused (comma-separated); the
                                 caller copies them in from sandbox_prep_proxy_refused */
} sandbox_denial;

/* Reads the denial out of a finished command's stdout and stderr. cwd is
 * where the command ran (relative paths in messages are resolved against
 * it; NULL = the policy's workspace). d is filled; free with
 * sandbox_denial_free. */
void sandbox_report_analyze(const sandbox_policy *p, const char *cwd, const char *out,
                            size_t out_len, const char *err, size_t err_len, sandbox_denial *d);
void sandbox_denial_free(sandbox_denial *d);
/* Records the hosts the filtering proxy refused (comma-separated; "" or
 * NULL: none) as a network denial. */
void sandbox_denial_note_proxy(sandbox_denial *d, const char *hosts);

/* Sets sandboxDenied, sandboxBlockedPaths and networkBlocked on raw (an
 * object), and when something was blocked appends to text a short note that
 * says what and how to proceed. */
void sandbox_report_apply(const sandbox_policy *p, const sandbox_denial *d, json_t *raw,
                          loom_str *text);

#endif
