/* acp_client_reply.c — the shapes of the client's answers to the requests
 * `loom acp` sends for files and terminals (fs/read_text_file,
 * fs/write_text_file, terminal/create, terminal/output,
 * terminal/wait_for_exit, terminal/kill, terminal/release), checked before
 * anything is taken from them (acp.h). A client's answer is outside input:
 * every field is type-checked, and what does not fit is a message naming the
 * method and the field, which becomes the tool's error result. Pure
 * functions, no state: unit-tested and fuzzed (tests/fuzz/fuzz_acp.c). */
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "surfaces/acp/acp.h"

static int bad(char *why, size_t n, const char *method, const char *what)
{
    snprintf(why, n, "the client's answer to %s is malformed: %s", method, what);
    return -1;
}

void acp_reply_error_text(const char *method, const json_t *error, char *out, size_t n)
{
    const char *msg = json_get_str(error, "message", NULL);
    json_t *code = json_object_get(error, "code");
    char code_text[32] = "";
    if (json_is_integer(code))
        snprintf(code_text, sizeof code_text, " %lld", (long long)json_integer_value(code));
    if (!json_is_object(error))
        snprintf(out, n, "the client answered %s with a malformed error", method);
    else
        snprintf(out, n, "the client answered %s with error%s: %s", method, code_text,
                 msg && *msg ? msg : "(no message)");
}

int acp_reply_read_text(const json_t *result, const char **text, size_t *len, char *why,
                        size_t n)
{
    const char *m = "fs/read_text_file";
    if (!json_is_object(result))
        return bad(why, n, m, "the result is not an object with \"content\"");
    json_t *c = json_object_get(result, "content");
    if (!json_is_string(c))
        return bad(why, n, m, "\"content\" is not a string");
    *text = json_string_value(c);
    *len = json_string_length(c);
    return 0;
}

int acp_reply_empty(const char *method, const json_t *result, char *why, size_t n)
{
    /* The schema's answer is an object with nothing required; null is what
     * some clients send for "nothing". */
    if (result && !json_is_object(result) && !json_is_null(result))
        return bad(why, n, method, "the result is neither an object nor null");
    return 0;
}

int acp_reply_terminal_id(const json_t *result, const char **id, char *why, size_t n)
{
    const char *m = "terminal/create";
    if (!json_is_object(result))
        return bad(why, n, m, "the result is not an object with \"terminalId\"");
    const char *t = json_get_str(result, "terminalId", NULL);
    if (!t || !*t || strlen(t) > ACP_TERMINAL_ID_MAX)
        return bad(why, n, m, "\"terminalId\" is not a non-empty string (of at most 256 bytes)");
    *id = t;
    return 0;
}

/* A signal's name: letters, digits, '_' and '+'/'-' ("SIGKILL", "SIGRTMIN+1"). */
static bool signal_name_ok(const char *s)
{
    size_t len = strlen(s);
    if (len == 0 || len >= sizeof ((acp_exit *)0)->signal)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '+' || *p == '-'))
            return false;
    return true;
}

int acp_reply_exit_status(const char *method, const json_t *status, acp_exit *out, char *why,
                          size_t n)
{
    memset(out, 0, sizeof *out);
    out->exit_code = -1;
    if (!json_is_object(status))
        return bad(why, n, method, "the exit status is not an object");
    json_t *code = json_object_get(status, "exitCode");
    json_t *sig = json_object_get(status, "signal");
    if (code && !json_is_null(code)) {
        if (!json_is_integer(code) || json_integer_value(code) < 0 ||
            json_integer_value(code) > 0x7fffffff)
            return bad(why, n, method, "\"exitCode\" is not a whole number >= 0 or null");
        out->exit_code = (int)json_integer_value(code);
    }
    if (sig && !json_is_null(sig)) {
        if (!json_is_string(sig) || !signal_name_ok(json_string_value(sig)))
            return bad(why, n, method, "\"signal\" is not a signal name or null");
        snprintf(out->signal, sizeof out->signal, "%s", json_string_value(sig));
    }
    out->known = true;
    return 0;
}

int acp_reply_terminal_output(const json_t *result, acp_term_output *out, char *why, size_t n)
{
    const char *m = "terminal/output";
    memset(out, 0, sizeof *out);
    out->exit.exit_code = -1;
    if (!json_is_object(result))
        return bad(why, n, m, "the result is not an object");
    json_t *o = json_object_get(result, "output");
    if (!json_is_string(o))
        return bad(why, n, m, "\"output\" is not a string");
    json_t *t = json_object_get(result, "truncated");
    if (t && !json_is_boolean(t))
        return bad(why, n, m, "\"truncated\" is not a boolean");
    json_t *st = json_object_get(result, "exitStatus");
    if (st && !json_is_null(st) && acp_reply_exit_status(m, st, &out->exit, why, n) != 0)
        return -1;
    out->output = json_string_value(o);
    out->output_len = json_string_length(o);
    out->truncated = json_is_true(t);
    return 0;
}
