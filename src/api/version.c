/* version.c — loom_version(), the one symbol of loom.h so far. */
#include "loom.h"

const char *loom_version(void)
{
    return LOOM_VERSION_STRING;
}
