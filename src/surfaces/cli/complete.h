/* complete.h — what Tab completes in the REPL's line (docs/repl.md), as a
 * pure function of the line, the cursor, the command names and the working
 * directory, so it is tested without a terminal (repl.c binds it to Tab):
 *   - "/pre" as the line's first word: the command names starting with
 *     "pre" (built-ins, custom commands, skills, MCP prompts);
 *   - a word "@pre": the paths under cwd starting with "pre", a folder's
 *     with "/" after it; never into .git, hidden names only when "pre"'s
 *     last part starts with ".";
 *   - the argument of a command that takes a name from a known list
 *     (complete_line_args): /permissions MODE, /model NAME, /output-style
 *     NAME, /agents show|stop|merge and their agent ids, /mcp
 *     reconnect|approve and the server names;
 *   - anything else: nothing.
 * One candidate is completed whole (a space after a name or a file, none
 * after a folder); several extend the word by what they share and are
 * listed. No state; any thread. */
#ifndef LOOM_CLI_COMPLETE_H
#define LOOM_CLI_COMPLETE_H

#include <stddef.h>

/* Most candidates collected (a huge folder is cut; "more" says so). */
#define COMPLETE_MAX 200

typedef struct complete_result {
    char *insert;    /* to insert at the cursor ("" when nothing) */
    char **cands;    /* the candidates as they would be completed, sorted; NULL-terminated */
    size_t n;
    int more;        /* 1 when candidates were left out past COMPLETE_MAX */
} complete_result;

/* names: the command names without "/", NULL-terminated (duplicates are
 * fine). cwd: where "@" paths start. Free out with complete_result_free. */
void complete_line(const char *line, size_t cursor, const char *const *names, const char *cwd,
                   complete_result *out);
void complete_result_free(complete_result *r);

/* The names a command's argument is completed from; each list
 * NULL-terminated, NULL for none. */
typedef struct complete_args {
    const char *const *models;   /* /model: the model names and aliases */
    const char *const *styles;   /* /output-style */
    const char *const *servers;  /* /mcp reconnect|approve SERVER */
    const char *const *agents;   /* /agents show|stop ID */
} complete_args;

/* complete_line, with the arguments of the commands above completed too. */
void complete_line_args(const char *line, size_t cursor, const char *const *names,
                        const complete_args *args, const char *cwd, complete_result *out);

#endif
