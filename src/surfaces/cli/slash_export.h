/* slash_export.h — /export [FILE] [!]: the conversation (the session's
 * active chain, across compactions) written as markdown — the prompts and
 * the assistant's texts in full, each tool call as one short line with its
 * result's first line. FILE defaults to ./loom-<id>.md in the session's
 * directory; an existing file is only replaced when the command ends in
 * "!" (docs/repl.md). Through loom.h; the main thread, between runs. */
#ifndef LOOM_CLI_SLASH_EXPORT_H
#define LOOM_CLI_SLASH_EXPORT_H

#include "base/str.h"
#include "surfaces/cli/slash_host.h"

/* /export [FILE] [!] */
void slash_export(slash_host *r, const char *args);

/* The markdown of a conversation (loom_session_conversation_json's text),
 * headed by title (may be NULL) and the session id; appended to out. */
void slash_export_markdown(const char *conversation_json, const char *title, const char *id,
                           loom_str *out);

#endif
