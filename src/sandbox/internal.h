/* internal.h — what the files of src/sandbox/ share and nothing outside
 * them sees: the devices every policy leaves writable, the path test the
 * policy and the Landlock walk agree on, and the seccomp programs Landlock's
 * prepare joins to its ruleset. Threading: as the functions' own files say. */
#ifndef LOOM_SANDBOX_INTERNAL_H
#define LOOM_SANDBOX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

struct sock_filter;

/* Devices a command may write (or needs ioctls on) whatever the policy:
 * output thrown away, terminals, pseudo-terminals, randomness
 * (sandbox_policy.c). */
extern const char *const sandbox_devices[];
extern const size_t sandbox_n_devices;

/* p is root or lies beneath it (both absolute, compared as strings). */
bool sandbox_path_under(const char *p, const char *root);

/* The seccomp program variants (seccomp.c): the network denied or not;
 * with allowUnixSockets or not; metadata calls (and connect) sent to the
 * supervisor (NOTIFY) or refused outright; Loom guarded from its commands'
 * signals (GUARD); TCP allowed as far as the filtering proxy (NET_PROXY). */
enum {
    BPF_NET_DENY = 1,
    BPF_UNIX_LIST = 2,
    BPF_NOTIFY = 4,
    BPF_GUARD = 8,
    BPF_NET_PROXY = 16, /* with NET_DENY: TCP sockets too, connect() judged (the proxy only) */
    BPF_VARIANTS = 32
};

/* The program for variant, built on first use and kept for the process's
 * life. NULL with err set on failure. Thread-safe. */
const struct sock_filter *sandbox_bpf_get(int variant, unsigned short *len, char *err,
                                          size_t cap);

#endif
