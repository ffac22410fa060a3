#!/bin/sh
# Citations stay inside the repository (docs/references.md says how to cite).  Fails when
#   1. a tracked file cites a document users never get: the physics reference by its old
#      outside name, or anything under the sibling "shared" folder (docs/physics.md and
#      docs/references.md are the in-tree homes), or
#   2. a bracketed source key ([KOR22], [MEG-F], ...) in src, cli, include, tests, bench, fuzz,
#      python, web, scripts, docs, README.md or data/runs/*.md is not defined in the table of
#      docs/references.md.
# Called by `make test`; run alone as `sh scripts/check-citations.sh`.
set -eu
cd "$(dirname "$0")/.."

refs=docs/references.md
[ -r "$refs" ] || { echo "check-citations: $refs missing"; exit 1; }

# the files to look at: tracked ones in a git checkout, else everything outside build folders
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    list() { git ls-files -- "$@"; }
else
    list() { for p in "$@"; do [ -e "$p" ] && find "$p" -type f; done |
             sed 's#^\./##' | grep -v -e '^build' -e '^\.' -e '/\.'; }
fi

fail=0

# 1. documents outside the repository.  The patterns are spelt with brackets so that this
#    script does not match itself.
outside=$(list . | grep -v -e '\.\(png\|gz\|so\|a\)$' |
          xargs -d '\n' grep -n -I -e 'training-physics[.]md' -e '[.][.]/shared' 2>/dev/null || true)
if [ -n "$outside" ]; then
    echo "check-citations: these lines cite a document outside the repository (use docs/physics.md"
    echo "  and docs/references.md; users clone the repository alone):"
    echo "$outside" | sed 's/^/  /'
    fail=1
fi

# 2. keys.  A key is [Capital...] of letters, digits, '+' and '-', not preceded by an identifier
#    character or ']' (C subscripts such as buf[CAP]) and not followed by '(' (Markdown links).
#    Log fixtures are excluded (their tags in brackets are log syntax), and so is this script.
#    Bracketed words that are not citations, each with where it occurs:
#      MODEL  the `checkpoint PATH [MODEL]` usage line (cli/main.c, cli/cmd_checkpoint.c, CLI cases)
#      HF     a Python list literal in python/tests/test_runs.py
not_keys='MODEL HF'
defined=$(sed -n 's/^| *\[\([A-Za-z0-9+-]*\)\] *|.*/\1/p' "$refs")
used=$(list src cli include tests bench fuzz python web scripts docs README.md data/runs |
       grep -v -e '\.log$' -e '^data/runs/.*[^d]$' -e '^tests/fixtures/' -e '^tests/cli/fixtures/' \
               -e '^scripts/check-citations\.sh$' |
       xargs -d '\n' perl -ne 'while (/(?<![A-Za-z0-9_\]])\[([A-Z][A-Za-z0-9+-]+)\](?!\()/g) {
                                  print "$ARGV:$.: $1\n" } close ARGV if eof' 2>/dev/null || true)
bad=$(echo "$used" | while IFS= read -r line; do
    [ -n "$line" ] || continue
    key=${line##*: }
    case " $not_keys " in *" $key "*) continue ;; esac
    echo "$defined" | grep -qxF -- "$key" || echo "$line"
done)
if [ -n "$bad" ]; then
    echo "check-citations: citation keys that $refs does not define (add a row, or fix the key):"
    echo "$bad" | sed 's/^/  /'
    fail=1
fi

if [ "$fail" = 0 ]; then
    n=$(echo "$defined" | grep -c .)
    echo "check-citations: no citation leaves the repository; every key is one of the $n in $refs"
fi
exit "$fail"
