#!/usr/bin/env python3
"""The layer check: every `#include "…"` under src/ must go down the order of
DESIGN.md §1, or sideways along an edge listed in SIDEWAYS below.

Usage: .ci/layers.py [ROOT]   (ROOT defaults to the repository)
Prints one line per violation, "file:line: why", and exits 1 if there is any;
--graph prints the cross-folder include counts by pair instead (for notes).

A folder is the first path segment under src/ (src/surfaces/<name> counts
as one surface each). Headers in include/ are the public API: loom_protocol.h
may be included from anywhere, loom.h only from api/ and the surfaces.
"""
import re, sys

from collections import Counter

from srctree import report, root_and_flags, sources

# Lowest first. Folders on one line form one layer.
LAYERS = [
    ["base"],
    ["net", "message"],                      # transport
    ["session", "provider"],                 # store
    ["shell", "policy", "sandbox", "hooks",  # harness
     "context", "heartbeat", "tools", "telemetry"],
    ["governance"],
    ["runtime"],
    ["ext"],
    ["agents"],
    ["api"],
    ["surfaces"],
]

# Sideways edges inside one layer: (from, to). They must stay one-way (the
# check refuses a cycle among them), and each is the reason written in the
# including file's opening comment.
SIDEWAYS = {
    ("policy", "shell"),        # rules and the risk classifier read parsed Bash
    ("hooks", "shell"),
    ("hooks", "policy"),        # hook `if` conditions use the one rule engine
    ("sandbox", "policy"),      # the sandbox denies what policy calls secrets
    ("context", "policy"),      # memory files never load a credential store
    ("heartbeat", "context"),   # heartbeat events land in C_working
    ("tools", "shell"),
    ("tools", "policy"),
    ("tools", "sandbox"),       # Bash runs confined
    ("tools", "context"),       # Renew, AckEvent, TodoWrite change C_working
    ("tools", "heartbeat"),     # a file change is announced to the heartbeat
}

# A surface may include only these, its own folder and base/.
SURFACE_ALLOWED = {"loom.h", "loom_protocol.h"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(folder):
    for i, names in enumerate(LAYERS):
        if folder in names:
            return i
    return None


def folder_of(rel):
    """rel is a path under src/ ("policy/rules.c")."""
    parts = rel.split("/")
    if parts[0] == "surfaces" and len(parts) > 2:
        return "surfaces/" + parts[1]
    return parts[0]


def check_sideways_acyclic():
    graph = {}
    for a, b in SIDEWAYS:
        assert layer_of(a) == layer_of(b) and layer_of(a) is not None, (a, b)
        graph.setdefault(a, set()).add(b)
    state = {}

    def visit(n, path):
        if state.get(n) == 1:
            sys.exit("layers.py: SIDEWAYS has a cycle: " + " -> ".join(path + [n]))
        if state.get(n) == 2:
            return
        state[n] = 1
        for m in sorted(graph.get(n, ())):
            visit(m, path + [n])
        state[n] = 2

    for n in sorted(graph):
        visit(n, [])


def judge(src_folder, inc):
    """None if allowed, else the reason. inc is the include as written."""
    if "/" not in inc:
        if inc in ("loom.h", "loom_protocol.h"):
            if inc == "loom.h" and not (src_folder == "api" or src_folder.startswith("surfaces")):
                return 'includes "loom.h" (the API) from below the API; use loom_protocol.h'
            return None
        return None  # a header beside the file
    to = folder_of(inc)
    if src_folder.startswith("surfaces"):
        if to == src_folder or to == "base":
            return None
        return ('a surface includes "%s"; surfaces may include only loom.h, '
                'loom_protocol.h, base/ and their own folder' % inc)
    if to.startswith("surfaces"):
        return 'includes surface header "%s"' % inc
    if to == src_folder:
        return None
    lf, lt = layer_of(src_folder), layer_of(to)
    if lf is None:
        return "folder src/%s/ is not in the layer table (.ci/layers.py)" % src_folder
    if lt is None:
        return 'includes "%s": folder %s/ is not in the layer table' % (inc, to)
    if lt < lf:
        return None
    if lt == lf:
        if (src_folder, to) in SIDEWAYS:
            return None
        return ('includes "%s" sideways (%s -> %s is not a listed one-way edge)'
                % (inc, src_folder, to))
    return 'includes "%s" upward (%s is below %s)' % (inc, src_folder, to)


def scan(root):
    for rel, lines in sources(root):
        for lineno, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if m:
                yield rel, lineno, m.group(1)


def main(argv):
    root, flags = root_and_flags(argv)
    graph = "--graph" in flags
    check_sideways_acyclic()
    bad, pairs = [], Counter()
    for rel, lineno, inc in scan(root):
        src_folder = folder_of(rel)
        if "/" in inc and folder_of(inc) != src_folder:
            pairs[(src_folder, folder_of(inc))] += 1
        why = judge(src_folder, inc)
        if why:
            bad.append("src/%s:%d: %s" % (rel, lineno, why))
    if graph:
        for (a, b), n in sorted(pairs.items()):
            print("%4d  %s -> %s" % (n, a, b))
        return 0
    return report("layers.py", bad, "include(s) break the layer order of DESIGN.md §1")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
