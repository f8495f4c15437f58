/* permissions.c — the session's permission mode through loom.h: read it,
 * switch it, leave plan mode. The state itself (and plan mode's memory of
 * the mode it replaced) is policy/decision.h's perm_mode_state inside the
 * session's governance; this file only validates names and reports. */
#include <stdio.h>
#include <string.h>

#include "api/internal.h"
#include "governance/governance.h"

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
    /* The tool pipeline reads the mode at each call on the run's thread;
     * loom.h asks for this between runs, and a run's thread starts after it
     * (pthread_create orders the write before every read). */
    perm_mode_set(&s->gov->mode, m);
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
    api_status_ok(st);
    return 0;
}
