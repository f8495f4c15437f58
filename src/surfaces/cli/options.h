/* options.h — the loom command line, parsed into one struct. */
#ifndef LOOM_CLI_OPTIONS_H
#define LOOM_CLI_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

/* text, json (Claude Code's result object), stream-json (Claude Code's
 * message lines), events (Loom's own event stream, docs/events.md). */
typedef enum { OUTPUT_TEXT, OUTPUT_JSON, OUTPUT_STREAM_JSON, OUTPUT_EVENTS } output_format;
/* --input-format: text (the prompt) or stream-json (user messages on stdin). */
typedef enum { INPUT_TEXT, INPUT_STREAM_JSON } input_format;

typedef struct cli_options {
    bool print;              /* -p: headless, one prompt */
    bool version, help;
    const char *prompt;      /* positional; NULL → read stdin */
    output_format format;
    input_format input;
    const char *provider;
    const char *model;
    const char *base_url;
    const char *cassette;
    const char *system_prompt;
    const char *resume;      /* session id or unique prefix */
    bool resume_pick;        /* --resume without an id: the picker chooses */
    bool continue_latest;
    bool fork_session;
    bool no_stream;
    bool verbose;
    int max_retries;         /* -1: configuration decides */
    int max_turns;           /* 0: configuration decides */
    const char *token_budget;   /* "500k": the run's token budget */
    const char *context_window; /* tokens: the model's window, overriding the table */
    const char *reasoning_effort; /* low | medium | high (OpenAI reasoning models) */
    const char *cwd;
    const char *permission_mode;
    const char *fallback_model;
    const char *thinking;       /* --thinking: "true" or its BUDGET (option "thinking") */
    const char *append_system_prompt;
    /* --allowedTools / --disallowedTools, each flag a comma-separated list;
     * the flags may repeat (pointers into argv). */
    const char *allowed_tools[16];
    int n_allowed_tools;
    const char *disallowed_tools[16];
    int n_disallowed_tools;
    /* --add-dir DIR: more directories reads may reach without asking. */
    const char *add_dirs[16];
    int n_add_dirs;
    /* --mcp-config FILE|JSON (repeatable) and --strict-mcp-config: the
     * options mcp_config and strict_mcp_config (docs/mcp.md). */
    const char *mcp_configs[16];
    int n_mcp_configs;
    bool strict_mcp_config;
    const char *agents;         /* --agents on|off: option agents, "true"/"false"; NULL: unset */
} cli_options;

/* Parses argv. 0 on success; on a usage error prints why to stderr and
 * returns -1. */
int cli_parse(int argc, char **argv, cli_options *opt);
void cli_usage(FILE *out);

#endif
