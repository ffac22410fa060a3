/*
 * cmd_estimate.c - `trainplan estimate MODEL ...`: does it fit, how fast, how long, how much.
 *
 * Memory (the worst pipeline stage) and time per step (tp_time_step) for one resolved run;
 * throughput, FLOP rates under each convention, and with --tokens (or --epochs and
 * --dataset-tokens) the wall-clock time, GPU-hours and cost.  Exit status 0 when it fits, 1 when
 * it does not (the time is still reported, for what it would be), 2 on bad input.
 */
#include "cli.h"
#include "plot.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("usage: trainplan estimate MODEL [--gpu NAME] [--gpus N] [layout and job options]\n"
           "                          [--tokens N | --epochs E --dataset-tokens N]\n"
           "                          [--gpu-hour-price P] [--calibration FILE]\n\n"
           "Memory and time of one training run: the memory verdict of the worst pipeline stage,\n"
           "time per step broken into compute (forward, backward, recompute), exposed\n"
           "communication by kind, pipeline bubble and optimizer; tokens/s per GPU and in total,\n"
           "model TFLOP/s and MFU, hardware TFLOP/s and HFU, and the TFLOP/s Megatron-LM and\n"
           "Megatron-DeepSpeed would log.  With a token budget: steps, wall-clock, GPU-hours and\n"
           "cost.  FLOP convention: exact matmul counting with causal attention (Megatron-LM\n"
           "2025); MFU and HFU against the dense 16-bit peak, also for fp8 runs (fp32 runs: the\n"
           "tf32 tensor-core peak their GEMMs run at).\n"
           "Lists: --mbs 1,2,4,8, --seq 4096,8192, --gpus 8..512 (doubling), also --gbs --gas\n"
           "--tp --pp --dp --cp --ep --zero: one row per combination (JSON sweep[], CSV rows).\n\n"
           "JSON keys: schema_version, step_time_s, tokens_per_s_per_gpu, model_tflops_per_gpu,\n"
           "mfu, hw_tflops_per_gpu, hfu, train_time_s, time (breakdown), memory, checkpoint\n"
           "(bytes per save, per rank, consolidated; save_s with --storage-gbps),\n"
           "defaults_that_matter[] (inputs not given that move the answer), speedups[] (changes\n"
           "that make it faster, with their gain; docs/advice.md), ...\n\n"
           "options:\n");
    cli_print_options(stdout, CMD_ESTIMATE);
    printf("\nexit status: 0 fits; 1 does not fit in memory (time still reported); 2 usage or "
           "input error.\n");
}

/* The token budget and what it costs. */
struct budget {
    double tokens;     /* 0 = no budget given */
    double gpu_hours, cost;
    bool priced;
    struct tp_wallclock w; /* the steps, plus start-up, weight load, saves, evaluations */
    bool extras;           /* any of those was asked for */
};

/* The wall-clock beyond the steps, as tp_evaluate's options; GPU-hours and cost follow the
   whole wall-clock. */
static int resolve_wallclock(const struct cli_args *a, struct budget *b, struct tp_eval_opts *o)
{
    b->extras = a->ckpt_every != TP_UNSET || a->eval_every != TP_UNSET || a->eval_tokens > 0 ||
                a->startup_min > 0;
    if (b->extras && b->tokens == 0) {
        cli_error("--ckpt-every, --eval-every/--eval-tokens and --startup-min need a token "
                  "budget (--tokens, or --epochs with --dataset-tokens)");
        return EXIT_USAGE;
    }
    if (a->ckpt_every != TP_UNSET && !(a->storage_gbps > 0)) {
        cli_error("--ckpt-every needs --storage-gbps (the time of one save)");
        return EXIT_USAGE;
    }
    if ((a->eval_every != TP_UNSET) != (a->eval_tokens > 0)) {
        cli_error("--eval-every and --eval-tokens go together");
        return EXIT_USAGE;
    }
    tp_eval_opts_init(o);
    o->tokens = b->tokens;
    o->gpu_hour_price = b->priced ? a->price : -1;
    o->storage_bps = a->storage_gbps * 1e9;
    o->wall.startup_s = a->startup_min * 60;
    /* the weights are read in the wall-clock only when its extras are asked for: alone,
       --storage-gbps prices the saves of the checkpoint block */
    o->wall.storage_bps = b->extras && a->storage_gbps > 0 ? a->storage_gbps * 1e9 : 0;
    o->wall.ckpt_every = a->ckpt_every != TP_UNSET ? (uint64_t)a->ckpt_every : 0;
    o->wall.eval_every = a->eval_every != TP_UNSET ? (uint64_t)a->eval_every : 0;
    o->wall.eval_tokens = a->eval_tokens;
    return EXIT_OK;
}

static int resolve_budget(const struct cli_args *a, struct budget *b)
{
    memset(b, 0, sizeof *b);
    bool epochs = a->epochs > 0, dataset = a->dataset_tokens > 0;
    if (epochs != dataset) {
        cli_error("--epochs and --dataset-tokens go together (tokens = epochs x dataset tokens)");
        return EXIT_USAGE;
    }
    if (epochs && a->tokens > 0) {
        cli_error("give either --tokens or --epochs with --dataset-tokens, not both");
        return EXIT_USAGE;
    }
    b->tokens = epochs ? a->epochs * a->dataset_tokens : a->tokens > 0 ? a->tokens : 0;
    if (a->price >= 0 && b->tokens == 0) {
        cli_error("--gpu-hour-price needs a token budget (--tokens, or --epochs with "
                  "--dataset-tokens)");
        return EXIT_USAGE;
    }
    b->priced = b->tokens > 0 && a->price >= 0;
    return EXIT_OK;
}

static void row(const char *label, double s, double step)
{
    if (s <= 0)
        return;
    printf("  %-42s %10.4f s  %5.1f%%\n", label, s, 100 * s / step);
}

static void print_wallclock(const struct tp_wallclock *w)
{
    char s[5][32];
    fmt_duration(s[0], sizeof s[0], w->train_s);
    fmt_duration(s[1], sizeof s[1], w->startup_s);
    fmt_duration(s[2], sizeof s[2], w->load_s);
    fmt_duration(s[3], sizeof s[3], w->ckpt_s);
    fmt_duration(s[4], sizeof s[4], w->eval_s);
    printf("  = %s of steps + %s start-up + %s reading the weights + %s for %.0f saves + %s for "
           "%.0f evaluations (goodput %.1f%%)\n",
           s[0], s[1], s[2], s[3], w->saves, s[4], w->evals, 100 * w->goodput);
}

static void print_time(const struct run *r, const struct tp_time *t, const struct budget *b,
                       const char *calibration, const struct tp_range *rg)
{
    const struct tp_layout *l = &r->l;
    char what[96];
    if (l->pp > 1)
        snprintf(what, sizeof what, "slowest stage %u of %u, %u micro-batches", t->slowest_stage,
                 l->pp, l->gas);
    else
        snprintf(what, sizeof what, "%u micro-batch%s", l->gas, l->gas == 1 ? "" : "es");
    printf("\ntime per step (%s)\n", what);
    printf("  %-42s %12s  %6s\n", "", "seconds", "share");
    row("forward", t->fwd_s, t->step_s);
    row("backward", t->bwd_s, t->step_s);
    row("recompute (extra forward)", t->recompute_s, t->step_s);
    row("  of which GEMMs", t->gemm_s, t->step_s);
    row("  of which attention core", t->attn_s, t->step_s);
    row("  of which memory-bound kernels", t->elementwise_s, t->step_s);
    row("tensor-parallel collectives (exposed)", t->tp_comm_s, t->step_s);
    row("context-parallel KV exchange (exposed)", t->cp_comm_s, t->step_s);
    row("MoE all-to-all (exposed)", t->ep_comm_s, t->step_s);
    row("pipeline send/recv (exposed)", t->pp_comm_s, t->step_s);
    row("pipeline bubble", t->bubble_s, t->step_s);
    char dp[96];
    snprintf(dp, sizeof dp, "data-parallel / ZeRO (exposed of %.4f s)", t->dp_comm_total_s);
    if (t->dp_comm_total_s > 0)
        printf("  %-42s %10.4f s  %5.1f%%\n", dp, t->dp_comm_s, 100 * t->dp_comm_s / t->step_s);
    row("optimizer step and clipping", t->optimizer_s, t->step_s);
    row("offload transfers (PCIe)", t->offload_s, t->step_s);
    row("launch and per-step overhead", t->overhead_s, t->step_s);
    printf("  %-42s %10.4f s\n", "step", t->step_s);

    char tok[32], tot[32];
    fmt_si(tok, sizeof tok, t->tokens_per_step);
    fmt_si(tot, sizeof tot, t->tokens_per_s);
    double frac = tp_job_trainable_frac(&r->j);
    const char *counted = frac < 1 ? "trainable tokens" : "tokens";
    printf("\nthroughput   %.0f %s/s per GPU, %s %s/s in total, %.2f samples/s "
           "(%s %s per step)\n",
           t->tokens_per_s_per_gpu, counted, tot, counted, t->samples_per_s, tok, counted);
    if (frac < 1)
        printf("             (%.0f%% of the %.0f token slots/s per GPU processed: "
               "--trainable-frac %.3g)\n",
               100 * frac, t->slots_per_s_per_gpu, frac);
    printf("  80%% range  %.0f - %.0f tokens/s per GPU, step %.2f - %.2f s (%s: %s%s)\n",
           t->tokens_per_s_per_gpu * rg->lo, t->tokens_per_s_per_gpu * rg->hi,
           t->step_s / rg->hi, t->step_s / rg->lo, rg->cls, rg->basis,
           rg->widened ? "; widened: outside the calibrated domain" : "");
    bool packed = tp_attn_span(&r->j) < (double)r->j.seq;
    printf("model        %.2f GFLOP per token (exact matmuls, causal attention%s) -> %.1f TFLOP/s "
           "per GPU, MFU %.1f%%\n",
           t->model_flops_per_token / 1e9, packed ? " within documents" : "",
           t->model_tflops_per_gpu, 100 * t->mfu);
    printf("hardware     %.2f GFLOP per token (with recompute) -> %.1f TFLOP/s per GPU, "
           "HFU %.1f%%\n",
           t->hw_flops_per_token / 1e9, t->hw_tflops_per_gpu, 100 * t->hfu);
    printf("             (MFU/HFU against the dense %s peak, %.0f TFLOP/s)\n",
           r->j.precision != TP_PREC_FP32                    ? "16-bit"
           : r->c.gpu.peak_flops[TP_TF32] == t->peak_flops ? "tf32 tensor-core"
                                                           : "fp32",
           t->peak_flops / 1e12);
    printf("logs         Megatron-LM would print %.1f TFLOP/s/GPU; Megatron-DeepSpeed %.1f\n",
           t->megatron_tflops_per_gpu, t->deepspeed_tflops_per_gpu);
    if (b->tokens > 0) {
        char tk[32], wall[32];
        fmt_si(tk, sizeof tk, b->tokens);
        fmt_duration(wall, sizeof wall, b->w.train_s);
        char wlo[32], whi[32];
        fmt_duration(wlo, sizeof wlo, b->w.train_s / rg->hi);
        fmt_duration(whi, sizeof whi, b->w.train_s / rg->lo);
        if (b->extras) {
            double other = b->w.total_s - b->w.train_s;
            fmt_duration(wall, sizeof wall, b->w.total_s);
            fmt_duration(wlo, sizeof wlo, other + b->w.train_s / rg->hi);
            fmt_duration(whi, sizeof whi, other + b->w.train_s / rg->lo);
        }
        printf("\nto train %s tokens: %.0f steps, %s wall-clock (80%% range %s - %s), %.1f "
               "GPU-hours", tk, b->w.steps, wall, wlo, whi, b->gpu_hours);
        if (b->priced)
            printf(", cost %.2f", b->cost);
        printf("\n");
        if (b->extras)
            print_wallclock(&b->w);
    }
    printf("\ncalibration  %s\n", calibration ? calibration : "built-in defaults");
}

/* The figures the table shows beyond the row's first ones, named as in estimate's JSON: the
   80% range, the step's breakdown and the FLOP rates (issue 40: every figure a table shows is
   in the CSV too).  Appended after the older columns, which keep their places. */
static void row_extras(json_t *o, const struct tp_time *t, const struct tp_range *rg,
                       const struct budget *b)
{
    const struct {
        const char *key;
        double v;
    } f[] = {{"tokens_per_s_per_gpu_low", t->tokens_per_s_per_gpu * rg->lo},
             {"tokens_per_s_per_gpu_high", t->tokens_per_s_per_gpu * rg->hi},
             {"step_time_s_low", t->step_s / rg->hi},
             {"step_time_s_high", t->step_s / rg->lo},
             {"samples_per_s", t->samples_per_s},
             {"forward_s", t->fwd_s},
             {"backward_s", t->bwd_s},
             {"recompute_s", t->recompute_s},
             {"gemm_s", t->gemm_s},
             {"attention_s", t->attn_s},
             {"memory_bound_s", t->elementwise_s},
             {"tp_comm_s", t->tp_comm_s},
             {"cp_comm_s", t->cp_comm_s},
             {"ep_comm_s", t->ep_comm_s},
             {"pp_comm_s", t->pp_comm_s},
             {"bubble_s", t->bubble_s},
             {"dp_comm_s", t->dp_comm_s},
             {"dp_comm_total_s", t->dp_comm_total_s},
             {"optimizer_s", t->optimizer_s},
             {"offload_s", t->offload_s},
             {"overhead_s", t->overhead_s},
             {"model_flops_per_token", t->model_flops_per_token},
             {"hw_flops_per_token", t->hw_flops_per_token},
             {"megatron_tflops_per_gpu", t->megatron_tflops_per_gpu},
             {"deepspeed_tflops_per_gpu", t->deepspeed_tflops_per_gpu}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        json_object_set_new(o, f[i].key, out_num(f[i].v));
    bool budgeted = b && b->tokens > 0;
    json_object_set_new(o, "train_time_s_low",
                        budgeted ? out_num(b->w.train_s / rg->hi) : json_null());
    json_object_set_new(o, "train_time_s_high",
                        budgeted ? out_num(b->w.train_s / rg->lo) : json_null());
    json_object_set_new(o, "range_class", json_string(rg->cls));
    json_object_set_new(o, "range_widened", json_boolean(rg->widened));
}

/* One flat row: the figures of the table, for CSV and a sweep's rows. */
static json_t *estimate_row(const struct run *r, const struct tp_memory *mem,
                            const struct tp_time *t, const struct budget *b,
                            const struct tp_range *rg)
{
    char hint[160];
    report_fit_hint(r, mem, hint, sizeof hint);
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s,"
                          " s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:s}",
                          "model", r->m.name, "gpu", r->c.gpu.key, "gpus",
                          (json_int_t)r->c.n_gpus, "seq", (json_int_t)r->j.seq, "dp",
                          (json_int_t)r->l.dp, "tp", (json_int_t)r->l.tp, "pp",
                          (json_int_t)r->l.pp, "vpp", (json_int_t)r->l.vpp, "cp",
                          (json_int_t)r->l.cp, "ep", (json_int_t)r->l.ep, "zero",
                          (json_int_t)r->l.zero, "mbs", (json_int_t)r->l.mbs, "gas",
                          (json_int_t)r->l.gas, "recompute", tp_name(TP_NAMES_RECOMPUTE, (int)r->l.recompute),
                          "step_time_s", out_num(t->step_s), "tokens_per_s_per_gpu",
                          out_num(t->tokens_per_s_per_gpu), "tokens_per_s",
                          out_num(t->tokens_per_s), "model_tflops_per_gpu",
                          out_num(t->model_tflops_per_gpu), "mfu", out_num(t->mfu),
                          "hw_tflops_per_gpu", out_num(t->hw_tflops_per_gpu), "hfu",
                          out_num(t->hfu), "memory_bytes", out_num(mem->total_bytes), "fits",
                          (int)mem->fits, "fits_with", hint);
    if (o) /* fits, tight (within the memory model's error) or does not fit */
        json_object_set_new(o, "memory_verdict", json_string(tp_mem_verdict_name(mem->verdict)));
    if (o && b) {
        json_object_set_new(o, "train_time_s", b->tokens > 0 ? out_num(b->w.train_s) : json_null());
        json_object_set_new(o, "gpu_hours", b->tokens > 0 ? out_num(b->gpu_hours) : json_null());
        json_object_set_new(o, "cost", b->priced ? out_num(b->cost) : json_null());
    }
    if (o)
        row_extras(o, t, rg, b);
    return o;
}

/* The budget and wall-clock options, then tp_evaluate; the budget takes the evaluation's
   wall-clock, GPU-hours and cost.  EXIT_OK, or EXIT_USAGE after an error line. */
static int evaluate(const struct cli_args *a, const struct run *r, const struct tp_calib *cal,
                    struct budget *b, struct tp_eval_opts *o, struct tp_evaluation *ev)
{
    int rc = resolve_budget(a, b);
    if (rc == EXIT_OK)
        rc = resolve_wallclock(a, b, o);
    if (rc != EXIT_OK)
        return rc;
    struct tp_error err = {{0}, {0}};
    if (tp_evaluate(&r->m, &r->c, &r->j, &r->l, cal, o, ev, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    b->w = ev->wall;
    b->gpu_hours = ev->gpu_hours;
    b->cost = ev->cost;
    return EXIT_OK;
}

static int sweep_one(const struct cli_args *a, struct run *r, void *ctx, json_t *row, bool *ok)
{
    /* as the single run: tp_evaluate, the figures of estimate's document */
    struct budget b;
    struct tp_eval_opts o;
    static struct tp_evaluation ev;
    int rc = evaluate(a, r, ctx, &b, &o, &ev);
    if (rc != EXIT_OK)
        return rc;
    *ok = ev.memory.fits;
    return cli_sweep_merge(row, estimate_row(r, &ev.memory, &ev.time, &b, &ev.range));
}

static int sweep(const struct cli_args *a, const struct tp_calib *cal)
{
    static const struct cli_col COLS[] = {
        {"gpus", " gpus", 0, 1},   {"seq", "   seq", 0, 1},  {"dp", "  dp", 0, 1},
        {"tp", "tp", 0, 1},        {"pp", "pp", 0, 1},       {"zero", "zero", 0, 1},
        {"mbs", " mbs", 0, 1},     {"gas", " gas", 0, 1},    {"recompute", "recompute", 0, 1},
        {"memory_bytes", "mem GiB", 2, 1 / 1073741824.0},    {"fits", "fits", 0, 1},
        {"step_time_s", "  step s", 3, 1}, {"tokens_per_s_per_gpu", "tok/s/GPU", 0, 1},
        {"tokens_per_s_per_gpu_low", "80% low", 0, 1},
        {"tokens_per_s_per_gpu_high", "80% high", 0, 1},
        {"mfu", "MFU %", 1, 100},  {"train_time_s", "wall h", 1, 1 / 3600.0},
        {"train_time_s_low", "80% low", 1, 1 / 3600.0},
        {"train_time_s_high", "80% high", 1, 1 / 3600.0}, {"fits_with", "hint", 0, 1}};
    return cli_sweep_print(a, sweep_one, (void *)(uintptr_t)cal, "estimate",
                           " (a row that does not fit: its time is what it would be)", COLS,
                           sizeof COLS / sizeof COLS[0], 8);
}

/* A run that does not fit: what makes it fit, instead of a time breakdown nobody can run. */
static void print_no_fit(const struct run *r, const struct tp_memory *mem, const struct tp_time *t)
{
    enum { MAX_FIXES = 4 };
    struct tp_fix fixes[MAX_FIXES];
    size_t n = tp_memory_suggest(&r->m, &r->c, &r->j, &r->l, fixes, MAX_FIXES);
    printf("\ndoes not fit by %.2f GiB; no time breakdown for a run "
           "that cannot start. Changes that make it fit:\n", -mem->headroom_bytes / 1073741824.0);
    report_fixes(&r->j, fixes, n, r->c.gpu.hbm_bytes);
    printf("(as given it would run at %.0f tokens/s per GPU, MFU %.1f%%; --format json has the "
           "breakdown)\n", t->tokens_per_s_per_gpu, 100 * t->mfu);
}

/* An MoE run in an expert loop (the Hugging Face loop, DeepSpeed-MoE) pays per micro-batch
   and per expert (host syncs, launches, ZeRO-3 fetches), so its rate moves with the
   micro-batch; when --mbs was not given, say what the largest micro-batch that fits (up to 16)
   would give if that moves the answer past its 80% range (docs/moe.md). */
static void mbs_warning(const struct cli_args *a, const struct run *r, const struct tp_calib *cal,
                        const struct tp_time *t, const struct tp_range *rg)
{
    enum tp_moe_impl impl = tp_job_moe_impl(&r->m, &r->j, &r->l);
    if (a->mbs != TP_UNSET || r->m.n_experts == 0 || impl == TP_MOE_GROUPED || r->l.mbs != 1)
        return;
    uint64_t samples = (uint64_t)r->l.mbs * r->l.gas;
    for (uint32_t mbs = 16; mbs >= 2; mbs /= 2) {
        struct tp_layout l = r->l;
        struct tp_memory mem;
        struct tp_time alt;
        if (a->gbs != TP_UNSET && samples % mbs)
            continue;
        l.mbs = mbs;
        l.gas = a->gbs != TP_UNSET ? (uint32_t)(samples / mbs) : r->l.gas;
        if (tp_memory_worst(&r->m, &r->c, &r->j, &l, &mem) != TP_OK || !mem.fits ||
            tp_time_step(&r->m, &r->c, &r->j, &l, cal, &alt) != TP_OK)
            continue;
        double ratio = alt.tokens_per_s_per_gpu / t->tokens_per_s_per_gpu;
        if (ratio > rg->hi || ratio < rg->lo)
            printf("warning      micro-batch 1 assumed (no --mbs): the %s experts pay per "
                   "micro-batch, and at --mbs %u (fits) this run gives %.0f tokens/s per GPU, "
                   "%.1fx, outside the range; give the micro-batch you run\n",
                   tp_moe_impl_name(impl), mbs, alt.tokens_per_s_per_gpu, ratio);
        return;
    }
}

int cmd_estimate(int argc, char **argv)
{
    struct cli_args a;
    static struct run r;
    int rc = cli_begin(argc, argv, CMD_ESTIMATE, &a, help);
    if (rc >= 0)
        return rc;
    if (!a.n_sweeps && (rc = cli_resolve_run(&a, &r)) != EXIT_OK)
        return rc;
    static struct tp_calib cal;
    tp_calib_init(&cal);
    if (a.calibration) {
        struct tp_error err;
        if (tp_calib_from_file(a.calibration, &cal, &err) != TP_OK) {
            cli_error_field(&err);
            return EXIT_USAGE;
        }
    }
    if (a.n_sweeps)
        return sweep(&a, &cal);
    struct budget b;
    struct tp_eval_opts o;
    static struct tp_evaluation ev;
    if ((rc = evaluate(&a, &r, &cal, &b, &o, &ev)) != EXIT_OK)
        return rc;
    const struct tp_memory mem = ev.memory;
    const struct tp_time t = ev.time;
    const struct tp_range rg = ev.range;
    const struct tp_ckpt_plan ck = ev.ckpt;
    const char *outside = ev.outside;
    if (a.svg && (rc = plot_estimate(a.svg, &r, &t)) != EXIT_OK)
        return rc;
    /* the defaults that moved the answer, and what makes it faster (advice.c) */
    static struct cli_advice adv;
    cli_advice(&a, &r, &cal, 0, mem.fits, &adv);
    if (a.format == FMT_JSON) {
        json_t *doc = tp_json_estimate(&r.m, &r.c, &r.j, &r.l, &o, &ev, a.calibration, r.notes);
        cli_advice_json(doc, &adv, true);
        if ((rc = cli_print_json(doc, 8)) != EXIT_OK)
            return rc;
    } else if (a.format == FMT_CSV) {
        json_t *row = estimate_row(&r, &mem, &t, &b, &rg);
        cli_advice_cell(row, &adv, true);
        if ((rc = out_csv_row(row)) != EXIT_OK)
            return rc;
    } else {
        report_header(&r, "estimate");
        char hint[160];
        report_fit_hint(&r, &mem, hint, sizeof hint);
        printf("\nmemory       %.2f GiB of %.2f GiB per GPU (worst stage %u) -> %s%s%s%s\n",
               mem.total_bytes / 1073741824.0, mem.capacity_bytes / 1073741824.0, mem.stage,
               mem.verdict == TP_MEM_TIGHT ? "fits, but within the model's error: tight"
               : mem.fits                  ? "fits"
                                           : "DOES NOT FIT",
               hint[0] ? " (fits with " : "", hint, hint[0] ? ")" : "");
        report_logits_note(&r, &mem, "warning      ");
        if (mem.verdict == TP_MEM_TIGHT)
            report_tight(&r, &mem);
        if (!mem.fits) {
            print_no_fit(&r, &mem, &t);
            return cli_finish(EXIT_NO);
        }
        print_time(&r, &t, &b, a.calibration, &rg);
        mbs_warning(&a, &r, &cal, &t, &rg);
        cli_advice_print(&r, &adv, false);
        printf("\ncheckpoint   (DeepSpeed's files: ZeRO %u on %u GPUs; trainplan checkpoint "
               "checks a saved one)\n", r.l.zero, r.c.n_gpus);
        report_checkpoint_plan(&ck, a.storage_gbps);
        if (outside[0])
            printf("warning      outside what the calibration was fitted on: %s\n", outside);
    }
    return cli_finish(mem.fits ? EXIT_OK : EXIT_NO);
}
