#!/usr/bin/env bash
# check_bodies.sh DIR — checks request bodies against the official SDKs'
# types. DIR holds NAME.json (one request body) with NAME.api beside it
# (anthropic, chat or responses: the API it was sent to). Each body becomes
# NAME.ts, `export const body: <SDK request type> = <the body>;`, and one
# `tsc --noEmit --strict` run checks them all: an unknown field is an excess
# property, a wrong type or a missing required field is named by tsc with its
# path. Then what the types cannot say: the parameters a model family
# refuses. Each problem is printed as `not ok - NAME…: message` with the
# lines of the body around the field. Exit status 0 when every body passes,
# 1 when one does not, 2 when the types are not installed.
# Used by tests/e2e/requests_match_sdk_types.sh and tests/validate/check_suite.sh.
set -euo pipefail
shopt -s nullglob
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
TSC="$here/node_modules/.bin/tsc"
if [ ! -x "$TSC" ] || [ ! -d "$here/node_modules/@anthropic-ai/sdk" ] ||
   [ ! -d "$here/node_modules/openai" ]; then
  echo "not ok - the SDK types are not installed; run: bash scripts/deps.sh" \
       "(or: npm ci --prefix tests/validate)" >&2
  exit 2
fi
problems=0
bad() { problems=$((problems + 1)); echo "not ok - $*" >&2; }

# One python pass writes the .ts files (the SDK type chosen by API and
# stream flag) and checks what the types cannot say: OpenAI's reasoning
# models (gpt-5 except gpt-5-chat, o1, o3, o4-mini, ...) refuse
# `temperature` (400 unsupported_value: issue #12's report of the live API)
# and, on Chat Completions, `max_tokens` ("not compatible with o-series
# models ... deprecated in favor of max_completion_tokens": openai-node
# resources/chat/completions/completions.d.ts, `max_tokens`, openai 7.59.0).
python3 - "$dir" > "$dir/pre.txt" <<'PY' || { cat "$dir/pre.txt" >&2; exit 1; }
import json, os, re, sys
d = sys.argv[1]
types = {"anthropic": ("import type Anthropic from '@anthropic-ai/sdk';", "Anthropic.MessageCreateParams"),
         "chat": ("import type OpenAI from 'openai';", "OpenAI.ChatCompletionCreateParams"),
         "responses": ("import type OpenAI from 'openai';", "OpenAI.Responses.ResponseCreateParams")}
reasoning = re.compile(r"^(gpt-5(?!-chat)|o[1-9])")
count = 0
for name in sorted(os.listdir(d)):
    if not name.endswith(".json") or name == "tsconfig.json":
        continue
    base = os.path.join(d, name[:-5])
    count += 1
    api = open(base + ".api").read().strip()
    text = open(base + ".json", encoding="utf-8").read()
    body = json.loads(text)
    if api not in types:
        print("not ok - %s: unknown API %s" % (name[:-5], api)); continue
    model = body.get("model") if isinstance(body.get("model"), str) else ""
    if api != "anthropic" and reasoning.match(model):
        if "temperature" in body:
            print('not ok - %s: %s refuses "temperature" (it sends %s)' % (name[:-5], model, json.dumps(body["temperature"])))
        if api == "chat" and "max_tokens" in body:
            print('not ok - %s: %s refuses "max_tokens" on Chat Completions (use max_completion_tokens)' % (name[:-5], model))
    imp, typ = types[api]
    typ += "Streaming" if body.get("stream") is True else "NonStreaming"
    with open(base + ".ts", "w", encoding="utf-8") as out:
        out.write("%s\nexport const body: %s = %s;\n" % (imp, typ, text.rstrip()))
print("count %d" % count)
PY
count=$(sed -n 's/^count //p' "$dir/pre.txt")
while IFS= read -r line; do bad "${line#not ok - }"; done < <(grep '^not ok' "$dir/pre.txt" || true)
[ "$count" -gt 0 ] || { echo "not ok - no request bodies in $dir" >&2; exit 1; }

# The packages are found through a node_modules link beside the files.
ln -sfn "$here/node_modules" "$dir/node_modules"
cat > "$dir/tsconfig.json" <<'JSON'
{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022",
  "module": "esnext", "moduleResolution": "bundler", "skipLibCheck": true, "types": []},
 "include": ["*.ts"]}
JSON
if ! (cd "$dir" && "$TSC" -p tsconfig.json --pretty false) > "$dir/tsc.txt" 2>&1; then
  # tsc: FILE(LINE,COL): error TSnnnn: message, then indented detail lines.
  while IFS= read -r err; do
    if [[ "$err" =~ ^([^\(]+)\(([0-9]+),([0-9]+)\):\ error ]]; then
      file=${BASH_REMATCH[1]} line=${BASH_REMATCH[2]}
      from=$((line > 3 ? line - 3 : 1))
      bad "$err"
      # The body's lines around the field, for the first 20 problems.
      [ "$problems" -le 20 ] || continue
      echo "  --- $file (lines $from-$((line + 3))):" >&2
      sed -n "$from,$((line + 3))p" "$dir/$file" | sed 's/^/  | /' >&2
    elif [ -n "$err" ] && [ "$problems" -le 20 ]; then
      echo "  $err" >&2
    fi
  done < "$dir/tsc.txt"
  [ "$problems" -gt 0 ] || bad "tsc failed: $(head -c 2000 "$dir/tsc.txt")"
fi
rm -f "$dir/node_modules"
if [ "$problems" -gt 0 ]; then
  echo "request bodies: $count checked, $problems problems (bodies and .ts files in $dir)" >&2
  exit 1
fi
echo "request bodies: all $count match the SDK types"
