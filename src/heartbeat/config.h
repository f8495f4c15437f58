/* config.h — the heartbeat's settings block (seed 000 L269–287): tick
 * intervals, the ΔH threshold, the watch sources and the interrupt policy.
 *
 * Parsed from the value of the "heartbeat" key of a settings file or an
 * agent profile. Every relative path is resolved against the cwd given to
 * the parser, so the parsed config is independent of the process's cwd.
 * Unknown keys and wrong types are errors naming the exact place, e.g.
 * `heartbeat.watch_sources[1].pid_file: must be a non-empty string`.
 * The full reference, with defaults, is docs/heartbeat.md.
 */
#ifndef LOOM_HEARTBEAT_CONFIG_H
#define LOOM_HEARTBEAT_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "context/working.h"

/* seed 000 L272–273: T_hb 5 s, δ_hb 0.1. */
#define HB_DEFAULT_T_HB 5.0
#define HB_DEFAULT_DELTA 0.1
/* How long a subject (a path, a topic, …) keeps counting as recently
 * reported for the novelty term of ΔH (gate.h). */
#define HB_DEFAULT_NOVELTY_WINDOW 60.0
/* Files above this size are compared by size and mtime, not content. */
#define HB_DEFAULT_MAX_HASH_BYTES (64ll << 20)
/* Per filesystem source; beyond it files are not tracked (counted as errors). */
#define HB_DEFAULT_MAX_FILES 50000
/* Points a resource must fall below its threshold before it can fire again. */
#define HB_DEFAULT_HYSTERESIS 2.0

/* What the heartbeat does with an event of a given urgency (seed 000 L283–286). */
typedef enum {
    INTERRUPT_QUEUE,    /* projected into pending events; read at the next Observe */
    INTERRUPT_REQUEST,  /* … and interrupt_requested: the running tool ends gracefully */
    INTERRUPT_FORCE,    /* … and the Act stops at once; Observe without a model call */
} interrupt_action;

typedef enum {
    WATCH_FILESYSTEM,
    WATCH_PROCESS,
    WATCH_MF_EVENTS,
    WATCH_RESOURCE,
    WATCH_EXTERNAL_SIGNAL,
} watch_type;

typedef struct watch_signal_rule {
    char *name;              /* "SIGINT", or any name `loom signal` sends */
    event_urgency urgency;
} watch_signal_rule;

/* One entry of watch_sources. Only the fields of its type are used. */
typedef struct watch_config {
    watch_type type;
    double weight;           /* the source's weight in ΔH, [0,1]; default 1 (mf_events 0.8) */
    /* Urgency. filesystem: urgency while an Act runs (default high) and
     * idle_urgency otherwise (default low); a string in the settings sets
     * both. process: high. mf_events: low unless the event file says.
     * resource: critical. external_signal: for names without a rule (high). */
    event_urgency urgency;
    event_urgency idle_urgency;

    /* filesystem */
    char **paths;            /* absolute, folded */
    size_t n_paths;
    bool method_hash;        /* "hash" (default) or "mtime" */
    char **ignore;           /* fnmatch patterns on a file or directory's name */
    size_t n_ignore;         /* defaults first, then the configured ones */
    long long max_hash_bytes;
    size_t max_files;
    bool no_inotify;         /* not a setting: tests exercise the walking fallback */

    /* process */
    char *pid_file;          /* absolute */

    /* mf_events */
    char *dir;               /* absolute; NULL: heartbeat_env.mf_dir, else <cwd>/.loom/events */
    char **topics;           /* NULL/0: every topic (subdirectory) */
    size_t n_topics;
    bool backlog;            /* report files already there at start (default false) */

    /* resource: a threshold < 0 is off */
    double memory_pct;
    double disk_pct;
    char *disk_path;         /* absolute; default the cwd */
    double hysteresis;
    char *meminfo_path;      /* not a setting: tests point it at a fake; NULL = /proc/meminfo */

    /* external_signal: the rules (defaults SIGINT, SIGTERM critical; SIGUSR1,
     * SIGHUP high), then the configured ones which override them */
    watch_signal_rule *signals;
    size_t n_signals;
} watch_config;

typedef struct heartbeat_config {
    bool enabled;            /* default true when the block is present */
    double T_hb;             /* seconds between ticks; default 5 */
    double T_hb_act;         /* seconds between ticks while an Act runs; default T_hb */
    double delta_hb;         /* ΔH threshold δ_hb; default 0.1 */
    double novelty_window;   /* seconds; default 60 */
    watch_config *sources;
    size_t n_sources;
    interrupt_action policy[3];  /* indexed by event_urgency */
} heartbeat_config;

/* Defaults with no block at all: disabled, no sources. */
void heartbeat_config_default(heartbeat_config *out);

/* Parses the value of the "heartbeat" key (block may be NULL: defaults,
 * disabled). Relative paths resolve against cwd (absolute). 0, or -code
 * with err naming the key path; out is left in default state on error.
 * Without "watch_sources" the sources are resource (memory 90 %, disk 95 %
 * of the cwd's filesystem) and external_signal. Free with
 * heartbeat_config_free. */
int heartbeat_config_from_json(const json_t *block, const char *cwd, heartbeat_config *out,
                               loom_error *err);
void heartbeat_config_free(heartbeat_config *cfg);

/* The config as JSON (absolute paths, every default written out), for
 * `loom config` style reports and tests. Caller decrefs. */
json_t *heartbeat_config_to_json(const heartbeat_config *cfg);

const char *watch_type_name(watch_type t);
const char *interrupt_action_name(interrupt_action a);
/* "low" | "high" | "critical" → 0 and *out; -1 otherwise. */
int hb_urgency_parse(const char *s, event_urgency *out);

/* ---- for the parsers of the watch sources' blocks (watch/<source>.c) ----
 * Each getter leaves *out alone when the key is absent and returns 0, or
 * -LOOM_ERR_CONFIG with err naming `where` (the object's key path) and the
 * key. */
int hb_cfg_check_keys(const json_t *obj, const char *const *allowed, const char *where,
                      loom_error *err);
/* A number in [lo, hi] ((lo, hi] when lo_open). */
int hb_cfg_number(const json_t *obj, const char *key, const char *where, double lo, double hi,
                  bool lo_open, double *out, loom_error *err);
int hb_cfg_bool(const json_t *obj, const char *key, const char *where, bool *out,
                loom_error *err);
/* A non-empty string, borrowed from obj. */
int hb_cfg_string(const json_t *obj, const char *key, const char *where, const char **out,
                  loom_error *err);
/* v itself must be a level; where names v. */
int hb_cfg_urgency(const json_t *v, const char *where, event_urgency *out, loom_error *err);
/* "urgency": one level, for both urgency and idle_urgency. */
int hb_cfg_level(const json_t *src, const char *where, watch_config *w, loom_error *err);
/* An array of non-empty strings (may be empty unless nonempty); *out and *n
 * are set only when the key is there. */
int hb_cfg_strv(const json_t *obj, const char *key, const char *where, bool nonempty,
                char ***out, size_t *n, loom_error *err);
/* Each path made absolute against cwd and folded, in place. */
void hb_cfg_resolve_all(char **v, size_t n, const char *cwd);
/* The strings as a JSON array, for heartbeat_config_to_json. */
json_t *hb_cfg_strv_json(char **v, size_t n);

#endif
