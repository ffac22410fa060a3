#!/bin/sh
# Checks the build dependencies (Debian packages) and installs the missing ones when run as
# root; otherwise prints the one command to run.  Called by `make run` and `make test`; the
# targets that need more name it: `make fuzz` (clang: libFuzzer), `make valgrind` (valgrind).
# `sh scripts/deps.sh web` is the page's (`make web`, its browser test): Debian's emscripten and
# chromium, and the Debian *source* packages of jansson and libcsv unpacked into .web-deps/ (the
# page compiles them to WebAssembly; Debian ships no wasm build of either).  After it, make web
# builds offline.
set -u
web=0
if [ "${1:-}" = web ]; then
    web=1
    shift
    set -- emscripten chromium "$@"
fi
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
# web_sources: jansson and libcsv as Debian packages their source, into .web-deps/, through a
# temporary deb-src list (the system's apt configuration is left as it is)
web_sources() {
    dir=.web-deps
    ls -d "$dir"/jansson-*/src "$dir"/libcsv-*/libcsv.c >/dev/null 2>&1 && return 0
    . /etc/os-release
    tmp=$(mktemp -d) || return 1
    mkdir -p "$tmp/lists/partial" "$dir"
    echo "deb-src http://deb.debian.org/debian ${VERSION_CODENAME:-bookworm} main" >"$tmp/sources.list"
    opts="-o Dir::Etc::SourceList=$tmp/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$tmp/lists"
    echo "fetching the jansson and libcsv source packages into $dir/" >&2
    { apt-get $opts update -qq && (cd "$dir" && apt-get $opts source --download-only jansson libcsv); } \
        >/dev/null 2>&1 || { echo "error: apt-get source jansson libcsv failed" >&2; rm -rf "$tmp"; return 1; }
    for f in "$dir"/jansson_*.orig.tar.* "$dir"/libcsv_*.orig.tar.*; do tar -xf "$f" -C "$dir"; done
    rm -rf "$tmp"
}
if [ -n "$missing" ]; then
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
fi
add_locale
[ $web = 1 ] && { web_sources || exit 1; }
exit 0
