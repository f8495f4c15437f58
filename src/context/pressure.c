/* pressure.c — token accounting (see pressure.h). */
#include "context/pressure.h"

void pressure_report(pressure *p, const msg_usage *u, int64_t est)
{
    int64_t in = u->input_tokens + u->cache_read_tokens + u->cache_creation_tokens;
    if (in <= 0)
        return; /* a provider that reports nothing: keep the local estimate */
    p->reported = in;
    p->reported_est = est;
    p->reported_gen = p->generation;
}

void pressure_reset_shape(pressure *p)
{
    p->generation++;
}

int64_t pressure_tokens(const pressure *p, int64_t est, pressure_source *src)
{
    pressure_source s = PRESSURE_LOCAL;
    int64_t t = est;
    if (p->reported > 0 && p->reported_est > 0) {
        if (p->reported_gen == p->generation && est >= p->reported_est) {
            s = PRESSURE_API;
            t = p->reported + (est - p->reported_est);
        } else {
            /* Scale by what the provider confirmed, never below the local
             * figure's half nor above thrice it: one odd report must not
             * swing the ladder wildly. */
            double ratio = (double)p->reported / (double)p->reported_est;
            if (ratio < 0.5)
                ratio = 0.5;
            if (ratio > 3.0)
                ratio = 3.0;
            s = PRESSURE_SCALED;
            t = (int64_t)((double)est * ratio + 0.5);
        }
    }
    if (src)
        *src = s;
    return t;
}

double pressure_rho(const pressure *p, int64_t tokens)
{
    return p->window > 0 ? (double)tokens / (double)p->window : 0.0;
}

const char *pressure_source_name(pressure_source s)
{
    switch (s) {
    case PRESSURE_API:
        return "api-usage";
    case PRESSURE_SCALED:
        return "api-scaled";
    default:
        return "local-estimate";
    }
}
