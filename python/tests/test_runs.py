"""trainplan.validate and trainplan.calibrate against the CLI: the same dicts as
`trainplan validate/calibrate --format json` over the shipped runs files, the calibration file
written byte for byte as the CLI writes it, and bad input raising trainplan.Error.

Run by `make test` (python-test) with TRAINPLAN_LIBRARY and TRAINPLAN_CLI set to the build's.
"""
import glob
import json
import locale
import os
import subprocess
import tempfile
import threading
import unittest

import trainplan

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
CLI = os.environ.get("TRAINPLAN_CLI", os.path.join(ROOT, "build", "trainplan"))
RUNS = sorted(glob.glob(os.path.join(ROOT, "data", "runs", "*.csv")))
HF = os.path.join(ROOT, "data", "runs", "public_hf_stacks.csv")
MORE = os.path.join(ROOT, "data", "runs", "public_hf_stacks_more.csv")
CALIBRATION = os.path.join(ROOT, "data", "calibration.json")


def cli_json(verb, files, *flags):
    p = subprocess.run([CLI, verb, *files, *flags, "--format", "json"], capture_output=True)
    if p.returncode != 0:
        raise AssertionError("%s: exit %d: %s" % (verb, p.returncode, p.stderr.decode()))
    return json.loads(p.stdout)


class Validate(unittest.TestCase):
    def test_every_shipped_file(self):
        self.assertTrue(RUNS)
        self.assertEqual(trainplan.validate(*RUNS), cli_json("validate", RUNS))

    def test_with_a_calibration_file(self):
        self.assertEqual(trainplan.validate(HF, calibration=CALIBRATION),
                         cli_json("validate", [HF], "--calibration", CALIBRATION))

    def test_known_rows(self):
        # Pai-Megatron-Patch issue #643: Qwen3-30B-A3B on 16 H800 (tp 1, pp 2, ep 8) measured
        # 6325 tokens/s per GPU (the speed table; data/runs/public_hf_stacks.csv)
        d = trainplan.validate(HF)
        row = next(r for r in d["rows"] if r["row_id"] == "paimeg643:1")
        self.assertEqual(row["measured_tokens_per_s_per_gpu"], 6325)
        self.assertEqual((row["gpu"], row["num_gpus"], row["measured_from"]),
                         ("h800", 16, "tokens/s"))
        self.assertAlmostEqual(row["error"],
                               row["predicted_tokens_per_s_per_gpu"] / 6325 - 1, places=5)

    def test_errors(self):
        with self.assertRaises(trainplan.Error) as cm:
            trainplan.validate()
        self.assertEqual(cm.exception.field, "files")
        with self.assertRaises(trainplan.Error) as cm:
            trainplan.validate("/no/such/runs.csv")
        self.assertIn("/no/such/runs.csv", str(cm.exception))
        with self.assertRaises(trainplan.Error) as cm:
            trainplan.validate(HF, summary=True)
        self.assertEqual(cm.exception.field, "summary")
        with self.assertRaises(trainplan.Error):
            trainplan.validate(HF, calibration="/no/such/calibration.json")


class ThreadsAndLocale(unittest.TestCase):
    def test_two_threads_and_a_comma_locale(self):
        want = trainplan.validate(HF, MORE)
        got = {}

        def work(i):
            got[i] = [trainplan.validate(HF, MORE) for _ in range(3)]

        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(got, {0: [want] * 3, 1: [want] * 3})
        for name in ("de_DE.UTF-8", "de_DE.utf8"):
            try:
                locale.setlocale(locale.LC_ALL, name)
            except locale.Error:
                continue
            try:
                self.assertEqual(trainplan.validate(HF, MORE), want)
            finally:
                locale.setlocale(locale.LC_ALL, "C")
            return
        self.skipTest("no de_DE locale installed (scripts/deps.sh installs it)")


class Calibrate(unittest.TestCase):
    FILES = [HF, MORE]

    def test_fit_as_the_cli(self):
        with tempfile.TemporaryDirectory() as tmp:
            mine, cli = os.path.join(tmp, "py.json"), os.path.join(tmp, "cli.json")
            got = trainplan.calibrate(*self.FILES, no_cv=True, max_evals=300, output=mine)
            want = cli_json("calibrate", self.FILES, "--no-cv", "--max-evals", "300", "-o", cli)
            self.assertEqual(got["output"], mine)
            got["output"] = cli
            self.assertEqual(got, want)
            with open(mine, "rb") as a, open(cli, "rb") as b:
                self.assertEqual(a.read(), b.read())

    def test_leave_one_source_out_and_prior_base(self):
        got = trainplan.calibrate(*self.FILES, base="prior", max_evals=100, min_gpu_rows=3,
                                  prior_weight=0.5, no_per_gpu=True, starts=2, fold_rows=3,
                                  max_folds=2, fit_rows=20)
        want = cli_json("calibrate", self.FILES, "--base", "prior", "--max-evals", "100",
                        "--min-gpu-rows", "3", "--prior-weight", "0.5", "--no-per-gpu",
                        "--starts", "2", "--fold-rows", "3", "--max-folds", "2",
                        "--fit-rows", "20")
        self.assertEqual(got, want)
        self.assertEqual(got["base"], "physics priors")
        self.assertIsNotNone(got["leave_one_source_out"])

    def test_errors(self):
        for kw, field in [(dict(max_evals=5), "max_evals"), (dict(prior_weight=-1), "prior_weight"),
                          (dict(min_gpu_rows=0), "min_gpu_rows"), (dict(starts=0), "starts"),
                          (dict(fold_rows=-1), "fold_rows"), (dict(max_folds=-1), "max_folds"),
                          (dict(fit_rows=-1), "fit_rows"),
                          (dict(bogus=1), "bogus")]:
            with self.subTest(**kw):
                with self.assertRaises(trainplan.Error) as cm:
                    trainplan.calibrate(HF, **kw)
                self.assertEqual(cm.exception.field, field)
        with self.assertRaises(trainplan.Error):
            trainplan.calibrate(HF, base="/no/such/base.json")
        with self.assertRaises(trainplan.Error) as cm:
            trainplan.calibrate(HF, no_cv=True, max_evals=10, output="/no/such/dir/cal.json")
        self.assertEqual(cm.exception.field, "output")


if __name__ == "__main__":
    unittest.main()
