/*
 * test_calib.c - the calibration loop: validation statistics, the calibration domain, the
 * built-in defaults, and the fit.
 *
 * The fit is checked by a synthetic round trip: runs are generated from known efficiency
 * parameters (their measured throughput is what the time model predicts with them), the fit
 * starts from the priors, and it must recover the parameters the rows identify.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void test_err_stats(void **state)
{
    (void)state;
    /* |err| sorted 0.1 0.2 0.3: median 0.2, p90 at position 1.8 = 0.2*0.2 + 0.3*0.8 = 0.28;
       signed sorted -0.2 0.1 0.3: bias 0.1; the NaN is skipped */
    const double err[] = {0.1, -0.2, NAN, 0.3};
    double scratch[4];
    struct tp_err_stats st;
    tp_err_stats(err, 4, scratch, &st);
    assert_int_equal(st.n, 3);
    assert_float_equal(st.median_abs, 0.2, 1e-12);
    assert_float_equal(st.p90_abs, 0.28, 1e-12);
    assert_float_equal(st.bias, 0.1, 1e-12);
    tp_err_stats(err, 0, scratch, &st);
    assert_int_equal(st.n, 0);
    assert_true(isnan(st.median_abs));
}

/* The built-in calibration is exactly the priors plus data/calibration.json. */
static void test_builtin_is_the_data_file(void **state)
{
    (void)state;
    static struct tp_calib init, file;
    struct tp_error err;
    tp_calib_init(&init);
    tp_calib_prior(&file);
    assert_int_equal(tp_calib_from_file("data/calibration.json", &file, &err), TP_OK);
    assert_float_equal(init.gemm_scale, file.gemm_scale, 0);
    assert_float_equal(init.attn_eff, file.attn_eff, 0);
    assert_float_equal(init.mem_eff, file.mem_eff, 0);
    assert_float_equal(init.step_overhead_s, file.step_overhead_s, 0);
    assert_int_equal(init.n_gpus, file.n_gpus);
    assert_int_equal(init.domain.rows, file.domain.rows);
    assert_memory_equal(&init, &file, sizeof init);
    /* and it was fitted: the domain covers the calibration set's GPUs */
    assert_true(init.domain.rows > 300);
    char why[192];
    static struct tp_model m;
    struct tp_cluster c;
    struct tp_job j;
    assert_int_equal(tp_model_from_preset("llama-3.1-8b", &m, &err), TP_OK);
    tp_job_init(&j);
    assert_int_equal(tp_cluster_init(&c, "h100-sxm", 64, &err), TP_OK);
    assert_int_equal(tp_calib_domain_check(&init, &m, &c, &j, NAN, why, sizeof why), 0);
    assert_string_equal(why, "");
    /* the highest MFU measured on each GPU is a published run's, read in this library's FLOP
       count (causal attention counted half, so a little under the source's own figure): on
       H100s in 16 bits Megatron-LM's weak-scaling table, the 16B GPT on 192 H100s (49% MFU in
       Megatron-Core's count, r0.8.0); on A100s MosaicML's MPT-3B at 512 tokens on 8 A100s
       (63.71% in llm-foundry's count) */
    const struct tp_calib_domain *d = &init.domain;
    uint32_t h = 0, a = 0;
    while (h < d->n_gpus && strcmp(d->gpu[h].key, "h100-sxm") != 0)
        h++;
    while (a < d->n_gpus && strcmp(d->gpu[a].key, "a100-80gb") != 0)
        a++;
    assert_true(h < d->n_gpus && a < d->n_gpus);
    assert_true(d->gpu[h].max_mfu[0] < 0.49 && d->gpu[h].max_mfu[0] > 0.49 * 0.95);
    assert_string_equal(d->gpu[h].max_mfu_row[0], "megatron_lm_2024_h100_scaling:3");
    assert_true(d->gpu[a].max_mfu[0] < 0.6371 && d->gpu[a].max_mfu[0] > 0.6371 * 0.97);
    assert_string_equal(d->gpu[a].max_mfu_row[0], "llm_foundry_mpt_benchmarks:105");
}

static void test_domain(void **state)
{
    (void)state;
    static struct tp_calib cal;
    static struct tp_model m;
    struct tp_cluster c;
    struct tp_job j;
    struct tp_error err;
    tp_calib_prior(&cal);
    const char *doc = "{\"fit\": {\"rows\": 2, \"sources\": 1, \"min_params\": 3e9,"
                      " \"max_params\": 1.5e10, \"max_seq\": 4096,"
                      " \"gpus\": {\"mi300x\": {\"rows\": 2, \"max_gpus\": 8}}}}";
    assert_int_equal(tp_calib_from_json(doc, strlen(doc), &cal, &err), TP_OK);
    assert_int_equal(cal.domain.n_gpus, 1);
    assert_int_equal(cal.domain.gpu[0].max_gpus, 8);
    assert_int_equal(tp_model_from_preset("llama-3.1-8b", &m, &err), TP_OK);
    tp_job_init(&j);
    j.seq = 4096;
    char why[192];
    /* inside: 8 MI300X, 8B parameters, 4k */
    assert_int_equal(tp_cluster_init(&c, "mi300x", 8, &err), TP_OK);
    assert_int_equal(tp_calib_domain_check(&cal, &m, &c, &j, NAN, why, sizeof why), 0);
    /* 64 GPUs is 8x the largest run; 32k is 8x the longest sequence */
    assert_int_equal(tp_cluster_init(&c, "mi300x", 64, &err), TP_OK);
    j.seq = 32768;
    assert_int_equal(tp_calib_domain_check(&cal, &m, &c, &j, NAN, why, sizeof why),
                     TP_DOMAIN_SCALE | TP_DOMAIN_SEQ);
    assert_non_null(strstr(why, "64 GPUs is over 4x the largest mi300x run calibrated (8)"));
    /* a GPU it never saw */
    j.seq = 4096;
    assert_int_equal(tp_cluster_init(&c, "h100-sxm", 8, &err), TP_OK);
    assert_int_equal(tp_calib_domain_check(&cal, &m, &c, &j, NAN, why, sizeof why), TP_DOMAIN_GPU);
    assert_non_null(strstr(why, "h100-sxm was never measured"));
    /* a GPU with no measured GEMM efficiency says so (RTX A6000); GB300 takes its die's,
       B300's sustained 0.632; MI250X has ml-engineering's 147.0 of 191.5 TF on one GCD */
    assert_int_equal(tp_cluster_init(&c, "a6000", 8, &err), TP_OK);
    assert_int_equal(tp_calib_domain_check(&cal, &m, &c, &j, NAN, why, sizeof why),
                     TP_DOMAIN_GPU | TP_DOMAIN_MAMF);
    assert_non_null(strstr(why, "a6000 has no measured GEMM efficiency: MAMF 0.80 assumed"));
    assert_int_equal(tp_cluster_init(&c, "gb300", 8, &err), TP_OK);
    assert_int_equal(tp_calib_domain_check(&cal, &m, &c, &j, NAN, why, sizeof why), TP_DOMAIN_GPU);
    assert_int_equal(tp_cluster_init(&c, "mi250x", 8, &err), TP_OK);
    assert_int_equal(tp_calib_domain_check(&cal, &m, &c, &j, NAN, why, sizeof why), TP_DOMAIN_GPU);
    assert_true(fabs(c.gpu.mamf_bf16 - 147.0 / 191.5) < 1e-3);
    /* a prediction past the highest MFU measured on its GPU, by precision class */
    cal.domain.gpu[0].max_mfu[0] = 0.40;
    strcpy(cal.domain.gpu[0].max_mfu_row[0], "users000:8");
    assert_int_equal(tp_cluster_init(&c, "mi300x", 8, &err), TP_OK);
    strcpy(why, "");
    assert_int_equal(tp_calib_mfu_check(&cal, &c, &j, 0.402, why, sizeof why), 0); /* rounds */
    assert_int_equal(tp_calib_mfu_check(&cal, &c, &j, 0.45, why, sizeof why), TP_DOMAIN_MFU);
    assert_string_equal(why, "MFU 45.0% lies above the highest any 16-bit run measured on mi300x "
                             "(40.0%, users000:8)");
    strcpy(why, "earlier");
    assert_int_equal(tp_calib_mfu_check(&cal, &c, &j, 0.45, why, sizeof why), TP_DOMAIN_MFU);
    assert_non_null(strstr(why, "earlier; MFU 45.0%"));
    j.precision = TP_PREC_FP8; /* no 8-bit run measured: nothing to be past */
    assert_int_equal(tp_calib_mfu_check(&cal, &c, &j, 0.95, why, sizeof why), 0);
    j.precision = TP_PREC_BF16;
    assert_int_equal(tp_cluster_init(&c, "h100-sxm", 8, &err), TP_OK);
    assert_int_equal(tp_calib_mfu_check(&cal, &c, &j, 0.95, why, sizeof why), 0);
    assert_int_equal(tp_calib_mfu_check(&cal, &c, &j, 0.95, NULL, 0), 0);
    /* the domain survives a round trip through the file */
    char text[8192];
    tp_calib_to_json(&cal, text, sizeof text);
    static struct tp_calib back;
    tp_calib_prior(&back);
    assert_int_equal(tp_calib_from_json(text, strlen(text), &back, &err), TP_OK);
    assert_memory_equal(&back.domain, &cal.domain, sizeof cal.domain);
    /* malformed domains are errors */
    const char *bad = "{\"fit\": {\"gpus\": {\"h100-sxm\": 3}}}";
    assert_int_equal(tp_calib_from_json(bad, strlen(bad), &back, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "fit.gpus.h100-sxm must be an object"));
    bad = "{\"fit\": {\"gpus\": {\"h100-sxm\": {\"max_mfu\": 0.5, \"max_mfu_row\": 7}}}}";
    assert_int_equal(tp_calib_from_json(bad, strlen(bad), &back, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "fit.gpus.h100-sxm.max_mfu_row must be a string"));
    bad = "{\"fit\": {\"gpus\": {\"h100-sxm\": {\"max_mfu_8bit\": -1}}}}";
    assert_int_equal(tp_calib_from_json(bad, strlen(bad), &back, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "max_mfu_8bit"));
}

/* One synthetic run: a Llama-style model on `gpus` H100s, measured at nothing yet. */
static void make_run(struct tp_run *run, const char *id, const char *layers, const char *hidden,
                     const char *heads, const char *ffn, const char *seq, const char *gpus,
                     const char *tp, const char *pp, const char *mbs, const char *gbs)
{
    const char *cols[] = {"row_id", "arch", "n_layers", "hidden", "n_heads", "kv_heads",
                          "ffn_hidden", "vocab", "seq_len", "gpu_type", "num_gpus",
                          "tp", "pp", "micro_batch", "global_batch", "precision",
                          "framework_key", "zero_or_fsdp", "tokens_per_s_per_gpu"};
    const char *cells[] = {id, "llama", layers, hidden, heads, "8", ffn, "128256", seq,
                           "h100-sxm", gpus, tp, pp, mbs, gbs, "bf16", "megatron",
                           "megatron-distopt", "1000"};
    struct tp_error err = {{0}, {0}};
    enum tp_status st = tp_run_from_row(cols, cells, sizeof cols / sizeof cols[0], run, &err);
    if (st != TP_OK)
        fprintf(stderr, "%s: %s\n", id, err.msg);
    assert_int_equal(st, TP_OK);
}

enum { N_SYN = 12 };
static struct tp_run syn[N_SYN];

static void make_synthetic(void)
{
    /* shapes from 1B to 70B, sequences 2k-32k, TP 1-8, PP 1-4, over three "sources" */
    make_run(&syn[0], "a:1", "16", "2048", "32", "8192", "2048", "8", "1", "1", "4", "256");
    make_run(&syn[1], "a:2", "16", "2048", "32", "8192", "8192", "8", "1", "1", "1", "64");
    make_run(&syn[2], "a:3", "28", "3072", "24", "8192", "4096", "8", "1", "1", "2", "128");
    make_run(&syn[3], "a:4", "32", "4096", "32", "14336", "8192", "8", "2", "1", "1", "64");
    make_run(&syn[4], "b:1", "32", "4096", "32", "14336", "32768", "16", "4", "1", "1", "16");
    make_run(&syn[5], "b:2", "32", "4096", "32", "14336", "2048", "64", "1", "1", "8", "1024");
    make_run(&syn[6], "b:3", "40", "5120", "40", "13824", "4096", "32", "4", "2", "1", "128");
    make_run(&syn[7], "b:4", "80", "8192", "64", "28672", "8192", "64", "8", "4", "1", "128");
    make_run(&syn[8], "c:1", "80", "8192", "64", "28672", "4096", "128", "8", "2", "1", "512");
    make_run(&syn[9], "c:2", "48", "6144", "48", "16384", "16384", "32", "8", "1", "1", "32");
    make_run(&syn[10], "c:3", "24", "2048", "16", "5632", "1024", "8", "1", "1", "16", "512");
    make_run(&syn[11], "c:4", "60", "6656", "64", "17920", "2048", "256", "4", "4", "2", "2048");
}

/* The synthetic runs measured at what `truth` predicts, times 1 + noise x (-1, 0, +1 by turns). */
static void measure_synthetic(const struct tp_calib *truth, double noise,
                              const struct tp_run *ptr[N_SYN], double meas[N_SYN])
{
    make_synthetic();
    for (int i = 0; i < N_SYN; i++) {
        struct tp_time t;
        tp_time_step(&syn[i].model, &syn[i].cluster, &syn[i].job, &syn[i].layout, truth, &t);
        ptr[i] = &syn[i];
        meas[i] = t.tokens_per_s_per_gpu * (1 + noise * (i % 3 - 1));
    }
}

static void test_synthetic_round_trip(void **state)
{
    (void)state;
#ifdef TP_NO_GSL
    print_message("skipped: built without GSL (make NO_GSL=1): no fit\n");
    skip();
#endif
    static struct tp_calib truth, prior, fitted;
    tp_calib_prior(&prior);
    truth = prior;
    truth.gemm_scale = 0.72;
    truth.attn_eff = 0.31;
    truth.mem_eff = 0.42;
    truth.step_overhead_s = 0.12;
    const struct tp_run *ptr[N_SYN];
    double meas[N_SYN];
    measure_synthetic(&truth, 0, ptr, meas);
    struct tp_fit_opts o;
    tp_fit_opts_init(&o);
    o.per_gpu = false; /* one GPU type: its rate and gemm_scale are one parameter */
    o.prior_weight = 1e-6;
    struct tp_fit_result res;
    struct tp_error err;
    assert_int_equal(tp_calib_fit(ptr, meas, N_SYN, &prior, &o, &fitted, &res, &err), TP_OK);
    assert_int_equal(res.rows, N_SYN);
    assert_int_equal(res.sources, 3);
    assert_true(res.objective_before > 0.2);
    /* the truth is found to the fit's 3-digit rounding and the prior's pull; the prior's
       gemm_scale sits on its bound (1), where a forward difference sees no slope, so this also
       checks the Jacobian steps backward there */
    assert_true(res.objective_after < 0.01);
    assert_float_equal(fitted.gemm_scale, 0.72, 0.72 * 0.03);
    assert_float_equal(fitted.mem_eff, 0.42, 0.42 * 0.10);
    assert_float_equal(fitted.attn_eff, 0.31, 0.31 * 0.10);
    assert_float_equal(fitted.step_overhead_s, 0.12, 0.12 * 0.10);
    /* what pins each parameter (calibrate --explain): gemm_scale moves every row, so all 3
       sources pin it; its standard error is finite and the truth lies within 3 of them; no
       fitted parameter sits at a bound; an unpinned one keeps its prior with no error */
    for (size_t i = 0; i < res.n_params; i++) {
        const struct tp_fit_param *fp = &res.params[i];
        assert_false(fp->at_bound);
        assert_non_null(fp->cite);
        if (strcmp(fp->name, "gemm_scale") == 0) {
            assert_int_equal(fp->rows, N_SYN);
            assert_int_equal(fp->sources, 3);
            assert_true(isfinite(fp->se) && fp->se > 0);
            assert_true(fabs(fp->after - 0.72) < 3 * fp->se);
            assert_float_equal(fp->prior, 1.0, 0);
        }
        if (!fp->identified) {
            assert_int_equal(fp->rows, 0);
            assert_true(isnan(fp->se));
        }
        if (strcmp(fp->name, "eager_op_s") == 0) /* the host's per-launch time: a measurement */
            assert_true(fp->measured_prior && strstr(fp->cite, "pytorch/pytorch#41383"));
    }
    /* the domain is the rows' */
    assert_int_equal(fitted.domain.rows, N_SYN);
    assert_int_equal(fitted.domain.n_gpus, 1);
    assert_int_equal(fitted.domain.gpu[0].max_gpus, 256);
    assert_int_equal(fitted.domain.max_seq, 32768);
    /* and its highest MFU is the best row's, read at the throughput the fit was given */
    double best = 0;
    int at = -1;
    for (int i = 0; i < N_SYN; i++) {
        struct tp_time t;
        assert_int_equal(tp_time_step(&syn[i].model, &syn[i].cluster, &syn[i].job,
                                      &syn[i].layout, &truth, &t), TP_OK);
        if (t.mfu > best)
            best = t.mfu, at = i;
    }
    assert_true(best > 0.2 && best < 0.9);
    assert_float_equal(fitted.domain.gpu[0].max_mfu[0], best, best * 1e-9);
    assert_string_equal(fitted.domain.gpu[0].max_mfu_row[0], syn[at].row_id);
    assert_float_equal(fitted.domain.gpu[0].max_mfu[1], 0, 0); /* no 8-bit row */
    /* four starts (the base and the 3 best of 256 Sobol points) land on the same optimum: the
       loss has one basin here, as on the shipped runs, which is why one start is the default */
    static struct tp_calib multi;
    struct tp_fit_result res4;
    o.starts = 4;
    assert_int_equal(tp_calib_fit(ptr, meas, N_SYN, &prior, &o, &multi, &res4, &err), TP_OK);
    assert_true(res4.evaluations > res.evaluations + 256);
    assert_float_equal(multi.gemm_scale, fitted.gemm_scale, fitted.gemm_scale * 0.011);
    assert_float_equal(multi.mem_eff, fitted.mem_eff, fitted.mem_eff * 0.011);
    assert_float_equal(multi.attn_eff, fitted.attn_eff, fitted.attn_eff * 0.011);
    assert_float_equal(multi.step_overhead_s, fitted.step_overhead_s,
                       fitted.step_overhead_s * 0.011);
}

/* A parameter the rows would drive to a bound is not pinned by them but by the bound: the fit
   holds it at its prior and fits the others again (calibrate --explain's "at a bound").  The
   synthetic rows measured with no per-step overhead at all push step_overhead_s toward zero
   (the bound of a time: under 1/1000 of its prior); it stays at the prior's 0.05 s and is
   reported at_bound (issue 36: the fit had taken layer_overhead_s to 0). */
static void test_bound_held_at_prior(void **state)
{
    (void)state;
#ifdef TP_NO_GSL
    print_message("skipped: built without GSL (make NO_GSL=1): no fit\n");
    skip();
#endif
    static struct tp_calib truth, prior, fitted;
    tp_calib_prior(&prior);
    truth = prior;
    truth.step_overhead_s = 0;
    const struct tp_run *ptr[N_SYN];
    double meas[N_SYN];
    measure_synthetic(&truth, 0, ptr, meas);
    struct tp_fit_opts o;
    tp_fit_opts_init(&o);
    o.per_gpu = false;
    o.prior_weight = 1e-6;
    struct tp_fit_result res;
    struct tp_error err;
    assert_int_equal(tp_calib_fit(ptr, meas, N_SYN, &prior, &o, &fitted, &res, &err), TP_OK);
    bool seen = false;
    for (size_t i = 0; i < res.n_params; i++)
        if (strcmp(res.params[i].name, "step_overhead_s") == 0) {
            seen = true;
            assert_true(res.params[i].identified);
            assert_true(res.params[i].at_bound);
            assert_float_equal(res.params[i].after, 0.05, 1e-12);
            assert_true(isnan(res.params[i].se));
        }
    assert_true(seen);
    assert_float_equal(fitted.step_overhead_s, 0.05, 1e-12);
}

/* Leave-one-source-out with fold_rows: each fold fits on at most that many of the other
   sources' rows, evenly spaced (of 8, 4 keep ranks 1, 3, 5, 7); the held-out source is
   predicted on all its rows, and a cap at or above a fold's rows is no cap.  With max_folds
   below the sources, fold f holds out every source numbered f mod max_folds. */
static void test_fold_rows(void **state)
{
    (void)state;
#ifdef TP_NO_GSL
    print_message("skipped: built without GSL (make NO_GSL=1): no fit\n");
    skip();
#endif
    static struct tp_calib truth, prior, fold;
    tp_calib_prior(&prior);
    truth = prior;
    truth.gemm_scale = 0.72;
    truth.step_overhead_s = 0.12;
    const struct tp_run *ptr[N_SYN];
    double meas[N_SYN], all[N_SYN], capped[N_SYN], at_cap[N_SYN];
    measure_synthetic(&truth, 0.05, ptr, meas); /* not exactly the model */
    struct tp_fit_opts o;
    tp_fit_opts_init(&o);
    o.per_gpu = false;
    o.threads = 1;
    struct tp_error err;
    o.fold_rows = 0;
    assert_int_equal(tp_calib_cross_validate(ptr, meas, N_SYN, &prior, &o, all, &err), TP_OK);
    o.fold_rows = 8;
    assert_int_equal(tp_calib_cross_validate(ptr, meas, N_SYN, &prior, &o, at_cap, &err), TP_OK);
    assert_memory_equal(at_cap, all, sizeof all);
    o.fold_rows = 4;
    assert_int_equal(tp_calib_cross_validate(ptr, meas, N_SYN, &prior, &o, capped, &err), TP_OK);
    /* the fold that holds out source a fits on b:2, b:4, c:2, c:4 */
    const struct tp_run *train[4] = {&syn[5], &syn[7], &syn[9], &syn[11]};
    double tm[4] = {meas[5], meas[7], meas[9], meas[11]};
    struct tp_fit_result res;
    assert_int_equal(tp_calib_fit(train, tm, 4, &prior, &o, &fold, &res, &err), TP_OK);
    for (int i = 0; i < 4; i++) {
        struct tp_time t;
        tp_time_step(&syn[i].model, &syn[i].cluster, &syn[i].job, &syn[i].layout, &fold, &t);
        if (fabs(capped[i] - (t.tokens_per_s_per_gpu / meas[i] - 1)) > 1e-12)
            fail_msg("row %d: %.17g vs %.17g", i, capped[i], t.tokens_per_s_per_gpu / meas[i] - 1);
    }
    bool differs = false;
    for (int i = 0; i < N_SYN; i++) {
        assert_true(isfinite(capped[i]));
        differs = differs || capped[i] != all[i];
    }
    assert_true(differs);
    /* two folds over three sources: a and c held out together, fitted on b's rows alone */
    o.fold_rows = 0;
    o.max_folds = 2;
    assert_int_equal(tp_calib_cross_validate(ptr, meas, N_SYN, &prior, &o, capped, &err), TP_OK);
    assert_int_equal(tp_calib_fit(ptr + 4, meas + 4, 4, &prior, &o, &fold, &res, &err), TP_OK);
    for (int i = 0; i < N_SYN; i++) {
        if (i >= 4 && i < 8)
            continue;
        struct tp_time t;
        tp_time_step(&syn[i].model, &syn[i].cluster, &syn[i].job, &syn[i].layout, &fold, &t);
        if (fabs(capped[i] - (t.tokens_per_s_per_gpu / meas[i] - 1)) > 1e-12)
            fail_msg("row %d: %.17g vs %.17g", i, capped[i], t.tokens_per_s_per_gpu / meas[i] - 1);
    }
}

/* Two runs from one cluster (the users' notes: a 3B and a 14B run): a sensible fit that
   keeps what two runs cannot identify at the base values. */
static void test_two_runs(void **state)
{
    (void)state;
#ifdef TP_NO_GSL
    print_message("skipped: built without GSL (make NO_GSL=1): no fit\n");
    skip();
#endif
    static struct tp_run two[2];
    static struct tp_calib base, fitted;
    make_run(&two[0], "u:1", "28", "3072", "24", "8192", "4096", "8", "1", "1", "4", "256");
    make_run(&two[1], "u:2", "40", "5120", "40", "13824", "4096", "8", "1", "1", "2", "128");
    tp_calib_init(&base);
    const struct tp_run *ptr[2] = {&two[0], &two[1]};
    double meas[2];
    for (int i = 0; i < 2; i++) {
        struct tp_time t;
        tp_time_step(&two[i].model, &two[i].cluster, &two[i].job, &two[i].layout, &base, &t);
        meas[i] = 0.8 * t.tokens_per_s_per_gpu; /* the cluster runs 20% slower */
    }
    struct tp_fit_opts o;
    tp_fit_opts_init(&o);
    struct tp_fit_result res;
    struct tp_error err;
    assert_int_equal(tp_calib_fit(ptr, meas, 2, &base, &o, &fitted, &res, &err), TP_OK);
    /* log(1/0.8) = 0.223 before; the fit closes it */
    assert_float_equal(res.objective_before, log(1 / 0.8), 1e-9);
    assert_true(res.objective_after < 0.02);
    /* no TP, no multi-node DP: those parameters are not identified and stay */
    for (size_t k = 0; k < res.n_params; k++)
        if (strcmp(res.params[k].name, "tp_overlap") == 0 ||
            strcmp(res.params[k].name, "eff_inter") == 0) {
            assert_false(res.params[k].identified);
            assert_float_equal(res.params[k].after, res.params[k].before, 0);
        }
    assert_float_equal(fitted.tp_overlap, base.tp_overlap, 0);
    assert_float_equal(fitted.eff_inter, base.eff_inter, 0);
    /* a third run of the same cluster (8B) is now predicted about 20% slower too */
    static struct tp_run third;
    make_run(&third, "u:3", "32", "4096", "32", "14336", "4096", "8", "1", "1", "2", "128");
    struct tp_time before, after;
    tp_time_step(&third.model, &third.cluster, &third.job, &third.layout, &base, &before);
    tp_time_step(&third.model, &third.cluster, &third.job, &third.layout, &fitted, &after);
    assert_float_equal(after.tokens_per_s_per_gpu / before.tokens_per_s_per_gpu, 0.8, 0.04);
    /* nothing to fit is an error */
    assert_int_equal(tp_calib_fit(ptr, meas, 0, &base, &o, &fitted, &res, &err), TP_EINVAL);
    meas[1] = -1;
    assert_int_equal(tp_calib_fit(ptr, meas, 2, &base, &o, &fitted, &res, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "u:2"));
}

/* A build without GSL cannot fit and says so (TP_EUNSUPPORTED), whichever entry is called; a
   build with GSL fits the same rows. */
static void test_fit_backend(void **state)
{
    (void)state;
    static struct tp_run one;
    static struct tp_calib base, fitted;
    make_run(&one, "u:1", "28", "3072", "24", "8192", "4096", "8", "1", "1", "4", "256");
    tp_calib_init(&base);
    const struct tp_run *ptr[1] = {&one};
    double meas[1] = {1000}, held[1];
    struct tp_fit_opts o;
    tp_fit_opts_init(&o);
    o.samples = 8;
    o.max_evals = 40;
    struct tp_fit_result res;
    struct tp_error err;
    /* one source: no fold to run, every row NaN (a cross-validation with no job once crashed) */
    held[0] = 0;
    assert_int_equal(tp_calib_cross_validate(ptr, meas, 1, &base, &o, held, &err), TP_OK);
    assert_true(isnan(held[0]));
#ifdef TP_NO_GSL
    assert_int_equal(tp_calib_fit(ptr, meas, 1, &base, &o, &fitted, &res, &err),
                     TP_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "without the fitting backend"));
    assert_int_equal(tp_calib_fit_validate(ptr, meas, 1, &base, &o, &fitted, &res, held, &err),
                     TP_EUNSUPPORTED);
#else
    assert_int_equal(tp_calib_fit_validate(ptr, meas, 1, &base, &o, &fitted, &res, held, &err),
                     TP_OK);
    assert_int_equal(res.rows, 1);
    assert_true(isnan(held[0])); /* one source: nothing to hold out against */
#endif
}

static void test_evaluate_converts(void **state)
{
    (void)state;
    /* a row measured as a step time: tokens/s = gbs * seq / step / gpus */
    const char *cols[] = {"row_id", "arch", "n_layers", "hidden", "n_heads", "ffn_hidden",
                          "vocab", "seq_len", "gpu_type", "num_gpus", "tp", "pp", "micro_batch",
                          "global_batch", "step_time_s"};
    const char *cells[] = {"s:1", "gpt", "24", "2048", "16", "8192", "51200", "2048",
                           "a100-80gb", "8", "1", "1", "4", "64", "2.0"};
    static struct tp_run run;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_run_from_row(cols, cells, 15, &run, &err), TP_OK);
    static struct tp_calib cal;
    tp_calib_init(&cal);
    struct tp_run_eval e;
    tp_run_evaluate(&run, &cal, &e);
    assert_string_equal(e.measured_from, "step time");
    assert_float_equal(e.measured_tokens_per_s_per_gpu, 64.0 * 2048 / 2.0 / 8, 1e-9);
    assert_string_equal(e.native_unit, "s/step");
    assert_float_equal(e.measured_native, 2.0, 0);
    /* the predicted step time is the model's, in both units */
    assert_float_equal(e.predicted_native, e.predicted_step_s, 1e-9 * e.predicted_step_s);
    assert_float_equal(e.err, e.predicted_tokens_per_s_per_gpu / 8192.0 - 1, 1e-12);
    assert_true(isnan(e.measured_mem_gib));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_err_stats),     cmocka_unit_test(test_builtin_is_the_data_file),
        cmocka_unit_test(test_domain),        cmocka_unit_test(test_synthetic_round_trip),
        cmocka_unit_test(test_bound_held_at_prior),
        cmocka_unit_test(test_two_runs),      cmocka_unit_test(test_evaluate_converts),
        cmocka_unit_test(test_fit_backend),   cmocka_unit_test(test_fold_rows),
    };
    return cmocka_run_group_tests_name("calib", tests, NULL, NULL);
}
