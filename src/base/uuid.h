/* uuid.h — UUIDv7 (RFC 9562): 48-bit ms timestamp, then random bits, so ids
 * sort by creation time and share a prefix within a time slice. Within one
 * process ids are strictly increasing even inside the same millisecond. */
#ifndef LOOM_BASE_UUID_H
#define LOOM_BASE_UUID_H

#include <stdbool.h>

#define UUID_STR_LEN 37  /* 36 chars + NUL */

void uuid_v7(char out[UUID_STR_LEN]);
/* True when s is a canonical lowercase/uppercase 8-4-4-4-12 hex UUID. */
bool uuid_valid(const char *s);

#endif
