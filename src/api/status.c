/* status.c — turning internal loom_errors into the public loom_status. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/internal.h"

void api_status_ok(loom_status *st)
{
    if (!st)
        return;
    st->code = 0;
    st->code_name = loom_error_code_name(LOOM_OK);
    st->message[0] = '\0';
}

void api_status_from(loom_status *st, const loom_error *err)
{
    if (!st)
        return;
    st->code = err->code;
    st->code_name = loom_error_code_name(err->code);
    snprintf(st->message, sizeof st->message, "%s", err->message);
}

int api_status_set(loom_status *st, loom_error_code code, const char *fmt, ...)
{
    if (st) {
        st->code = code;
        st->code_name = loom_error_code_name(code);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(st->message, sizeof st->message, fmt, ap);
        va_end(ap);
    }
    return -1;
}

const char *api_value(const json_t *values, const char *key)
{
    return json_string_value(json_object_get(values, key));
}
