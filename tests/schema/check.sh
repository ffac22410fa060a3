#!/bin/sh
# check.sh - the options are declared once, in src/api/option_table.c (make schema-test, part of
# make test).  Fails when a CLI option, a Python keyword or a page field is declared anywhere
# else:
#   C      the front ends and the binding calls (cli/, src/api/call.c, request.c, args_run.c,
#          web/main_web.c) hold no option row ({"name", <kind or offset>...}), no offsetof into
#          the options, no table of struct tp_option, and call.c, request.c, args_run.c,
#          common.c and main_web.c compare no text with an option's name;
#   Python python/trainplan declares no keyword parameter and names no option in a string;
#   page   web/index.html lists no choices (only an empty default) and names only options of
#          the table; web/app.js writes no --flag but the page's own --format and --svg.
#
#   sh tests/schema/check.sh        (from the repository root)
set -u
python3 - <<'PY'
import ast, glob, re, sys

table = open("src/api/option_table.c").read()
rows = re.findall(r'\{\.name = "([a-z0-9-]+)",(?:\s*\.aliases = ((?:"[^"]*"\s*)+))?', table)
names = set()
for name, aliases in rows:
    names.add(name)
    for a in "".join(re.findall(r'"([^"]*)"', aliases)).split("|") if aliases else []:
        names.add(a)
if len(rows) < 100:
    print("schema: only %d option rows read from src/api/option_table.c" % len(rows))
    sys.exit(1)
names = {n for n in names if len(n) > 1}  # -h, -o, -q: no name a table could hold
forms = names | {n.replace("-", "_") for n in names}
# --explain's value is a grammar of its own ("tp=8 pp=4"): keys of a layout, not options
exempt_rows = {"cli/cmd_search.c"}
bad = []

front = sorted(set(glob.glob("cli/*.c") + glob.glob("cli/*.h") + glob.glob("web/*.c") +
                   glob.glob("src/api/call*.c") + glob.glob("src/api/request.c") +
                   glob.glob("src/api/args_run.c")))
compare = {"src/api/call.c", "src/api/request.c", "src/api/args_run.c", "cli/common.c",
           "web/main_web.c"}
for path in front:
    text = open(path).read()
    for i, line in enumerate(text.split("\n"), 1):
        where = "%s:%d" % (path, i)
        for m in re.finditer(r'\{\s*"([a-z0-9_-]+)",\s*([^"\s\d{-][^,}]*)', line):
            if m.group(1) in forms and path not in exempt_rows and \
                    not m.group(2).startswith("cmd_"):  # a verb (gpus) and its command
                bad.append("%s: an option row for %s" % (where, m.group(1)))
        if re.search(r"offsetof\(struct (tp|cli)_args", line):
            bad.append("%s: an offset into the options" % where)
        if re.search(r"struct tp_option\s+\w+\s*\[", line):
            bad.append("%s: a table of options" % where)
        if path in compare:
            for m in re.finditer(r'strcmp\([^,]+,\s*"([a-z0-9_-]+)"\)', line):
                if m.group(1) in forms:
                    bad.append("%s: compares with the option %s" % (where, m.group(1)))

# the JSON schema's own keys (tp_options_json), the verbs' positional names and the verb gpus
allowed = {"model", "files", "gpus", "name", "keyword", "aliases", "kind", "lo", "hi", "choices",
           "metavar", "help"}
for path in glob.glob("python/trainplan/*.py"):
    tree = ast.parse(open(path).read(), path)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            a = node.args
            for arg, default in zip(a.args[len(a.args) - len(a.defaults):], a.defaults):
                if arg.arg in forms and arg.arg != "model":
                    bad.append("%s:%d: a keyword parameter %s" % (path, node.lineno, arg.arg))
            for arg in (x for x in a.kwonlyargs if x.arg in forms):
                bad.append("%s:%d: a keyword-only parameter %s" % (path, node.lineno, arg.arg))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in forms and node.value not in allowed:
                bad.append("%s:%d: names the option %s" % (path, node.lineno, node.value))

html = open("web/index.html").read()
for m in re.finditer(r"<option([^>]*)>", html):
    if 'value=""' not in m.group(1):
        bad.append("web/index.html: a choice declared in the page: <option%s>" % m.group(1))
for m in re.finditer(r'name="([^"]+)"', html):
    if m.group(1) not in ("verb", "model", "viewport") and m.group(1) not in names:
        bad.append("web/index.html: the field %s is no option of the table" % m.group(1))
js = open("web/app.js").read()
for m in re.finditer(r"'--([a-z0-9-]+)'", js):
    if m.group(1) not in ("format", "svg"):
        bad.append("web/app.js: the flag --%s written in the page" % m.group(1))

for b in bad:
    print("schema: " + b)
if bad:
    print("schema: %d declarations outside src/api/option_table.c" % len(bad))
    sys.exit(1)
print("schema: %d options, declared once (src/api/option_table.c)" % len(rows))
PY
