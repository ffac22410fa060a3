#!/bin/sh
# Checks the build dependencies (Debian packages) and installs the missing ones when run as
# root; otherwise prints the one command to run.  Called by `make run` and `make test`; the
# targets that need more name it: `make fuzz` (clang: libFuzzer), `make valgrind` (valgrind).
set -u
pkgs="make pkg-config libjansson-dev libcmocka-dev libcsv-dev libgsl-dev libyaml-dev locales python3 $*"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
command -v "${CC:-cc}" >/dev/null 2>&1 || missing="$missing gcc"
# the comma-decimal locale the locale tests run under (tests/test_props.c, python/tests)
need_locale() { ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; }
add_locale() {
    need_locale || return 0
    if [ "$(id -u)" = 0 ]; then
        localedef -i de_DE -f UTF-8 de_DE.UTF-8 >/dev/null 2>&1 || {
            echo "error: localedef -i de_DE -f UTF-8 de_DE.UTF-8 failed" >&2; exit 1; }
    else
        echo "the locale tests are skipped without de_DE.UTF-8: sudo localedef -i de_DE -f UTF-8 de_DE.UTF-8" >&2
    fi
}
if [ -z "$missing" ]; then add_locale; exit 0; fi
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
add_locale
