/* acp.h — `loom acp`: the Agent Client Protocol (v1) over stdio, a surface
 * over loom.h (docs/acp.md).
 *
 * Three parts, each its own file:
 *   acp_map.c     pure mapping: run events → session/update objects, the
 *                 conversation → replayed updates, prompt content blocks →
 *                 a goal, stop reasons, TodoWrite → plan (unit-tested)
 *   acp_rpc.c     JSON-RPC 2.0 framing: one line in, a classified message;
 *                 the writer (one mutex around each stdout line); errors
 *   acp_server.c  the methods (initialize … session/set_config_option) and
 *   acp_prompt.c  session/prompt: a run per prompt on its own thread,
 *                 events out as session/update, approvals out as
 *                 session/request_permission
 * main.c reads stdin one line at a time on one thread and hands each line
 * to acp_server_handle_line. */
#ifndef LOOM_SURFACES_ACP_H
#define LOOM_SURFACES_ACP_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "loom.h"

#define ACP_PROTOCOL_VERSION 1

/* JSON-RPC error codes (the schema's ErrorCode). */
#define ACP_PARSE_ERROR (-32700)
#define ACP_INVALID_REQUEST (-32600)
#define ACP_METHOD_NOT_FOUND (-32601)
#define ACP_INVALID_PARAMS (-32602)
#define ACP_INTERNAL_ERROR (-32603)
#define ACP_SERVER_ERROR (-32000)
#define ACP_NOT_FOUND (-32002)

/* ---- acp_rpc.c ------------------------------------------------------------ */

/* Where whole lines go (one JSON text each, without its newline). */
typedef void (*acp_write_fn)(void *ctx, const char *line, size_t n);

typedef struct acp_writer {
    pthread_mutex_t mu;
    acp_write_fn write;
    void *ctx;
} acp_writer;

void acp_writer_init(acp_writer *w, acp_write_fn fn, void *ctx);
void acp_writer_destroy(acp_writer *w);
/* Writes msg (stolen) as one line, under the mutex. */
void acp_send(acp_writer *w, json_t *msg);
void acp_send_result(acp_writer *w, const json_t *id, json_t *result);
void acp_send_error(acp_writer *w, const json_t *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void acp_send_notification(acp_writer *w, const char *method, json_t *params);

typedef enum acp_msg_kind {
    ACP_MSG_INVALID = 0, /* not JSON-RPC: error_code/error says why */
    ACP_MSG_REQUEST,     /* method + id */
    ACP_MSG_NOTIFICATION,/* method, no id */
    ACP_MSG_RESPONSE,    /* id + result or error */
} acp_msg_kind;

typedef struct acp_msg {
    acp_msg_kind kind;
    json_t *root;        /* owned */
    const char *method;  /* borrowed from root */
    json_t *id;          /* borrowed; NULL for a notification (json null for
                            an invalid message whose id is unknown) */
    json_t *params;      /* borrowed; NULL when absent */
    json_t *result;      /* response */
    json_t *error;       /* response */
    int error_code;      /* ACP_MSG_INVALID */
    char error_text[256];
} acp_msg;

/* Classifies one line (need not be NUL-terminated). Always fills m; free
 * with acp_msg_clear. */
void acp_msg_parse(const char *line, size_t n, acp_msg *m);
void acp_msg_clear(acp_msg *m);

/* ---- acp_map.c ------------------------------------------------------------ */

/* The ACP tool kind of a Loom tool (read, edit, delete, move, search,
 * execute, think, fetch, switch_mode, other). */
const char *acp_tool_kind(const char *tool);
/* A one-line title for a call ("Read src/a.c", "`ls -la`"; caller frees). */
char *acp_tool_title(const char *tool, const json_t *input);
/* [{path, line?}] the call touches (new reference; [] when none). cwd (may
 * be NULL) makes a relative path absolute. */
json_t *acp_tool_locations(const char *tool, const json_t *input, const char *cwd);
/* The absolute path an edit tool (Edit, MultiEdit, Write, NotebookEdit)
 * changes, or NULL (caller frees). */
char *acp_edit_path(const char *tool, const json_t *input, const char *cwd);

/* Per-prompt mapping state: the calls seen, for their updates. */
typedef struct acp_call {
    char *call_id;
    char *tool;
    char *path;       /* edit tools: the file */
    char *old_text;   /* its content at tool.started (NULL: did not exist) */
    bool had_file;
    bool is_plan;     /* TodoWrite: shown as a plan, not a tool call */
    char *output;     /* Bash's live output so far */
    size_t output_len;
} acp_call;

typedef struct acp_map {
    const char *cwd;  /* borrowed */
    long context_window; /* for usage_update's size; 0: unknown */
    /* Where an edit's texts come from when the client holds the files
     * (acp_client_io.c): the text last read or written through it, *known
     * false when it has none (then the disk is read). NULL: the disk. */
    char *(*client_text)(void *ctx, const char *path, bool *known);
    /* The terminal a call ran in, through the client (malloc'd), or NULL:
     * a finished Bash call keeps showing it. NULL: none. */
    char *(*client_terminal)(void *ctx, const char *call_id);
    void *hook_ctx;
    acp_call *calls;
    size_t n_calls, cap_calls;
} acp_map;

void acp_map_init(acp_map *m, const char *cwd, long context_window);
void acp_map_clear(acp_map *m);
acp_call *acp_map_find(acp_map *m, const char *call_id);
/* The call an approval is about: the correlation id when the event has
 * one, else the newest started call of that tool. NULL when none. */
acp_call *acp_map_call_for_approval(acp_map *m, const json_t *event);

/* The session/update `update` object(s) one run event gives, appended to
 * out (an array). Events with nothing to show append nothing. */
void acp_map_event(acp_map *m, const json_t *event, json_t *out);
/* The ToolCallUpdate for a permission request about approval.requested. */
json_t *acp_map_permission_tool_call(acp_map *m, const json_t *event);
/* The options offered with every permission request. */
json_t *acp_permission_options(void);
/* The loom_run_answer decision for a chosen option id, or NULL. */
const char *acp_permission_decision(const char *option_id);

/* The ACP stopReason for an ended run (NULL: the run failed, report an
 * error instead). cancelled wins. */
const char *acp_stop_reason(loom_stop_reason why, loom_run_state state, bool cancelled);

/* The updates replaying a conversation (loom_session_conversation_json). */
json_t *acp_replay_updates(const json_t *conversation);

/* The goal a session/prompt's content blocks make. NULL with why set when
 * the prompt is not an array of content blocks. image_dir (may be NULL:
 * images become a note) is where image blocks are written, to be named as
 * @path mentions Loom attaches. */
char *acp_prompt_goal(const json_t *prompt, const char *image_dir, char *why, size_t why_len);

/* The elicitation form (requestedSchema) for AskUserQuestion's questions
 * (the array, or the tool input holding it): one
 * required choice per question, keyed by its text; NULL when it has none. */
json_t *acp_questions_form(const json_t *input);

/* available_commands_update's commands from loom_agent_extensions_json. */
json_t *acp_commands_from_extensions(const json_t *ext);
/* Adds the MCP servers' prompts (loom_session_mcp_prompts_json) to cmds. */
void acp_commands_add_mcp_prompts(json_t *cmds, const json_t *prompts);

/* ---- acp_client_reply.c ---------------------------------------------------- */

/* The client's answers to fs and terminal methods, checked. Each returns 0, or
 * -1 with why (n bytes) naming the method and the field that does not fit.
 * Strings handed out are borrowed from the reply. */

#define ACP_TERMINAL_ID_MAX 256

/* How a terminal's command ended (terminal/wait_for_exit, or
 * terminal/output's exitStatus). */
typedef struct acp_exit {
    bool known;          /* the client said */
    int exit_code;       /* -1: none */
    char signal[32];     /* "" when none */
} acp_exit;

typedef struct acp_term_output {
    const char *output;
    size_t output_len;
    bool truncated;
    acp_exit exit;       /* exit.known false: still running, or not said */
} acp_term_output;

/* A JSON-RPC error object as one line for the model ("the client answered
 * fs/read_text_file with error -32002: …"). */
void acp_reply_error_text(const char *method, const json_t *error, char *out, size_t n);
int acp_reply_read_text(const json_t *result, const char **text, size_t *len, char *why,
                        size_t n);
/* fs/write_text_file, terminal/kill, terminal/release: an object or null. */
int acp_reply_empty(const char *method, const json_t *result, char *why, size_t n);
int acp_reply_terminal_id(const json_t *result, const char **id, char *why, size_t n);
int acp_reply_exit_status(const char *method, const json_t *status, acp_exit *out, char *why,
                          size_t n);
int acp_reply_terminal_output(const json_t *result, acp_term_output *out, char *why, size_t n);

/* ---- acp_server.c ---------------------------------------------------------- */

typedef struct acp_server acp_server;

typedef struct acp_server_options {
    acp_write_fn write;
    void *write_ctx;
    bool sessions;        /* false: session/new and session/load refuse (fuzzing) */
    const char *model;    /* --model (may be NULL) */
    const char *permission_mode; /* --permission-mode (may be NULL) */
    long client_timeout_ms; /* --client-timeout: how long a file or
                               terminal request waits for the client (0: 60 s) */
} acp_server_options;

acp_server *acp_server_new(const acp_server_options *opt);
/* One line from the client. Never crashes on any input. */
void acp_server_handle_line(acp_server *s, const char *line, size_t n);
/* The client went away: cancels every run, waits for the prompt threads. */
void acp_server_shutdown(acp_server *s);
void acp_server_free(acp_server *s);

#endif
