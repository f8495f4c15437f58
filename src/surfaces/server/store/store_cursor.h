/* store_cursor.h — the opaque listing cursor of store.h's list, the same
 * text in the SQLite and the PostgreSQL store (store_cursor.c has the
 * format). No state; any thread. */
#ifndef LOOM_SERVER_STORE_CURSOR_H
#define LOOM_SERVER_STORE_CURSOR_H

/* The cursor text for a page that ended at (created_at, id); malloc'd, NULL
 * when out of memory. */
char *store_cursor_encode(const char *created_at, const char *id);
/* 0 with *created_at and *id malloc'd, or -1 when the text is not one
 * store_cursor_encode makes. */
int store_cursor_decode(const char *cursor, char **created_at, char **id);

#endif
