#!/usr/bin/env python3
"""Checks that exported files would start: the framework's own argument parser and validity rules.

    python3 scripts/check-export-start.py DIR [DIR ...]
    python3 scripts/check-export-start.py --regenerate MEGATRON_LM MEGATRON_DS DEEPSPEED AXOLOTL \
        TORCHTITAN

Each DIR holds the files of one `trainplan export -o DIR`.  No framework can be installed here,
so the check reimplements the part of each that reads the files:

  megatron_args.sh  sourced by bash (with DATA_PATH set: the placeholders must fail loudly
                    without it), then parsed with argparse built from the flag definitions of
                    Megatron-LM's megatron/training/arguments.py (+ the training_config.py
                    dataclasses ArgumentGroupFactory turns into flags) or Megatron-DeepSpeed's
                    megatron/arguments.py: types, choices, nargs, store_true switches,
                    allow_abbrev=False, unknown flags refused; then the layout checks of
                    validate_args / TransformerConfig.__post_init__ (required arguments, world
                    size, batch, heads and query groups over tp, experts over ep, sequence
                    parallelism, overlap, fp8 and offload requirements, stopping point and
                    schedule units).
  ds_config.json    DeepSpeed's config: the keys and types of DeepSpeedZeroConfig and the
                    offload configs (pydantic, extra="forbid"), the top-level keys of
                    runtime/constants.py, and train_batch_size = micro x accumulation x dp
                    (runtime/config.py _batch_assertion).
  axolotl.yaml      Axolotl's schema: every key a field of src/axolotl/utils/schemas, of the
                    field's type; learning_rate present (required), deepspeed and fsdp not
                    together (validation.py check_fsdp_deepspeed).
  *.sh, *.sbatch    bash -n, the script's own arguments passed on ("$@"), and torchtitan's
                    --training.* / --parallelism.* options fields of torchtitan/config/configs.py.

The definitions are a table generated from the frameworks' sources at the commits named in
scripts/export-start-tables.json (--regenerate reads checkouts or bare mirrors of the five
repositories).  Prints each problem; exits 1 when there is one.  make test runs it
(tests/export/check.sh).
"""
import argparse
import ast
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = os.path.join(HERE, "export-start-tables.json")
COMMITS = {"megatron_lm": "67f3515c8a0539d38c23f59dd8b85efdcbb3af3d",
           "megatron_ds": "4efb479d5317ce9b86096b9d8e3e8030b0b5263b",
           "deepspeed": "edaa7221267243c7be7fb49c5d5f5c4fb97b4641",
           "axolotl": "067b021c8b87a9e5e380b9173c704cf7340e30f5",
           "torchtitan": "b5bcd76c66d0acb1a08b176d9639425bc55e0b2a"}


# ---- --regenerate: the tables from the frameworks' sources --------------------------------

def git_show(repo, commit, path):
    return subprocess.run(["git", "-C", repo, "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def git_ls(repo, commit, folder):
    out = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", commit, folder],
                         check=True, capture_output=True, text=True).stdout
    return [p for p in out.split() if p.endswith(".py")]


def literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def type_name(node):
    if node is None:
        return None
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Lambda):
        return "lambda"
    return "other"


def add_argument_flags(source):
    """Every parser.add_argument / group.add_argument call: its option strings and kwargs."""
    flags = {}
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        names = [literal(a) for a in node.args]
        names = [n for n in names if isinstance(n, str) and n.startswith("--")]
        if not names:
            continue
        kw = {k.arg: k.value for k in node.keywords}
        d = {"line": node.lineno}
        action = literal(kw.get("action"))
        if action:
            d["action"] = action
        t = type_name(kw.get("type"))
        if t:
            d["type"] = t
        if "choices" in kw:
            ch = literal(kw["choices"])
            if isinstance(ch, (list, tuple)):
                d["choices"] = [str(c) for c in ch]
            elif t == "lambda":  # --attention-backend: AttnBackend[...] with choices=list(AttnBackend)
                d["choices"] = ["flash", "fused", "unfused", "local", "auto"]
        nargs = literal(kw.get("nargs"))
        if nargs is not None:
            d["nargs"] = nargs
        for n in names:
            flags[n] = d
    return flags


def dataclass_flags(source, classes):
    """ArgumentGroupFactory (megatron/training/argument_utils.py): a field becomes
    --field-name; Optional[T] -> T, Literal[...] -> choices, list[T] -> nargs '+', bool -> a
    store_true switch (or --no-field-name store_false when it defaults to True); argparse_meta
    arg_names override the name."""
    flags = {}
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.ClassDef) and node.name in classes):
            continue
        for st in node.body:
            if not (isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)):
                continue
            name = st.target.id
            ann = ast.unparse(st.annotation)
            default = st.value
            meta_names = None
            if isinstance(default, ast.Call) and type_name(default.func) == "field":
                kws = {k.arg: k.value for k in default.keywords}
                md = kws.get("metadata")
                if md is not None:
                    m = re.search(r"'arg_names':\s*\[([^\]]*)\]", ast.unparse(md))
                    if m:
                        meta_names = re.findall(r"'(--[^']+)'", m.group(1))
                default = kws.get("default")
            d = {"line": st.lineno}
            lit = re.search(r"Literal\[(.*)\]", ann)
            if ann.startswith("bool"):
                if literal(default) is True:
                    names = ["--no-" + name.replace("_", "-")]
                    d["action"] = "store_false"
                else:
                    names = ["--" + name.replace("_", "-")]
                    d["action"] = "store_true"
            else:
                names = ["--" + name.replace("_", "-")]
                if lit:
                    ch = literal(ast.parse(f"[{lit.group(1)}]", mode="eval").body)
                    d["choices"] = [str(c) for c in ch]
                    d["type"] = type(ch[0]).__name__
                elif ann.startswith("int"):
                    d["type"] = "int"
                elif ann.startswith("float"):
                    d["type"] = "float"
                else:
                    d["type"] = "str"
                if ann.startswith("list"):
                    d["nargs"] = "+"
            for n in meta_names or names:
                flags[n] = d
    return flags


def pydantic_fields(source, classes):
    """Field name (and alias) -> a type word of the annotation, for the named classes."""
    out = {}
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.ClassDef) and node.name in classes):
            continue
        for st in node.body:
            if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                ann = ast.unparse(st.annotation)
                names = [st.target.id]
                if isinstance(st.value, ast.Call):
                    for k in st.value.keywords:
                        if k.arg == "alias" and isinstance(literal(k.value), str):
                            names.append(literal(k.value))
                for n in names:
                    out[n] = type_word(ann)
    return out


def type_word(ann):
    if "Enum" in ann:  # ZeroStageEnum(int, Enum), str enums: a value of either
        return ["int", "str"]
    words = []
    for w, t in (("bool", "bool"), ("int", "int"), ("float", "float"), ("str", "str"),
                 ("dict", "dict"), ("list", "list"), ("Enum", "str"), ("Literal", "str"),
                 ("Any", "any")):
        if re.search(rf"\b{w}", ann):
            words.append(t)
    if not words or "Config" in ann or "Model" in ann:
        words.append("dict")
    return sorted(set(words))


def regenerate(ml, md, ds, ax, tt):
    c = COMMITS
    ml_src = git_show(ml, c["megatron_lm"], "megatron/training/arguments.py")
    tc_src = git_show(ml, c["megatron_lm"], "megatron/training/training_config.py")
    factories = re.findall(r"ArgumentGroupFactory\((\w+)", ml_src)
    megatron = dataclass_flags(tc_src, set(factories))
    megatron.update(add_argument_flags(ml_src))
    mds = add_argument_flags(git_show(md, c["megatron_ds"], "megatron/arguments.py"))
    mds["--deepspeed"] = {"action": "store_true", "source": "deepspeed/__init__.py"}
    mds["--deepspeed_config"] = {"type": "str", "source": "deepspeed/__init__.py"}
    zero_src = git_show(ds, c["deepspeed"], "deepspeed/runtime/zero/config.py")
    off_src = git_show(ds, c["deepspeed"], "deepspeed/runtime/zero/offload_config.py")
    const = "".join(git_show(ds, c["deepspeed"], p) for p in (
        "deepspeed/runtime/constants.py", "deepspeed/runtime/zero/config.py",
        "deepspeed/runtime/activation_checkpointing/config.py"))
    top = sorted(set(re.findall(r'^[A-Z0-9_]+\s*=\s*[\'"]([a-z0-9_]+)[\'"]\s*$', const, re.M)))
    ax_src = "\n".join(git_show(ax, c["axolotl"], p)
                       for p in git_ls(ax, c["axolotl"], "src/axolotl/utils/schemas"))
    ax_src += git_show(ax, c["axolotl"], "src/axolotl/integrations/liger/args.py")
    ax_keys = {}
    for node in ast.walk(ast.parse(ax_src)):
        if isinstance(node, ast.ClassDef):
            for st in node.body:
                if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                    ax_keys.setdefault(st.target.id, type_word(ast.unparse(st.annotation)))
    tt_src = git_show(tt, c["torchtitan"], "torchtitan/config/configs.py")
    titan = {sec: sorted(pydantic_fields(tt_src, {cls}))
             for sec, cls in (("training", "TrainingConfig"), ("parallelism", "ParallelismConfig"))}
    tables = {
        "commits": {"NVIDIA/Megatron-LM": c["megatron_lm"],
                    "pytorch/torchtitan": c["torchtitan"],
                    "deepspeedai/Megatron-DeepSpeed": c["megatron_ds"],
                    "deepspeedai/DeepSpeed": c["deepspeed"],
                    "axolotl-ai-cloud/axolotl": c["axolotl"]},
        "megatron_lm": dict(sorted(megatron.items())),
        "megatron_ds": dict(sorted(mds.items())),
        "deepspeed_top": top,
        "deepspeed_zero": pydantic_fields(zero_src, {"DeepSpeedZeroConfig"}),
        "deepspeed_offload_optimizer": pydantic_fields(off_src,
                                                       {"DeepSpeedZeroOffloadOptimizerConfig"}),
        "deepspeed_offload_param": pydantic_fields(off_src, {"DeepSpeedZeroOffloadParamConfig"}),
        "axolotl": dict(sorted(ax_keys.items())),
        "torchtitan": titan,
    }
    with open(TABLES, "w") as f:
        json.dump(tables, f, indent=0, sort_keys=False)
        f.write("\n")
    print(f"wrote {TABLES}: {len(megatron)} Megatron-LM flags, {len(mds)} Megatron-DeepSpeed "
          f"flags, {len(ax_keys)} Axolotl keys")


# ---- the check -----------------------------------------------------------------------------

class Problems(list):
    def add(self, where, msg):
        self.append(f"{where}: {msg}")


def tuple_type(x):  # arguments.py tuple_type
    return tuple(int(i) for i in x.strip("()").split(","))


def moe_freq_type(x):  # arguments.py moe_freq_type: an int, or a Python list pattern
    if "[" in x:
        v = eval(x, {"__builtins__": {}})  # the exporter's own "([0]*3+[1]*43)"
        if not (isinstance(v, list) and all(i in (0, 1) for i in v)):
            raise ValueError(x)
        return v
    return int(x)


TYPES = {"int": int, "float": float, "str": str, "tuple_type": tuple_type,
         "moe_freq_type": moe_freq_type, "lambda": str}


def build_parser(flags):
    p = argparse.ArgumentParser(allow_abbrev=False, add_help=False, exit_on_error=False)
    for name, d in flags.items():
        kw = {}
        if d.get("action") in ("store_true", "store_false"):
            kw["action"] = d["action"]
        else:
            kw["type"] = TYPES.get(d.get("type", "str"), str)
            if "choices" in d:
                kw["choices"] = d["choices"] if kw["type"] in (str,) else \
                    [kw["type"](c) for c in d["choices"]]
            if "nargs" in d:
                kw["nargs"] = d["nargs"]
        try:
            p.add_argument(name, dest=name[2:].replace("-", "_"), **kw)
        except (argparse.ArgumentError, ValueError):
            pass  # an alias of a flag already added
    return p


def bash_array(path, env):
    """MEGATRON_ARGS as bash sources it with `env`; (returncode, args, stderr)."""
    script = f'set -euo pipefail; source "{os.path.basename(path)}"; ' \
             'printf "%s\\0" "${MEGATRON_ARGS[@]}"'
    r = subprocess.run(["bash", "-c", script], cwd=os.path.dirname(path), env=env,
                       capture_output=True, text=True)
    return r.returncode, [a for a in r.stdout.split("\0") if a], r.stderr


def world_of(d):
    """GPUs of the launch script: nodes x processes per node."""
    for name in ("train.sbatch", "launch.sh"):
        p = os.path.join(d, name)
        if os.path.exists(p):
            t = open(p).read()
            nodes = int(re.search(r"--nnodes[ =](\d+)", t).group(1))
            per = int(re.search(r"--nproc-per-node[ =](\d+)", t).group(1))
            return nodes * per
    return None


def check_megatron(d, tables, probs):
    path = os.path.join(d, "megatron_args.sh")
    base = {k: v for k, v in os.environ.items()
            if k not in ("DATA_PATH", "TRAIN_ITERS", "TOKENIZER_MODEL")}
    rc, _, err = bash_array(path, dict(base, TRAIN_ITERS="1000", TOKENIZER_MODEL="/tokenizer"))
    if rc == 0 or "DATA_PATH" not in err:
        probs.add(path, "sourcing without DATA_PATH does not fail naming it")
    env = dict(base, DATA_PATH="/data/corpus_text_document", TRAIN_ITERS="1000",
               TOKENIZER_MODEL="/tokenizer")
    rc, argv, err = bash_array(path, env)
    if rc != 0:
        probs.add(path, f"bash cannot source it: {err.strip()}")
        return
    ds = "--deepspeed" in argv
    flags = tables["megatron_ds" if ds else "megatron_lm"]
    try:
        a, unknown = build_parser(flags).parse_known_args(argv)
    except (argparse.ArgumentError, SystemExit, ValueError) as e:
        probs.add(path, f"the parser refuses it: {e}")
        return
    if unknown:
        probs.add(path, f"unrecognized arguments: {' '.join(unknown)}")
    validate_megatron(path, vars(a), ds, world_of(d), probs)


def validate_megatron(path, a, ds, world, probs):
    """The layout part of validate_args (megatron/training/arguments.py) and
    TransformerConfig.__post_init__ / ModelParallelConfig.__post_init__ at the commit read."""
    def need(cond, msg):
        if not cond:
            probs.add(path, msg)
    g = lambda k, dflt=None: a.get(k) if a.get(k) is not None else dflt  # noqa: E731
    for req in ("num_layers", "hidden_size", "num_attention_heads", "max_position_embeddings",
                "seq_length", "micro_batch_size", "lr"):
        need(g(req) is not None, f"--{req.replace('_', '-')} is required")
    tp, pp = g("tensor_model_parallel_size", 1), g("pipeline_model_parallel_size", 1)
    cp, ep = g("context_parallel_size", 1), g("expert_model_parallel_size", 1)
    need(world is not None, "no launch script gives the world size")
    if world is None:
        return
    need(world % (tp * pp * cp) == 0, f"world {world} is not divisible by tp*pp*cp")
    dp = world // (tp * pp * cp)
    mbs, gbs = g("micro_batch_size", 1), g("global_batch_size")
    if gbs is not None:
        need(gbs % (mbs * dp) == 0, f"global batch {gbs} is not a multiple of mbs x dp "
                                    f"({mbs} x {dp}) (microbatches calculator)")
    heads = g("num_attention_heads", 1)
    need(heads % tp == 0, "transformer_config.py:887 heads % tp")
    groups = g("num_query_groups", heads) if (ds or g("group_query_attention")) else heads
    if ds:
        groups = g("num_key_value_heads", heads)
    need(groups % tp == 0 or tp % groups == 0, "transformer_config.py:903 query groups and tp")
    experts = g("num_experts")
    if isinstance(experts, list):
        experts = experts[0]
    moe_ep = g("moe_expert_parallel_size", 1) if ds else ep
    if moe_ep > 1:
        need(experts is not None and experts % moe_ep == 0, "arguments.py:1028 experts % ep")
    sp = bool(g("sequence_parallel")) and tp > 1  # arguments.py:905-914: off at tp 1
    if not ds:
        need(not (experts and tp > 1 and not sp),
             "moe/moe_layer.py:379 MoE with TP needs --sequence-parallel")
        need(not g("tp_comm_overlap") or sp, "arguments.py:917 --tp-comm-overlap needs SP")
        need(not g("overlap_param_gather") or g("use_distributed_optimizer")
             or g("use_megatron_fsdp"), "arguments.py:599 --overlap-param-gather needs the "
                                        "distributed optimizer")
        need(not g("overlap_param_gather") or g("overlap_grad_reduce"),
             "arguments.py:601 --overlap-param-gather needs --overlap-grad-reduce")
        need(not g("fp8_param_gather") or g("use_distributed_optimizer") or
             g("use_megatron_fsdp"), "arguments.py:657 --fp8-param-gather")
        need(not g("optimizer_cpu_offload") or g("use_precision_aware_optimizer"),
             "arguments.py:1192 --optimizer-cpu-offload needs --use-precision-aware-optimizer")
        need(g("ckpt_format") != "fsdp_dtensor" or g("use_megatron_fsdp"),
             "arguments.py:1051 --ckpt-format fsdp_dtensor needs Megatron-FSDP")
        vpp = g("num_virtual_stages_per_pipeline_rank")
        first, last = g("decoder_first_pipeline_num_layers"), g("decoder_last_pipeline_num_layers")
        if vpp is None and first is None and last is None:
            need(g("num_layers", 1) % pp == 0, "arguments.py:571 layers % pp")
        if vpp and vpp > 1:
            need(pp > 1, "arguments.py:576 interleaving needs pp > 1")
        if g("overlap_moe_expert_parallel_comm"):
            need(ep > 1, "transformer_config.py:1826 A2A overlap needs ep > 1")
            need(pp == 1 or (vpp or 1) > 1, "transformer_config.py:1821 A2A overlap needs vpp")
            need(g("recompute_granularity") != "full", "transformer_config.py:1834")
        if g("fp4_format") and g("fp8_format"):
            probs.add(path, "arguments.py:662 --fp4-format with --fp8-format")
        if g("recompute_granularity") == "selective":
            need(g("recompute_method") is None, "arguments.py:901 selective with a method")
    if cp > 1:
        need(g("seq_length", 0) % (2 * cp) == 0, "arguments.py:819 seq % 2cp")
    # the stopping point and the schedule in one unit (arguments.py:758-784)
    iters, samples = g("train_iters"), g("train_samples")
    need((iters is None) != (samples is None), "exactly one of --train-iters / --train-samples")
    if iters:
        need(not g("lr_decay_samples") and not g("lr_warmup_samples"),
             "arguments.py:762 samples-based schedule with --train-iters")
    if samples:
        need(not g("lr_decay_iters") and not g("lr_warmup_iters"),
             "arguments.py:778 iteration-based schedule with --train-samples")
    need(g("data_path") or g("mock_data"), "no --data-path (nor --mock-data)")
    need(g("tokenizer_type") is not None, "no --tokenizer-type")


def check_deepspeed(d, tables, probs):
    path = os.path.join(d, "ds_config.json")
    cfg = json.load(open(path))
    top = set(tables["deepspeed_top"])
    for k in cfg:
        if k not in top:
            probs.add(path, f"{k}: not a key of deepspeed/runtime/constants.py")
    z = cfg.get("zero_optimization", {})
    check_model_keys(path, "zero_optimization", z, tables["deepspeed_zero"], probs,
                     {"offload_optimizer": tables["deepspeed_offload_optimizer"],
                      "offload_param": tables["deepspeed_offload_param"]})
    world = world_of(d)
    mp = 1
    args = os.path.join(d, "megatron_args.sh")
    if os.path.exists(args):
        t = open(args).read()
        for f in ("--tensor-model-parallel-size", "--pipeline-model-parallel-size"):
            m = re.search(rf"{f} (\d+)", t)
            mp *= int(m.group(1)) if m else 1
        # Megatron-DeepSpeed: its batch and ZeRO stage are the JSON's
        for flag, key in (("--micro-batch-size", "train_micro_batch_size_per_gpu"),
                          ("--global-batch-size", "train_batch_size"), ("--zero-stage", None)):
            m = re.search(rf"{flag} (\d+)", t)
            want = cfg.get(key) if key else cfg.get("zero_optimization", {}).get("stage")
            if m and want is not None and int(m.group(1)) != want:
                probs.add(path, f"{key or 'zero_optimization.stage'} {want} but {flag} "
                                f"{m.group(1)} in megatron_args.sh")
    if world:
        dp = world // mp
        tb, mb, ga = (cfg.get("train_batch_size"), cfg.get("train_micro_batch_size_per_gpu"),
                      cfg.get("gradient_accumulation_steps"))
        if tb != mb * ga * dp:
            probs.add(path, f"train_batch_size {tb} != micro {mb} x accumulation {ga} x dp {dp} "
                            "(runtime/config.py _batch_assertion)")


def type_ok(v, words):
    if "any" in words:
        return True
    checks = {"bool": lambda x: isinstance(x, bool),
              "int": lambda x: isinstance(x, int) and not isinstance(x, bool),
              "float": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool),
              "str": lambda x: isinstance(x, str), "dict": lambda x: isinstance(x, dict),
              "list": lambda x: isinstance(x, list)}
    return any(checks[w](v) for w in words if w in checks)


def check_model_keys(path, where, obj, fields, probs, nested=None):
    nested = nested or {}
    for k, v in obj.items():
        if k not in fields:
            probs.add(path, f"{where}.{k}: not a field (extra=\"forbid\")")
        elif k in nested and isinstance(v, dict):
            check_model_keys(path, f"{where}.{k}", v, nested[k], probs)
        elif not type_ok(v, fields[k]):
            probs.add(path, f"{where}.{k}: {v!r} is not {'/'.join(fields[k])}")


def yaml_load(path):
    """The YAML as PyYAML reads it (Axolotl's loader), when PyYAML is there; else a reader of
    the block style libyaml's emitter writes (mappings, sequences, plain and quoted scalars)."""
    try:
        import yaml  # noqa: PLC0415
        return yaml.safe_load(open(path))
    except ImportError:
        pass
    root, stack = {}, [(-1, None)]
    lines = [l.rstrip("\n") for l in open(path) if l.strip() and not l.lstrip().startswith("#")]
    stack = [(-1, root)]
    for i, line in enumerate(lines):
        ind = len(line) - len(line.lstrip())
        body = line.strip()
        while stack[-1][0] >= ind:
            stack.pop()
        cont = stack[-1][1]
        if body.startswith("- "):
            cont.append(scalar(body[2:]))
            continue
        key, _, val = body.partition(":")
        key = key.strip().strip('"')
        val = val.strip()
        if val == "":
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            child = [] if nxt.startswith("- ") else {}
            cont[key] = child
            stack.append((ind, child))
        else:
            cont[key] = scalar(val)
    return root


def scalar(s):
    if s.startswith('"'):
        return json.loads(s)
    if s in ("true", "false"):
        return s == "true"
    if s in ("null", "~"):
        return None
    if re.fullmatch(r"[-+]?[0-9]+", s):
        return int(s)
    if re.fullmatch(r"[-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)?", s):  # YAML 1.1 float
        return float(s)
    return s


def check_axolotl(d, tables, probs):
    path = os.path.join(d, "axolotl.yaml")
    cfg = yaml_load(path)
    keys = tables["axolotl"]
    for k, v in cfg.items():
        if k not in keys:
            probs.add(path, f"{k}: not a field of Axolotl's schema")
        elif k != "fsdp_config" and not type_ok(v, keys[k]):
            probs.add(path, f"{k}: {v!r} is not {'/'.join(keys[k])}")
    if "learning_rate" not in cfg:
        probs.add(path, "learning_rate is required (schemas/training.py)")
    if cfg.get("deepspeed") and cfg.get("fsdp"):
        probs.add(path, "deepspeed and fsdp cannot be used together (validation.py)")
    if cfg.get("deepspeed") and not os.path.exists(os.path.join(d, cfg["deepspeed"])):
        probs.add(path, f"deepspeed: {cfg['deepspeed']} is not written beside it")


def check_dir(d, tables):
    probs = Problems()
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        if name.endswith((".sh", ".sbatch")):
            r = subprocess.run(["bash", "-n", p], capture_output=True, text=True)
            if r.returncode:
                probs.add(p, f"bash -n: {r.stderr.strip()}")
            text = open(p).read()
            if name != "megatron_args.sh" and '"$@"' not in text:
                probs.add(p, 'does not pass the script\'s arguments ("$@")')
            for sec, field in re.findall(r"--(training|parallelism)\.(\w+)", text):
                if field not in tables["torchtitan"][sec]:
                    probs.add(p, f"--{sec}.{field}: not a field of torchtitan's configs.py")
    if os.path.exists(os.path.join(d, "megatron_args.sh")):
        check_megatron(d, tables, probs)
    if os.path.exists(os.path.join(d, "ds_config.json")):
        check_deepspeed(d, tables, probs)
    if os.path.exists(os.path.join(d, "axolotl.yaml")):
        check_axolotl(d, tables, probs)
    return probs


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--regenerate":
        if len(sys.argv) != 7:
            sys.exit(__doc__)
        regenerate(*sys.argv[2:])
        return 0
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    tables = json.load(open(TABLES))
    bad = 0
    for d in sys.argv[1:]:
        probs = check_dir(d, tables)
        for p in probs:
            print(p)
        bad += len(probs)
    print(f"check-export-start: {len(sys.argv) - 1} export(s), {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
