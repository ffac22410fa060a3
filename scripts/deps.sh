#!/bin/sh
# Checks the build dependencies (Debian packages) and installs the missing ones when run as
# root; otherwise prints the one command to run.  Called by `make run` and `make test`; the
# targets that need more name it: `make fuzz` (clang: libFuzzer), `make valgrind` (valgrind).
set -u
pkgs="make pkg-config libjansson-dev libcmocka-dev libcsv-dev libgsl-dev libyaml-dev $*"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
command -v "${CC:-cc}" >/dev/null 2>&1 || missing="$missing gcc"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "installing build dependencies:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing; } >/dev/null || {
        echo "error: apt-get install$missing failed" >&2; exit 1; }
else
    echo "missing build dependencies:$missing" >&2
    echo "run: sudo apt-get install -y$missing" >&2
    exit 1
fi
