/* run_view.c — one run of the REPL, drawn as its events arrive (see
 * run_view.h): the model's text through the Markdown renderer, its
 * thinking (thinking.c), each tool call and its result (tool_view.c),
 * warnings, heartbeat events, the approval question answered by one key,
 * and AskUserQuestion.
 *
 * Threads: the main thread drains the run's queue and draws every event, so
 * rendering never happens on the run's thread; the run's threads only
 * produce events, and block in ask_from_run until the main thread has the
 * answer. The run's threads are started with SIGINT and the other signals
 * blocked, so Ctrl-C reaches the main thread (repl.c's handler). */
#include "surfaces/cli/run_view.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/sig.h"
#include "base/str.h"
#include "base/termsafe.h"
#include "surfaces/cli/agent_tree.h"
#include "surfaces/cli/elicit_form.h"
#include "surfaces/cli/render.h"
#include "surfaces/cli/term_out.h"
#include "surfaces/cli/thinking.h"
#include "surfaces/cli/tool_view.h"

/* AskUserQuestion: the run's thread hands the questions to the main thread
 * and waits for its answer. */
typedef struct ask_slot {
    pthread_mutex_t m;
    pthread_cond_t c;
    char *questions;     /* set while a question waits */
    char *server;        /* set with questions: an MCP server's elicitation form */
    char *answer;
    bool answered;
} ask_slot;

typedef struct run_view {
    repl *r;
    loom_run *run;
    render_stream *md;
    long long tokens_done;   /* output tokens of finished model calls */
    long long bytes_now;     /* text + reasoning bytes of the call under way */
    bool turn_text;          /* this model call printed text */
    tool_view tv;            /* the tool calls and their results */
    thinking_view think;     /* the model's thinking, until it is complete */
    ask_slot ask;
    agent_tree *agents;      /* the running sub-agents, drawn under the spinner */
} run_view;

static char *wait_answer(ask_slot *a, const char *questions_json, const char *server)
{
    pthread_mutex_lock(&a->m);
    /* One question at a time: an elicitation during AskUserQuestion waits. */
    while (a->questions)
        pthread_cond_wait(&a->c, &a->m);
    a->questions = xstrdup(questions_json);
    a->server = server ? xstrdup(server) : NULL;
    a->answered = false;
    while (!a->answered)
        pthread_cond_wait(&a->c, &a->m);
    char *answer = a->answer;
    a->answer = NULL;
    free(a->questions);
    a->questions = NULL;
    free(a->server);
    a->server = NULL;
    pthread_cond_broadcast(&a->c);
    pthread_mutex_unlock(&a->m);
    return answer;
}

static char *ask_from_run(void *ctx, const char *questions_json)
{
    return wait_answer(ctx, questions_json, NULL);
}

/* An MCP server's elicitation/create, answered by the person at the next
 * quiet moment of the main thread (serve_question). */
static char *elicit_from_run(void *ctx, const char *server, const char *request_json)
{
    return wait_answer(ctx, request_json, server);
}

static void view_tokens(run_view *v)
{
    /* Until a call reports its usage, its bytes stand in (about 4 a token). */
    spinner_tokens(v->r->host.out.spin, v->tokens_done + v->bytes_now / 4);
}

/* The thinking so far, once the model moves on from it. */
static void flush_thinking(run_view *v)
{
    if (!v->think.text.len)
        return;
    loom_str out = LOOM_STR_INIT;
    thinking_flush(&v->think, &v->r->host.out, v->r->opt.verbose, term_columns(), &out);
    term_write(&v->r->host.out, str_cstr(&out), out.len);
    str_free(&out);
    v->tv.last_header = NULL;
}

static void flush_text(run_view *v)
{
    flush_thinking(v);
    loom_str out = LOOM_STR_INIT;
    render_stream_finish(v->md, &out);
    term_write(&v->r->host.out, str_cstr(&out), out.len);
    str_free(&out);
}

static void on_warning(run_view *v, const json_t *p)
{
    const char *kind = json_get_str(p, "kind", "");
    if (!strcmp(kind, "model_retry")) {
        /* The reply starts over: what is held back belongs to the failed try. */
        render_stream_discard(v->md);
        str_clear(&v->think.text);
        v->bytes_now = 0;
        view_tokens(v);
        /* One line each: the final error, if it comes to that, is shown whole. */
        loom_str msg = LOOM_STR_INIT, line = LOOM_STR_INIT;
        str_printf(&msg, "retry %lld in %.1fs%s \xc2\xb7 %s: %s",
                   (long long)json_get_int(p, "attempt", 0), json_get_num(p, "delay_s", 0),
                   v->turn_text ? " (the reply starts over)" : "", json_get_str(p, "code", ""),
                   json_get_str(p, "message", ""));
        term_put_clipped(&line, str_cstr(&msg), msg.len, term_columns() - 2);
        term_printf(&v->r->host.out, TONE_YELLOW, "\xe2\x9a\xa0 %s\n", str_cstr(&line));
        str_free(&msg);
        str_free(&line);
        v->turn_text = false;
        return;
    }
    flush_text(v);
    term_printf(&v->r->host.out, TONE_YELLOW, "\xe2\x9a\xa0 %s\n", json_get_str(p, "message", kind));
}

/* heartbeat.event: something changed in the world while the run worked
 * (docs/heartbeat.md). One line, e.g.
 *   ⚡ event high · filesystem: src/a.c modified (…) (ev_<uuidv7>)
 * with the whole id (a UUIDv7's head is its timestamp: a prefix would not
 * tell events apart), the summary cut so the id stays on the line;
 * critical in bold red, high in yellow. /events lists them with their state. */
static void on_heartbeat(run_view *v, const json_t *p)
{
    flush_text(v);
    const char *urgency = json_get_str(p, "urgency", "low");
    const char *summary = json_get_str(p, "summary", "");
    const char *id = json_get_str(p, "event_id", "");
    loom_str head = LOOM_STR_INIT, line = LOOM_STR_INIT;
    str_printf(&head, "\xe2\x9a\xa1 event %s \xc2\xb7 %s: ", urgency,
               json_get_str(p, "source", "?"));
    int cols = term_columns() - 2;
    int room = cols - (int)render_display_width(head.ptr, head.len) - (int)strlen(id) - 3;
    term_put_clipped(&line, head.ptr, head.len, 0);
    term_put_clipped(&line, summary, strlen(summary), room < 16 ? 16 : room);
    if (*id) {
        str_puts(&line, " (");
        term_put_clipped(&line, id, strlen(id), 0);
        str_putc(&line, ')');
    }
    term_tone tone = !strcmp(urgency, "critical") ? TONE_ALERT
                     : !strcmp(urgency, "high")   ? TONE_YELLOW
                                                  : TONE_PLAIN;
    term_printf(&v->r->host.out, tone, "%s\n", str_cstr(&line));
    str_free(&head);
    str_free(&line);
    /* The line sits between a running call and its result: repeat the
     * call's line above the result. */
    v->tv.last_header = NULL;
}

/* ---- the approval key ---------------------------------------------------------
 * An approval is answered by one key pressed after the question is shown.
 * What was typed before — a message for later, typed while the run worked
 * — is never read as the answer: it waits in the terminal's buffer (tty
 * quiet mode keeps it there), so when a question appears it is moved to
 * `typeahead` and handed to the line editor at the next prompt, as the
 * person typed it. Keys that keep coming right after the question appears
 * are typing, not an answer: a key counts only once the keyboard has been
 * quiet for KEY_QUIET_MS since the question appeared or the last key. */

#define KEY_QUIET_MS 500


/* Non-canonical, no echo; Ctrl-C still a signal. *before gets the state to
 * restore. False when stdin is not a terminal. */
static bool tty_keys_begin(struct termios *before)
{
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, before) != 0)
        return false;
    struct termios t = *before;
    t.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ECHONL);
    t.c_cc[VMIN] = 0;
    t.c_cc[VTIME] = 0;
    tcsetattr(STDIN_FILENO, TCSANOW, &t);
    return true;
}

/* Moves whatever is waiting on stdin (a half-typed line included: it is
 * readable once the terminal is non-canonical) to typeahead. */
static void drain_typeahead(void)
{
    repl_take_run_keys(); /* what repl_esc_pressed read first: it came first */
    char buf[512];
    for (;;) {
        struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
        if (poll(&p, 1, 0) != 1 || !(p.revents & POLLIN))
            return;
        ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
        if (n <= 0)
            return;
        str_append(repl_typeahead(), buf, (size_t)n);
    }
}

/* Before any question: what was typed ahead stays out of its answer. */
static void keep_typeahead(void)
{
    struct termios before;
    if (!tty_keys_begin(&before))
        return;
    drain_typeahead();
    tcsetattr(STDIN_FILENO, TCSANOW, &before);
}

/* Shows what was kept, so the person knows it was not taken as the answer. */
static void note_typeahead(repl *r, size_t shown)
{
    if (repl_typeahead()->len <= shown || repl_typeahead_blank(0))
        return;
    loom_str line = LOOM_STR_INIT;
    str_puts(&line, "  kept for your next message: ");
    loom_str flat = LOOM_STR_INIT;
    for (size_t i = 0; i < repl_typeahead()->len; i++)
        str_putc(&flat, repl_typeahead()->ptr[i] == '\n' || repl_typeahead()->ptr[i] == '\r' ? ' ' : repl_typeahead()->ptr[i]);
    term_put_clipped(&line, flat.ptr, flat.len, term_columns() - 32);
    str_putc(&line, '\n');
    loom_str out = LOOM_STR_INIT;
    term_put_tone(&r->host.out, &out, TONE_DIM, line.ptr, line.len - 1);
    str_putc(&out, '\n');
    term_write(&r->host.out, out.ptr, out.len);
    str_free(&out);
    str_free(&flat);
    str_free(&line);
}

/* The answer key: 'y', 'a' (only when offered), 'n'; -1 for Ctrl-C, Ctrl-D,
 * the end of input or the REPL ending. Enter and other keys are ignored. */
static int approval_key(bool offer_always)
{
    long long quiet_since = repl_mono_ms();
    for (;;) {
        if (repl_sigint_seen() || repl_terminating())
            return -1;
        struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
        int rc = poll(&p, 1, 100);
        if (rc <= 0)
            continue; /* timeout, or a signal: checked above */
        if (!(p.revents & POLLIN))
            return -1; /* hung up */
        unsigned char c;
        ssize_t n = read(STDIN_FILENO, &c, 1);
        if (n == 0)
            return -1;
        if (n < 0)
            continue;
        long long now = repl_mono_ms();
        if (now - quiet_since < KEY_QUIET_MS) {
            str_putc(repl_typeahead(), (char)c); /* still typing: not an answer */
            quiet_since = now;
            continue;
        }
        if (c == 0x1b) {
            /* Esc alone denies; an arrow key's sequence is not a key. */
            struct pollfd q = {.fd = STDIN_FILENO, .events = POLLIN};
            if (poll(&q, 1, 30) == 1) {
                char junk[32];
                ssize_t ignored = read(STDIN_FILENO, junk, sizeof junk);
                (void)ignored;
                continue;
            }
            return 'n';
        }
        if (c == 0x04)
            return -1;
        if (c == 'y' || c == 'Y')
            return 'y';
        if (c == 'n' || c == 'N')
            return 'n';
        if ((c == 'a' || c == 'A') && offer_always)
            return 'a';
    }
}

/* approval.requested: show what would run, why it needs a person and the
 * exact grant "always" would make, then read one key. Nothing runs and
 * nothing is saved before that key. */
static void on_approval(run_view *v, const json_t *p)
{
    repl *r = v->r;
    const char *id = json_get_str(p, "approval_id", json_get_str(p, "id", NULL));
    if (!id)
        return;
    flush_text(v);
    spinner_end(r->host.out.spin);
    struct termios before;
    bool keys = tty_keys_begin(&before);
    size_t kept = repl_typeahead()->len;
    if (keys)
        drain_typeahead();
    const char *tool = json_get_str(p, "tool", "this tool");
    const json_t *input = json_get_obj(p, "input");
    const char *why = json_get_str(p, "message", json_get_str(p, "reason", ""));
    const json_t *always = json_get_obj(p, "always");
    const char *grant = json_get_str(always, "label", NULL);
    bool session_edits = !strcmp(json_get_str(always, "kind", ""), "session_edits");
    loom_str out = LOOM_STR_INIT;
    loom_str head = LOOM_STR_INIT;
    str_printf(&head, "? Allow this %.100s call?", tool);
    /* A sub-agent's call (its approvals sit in the main run's list): say
     * whose, so the person knows which agent wants it. */
    const char *agent_id = json_get_str(p, "agent_id", NULL);
    const char *agent = json_get_str(p, "agent_name", NULL);
    if (!agent || !*agent)
        agent = agent_tree_name(v->agents, agent_id);
    if ((!agent || !*agent) && agent_id && *agent_id)
        agent = agent_id;
    if (agent && *agent)
        str_printf(&head, " [agent %.80s]", agent);
    loom_str line = LOOM_STR_INIT;
    term_put_clipped(&line, head.ptr, head.len, term_columns() - 2);
    str_putc(&out, '\n');
    term_put_tone(&r->host.out, &out, TONE_YELLOW, line.ptr, line.len);
    str_putc(&out, '\n');
    str_free(&head);
    tool_view_approval_subject(&v->tv, &out, tool, input);
    if (*why) {
        str_clear(&line);
        term_put_clipped(&line, why, strlen(why), term_columns() - 2);
        str_puts(&out, "  ");
        term_put_tone(&r->host.out, &out, TONE_DIM, str_cstr(&line), line.len);
        str_putc(&out, '\n');
    }
    /* The grant, word for word: what `a` saves (or allows for the session). */
    str_clear(&line);
    if (grant && *grant) {
        str_puts(&out, "  ");
        term_put_tone(&r->host.out, &out, TONE_DIM, session_edits ? "a: " : "a saves ", session_edits ? 3 : 8);
        term_put_clipped(&line, grant, strlen(grant), term_columns() - 12);
        term_put_tone(&r->host.out, &out, TONE_BOLD, line.ptr, line.len);
        if (!session_edits) {
            static const char where[] = " in .loom/settings.local.json";
            term_put_tone(&r->host.out, &out, TONE_DIM, where, sizeof where - 1);
        }
        str_putc(&out, '\n');
    } else {
        const char *why_not = json_get_str(always, "why_not", "");
        str_puts(&out, "  ");
        static const char no[] = "no \"always\" for this call";
        term_put_tone(&r->host.out, &out, TONE_DIM, no, sizeof no - 1);
        if (*why_not) {
            term_put_clipped(&line, why_not, strlen(why_not), term_columns() - 40);
            term_put_tone(&r->host.out, &out, TONE_DIM, ": ", 2);
            term_put_tone(&r->host.out, &out, TONE_DIM, line.ptr, line.len);
        }
        str_putc(&out, '\n');
    }
    str_free(&line);
    const char *choices = grant ? "  y = allow once \xc2\xb7 a = allow always \xc2\xb7 n or Esc = deny"
                                : "  y = allow once \xc2\xb7 n or Esc = deny";
    term_put_tone(&r->host.out, &out, TONE_DIM, choices, strlen(choices));
    str_putc(&out, '\n');
    term_write(&r->host.out, str_cstr(&out), out.len);
    str_free(&out);
    note_typeahead(r, kept);
    const char *ask = grant ? "allow? [y/a/n] " REPL_PROMPT : "allow? [y/n] " REPL_PROMPT;
    term_write(&r->host.out, ask, strlen(ask));
    /* The answer sits between the call and its result: repeat the call's
     * line above the result. */
    v->tv.last_header = NULL;

    size_t before_keys = repl_typeahead()->len;
    int key = keys ? approval_key(grant != NULL) : -1;
    if (keys)
        tcsetattr(STDIN_FILENO, TCSANOW, &before);
    const char *shown = key == 'y' ? "yes" : key == 'a' ? "always" : key == 'n' ? "no" : "";
    term_write(&r->host.out, shown, strlen(shown));
    term_write(&r->host.out, "\n", 1);
    note_typeahead(r, before_keys);
    const char *decision = key == 'y' ? "allow" : key == 'a' ? "allow_always" : "deny";
    char *reason = NULL;
    if (key == 'n') {
        /* A reason is optional; it goes to the model with the denial. */
        repl_tty_quiet(false);
        reason = repl_ask_line(r, "  reason for the model (Enter for none) " REPL_PROMPT);
        repl_tty_quiet(true);
    }
    const char *why_denied = reason && *reason ? reason + strspn(reason, " \t") : "denied in the REPL";
    loom_status st;
    if (loom_run_answer(v->run, id, decision, key == 'n' || key < 0 ? why_denied : NULL, &st) != 0)
        term_printf(&r->host.out, TONE_RED, "%s\n", st.message);
    else if (key == 'a' && session_edits)
        term_printf(&r->host.out, TONE_DIM, "  Allowed; edits inside the workspace are accepted for the rest "
                    "of this session (permission mode acceptEdits, not saved)\n");
    else if (key == 'a')
        term_printf(&r->host.out, TONE_DIM, "  Allowed; saved %s in .loom/settings.local.json, calls it "
                    "covers will not ask again\n", grant);
    if (key < 0)
        loom_run_cancel(v->run); /* Ctrl-C or Ctrl-D: the person wants the run stopped */
    free(reason);
    spinner_begin(r->host.out.spin, "Thinking\xe2\x80\xa6");
}

/* Builds {"question": "label", …} from what was typed for each question:
 * option numbers (several, comma-separated, when multiSelect) or free text. */
static char *ask_person(run_view *v, const char *questions_json)
{
    repl *r = v->r;
    loom_error ignore;
    json_t *qs = json_parse(questions_json, strlen(questions_json), "questions", &ignore);
    json_t *answers = json_object();
    size_t i;
    json_t *q;
    bool dismissed = false;
    json_array_foreach(qs, i, q) {
        const char *text = json_get_str(q, "question", "?");
        const json_t *opts = json_get_arr(q, "options");
        bool multi = json_get_bool(q, "multiSelect", false);
        term_printf(&r->host.out, TONE_BOLD, "? %s\n", text);
        size_t k;
        json_t *o;
        json_array_foreach(opts, k, o) {
            const char *desc = json_get_str(o, "description", "");
            term_printf(&r->host.out, TONE_PLAIN, "  %zu. %s%s", k + 1, json_get_str(o, "label", ""),
                        *desc ? "" : "\n");
            if (*desc)
                term_printf(&r->host.out, TONE_DIM, " \xe2\x80\x94 %s\n", desc);
        }
        term_printf(&r->host.out, TONE_DIM, multi ? "  numbers separated by commas, or your own answer\n"
                                       : "  a number, or your own answer\n");
        char *line = repl_ask_line(r, REPL_PROMPT);
        if (!line) {
            dismissed = true;
            break;
        }
        /* Numbers pick options; anything else is the answer itself. */
        json_t *picked = json_array();
        bool numbers = *line != '\0';
        for (char *tok = line; numbers && *tok;) {
            char *end;
            long n = strtol(tok, &end, 10);
            if (end == tok || n < 1 || (size_t)n > json_array_size(opts)) {
                numbers = false;
                break;
            }
            json_array_append(picked, json_object_get(json_array_get(opts, (size_t)n - 1), "label"));
            tok = end + strspn(end, " ,");
        }
        if (numbers && json_array_size(picked) > 0)
            json_object_set(answers, text,
                            multi ? picked : json_array_get(picked, 0));
        else
            json_object_set_new(answers, text, json_string(line));
        json_decref(picked);
        free(line);
    }
    char *out = dismissed ? NULL : json_dump_compact(answers);
    json_decref(answers);
    json_decref(qs);
    return out;
}

static void serve_question(run_view *v)
{
    pthread_mutex_lock(&v->ask.m);
    char *questions = v->ask.questions && !v->ask.answered ? xstrdup(v->ask.questions) : NULL;
    char *server = questions && v->ask.server ? xstrdup(v->ask.server) : NULL;
    pthread_mutex_unlock(&v->ask.m);
    if (!questions)
        return;
    flush_text(v);
    spinner_end(v->r->host.out.spin);
    size_t kept = repl_typeahead()->len;
    keep_typeahead();
    note_typeahead(v->r, kept);
    repl_tty_quiet(false);
    char *answer = repl_sigint_seen() ? NULL
                   : server           ? elicit_person(v->r, server, questions)
                                      : ask_person(v, questions);
    repl_tty_quiet(true);
    free(questions);
    free(server);
    if (!answer && repl_sigint_seen())
        loom_run_cancel(v->run);
    v->tv.last_header = NULL; /* the answer sits between the call and its result */
    pthread_mutex_lock(&v->ask.m);
    v->ask.answer = answer;
    v->ask.answered = true;
    pthread_cond_signal(&v->ask.c);
    pthread_mutex_unlock(&v->ask.m);
    spinner_begin(v->r->host.out.spin, "Thinking\xe2\x80\xa6");
    view_tokens(v);
}

static void on_token(run_view *v, const loom_event *ev)
{
    size_t n = strlen(ev->text);
    v->bytes_now += (long long)n;
    view_tokens(v);
    if (n && ev->channel && !strcmp(ev->channel, "reasoning")) {
        thinking_feed(&v->think, ev->text, n); /* shown once complete */
        return;
    }
    if (!n || !ev->channel || strcmp(ev->channel, "text") != 0)
        return;
    flush_thinking(v);
    if (!v->turn_text)
        term_write(&v->r->host.out, "\n", 1); /* a blank line before each block */
    loom_str out = LOOM_STR_INIT;
    render_stream_feed(v->md, ev->text, n, &out);
    term_write(&v->r->host.out, str_cstr(&out), out.len);
    v->turn_text = true;
    str_free(&out);
}

/* The tree's lines under the spinner, redrawn as agents move and as their
 * clocks tick. */
static void agents_refresh(run_view *v)
{
    loom_str lines = LOOM_STR_INIT;
    agent_tree_render(v->agents, clock_mono_ms(), term_columns() - 1, &lines);
    tool_view_live_lines(&v->tv, term_columns() - 1, &lines); /* a command's last lines */
    spinner_below(v->r->host.out.spin, lines.len ? str_cstr(&lines) : NULL);
    str_free(&lines);
}

/* agent.completed: the agent leaves the tree and says how it ended. */
static void on_agent_completed(run_view *v, const json_t *p)
{
    flush_text(v);
    loom_str line = LOOM_STR_INIT;
    str_puts(&line, "  \xe2\x8e\xbf  "); /* "  ⎿  " */
    agent_tree_completed(v->agents, p, &line);
    bool ok = !strcmp(json_get_str(p, "state", "completed"), "completed");
    loom_str out = LOOM_STR_INIT;
    term_put_tone(&v->r->host.out, &out, ok ? TONE_DIM : TONE_YELLOW, line.ptr, line.len);
    str_putc(&out, '\n');
    term_write(&v->r->host.out, str_cstr(&out), out.len);
    str_free(&out);
    str_free(&line);
    agents_refresh(v);
    v->tv.last_header = NULL; /* the line sits between the Agent call and its result */
}

/* An event a sub-agent's run forwarded: its tool calls move its tree line;
 * the rest (its text, its model calls) stays in its own transcript. */
static void on_agent_event(run_view *v, const char *agent_id, loom_event_type type,
                           const json_t *p)
{
    if (type == LOOM_EV_WARNING_EMITTED) {
        /* Its warnings still matter to the person: said with whose they are. */
        flush_text(v);
        const char *who = json_get_str(p, "agent_name", NULL);
        if (!who || !*who)
            who = agent_tree_name(v->agents, agent_id);
        term_printf(&v->r->host.out, TONE_YELLOW, "\xe2\x9a\xa0 [agent %.80s] %s\n",
                    who && *who ? who : agent_id, json_get_str(p, "message", ""));
        v->tv.last_header = NULL;
        return;
    }
    if (type == LOOM_EV_TOOL_STARTED)
        agent_tree_tool(v->agents, agent_id, json_get_str(p, "tool", NULL));
    else if (type == LOOM_EV_TOOL_FINISHED || type == LOOM_EV_TOOL_FAILED)
        agent_tree_tool(v->agents, agent_id, NULL);
    else
        return;
    agents_refresh(v);
}

static void on_event(run_view *v, const loom_event *ev)
{
    if (ev->text) {
        if (!agent_tree_token_from_agent(ev))
            on_token(v, ev); /* tokens carry their text: no JSON to parse */
        return;
    }
    loom_error ignore;
    json_t *doc = json_parse(ev->json, strlen(ev->json), "event", &ignore);
    const json_t *p = json_get_obj(doc, "payload");
    loom_event_type type = ev->kind;
    const char *from_agent = agent_tree_event_agent(ev, doc);
    if (from_agent && type != LOOM_EV_APPROVAL_REQUESTED) {
        on_agent_event(v, from_agent, type, p);
    } else if (type == LOOM_EV_AGENT_SPAWNED) {
        agent_tree_spawned(v->agents, p, clock_mono_ms());
        agents_refresh(v);
    } else if (type == LOOM_EV_AGENT_PROGRESS) {
        agent_tree_progress(v->agents, p, clock_mono_ms());
        agents_refresh(v);
    } else if (type == LOOM_EV_AGENT_COMPLETED) {
        on_agent_completed(v, p);
    } else if (type == LOOM_EV_MODEL_COMPLETED) {
        flush_text(v);
        v->tokens_done += json_get_int(json_get_obj(p, "usage"), "outputTokens", 0);
        v->bytes_now = 0;
        v->turn_text = false;
        view_tokens(v);
    } else if (type == LOOM_EV_TOOL_STARTED) {
        flush_text(v);
        tool_view_started(&v->tv, p);
    } else if (type == LOOM_EV_TOOL_FINISHED || type == LOOM_EV_TOOL_FAILED) {
        bool live = v->tv.live_id != NULL;
        tool_view_done(&v->tv, p);
        if (live && !v->tv.live_id)
            agents_refresh(v); /* the command's live lines go */
    } else if (type == LOOM_EV_WARNING_EMITTED) {
        on_warning(v, p);
    } else if (type == LOOM_EV_HEARTBEAT_EVENT) {
        on_heartbeat(v, p);
    } else if (type == LOOM_EV_APPROVAL_REQUESTED) {
        on_approval(v, p);
    } else if (type == LOOM_EV_TOOL_PROGRESS) {
        if (tool_view_progress(&v->tv, p))
            agents_refresh(v);
    } else if (type == LOOM_EV_MCP_SERVER_CHANGED &&
               !strcmp(json_get_str(p, "state", ""), "failed")) {
        flush_text(v);
        char *name = termsafe_dup(json_get_str(p, "server", "?"));
        char *why = termsafe_dup(json_get_str(p, "error", "no reason given"));
        term_printf(&v->r->host.out, TONE_YELLOW,
                    "\xe2\x9a\xa0 MCP server %s failed: %s (/mcp reconnect %s)\n", name, why, name);
        free(name);
        free(why);
    }
    json_decref(doc);
}

/* The last word of a run that did not simply complete. */
static void show_outcome(run_view *v, const char *result_json)
{
    repl *r = v->r;
    loom_error ignore;
    json_t *res = json_parse(result_json, strlen(result_json), "result", &ignore);
    const char *state = json_get_str(res, "state", "failed");
    if (json_is_number(json_object_get(res, "cost_usd"))) {
        if (r->host.cost_usd < 0)
            r->host.cost_usd = 0;
        r->host.cost_usd += json_get_num(res, "cost_usd", 0);
    }
    /* /cost breaks the last run down by agent when sub-agents ran. */
    free(r->host.last_by_agent);
    r->host.last_by_agent = NULL;
    const json_t *by_agent = json_object_get(res, "usage_by_agent");
    if (json_array_size(by_agent) > 0)
        r->host.last_by_agent = json_dump_compact(by_agent);
    const json_t *err = json_get_obj(res, "error");
    if (!strcmp(state, "cancelled")) {
        term_printf(&r->host.out, TONE_YELLOW,
                    "  \xe2\x8e\xbf  Interrupted by user \xc2\xb7 say what to do instead, or "
                    "/rewind to undo the turn\n");
    } else if (strcmp(state, "completed") != 0) {
        term_printf(&r->host.out, TONE_RED, "\xe2\x9c\x97 %s \xc2\xb7 %s%s%s%s\n", state,
                    json_get_str(err, "message", json_get_str(res, "stop_reason", "")),
                    err ? " [" : "", err ? json_get_str(err, "code", "") : "", err ? "]" : "");
    }
    json_decref(res);
}

void run_view_run(repl *r, const char *goal)
{
    run_view v = {.r = r};
    v.md = render_stream_new(r->host.out.color, term_columns());
    tool_view_init(&v.tv, &r->host.out, r->host.cwd);
    pthread_mutex_init(&v.ask.m, NULL);
    pthread_cond_init(&v.ask.c, NULL);
    v.agents = agent_tree_new();
    loom_run_options ro = {.queue_events = true, .ask_user = ask_from_run, .ask_ctx = &v.ask,
                           .elicit = elicit_from_run, .elicit_ctx = &v.ask};
    loom_status st;
    /* The run's threads inherit this mask: Ctrl-C stays with this thread. */
    static const int handled[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
    sigset_t old;
    sig_block(handled, sizeof handled / sizeof *handled, &old);
    loom_run *run = loom_run_start(r->host.session, goal, &ro, &st);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!run) {
        term_printf(&r->host.out, TONE_RED, "%s\n", st.message);
        goto done;
    }
    v.run = run;
    repl_run_attach(run);
    repl_tty_quiet(true);
    spinner_begin(r->host.out.spin, "Thinking\xe2\x80\xa6");
    for (;;) {
        loom_event *ev = NULL;
        int rc = loom_run_next_event(run, &ev, 100);
        if (rc < 0)
            break;
        if (repl_esc_pressed()) /* Esc interrupts as Ctrl-C does (keys.h) */
            loom_run_cancel(run);
        if (rc == 1) {
            on_event(&v, ev);
            loom_event_free(ev);
        } else {
            /* Only once the queue is drained: the call's header comes first. */
            serve_question(&v);
            if (agent_tree_count(v.agents))
                agents_refresh(&v); /* the agents' clocks */
        }
    }
    flush_text(&v);
    spinner_below(r->host.out.spin, NULL);
    spinner_end(r->host.out.spin);
    loom_run_wait(run);
    show_outcome(&v, loom_run_result_json(run));
    repl_run_detach();
    repl_tty_quiet(false);
    loom_run_free(run);
done:
    tool_view_free(&v.tv);
    thinking_free(&v.think);
    agent_tree_free(v.agents);
    render_stream_free(v.md);
    pthread_mutex_destroy(&v.ask.m);
    pthread_cond_destroy(&v.ask.c);
    term_write(&r->host.out, "\n", 1);
}
