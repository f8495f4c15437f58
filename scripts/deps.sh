#!/usr/bin/env bash
# Installs the Debian packages Loom builds and tests with, when missing.
# As root it runs apt-get itself; otherwise it prints the exact line to run.
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang
  libcurl4-openssl-dev libjansson-dev libmicrohttpd-dev libcmocka-dev
  libyaml-dev libpcre2-dev libsqlite3-dev libseccomp-dev libedit-dev libmd4c-dev
  ripgrep jq curl tmux python3
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

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
