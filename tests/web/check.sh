#!/bin/sh
# check.sh - the page in a real browser: headless Chromium opens build/web/index.html from a
# file:// URL with its inputs in the address, the page computes on load, and the text of its
# <pre id="result-json"> must equal what the CLI prints for the same arguments, byte for byte.
# A screenshot per case is written to build/web/screenshots/ for review.
#
#   sh tests/web/check.sh ./build/trainplan        (from the repository root, after make web)
set -u
bin=$1
page=$(pwd)/build/web/index.html
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    echo "web: chromium not installed; browser test skipped (sh scripts/deps.sh web installs it)"
    exit 0
fi
if [ ! -f build/web/trainplan.js ]; then
    echo "web: build/web not built (no emscripten or no .web-deps/: sh scripts/deps.sh web); browser test skipped"
    exit 0
fi
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir -p build/web/screenshots
fail=0
n=0
# case NAME QUERY: the page at index.html?QUERY against the CLI with the same arguments
case_() {
    name=$1 query=$2
    n=$((n + 1))
    # the CLI's arguments, as app.js builds them: verb, model (for the verbs that take one),
    # --key value..., --format json
    args=$(python3 - "$query" <<'PY'
import sys, shlex, urllib.parse
q = urllib.parse.parse_qsl(sys.argv[1], keep_blank_values=True)
d = dict(q)
verb = d.get("verb", "estimate")
# the verbs that take MODEL (web/main_web.c: `trainplan verbs` in the page)
a = [verb] + ([d.get("model", "llama-3.1-8b")] if verb in ("params", "memory", "estimate", "search") else [])
for k, v in q:
    if k not in ("verb", "model"):
        a += ["--" + k] + ([v] if v != "" else [])
print(" ".join(shlex.quote(x) for x in a + ["--format", "json"]))
PY
)
    eval "\"$bin\" $args" >"$tmp/cli.json" 2>"$tmp/cli.err"
    cli_rc=$?
    # a loaded machine can starve the browser (and a cold start compiles the WebAssembly): a
    # page that did not finish gets two more tries
    for try in 1 2 3; do
        timeout 240 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
            --virtual-time-budget=60000 --dump-dom "file://$page?$query" >"$tmp/dom.html" \
            2>"$tmp/browser.err"
        python3 - "$tmp/dom.html" "$tmp/page.json" "$tmp/page.rc" <<'PY'
import sys, re, html
dom = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<pre id="result-json">(.*?)</pre>', dom, re.S)
open(sys.argv[2], "w", encoding="utf-8").write(html.unescape(m.group(1)) if m else "")
m = re.search(r'<body[^>]*data-exit="(\d+)"', dom)
open(sys.argv[3], "w").write(m.group(1) if m else "none")
PY
        [ -s "$tmp/page.json" ] && break
    done
    if [ ! -s "$tmp/page.json" ]; then
        echo "FAIL web $name: the page shows no JSON"; tail -5 "$tmp/browser.err"; fail=1; return
    fi
    if ! cmp -s "$tmp/cli.json" "$tmp/page.json"; then
        echo "FAIL web $name: the page's JSON differs from the CLI's"
        diff "$tmp/cli.json" "$tmp/page.json" | head -10; fail=1; return
    fi
    if [ "$(cat "$tmp/page.rc")" != "$cli_rc" ]; then
        echo "FAIL web $name: page exit $(cat "$tmp/page.rc"), CLI $cli_rc"; fail=1; return
    fi
    timeout 240 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --virtual-time-budget=60000 --window-size=1100,2000 \
        --screenshot="build/web/screenshots/$name.png" "file://$page?$query" \
        >/dev/null 2>&1
    echo "web $name: the page's JSON is the CLI's ($(wc -c <"$tmp/cli.json") bytes, exit $cli_rc)"
}
case_ estimate "verb=estimate&model=llama-3.1-8b&gpu=h100-sxm&gpus=8&tp=2&gbs=64&seq=4096&tokens=1e10&gpu-hour-price=2.5"
case_ memory-no-fit "verb=memory&model=llama-3.1-70b&gpu=a100-80gb&gpus=8&gbs=64&fused-loss=&per-stage="
case_ search-sweep "verb=search&model=llama-3.1-8b&gpu=h100-sxm&gpus=8..32&gbs=256"
case_ search-best "verb=search&model=qwen3-30b-a3b&gpu=h100-sxm&gpus=16&gbs=128&task=sft"
# every verb the address can name, with only the inputs it takes (the form's others are not
# sent: params with a GPU on the form failed with "unknown option --gpu")
case_ params-address "verb=params&model=glm-4.5-air"
case_ size-address "verb=size&flops=1e23"
case_ size-cluster "verb=size&gpu=a100-80gb&gpus=8&days=15&seq=2048&top=3"
case_ models "verb=models"
case_ gpus "verb=gpus"
[ $fail = 0 ] && echo "web: $n pages equal the CLI" || exit 1
