#!/usr/bin/env python3
"""check-layers.py - the library's floors depend only downward (make layers-test, in make test).

    python3 scripts/check-layers.py               (objects under build/)
    python3 scripts/check-layers.py build-san     (another build folder)

docs/design.md ("Source layout: floors") gives the order below, lowest first.  Two views of
the same rule:
  includes  every `#include "x.h"` of src/*/*.[ch] names a header of its own floor or of a
            lower one (the public include/ headers and generated files are below everything);
  symbols   every symbol an object of BUILD/src/*/*.o uses (nm: U) that another library object
            defines (T, D, B, R, ...) is defined on the user's floor or a lower one.
A dependency that runs back up, a cycle between folders (which needs one) and a folder that is
not in the order each fail the check with one line per finding.  Without BUILD's objects only the includes are checked.
"""
import glob
import os
import re
import subprocess
import sys

# Lowest first (docs/design.md "Source layout: floors").
FLOORS = ["base", "model", "plan", "eval", "data", "search", "fit", "logs", "readers",
          "reports", "export", "api", "plot"]
RANK = {f: i for i, f in enumerate(FLOORS)}



def floor_of(path):
    return path.split("/")[1]


def check_folders(errors):
    for d in sorted(glob.glob("src/*/")):
        name = d.split("/")[1]
        if name in RANK:
            continue
        for f in sorted(glob.glob(d + "*")):
            errors.append("%s: folder src/%s/ is not a floor (docs/design.md \"Floors\")"
                          % (f, name))


def header_floors():
    where = {}
    for h in glob.glob("src/*/*.h"):
        where.setdefault(os.path.basename(h), set()).add(floor_of(h))
    return where


def check_includes(errors):
    where = header_floors()
    for f in sorted(glob.glob("src/*/*.c") + glob.glob("src/*/*.h")):
        own = floor_of(f)
        if own not in RANK:
            continue  # reported by check_folders unless allowed
        for n, line in enumerate(open(f, encoding="utf-8"), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            inc = m.group(1)
            if inc == "internal.h":
                errors.append("%s:%d: includes internal.h: include the floor's own header "
                              "(%s_internal.h)" % (f, n, own))
                continue
            if "/" in inc or inc.startswith("trainplan") or inc.endswith(".inc"):
                if inc.startswith(".."):
                    errors.append("%s:%d: includes %s by a relative path: name the header"
                                  % (f, n, inc))
                continue  # public headers, generated files
            floors = where.get(os.path.basename(inc))
            if not floors:
                errors.append("%s:%d: includes %s, which no src/ folder holds" % (f, n, inc))
                continue
            for g in floors:
                if g in RANK and RANK[g] > RANK[own]:
                    errors.append("%s:%d: includes %s of floor %s above its own (%s)"
                                  % (f, n, inc, g, own))


def nm(obj):
    out = subprocess.run(["nm", "-g", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 2 and p[0] == "U":
            used.add(p[1])
        elif len(p) == 3 and p[1] in "TDBRCVWGSi":
            defined.add(p[2])
    return defined, used


def check_symbols(build, errors):
    objs = sorted(glob.glob(build + "/src/*/*.o"))
    live = {f[:-2] for f in glob.glob("src/*/*.c")}
    objs = [o for o in objs if o[len(build) + 1:-2] in live]  # stale objects of moved files
    if not objs:
        print("layers: no objects under %s/src: symbols not checked" % build)
        return 0
    defs, uses = {}, {}
    for o in objs:
        src = o[len(build) + 1:-2] + ".c"
        d, u = nm(o)
        for s in d:
            defs[s] = src
        uses[src] = u
    edges = {}
    for src, used in uses.items():
        a = floor_of(src)
        for s in sorted(used):
            if s not in defs:
                continue
            b = floor_of(defs[s])
            if a == b:
                continue
            edges.setdefault(a, set()).add(b)
            if a in RANK and b in RANK and RANK[b] > RANK[a]:
                errors.append("%s uses %s, defined in %s on floor %s above its own (%s)"
                              % (src, s, defs[s], b, a))
    # a cycle between folders (with the order above it needs an upward edge, reported already;
    # this also catches one among folders outside the order)
    state = {}

    def visit(n, stack):
        state[n] = 1
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1:
                path = stack + [n]
                errors.append("cycle between folders: %s"
                              % " -> ".join(path[path.index(m):] + [m]))
            elif m not in state:
                visit(m, stack + [n])
        state[n] = 2

    for n in sorted(edges):
        if n not in state:
            visit(n, [])
    return len(objs)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    errors = []
    check_folders(errors)
    check_includes(errors)
    n = check_symbols(build, errors)
    for e in errors:
        print("layers: " + e)
    if errors:
        print("layers: %d dependencies against the floors (docs/design.md \"Floors\")"
              % len(errors))
        return 1
    print("layers: %d floors, includes and the symbols of %d objects run only downward"
          % (len(FLOORS), n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
