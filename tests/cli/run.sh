#!/bin/sh
# run.sh - data-driven CLI tests for trainplan.  POSIX sh (dash), no bash features.
#
#   sh tests/cli/run.sh ./build/trainplan tests/cli/cases.txt      (from the repository root)
#
# Each case line in CASES is
#
#   name | args | expected_exit | expected text [| stdout|stderr]
#
# - Fields are separated by " | " (space, bar, space); surrounding blanks are trimmed.  A bare
#   "|" inside a field (as in "table|json|csv") is fine.  Blank lines and lines whose first
#   non-blank character is "#" are ignored.
# - args: the words after the binary, parsed by sh (eval), so quotes work and so does a
#   redirection such as ">/dev/full".  Keep them free of ; & $ ` and unquoted globs.
# - expected_exit: the exact exit status.
# - expected text: a fixed substring (not a pattern) that must occur in stdout+stderr; empty
#   means no check.  A leading "!" inverts it: the rest must NOT occur.
# - optional 5th field "stdout" or "stderr": look only there.
# - When the expected text starts with "trainplan: error:" the case is an error case and must
#   also print nothing on stdout and exactly one line on stderr, starting "trainplan: error:".
# - Names starting "det-" are run twice; both runs must give byte-identical output and status.
#
# Every case runs with stdin from /dev/null and, where timeout(1) exists, a 10 s limit.
# Prints one block per failure and, last, exactly one line "N passed, N failed".
# Exit status: 0 all passed, 1 otherwise.

if [ $# -ne 2 ]; then
    echo "usage: sh tests/cli/run.sh BINARY CASES" >&2
    exit 2
fi
bin=$1
cases=$2
if [ ! -x "$bin" ] || [ ! -r "$cases" ]; then
    [ -x "$bin" ] || echo "run.sh: $bin is not an executable (build it first)" >&2
    [ -r "$cases" ] || echo "run.sh: cannot read $cases" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

tmp=$(mktemp -d 2>/dev/null) || tmp=${TMPDIR:-/tmp}/trainplan-cli.$$
mkdir -p "$tmp" || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'rm -rf "$tmp"; exit 130' INT TERM
: >"$tmp/names"

limit=""
if command -v timeout >/dev/null 2>&1; then
    limit="timeout 10"
fi

passed=0
failed=0
skipped=0

# A build without GSL (make NO_GSL=1) has no fit: its calibrate cases are skipped, and calibrate
# must say why in one error line with exit status 2 (checked after the cases).
nofit=""
if "$bin" calibrate tests/cli/fixtures/runs-two.csv --no-cv --max-evals 10 -o /dev/null 2>&1 |
    grep -q -F "without the fitting backend"; then
    nofit=1
fi

cr=$(printf '\r')

# trim VALUE: sets $t to VALUE without leading/trailing blanks (spaces, tabs, CR).
trim() {
    t=$1
    while :; do
        case $t in
        [' 	']*) t=${t#?} ;;
        *) break ;;
        esac
    done
    while :; do
        case $t in
        *[' 	'"$cr"]) t=${t%?} ;;
        *) break ;;
        esac
    done
}

# run_case SUFFIX: runs "$bin $args" with stdout/stderr in $tmp/out$SUFFIX and $tmp/err$SUFFIX;
# sets $rc.
run_case() {
    eval "$limit \"\$bin\" $args" </dev/null >"$tmp/out$1" 2>"$tmp/err$1"
    rc=$?
}

# fail WHAT: prints a failure block for the current case.
fail() {
    failed=$((failed + 1))
    echo "FAIL $name (line $lineno): $1"
    echo "  command:  $bin $args"
    echo "  exit:     expected $want_rc, got $rc"
    [ -n "$text" ] && echo "  text:     $text${where:+ (in $where)}"
    if [ -s "$tmp/out" ] || [ -s "$tmp/err" ]; then
        echo "  output (first lines):"
        cat "$tmp/out" "$tmp/err" 2>/dev/null | head -n 8 | awk '{ print "    | " $0 }'
    else
        echo "  output:   (none)"
    fi
}

lineno=0
while IFS= read -r line || [ -n "$line" ]; do
    lineno=$((lineno + 1))
    trim "$line"
    line=$t
    case $line in
    '' | '#'*) continue ;;
    esac
    # "a | b | 0 |" has an empty last field: make the separator whole.
    case $line in
    *' |') line="$line " ;;
    esac

    name='?' args='' want_rc='' text='' where='' rc='-'
    : >"$tmp/out"
    : >"$tmp/err"
    case $line in
    *' | '*' | '*' | '*) ;;
    *)
        fail "malformed case line (need: name | args | exit | text): $line"
        continue
        ;;
    esac
    trim "${line%% | *}"; name=$t; rest=${line#* | }
    trim "${rest%% | *}"; args=$t; rest=${rest#* | }
    trim "${rest%% | *}"; want_rc=$t; rest=${rest#* | }
    case $rest in
    *' | stdout' | *' | stderr')
        where=${rest##* | }
        rest=${rest% | *}
        ;;
    esac
    trim "$rest"; text=$t

    case $want_rc in
    '' | *[!0-9]*)
        fail "expected exit \"$want_rc\" is not a number"
        continue
        ;;
    esac
    if grep -q -x -F -e "$name" "$tmp/names"; then
        fail "duplicate case name"
        continue
    fi
    echo "$name" >>"$tmp/names"
    if [ -n "$nofit" ]; then
        case $args in
        calibrate | calibrate' '*)
            skipped=$((skipped + 1))
            continue
            ;;
        esac
    fi

    run_case ""
    if [ "$rc" -eq 124 ] && [ -n "$limit" ]; then
        fail "timed out after 10 s"
        continue
    fi
    if [ "$rc" != "$want_rc" ]; then
        fail "wrong exit status"
        continue
    fi

    case $where in
    stdout) hay="$tmp/out" ;;
    stderr) hay="$tmp/err" ;;
    *)
        cat "$tmp/out" "$tmp/err" >"$tmp/both"
        hay="$tmp/both"
        ;;
    esac
    case $text in
    '') ;;
    '!'*)
        if grep -q -F -e "${text#!}" "$hay"; then
            fail "output contains text it must not"
            continue
        fi
        ;;
    *)
        if ! grep -q -F -e "$text" "$hay"; then
            fail "expected text not found"
            continue
        fi
        ;;
    esac

    case $text in
    'trainplan: error:'*)
        if [ -s "$tmp/out" ]; then
            fail "an error case must print nothing on stdout"
            continue
        fi
        n=$(wc -l <"$tmp/err")
        n=$((n + 0))
        first=$(head -n 1 "$tmp/err")
        if [ "$n" -ne 1 ] || [ "$(wc -c <"$tmp/err")" -ne "$(head -n 1 "$tmp/err" | wc -c)" ]; then
            fail "an error message must be exactly one line on stderr (got $n newline(s))"
            continue
        fi
        case $first in
        'trainplan: error: '*) ;;
        *)
            fail "the error line must start with \"trainplan: error: \""
            continue
            ;;
        esac
        ;;
    esac

    case $name in
    det-*)
        keep_rc=$rc
        run_case 2
        if [ "$rc" != "$keep_rc" ] || ! cmp -s "$tmp/out" "$tmp/out2" ||
            ! cmp -s "$tmp/err" "$tmp/err2"; then
            fail "second run differs (not deterministic)"
            continue
        fi
        ;;
    esac
    passed=$((passed + 1))
done <"$cases"

if [ -n "$nofit" ]; then
    name=nofit-calibrate args="calibrate tests/cli/fixtures/runs-two.csv" want_rc=2
    text="trainplan: error: calibrate: this trainplan was built without the fitting backend"
    where='' lineno=0
    run_case ""
    if [ "$rc" = 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
        grep -q -F -e "$text" "$tmp/err"; then
        passed=$((passed + 1))
    else
        fail "a build without GSL must refuse to fit in one error line"
    fi
    echo "skipped $skipped calibrate cases: this build has no fitting backend (NO_GSL=1)"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
