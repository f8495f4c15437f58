#!/usr/bin/env bash
# check_suite.sh CAPTURE_DIR — checks every request body the e2e suite sent
# against the official SDKs' types (check_bodies.sh). Each e2e scenario's
# mockllm servers write their request logs to CAPTURE_DIR/<scenario>/
# (MOCKLLM_CAPTURE_DIR, set by tests/e2e/_lib.sh from
# LOOM_REQUEST_CAPTURE_DIR, which ctest sets). Only Loom's own requests count
# (User-Agent loom/…: mockllm_smoke.sh sends bad bodies on purpose with
# curl), on the three API paths, with a JSON-object body; identical bodies
# are checked once. Run by ctest as validate.e2e_requests after the e2e
# scenarios (a fixture cleanup); it fails when nothing was captured, so a
# run that lost the capture cannot pass quietly.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
capture=$1
work="$capture.bodies"
rm -rf "$work"
mkdir -p "$work"
python3 - "$capture" "$work" <<'PY'
import hashlib, json, os, sys
capture, work = sys.argv[1], sys.argv[2]
seen, n, dup = set(), 0, 0
for test in sorted(os.listdir(capture)):
    tdir = os.path.join(capture, test)
    if not os.path.isdir(tdir):
        continue
    k = 0
    for name in sorted(os.listdir(tdir)):
        with open(os.path.join(tdir, name), encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                ua = (e.get("headers") or {}).get("user-agent", "")
                if e.get("format") not in ("anthropic", "chat", "responses") or not ua.startswith("loom/"):
                    continue
                raw = e.get("raw_body")
                try:
                    body = json.loads(raw) if isinstance(raw, str) else None
                except ValueError:
                    body = None
                if not isinstance(body, dict):
                    continue
                h = hashlib.sha256(raw.encode()).hexdigest()
                if h in seen:
                    dup += 1
                    continue
                seen.add(h)
                k += 1; n += 1
                base = os.path.join(work, "%s-%03d" % (test, k))
                with open(base + ".json", "w") as out:
                    json.dump(body, out, indent=2, ensure_ascii=False)
                with open(base + ".api", "w") as out:
                    out.write(e["format"] + "\n")
print("captured: %d distinct request bodies (%d repeats) from %s" % (n, dup, capture))
PY
exec bash "$here/check_bodies.sh" "$work"
