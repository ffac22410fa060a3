"""The Python package against the CLI: every function returns the dict the CLI prints with
--format json for the same run (same keys, same numbers), errors name the keyword, two threads
get the single-threaded answers, and a comma-decimal locale changes nothing.

Run by `make test` (python-test) with TRAINPLAN_LIBRARY and TRAINPLAN_CLI set to the build's.
"""
import json
import locale
import os
import subprocess
import threading
import unittest

import trainplan

CLI = os.environ.get("TRAINPLAN_CLI", os.path.join(os.path.dirname(__file__), "..", "..",
                                                   "build", "trainplan"))
COMMA_LOCALES = ("de_DE.UTF-8", "de_DE.utf8")

# (model, keywords): dense and MoE, ZeRO, recompute, tp/pp with a global batch, a token budget
# with a price, an fp8 job (tensor-wise and torchao's row-wise), packed fine-tuning, another GPU,
# a stack by alias.
ESTIMATES = [
    ("llama-3.1-8b", dict(gpu="h100-sxm", gpus=8)),
    ("llama-3.1-8b", dict(gpus=8, zero=3, recompute="full", seq=8192)),
    ("llama-3.1-70b", dict(gpus=64, tp=8, pp=2, gbs=128, recompute="full", tokens=1e9,
                           gpu_hour_price=2.5)),
    ("qwen3-30b-a3b", dict(gpus=16, ep=8, zero=1)),
    ("qwen3-30b-a3b", dict(gpu="gb300", gpus=8, ep=8, mbs=8, gbs=512, seq=4096,
                           precision="mxfp8", zero=1, moe_a2a_overlap=True)),
    ("llama-3.1-8b", dict(gpu="mi300x", gpus=8, task="sft", framework="axolotl", zero=3)),
    ("llama-3.2-3b", dict(gpu="mi300x", gpus=8, task="sft", framework="axolotl", zero=3,
                          trainable_frac=0.61, tokens=7.6e8)),
    ("llama-3.1-8b", dict(gpus=16, tp=2, sp=True, precision="fp8", mbs=2, gas=4)),
    ("llama-3.1-8b", dict(gpu="h100-96gb", gpus=64, framework="torchtitan", precision="fp8",
                          fp8_recipe="rowwise", tp=8, sp=True, zero=3, seq=8192, mbs=12)),
    ("llama-2-7b", dict(gpus=8, framework="megatron", precision="fp8", task="sft", seq=4096,
                        doc_len=250, mbs=1, gbs=32, zero=1)),
]
PARAMS = [
    ("llama-3.1-8b", dict()),
    ("qwen3-30b-a3b", dict(seq=2048, recompute="full", per_layer=True)),
    ("llama-4-scout", dict(attention_flops="noncausal", mtp=0)),
    ("deepseek-v3", dict(mtp=1)),
    ("tests/fixtures/hf/bloom-176b.json", dict(recompute="selective")),
]
SEARCHES = [
    ("llama-3.1-8b", dict(gpus=8, gbs=64)),
    ("qwen3-30b-a3b", dict(gpus=16, gbs=128, seq=4096, framework="megatron", top=8)),
    ("llama-3.1-70b", dict(gpu="a100-80gb", gpus=32, gbs=256, max_tp=4, no_offload=True)),
    ("llama-3.1-70b", dict(gpu="a100-80gb", gpus=32, gbs=256, framework="megatron",
                           zero_stages="0,1", recompute_modes="none,selective")),
    # nothing feasible: the nearest changes (another stack, the nearest gbs; more GPUs)
    ("llama-3.1-8b", dict(gpus=8, gbs=7, framework="axolotl")),
    ("llama-3.1-70b", dict(gpus=2, gbs=64)),
]
MEMORIES = [
    ("llama-3.1-8b", dict(gpus=8)),
    ("llama-3.1-70b", dict(gpus=8)),  # does not fit: the fixes
    ("llama-3.1-70b", dict(gpus=32, tp=8, pp=4, per_stage=True, recompute="selective")),
    ("qwen3-30b-a3b", dict(gpus=8, ep=8, zero=2, optimizer="adamw-8bit")),
]


def cli_args(verb, model, kw):
    args = [CLI, verb, model]
    for k, v in kw.items():
        flag = "--" + k.replace("_", "-")
        if v is True:
            args.append(flag)
        else:
            args += [flag, str(v)]
    return args + ["--format", "json"]


def cli_json(verb, model, kw, env=None):
    p = subprocess.run(cli_args(verb, model, kw), capture_output=True, env=env)
    if p.returncode not in (0, 1):  # 1: does not fit, the document is still printed
        raise AssertionError("%s: exit %d: %s" % (verb, p.returncode, p.stderr.decode()))
    return p.stdout


class AgainstCli(unittest.TestCase):
    def test_estimate(self):
        for model, kw in ESTIMATES:
            with self.subTest(model=model, **kw):
                self.assertEqual(trainplan.estimate(model, **kw),
                                 json.loads(cli_json("estimate", model, kw)))

    def test_params(self):
        for model, kw in PARAMS:
            with self.subTest(model=model, **kw):
                self.assertEqual(trainplan.params(model, **kw),
                                 json.loads(cli_json("params", model, kw)))

    def test_search(self):
        for model, kw in SEARCHES:
            with self.subTest(model=model, **kw):
                self.assertEqual(trainplan.search(model, **kw),
                                 json.loads(cli_json("search", model, kw)))

    def test_memory(self):
        for model, kw in MEMORIES:
            with self.subTest(model=model, **kw):
                self.assertEqual(trainplan.memory(model, **kw),
                                 json.loads(cli_json("memory", model, kw)))

    def test_fixes_are_keywords(self):
        # a fix is data (settings: the keywords, not flags): applied, the run fits, at the
        # worst-stage total the fix reported
        for model, kw in [("llama-3.1-70b", dict(gpus=8)),
                          ("qwen3-8b", dict(gpu="h100", gpus=8, mbs=8, seq=8192, zero=3,
                                            recompute="full"))]:
            d = trainplan.memory(model, **kw)
            self.assertFalse(d["fits"])
            for fix in d["fixes"] + ([d["fits_with"]] if d["fits_with"] else []):
                with self.subTest(model=model, **fix["settings"]):
                    got = trainplan.memory(model, **dict(kw, **fix["settings"]))
                    self.assertTrue(got["fits"])
                    self.assertEqual(got["layout"]["dp"], fix["dp"])
                    self.assertAlmostEqual(got["total_bytes"] / fix["total_bytes"], 1, places=6)

    def test_nearest_are_keywords(self):
        # nothing feasible: each nearest change, passed back as keywords, finds layouts
        for model, kw in SEARCHES[-2:]:
            d = trainplan.search(model, **kw)
            self.assertEqual(d["results"], [])
            self.assertTrue(d["nearest"])
            for near in d["nearest"]:
                with self.subTest(model=model, **near["settings"]):
                    got = trainplan.search(model, **dict(kw, **near["settings"]))
                    self.assertTrue(got["results"])
                    self.assertEqual(got["nearest"], [])

    def test_known_answer_params(self):
        # published totals: Llama 3.1 8B 8,030,261,248 and Qwen3-30B-A3B 30,532,122,624
        # (the models' safetensors index totals; tests/cli/cases.txt pins the same)
        self.assertEqual(trainplan.params("llama-3.1-8b")["params_total"], 8030261248)
        self.assertEqual(trainplan.params("qwen3-30b-a3b")["params_total"], 30532122624)

    def test_known_answer(self):
        # Llama 3.1 8B: 8,030,261,248 parameters (meta-llama/Llama-3.1-8B safetensors total);
        # 51.47 GFLOP per token at seq 8192 is the params verb's exact count (README)
        d = trainplan.estimate("llama-3.1-8b", gpus=8, seq=8192)
        self.assertAlmostEqual(d["model_flops_per_token"] / 1e9, 51.470, places=3)
        self.assertEqual(d["cluster"], {"gpu": "h100-sxm", "gpus": 8, "gpus_per_node": 8})

    def test_fp8_param_gather(self):
        # Llama 3 70B at TP 8: 8,556,380,160 GEMM weights a GPU in 1 byte instead of 2
        # (tests/test_memory.c test_fp8_param_gather works the count out)
        kw = dict(gpu="h100-sxm", gpus=64, tp=8, sp=True, framework="megatron", zero=1,
                  precision="fp8")
        off = trainplan.memory("llama-3.1-70b", **kw)
        on = trainplan.memory("llama-3.1-70b", fp8_param_gather=True, **kw)
        self.assertAlmostEqual(off["weights_bytes"] - on["weights_bytes"], 8556380160, delta=1)
        self.assertFalse(off["fits"])
        self.assertTrue(on["fits"])

    def test_version(self):
        self.assertEqual(trainplan.version(), trainplan.__version__)


class Errors(unittest.TestCase):
    def check(self, field, fragment, **kw):
        with self.assertRaises(trainplan.Error) as cm:
            trainplan.estimate("llama-3.1-8b", **kw)
        self.assertEqual(cm.exception.field, field)
        self.assertIn(fragment, str(cm.exception))

    def test_messages_name_the_keyword(self):
        # the CLI says the same with --gbs (tests/cli/cases.txt memory-gbs-divide)
        self.check("gbs", "gbs 12 is not a multiple of mbs*dp = 1*8 = 8", gpus=8, gbs=12)
        self.check("zero", "zero 7", gpus=8, zero=7)
        self.check("recompute", "expected one of none|selective|full", recompute="some")
        self.check("bogus", "unknown option bogus", bogus=1)
        self.check("gpu", "", gpu="no-such-gpu")
        self.check("gpu_hour_price", "needs a token budget", gpus=8, gpu_hour_price=2)
        # other settings a message names read as keywords (the CLI shows --zero 3)
        self.check("offload", "offload params needs zero=3", gpus=8, offload="params", zero=1)
        self.check("vpp", "needs pipeline parallelism (pp=2 or more)", gpus=8, vpp=2)
        self.check("fp8_param_gather", "needs precision fp8 or mxfp8, not bf16", gpus=8,
                   fp8_param_gather=True)
        with self.assertRaises(trainplan.Error) as cm:
            trainplan.search("llama-3.1-8b", gpus=8)
        self.assertEqual(cm.exception.field, "gbs")
        for field, value, fragment in [("zero_stages", "0,4", 'unknown stage "4"'),
                                       ("recompute_modes", "partial", "only together with full")]:
            with self.assertRaises(trainplan.Error) as cm:
                trainplan.search("llama-3.1-8b", gpus=8, gbs=64, **{field: value})
            self.assertEqual(cm.exception.field, field)
            self.assertIn(fragment, str(cm.exception))

    def test_unknown_model(self):
        with self.assertRaises(trainplan.Error):
            trainplan.memory("no-such-model", gpus=8)


class Threads(unittest.TestCase):
    def test_two_threads_get_the_single_threaded_answers(self):
        want = [trainplan.estimate(m, **kw) for m, kw in ESTIMATES]
        got = {}

        def work(i):
            got[i] = [trainplan.estimate(m, **kw) for _ in range(3) for m, kw in ESTIMATES]

        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for i in range(2):
            self.assertEqual(got[i], want * 3)


def comma_locale():
    for name in COMMA_LOCALES:
        try:
            locale.setlocale(locale.LC_ALL, name)
            return name
        except locale.Error:
            pass
    return None


class Locale(unittest.TestCase):
    def test_comma_locale_changes_nothing(self):
        want = trainplan.estimate("llama-3.1-70b", **ESTIMATES[2][1])
        name = comma_locale()
        if not name:
            self.skipTest("no de_DE locale installed (scripts/deps.sh installs it)")
        try:
            self.assertEqual(locale.localeconv()["decimal_point"], ",")
            self.assertEqual(trainplan.estimate("llama-3.1-70b", **ESTIMATES[2][1]), want)
        finally:
            locale.setlocale(locale.LC_ALL, "C")

    def test_cli_byte_identical(self):
        if not comma_locale():
            self.skipTest("no de_DE locale installed (scripts/deps.sh installs it)")
        locale.setlocale(locale.LC_ALL, "C")
        for verb, (model, kw) in [("estimate", ESTIMATES[2]), ("memory", MEMORIES[2])]:
            c = cli_json(verb, model, kw, env=dict(os.environ, LC_ALL="C"))
            de = cli_json(verb, model, kw, env=dict(os.environ, LC_ALL=COMMA_LOCALES[0]))
            self.assertEqual(c, de)


if __name__ == "__main__":
    unittest.main()
