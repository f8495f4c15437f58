/* mockllm.h — shared types of the scripted model server that every Loom test
 * talks to instead of a real model API: the loaded scenario, the summary of a
 * request's conversation that turns are matched on, the pre-rendered SSE
 * event list, and the table each wire format (Anthropic Messages, OpenAI Chat
 * Completions, OpenAI Responses) fills in. */
#ifndef MOCKLLM_H
#define MOCKLLM_H

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* ---- util.c: allocation, strings, time ---------------------------------- */

/* Set once on SIGTERM/SIGINT so sleeping streams give up promptly and the
 * daemon can join its connection threads. */
extern atomic_bool mock_stopping;

/* Abort-on-OOM allocators: a test server that runs out of memory has nothing
 * useful left to report. Results are owned by the caller (free()). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Growable byte buffer; p is NUL-terminated whenever len > 0. Owned by whoever
 * holds the struct; release with free(b.p). */
typedef struct {
    char *p;
    size_t len, cap;
} mbuf;
void mbuf_add(mbuf *b, const char *s, size_t n);
void mbuf_adds(mbuf *b, const char *s);

/* Length of the next piece of s (len bytes) that is at least `want` bytes
 * long, extended to a whole UTF-8 character so every piece is valid JSON. */
size_t utf8_piece_len(const char *s, size_t len, size_t want);

/* Copy of s with invalid UTF-8 replaced by U+FFFD, so raw request bodies can
 * be logged as JSON strings. Caller frees; *out_len gets the length. */
char *utf8_sanitize(const char *s, size_t len, size_t *out_len);

/* Sleep that wakes early once mock_stopping is set. */
void mock_sleep_ms(long ms);

/* Wall-clock seconds since the epoch, with microseconds. */
double mock_now(void);

/* ---- conversation summary (conv.c helpers, filled by each format) -------- */

typedef struct {
    long assistant_turns; /* maximal runs of consecutive assistant-side entries */
    long tool_results;    /* tool results anywhere in the conversation */
    long tools;           /* entries of the request's top-level "tools" array */
    char *last_user;      /* owned; text of the last user message ("" if none) */
    char *system;         /* owned; system prompt text ("" if none) */
    const char *body;     /* borrowed: the raw request body, for body_contains */
    size_t body_len;
} mock_conv;

void conv_free(mock_conv *c);
/* Text of a message content: a string, or the concatenation (newline-joined)
 * of the "text" of array blocks whose "type" is text/input_text/output_text.
 * Always returns an owned string. */
char *conv_content_text(const json_t *content);
/* Appends text to *dst (owned, may be NULL), newline-separated. */
void conv_append(char **dst, const char *text);

/* ---- scenario.c ---------------------------------------------------------- */

typedef struct {
    const char *id;   /* NULL: the format invents one in its own style */
    const char *name;
    char *arguments;  /* owned: input as compact JSON, or the raw string given */
    json_t *input;    /* borrowed object, or NULL when input was a non-object string */
    bool templated;   /* input holds "$match:" / "$last:" strings */
} mock_tool_call;

/* A reply template: a scripted string "$match:REGEX" or "$last:REGEX",
 * resolved per request against the raw request body (template.c). */
typedef struct {
    const char *value;  /* borrowed: the whole scripted string */
    const char *regex;  /* points into value, after the prefix */
    bool last;          /* "$last:": the last occurrence, not the first */
    regex_t re;         /* compiled once at load (REG_EXTENDED) */
} mock_template;

typedef struct {
    const char *text;        /* NULL when the reply has no "text" */
    /* A second text block (Responses: message item) after the tool calls,
     * a model that calls tools and goes on talking; NULL when not given.
     * The Chat format does not send it. */
    const char *text_after;
    const char *thinking;    /* NULL when there is no thinking */
    const char *signature;   /* always set when thinking is */
    mock_tool_call *calls;
    size_t n_calls;
    const char *stop_reason; /* end_turn, tool_use, max_tokens, ... (defaulted) */
    const json_t *usage;     /* borrowed scripted usage object, or NULL */
    mock_template *tpls;     /* owned: distinct templates of text and inputs */
    size_t n_tpls;
    bool text_templated;     /* text is a template */
} mock_reply;

typedef enum {
    FAULT_STATUS,
    FAULT_DROP,
    FAULT_MALFORMED,
    FAULT_STALL,
    FAULT_PING,
    FAULT_UNTERMINATED, /* the last event lacks its blank line; the body ends cleanly */
} mock_fault_kind;

typedef struct {
    mock_fault_kind kind;
    int status;               /* FAULT_STATUS */
    const json_t *headers;    /* FAULT_STATUS: object name -> string, or NULL */
    const json_t *body;       /* FAULT_STATUS: object/array/string, or NULL */
    long drop_after_bytes;    /* FAULT_DROP */
    const char *malformed;    /* FAULT_MALFORMED: raw line injected */
    long stall_ms;            /* FAULT_STALL */
    long ping_every_ms;       /* FAULT_PING: a keep-alive this often, for ever */
    const char *ping_text;    /* FAULT_PING: what is sent each time */
    long after_events;        /* FAULT_MALFORMED, FAULT_STALL, FAULT_PING */
    long times;
    char desc[64];            /* short text for the request log */
} mock_fault;

typedef struct {
    bool has_match;
    long m_assistant_turns;   /* -1 when not given */
    long m_tool_results;      /* -1 when not given */
    const char *m_last_user;  /* NULL when not given */
    const char *m_system;     /* NULL when not given */
    const char *m_body;       /* NULL when not given: substring of the raw body */
    int m_no_tools;           /* -1 not given; 1: no/empty tools; 0: some tools */
    long positional;          /* index among match-less turns, -1 if matched */
    long repeat;              /* sequence mode: successful answers before moving on */
    mock_reply reply;
    size_t chunk_size;
    long drip_ms;
    bool whole_items;         /* Responses: message text only in output_item.done */
    mock_fault *faults;
    size_t n_faults;
    long attempts;            /* guarded by mock_scenario.mu */
    long served;              /* sequence mode: fault-free answers; guarded by mu */
} mock_turn;

typedef struct {
    json_t *root;             /* owns every borrowed string above */
    mock_turn *turns;
    size_t n_turns;
    long n_positional;        /* turns without "match" */
    bool sequence;            /* "sequence": true — positional turns in file order */
    long context_window;      /* "context_window" in tokens; 0 when not set */
    long seq_pos;             /* sequence mode: next positional index; guarded by mu */
    pthread_mutex_t mu;
} mock_scenario;

/* Loads and validates path. On failure returns -1 with a message naming the
 * problem and where it is in err. */
int scenario_load(const char *path, mock_scenario *sc, char *err, size_t errlen);
void scenario_free(mock_scenario *sc);
/* Picks the turn answering conv and counts the attempt, as one step under the
 * mutex (sequence mode makes the choice depend on earlier answers). Returns
 * the turn index, or -1 when nothing answers. Otherwise *attempt gets the
 * turn's 1-based attempt number, *fault the fault this attempt must suffer
 * (NULL for the normal reply), and *seq the sequence position used (-1 when a
 * "match" turn answered or sequence mode is off). A fault-free answer from a
 * sequence turn counts towards its "repeat" and may advance the sequence. */
long scenario_pick(mock_scenario *sc, const mock_conv *conv, long *attempt,
                   const mock_fault **fault, long *seq);
/* Owned, human-readable explanation of why nothing matched conv. */
char *scenario_describe_miss(mock_scenario *sc, const mock_conv *conv);

/* ---- template.c: "$match:" / "$last:" reply templates ------------------- */

/* True when s has the form "$match:REGEX" or "$last:REGEX". */
bool template_is(const char *s);
/* Compiles the template s into r->tpls unless an identical one is there.
 * On a bad regex returns -1 with a message (bad regex "...": why) in err. */
int template_add(mock_reply *r, const char *s, char *err, size_t errlen);
/* Releases r's compiled templates. */
void template_free(mock_reply *r);

/* One request's rendering of a reply whose templates are resolved. */
typedef struct {
    mock_reply reply;      /* what the formats render; fields may point below */
    char *text;            /* owned substituted text, or NULL */
    mock_tool_call *calls; /* owned copies (arguments owned), or NULL */
    json_t *inputs;        /* owns the substituted input objects, or NULL */
} mock_reply_inst;

/* Resolves r's templates against the raw request body (len bytes,
 * NUL-terminated) into inst and returns &inst->reply. A template whose regex
 * finds nothing stays the literal "$match:REGEX" and its REGEX is appended
 * (once) to misses, a JSON array. Release with template_release(). */
const mock_reply *template_render(const mock_reply *r, const char *body, size_t len,
                                  mock_reply_inst *inst, json_t *misses);
void template_release(mock_reply_inst *inst);

/* ---- sse.c: pre-rendered event lists ------------------------------------- */

typedef struct {
    char **ev;     /* each a complete SSE event including its blank line */
    size_t *len;
    size_t n, cap;
} mock_events;

/* Appends "event: NAME\ndata: JSON\n\n" (no event line when name is NULL).
 * Takes ownership of data. */
void events_add_json(mock_events *e, const char *name, json_t *data);
/* Appends raw bytes as one event unit. */
void events_add_raw(mock_events *e, const char *s, size_t n);
void events_free(mock_events *e);

/* ---- formats ------------------------------------------------------------- */

typedef struct {
    long input, output, cache_read, cache_creation, reasoning;
    /* the part of cache_creation written with the 1-hour TTL: sent as
     * Anthropic's usage.cache_creation.{ephemeral_5m,ephemeral_1h}_input_tokens */
    long cache_creation_1h;
} mock_usage;

/* Everything a format needs to render one reply. */
typedef struct {
    const mock_reply *reply;
    const json_t *req;       /* the parsed request body (an object) */
    const char *model;       /* echoed from the request */
    unsigned long reqno;     /* makes ids unique per request */
    size_t chunk_size;
    bool whole_items;        /* Responses: no deltas for message text */
    mock_usage usage;
    long created;            /* unix seconds */
} mock_render;

typedef struct {
    const char *name;               /* "anthropic" | "chat" | "responses" */
    const char *request_id_header;  /* request-id / x-request-id */
    void (*summarize)(const json_t *req, mock_conv *out);
    json_t *(*message)(const mock_render *r);               /* owned */
    void (*stream)(const mock_render *r, mock_events *out);
    /* Error body as the provider sends it; message NULL picks the realistic
     * default text for status. Owned. */
    json_t *(*error)(int status, const char *message);
    /* The provider's refusal of a prompt of est tokens over a window of max
     * tokens (sent with HTTP 400). Owned. */
    json_t *(*window_error)(long est, long max);
    /* Why the real API would refuse this request with a 400 (a rule the
     * mock enforces so a client that breaks it fails its tests), or NULL.
     * Optional; owned. */
    char *(*refuse)(const json_t *req);
} mock_format;

extern const mock_format anthropic_format;
extern const mock_format chat_format;
extern const mock_format responses_format;

/* Stop reasons are scripted in Anthropic terms; OpenAI formats map them. */
const char *chat_finish_reason(const char *stop_reason);
/* {"error":{"message","type","param","code"}} as OpenAI sends it for status;
 * responses_api picks the Responses wording where the two differ. Owned. */
json_t *openai_error_body(int status, const char *message, bool responses_api);
/* OpenAI's context_length_exceeded refusal (Chat and Responses). Owned. */
json_t *openai_window_error(long est, long max);

/* ---- stream.c ------------------------------------------------------------ */

/* A chunked response that emits events one per read, applying drip_ms and the
 * (optional) drop/malformed/stall fault. Takes ownership of the events. */
struct MHD_Response *stream_response(mock_events *events, long drip_ms,
                                     const mock_fault *fault);

/* ---- reqlog.c ------------------------------------------------------------ */

int reqlog_open(const char *path);
/* With MOCKLLM_CAPTURE_DIR set, opens DIR/mockllm-<pid>.jsonl, which gets
 * every log line too. 0 when unset or opened, -1 when it cannot be opened. */
int reqlog_open_capture(void);
/* Writes entry as one JSONL line with "t" first. Does not take ownership. */
void reqlog_write(const json_t *entry);
void reqlog_close(void);

/* ---- server.c ------------------------------------------------------------ */

enum MHD_Result server_handle(void *cls, struct MHD_Connection *conn,
                              const char *url, const char *method,
                              const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls);
void server_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe);

#endif
