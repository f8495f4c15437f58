/* permissions.c — the session's permission mode through loom.h: read it,
 * switch it (never to a mode the managed settings disabled), leave plan
 * mode, note it in the session file and restore it on resume. The state itself (and plan mode's memory of
 * the mode it replaced) is policy/decision.h's perm_mode_state inside the
 * session's governance; this file only validates names and reports. */
#include <stdio.h>
#include <string.h>

#include "api/internal.h"
#include "governance/governance.h"
#include "session/record.h"

/* "default, acceptEdits, …, delegate" — every mode perm_mode_parse knows,
 * built from perm_mode_name so the message cannot drift from the parser.
 * MODE_DELEGATE is the last of the eight (perm_types.h). */
static void mode_list(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int m = MODE_DEFAULT; m <= MODE_DELEGATE && used < size; m++) {
        int n = snprintf(buf + used, size - used, "%s%s", m == MODE_DEFAULT ? "" : ", ",
                         perm_mode_name((perm_mode)m));
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

int loom_session_set_permission_mode(loom_session *s, const char *mode, loom_status *st)
{
    API_CHECK_ARG(st, s, -1);
    perm_mode m;
    if (!mode || perm_mode_parse(mode, &m) != 0) {
        char modes[256];
        mode_list(modes, sizeof modes);
        return api_status_set(st, LOOM_ERR_INVALID_REQUEST,
                              "permission mode \"%s\" is not one of %s", mode ? mode : "(null)",
                              modes);
    }
    char why[700];
    if (!governance_mode_allowed(s->gov, m, why, sizeof why))
        return api_status_set(st, LOOM_ERR_INVALID_REQUEST, "%s", why);
    /* The tool pipeline reads the mode at each call on the run's thread;
     * loom.h asks for this between runs, and a run's thread starts after it
     * (pthread_create orders the write before every read). */
    perm_mode_set(&s->gov->mode, m);
    api_permission_mode_record(s);
    api_status_ok(st);
    return 0;
}

const char *loom_session_permission_mode(const loom_session *s)
{
    if (!s)
        return NULL;
    return perm_mode_name(s->gov->mode.mode);
}

int loom_session_leave_plan(loom_session *s, loom_status *st)
{
    API_CHECK_ARG(st, s, -1);
    if (s->gov->mode.mode != MODE_PLAN)
        return api_status_set(st, LOOM_ERR_INVALID_STATE_TRANSITION,
                              "not in plan mode (the permission mode is %s)",
                              perm_mode_name(s->gov->mode.mode));
    perm_mode_leave_plan(&s->gov->mode);
    api_permission_mode_record(s);
    api_status_ok(st);
    return 0;
}

/* ---- the mode in the session file -------------------------------------------
 * A "permission-mode" record is appended whenever the mode in force differs
 * from the last one written (a run's start and end, a switch through this
 * API), so the file always ends knowing the session's mode — a session
 * that never leaves default writes none (no record reads as default). Resuming reads
 * the last one back (loom_session_restore_permission_mode): the surface
 * decides whether to apply it — the CLI does unless the person named a
 * mode again on the command line. */

void api_permission_mode_load(loom_session *s)
{
    /* No record: the session ran in default mode (a session that never
     * left it writes none, so its file is as before). */
    s->mode_recorded = MODE_DEFAULT;
    s->plan_recorded = -1;
    s->mode_noted = false;
    for (size_t i = transcript_count(s->t); i-- > 0;) {
        if (strcmp(transcript_record_type(s->t, i), RECORD_PERMISSION_MODE) != 0)
            continue;
        json_t *rec = transcript_record(s->t, i);
        perm_mode m, pre = MODE_DEFAULT;
        const char *name = json_string_value(json_object_get(rec, "permissionMode"));
        const char *pname = json_string_value(json_object_get(rec, "prePlanMode"));
        if (!name || perm_mode_parse(name, &m) != 0)
            continue; /* a damaged or future record: look further back */
        if (pname)
            (void)perm_mode_parse(pname, &pre);
        s->mode_recorded = (int)m;
        s->plan_recorded = (int)pre;
        s->mode_noted = true;
        return;
    }
}

void api_permission_mode_record(loom_session *s)
{
    const perm_mode_state *ms = &s->gov->mode;
    int pre = ms->mode == MODE_PLAN ? (int)ms->pre_plan_mode : -1;
    if ((int)ms->mode == s->mode_recorded && (pre < 0 || pre == s->plan_recorded))
        return;
    json_t *rec = record_new(RECORD_PERMISSION_MODE);
    json_object_set_new(rec, "permissionMode", json_string(perm_mode_name(ms->mode)));
    json_object_set_new(rec, "prePlanMode",
                        pre >= 0 ? json_string(perm_mode_name((perm_mode)pre)) : json_null());
    loom_error err;
    /* Not being able to note the mode does not stop the session; the next
     * change tries again. */
    if (transcript_append_new(s->t, rec, &err) == 0) {
        s->mode_recorded = (int)ms->mode;
        s->plan_recorded = pre;
        s->mode_noted = true;
    }
}

int loom_session_restore_permission_mode(loom_session *s, char *note, size_t cap,
                                         loom_status *st)
{
    API_CHECK_ARG(st, s, -1);
    if (note && cap)
        note[0] = '\0';
    api_status_ok(st);
    if (!s->mode_noted)
        return 0;
    perm_mode m = (perm_mode)s->mode_recorded, now = s->gov->mode.mode;
    if (m == now)
        return 0;
    /* A mode that skips the questions is chosen anew each time; it is
     * never carried over silently from an earlier start. */
    if (m == MODE_BYPASS || m == MODE_FULL_ACCESS) {
        if (note)
            snprintf(note, cap,
                     "the session was in %s mode; resumed in %s (a mode that skips permission "
                     "questions is not restored: pass --permission-mode %s again)",
                     perm_mode_name(m), perm_mode_name(now), perm_mode_name(m));
        return 2;
    }
    char why[700];
    if (!governance_mode_allowed(s->gov, m, why, sizeof why)) {
        if (note)
            snprintf(note, cap, "the session was in %s mode; resumed in %s: %s",
                     perm_mode_name(m), perm_mode_name(now), why);
        return 2;
    }
    s->gov->mode.mode = m;
    s->gov->mode.pre_plan_mode =
        m == MODE_PLAN && s->plan_recorded >= 0 ? (perm_mode)s->plan_recorded : MODE_DEFAULT;
    /* The way back from plan may not be a mode that is disabled now. */
    if (m == MODE_PLAN && !governance_mode_allowed(s->gov, s->gov->mode.pre_plan_mode, NULL, 0))
        s->gov->mode.pre_plan_mode = MODE_DEFAULT;
    return 1;
}
