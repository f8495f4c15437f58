/* acp_server_int.h — the server's state, shared by acp_server.c (the
 * methods) and acp_prompt.c (session/prompt and approvals). Locking: mu
 * guards the session list, every session's busy/run/cancelled fields and
 * the table of requests sent to the client. A session's loom objects are
 * used by the reader thread only while it is not busy, and by its prompt
 * thread only while it is. */
#ifndef LOOM_SURFACES_ACP_SERVER_INT_H
#define LOOM_SURFACES_ACP_SERVER_INT_H

#include "surfaces/acp/acp.h"

/* A text last read or written through the client; a call's terminal. */
typedef struct acp_text {
    char *path;
    char *text;
} acp_text;

typedef struct acp_term {
    char *call_id;
    char *terminal_id;
} acp_term;

typedef struct acp_sess {
    char *id;            /* the loom session id (the ACP sessionId) */
    char *cwd;
    char *model;         /* the model asked for (NULL: the settings' default) */
    char *mcp_json;      /* {"mcpServers": {…}} the client passed, or NULL */
    loom_agent *agent;
    loom_session *session;
    /* the prompt in flight */
    bool busy, cancelled, thread_live;
    int answering;       /* reader calls into run under way (run stays alive) */
    pthread_cond_t idle;
    loom_run *run;
    pthread_t thread;
    json_t *prompt_id;
    char *goal;
    char *pending_mode;  /* set_mode during a prompt: applied when it ends */
    char *last_commands; /* the available commands sent last (JSON) */
    acp_map map;
    /* the client's files and terminal (acp_client_io.c); texts and terms
     * are guarded by srv->mu */
    loom_io_port io;
    acp_text *texts;
    size_t n_texts;
    acp_term *terms;
    size_t n_terms;
    struct acp_server *srv;
    struct acp_sess *next;
} acp_sess;

typedef struct acp_pending {
    json_int_t id;       /* our request's id */
    acp_sess *sess;
    char *approval_id;
} acp_pending;

/* A request to the client whose answer a Loom thread waits for. */
typedef struct acp_waiter {
    json_int_t id;
    acp_sess *sess;
    bool done;
    bool answered;       /* done by the client's answer (not a cancel or the end) */
    json_t *result;      /* new reference, NULL for an error or no answer */
    json_t *error;       /* new reference: the answer was an error */
    struct acp_waiter *next;
} acp_waiter;

struct acp_server {
    acp_writer w;
    pthread_mutex_t mu;
    acp_server_options opt;
    char *model, *permission_mode;
    json_t *client_caps;
    acp_sess *sessions;
    acp_pending *pend;
    size_t n_pend, cap_pend;
    json_int_t next_id;
    acp_waiter *waiters; /* on their threads' stacks */
    pthread_cond_t answered;
    bool closing;
    char *image_dir;     /* where prompt images are written (NULL: none) */
};

acp_sess *acp_find_session(acp_server *s, const json_t *params, const json_t *id);
void acp_send_update(acp_server *srv, const char *session_id, json_t *update);
/* The current_mode_update for the session's mode. */
void acp_send_mode(acp_server *srv, acp_sess *ss);
void acp_send_commands(acp_server *srv, acp_sess *ss);

/* acp_ask.c */
bool acp_take_waited(acp_server *srv, const acp_msg *m);
/* Wakes the waiters of ss (NULL: all) with no answer (mu held). */
void acp_wake_waiters(acp_server *srv, acp_sess *ss);
bool acp_client_elicits(acp_server *srv);

/* How a request to the client ended (acp_call_client). */
typedef enum acp_reply_kind {
    ACP_REPLY_RESULT,    /* *result set */
    ACP_REPLY_ERROR,     /* *error set: a JSON-RPC error */
    ACP_REPLY_TIMEOUT,   /* no answer by the deadline */
    ACP_REPLY_STOPPED,   /* stop() said so (the run was cancelled) */
    ACP_REPLY_GONE,      /* the prompt was cancelled, or the client left */
} acp_reply_kind;

typedef struct acp_call_opts {
    long deadline_ms;               /* 0: wait for ever */
    bool (*stop)(void *stop_ctx);   /* polled every 100 ms (may be NULL) */
    void *stop_ctx;
    bool after_cancel;              /* sent even after session/cancel (clean-up) */
} acp_call_opts;

/* Sends method(params, stolen) to the client and waits as o says (NULL:
 * for ever, not after a cancel). *result / *error (new references, may be
 * NULL) get the answer. */
acp_reply_kind acp_call_client(acp_server *srv, acp_sess *ss, const char *method, json_t *params,
                               const acp_call_opts *o, json_t **result, json_t **error);
char *acp_ask_user(void *ctx, const char *questions_json);
char *acp_elicit(void *ctx, const char *server, const char *request_json);

/* acp_client_io.c */
#define ACP_CLIENT_TIMEOUT_DEFAULT_MS 60000
/* The run's I/O port for what the client offers (fs read and write,
 * terminal), or NULL when it offers neither. Lives in ss. */
const loom_io_port *acp_client_io(acp_sess *ss);
/* The text last read or written through the client for path (malloc'd;
 * *known false and NULL when none): acp_map's text hook. */
char *acp_client_text(void *ctx, const char *path, bool *known);
/* The terminal a call ran in (malloc'd), or NULL: acp_map's hook. */
char *acp_client_terminal(void *ctx, const char *call_id);
void acp_client_io_free(acp_sess *ss);

/* acp_prompt.c */
void acp_prompt_start(acp_server *srv, const json_t *id, const json_t *params);
void acp_prompt_cancel(acp_server *srv, const json_t *params);
void acp_cancel_session(acp_server *srv, acp_sess *ss);
void acp_on_response(acp_server *srv, const acp_msg *m);
/* Waits for the session's prompt thread (after a cancel, on shutdown). */
void acp_prompt_join(acp_sess *ss);

#endif
