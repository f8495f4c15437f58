/* clock.c — wall and monotonic time, ISO 8601 stamps, cancellable sleep. */
#include "base/clock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int64_t read_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t clock_wall_ms(void)
{
    return read_ns(CLOCK_REALTIME) / 1000000;
}

int64_t clock_wall_us(void)
{
    return read_ns(CLOCK_REALTIME) / 1000;
}

int64_t clock_mono_ns(void)
{
    return read_ns(CLOCK_MONOTONIC);
}

int64_t clock_mono_ms(void)
{
    return clock_mono_ns() / 1000000;
}

void clock_deadline(struct timespec *ts, clockid_t clock, long ms)
{
    clock_gettime(clock, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

void clock_iso8601(int64_t wall_ms, char out[32])
{
    /* Floor division so times before 1970 still get a 0..999 ms part. */
    int64_t secs = wall_ms / 1000, ms = wall_ms % 1000;
    if (ms < 0) {
        ms += 1000;
        secs -= 1;
    }
    time_t t = (time_t)secs;
    struct tm tm;
    if (!gmtime_r(&t, &tm)) {
        snprintf(out, 32, "1970-01-01T00:00:00.000Z");
        return;
    }
    /* Formatted wide, then cut to 31: the compiler cannot know tm's fields
     * are small, and a year past 9999 is better cut than a warning. */
    char wide[96];
    snprintf(wide, sizeof wide, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)ms);
    size_t n = strnlen(wide, 31);
    memcpy(out, wide, n);
    out[n] = '\0';
}

int clock_sleep_ms(int64_t ms, const loom_cancel *abort)
{
    /* A monotonic deadline, so EINTR and the 50 ms slices cannot stretch or
     * shorten the total, and wall-clock jumps do not matter. */
    int64_t deadline = clock_mono_ns() + (ms > 0 ? ms : 0) * 1000000;
    for (;;) {
        if (cancel_requested(abort))
            return -1;
        int64_t left = deadline - clock_mono_ns();
        if (left <= 0)
            return 0;
        int64_t slice = left < 50000000 ? left : 50000000;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)slice};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
            if (cancel_requested(abort))
                return -1;
        }
    }
}
