/* decision.c — the permission decision table and the plan-mode state.
 *
 * The decision is data: perm_rows[] below, walked top to bottom, first match
 * wins. Each call is first reduced to a "fact word" with exactly one bit set
 * per dimension (mode, hook answer, settings rule, risk level, tool kind,
 * needs-a-person, model classifier). A row lists, per dimension, the values
 * it accepts; it matches when every fact bit is among them, i.e.
 * (facts & ~row.when) == 0 — one AND per row, no branches on meaning. Why
 * each row sits where it does is written in docs/permissions.md, which
 * prints the same table; keep the two in step.
 *
 * An ASK outcome means "a person must answer". When nobody can be asked (a
 * headless run) it becomes DENY with a reason saying so: the seed's
 * "denied when prompts cannot be shown", and never a silent allow.
 */
#include "policy/decision.h"

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- facts ---------------------------------------------------------------
 * Bit layout of the fact word. Each dimension's values are consecutive bits
 * starting at its shift. */
enum {
    SH_MODE = 0,    /* 8 values: perm_mode */
    SH_HOOK = 8,    /* 5: hook answer, allow split by updatedInput */
    SH_RULE = 13,   /* 4: perm_verdict of the settings rule */
    SH_RISK = 17,   /* 4: risk_level */
    SH_KIND = 21,   /* 5: tool kind */
    SH_USER = 26,   /* 2: needs a person */
    SH_MODEL = 28,  /* 4: perm_verdict of the model classifier */
    SH_PATH = 32,   /* 3: where the paths it touches lie */
    SH_END = 35,
};

enum { HK_NONE, HK_ALLOW, HK_ALLOW_UPD, HK_ASK, HK_DENY };
/* WRITE includes edits outside the workspace; SEND: data leaves the
 * machine; LOCAL: only Loom's own state changes. */
enum { KIND_READ, KIND_EDIT_WS, KIND_WRITE, KIND_SEND, KIND_LOCAL };
enum { USER_NO, USER_YES };
/* IN: inside the workspace and its additional directories (or no path);
 * OUT: a read outside them; SECRET: a credential store, whatever tool. */
enum { PATH_IN, PATH_OUT, PATH_SECRET };

#define BIT(sh, v) (UINT64_C(1) << ((sh) + (v)))
#define DIM_ALL(sh, n) (((UINT64_C(1) << (n)) - 1) << (sh))

/* Per-dimension value sets for rows. */
#define M(m) BIT(SH_MODE, MODE_##m)
#define H(h) BIT(SH_HOOK, HK_##h)
#define R(r) BIT(SH_RULE, PERM_##r)
#define K(r) BIT(SH_RISK, RISK_##r)
#define T(k) BIT(SH_KIND, KIND_##k)
#define U(u) BIT(SH_USER, USER_##u)
#define C(v) BIT(SH_MODEL, PERM_##v)
#define P(p) BIT(SH_PATH, PATH_##p)

/* A row's condition: one value set per dimension, 0 meaning "any". */
#define ANY 0
#define OR_ALL(set, sh, n) ((set) ? (set) : DIM_ALL(sh, n))
#define WHEN8(mode, hook, rule, risk, kind, user, model, path)                               \
    (OR_ALL(mode, SH_MODE, 8) | OR_ALL(hook, SH_HOOK, 5) | OR_ALL(rule, SH_RULE, 4) |        \
     OR_ALL(risk, SH_RISK, 4) | OR_ALL(kind, SH_KIND, 5) | OR_ALL(user, SH_USER, 2) |        \
     OR_ALL(model, SH_MODEL, 4) | OR_ALL(path, SH_PATH, 3))
/* Most rows do not care where the paths lie. */
#define WHEN(mode, hook, rule, risk, kind, user, model)                                      \
    WHEN8(mode, hook, rule, risk, kind, user, model, ANY)

_Static_assert(SH_MODE + 8 == SH_HOOK && SH_HOOK + 5 == SH_RULE && SH_RULE + 4 == SH_RISK &&
                   SH_RISK + 4 == SH_KIND && SH_KIND + 5 == SH_USER && SH_USER + 2 == SH_MODEL &&
                   SH_MODEL + 4 == SH_PATH && SH_PATH + 3 == SH_END && SH_END <= 64,
               "fact dimensions must tile the word");
_Static_assert(MODE_DELEGATE == 7 && PERM_DENY == 3 && RISK_FORBIDDEN == 3,
               "perm_types enums changed: update the fact layout");

/* ---- reasons -------------------------------------------------------------
 * A reason tells the model what decided and what it can do instead; it is
 * shown as the tool result of a denied call. */
typedef void (*explain_fn)(const perm_inputs *in, char *buf, size_t cap);

static void put(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void put(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
}

static const char *tool_name(const perm_inputs *in)
{
    return in->tool && *in->tool ? in->tool : "this tool";
}

static const char *where_rule(const rule_match *r)
{
    switch (r->source) {
    case RULE_SRC_USER: return "user settings";
    case RULE_SRC_PROJECT: return "project settings";
    case RULE_SRC_LOCAL: return "local project settings";
    case RULE_SRC_CLI: return "command-line settings";
    }
    return "settings";
}

/* "hook NAME: REASON" with whichever parts are known. */
static void hook_desc(const perm_inputs *in, char *buf, size_t cap)
{
    const char *n = in->hook_name && *in->hook_name ? in->hook_name : NULL;
    const char *r = in->hook_reason && *in->hook_reason ? in->hook_reason : NULL;
    put(buf, cap, "PreToolUse hook%s%s%s%s%s", n ? " " : "", n ? n : "", r ? " (" : "",
        r ? r : "", r ? ")" : "");
}

static void risk_desc(const perm_inputs *in, char *buf, size_t cap)
{
    const risk_verdict *k = in->risk;
    if (!k) {
        put(buf, cap, "no classifier rule");
        return;
    }
    put(buf, cap, "%s%s%s", k->rule_id[0] ? k->rule_id : risk_level_name(k->level),
        k->reason[0] ? ": " : "", k->reason);
}

static void why_invalid(const perm_inputs *in, char *b, size_t c)
{
    put(b, c, "denied: the permission check got an invalid mode or verdict for %s (a Loom "
              "bug); nothing was run",
        tool_name(in));
}

static void why_hook_deny(const perm_inputs *in, char *b, size_t c)
{
    char h[600];
    hook_desc(in, h, sizeof h);
    put(b, c, "denied by %s. Do not retry the same call; take another approach or ask the "
              "user",
        h);
}

static void why_settings_deny(const perm_inputs *in, char *b, size_t c)
{
    put(b, c, "denied by settings rule %s (%s). Do not retry the same call; take another "
              "approach or ask the user to change the rule",
        in->rule->rule, where_rule(in->rule));
}

static void why_full_access(const perm_inputs *in, char *b, size_t c)
{
    put(b, c, "allowed: fullAccess mode skips permission checks");
}

static void why_forbidden(const perm_inputs *in, char *b, size_t c)
{
    char k[400];
    risk_desc(in, k, sizeof k);
    put(b, c, "denied: the risk classifier forbids this call (%s). No rule, hook or mode "
              "short of fullAccess allows it; do not retry it in another form",
        k);
}

static void why_plan(const perm_inputs *in, char *b, size_t c)
{
    put(b, c, "plan mode: %s can modify files or run commands, and only read-only tools run "
              "while planning. Finish the plan and present it for approval (ExitPlanMode)",
        tool_name(in));
}

static void why_plan_send(const perm_inputs *in, char *b, size_t c)
{
    put(b, c, "plan mode: %s sends data off this machine%s%s, and nothing is sent out while "
              "planning. Finish the plan and present it for approval (ExitPlanMode)",
        tool_name(in), in->host && *in->host ? " to " : "", in->host ? in->host : "");
}

static void why_secret(const perm_inputs *in, char *b, size_t c)
{
    const char *w = in->secret_why && *in->secret_why ? in->secret_why : NULL;
    put(b, c, "%s touches a secret path%s%s%s: credentials are read or changed only when a "
              "person approves the call",
        tool_name(in), w ? " (" : "", w ? w : "", w ? ")" : "");
}

static void why_outside(const perm_inputs *in, char *b, size_t c)
{
    put(b, c, "%s reads outside the workspace and its additional directories; a settings "
              "allow rule (e.g. Read(~/notes/**)) or permissions.additionalDirectories / "
              "--add-dir lets it run without asking",
        tool_name(in));
}

static void why_local_state(const perm_inputs *in, char *b, size_t c)
{
    put(b, c, "allowed: %s changes only Loom's own state", tool_name(in));
}

static void why_send_ask(const perm_inputs *in, char *b, size_t c)
{
    const char *h = in->host && *in->host ? in->host : NULL;
    put(b, c, "%s sends data off this machine%s%s and no settings rule allows that domain "
              "(add WebFetch(domain:%s) to permissions.allow to let it through)",
        tool_name(in), h ? " to " : "", h ? h : "", h ? h : "HOST");
}

static void why_settings_ask(const perm_inputs *in, char *b, size_t c)
{
    put(b, c, "settings rule %s (%s) requires approval for this call", in->rule->rule,
        where_rule(in->rule));
}

static void why_hook_ask(const perm_inputs *in, char *b, size_t c)
{
    char h[600];
    hook_desc(in, h, sizeof h);
    put(b, c, "%s asks for approval of this call", h);
}

static void why_needs_user(const perm_inputs *in, char *b, size_t c)
{
    const char *w = in->needs_user_why && *in->needs_user_why ? in->needs_user_why : NULL;
    put(b, c, "%s needs a person to approve it%s%s%s%s", tool_name(in), w ? " (" : "", w ? w : "",
        w ? ")" : "",
        in->hook == PERM_ALLOW ? "; a hook's allow does not replace the person unless the "
                                 "hook also supplies updated input"
                               : "");
}

static void dont_ask_prefix(const perm_inputs *in, char *b, size_t c, const char *what)
{
    put(b, c, "dontAsk mode: %s, and this mode never asks, so it is denied. Use a tool or "
              "command a settings allow rule covers, or ask the user to add one",
        what);
}

static void why_dont_ask_settings_ask(const perm_inputs *in, char *b, size_t c)
{
    char w[400];
    why_settings_ask(in, w, sizeof w);
    dont_ask_prefix(in, b, c, w);
}

static void why_dont_ask_hook_ask(const perm_inputs *in, char *b, size_t c)
{
    char w[700];
    why_hook_ask(in, w, sizeof w);
    dont_ask_prefix(in, b, c, w);
}

static void why_dont_ask_needs_user(const perm_inputs *in, char *b, size_t c)
{
    char w[400];
    why_needs_user(in, w, sizeof w);
    dont_ask_prefix(in, b, c, w);
}

static void why_dont_ask_secret(const perm_inputs *in, char *b, size_t c)
{
    char w[700];
    why_secret(in, w, sizeof w);
    dont_ask_prefix(in, b, c, w);
}

static void why_dont_ask_outside(const perm_inputs *in, char *b, size_t c)
{
    char w[500];
    why_outside(in, w, sizeof w);
    dont_ask_prefix(in, b, c, w);
}

static void why_hook_allow(const perm_inputs *in, char *b, size_t c)
{
    char h[600];
    hook_desc(in, h, sizeof h);
    put(b, c, "allowed by %s%s", h, in->hook_has_updated_input ? " with updated input" : "");
}

static void why_settings_allow(const perm_inputs *in, char *b, size_t c)
{
    put(b, c, "allowed by settings rule %s (%s)", in->rule->rule, where_rule(in->rule));
}

static void why_bypass(const perm_inputs *in, char *b, size_t c)
{
    put(b, c, "allowed: bypassPermissions mode skips permission prompts");
}

static void why_auto_confirm(const perm_inputs *in, char *b, size_t c)
{
    char k[400];
    risk_desc(in, k, sizeof k);
    put(b, c, "auto mode: the risk classifier rates this call risky (%s), so it is denied. "
              "Ask the user to run it themselves or to add a settings allow rule for it",
        k);
}

static void why_dont_ask_confirm(const perm_inputs *in, char *b, size_t c)
{
    char k[400], w[500];
    risk_desc(in, k, sizeof k);
    put(w, sizeof w, "the risk classifier wants a person to confirm this call (%s)", k);
    dont_ask_prefix(in, b, c, w);
}

static void why_confirm(const perm_inputs *in, char *b, size_t c)
{
    char k[400];
    risk_desc(in, k, sizeof k);
    put(b, c, "the risk classifier wants a person to confirm this call (%s)", k);
}

static void why_read(const perm_inputs *in, char *b, size_t c)
{
    put(b, c, "allowed: %s is read-only", tool_name(in));
}

static void why_safe(const perm_inputs *in, char *b, size_t c)
{
    char k[400];
    risk_desc(in, k, sizeof k);
    put(b, c, "allowed: the risk classifier rates this call safe (%s)", k);
}

static void why_accept_edits(const perm_inputs *in, char *b, size_t c)
{
    put(b, c, "allowed: acceptEdits mode accepts file edits inside the workspace");
}

static void why_model_deny(const perm_inputs *in, char *b, size_t c)
{
    const char *r = in->model_reason && *in->model_reason ? in->model_reason : NULL;
    put(b, c, "auto mode: the safety classifier denied this call%s%s. Take another approach "
              "or ask the user",
        r ? ": " : "", r ? r : "");
}

static void why_model_allow(const perm_inputs *in, char *b, size_t c)
{
    const char *r = in->model_reason && *in->model_reason ? in->model_reason : NULL;
    put(b, c, "allowed by auto mode's safety classifier%s%s", r ? ": " : "", r ? r : "");
}

static void why_auto_undecided(const perm_inputs *in, char *b, size_t c)
{
    const char *r = in->model == PERM_ASK && in->model_reason && *in->model_reason
                        ? in->model_reason : NULL;
    put(b, c, "auto mode: the safety classifier %s%s%s%s, so a person must approve %s",
        in->model == PERM_NONE ? "is unavailable" : "could not decide", r ? " (" : "",
        r ? r : "", r ? ")" : "", tool_name(in));
}

static void why_dont_ask(const perm_inputs *in, char *b, size_t c)
{
    char w[500];
    if (in->sends_out)
        put(w, sizeof w, "%s would send data off this machine%s%s, which no settings allow "
                         "rule (WebFetch(domain:…)) pre-approves",
            tool_name(in), in->host && *in->host ? " to " : "", in->host ? in->host : "");
    else
        put(w, sizeof w, "%s is not pre-approved by a settings allow rule", tool_name(in));
    dont_ask_prefix(in, b, c, w);
}

static void why_default_ask(const perm_inputs *in, char *b, size_t c)
{
    put(b, c, "%s can modify files or run commands and no settings rule allows it%s",
        tool_name(in),
        in->mode == MODE_ACCEPT_EDITS ? " (acceptEdits accepts only file edits inside the "
                                        "workspace)"
                                      : "");
}

static void why_fallback(const perm_inputs *in, char *b, size_t c)
{
    put(b, c, "denied: no permission rule covers this call (a Loom bug); nothing was run");
}

/* ---- the table -----------------------------------------------------------
 * First match wins. Verdict ASK means "a person must answer" (DENY when
 * nobody can be asked). docs/permissions.md explains every row. */
typedef struct perm_row {
    const char *id;
    uint64_t when;
    perm_verdict verdict;
    const char *source;
    explain_fn why;
} perm_row;

#define ROW(id, when, verdict, source, why) {id, when, PERM_##verdict, PERM_SRC_##source, why}
#define ALL_BUT(dim, x) (DIM_ALL(SH_##dim, dim##_N) & ~(x))
enum { MODE_N = 8, HOOK_N = 5, KIND_N = 5 };

static const perm_row perm_rows[] = {
    /* 1. Vetoes that nothing overrides. */
    ROW("hook.deny", WHEN(ANY, H(DENY), ANY, ANY, ANY, ANY, ANY), DENY, HOOK, why_hook_deny),
    ROW("settings.deny", WHEN(ANY, ANY, R(DENY), ANY, ANY, ANY, ANY), DENY, SETTINGS,
        why_settings_deny),
    /* 2. fullAccess skips every other check. */
    ROW("full_access", WHEN(M(FULL_ACCESS), ANY, ANY, ANY, ANY, ANY, ANY), ALLOW, MODE,
        why_full_access),
    /* 3. Hard limits of every other mode. */
    ROW("risk.forbidden", WHEN(ANY, ANY, ANY, K(FORBIDDEN), ANY, ANY, ANY), DENY, CLASSIFIER,
        why_forbidden),
    ROW("plan.modify", WHEN(M(PLAN), ANY, ANY, ANY, T(EDIT_WS) | T(WRITE), ANY, ANY), DENY, MODE,
        why_plan),
    ROW("plan.send", WHEN(M(PLAN), ANY, ANY, ANY, T(SEND), ANY, ANY), DENY, MODE, why_plan_send),
    /* 4. Someone asked for a person: settings ask > hook ask > the tool itself. */
    ROW("dont_ask.settings_ask", WHEN(M(DONT_ASK), ANY, R(ASK), ANY, ANY, ANY, ANY), DENY, MODE,
        why_dont_ask_settings_ask),
    ROW("settings.ask", WHEN(ANY, ANY, R(ASK), ANY, ANY, ANY, ANY), ASK, SETTINGS,
        why_settings_ask),
    ROW("dont_ask.hook_ask", WHEN(M(DONT_ASK), H(ASK), ANY, ANY, ANY, ANY, ANY), DENY, MODE,
        why_dont_ask_hook_ask),
    ROW("hook.ask", WHEN(ANY, H(ASK), ANY, ANY, ANY, ANY, ANY), ASK, HOOK, why_hook_ask),
    ROW("dont_ask.needs_user",
        WHEN(M(DONT_ASK), ALL_BUT(HOOK, H(ALLOW_UPD)), ANY, ANY, ANY, U(YES), ANY), DENY, MODE,
        why_dont_ask_needs_user),
    ROW("needs_user", WHEN(ANY, ALL_BUT(HOOK, H(ALLOW_UPD)), ANY, ANY, ANY, U(YES), ANY), ASK,
        DEFAULT, why_needs_user),
    ROW("dont_ask.secret",
        WHEN8(M(DONT_ASK), ALL_BUT(HOOK, H(ALLOW_UPD)), ANY, ANY, ANY, ANY, ANY, P(SECRET)), DENY,
        MODE, why_dont_ask_secret),
    ROW("secret", WHEN8(ANY, ALL_BUT(HOOK, H(ALLOW_UPD)), ANY, ANY, ANY, ANY, ANY, P(SECRET)),
        ASK, DEFAULT, why_secret),
    /* 5. Explicit approvals: a hook's allow, then a settings allow rule. */
    ROW("hook.allow", WHEN(ANY, H(ALLOW) | H(ALLOW_UPD), ANY, ANY, ANY, ANY, ANY), ALLOW, HOOK,
        why_hook_allow),
    ROW("settings.allow", WHEN(ANY, ANY, R(ALLOW), ANY, ANY, ANY, ANY), ALLOW, SETTINGS,
        why_settings_allow),
    ROW("local_state", WHEN(ANY, ANY, ANY, ANY, T(LOCAL), ANY, ANY), ALLOW, DEFAULT,
        why_local_state),
    /* 6. Nobody has an explicit answer: the mode and the risk classifier. */
    ROW("bypass", WHEN(M(BYPASS), ANY, ANY, ANY, ANY, ANY, ANY), ALLOW, MODE, why_bypass),
    ROW("auto.risk_confirm", WHEN(M(AUTO), ANY, ANY, K(CONFIRM), ANY, ANY, ANY), DENY,
        CLASSIFIER, why_auto_confirm),
    ROW("dont_ask.risk_confirm", WHEN(M(DONT_ASK), ANY, ANY, K(CONFIRM), ANY, ANY, ANY), DENY,
        MODE, why_dont_ask_confirm),
    ROW("risk.confirm", WHEN(ANY, ANY, ANY, K(CONFIRM), ANY, ANY, ANY), ASK, CLASSIFIER,
        why_confirm),
    ROW("dont_ask.outside", WHEN8(M(DONT_ASK), ANY, ANY, ANY, ANY, ANY, ANY, P(OUT)), DENY, MODE,
        why_dont_ask_outside),
    ROW("outside", WHEN8(ALL_BUT(MODE, M(AUTO)), ANY, ANY, ANY, ANY, ANY, ANY, P(OUT)), ASK,
        DEFAULT, why_outside),
    ROW("read", WHEN8(ANY, ANY, ANY, ANY, T(READ), ANY, ANY, P(IN)), ALLOW, DEFAULT, why_read),
    ROW("risk.safe", WHEN8(ANY, ANY, ANY, K(SAFE), ALL_BUT(KIND, T(SEND)), ANY, ANY, P(IN)), ALLOW,
        CLASSIFIER, why_safe),
    ROW("accept_edits", WHEN(M(ACCEPT_EDITS), ANY, ANY, ANY, T(EDIT_WS), ANY, ANY), ALLOW, MODE,
        why_accept_edits),
    ROW("auto.model_deny", WHEN(M(AUTO), ANY, ANY, ANY, ANY, ANY, C(DENY)), DENY, CLASSIFIER,
        why_model_deny),
    ROW("auto.model_allow", WHEN(M(AUTO), ANY, ANY, ANY, ANY, ANY, C(ALLOW)), ALLOW, CLASSIFIER,
        why_model_allow),
    ROW("auto.undecided", WHEN(M(AUTO), ANY, ANY, ANY, ANY, ANY, ANY), ASK, CLASSIFIER,
        why_auto_undecided),
    ROW("dont_ask", WHEN(M(DONT_ASK), ANY, ANY, ANY, ANY, ANY, ANY), DENY, MODE, why_dont_ask),
    ROW("send.ask",
        WHEN(M(DEFAULT) | M(ACCEPT_EDITS) | M(DELEGATE), ANY, ANY, ANY, T(SEND), ANY, ANY), ASK,
        DEFAULT, why_send_ask),
    ROW("default.ask",
        WHEN(M(DEFAULT) | M(ACCEPT_EDITS) | M(DELEGATE), ANY, ANY, ANY, ANY, ANY, ANY), ASK,
        DEFAULT, why_default_ask),
    /* 7. Unreachable (the tests prove it): fail closed all the same. */
    ROW("fallback", WHEN(ANY, ANY, ANY, ANY, ANY, ANY, ANY), DENY, DEFAULT, why_fallback),
};

#define NROWS (sizeof perm_rows / sizeof perm_rows[0])

unsigned perm_table_rows(void)
{
    return (unsigned)NROWS;
}

const char *perm_table_row_id(unsigned i)
{
    return i < NROWS ? perm_rows[i].id : NULL;
}

static const perm_row invalid_row = {"invalid", 0, PERM_DENY, PERM_SRC_DEFAULT, why_invalid};

/* Reduces the inputs to the fact word; 0 when a value is out of range (a
 * missing bit would make that dimension match every row). */
static uint64_t facts_of(const perm_inputs *in)
{
    if ((unsigned)in->mode > MODE_DELEGATE || (unsigned)in->hook > PERM_DENY ||
        (unsigned)in->model > PERM_DENY)
        return 0;
    perm_verdict rule = in->rule ? in->rule->verdict : PERM_NONE;
    risk_level risk = in->risk ? in->risk->level : RISK_UNKNOWN;
    if ((unsigned)rule > PERM_DENY || (unsigned)risk > RISK_FORBIDDEN)
        return 0;

    unsigned hook = in->hook == PERM_DENY    ? HK_DENY
                    : in->hook == PERM_ASK   ? HK_ASK
                    : in->hook == PERM_ALLOW ? (in->hook_has_updated_input ? HK_ALLOW_UPD
                                                                           : HK_ALLOW)
                                             : HK_NONE;
    /* Flags that contradict each other fail closed: an editor is an editor
     * whatever else it claims, then a sender, then Loom-only, then read-only. */
    unsigned kind = in->is_edit       ? (in->in_workspace ? KIND_EDIT_WS : KIND_WRITE)
                    : in->sends_out   ? KIND_SEND
                    : in->local_state ? KIND_LOCAL
                    : in->read_only   ? KIND_READ
                                      : KIND_WRITE;
    unsigned path = in->secret ? PATH_SECRET : in->outside_workspace ? PATH_OUT : PATH_IN;
    return BIT(SH_MODE, in->mode) | BIT(SH_HOOK, hook) | BIT(SH_RULE, rule) |
           BIT(SH_RISK, risk) | BIT(SH_KIND, kind) |
           BIT(SH_USER, in->needs_user ? USER_YES : USER_NO) | BIT(SH_MODEL, in->model) |
           BIT(SH_PATH, path);
}

/* A reason cut by snprintf may end inside a UTF-8 sequence; the reason is
 * sent to the model as JSON text, so the partial character goes. */
static void trim_partial_utf8(char *s, size_t cap)
{
    size_t n = strlen(s);
    if (n + 1 < cap)
        return;   /* not truncated */
    size_t i = n;
    while (i > 0 && n - i < 4 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
        i--;
    if (i == 0)
        return;
    unsigned char lead = (unsigned char)s[i - 1];
    size_t want = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (n - (i - 1) < want)
        s[i - 1] = '\0';
}

void perm_decide(const perm_inputs *in, perm_decision *out)
{
    uint64_t facts = facts_of(in);
    const perm_row *row = &invalid_row;
    if (facts)
        for (size_t i = 0; i < NROWS; i++)
            if (!(facts & ~perm_rows[i].when)) {
                row = &perm_rows[i];
                break;
            }

    /* Every row decides, and names itself and its source for the audit. */
    assert(row->verdict == PERM_ALLOW || row->verdict == PERM_ASK || row->verdict == PERM_DENY);
    assert(row->id && row->source && row->why);
    out->verdict = row->verdict;
    out->source = row->source;
    out->row = row->id;
    out->delegated = false;
    out->unanswered = false;
    row->why(in, out->reason, sizeof out->reason);
    trim_partial_utf8(out->reason, sizeof out->reason);

    if (row->verdict != PERM_ASK)
        return;
    /* ASK is a question for a person (or, in delegate mode, the parent
     * session). With nobody to answer, the call is denied — and the reason
     * says that it was nobody's "no", so the model can tell the user. */
    if (in->interactive) {
        out->delegated = in->mode == MODE_DELEGATE;
        return;
    }
    out->verdict = PERM_DENY;
    out->unanswered = true;
    size_t n = strlen(out->reason);
    snprintf(out->reason + n, sizeof out->reason - n,
             "; nobody can approve it in this session (%s), so it is denied. Do not retry "
             "it; tell the user what you needed, or take another approach",
             in->mode == MODE_DELEGATE ? "the parent session cannot be asked"
                                       : "no interactive user");
    trim_partial_utf8(out->reason, sizeof out->reason);
}

/* ---- mode state ---------------------------------------------------------- */

void perm_mode_init(perm_mode_state *s, perm_mode initial)
{
    s->mode = initial;
    s->pre_plan_mode = MODE_DEFAULT;
}

void perm_mode_set(perm_mode_state *s, perm_mode m)
{
    if (m == MODE_PLAN && s->mode != MODE_PLAN)
        s->pre_plan_mode = s->mode;
    s->mode = m;
}

perm_mode perm_mode_leave_plan(perm_mode_state *s)
{
    if (s->mode == MODE_PLAN)
        s->mode = s->pre_plan_mode;
    return s->mode;
}
