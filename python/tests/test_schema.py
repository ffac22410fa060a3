"""The keywords come from the library's one option table: every verb is a function whose
signature and help list them, equal to the CLI's JSON for each verb; the frameworks' spellings
and the CLI's "did you mean" work as keywords; booleans and strings are taken strictly (no
'yes', 'True', 2 or 1.0 for a flag, no NUL in any string).

Run by `make test` (python-test) with TRAINPLAN_LIBRARY and TRAINPLAN_CLI set to the build's.
"""
import inspect
import json
import os
import pydoc
import subprocess
import unittest

import trainplan

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
CLI = os.environ.get("TRAINPLAN_CLI", os.path.join(ROOT, "build", "trainplan"))
VERBS = ["params", "memory", "estimate", "search", "export", "size", "validate", "calibrate",
         "checkpoint", "logs", "models", "gpus"]


def cli(*args):
    p = subprocess.run([CLI, *args, "--format", "json"], capture_output=True)
    if p.returncode not in (0, 1):
        raise AssertionError("%s: exit %d: %s" % (args, p.returncode, p.stderr.decode()))
    return json.loads(p.stdout)


def cli_error(*args):
    p = subprocess.run([CLI, *args], capture_output=True)
    return p.returncode, p.stderr.decode()


class EveryVerb(unittest.TestCase):
    def test_namespace_is_the_verbs(self):
        public = sorted(n for n in dir(trainplan) if not n.startswith("_"))
        self.assertEqual(public, sorted(trainplan.__all__))
        for verb in VERBS:
            self.assertIn(verb, trainplan.__all__)

    def test_models_equals_the_cli(self):
        self.assertEqual(trainplan.models(), cli("models"))

    def test_gpus_equals_the_cli(self):
        self.assertEqual(trainplan.gpus(), cli("gpus"))

    def test_export_equals_the_cli(self):
        for kw, flags in [
                (dict(to="deepspeed", gpus=8, zero=3, recompute="full"),
                 ["--to", "deepspeed", "--gpus", "8", "--zero", "3", "--recompute", "full"]),
                (dict(to="megatron", gpus=16, tp=2, pp=2, gbs=64, zero=1, recompute="full"),
                 ["--to", "megatron", "--gpus", "16", "--tp", "2", "--pp", "2", "--gbs", "64",
                  "--zero", "1", "--recompute", "full"]),
                (dict(to="slurm", gpus=16, best=True, gbs=128, job_name="pre"),
                 ["--to", "slurm", "--gpus", "16", "--best", "--gbs", "128", "--job-name",
                  "pre"])]:
            with self.subTest(**kw):
                got = trainplan.export("llama-3.1-8b", **kw)
                self.assertEqual(got, cli("export", "llama-3.1-8b", *flags))
                self.assertTrue(got["files"][0]["content"])
        # the DeepSpeed file states the stage asked for (zero_optimization.stage)
        ds = json.loads(trainplan.export("llama-3.1-8b", to="deepspeed", gpus=8, zero=3,
                                         recompute="full")["files"][0]["content"])
        self.assertEqual(ds["zero_optimization"]["stage"], 3)
        for kw, field in [(dict(gpus=8), "to"), (dict(to="deepspeed", gpus=8, output="d"),
                                                 "output"),
                          (dict(to="deepspeed", best=True, tp=2, gbs=64), "tp"),
                          (dict(to="deepspeed", gpus=8, zero=0), "allow_oom")]:
            with self.subTest(**kw):
                with self.assertRaises(trainplan.Error) as cm:
                    trainplan.export("llama-3.1-8b", **kw)
                self.assertEqual(cm.exception.field, field)

    def test_checkpoint_equals_the_cli(self):
        clean = os.path.join(ROOT, "tests", "cli", "fixtures", "ckpt", "clean")
        self.assertEqual(trainplan.checkpoint(clean), cli("checkpoint", clean))
        self.assertEqual(trainplan.checkpoint(clean, gpus=16, zero=3, storage_gbps=10),
                         cli("checkpoint", clean, "--gpus", "16", "--zero", "3",
                             "--storage-gbps", "10"))
        with self.assertRaises(trainplan.Error) as cm:
            trainplan.checkpoint()
        self.assertEqual(cm.exception.field, "files")

    def test_logs_equals_the_cli(self):
        logs = os.path.join(ROOT, "tests", "fixtures", "logs")
        meg = os.path.join(logs, "megatron-lm.log")
        self.assertEqual(trainplan.logs(meg), cli("logs", meg))
        self.assertEqual(trainplan.logs(meg, tokens=1e9),
                         cli("logs", meg, "--tokens", "1e9"))
        # the modelled run next to the log: Llama 3.1 8B's 51.47 GFLOP per token (cases.txt
        # logs-model pins the table's MFU 40.6% from the same run)
        kw = dict(model="llama-3.1-8b", gpu="h100-sxm", framework="megatron", sp=True,
                  distributed_optimizer=True)
        got = trainplan.logs(meg, **kw)
        self.assertEqual(got, cli("logs", meg, "--model", "llama-3.1-8b", "--gpu", "h100-sxm",
                                  "--framework", "megatron", "--sp", "--distributed-optimizer"))
        self.assertAlmostEqual(got["logs"][0]["model"]["model_flops_per_token"] / 1e9, 51.47,
                               places=2)
        hf = os.path.join(logs, "hf-axolotl.log")
        self.assertEqual(trainplan.logs(meg, hf), cli("logs", meg, hf))
        with self.assertRaises(trainplan.Error) as cm:
            trainplan.logs()
        self.assertEqual(cm.exception.field, "files")
        with self.assertRaises(trainplan.Error) as cm:
            trainplan.logs(meg, row_out="rows.csv")
        self.assertEqual(cm.exception.field, "row_out")

    def test_params_from_shape_keywords_equals_the_cli(self):
        # GPT-2 small from its shape alone: 124,439,808 parameters (tests/cli/cases.txt
        # gpt2-shape-flags, the Hugging Face gpt2 safetensors total)
        kw = dict(layers=12, hidden=768, heads=12, vocab=50257, mlp="gelu", norm="layernorm",
                  bias=True, pos="learned", max_positions=1024, tied=True)
        got = trainplan.params(**kw)
        self.assertEqual(got["params_total"], 124439808)
        self.assertEqual(got, cli("params", "--layers", "12", "--hidden", "768", "--heads", "12",
                                  "--vocab", "50257", "--mlp", "gelu", "--norm", "layernorm",
                                  "--bias", "--pos", "learned", "--max-positions", "1024",
                                  "--tied"))

    def test_estimate_wall_clock_keywords_equal_the_cli(self):
        kw = dict(gpus=8, epochs=2, dataset_tokens=1e9, storage_gbps=5, ckpt_every=500,
                  startup_min=10, gpu_hour_price=2.0)
        self.assertEqual(trainplan.estimate("llama-3.1-8b", **kw),
                         cli("estimate", "llama-3.1-8b", "--gpus", "8", "--epochs", "2",
                             "--dataset-tokens", "1e9", "--storage-gbps", "5", "--ckpt-every",
                             "500", "--startup-min", "10", "--gpu-hour-price", "2.0"))

    def test_signatures_and_help_come_from_the_table(self):
        for verb in VERBS:
            sig = inspect.signature(getattr(trainplan, verb))
            doc = pydoc.render_doc(getattr(trainplan, verb), renderer=pydoc.plaintext)
            with self.subTest(verb=verb):
                for name, p in sig.parameters.items():
                    if p.kind == p.KEYWORD_ONLY:
                        self.assertIn("    %s (" % name, doc)
        est = inspect.signature(trainplan.estimate).parameters
        for kw in ("gpus", "mbs", "zero", "recompute", "tokens", "gpu_hour_price", "layers"):
            self.assertIn(kw, est)
        # the CLI's output options are not keywords
        for kw in ("format", "svg", "help", "quiet", "threads"):
            self.assertNotIn(kw, est)
            self.assertNotIn(kw, inspect.signature(trainplan.search).parameters)
        self.assertIn("0..3", pydoc.render_doc(trainplan.estimate, renderer=pydoc.plaintext))


class Names(unittest.TestCase):
    def test_framework_spellings_are_keywords(self):
        want = trainplan.estimate("llama-3.1-70b", gpus=64, tp=8, pp=2, mbs=2, gbs=128, zero=1)
        got = trainplan.estimate("llama-3.1-70b", gpus=64, tensor_model_parallel_size=8,
                                 pipeline_model_parallel_size=2, micro_batch_size=2,
                                 global_batch_size=128, zero_stage=1)
        self.assertEqual(got, want)

    def test_stack_aliases_as_the_cli(self):
        # trl is the Hugging Face stack (stack.c): the CLI takes it as python does
        self.assertEqual(trainplan.estimate("llama-3.1-8b", gpus=8, framework="trl"),
                         cli("estimate", "llama-3.1-8b", "--gpus", "8", "--framework", "trl"))

    def test_did_you_mean_is_the_clis(self):
        with self.assertRaises(trainplan.Error) as cm:
            trainplan.estimate("llama-3.1-8b", mbz=2)
        self.assertEqual(cm.exception.field, "mbz")
        self.assertIn("did you mean mbs?", str(cm.exception))
        rc, err = cli_error("estimate", "llama-3.1-8b", "--mbz", "2")
        self.assertEqual(rc, 2)
        self.assertIn("did you mean --mbs?", err)

    def test_same_ranges_as_the_cli(self):
        # the range the CLI states is the one python enforces (one table)
        with self.assertRaises(trainplan.Error) as cm:
            trainplan.memory("llama-3.1-8b", overhead_gb=5000)
        self.assertEqual(cm.exception.field, "overhead_gb")
        self.assertIn("out of range (0..1000)", str(cm.exception))
        rc, err = cli_error("memory", "llama-3.1-8b", "--overhead-gb", "5000")
        self.assertEqual((rc, err.strip()),
                         (2, "trainplan: error: --overhead-gb 5000 is out of range (0..1000)"))

    def test_sweep_lists_are_the_clis(self):
        with self.assertRaises(trainplan.Error) as cm:
            trainplan.estimate("llama-3.1-8b", gpus=8, mbs="1,2")
        self.assertEqual(cm.exception.field, "mbs")


class Strict(unittest.TestCase):
    def test_booleans(self):
        on = trainplan.memory("llama-3.1-70b", gpus=32, tp=8, pp=4, per_stage=True)
        off = trainplan.memory("llama-3.1-70b", gpus=32, tp=8, pp=4)
        self.assertNotEqual(on, off)
        for good in (True, 1, "true", "1"):
            self.assertEqual(trainplan.memory("llama-3.1-70b", gpus=32, tp=8, pp=4,
                                              per_stage=good), on)
        for good in (False, 0, "false", "0"):
            self.assertEqual(trainplan.memory("llama-3.1-70b", gpus=32, tp=8, pp=4,
                                              per_stage=good), off)
        for bad in ("yes", "True", "no", 2, 1.0, -1, "on", ""):
            with self.subTest(value=bad):
                with self.assertRaises(trainplan.Error) as cm:
                    trainplan.memory("llama-3.1-70b", gpus=32, tp=8, pp=4, per_stage=bad)
                self.assertEqual(cm.exception.field, "per_stage")

    def test_nul_refused(self):
        for kw in (dict(gpu="h100-sxm\0x"), dict(framework="megatron\0"),
                   dict(calibration="data/calibration.json\0")):
            with self.subTest(**{k: repr(v) for k, v in kw.items()}):
                with self.assertRaises(trainplan.Error) as cm:
                    trainplan.estimate("llama-3.1-8b", gpus=8, **kw)
                self.assertEqual(cm.exception.field, next(iter(kw)))
        with self.assertRaises(trainplan.Error) as cm:
            trainplan.params("llama-3.1-8b\0gpt2")
        self.assertEqual(cm.exception.field, "model")
        with self.assertRaises(trainplan.Error) as cm:
            trainplan.validate("data/runs/x.csv\0")
        self.assertEqual(cm.exception.field, "files")


if __name__ == "__main__":
    unittest.main()
