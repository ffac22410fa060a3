#!/usr/bin/env python3
"""Checks the key/flag tables of tests/test_export.c against the frameworks' own sources.

    python3 scripts/check-export-names.py DEEPSPEED AXOLOTL MEGATRON_LM MEGATRON_DEEPSPEED

Each argument is a git checkout (or bare mirror) of deepspeedai/DeepSpeed,
axolotl-ai-cloud/axolotl, NVIDIA/Megatron-LM and deepspeedai/Megatron-DeepSpeed; the commits
read are the ones docs/export.md names (override with REPO@COMMIT).  Prints each name not found
and exits 1 when there is one.  A development aid: make test does not need the checkouts.
"""
import re
import subprocess
import sys

COMMITS = ["edaa7221267243c7be7fb49c5d5f5c4fb97b4641", "067b021c8b87a9e5e380b9173c704cf7340e30f5",
           "67f3515c8a0539d38c23f59dd8b85efdcbb3af3d", "4efb479d5317ce9b86096b9d8e3e8030b0b5263b"]


def show(repo, commit, paths):
    out = []
    for p in paths:
        r = subprocess.run(["git", "-C", repo, "show", f"{commit}:{p}"], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{repo}@{commit}: cannot read {p}")
        out.append(r.stdout)
    return "\n".join(out)


def ls(repo, commit, folder):
    r = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", commit, folder],
                       capture_output=True, text=True, check=True)
    return [p for p in r.stdout.split() if p.endswith(".py")]


def table(text, name):
    body = text[text.index(f"static const struct name {name}[] = {{"):]
    return re.findall(r'\{"([^"]+)",', body[:body.index("};")])


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    repos = []
    for i, a in enumerate(sys.argv[1:]):
        path, _, commit = a.partition("@")
        repos.append((path, commit or COMMITS[i]))
    (ds, dsc), (ax, axc), (ml, mlc), (md, mdc) = repos
    ds_src = show(ds, dsc, ["deepspeed/runtime/constants.py", "deepspeed/runtime/zero/config.py",
                            "deepspeed/runtime/zero/offload_config.py",
                            "deepspeed/runtime/activation_checkpointing/config.py",
                            "deepspeed/ops/adam/cpu_adam.py"])
    ax_src = show(ax, axc, ls(ax, axc, "src/axolotl/utils/schemas") +
                  ["src/axolotl/integrations/liger/args.py"])
    ml_src = show(ml, mlc, ["megatron/training/arguments.py", "megatron/training/training_config.py"])
    md_src = show(md, mdc, ["megatron/arguments.py"]) + show(ds, dsc, ["deepspeed/__init__.py"])
    tests = open("tests/test_export.c").read()
    bad = []
    for k in table(tests, "DS_KEYS"):
        last = re.escape(k.split(".")[-1])
        if not re.search(rf"[\"']{last}[\"']|^\s+{last}\s*[:=]|\b{last}\b\s*[:=,)]", ds_src, re.M):
            bad.append(("DeepSpeed", k))
    for k in table(tests, "AXOLOTL_KEYS"):
        last = k.split(".")[-1]
        if last not in ("use_reentrant", "momentum") and \
                not re.search(rf"^\s+{re.escape(last)}\s*:", ax_src, re.M):
            bad.append(("Axolotl", k))
    for f in table(tests, "MEGATRON_LM_FLAGS"):
        field = f[2:].replace("-", "_")
        if f"'{f}'" not in ml_src and not re.search(rf"^\s+{field}\s*:", ml_src, re.M):
            bad.append(("Megatron-LM", f))
    for f in table(tests, "MEGATRON_DS_FLAGS"):
        if f"'{f}'" not in md_src and f'"{f}"' not in md_src:
            bad.append(("Megatron-DeepSpeed", f))
    for where, name in bad:
        print(f"{where}: {name} not found")
    print(f"{len(bad)} name(s) not found")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
