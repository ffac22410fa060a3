/*
 * test_runs_strict.c - no silent wrong answers from a runs file (issue 41): the strict CSV
 * reader (physical lines, BOM, wide rows, duplicate columns), cells refused with their column
 * (numbers, enumerated values, booleans, contradictions), measured figures bounded by what
 * the row's GPU can do, every documented measurement compared, text escaped, and validate's
 * streaming summary equal to the in-memory one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* mini:1 of tests/fixtures/runs/mini.csv: Llama 3.1 8B on 8 H100s, FSDP, 5762 tokens/s/GPU */
static const char *const COLS[] = {
    "row_id", "arch", "n_layers", "hidden", "n_heads", "kv_heads", "ffn_hidden", "vocab",
    "seq_len", "tied", "gpu_type", "num_gpus", "tp", "pp", "dp", "cp", "zero_or_fsdp",
    "micro_batch", "global_batch", "grad_accum", "recompute", "precision", "framework_key",
    "task", "tokens_per_s_per_gpu"};
static const char *const CELLS[] = {
    "mini:1", "llama", "32", "4096", "32", "8", "14336", "128256", "8192", "0", "h100-sxm", "8",
    "1", "1", "8", "1", "fsdp-full", "2", "16", "", "selective", "bf16", "torchtitan", "pretrain",
    "5762"};
enum { N = sizeof COLS / sizeof COLS[0] };

static struct tp_run run;
static struct tp_error err;

/* mini:1 with up to two cells set (a column not in COLS is added); the mapper's status. */
static enum tp_status map2(const char *c1, const char *v1, const char *c2, const char *v2)
{
    const char *cols[N + 2], *cells[N + 2];
    size_t n = N;
    memcpy(cols, COLS, sizeof COLS);
    memcpy(cells, CELLS, sizeof CELLS);
    const char *set[2][2] = {{c1, v1}, {c2, v2}};
    for (int k = 0; k < 2; k++) {
        if (!set[k][0])
            continue;
        size_t i = 0;
        while (i < n && strcmp(cols[i], set[k][0]) != 0)
            i++;
        if (i == n)
            cols[n++] = set[k][0];
        cells[i] = set[k][1];
    }
    memset(&err, 0, sizeof err);
    return tp_run_from_row(cols, cells, n, &run, &err);
}

static enum tp_status map1(const char *col, const char *value)
{
    return map2(col, value, NULL, NULL);
}

static void refused(const char *col, const char *value, const char *text)
{
    assert_int_not_equal(map1(col, value), TP_OK);
    if (!strstr(err.msg, text))
        fail_msg("%s=%s: \"%s\" lacks \"%s\"", col, value, err.msg, text);
}

static void test_numbers(void **state)
{
    (void)state;
    assert_int_equal(map1("tokens_per_s_per_gpu", "5762"), TP_OK);
    assert_true(run.tokens_per_s_per_gpu == 5762);
    assert_int_equal(map1("tokens_per_s_per_gpu", "5.762e3"), TP_OK);
    /* strtod would take these; a runs file's numbers are plain decimals */
    refused("tokens_per_s_per_gpu", "0x1p12", "tokens_per_s_per_gpu \"0x1p12\" is not a plain");
    refused("tokens_per_s_per_gpu", "inf", "is not a plain");
    refused("tokens_per_s_per_gpu", "nan", "is not a plain");
    refused("tokens_per_s_per_gpu", " 5762", "is not a plain");
    refused("n_layers", "0x20", "n_layers \"0x20\" is not a whole number");
    refused("num_gpus", "8.0e", "num_gpus \"8.0e\" is not a whole number");
}

static void test_enums(void **state)
{
    (void)state;
    /* the whole value, never a substring: "notfp8" read as FP8 before */
    refused("precision", "notfp8", "precision \"notfp8\" is not a known value (bf16, fp16");
    refused("precision", "BF16", "precision \"BF16\" is not a known value");
    refused("recompute", "some", "recompute \"some\" is not a known value (none, selective, full)");
    refused("task", "finetune", "task \"finetune\" is not a known value (pretrain, sft");
    refused("zero_or_fsdp", "4", "zero_or_fsdp \"4\" is not a known value");
    refused("framework_key", "megatron-lm", "framework_key \"megatron-lm\" is not a known value");
    refused("tflops_convention", "mine", "tflops_convention \"mine\" is not a known value");
    refused("fp8_recipe", "perfect", "fp8_recipe \"perfect\" is not a known value");
    refused("oom", "2", "oom \"2\" is not a boolean (1, 0, true or false)");
    refused("oom", "yes", "oom \"yes\" is not a boolean");
    refused("tied", "2", "tied \"2\" is not a boolean");
    refused("sp", "on", "sp \"on\" is not a boolean");
    refused("fused_loss", "yes", "fused_loss \"yes\" is not a boolean");
    refused("moe_a2a_overlap", "2", "moe_a2a_overlap \"2\" is not a boolean");
    assert_int_equal(map1("precision", "fp8"), TP_OK);
    assert_int_equal(run.job.precision, TP_PREC_FP8);
    assert_int_equal(map1("tied", "true"), TP_OK);
    assert_true(run.model.tied);
    assert_int_equal(map1("oom", "1"), TP_OK);
    assert_true(run.oom);
}

static void test_contradictions(void **state)
{
    (void)state;
    /* global_batch 16 = micro_batch 2 x dp 8: grad_accum 1 derived */
    assert_int_equal(map1("grad_accum", ""), TP_OK);
    assert_int_equal(run.layout.gas, 1);
    assert_int_equal(map1("grad_accum", "2"), TP_EINVAL);
    assert_non_null(strstr(err.msg, "global_batch 16 differs from micro_batch x grad_accum x dp "
                                    "= 2 x 2 x 8 = 32"));
    assert_int_equal(map1("global_batch", "20"), TP_EINVAL);
    assert_non_null(strstr(err.msg, "global_batch 20 is not a multiple of micro_batch x dp = "
                                    "2 x 8"));
    /* the layout's product against the GPUs */
    assert_int_equal(map1("tp", "2"), TP_EINVAL);
    assert_non_null(strstr(err.msg, "tp*pp*cp*dp = 2*1*1*8 = 16 but gpus=8"));
    /* vpp 64 x pp 2 on 32 blocks: the CLI refuses it, so does the reader */
    const char *cols[N + 2], *cells[N + 2];
    memcpy(cols, COLS, sizeof COLS);
    memcpy(cells, CELLS, sizeof CELLS);
    cols[N] = "vpp";
    cells[N] = "64";
    cells[13] = "2"; /* pp */
    cells[14] = "4"; /* dp */
    cells[18] = "8"; /* global_batch */
    assert_int_equal(tp_run_from_row(cols, cells, N + 1, &run, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "pp x vpp = 2 x 64 = 128 virtual stages exceed n_layers = 32"));
    /* a job on part of a node is said */
    assert_int_equal(map2("gpus_per_node", "16", NULL, NULL), TP_OK);
    assert_non_null(strstr(run.assumptions, "the job's 8 GPUs within one node of 16"));
}

static void test_plausible(void **state)
{
    (void)state;
    /* H100 SXM: 989 TFLOP/s dense BF16 (the catalog, NVIDIA's datasheet) */
    refused("mfu", "45", "mfu 45 is not a fraction of the peak in (0, 1] (a percent? write 0.45)");
    refused("mfu", "1.5", "mfu 1.5 is not a fraction of the peak in (0, 1]");
    refused("hfu", "52", "hfu 52 is not a fraction");
    refused("tflops_per_gpu", "5000", "tflops_per_gpu 5000 is not in (0, 989]");
    refused("tokens_per_s_per_gpu", "1000000000", "tokens_per_s_per_gpu 1e+09 means 1e+09 "
                                                  "tokens/s per GPU, beyond what a h100-sxm");
    refused("tokens_per_s_per_gpu", "1e308", "beyond what a h100-sxm");
    refused("tokens_per_s_per_gpu", "1e-300", "under 10^-6 of what a h100-sxm");
    refused("mem_per_gpu_gib", "1000", "mem_per_gpu_gib 1000 is not in (0, 160]");
    refused("step_time_s", "1e-9", "step_time_s 1e-09 is not in [1e-06, 1e+07] s");
    /* tokens/s against TFLOP/s under the row's convention: 5762 tokens/s of Llama 3.1 8B at
       8192 tokens are 334 TFLOP/s as torchtitan counts (6 N_noemb + 12 L H Q T) */
    assert_int_equal(map2("tflops_per_gpu", "300", "tflops_convention", "torchtitan"), TP_OK);
    assert_int_equal(map2("tflops_per_gpu", "900", "tflops_convention", "torchtitan"), TP_EINVAL);
    assert_non_null(strstr(err.msg, "tflops_per_gpu 900 disagrees with tokens_per_s_per_gpu "
                                    "5762: under the torchtitan convention they mean 900 and"));
    assert_int_equal(map2("tflops_per_gpu", "100", "tflops_convention", "torchtitan"), TP_EINVAL);
    assert_int_equal(map2("mfu", "0.9", "tflops_convention", "torchtitan"), TP_EINVAL);
    assert_int_equal(map1("mfu", "0.45"), TP_OK);
    assert_int_equal(map1("tflops_per_gpu", "400"), TP_OK);
    /* 8B on an H100: 989e12 / (2 x 8.03e9) = 61,600 tokens/s is the most a GPU does */
    assert_int_equal(map1("tokens_per_s_per_gpu", "60000"), TP_OK);
    assert_int_not_equal(map1("tokens_per_s_per_gpu", "62000"), TP_OK);
}

/* samples/s and a whole run's tokens over its hours are compared, not "nothing measured" */
static void test_measurement_kinds(void **state)
{
    (void)state;
    const char *how;
    /* 0.7 samples/s x 8192 tokens / 8 GPUs = 716.8 tokens/s per GPU */
    assert_int_equal(map2("tokens_per_s_per_gpu", "", "samples_per_s", "0.7"), TP_OK);
    assert_true(tp_run_measured_something(&run));
    assert_true(fabs(tp_run_measured_tokens_per_s(&run, &how) - 716.8) < 1e-9);
    assert_string_equal(how, "samples/s");
    /* 1e9 tokens in 10 h on 8 GPUs: 3472.2 tokens/s per GPU */
    const char *cols[N + 2], *cells[N + 2];
    memcpy(cols, COLS, sizeof COLS);
    memcpy(cells, CELLS, sizeof CELLS);
    cells[N - 1] = "";
    cols[N] = "wall_clock_h";
    cells[N] = "10";
    cols[N + 1] = "total_tokens";
    cells[N + 1] = "1000000000";
    assert_int_equal(tp_run_from_row(cols, cells, N + 2, &run, &err), TP_OK);
    assert_true(tp_run_measured_something(&run));
    assert_true(fabs(tp_run_measured_tokens_per_s(&run, &how) - 1e9 / 36000 / 8) < 1e-9);
    assert_string_equal(how, "wall-clock");
    /* hours without tokens measure no rate */
    assert_int_equal(tp_run_from_row(cols, cells, N + 1, &run, &err), TP_OK);
    assert_false(tp_run_measured_something(&run));
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

struct seen {
    size_t rows, mapped;
    size_t line[8];
    char why[8][512];
    char id[8][96];
};

static bool on_row(void *ctx, const char *path, size_t line, const struct tp_run *r,
                   const struct tp_error *why)
{
    (void)path;
    struct seen *s = ctx;
    if (s->rows < 8) {
        s->line[s->rows] = line;
        snprintf(s->why[s->rows], sizeof s->why[0], "%s", why ? why->msg : "");
        snprintf(s->id[s->rows], sizeof s->id[0], "%s", r->row_id);
    }
    s->rows++;
    s->mapped += why == NULL;
    return true;
}

#define HEADER "row_id,arch,n_layers,hidden,n_heads,kv_heads,ffn_hidden,vocab,seq_len,gpu_type," \
               "num_gpus,tp,pp,dp,micro_batch,global_batch,notes,tokens_per_s_per_gpu\n"
#define ROW(id, notes) id ",llama,32,4096,32,8,14336,128256,8192,h100-sxm,8,1,1,8,1,8," notes ",5762\n"

static void test_csv_strict(void **state)
{
    (void)state;
    const char *path = "/tmp/trainplan-test-runs-strict.csv";
    struct seen s;
    /* a multi-line quoted note, then a quote never closed: the physical line is named, and
       the rows before it were read */
    write_file(path, HEADER ROW("a:1", "\"two\nlines\"") ROW("a:2", "ok") ROW("a:3", "\"open")
                         ROW("a:4", "\"x\""));
    memset(&s, 0, sizeof s);
    assert_int_equal(tp_runs_read(path, on_row, &s, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "the quoted cell opened on line 5 is never closed"));
    assert_int_equal(s.mapped, 2);
    assert_int_equal(s.line[1], 4); /* a:2 is record 3 but line 4 */
    write_file(path, HEADER ROW("a:1", "ok") ROW("a:2", "\"open to the end"));
    assert_int_equal(tp_runs_read(path, on_row, &s, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "line 3: malformed CSV: the quoted cell opened on this line "
                                    "is never closed"));
    write_file(path, HEADER ROW("a:1", "a \"quote\" inside"));
    assert_int_equal(tp_runs_read(path, on_row, &s, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "line 2: malformed CSV: a quote inside an unquoted cell"));
    /* Excel's "CSV UTF-8": the byte-order mark does not blank the first column */
    write_file(path, "\xef\xbb\xbf" HEADER ROW("bom:1", ""));
    memset(&s, 0, sizeof s);
    assert_int_equal(tp_runs_read(path, on_row, &s, &err), TP_OK);
    assert_int_equal(s.mapped, 1);
    assert_string_equal(s.id[0], "bom:1");
    /* a column named twice */
    write_file(path, "row_id,arch,gpu_type,num_gpus,arch\n");
    assert_int_equal(tp_runs_read(path, on_row, &s, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "line 1: the header names column \"arch\" twice (columns 2 "
                                    "and 5)"));
    /* one row of 300 cells, one with an extra cell, one with ESC in its id: each reported
       with its line, the rest read */
    char *text = malloc(8192);
    assert_non_null(text);
    strcpy(text, HEADER ROW("w:1", ""));
    strcat(text, "w:2");
    for (int i = 0; i < 299; i++)
        strcat(text, ",1");
    strcat(text, "\n" ROW("w:3", "x,extra") ROW("w:4\x1b[2J", "") ROW("w:5", ""));
    write_file(path, text);
    free(text);
    memset(&s, 0, sizeof s);
    assert_int_equal(tp_runs_read(path, on_row, &s, &err), TP_OK);
    assert_int_equal(s.rows, 5);
    assert_int_equal(s.mapped, 2);
    assert_non_null(strstr(s.why[1], "the row has 300 cells (the reader keeps at most 256)"));
    assert_int_equal(s.line[1], 3);
    assert_non_null(strstr(s.why[2], "the row has 19 cells but the header names 18 columns"));
    assert_non_null(strstr(s.why[3], "column 1 (row_id) holds a control character \\x1b"));
    assert_string_equal(s.id[3], "w:4\\x1b[2J");
    assert_int_equal(s.line[4], 6);
    /* a cell that is not UTF-8 */
    write_file(path, HEADER ROW("u:1", "caf\xe9"));
    memset(&s, 0, sizeof s);
    assert_int_equal(tp_runs_read(path, on_row, &s, &err), TP_OK);
    assert_non_null(strstr(s.why[0], "column 17 (notes) is not valid UTF-8"));
    remove(path);
}

static void test_escape(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(tp_text_escape("a\x1b]0;pwned\x07z", out, sizeof out), 18);
    assert_string_equal(out, "a\\x1b]0;pwned\\x07z");
    tp_text_escape("caf\xc3\xa9 \xe9 \xc2\x9b", out, sizeof out); /* é kept, stray byte, CSI */
    assert_string_equal(out, "caf\xc3\xa9 \\xe9 \\xc2\\x9b");
    /* truncation never cuts a UTF-8 sequence or an escape */
    tp_text_escape("ab\xc3\xa9", out, 4);
    assert_string_equal(out, "ab");
    tp_text_escape("ab\x1b", out, 5);
    assert_string_equal(out, "ab");
}

/* validate's streaming summary is the in-memory one while the rows fit the reservoir */
static void test_stream_equals_memory(void **state)
{
    (void)state;
    const char *files[] = {"data/runs/llm_foundry_mpt_benchmarks.csv",
                           "data/runs/public_oom_runs.csv", "data/runs/torchtitan_benchmarks.csv"};
    struct tp_runs runs;
    assert_int_equal(tp_runs_load(files, 3, &runs, &err), TP_OK);
    struct tp_calib cal;
    tp_calib_init(&cal);
    struct tp_validation v;
    assert_int_equal(tp_validate_runs(&runs, &cal, &v, &err), TP_OK);
    struct tp_validate_stream *s = tp_validate_stream_new();
    assert_non_null(s);
    for (size_t i = 0; i < runs.n; i++)
        assert_int_equal(tp_validate_stream_add(s, &runs.runs[i], &v.ev[i], &err), TP_OK);
    struct tp_validation_summary a, b;
    tp_validation_summarize(&v, &a);
    tp_validate_stream_summarize(s, &b);
    assert_memory_equal(&a, &b, sizeof a);
    size_t k = 0, n_med = 0;
    double med[8], share = 0;
    for (size_t i = 0; i < runs.n; i++) {
        const char *key_a, *key_b;
        struct tp_err_stats st_a, st_b;
        if (!tp_validation_group(&v, TP_GROUP_SOURCE, i, &key_a, &st_a))
            continue;
        tp_validate_stream_group(s, TP_GROUP_SOURCE, k++, &key_b, &st_b);
        assert_string_equal(key_a, key_b);
        assert_memory_equal(&st_a, &st_b, sizeof st_a);
        size_t measured = 0, inside = 0; /* this source's rows inside their range */
        for (size_t j = 0; j < runs.n; j++)
            if (isfinite(v.ev[j].err) && strcmp(runs.runs[j].source, runs.runs[i].source) == 0) {
                measured++;
                inside += v.ev[j].in_range;
            }
        if (measured && n_med < 8) {
            med[n_med++] = st_a.median_abs;
            share += (double)inside / (double)measured;
        }
    }
    assert_int_equal(k, tp_validate_stream_groups(s, TP_GROUP_SOURCE));
    /* every source weighing one: the median of the two throughput sources' medians (the OOM
       file measures none) and the mean of their shares inside the range */
    assert_int_equal(n_med, 2);
    assert_int_equal(a.sources, 2);
    assert_true(fabs(a.source_median - 0.5 * (med[0] + med[1])) < 1e-12);
    assert_true(fabs(a.source_in_range - share / 2) < 1e-12);
    /* past the reservoir: the counts stay exact and the quantiles are a fixed-seed sample */
    struct tp_validate_stream *big = tp_validate_stream_new(), *again = tp_validate_stream_new();
    size_t finite = 0;
    for (size_t i = 0; i < 3 * TP_RESERVOIR; i++) {
        finite += isfinite(v.ev[i % runs.n].err);
        assert_int_equal(tp_validate_stream_add(big, &runs.runs[i % runs.n], &v.ev[i % runs.n],
                                                &err), TP_OK);
        assert_int_equal(tp_validate_stream_add(again, &runs.runs[i % runs.n],
                                                &v.ev[i % runs.n], &err), TP_OK);
    }
    tp_validate_stream_summarize(big, &a);
    tp_validate_stream_summarize(again, &b);
    assert_memory_equal(&a, &b, sizeof a);
    assert_int_equal(a.throughput.n, finite); /* every measured row counted */
    assert_int_equal(a.measured, finite);
    assert_true(a.throughput.median_abs > 0 && a.throughput.median_abs < 1);
    tp_validate_stream_free(big);
    tp_validate_stream_free(again);
    tp_validate_stream_free(s);
    tp_validation_free(&v);
    tp_runs_free(&runs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers),       cmocka_unit_test(test_enums),
        cmocka_unit_test(test_contradictions), cmocka_unit_test(test_plausible),
        cmocka_unit_test(test_measurement_kinds), cmocka_unit_test(test_csv_strict),
        cmocka_unit_test(test_escape),        cmocka_unit_test(test_stream_equals_memory)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
