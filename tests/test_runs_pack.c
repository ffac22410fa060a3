/*
 * test_runs_pack.c - the runs file's pack_fill column (src/readers/runs_pack.c): a packed row's
 * sequences hold pack_fill x seq_len tokens on average, and its samples (doc_len) attend only
 * to themselves (docs/runs-file.md).
 *
 * Sources:
 *   [SWIFT-LONG] modelscope/ms-swift examples/train/long_text/liger_kernel.sh at e3f270866
 *            (2025-05-08): Qwen2.5-7B full SFT on AI-ModelScope/LongAlpaca-12k, 4 A100,
 *            swift sft + ZeRO-3 + Liger, --packing true --max_length 16384, batch 1 x 2
 *            accumulation x 4 ranks; header '# GPU Memory: 4 * 42GB, Training Speed 10s/it'
 *            (the row swiftlong:1 of data/runs/public_hf_stacks_more.csv).
 *   [SWIFT-DATA] ms-swift docs/source_en/Instruction/Supported-models-and-datasets.md, column
 *            "Statistic (token)": LongAlpaca-12k 9941.8 +- 3417.1 tokens, min 4695, max
 *            25826; packed by ms-swift's best-fit-decreasing PackingDataset into sequences
 *            holding 0.86 of 16,384 tokens on average, the samples' token-weighted mean length
 *            about 10,500 (data/runs/pack_fill.py, data/runs/README.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>
#include <string.h>

static const char *cols[] = {
    "row_id",       "arch",        "n_layers",    "hidden",        "n_heads",
    "kv_heads",     "head_dim",    "ffn_hidden",  "vocab",         "tied",
    "seq_len",      "gpu_type",    "num_gpus",    "gpus_per_node", "tp",
    "pp",           "dp",          "zero_or_fsdp", "micro_batch",  "global_batch",
    "grad_accum",   "recompute",   "precision",   "framework",     "framework_key",
    "task",         "source_version_or_date",     "attention",     "fused_loss",
    "optimizer",    "step_time_s", "doc_len",     "pack_fill"};
enum { N = sizeof cols / sizeof cols[0], DOC = N - 2, FILL = N - 1 };

/* [SWIFT-LONG] as the row gives it, with [SWIFT-DATA]'s cells */
static void swiftlong_row(const char **cells)
{
    static const char *const row[N] = {
        "swiftlong:1", "llama", "28", "3584", "28", "4", "128", "18944", "152064", "0",
        "16384", "a100-80gb", "4", "8", "1", "1", "4", "3", "1", "8", "2", "full", "bf16",
        "hf: ms-swift swift sft + DeepSpeed ZeRO-3 + Liger", "deepspeed", "sft", "2025-05-08",
        "fa2", "1", "adamw", "10", "10500", "0.86"};
    memcpy(cells, row, sizeof row);
}

static double step_error(const char **cells, struct tp_run *run)
{
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_run_from_row(cols, cells, N, run, &err), TP_OK);
    struct tp_calib cal;
    tp_calib_init(&cal);
    static struct tp_run_eval e;
    assert_int_equal(tp_run_evaluate(run, &cal, &e), TP_OK);
    return e.err;
}

/* The packed sequence is the mean pack (0.86 x 16,384 = 14,090, on Megatron-SWIFT's multiple
   of 128: 14,080), the row says so, and the step's tokens are the packs' tokens: ms-swift's
   10 s/it comes within 10% (-2% with the built-in calibration); priced as full 16,384-token
   sequences with attention over each whole, 27% too slow (asserted: worse than -20%). */
static void test_pack_fill_prices_the_packed_tokens(void **state)
{
    (void)state;
    const char *cells[N];
    swiftlong_row(cells);
    static struct tp_run run;
    double packed = step_error(cells, &run);
    assert_int_equal(run.job.seq, 14080);
    assert_int_equal(run.job.doc_len, 10500);
    assert_int_equal(run.model.default_seq, 16384); /* the capacity stays the row's */
    assert_non_null(strstr(run.assumptions, "pack_fill 0.86 of seq_len 16384"));
    assert_true(fabs(packed) < 0.10);
    /* the step's tokens are 8 packs of the mean: 8 x 14,080 / 10 s / 4 GPUs */
    const char *how = NULL;
    assert_true(fabs(tp_run_measured_tokens_per_s(&run, &how) - 2816.0) < 1e-9);
    assert_string_equal(how, "step time");

    cells[DOC] = "";
    cells[FILL] = "";
    double full = step_error(cells, &run);
    assert_int_equal(run.job.seq, 16384);
    assert_null(strstr(run.assumptions, "pack_fill"));
    assert_true(full < -0.20);
    assert_true(full < packed - 0.15);

    /* each effect on its own: the documents alone and the fill alone both speed the step */
    cells[DOC] = "10500";
    double docs_only = step_error(cells, &run);
    cells[DOC] = "";
    cells[FILL] = "0.86";
    double fill_only = step_error(cells, &run);
    assert_true(docs_only > full + 0.05 && fill_only > full + 0.05);
    assert_true(packed > docs_only && packed > fill_only);
}

/* pack_fill 1 keeps the sequence; a fill rounds to Megatron-SWIFT's multiple of 128 and stays
   within [128, seq_len] */
static void test_pack_fill_rounding(void **state)
{
    (void)state;
    const char *cells[N];
    swiftlong_row(cells);
    cells[DOC] = "";
    struct tp_error err = {{0}, {0}};
    static struct tp_run run;
    cells[FILL] = "1";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_int_equal(run.job.seq, 16384);
    cells[FILL] = "0.0001";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_int_equal(run.job.seq, 128);
    cells[FILL] = "0.5";
    cells[10] = "1000"; /* 500 tokens: 512 */
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_int_equal(run.job.seq, 512);
    cells[FILL] = "0.99";
    cells[10] = "1000"; /* 990 rounds to 1024, over the capacity: 1000 */
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_int_equal(run.job.seq, 1000);
}

/* Out-of-range fills and documents longer than the mean pack are refused, naming the cells */
static void test_pack_fill_refused(void **state)
{
    (void)state;
    const char *cells[N];
    swiftlong_row(cells);
    static struct tp_run run;
    const char *bad[] = {"0", "1.5", "-0.5", "0.8x", "nan"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct tp_error err = {{0}, {0}};
        cells[FILL] = bad[i];
        assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_EINVAL);
        assert_non_null(strstr(err.msg, "pack_fill"));
    }
    struct tp_error err = {{0}, {0}};
    cells[FILL] = "0.5"; /* 8,192-token packs cannot hold 10,500-token documents */
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "doc_len 10500 exceeds the mean packed sequence"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack_fill_prices_the_packed_tokens),
        cmocka_unit_test(test_pack_fill_rounding),
        cmocka_unit_test(test_pack_fill_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
