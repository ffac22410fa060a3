#!/usr/bin/env python3
"""check.py - every example of README.md against what this build prints (make readme-test).

    python3 tests/readme/check.py --bin build/trainplan --lib build/libtrainplan.so README.md

What is an example, and how it is compared:

* In a fenced block, a line "$ trainplan ARGS" or "$ ./build/trainplan ARGS" (a trailing "\\"
  continues it on the next line; pipes to sed/head/grep are run as written) is run from the
  repository root (through a scratch folder that links the tree's top-level entries, so files
  an example writes land there, not in the tree); the lines after it up to the next "$ " line
  or the end of the block are its pasted output.  "$ make run" runs the command make echoes on
  the line after it; "$ cat F", "$ head ..." run too (they show files an example wrote).
* A pasted line that is only "..." elides any number of lines (none included); every other
  pasted line must equal the printed one, trailing blanks aside.
* "$ python3" (or "$ build/venv/bin/python3") starts the Python session, run on this build's
  library (TRAINPLAN_LIBRARY, PYTHONPATH=python: no venv needed): ">>> " and "... " lines are the input, each statement
  run as the interpreter runs it (an expression's value printed with repr()), the other lines
  its output; an exception prints as the last line of its traceback, "module.Name: message".
* A bare "trainplan ..." line in a ```sh block that is not a usage synopsis (no "[" in the
  block) must run with exit status 0 or 1: an example must not be an input error.
* Other "$ " lines (make test, the benchmarks, pip) print timings or the whole suite: they are
  listed as not pinned, with the reason.

Each failure names the README line of the example and of the pasted line that differs, with
both texts.  --update rewrites the differing pastes after a deliberate change: a paste that
elides nothing becomes the build's output; in an elided one each shown line the build no longer
prints becomes the build's most similar line (check the diff).  Exit status 0 when every example
matches, 1 otherwise, 2 on bad usage.
"""

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

TIMEOUT = 300
NOT_PINNED = {
    "make test": "the whole suite (its tail is pasted as an illustration)",
    "pip install": "installs the package (make python does it in a venv)",
    "make python": "makes build/venv (the session below runs on this build's library)",
    "./build/bench/": "a benchmark: timings of this machine",
    "./build-nogsl/": "needs the NO_GSL=1 build",
    "bash .ci/run": "what CI runs",
    "sh bench/": "a benchmark script",
}
RUNNABLE = ("trainplan ", "./build/trainplan ", "cat ", "head ", "make run")


def blocks(lines):
    """(first line number, language, body lines) of every fenced block, 1-based numbers."""
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        lang, start, body = m.group(1), i + 2, []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        out.append((start, lang, body))
        i += 1
    return out


def match(expected, got):
    """None when `got` (lines) matches `expected` (lines, "..." eliding), else (index into
    expected of the first line that differs or is missing, the printed line or None)."""
    exp = [e.rstrip() for e in expected]
    got = [g.rstrip() for g in got]

    def go(i, j):
        # iterative over literal runs, recursive only at "..." (few per example)
        while i < len(exp) and exp[i].strip() != "...":
            if j >= len(got) or got[j] != exp[i]:
                return (i, got[j] if j < len(got) else None)
            i += 1
            j += 1
        if i == len(exp):
            return None if j == len(got) else (i, got[j])
        worst = None
        for k in range(j, len(got) + 1):
            r = go(i + 1, k)
            if r is None:
                return None
            if worst is None or r[0] > worst[0]:
                worst = r
        return worst

    return go(0, 0)


def refresh(expected, got):
    """`expected` (an elided paste) with each literal line the build no longer prints replaced
    by the most similar line of `got` (difflib ratio 0.75 or more), else kept."""
    printed = set(g.rstrip() for g in got)
    out = []
    for e in expected:
        if e.strip() == "..." or e.rstrip() in printed:
            out.append(e)
            continue
        best = max(got, key=lambda g: difflib.SequenceMatcher(None, e, g).ratio(), default=None)
        ok = best is not None and difflib.SequenceMatcher(None, e, best).ratio() >= 0.75
        out.append(best if ok else e)
    return out


class Checker:
    def __init__(self, readme, binary, lib, python):
        self.readme = readme
        # the repository root (tests/readme/check.py lives two levels below it)
        self.root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        self.name = os.path.basename(readme)
        self.binary = os.path.abspath(binary)
        self.lib = os.path.abspath(lib) if lib else None
        self.python = python
        self.failures, self.passed, self.skipped = [], 0, []
        self.update = None  # [(first README line, lines, new lines)] with --update
        self.work = tempfile.mkdtemp(prefix="trainplan-readme.")
        for name in os.listdir(self.root):
            if not name.startswith("."):
                os.symlink(os.path.join(self.root, name), os.path.join(self.work, name))
        self.bindir = os.path.join(self.work, ".bin")
        os.mkdir(self.bindir)
        os.symlink(self.binary, os.path.join(self.bindir, "trainplan"))
        # ./build/trainplan: this build's binary, whatever BUILD is
        if os.path.islink(os.path.join(self.work, "build")):
            os.unlink(os.path.join(self.work, "build"))
            os.mkdir(os.path.join(self.work, "build"))
            src = os.path.join(self.root, "build")
            for name in os.listdir(src) if os.path.isdir(src) else []:
                if name != "trainplan":
                    os.symlink(os.path.join(src, name), os.path.join(self.work, "build", name))
            os.symlink(self.binary, os.path.join(self.work, "build", "trainplan"))

    def close(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def env(self):
        e = dict(os.environ)
        e["PATH"] = self.bindir + os.pathsep + e.get("PATH", "")
        e["LC_ALL"] = "C"
        e["COLUMNS"] = "80"
        if self.lib:
            e["TRAINPLAN_LIBRARY"] = self.lib
        e["PYTHONPATH"] = os.path.join(self.root, "python")
        return e

    def fail(self, line, command, text):
        self.failures.append("%s:%d: `%s`\n%s" % (self.name, line, command, text))

    def run(self, command):
        p = subprocess.run(["sh", "-c", command], cwd=self.work, env=self.env(),
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=TIMEOUT)
        text = p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")
        return p.returncode, text.splitlines()

    def compare(self, line, command, out_line, expected, got, rc):
        r = match(expected, got)
        if r is None:
            self.passed += 1
            return
        if self.update is not None and not any(e.strip() == "..." for e in expected):
            # a whole paste (no elision): --update writes what the build prints
            self.update.append((out_line, len(expected), got))
        elif self.update is not None:
            # an elided paste: each shown line the build no longer prints becomes the build's
            # most similar line (the elisions and the lines still printed stay as they are)
            self.update.append((out_line, len(expected), refresh(expected, got)))
        i, printed = r
        if i < len(expected):
            where = "README line %d" % (out_line + i)
            want = expected[i].rstrip()
        else:
            where = "after README line %d (the paste ends there)" % (out_line + i - 1)
            want = "(nothing more)"
        self.fail(line, command,
                  "  first difference at %s (exit status %d):\n    README: %s\n    build:  %s"
                  % (where, rc, want, "(output ended)" if printed is None else printed))

    def cli_example(self, line, command, out_line, expected):
        run = command
        if command == "make run" and expected and expected[0].startswith("./build/trainplan "):
            run, expected, out_line = expected[0], expected[1:], out_line + 1
        if not expected:  # a command shown without its output: it must run
            self.bare(line, run)
            return
        rc, got = self.run(run)
        self.compare(line, command, out_line, expected, got, rc)

    def python_session(self, line, body):
        """body: (README line, text) of the session after "$ python3"."""
        stmts = []  # [first line, source, [(line, expected output)]]
        for n, text in body:
            if text.startswith(">>> "):
                stmts.append([n, text[4:], []])
            elif text.startswith("... ") and stmts and not stmts[-1][2]:
                stmts[-1][1] += "\n" + text[4:]
            elif stmts:
                stmts[-1][2].append((n, text))
        if not self.python:
            self.skipped.append("%s:%d python3 session (no Python library in this "
                                "build: --no-python)" % (self.name, line))
            return
        driver = os.path.join(self.work, ".session.py")
        with open(driver, "w") as f:
            f.write(DRIVER)
        import json
        src = json.dumps([s[1] for s in stmts])
        p = subprocess.run([sys.executable, driver], input=src.encode(), cwd=self.work,
                           env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT)
        outs = json.loads(p.stdout.decode() or "[]") if p.returncode == 0 else None
        if outs is None:
            self.fail(line, "python3", "  the session driver failed:\n    " +
                      p.stderr.decode("utf-8", "replace").strip().replace("\n", "\n    "))
            return
        for (n, source, exp), got in zip(stmts, outs):
            first = source.split("\n")[0]
            self.compare(n, ">>> " + first, exp[0][0] if exp else n + 1,
                         [e for _, e in exp], got.splitlines(), 0)

    def bare(self, line, command):
        rc, got = self.run(command)
        if rc in (0, 1):
            self.passed += 1
        else:
            self.fail(line, command, "  exit status %d (an example must not be an input "
                      "error):\n    %s" % (rc, "\n    ".join(got[-3:])))

    def check(self):
        with open(self.readme, encoding="utf-8") as f:
            lines = f.read().split("\n")
        for start, lang, body in blocks(lines):
            numbered = list(zip(range(start, start + len(body)), body))
            if lang == "sh" and not any("[" in b for b in body):
                self.check_bare(numbered)
            if not any(b.startswith("$ ") for b in body):
                continue
            i = 0
            while i < len(numbered):
                n, text = numbered[i]
                if not text.startswith("$ "):
                    i += 1
                    continue
                command = text[2:]
                while command.endswith("\\") and i + 1 < len(numbered):
                    i += 1
                    command = command[:-1] + " " + numbered[i][1].strip()
                j = i + 1
                while j < len(numbered) and not numbered[j][1].startswith("$ "):
                    j += 1
                output = numbered[i + 1:j]
                if command.strip().split("/")[-1] == "python3":
                    self.python_session(n, output)
                elif command.startswith(RUNNABLE):
                    self.cli_example(n, command, output[0][0] if output else n + 1,
                                     [t for _, t in output])
                else:
                    why = next((w for k, w in NOT_PINNED.items() if command.startswith(k)),
                               "not a trainplan command")
                    self.skipped.append("%s:%d `$ %s`: %s" % (self.name, n, command, why))
                i = j

    def check_bare(self, numbered):
        i = 0
        while i < len(numbered):
            n, text = numbered[i]
            command = text.split("  #")[0].rstrip()
            while command.endswith("\\") and i + 1 < len(numbered):
                i += 1
                command = command[:-1] + " " + numbered[i][1].split("  #")[0].strip()
            if command.startswith("trainplan "):
                self.bare(n, command)
            i += 1


# Runs each statement as the interactive interpreter does ('single': an expression's value
# through sys.displayhook) and returns what each printed; an exception as its last traceback
# line.
DRIVER = r'''
import io, json, sys, traceback
stmts = json.loads(sys.stdin.read())
ns, outs = {"__name__": "__main__"}, []
for src in stmts:
    buf = io.StringIO()
    sys.stdout = buf
    try:
        exec(compile(src + "\n", "<readme>", "single"), ns)
    except Exception as e:
        t = type(e)
        name = t.__qualname__ if t.__module__ == "builtins" else t.__module__ + "." + t.__qualname__
        print("%s: %s" % (name, e))
    finally:
        sys.stdout = sys.__stdout__
    outs.append(buf.getvalue())
print(json.dumps(outs))
'''


def main():
    ap = argparse.ArgumentParser(description="README examples against this build")
    ap.add_argument("--bin", required=True, help="the trainplan binary")
    ap.add_argument("--lib", help="libtrainplan.so for the Python session")
    ap.add_argument("--no-python", action="store_true", help="skip the Python session")
    ap.add_argument("--update", action="store_true",
                    help="rewrite the pastes that differ and elide nothing with the build's output")
    ap.add_argument("readme", nargs="?", default="README.md")
    a = ap.parse_args()
    if not os.access(a.bin, os.X_OK) or not os.path.isfile(a.readme):
        print("check.py: need an executable --bin and a README", file=sys.stderr)
        return 2
    c = Checker(a.readme, a.bin, a.lib, not a.no_python and a.lib)
    if a.update:
        c.update = []
    try:
        c.check()
    finally:
        c.close()
    if c.update:
        with open(a.readme, encoding="utf-8") as f:
            lines = f.read().split("\n")
        for first, n, new in sorted(c.update, reverse=True):
            lines[first - 1:first - 1 + n] = new
        with open(a.readme, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        print("check.py: rewrote %d whole pastes in %s (elided ones are left to you)"
              % (len(c.update), a.readme))
    for f in c.failures:
        print("FAIL " + f)
    for s in c.skipped:
        print("not pinned: " + s)
    print("readme-test: %d examples match, %d differ, %d not pinned"
          % (c.passed, len(c.failures), len(c.skipped)))
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
