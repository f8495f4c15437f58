/* loom.h — the public C API of libloom.
 *
 * This header is the API manual. It grows with the library: today it holds
 * the version; the AgentConfig → Agent → Session → Run API lands with the
 * agent loop. Everything else in src/ is internal and may change.
 */
#ifndef LOOM_H
#define LOOM_H

/* The library's version as "MAJOR.MINOR.PATCH" (set once, in CMakeLists.txt). */
const char *loom_version(void);

#endif
