"""trainplan.size: the library's one composition of `trainplan size` (tp_size_report, on one
thread here, on the CLI's thread pool there), equal to `trainplan size ... --format json`.

Run by `make test` (python-test) with TRAINPLAN_LIBRARY and TRAINPLAN_CLI set to the build's.
"""
import json
import os
import subprocess
import unittest

import trainplan

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
CLI = os.environ.get("TRAINPLAN_CLI", os.path.join(ROOT, "build", "trainplan"))


def cli(*args):
    p = subprocess.run([CLI, "size", *args, "--format", "json"], capture_output=True)
    if p.returncode not in (0, 1):  # 1: no shape fits the cluster, the document is printed
        raise AssertionError("%s: exit %d: %s" % (args, p.returncode, p.stderr.decode()))
    return json.loads(p.stdout)


class Size(unittest.TestCase):
    def test_flops_equals_the_cli(self):
        got = trainplan.size(flops=1e23)
        self.assertEqual(got, cli("--flops", "1e23"))
        # issue 40: the default fit's optimum between 20B and 40B parameters at 1e23 FLOPs
        self.assertEqual(got["fit"], "besiroglu")
        self.assertTrue(20e9 < got["params_opt"] < 40e9, got["params_opt"])

    def test_cluster_equals_the_cli(self):
        got = trainplan.size(gpu="a100-80gb", gpus=8, days=15, seq=2048, top=3)
        self.assertEqual(got, cli("--gpu", "a100-80gb", "--gpus", "8", "--days", "15", "--seq",
                                  "2048", "--top", "3"))
        self.assertEqual(len(got["shapes"]), 3)
        self.assertEqual(got["cluster"]["gpus"], 8)

    def test_fit_and_family_keywords_equal_the_cli(self):
        got = trainplan.size(flops=3e21, fit="hoffmann-3", family="qwen3", top=2)
        self.assertEqual(got, cli("--flops", "3e21", "--fit", "hoffmann-3", "--family", "qwen3",
                                  "--top", "2"))
        self.assertIn("caveat", got)

    def test_errors_are_the_clis(self):
        with self.assertRaises(trainplan.Error) as e:
            trainplan.size(gpu="h100-sxm")
        self.assertIn("needs both --gpu and --gpus", str(e.exception))
        p = subprocess.run([CLI, "size", "--gpu", "h100-sxm"], capture_output=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn(str(e.exception), p.stderr.decode())
        with self.assertRaises(trainplan.Error) as e:
            trainplan.size(flops=1e23, fit="hofmann-3")
        self.assertEqual(e.exception.field, "fit")
        with self.assertRaises(TypeError):
            trainplan.size("llama-3.1-8b", flops=1e23)  # size takes no model

    def test_help_lists_the_keywords(self):
        doc = trainplan.size.__doc__
        for kw in ("flops", "days", "gpu_hours", "fit", "family", "top"):
            self.assertIn("    %s (" % kw, doc)


if __name__ == "__main__":
    unittest.main()
