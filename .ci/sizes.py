#!/usr/bin/env python3
"""The size check: no file under src/ over FILE_MAX lines and no function
over FUNC_MAX lines, unless the reason is written down.

- A file may be longer when its opening comment (the first block comment)
  contains a line starting "Size:" that says why (a parser kept whole, …).
- A function may be longer when the comment right above it contains
  "Long:" and the reason.

Usage: .ci/sizes.py [ROOT] [--table]   --table prints the largest files and
functions instead of checking (for notes). Exits 1 on any violation.
Functions are found the way the house style writes them: the body opens
with "{" alone at column 0 after the signature and closes with "}" at
column 0.
"""
import re, sys

from srctree import report, root_and_flags, sources

FILE_MAX = 1000
FUNC_MAX = 150
NAME = re.compile(r"([A-Za-z_]\w*)\s*\(")


def opening_comment(lines):
    text = []
    for line in lines:
        text.append(line)
        if "*/" in line:
            break
    return "".join(text)


def functions(lines):
    """Yields (name, first line number, length, comment above)."""
    i = 0
    n = len(lines)
    while i < n:
        if lines[i].rstrip("\n") == "{" and i > 0:
            # The signature: back up to the line that starts it.
            j = i - 1
            while j > 0 and lines[j][:1] in (" ", "\t") and "(" not in lines[j].split("//")[0][:1]:
                j -= 1
            sig = "".join(lines[j:i])
            m = NAME.search(sig)
            k = i + 1
            while k < n and lines[k].rstrip("\n") != "}":
                k += 1
            above = []
            c = j - 1
            if c >= 0 and lines[c].rstrip().endswith("*/"):
                while c >= 0:
                    above.insert(0, lines[c])
                    if lines[c].lstrip().startswith("/*"):
                        break
                    c -= 1
            yield (m.group(1) if m else "?", j + 1, k - j + 1, "".join(above))
            i = k + 1
        else:
            i += 1


def main(argv):
    root, flags = root_and_flags(argv)
    table = "--table" in flags
    bad, files, funcs = [], [], []
    for rel, lines in sources(root):
        rel = "src/" + rel
        files.append((len(lines), rel))
        if len(lines) > FILE_MAX and not re.search(r"^\s*\*?\s*Size:", opening_comment(lines), re.M):
            bad.append("%s: %d lines (over %d) and no \"Size:\" reason in its opening comment"
                       % (rel, len(lines), FILE_MAX))
        for fname, start, length, above in functions(lines):
            funcs.append((length, "%s:%d %s" % (rel, start, fname)))
            if length > FUNC_MAX and "Long:" not in above:
                bad.append("%s:%d: %s() is %d lines (over %d) and the comment above it gives "
                           "no \"Long:\" reason" % (rel, start, fname, length, FUNC_MAX))
    if table:
        print("largest files:")
        for n, rel in sorted(files, reverse=True)[:15]:
            print("%6d  %s" % (n, rel))
        print("longest functions:")
        for n, where in sorted(funcs, reverse=True)[:15]:
            print("%6d  %s" % (n, where))
        return 0
    return report("sizes.py", bad, "file(s)/function(s) over the size limits of DESIGN.md §2")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
