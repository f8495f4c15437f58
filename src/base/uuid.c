/* uuid.c — UUIDv7 generation (RFC 9562 §5.7) and syntax checking.
 *
 * Monotonicity follows RFC 9562 §6.2 method 1: rand_a holds a 12-bit counter
 * that restarts from a random value each new millisecond and increments
 * within one; when it overflows we borrow the next millisecond. State is
 * shared by all threads under a mutex, so ids are strictly increasing across
 * the whole process. */
#include "base/uuid.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/clock.h"

static pthread_mutex_t uuid_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t last_ms = -1;
static unsigned last_counter;

/* splitmix64: only for the fallback below. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void fill_random(unsigned char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(buf + got, n - got, 0);
        if (r > 0) {
            got += (size_t)r;
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        break;
    }
    if (got == n)
        return;
    /* getrandom unavailable (old kernel, seccomp): ids need uniqueness more
     * than secrecy, and uniqueness is already carried by the timestamp and
     * counter, so a mixed clock/pid value is an acceptable stand-in. */
    static _Atomic uint64_t seq;
    uint64_t seed = (uint64_t)clock_mono_ns() ^ ((uint64_t)getpid() << 32) ^ ++seq;
    for (size_t i = got; i < n; i += 8) {
        seed = mix64(seed);
        size_t k = n - i < 8 ? n - i : 8;
        memcpy(buf + i, &seed, k);
    }
}

void uuid_v7(char out[UUID_STR_LEN])
{
    unsigned char b[16];
    unsigned char rnd[10];
    fill_random(rnd, sizeof rnd);

    /* A fresh counter starts below 0x800 so a busy millisecond has at least
     * 2048 increments before it must borrow the next one (RFC 9562 §6.2). */
    unsigned fresh = (((unsigned)rnd[0] << 8) | rnd[1]) & 0x7FF;

    pthread_mutex_lock(&uuid_lock);
    int64_t now = clock_wall_ms();
    if (now > last_ms) {
        last_ms = now;
        last_counter = fresh;
    } else if (++last_counter > 0xFFF) {
        /* Same millisecond (or the wall clock stepped back): keep counting
         * from the last id, borrowing a millisecond on overflow. */
        last_ms++;
        last_counter = fresh;
    }
    uint64_t ms = (uint64_t)last_ms;
    unsigned counter = last_counter;
    pthread_mutex_unlock(&uuid_lock);

    for (int i = 0; i < 6; i++)
        b[i] = (unsigned char)(ms >> (40 - 8 * i));
    b[6] = (unsigned char)(0x70 | ((counter >> 8) & 0x0F)); /* version 7 */
    b[7] = (unsigned char)(counter & 0xFF);
    memcpy(b + 8, rnd + 2, 8);
    b[8] = (unsigned char)(0x80 | (b[8] & 0x3F)); /* variant 10 */

    static const char hex[] = "0123456789abcdef";
    char *p = out;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *p++ = '-';
        *p++ = hex[b[i] >> 4];
        *p++ = hex[b[i] & 0x0F];
    }
    *p = '\0';
}

bool uuid_valid(const char *s)
{
    if (!s)
        return false;
    for (int i = 0; i < 36; i++) {
        char c = s[i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (c != '-')
                return false;
        } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
                     (c >= 'A' && c <= 'F'))) {
            return false; /* also stops at an early NUL */
        }
    }
    return s[36] == '\0';
}
