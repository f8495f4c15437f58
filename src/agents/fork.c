/* fork.c — the sidechain of a fork (subagent_type "fork"): it starts as a
 * copy of the parent's conversation, so the fork's first request repeats
 * the parent's last one byte for byte up to its tail (the provider's
 * prompt cache serves it), and only the directive is new.
 *
 * The copy is the parent's active chain (what its model sees) with every
 * function call still open answered: the fork's own Agent call with
 * "forked as agent X", the other calls of the same reply with a note that
 * they run in the parent. The directive is the fork's goal (loop_run's
 * user record). Owns nothing past the call. Threading: on the parent's
 * Agent call thread, while the parent's run thread waits for its tools;
 * the parent's transcript is only read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/runner_internal.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/str.h"
#include "session/record.h"

static bool answered(json_t **recs, size_t n, const char *call_id)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(record_type(recs[i]), RECORD_FUNCTION_CALL_RESULT) &&
            !strcmp(json_get_str(recs[i], "callId", ""), call_id))
            return true;
    return false;
}

static void put_line(loom_str *buf, const json_t *rec)
{
    char *line = record_dump_line(rec);
    str_puts(buf, line);
    str_putc(buf, '\n');
    free(line);
}

int agent_fork_sidechain(spawn_node *n, transcript *parent, const json_t *meta, const char *path,
                         loom_error *err)
{
    json_t **recs = NULL;
    size_t cnt = 0;
    if (transcript_chain(parent, NULL, true, &recs, &cnt, err) != 0)
        return -1;
    loom_str buf = LOOM_STR_INIT;
    put_line(&buf, meta);
    char prev[128] = "";
    for (size_t i = 0; i < cnt; i++) {
        if (!strcmp(record_type(recs[i]), RECORD_SESSION_META))
            continue;
        json_t *c = json_deep_copy(recs[i]);
        json_object_set_new(c, "sessionId", json_string(n->id));
        put_line(&buf, c);
        json_decref(c);
        snprintf(prev, sizeof prev, "%s", record_id(recs[i]) ? record_id(recs[i]) : "");
    }
    /* Open calls get their answers after the chain, each the child of the
     * one before, so the copy is a well-formed conversation. */
    for (size_t i = 0; i < cnt; i++) {
        if (strcmp(record_type(recs[i]), RECORD_FUNCTION_CALL) != 0)
            continue;
        const char *call = json_get_str(recs[i], "callId", "");
        if (answered(recs, cnt, call))
            continue;
        char text[200];
        if (n->parent_call_id && !strcmp(call, n->parent_call_id))
            snprintf(text, sizeof text, "forked as agent %s", n->id);
        else
            snprintf(text, sizeof text,
                     "(this call runs in the parent; the fork %s does not see its result)",
                     n->id);
        json_t *r = record_tool_result(call, text, false);
        json_object_set_new(r, "sessionId", json_string(n->id));
        if (*prev)
            json_object_set_new(r, "parentId", json_string(prev));
        put_line(&buf, r);
        snprintf(prev, sizeof prev, "%s", record_id(r) ? record_id(r) : "");
        json_decref(r);
    }
    free(recs);
    int rc = file_write_atomic(path, buf.ptr, buf.len, 0600, err);
    str_free(&buf);
    return rc;
}
