/* setup.c — the command line → loom_config → session path shared by the
 * headless mode (print_mode.c) and the REPL (repl.c). */
#include "surfaces/cli/setup.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"
#include "surfaces/cli/session_picker.h"

/* Repeated rule flags become one comma-separated option. */
static int set_rules(loom_config *cfg, const char *key, const char *const *flags, int n,
                     loom_status *st)
{
    if (n == 0)
        return 0;
    loom_str joined = LOOM_STR_INIT;
    for (int i = 0; i < n; i++)
        str_printf(&joined, "%s%s", i ? "," : "", flags[i]);
    int rc = loom_config_set(cfg, key, joined.ptr, st);
    str_free(&joined);
    return rc;
}

int setup_mcp_options(loom_config *cfg, const char *const *configs, int n, bool strict,
                      loom_status *st)
{
    if (n > 0) {
        /* The option is one JSON array of the flags' values. */
        json_t *list = json_array();
        for (int i = 0; i < n; i++)
            json_array_append_new(list, json_string(configs[i]));
        char *text = json_dumps(list, JSON_COMPACT);
        json_decref(list);
        int rc = text ? loom_config_set(cfg, "mcp_config", text, st) : -1;
        free(text);
        if (rc != 0)
            return -1;
    }
    return strict ? loom_config_set(cfg, "strict_mcp_config", "true", st) : 0;
}

loom_config *setup_config(const cli_options *opt, bool interactive, const char *model,
                          loom_status *st)
{
    loom_config *cfg = loom_config_new();
    char num[32];
    struct {
        const char *key;
        const char *value;
    } pairs[] = {
        {"provider", opt->provider},
        {"model", model ? model : opt->model},
        {"base_url", opt->base_url},
        {"cassette", opt->cassette},
        {"system_prompt", opt->system_prompt},
        {"append_system_prompt", opt->append_system_prompt},
        {"cwd", opt->cwd},
        {"permission_mode", opt->permission_mode},
        {"fallback_model", opt->fallback_model},
        {"thinking", opt->thinking},
        {"reasoning_effort", opt->reasoning_effort},
        {"stream", opt->no_stream ? "false" : NULL},
        {"interactive", interactive ? "true" : "false"},
        {"agents", opt->agents},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (pairs[i].value && loom_config_set(cfg, pairs[i].key, pairs[i].value, st) != 0)
            goto fail;
    if (opt->max_retries >= 0) {
        snprintf(num, sizeof num, "%d", opt->max_retries);
        if (loom_config_set(cfg, "max_retries", num, st) != 0)
            goto fail;
    }
    if (opt->max_turns > 0) {
        snprintf(num, sizeof num, "%d", opt->max_turns);
        if (loom_config_set(cfg, "max_turns", num, st) != 0)
            goto fail;
    }
    if ((opt->token_budget && loom_config_set(cfg, "token_budget", opt->token_budget, st) != 0) ||
        (opt->context_window &&
         loom_config_set(cfg, "context_window", opt->context_window, st) != 0))
        goto fail;
    if (set_rules(cfg, "allowed_tools", opt->allowed_tools, opt->n_allowed_tools, st) != 0 ||
        set_rules(cfg, "disallowed_tools", opt->disallowed_tools, opt->n_disallowed_tools, st) != 0)
        goto fail;
    if (opt->n_add_dirs > 0) {
        /* One directory a line: a path may hold a comma. */
        loom_str dirs = LOOM_STR_INIT;
        for (int i = 0; i < opt->n_add_dirs; i++)
            str_printf(&dirs, "%s%s", i ? "\n" : "", opt->add_dirs[i]);
        int rc = loom_config_set(cfg, "add_dirs", dirs.ptr, st);
        str_free(&dirs);
        if (rc != 0)
            goto fail;
    }
    if (setup_mcp_options(cfg, opt->mcp_configs, opt->n_mcp_configs, opt->strict_mcp_config,
                          st) != 0)
        goto fail;
    if (loom_config_load_settings(cfg, st) != 0)
        goto fail;
    return cfg;
fail:
    loom_config_free(cfg);
    return NULL;
}

static void fail(loom_status *st, const char *message)
{
    st->code = LOOM_ERR_INVALID_REQUEST;
    st->code_name = "invalid_request";
    snprintf(st->message, sizeof st->message, "%s", message);
}

/* --resume without an id: the picker on a terminal; elsewhere (-p, a pipe)
 * the list and an error asking for an id. The chosen id, or NULL with st
 * set. */
static char *pick_session(const cli_options *opt, loom_agent *agent, loom_status *st)
{
    char *list = loom_sessions_json(agent, NULL);
    const char *no_color = getenv("NO_COLOR");
    term_out out = {.color = isatty(STDOUT_FILENO) && !(no_color && *no_color)};
    pthread_mutex_init(&out.lock, NULL);
    char *id = NULL;
    bool cancelled = false;
    bool tty = !opt->print && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
    if (tty) {
        term_printf(&out, TONE_BOLD, "Resume a session of this directory\n");
        id = picker_choose(&out, list, NULL, &cancelled);
    } else {
        /* stdout may be a script's: the list goes to stderr. */
        picker_print_plain(stderr, list);
    }
    if (!id)
        fail(st, cancelled ? "no session was chosen"
                 : !strcmp(list ? list : "[]", "[]")
                     ? "there is no session to resume in this directory"
                     : "--resume needs a session id here (no terminal to choose on): loom "
                       "--resume ID, an id or a unique prefix from the list above");
    free(list);
    pthread_mutex_destroy(&out.lock);
    return id;
}

loom_session *setup_session(const cli_options *opt, loom_agent *agent, loom_status *st)
{
    if (!opt->resume && !opt->resume_pick && !opt->continue_latest)
        return loom_session_new(agent, st);
    char *picked = opt->resume_pick ? pick_session(opt, agent, st) : NULL;
    if (opt->resume_pick && !picked)
        return NULL;
    const char *id = picked ? picked : opt->resume;
    loom_session *s = id ? loom_session_resume(agent, id, st) : loom_session_continue(agent, st);
    free(picked);
    if (s && opt->fork_session) {
        loom_session *fork = loom_session_fork(s, st);
        loom_session_free(s);
        s = fork;
    }
    /* The session's own mode comes back with it, unless this start names
     * one (--permission-mode, --dangerously-skip-permissions). */
    char note[800];
    if (s && !opt->permission_mode &&
        loom_session_restore_permission_mode(s, note, sizeof note, NULL) == 2)
        fprintf(stderr, "loom: warning: %s\n", note);
    return s;
}
