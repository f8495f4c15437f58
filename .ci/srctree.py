"""What the checks in .ci/ share: the repository root from the command
line, every C source under src/ with its lines, and the report that ends a
check (one line per finding, a count, exit status 1 on any)."""
import os


def root_and_flags(argv):
    """(root, flags): the first non-flag argument or the repository, and the
    set of --flags given."""
    args = [a for a in argv if not a.startswith("--")]
    flags = {a for a in argv if a.startswith("--")}
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    return root, flags


def sources(root):
    """Yields (path relative to src/, lines) for every .c and .h under
    root/src, in a stable order."""
    src_root = os.path.join(root, "src")
    for dirpath, dirs, names in os.walk(src_root):
        dirs.sort()
        for name in sorted(names):
            if name.endswith((".c", ".h")):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    yield os.path.relpath(path, src_root), f.readlines()


def report(tool, bad, summary):
    """Prints the findings and, when there are any, "tool: N summary".
    Returns the exit status."""
    for line in bad:
        print(line)
    if bad:
        print("%s: %d %s" % (tool, len(bad), summary))
        return 1
    return 0
