#!/bin/sh
# build.sh - `make web`: the library and the CLI's commands compiled to WebAssembly with
# Debian's emscripten, with jansson and libcsv compiled from their Debian source packages
# (fetched by `sh scripts/deps.sh web` into .web-deps/; nothing is fetched here), into
# build/web/: index.html, app.js, style.css and trainplan.js (the wasm inlined: the page opens
# from a file:// URL with no server).
set -eu
cd "$(dirname "$0")/.."
deps=${WEB_DEPS:-.web-deps}
out=${WEB_OUT:-build/web}
jansson=$(ls -d "$deps"/jansson-*/src 2>/dev/null | head -1)
csv=$(ls -d "$deps"/libcsv-* 2>/dev/null | head -1)
if ! command -v emcc >/dev/null 2>&1 || [ -z "$jansson" ] || [ -z "$csv" ]; then
    echo "make web: needs emscripten and the jansson and libcsv sources: run sh scripts/deps.sh web" >&2
    exit 1
fi
# Debian's emscripten runs its JS optimizer with node; Debian's node modules (acorn) live here
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
obj=$out/obj
mkdir -p "$obj/jansson" "$obj/csv" "$obj/src" "$obj/cli" "$out/gen"
# gen FILE: stdin into FILE, touched only when it changes (compile() rebuilds on newer headers)
gen() {
    cat >"$1.new"
    if cmp -s "$1.new" "$1"; then rm -f "$1.new"; else mv "$1.new" "$1"; fi
}
# jansson's configure-time header, for emscripten's libc (wasm32: long long, localeconv,
# atomic builtins all present)
sed -e 's/@json_inline@/inline/' -e 's/@json_have_long_long@/1/' \
    -e 's/@json_have_localeconv@/1/' -e 's/@json_have_atomic_builtins@/1/' \
    -e 's/@json_have_sync_builtins@/1/' "$jansson/jansson_config.h.in" | gen "$out/gen/jansson_config.h"
# and its private one from the CMake template: every HAVE_* emscripten's libc has, the seed from
# the time and pid (no /dev/urandom), jansson's default initial hashtable order (3)
sed -e 's/^#cmakedefine \(HAVE_[A-Z0-9_]*\) 1/#define \1 1/' \
    -e 's/^#cmakedefine \(USE_[A-Z_]*\) 1/\/* #undef \1 *\//' \
    -e 's/@JANSSON_INITIAL_HASHTABLE_ORDER@/3/' \
    "$jansson/../cmake/jansson_private_config.h.cmake" | gen "$out/gen/jansson_private_config.h"
gen "$out/gen/jansson.h" <"$jansson/jansson.h"
gen "$out/gen/csv.h" <"$csv/csv.h"
# the built-in calibration as a string literal: src/data/calib.c includes it
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$/\\n"/' data/calibration.json |
    gen "$out/gen/calib_defaults.inc"
CFLAGS="-O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I$out/gen"
# compile FILE OBJ [flags]: only when the object is older than its source or a header
compile() {
    src=$1 o=$2
    shift 2
    if [ ! -f "$o" ] ||
        [ -n "$(find include src cli web "$out/gen" \( -name '*.h' -o -name '*.inc' \) -newer "$o" 2>/dev/null | head -1)" ] ||
        [ "$src" -nt "$o" ]; then
        emcc $CFLAGS "$@" -c "$src" -o "$o"
    fi
}
for f in "$jansson"/*.c; do
    compile "$f" "$obj/jansson/$(basename "$f" .c).o" -w -DHAVE_CONFIG_H=1
done
compile "$csv/libcsv.c" "$obj/csv/libcsv.o" -w
# the library, less the calibration fit (GSL) and the Axolotl export (libyaml): no page verb
# reaches them
# every floor's private header by its name, as the Makefile does (docs/design.md, "Source
# layout: floors")
floors=$(for d in src/*/; do printf -- '-I%s ' "${d%/}"; done)
for f in src/*/*.c; do
    case $f in src/fit/*.c | src/export/export_axolotl.c) continue ;; esac
    compile "$f" "$obj/src/$(basename "$f" .c).o" -Iinclude $floors -Wall -Wextra
done
for f in cli/*.c web/main_web.c; do
    case $f in cli/main.c) continue ;; esac
    compile "$f" "$obj/cli/$(basename "$f" .c).o" -Iinclude $floors -Icli -Wall -Wextra
done
rm -f "$obj/libtp.a" "$obj/libdeps.a"
emar rcs "$obj/libtp.a" "$obj"/src/*.o "$obj"/cli/*.o
emar rcs "$obj/libdeps.a" "$obj"/jansson/*.o "$obj"/csv/*.o
emcc -O2 "$obj/cli/main_web.o" "$obj/libtp.a" "$obj/libdeps.a" -o "$out/trainplan.js" \
    -s SINGLE_FILE=1 -s MODULARIZE=1 -s EXPORT_NAME=createTrainplan -s INVOKE_RUN=0 \
    -s EXIT_RUNTIME=0 -s ALLOW_MEMORY_GROWTH=1 -s FORCE_FILESYSTEM=1 \
    -s "EXPORTED_RUNTIME_METHODS=['callMain','FS']" -s ENVIRONMENT=web,node
cp web/index.html web/app.js web/style.css "$out/"
echo "make web: $out/index.html"
