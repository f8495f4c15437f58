/* decision.h — the final permission decision for one tool call, and the
 * session's permission-mode state (plan mode remembers what it replaced).
 *
 * perm_decide() combines what every layer said about a call — PreToolUse
 * hooks, the settings rule that matched, the risk classifier, the auto-mode
 * model classifier, the mode, the tool's own facts, and whether a person can
 * be asked — into ALLOW, ASK or DENY. The rules live in one ordered table in
 * decision.c (first matching row wins); docs/permissions.md prints the same
 * table with the reasons behind each row. Nothing here allocates or blocks,
 * so the decision can be made on any thread, as often as needed.
 */
#ifndef LOOM_POLICY_DECISION_H
#define LOOM_POLICY_DECISION_H

#include <stdbool.h>

#include "policy/perm_types.h"

/* Everything the decision looks at. Zero-initialise and fill what you know:
 * a zeroed struct is "default mode, no hook, no rule, a tool that is neither
 * read-only nor an edit, nobody to ask" — which decides DENY (fail closed).
 * Borrowed pointers need only live for the perm_decide() call. */
typedef struct perm_inputs {
    perm_mode mode;

    /* Tool facts (from the tool definition and, where a tool can tell, its
     * input: a tool may report read_only for one input and not another). */
    const char *tool;           /* name, used in reasons; NULL reads "this tool" */
    bool read_only;             /* cannot change files, processes or the world */
    bool is_edit;               /* a file writer (Write, Edit, NotebookEdit, …) */
    bool in_workspace;          /* is_edit only: every path it writes is inside
                                 * the workspace (the caller checked) */
    bool needs_user;            /* a person must see it: AskUserQuestion, the
                                 * tamper guard, dangerouslyDisableSandbox, … */
    const char *needs_user_why; /* optional, e.g. "it edits Loom settings" */
    bool sends_out;             /* sends data off the machine (WebFetch): never
                                 * counts as read-only, whatever read_only says */
    const char *host;           /* sends_out: where to, for the reason (optional) */
    bool local_state;           /* changes only Loom's own state (TodoWrite,
                                 * AcknowledgeEvent, Renew): never asks */
    bool outside_workspace;     /* reads or lists a path outside the workspace
                                 * and its additional directories */
    bool secret;                /* touches a credential store (policy/secrets.h)
                                 * or the sandbox's denyRead list: a person must
                                 * see it, whatever tool it is */
    const char *secret_why;     /* optional, e.g. "~/.ssh/id_rsa is under ~/.ssh" */

    /* PreToolUse hooks, already merged (any deny > any ask > any allow). */
    perm_verdict hook;
    bool hook_has_updated_input;/* an allowing hook also rewrote the input */
    const char *hook_name;      /* optional: the hook whose answer counted */
    const char *hook_reason;    /* optional: its permissionDecisionReason */

    /* The settings rule that matched (deny > ask > allow already applied by
     * the rule matcher). NULL or verdict NONE: no rule matched. */
    const rule_match *rule;

    /* The risk classifier's verdict on the input that will run — after any
     * hook-updated input. NULL: RISK_UNKNOWN. */
    const risk_verdict *risk;

    /* Auto mode's model classifier, consulted for calls that would ask:
     * ALLOW or DENY; ASK = it could not decide; NONE = unavailable. */
    perm_verdict model;
    const char *model_reason;   /* optional */

    /* Can a person (or, in delegate mode, the parent session) answer a
     * question now? False for headless runs (loom -p, scheduled runs). */
    bool interactive;
} perm_inputs;

/* Where the deciding answer came from (perm_decision.source). */
#define PERM_SRC_HOOK "hook"
#define PERM_SRC_SETTINGS "settings"
#define PERM_SRC_MODE "mode"
#define PERM_SRC_CLASSIFIER "classifier"
#define PERM_SRC_USER "user"            /* set by the caller after an approval */
#define PERM_SRC_DEFAULT "default"

#define PERM_REASON_MAX 1024

typedef struct perm_decision {
    perm_verdict verdict;   /* ALLOW, ASK or DENY; ASK only when interactive */
    const char *source;     /* one of PERM_SRC_* (static string) */
    const char *row;        /* id of the table row that decided (static), for
                             * the audit log, e.g. "settings.deny" */
    bool delegated;         /* ASK in delegate mode: route it to the parent */
    bool unanswered;        /* DENY only because nobody could be asked */
    char reason[PERM_REASON_MAX]; /* for the model: what decided and what it
                                   * can do about it */
} perm_decision;

/* Decides one call. Never fails: bad input (an enum out of range) decides
 * DENY from row "invalid". Does not allocate; safe on any thread. */
void perm_decide(const perm_inputs *in, perm_decision *out);

/* The table, for docs and tests: row i's id, or NULL past the end. */
const char *perm_table_row_id(unsigned i);
unsigned perm_table_rows(void);

/* ---- mode state ---------------------------------------------------------
 * seed 001 §14.1: entering plan saves the previous mode
 * (meta.prePlanPermissionMode); leaving plan restores it. Owned by the run's
 * thread; not locked. */
typedef struct perm_mode_state {
    perm_mode mode;
    perm_mode pre_plan_mode;   /* meaningful while mode == MODE_PLAN */
} perm_mode_state;

/* Starts in `initial`. A session that starts in plan leaves it to default. */
void perm_mode_init(perm_mode_state *s, perm_mode initial);
/* Switches to m. Switching to plan saves the current mode (not when already
 * in plan: a second "enter plan" must not make plan its own way back).
 * Switching from plan to another mode directly just takes that mode. */
void perm_mode_set(perm_mode_state *s, perm_mode m);
/* Leaves plan mode, restoring the saved mode (ExitPlanMode, and the
 * rejectAndExitPlan exit of seed 001 §14.3). Returns the mode now in force;
 * outside plan mode it changes nothing. */
perm_mode perm_mode_leave_plan(perm_mode_state *s);

#endif
