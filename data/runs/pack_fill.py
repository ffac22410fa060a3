#!/usr/bin/env python3
"""The `pack_fill` and `doc_len` cells of the ms-swift long-text rows (data/runs/README.md).

Inputs are published statistics, not the rows' errors: ms-swift's own table of its datasets
(docs/source_en/Instruction/Supported-models-and-datasets.md, column "Statistic (token)",
written by scripts/utils/run_dataset_info.py: every sample, up to 100,000, encoded with the
Qwen2.5-7B-Instruct template, the length of its input_ids; the figures below since commit
6cd3f4659, 2024-12-07, unchanged at 3602360a5):

    AI-ModelScope/LongAlpaca-12k  11998 samples  9941.8 +- 3417.1, min=4695, max=25826
    ZhipuAI/LongWriter-6k          6000 samples  5009.0 +- 2932.8, min=117,  max=30354

The packer is ms-swift's (swift/llm/dataset/utils.py, PackingDataset, at the rows' commits
e3f270866 / 1e9e4a0e1 / 710553d85): samples longer than max_length are dropped
(truncation_strategy 'delete'), the rest are taken 128 at a time (packing_interval) and binned
by binpacking.to_constant_volume (best-fit decreasing: each sample, longest first, into the
fullest bin it fits), the last bin of a group carried into the next.  Only the mean, spread and
bounds of the lengths are published, so the lengths are drawn from three shapes matched to the
mean and standard deviation and bounded by the minimum and maximum (normal, gamma, lognormal);
the cells take the gamma's figures and the spread over the shapes is the cells' uncertainty.

Prints, per dataset and shape: the share of samples kept, pack_fill (mean tokens per packed
sequence over max_length) and doc_len (the token-weighted mean length sum(d^2) / sum(d), which
is what attention within documents costs: sum over documents of d^2 / 2 query-key pairs).
Standard library only; deterministic.
"""
import math
import random

DATASETS = [
    # name, mean, std, min, max, samples, max_length of the rows that pack it
    ("LongAlpaca-12k", 9941.8, 3417.1, 4695, 25826, 11998, 16384),
    ("LongWriter-6k", 5009.0, 2932.8, 117, 30354, 6000, 32768),
]
INTERVAL = 128  # PackingDataset(packing_interval=128)


def draw(shape, mean, sd, lo, hi, rng):
    while True:
        if shape == "normal":
            x = rng.gauss(mean, sd)
        elif shape == "gamma":
            k = (mean / sd) ** 2
            x = rng.gammavariate(k, mean / k)
        else:
            s2 = math.log(1 + (sd / mean) ** 2)
            x = rng.lognormvariate(math.log(mean) - s2 / 2, math.sqrt(s2))
        if lo <= x <= hi:
            return int(round(x))


def best_fit_decreasing(lengths, cap):
    sums, bins = [], []
    for w in sorted(lengths, reverse=True):
        best = -1
        for i, s in enumerate(sums):
            if s + w <= cap and (best < 0 or s > sums[best]):
                best = i
        if best < 0:
            sums.append(w)
            bins.append([w])
        else:
            sums[best] += w
            bins[best].append(w)
    return bins


def pack(lengths, cap):
    kept = [d for d in lengths if d <= cap]
    packs, carry = [], []
    for i in range(0, len(kept), INTERVAL):
        bins = best_fit_decreasing(carry + kept[i:i + INTERVAL], cap)
        if i + INTERVAL < len(kept):
            carry, bins = bins[-1], bins[:-1]
        else:
            carry = []
        packs += bins
    return kept, packs


def main():
    for name, mean, sd, lo, hi, n, cap in DATASETS:
        for shape in ("normal", "gamma", "lognormal"):
            rng = random.Random(42)
            lengths = [draw(shape, mean, sd, lo, hi, rng) for _ in range(n)]
            kept, packs = pack(lengths, cap)
            fill = sum(kept) / len(packs) / cap
            doc = sum(d * d for d in kept) / sum(kept)
            print(f"{name:15s} max_length {cap:6d} {shape:9s} kept {len(kept) / n:6.1%} "
                  f"pack_fill {fill:.3f} doc_len {doc:7.0f} samples/pack "
                  f"{len(kept) / len(packs):.2f}")


if __name__ == "__main__":
    main()
