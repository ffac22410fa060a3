/*
 * test_logs.c - training logs: every format's fixture (tests/fixtures/logs/, written for these
 * tests in each framework's real line format) parsed to the values on its lines, the steady
 * state worked out by hand in the comments, the errors, and the runs-file row read back by the
 * runs reader.
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
#include <unistd.h>

#define assert_near(a, b) assert_near_((a), (b), #a, __FILE__, __LINE__)
static void assert_near_(double a, double b, const char *what, const char *file, int line)
{
    if (!(fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b)))) {
        print_error("%s = %.15g, expected %.15g\n", what, a, b);
        _fail(file, line);
    }
}

/* A fixture's text (caller frees). */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = malloc(1 << 20);
    assert_non_null(buf);
    *len = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[*len] = '\0';
    return buf;
}

struct parsed {
    struct tp_log_info info;
    struct tp_log_step steps[64];
    struct tp_log_steady st;
};

static void parse_file(const char *path, struct parsed *p, const struct tp_log_steady_opts *o)
{
    size_t len;
    char *text = slurp(path, &len);
    struct tp_error err = {{0}, {0}};
    enum tp_status st = tp_log_parse(text, len, TP_LOG_UNKNOWN, p->steps, 64, &p->info, &err);
    free(text);
    if (st != TP_OK)
        print_error("%s: %s\n", path, err.msg);
    assert_int_equal(st, TP_OK);
    assert_true(p->info.n_steps <= 64);
    st = tp_log_steady_state(p->steps, p->info.n_steps, &p->info, o, &p->st, &err);
    if (st != TP_OK)
        print_error("%s: %s\n", path, err.msg);
    assert_int_equal(st, TP_OK);
}

static void test_names(void **state)
{
    (void)state;
    enum tp_log_format f;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_log_format_find("Megatron-LM", &f, &err), TP_OK);
    assert_int_equal(f, TP_LOG_MEGATRON);
    assert_int_equal(tp_log_format_find("axolotl", &f, &err), TP_OK);
    assert_int_equal(f, TP_LOG_HF);
    assert_int_equal(tp_log_format_find("llmc", &f, &err), TP_OK);
    assert_int_equal(f, TP_LOG_LLMC);
    assert_int_equal(tp_log_format_find("fairseq", &f, &err), TP_ENOTFOUND);
    assert_non_null(strstr(err.msg, "unknown log format \"fairseq\""));
    assert_string_equal(tp_log_format_name(TP_LOG_MEGATRON_DS), "megatron-deepspeed");
    assert_string_equal(tp_log_format_name(TP_LOG_LLMC), "llm.c");
    assert_string_equal(tp_log_formats_understood(),
                        "megatron, megatron-deepspeed, hf-trainer/axolotl/trl (stdout or "
                        "trainer_state.json), torchtitan, nanogpt, llm.c, json run log");
}

/* Megatron-LM: 10 iteration lines (log interval 10), the argument dump, the world-size line, a
   memory report and a checkpoint save that makes iteration 60 slow. */
static void test_megatron(void **state)
{
    (void)state;
    static struct parsed p;
    parse_file("tests/fixtures/logs/megatron-lm.log", &p, NULL);
    const struct tp_log_info *in = &p.info;
    assert_int_equal(in->format, TP_LOG_MEGATRON);
    assert_int_equal(in->n_steps, 10);
    assert_int_equal(in->gpus, 64);
    assert_int_equal(in->tp, 2);
    assert_int_equal(in->pp, 1);
    assert_int_equal(in->dp, 32);
    assert_int_equal(in->cp, 1);
    assert_int_equal(in->global_batch, 512);
    assert_int_equal(in->micro_batch, 1);
    assert_int_equal(in->seq, 8192);
    assert_near(in->tokens_per_step, 512.0 * 8192);
    assert_int_equal(in->total_steps, 1000);
    assert_near(in->mem_gib, 58880.0 / 1024); /* "max reserved: 58880.00" MiB */
    assert_int_equal(p.steps[0].step, 10);
    assert_near(p.steps[0].step_s, 10.8765);
    assert_near(p.steps[0].tflops_per_gpu, 310.2);
    assert_near(p.steps[0].loss, 10.23456);
    assert_int_equal(p.steps[5].step, 60);
    assert_near(p.steps[5].step_s, 13.0509);
    assert_true(isnan(p.steps[5].mfu));

    /* Warm-up: 10 steps -> ceil(10%) = 1 (iteration 10).  The other nine step times (ms)
       sorted: 8394.6 8398.4 8399.1 8401.7 8403.2 8405.0 8410.8 8412.3 13050.9 -> median
       8403.2; |deviations| sorted 0 1.5 1.8 4.1 4.8 7.6 8.6 9.1 4647.7 -> MAD 4.8, 1.4826 x 4.8
       = 7.12 < 1% of the median = 84.032 -> threshold 3 x 84.032 = 252.096 ms: 13050.9 is an
       outlier.  Eight steps remain (iterations 20-100 without 60). */
    const struct tp_log_steady *s = &p.st;
    assert_int_equal(s->n_warmup, 1);
    assert_int_equal(s->n_outliers, 1);
    assert_int_equal(s->n_used, 8);
    assert_int_equal(s->first_step, 20);
    assert_int_equal(s->last_step, 100);
    assert_string_equal(s->basis, "step time");
    assert_near(s->basis_median, 8.4032);
    assert_near(s->basis_threshold, 3 * 0.01 * 8.4032);
    /* median of the eight: (8401.7 + 8403.2) / 2 = 8402.45 ms; mean 67225.1 / 8 = 8403.1375 */
    assert_near(s->step_s_median, 8.40245);
    double mean = (8412.3 + 8401.7 + 8398.4 + 8405.0 + 8394.6 + 8403.2 + 8410.8 + 8399.1) / 8 / 1000;
    assert_near(s->step_s_mean, mean);
    assert_near(s->step_s_mean, 8.4031375);
    /* 512 x 8192 = 4,194,304 tokens per step / 8.4031375 s = 499,135.47 tokens/s; / 64 GPUs */
    assert_near(s->tokens_per_s, 4194304 / 8.4031375);
    assert_near(s->tokens_per_s_per_gpu, 4194304 / 8.4031375 / 64);
    assert_near(s->samples_per_s, 512 / 8.4031375);
    assert_near(s->tflops_per_gpu, (401.0 + 401.5 + 401.6 + 401.3 + 401.8 + 401.4 + 401.1 + 401.6) / 8);
    assert_true(isnan(s->mfu));
    assert_near(s->mem_gib, 57.5);
    /* Megatron's report_memory: the peak is "max reserved" 58880 MiB; "max allocated"
       51234.56 MiB is kept beside it */
    assert_non_null(strstr(s->mem_kind, "max reserved"));
    assert_near(s->mem_alloc_gib, 51234.56 / 1024);
    assert_near(s->loss_last, 5.76543);
    assert_false(s->step_time_derived);
    assert_non_null(strstr(s->rule, "1 skipped"));
    assert_non_null(strstr(s->rule, "1 dropped"));
}

/* Megatron-DeepSpeed: "samples per second" and "TFLOPs" on every line, one line per iteration. */
static void test_megatron_deepspeed(void **state)
{
    (void)state;
    static struct parsed p;
    parse_file("tests/fixtures/logs/megatron-deepspeed.log", &p, NULL);
    const struct tp_log_info *in = &p.info;
    assert_int_equal(in->format, TP_LOG_MEGATRON_DS);
    assert_int_equal(in->n_steps, 12);
    assert_int_equal(in->gpus, 128);
    assert_int_equal(in->tp, 4);
    assert_int_equal(in->pp, 2);
    assert_int_equal(in->dp, 16);
    assert_int_equal(in->seq, 2048); /* "actual seqlen:  2048" */
    assert_int_equal(in->global_batch, 2048);
    assert_near(p.steps[1].samples_per_s, 128.883);
    assert_near(p.steps[1].tflops_per_gpu, 149.20);
    assert_near(in->mem_gib, 66542.0 / 1024);

    /* 12 steps -> 2 warm-up.  Iterations 3-12 (ms): median of 15884.1 15887.9 15893.3 15895.0
       15899.6 | 15900.8 15902.2 15905.7 15911.3 16950.2 = (15899.6 + 15900.8) / 2 = 15900.2;
       MAD 6.2 (x 1.4826 = 9.19) < 159.002 -> threshold 477.006: iteration 10 (16950.2) drops.
       Mean of the nine others = 143079.9 / 9 ms. */
    const struct tp_log_steady *s = &p.st;
    assert_int_equal(s->n_warmup, 2);
    assert_int_equal(s->n_outliers, 1);
    assert_int_equal(s->n_used, 9);
    assert_near(s->basis_median, 15.9002);
    double mean = (15902.2 + 15887.9 + 15911.3 + 15895.0 + 15899.6 + 15884.1 + 15905.7 +
                   15893.3 + 15900.8) / 9 / 1000;
    assert_near(s->step_s_mean, mean);
    assert_near(s->step_s_median, 15.8996);
    assert_near(s->tokens_per_s, 2048.0 * 2048 / mean);
    assert_near(s->tokens_per_s_per_gpu, 2048.0 * 2048 / mean / 128);
    assert_near(s->samples_per_s, 2048 / mean);
    assert_near(s->tflops_per_gpu, (149.09 + 149.22 + 149.00 + 149.15 + 149.11 + 149.26 + 149.05 +
                                    149.17 + 149.10) / 9);
}

/* Axolotl on the HF Trainer: the banner, the tqdm bar ('\r' updates), one dict per step with
   tokens_per_second_per_gpu and memory, an evaluation (its bar and dict ignored), the summary. */
static void test_hf_axolotl(void **state)
{
    (void)state;
    static struct parsed p;
    parse_file("tests/fixtures/logs/hf-axolotl.log", &p, NULL);
    const struct tp_log_info *in = &p.info;
    assert_int_equal(in->format, TP_LOG_HF);
    assert_int_equal(in->n_steps, 12); /* one per bar position 1..12, dicts merged into them */
    assert_int_equal(in->global_batch, 128);
    assert_int_equal(in->micro_batch, 16);
    assert_int_equal(in->grad_accum, 1);
    assert_int_equal(in->gpus, 8); /* 128 / (16 x 1) */
    assert_int_equal(in->total_steps, 12);
    assert_near(in->train_runtime_s, 725.61);
    assert_near(in->train_samples_per_s, 2.117);
    assert_near(in->train_steps_per_s, 0.017);
    assert_near(in->train_loss, 1.0935);
    for (size_t i = 0; i < 12; i++)
        assert_int_equal(p.steps[i].step, i + 1);
    assert_near(p.steps[0].step_s, 75.31);
    assert_near(p.steps[0].tokens_per_s_per_gpu, 1741.2);
    assert_near(p.steps[0].mem_gib, 110.25); /* the largest memory/ figure: device_reserved */
    assert_near(p.steps[0].loss, 1.2345);
    assert_near(p.steps[6].step_s, 64.80);
    assert_near(p.steps[11].step_s, 57.18);

    /* 2 warm-up; steps 3-12 (s): 57.12 56.98 57.40 57.05 64.80 56.87 57.21 57.09 56.93 57.18,
       median (57.09 + 57.12) / 2 = 57.105, threshold 3 x 0.57105 = 1.71315: step 7 drops.
       Mean of the nine = 513.83 / 9 s, median 57.09. */
    const struct tp_log_steady *s = &p.st;
    assert_int_equal(s->n_warmup, 2);
    assert_int_equal(s->n_outliers, 1);
    assert_int_equal(s->n_used, 9);
    assert_near(s->basis_median, 57.105);
    double mean = (57.12 + 56.98 + 57.40 + 57.05 + 56.87 + 57.21 + 57.09 + 56.93 + 57.18) / 9;
    assert_near(s->step_s_mean, mean);
    assert_near(s->step_s_median, 57.09);
    /* no sequence length in the log: tokens/s are the logged per-GPU figures x 8 */
    double g = (2295.4 + 2301.1 + 2284.3 + 2298.2 + 2305.5 + 2291.8 + 2296.6 + 2303.0 + 2293.0) / 9;
    assert_near(s->tokens_per_s_per_gpu, g);
    assert_near(s->tokens_per_s, 8 * g);
    assert_near(s->samples_per_s, 128 / mean);
    assert_near(s->mem_gib, 112.5);
    assert_near(s->loss_last, 1.0351);
    /* which memory: Axolotl's device_reserved (the peak), its max_allocated beside it */
    assert_non_null(s->mem_kind);
    assert_non_null(strstr(s->mem_kind, "device reserved"));
    assert_near(s->mem_alloc_gib, 98.12);
    assert_false(s->tokens_from_step);
    assert_near(s->logged_tokens_per_s_per_gpu, g);
}

/* The tokens basis: the SFT copy of the Axolotl log logs about half the slots as its own
   rate (the trainable tokens); with --seq the answer is slots/s, and the log's rate is kept
   beside it for the CLI's note. */
static void test_hf_tokens_basis(void **state)
{
    (void)state;
    static struct parsed p;
    parse_file("tests/fixtures/logs/hf-axolotl-sft.log", &p, NULL);
    double logged = p.st.tokens_per_s_per_gpu;
    assert_false(p.st.tokens_from_step);
    struct tp_log_steady_opts o;
    tp_log_steady_opts_init(&o);
    o.seq = 8192;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_log_steady_state(p.steps, p.info.n_steps, &p.info, &o, &p.st, &err), TP_OK);
    assert_true(p.st.tokens_from_step);
    assert_near(p.st.logged_tokens_per_s_per_gpu, logged);
    /* 128 sequences x 8192 tokens over the mean step, per GPU of 8 */
    double mean = (57.12 + 56.98 + 57.40 + 57.05 + 56.87 + 57.21 + 57.09 + 56.93 + 57.18) / 9;
    assert_near(p.st.tokens_per_s_per_gpu, 128.0 * 8192 / mean / 8);
    assert_true(p.st.tokens_per_s_per_gpu / logged > 1.9);
}

/* TRL DPO without a progress bar: loss dicts only; the timing comes from the summary. */
static void test_hf_summary(void **state)
{
    (void)state;
    static struct parsed p;
    struct tp_log_steady_opts o;
    tp_log_steady_opts_init(&o);
    o.seq = 4096;
    parse_file("tests/fixtures/logs/trl-dpo-summary.log", &p, &o);
    assert_int_equal(p.info.format, TP_LOG_HF);
    assert_int_equal(p.info.n_steps, 4); /* the eval_ dict is not a step */
    assert_int_equal(p.info.gpus, 8);    /* 128 / (8 x 2) */
    assert_near(p.steps[2].loss, 0.6655);
    assert_true(isnan(p.steps[2].step_s));
    const struct tp_log_steady *s = &p.st;
    assert_true(s->from_summary);
    assert_near(s->step_s_mean, 1 / 0.129);
    assert_near(s->samples_per_s, 16.521);
    /* tokens per step 128 x 4096 = 524,288 over 1 / 0.129 s */
    assert_near(s->tokens_per_step, 524288);
    assert_near(s->tokens_per_s, 524288 * 0.129);
    assert_near(s->tokens_per_s_per_gpu, 524288 * 0.129 / 8);
}

/* Hugging Face trainer_state.json (the checkpoint's log_history): steps with their loss and
   memory, the evaluation skipped, throughput from the train_runtime summary. */
static void test_hf_trainer_state(void **state)
{
    (void)state;
    static struct parsed p;
    struct tp_log_steady_opts o;
    tp_log_steady_opts_init(&o);
    o.seq = 2048;
    o.gpus = 8;
    parse_file("tests/fixtures/logs/trainer_state.json", &p, &o);
    assert_int_equal(p.info.format, TP_LOG_HF);
    assert_int_equal(p.info.n_steps, 5); /* steps 1, 10, 20, 30, 40; not the eval dict */
    assert_int_equal(p.steps[1].step, 10);
    assert_near(p.steps[4].loss, 1.3611);
    assert_near(p.steps[4].mem_gib, 61.55);
    assert_int_equal(p.info.micro_batch, 16);
    assert_int_equal(p.info.total_steps, 40);
    assert_near(p.info.train_runtime_s, 1234.5);
    const struct tp_log_steady *s = &p.st;
    assert_true(s->from_summary);
    assert_near(s->step_s_mean, 1 / 0.032);
    assert_near(s->samples_per_s, 4.147);
    /* no global batch in the file: tokens/s from samples/s x seq */
    assert_near(s->tokens_per_s, 4.147 * 2048);
    assert_near(s->tokens_per_s_per_gpu, 4.147 * 2048 / 8);
}

/* torchtitan with its ANSI colours; tps is per GPU; no step time on the line. */
static void test_torchtitan(void **state)
{
    (void)state;
    static struct parsed p;
    parse_file("tests/fixtures/logs/torchtitan.log", &p, NULL);
    const struct tp_log_info *in = &p.info;
    assert_int_equal(in->format, TP_LOG_TORCHTITAN);
    assert_int_equal(in->n_steps, 11);
    assert_int_equal(in->gpus, 8); /* "device mesh with ['dp_shard'], [8]" */
    assert_int_equal(in->global_batch, 8);
    assert_int_equal(in->seq, 8192);
    assert_int_equal(in->total_steps, 1000);
    assert_int_equal(p.steps[0].step, 1);
    assert_near(p.steps[0].tokens_per_s_per_gpu, 412);
    assert_near(p.steps[1].tokens_per_s_per_gpu, 5655); /* "tps: 5,655" */
    assert_near(p.steps[1].tflops_per_gpu, 327.51);
    assert_near(p.steps[1].mfu, 0.3312);
    assert_near(p.steps[1].mem_gib, 69.03);
    assert_near(p.steps[1].loss, 10.9071);

    /* 11 steps -> 2 warm-up (steps 1, 10).  Outliers on tokens/s per GPU: steps 20-100 sorted
       4912 5748 5752 5756 5759 5761 5763 5766 5770 -> median 5759, threshold 3 x 57.59 =
       172.77: step 50 (4912) drops.  Mean of the eight = 46075 / 8 = 5759.375 per GPU. */
    const struct tp_log_steady *s = &p.st;
    assert_int_equal(s->n_warmup, 2);
    assert_int_equal(s->n_outliers, 1);
    assert_string_equal(s->basis, "tokens/s per GPU");
    assert_near(s->basis_median, 5759);
    assert_near(s->tokens_per_s_per_gpu, 5759.375);
    assert_near(s->tokens_per_s, 46075);
    /* step time derived: 8 x 8192 = 65,536 tokens per step / 46,075 tokens/s */
    assert_true(s->step_time_derived);
    assert_near(s->step_s_mean, 65536.0 / 46075);
    assert_true(isnan(s->step_s_median));
    assert_near(s->samples_per_s, 8 / (65536.0 / 46075));
    assert_near(s->tflops_per_gpu, (333.65 + 332.90 + 334.17 + 333.36 + 333.94 + 333.13 + 333.54 +
                                    333.77) / 8);
    assert_near(s->mfu, (33.74 + 33.66 + 33.79 + 33.71 + 33.77 + 33.68 + 33.72 + 33.75) / 800);
    assert_near(s->mem_gib, 69.05); /* the peak of the whole log (step 50) */
    /* torchtitan's "memory:" is max_reserved_gib (components/metrics.py) */
    assert_non_null(strstr(s->mem_kind, "max reserved"));
    assert_true(isnan(s->mem_alloc_gib));
}

/* nanoGPT: "iter N: loss X, time X ms, mfu X%", -100% before its MFU estimate starts. */
static void test_nanogpt(void **state)
{
    (void)state;
    static struct parsed p;
    struct tp_log_steady_opts o;
    tp_log_steady_opts_init(&o);
    o.gpus = 8;
    parse_file("tests/fixtures/logs/nanogpt.log", &p, &o);
    const struct tp_log_info *in = &p.info;
    assert_int_equal(in->format, TP_LOG_NANOGPT);
    assert_int_equal(in->n_steps, 11);
    assert_near(in->tokens_per_step, 491520); /* "tokens per iteration will be: 491,520" */
    assert_int_equal(in->seq, 1024);          /* "block_size = 1024" */
    assert_int_equal(in->global_batch, 480);
    assert_int_equal(in->gpus, 0);
    assert_int_equal(p.steps[0].step, 0);
    assert_near(p.steps[0].step_s, 41.85217);
    assert_true(isnan(p.steps[0].mfu));
    assert_near(p.steps[1].mfu, 0.3102);

    /* 2 warm-up; iterations 20-100 (ms) sorted 576.88 577.31 577.49 577.66 577.93 578.02
       578.12 578.41 612.95 -> median 577.93, threshold 3 x 5.7793 = 17.3379: iter 70 drops.
       Mean of the eight 4621.82 / 8 = 577.7275 ms; median (577.66 + 577.93) / 2. */
    const struct tp_log_steady *s = &p.st;
    assert_int_equal(s->n_warmup, 2);
    assert_int_equal(s->n_outliers, 1);
    assert_near(s->step_s_mean, 0.5777275);
    assert_near(s->step_s_median, 0.577795);
    assert_near(s->tokens_per_s, 491520 / 0.5777275);
    assert_near(s->tokens_per_s_per_gpu, 491520 / 0.5777275 / 8);
    assert_near(s->mfu, (32.94 + 34.61 + 35.93 + 36.99 + 37.83 + 38.86 + 39.38 + 39.79) / 800);
}

/* llm.c: the parameter table, the batch line, "step N/M | ... | X ms | X% bf16 MFU | X tok/s". */
static void test_llmc(void **state)
{
    (void)state;
    static struct parsed p;
    parse_file("tests/fixtures/logs/llmc.log", &p, NULL);
    const struct tp_log_info *in = &p.info;
    assert_int_equal(in->format, TP_LOG_LLMC);
    assert_int_equal(in->n_steps, 12);
    assert_int_equal(in->gpus, 8);
    assert_int_equal(in->micro_batch, 64);
    assert_int_equal(in->seq, 1024);
    assert_near(in->tokens_per_step, 524288);
    assert_int_equal(in->global_batch, 512);
    assert_int_equal(in->total_steps, 18865);
    assert_int_equal(p.steps[0].step, 1);
    assert_near(p.steps[0].step_s, 2.21164);
    assert_near(p.steps[0].loss, 11.010046);
    assert_near(p.steps[0].tokens_per_s, 237058); /* printed "237058 tok/s" */
    assert_near(p.steps[2].mfu, 0.553);

    /* 2 warm-up; steps 3-12 (ms): median (283.66 + 283.71) / 2 = 283.685, threshold 3 x
       2.83685 = 8.51055: step 8 (297.90) drops.  Mean of the nine = 2552.89 / 9 ms. */
    const struct tp_log_steady *s = &p.st;
    assert_int_equal(s->n_warmup, 2);
    assert_int_equal(s->n_outliers, 1);
    double mean = (283.51 + 283.77 + 283.93 + 283.40 + 283.66 + 283.58 + 283.84 + 283.49 + 283.71) / 9 / 1000;
    assert_near(s->step_s_mean, mean);
    assert_near(s->step_s_median, 0.28366);
    /* the printed tok/s is a moving average; tokens/s = 524,288 / mean step time */
    assert_near(s->tokens_per_s, 524288 / mean);
    assert_near(s->tokens_per_s_per_gpu, 524288 / mean / 8);
}

/* The users' JSON run logs (notes 002): training_progress with a config, training_iterations. */
static void test_json(void **state)
{
    (void)state;
    static struct parsed p;
    parse_file("tests/fixtures/logs/run_qwen3_progress.json", &p, NULL);
    const struct tp_log_info *in = &p.info;
    assert_int_equal(in->format, TP_LOG_JSON);
    assert_int_equal(in->n_steps, 10);
    assert_int_equal(in->gpus, 8);
    assert_int_equal(in->seq, 2048);
    assert_near(in->tokens_per_step, 1310720);
    assert_int_equal(in->global_batch, 640);
    assert_int_equal(in->total_steps, 1000);
    assert_int_equal(p.steps[1].step, 10);
    assert_near(p.steps[1].step_s, 8.7412);
    assert_near(p.steps[1].tokens_per_s, 149947.9);
    assert_near(p.steps[1].mfu, 0.4911);
    assert_near(p.steps[1].mem_gib, 41.87);
    /* 1 warm-up; iters 10-90 (ms) sorted 8736.9 8737.7 8738.2 8739.5 8740.3 8741.2 8742.6
       8744.1 9988.7 -> median 8740.3, threshold 3 x 87.403 = 262.209: iter 50 drops. */
    const struct tp_log_steady *s = &p.st;
    assert_int_equal(s->n_warmup, 1);
    assert_int_equal(s->n_outliers, 1);
    assert_int_equal(s->first_step, 10);
    assert_int_equal(s->last_step, 90);
    assert_near(s->step_s_mean, 69920.5 / 8 / 1000);
    assert_near(s->tokens_per_s, 1310720 / 8.7400625);
    assert_near(s->mfu, (0.4911 + 0.4914 + 0.4910 + 0.4912 + 0.4913 + 0.4911 + 0.4913 + 0.4912) / 8);
    assert_near(s->mem_gib, 41.90);

    /* training_iterations, no config: "mfu": -1.0 (not measured) is no figure */
    parse_file("tests/fixtures/logs/run_gpt2_iterations.json", &p, NULL);
    assert_int_equal(p.info.n_steps, 6);
    assert_true(isnan(p.steps[0].mfu));
    assert_int_equal(p.st.n_warmup, 1); /* 6 steps: ceil(0.6) = 1 */
    assert_int_equal(p.st.n_outliers, 0);
    assert_near(p.st.step_s_mean, (4893.1 + 4881.7 + 4886.2 + 4879.9 + 4884.4) / 5 / 1000);
    assert_near(p.st.step_s_median, 4.8844);
    assert_true(isnan(p.st.tokens_per_s));
    assert_near(p.st.mfu, (0.3521 + 0.3529 + 0.3526 + 0.3531 + 0.3527) / 5);
}

/* Python-repr values: np.float64(...), quoted numbers, nested values skipped; --skip-warmup. */
static void test_hf_values(void **state)
{
    (void)state;
    const char *text =
        "{'loss': np.float64(2.5), 'tokens_per_second_per_gpu': '1000.5', 'rewards/chosen': "
        "tensor(0.1, device='cuda:0'), 'lst': [1, 2], 'epoch': 0.1}\n"
        "{'loss': 2.25, 'tokens_per_second_per_gpu': 1500.0, 'epoch': 0.2}\n"
        "{'loss': 2.0, 'tokens_per_second_per_gpu': 1510.0, 'epoch': 0.3}\n"
        "{'loss': 1.875, 'tokens_per_second_per_gpu': 1490.0, 'epoch': 0.4}\n"
        "{'loss': 1.75, 'tokens_per_second_per_gpu': 1502.0, 'epoch': 0.5}\n"
        "TAIL NOT PASSED";
    struct tp_log_step steps[8];
    struct tp_log_info info;
    struct tp_error err = {{0}, {0}};
    size_t len = strlen(text) - strlen("TAIL NOT PASSED"); /* a slice, not NUL-terminated there */
    assert_int_equal(tp_log_parse(text, len, TP_LOG_UNKNOWN, steps, 8, &info, &err), TP_OK);
    assert_int_equal(info.format, TP_LOG_HF);
    assert_int_equal(info.n_steps, 5);
    assert_near(steps[0].loss, 2.5);
    assert_near(steps[0].tokens_per_s_per_gpu, 1000.5);
    assert_int_equal(steps[4].step, 5);
    struct tp_log_steady st;
    struct tp_log_steady_opts o;
    tp_log_steady_opts_init(&o);
    o.skip_warmup = 1;
    o.gpus = 4;
    assert_int_equal(tp_log_steady_state(steps, 5, &info, &o, &st, &err), TP_OK);
    /* steps 2-5: 1500 1510 1490 1502 -> median 1501, threshold 3 x 15.01: none dropped */
    assert_false(st.warmup_default);
    assert_int_equal(st.n_warmup, 1);
    assert_int_equal(st.n_outliers, 0);
    assert_near(st.tokens_per_s_per_gpu, (1500.0 + 1510 + 1490 + 1502) / 4);
    assert_near(st.tokens_per_s, 4 * (1500.0 + 1510 + 1490 + 1502) / 4);
    assert_near(st.loss_last, 1.75);
    o.skip_warmup = 5;
    assert_int_equal(tp_log_steady_state(steps, 5, &info, &o, &st, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "skipping 5 warm-up steps leaves none of the 5 logged"));

    /* fast steps: tqdm prints it/s (step time = 1 / rate); a shorter evaluation bar is not
       the training bar; the last refresh of a position wins */
    const char *bars =
        "  0%|          | 0/4 [00:00<?, ?it/s]\r 25%|##5       | 1/4 [00:01<00:03,  1.25it/s]"
        "\r 50%|#####     | 2/4 [00:01<00:01,  2.00it/s]\n"
        "{'loss': 3.5, 'grad_norm': 1.0, 'learning_rate': 0.0001, 'epoch': 0.5}\n"
        "\r  0%|          | 0/2 [00:00<?, ?it/s]\r 50%|#####     | 1/2 [00:00<00:00, 9.00it/s]\n"
        "\r 50%|#####     | 2/4 [00:02<00:01,  1.60it/s]"
        "\r 75%|#######5  | 3/4 [00:02<00:00,  2.50it/s]\r100%|##########| 4/4 [00:03<00:00,  "
        "2.50it/s]\n";
    assert_int_equal(tp_log_parse(bars, strlen(bars), TP_LOG_HF, steps, 8, &info, &err), TP_OK);
    assert_int_equal(info.n_steps, 4);
    assert_int_equal(steps[1].step, 2);
    assert_near(steps[0].step_s, 1 / 1.25);
    assert_near(steps[1].step_s, 1 / 1.60);
    assert_near(steps[1].loss, 3.5);
    assert_near(steps[3].step_s, 1 / 2.50);
    assert_int_equal(info.total_steps, 0);
}

/* torchrun without a rank filter: every rank prints the step line; the first rank is kept. */
static void test_titan_ranks(void **state)
{
    (void)state;
    const char *text =
        "[rank0]:[titan] 2025-01-10 12:31:00,000 - root - INFO - step: 10  loss:  9.1000  "
        "memory: 69.03GiB(87.26%)  tps: 5,700  tflops: 330.00  mfu: 33.37%\n"
        "[rank1]:[titan] 2025-01-10 12:31:00,001 - root - INFO - step: 10  loss:  9.1000  "
        "memory: 69.10GiB(87.35%)  tps: 5,698  tflops: 329.88  mfu: 33.35%\n"
        "[rank0]:[titan] 2025-01-10 12:31:09,000 - root - INFO - step: 20  loss:  8.9000  "
        "memory: 69.03GiB(87.26%)  tps: 5,760  tflops: 333.47  mfu: 33.72%\n"
        "[rank1]:[titan] 2025-01-10 12:31:09,001 - root - INFO - step: 20  loss:  8.9000  "
        "memory: 69.10GiB(87.35%)  tps: 5,761  tflops: 333.53  mfu: 33.72%\n";
    struct tp_log_step steps[4];
    struct tp_log_info info;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_log_parse(text, strlen(text), TP_LOG_UNKNOWN, steps, 4, &info, &err),
                     TP_OK);
    assert_int_equal(info.format, TP_LOG_TORCHTITAN);
    assert_int_equal(info.n_steps, 2);
    assert_near(steps[0].tokens_per_s_per_gpu, 5700);
    assert_near(steps[1].tokens_per_s_per_gpu, 5760);
    assert_near(steps[1].mem_gib, 69.03);
}

/* Counting without storing, and storing fewer than there are. */
static void test_count_and_cap(void **state)
{
    (void)state;
    size_t len;
    char *text = slurp("tests/fixtures/logs/llmc.log", &len);
    struct tp_log_info info;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_log_parse(text, len, TP_LOG_UNKNOWN, NULL, 0, &info, &err), TP_OK);
    assert_int_equal(info.n_steps, 12);
    struct tp_log_step few[3];
    assert_int_equal(tp_log_parse(text, len, TP_LOG_LLMC, few, 3, &info, &err), TP_OK);
    assert_int_equal(info.n_steps, 12);
    assert_int_equal(few[2].step, 3);
    assert_near(few[2].step_s, 0.28351);
    free(text);
}

static void expect_error(const char *text, enum tp_log_format hint, const char *msg)
{
    struct tp_log_step steps[4];
    struct tp_log_info info;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_log_parse(text, strlen(text), hint, steps, 4, &info, &err), TP_EINVAL);
    if (!strstr(err.msg, msg))
        print_error("got \"%s\", expected \"%s\"\n", err.msg, msg);
    assert_non_null(strstr(err.msg, msg));
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("", TP_LOG_UNKNOWN, "empty file");
    expect_error(" \n\r\n\t", TP_LOG_UNKNOWN, "empty file");
    expect_error("Collecting torch\nSuccessfully installed torch-2.5.1\n", TP_LOG_UNKNOWN,
                 "no known training-log format found (understood: megatron, megatron-deepspeed, "
                 "hf-trainer/axolotl/trl (stdout or trainer_state.json), torchtitan, nanogpt, "
                 "llm.c, json run log)");
    size_t len;
    char *oom = slurp("tests/fixtures/logs/megatron-oom.log", &len);
    expect_error(oom, TP_LOG_UNKNOWN, "a megatron log without step lines");
    expect_error(oom, TP_LOG_MEGATRON, "no megatron step lines found");
    free(oom);
    expect_error("iter 1: loss 2.0, time 10.0ms, mfu 1.0%\n", TP_LOG_JSON, "not a JSON document");
    expect_error("{\"runs\": []}", TP_LOG_JSON, "without a training_iterations or training_progress");
    expect_error("{\"runs\": []}", TP_LOG_UNKNOWN, "no known training-log format found");
    expect_error("{\"training_progress\": []}", TP_LOG_UNKNOWN, "has no entries");
    /* step lines without any timing, and no summary */
    struct tp_log_step steps[4];
    struct tp_log_info info;
    struct tp_log_steady st;
    struct tp_error err = {{0}, {0}};
    const char *loss_only = "{'loss': 1.5, 'epoch': 0.1}\n{'loss': 1.4, 'epoch': 0.2}\n";
    assert_int_equal(tp_log_parse(loss_only, strlen(loss_only), TP_LOG_UNKNOWN, steps, 4, &info,
                                  &err), TP_OK);
    assert_int_equal(tp_log_steady_state(steps, info.n_steps, &info, NULL, &st, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "the log has 2 step lines but no step time or throughput"));
}

/* The runs-file row reads back through the runs reader and maps to the same run. */
struct back {
    int rows;
    struct tp_run run;
    char why[512];
};

static bool on_row(void *ctx, const char *path, size_t line, const struct tp_run *run,
                   const struct tp_error *why)
{
    (void)path;
    (void)line;
    struct back *b = ctx;
    b->rows++;
    b->run = *run;
    if (why)
        snprintf(b->why, sizeof b->why, "%s", why->msg);
    return true;
}

static void roundtrip(const char *preset, const struct tp_layout *lay, enum tp_framework fw,
                      struct back *b, char *csv, size_t cap)
{
    static struct parsed p;
    parse_file("tests/fixtures/logs/megatron-lm.log", &p, NULL);
    static struct tp_model m;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_model_from_preset(preset, &m, &err), TP_OK);
    const struct tp_gpu *g;
    assert_int_equal(tp_gpu_find("h100-sxm", &g, &err), TP_OK);
    struct tp_cluster c = {*g, 64, 8};
    struct tp_job j;
    tp_job_init(&j);
    j.framework = fw;
    j.seq = 8192;
    struct tp_layout l = *lay;
    assert_int_equal(tp_layout_check(&m, &c, &j, &l, &err), TP_OK);
    struct tp_log_row row = {"logs:1:megatron-lm.log", "tests/fixtures/logs/megatron-lm.log",
                             "user note, with commas, and \"quotes\"", &m, &c, &j, &l, &p.info,
                             &p.st};
    size_t need = tp_log_runs_csv(&row, true, NULL, 0);
    assert_true(need < cap);
    assert_int_equal(tp_log_runs_csv(&row, true, csv, cap), need);
    assert_int_equal(strlen(csv), need);
    char path[] = "/tmp/tp_test_logs_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, csv, need), (ssize_t)need);
    close(fd);
    memset(b, 0, sizeof *b);
    assert_int_equal(tp_runs_read(path, on_row, b, &err), TP_OK);
    unlink(path);
    assert_int_equal(b->rows, 1);
    if (b->why[0])
        print_error("row not mapped: %s\n", b->why);
    assert_string_equal(b->why, "");
}

static void test_runs_row(void **state)
{
    (void)state;
    static char csv[16384];
    static struct back b;
    /* Llama 3.1 8B, Megatron, tp 2 (sp) x dp 32, distributed optimizer, 16 micro-batches */
    struct tp_layout l;
    tp_layout_init(&l);
    l.tp = 2;
    l.dp = 32;
    l.sp = true;
    l.zero = 1;
    l.gas = 16;
    roundtrip("llama-3.1-8b", &l, TP_FW_MEGATRON, &b, csv, sizeof csv);
    /* the note's commas and quotes are quoted (RFC 4180) */
    assert_non_null(strstr(csv, "; user note, with commas, and \"\"quotes\"\"\""));
    assert_string_equal(b.run.row_id, "logs:1:megatron-lm.log");
    assert_string_equal(b.run.source, "logs");
    assert_string_equal(b.run.framework_key, "megatron");
    assert_near(b.run.tokens_per_s_per_gpu, 4194304 / 8.4031375 / 64);
    assert_near(b.run.step_time_s, 8.4031375);
    assert_near(b.run.mem_gib, 57.5);
    assert_near(b.run.tflops_per_gpu, 401.4125);
    assert_string_equal(b.run.tflops_convention, "other");
    struct tp_params pc;
    tp_count_params(&b.run.model, &pc);
    assert_int_equal(pc.total, 8030261248ULL); /* the same model read back */
    assert_int_equal(b.run.cluster.n_gpus, 64);
    assert_string_equal(b.run.cluster.gpu.key, "h100-sxm");
    assert_int_equal(b.run.layout.tp, 2);
    assert_int_equal(b.run.layout.pp, 1);
    assert_int_equal(b.run.layout.dp, 32);
    assert_true(b.run.layout.sp);
    assert_int_equal(b.run.layout.zero, 1);
    assert_int_equal(b.run.layout.mbs, 1);
    assert_int_equal(b.run.layout.gas, 16);
    assert_near(b.run.global_batch, 512);
    assert_int_equal(b.run.job.seq, 8192);
    assert_int_equal(b.run.job.framework, TP_FW_MEGATRON);
    /* the notes say the job ran without TP overlap, so the Hopper default is not assumed */
    assert_non_null(strstr(csv, "; --no-tp-comm-overlap"));
    assert_false(b.run.job.tp_comm_overlap);
    assert_string_equal(b.run.assumptions, "");
    const char *how = NULL;
    assert_near(tp_run_measured_tokens_per_s(&b.run, &how), 4194304 / 8.4031375 / 64);
    assert_string_equal(how, "tokens/s");

    /* an MoE model with q/k norms: Qwen3-30B-A3B under FSDP (ZeRO-3) maps back exactly */
    tp_layout_init(&l);
    l.dp = 64;
    l.zero = 3;
    l.gas = 8;
    roundtrip("qwen3-30b-a3b", &l, TP_FW_FSDP, &b, csv, sizeof csv);
    assert_non_null(strstr(csv, ",qwen3_moe,"));
    assert_non_null(strstr(csv, ",fsdp-full,"));
    tp_count_params(&b.run.model, &pc);
    assert_int_equal(pc.total, 30532122624ULL);
    assert_int_equal(pc.active, 3353032704ULL);
    assert_int_equal(b.run.layout.zero, 3);
    assert_int_equal(b.run.job.framework, TP_FW_FSDP);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),          cmocka_unit_test(test_megatron),
        cmocka_unit_test(test_megatron_deepspeed), cmocka_unit_test(test_hf_axolotl),
        cmocka_unit_test(test_hf_tokens_basis),
        cmocka_unit_test(test_hf_summary),
        cmocka_unit_test(test_hf_trainer_state),     cmocka_unit_test(test_torchtitan),
        cmocka_unit_test(test_nanogpt),        cmocka_unit_test(test_llmc),
        cmocka_unit_test(test_json),           cmocka_unit_test(test_hf_values),
        cmocka_unit_test(test_titan_ranks),    cmocka_unit_test(test_count_and_cap),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_runs_row),
    };
    return cmocka_run_group_tests_name("logs", tests, NULL, NULL);
}
