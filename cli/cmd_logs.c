/*
 * cmd_logs.c - `trainplan logs FILE...`: training logs as users have them -> the steady state
 * (step time, tokens/s, TFLOP/s, MFU, memory), the time a token budget takes, and with the model
 * and cluster described, model FLOPs, the estimate's prediction next to the measurement and a
 * runs-file row (so logs -> calibrate -> estimate runs on the user's own cluster).
 *
 * Every file is read and evaluated before anything is printed, so an error leaves stdout empty.
 */
#include "cli.h"
#include "outfile.h"
#include "plot.h"

#include <csv.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("usage: trainplan logs FILE... [--skip-warmup N] [--log-format NAME] [--gpus N]\n"
           "                      [--gbs N --seq N] [--tokens N [--gpu-hour-price P]]\n"
           "                      [--model MODEL --gpu NAME [layout and job options]\n"
           "                       [--calibration FILE] [--row-out FILE]] [--format table|json|csv]\n\n"
           "Reads training logs as the frameworks print them and reports the steady state of each:\n"
           "median and mean step time, tokens/s in total and per GPU, samples/s, TFLOP/s and MFU as\n"
           "the log counts them, peak memory; with --tokens the time (and GPU-hours, cost) to train\n"
           "that many tokens at the steady rate.\n\n"
           "Formats (detected from the content, or --log-format): megatron (Megatron-LM / Core\n"
           "\"iteration N/ M | ... elapsed time per iteration (ms)\"), megatron-deepspeed (\"samples per\n"
           "second\", \"TFLOPs\"), hf (Hugging Face Trainer / Axolotl / TRL: {'loss': ...} dicts, the\n"
           "tqdm bar, the {'train_runtime': ...} summary, tokens_per_second_per_gpu), torchtitan\n"
           "(\"step: N ... tps ... tflops ... mfu\"), nanogpt (\"iter N: loss X, time X ms, mfu X%%\"),\n"
           "llm.c (\"step N/M | ... | X ms | X%% bf16 MFU | X tok/s\"), json (run logs with\n"
           "training_iterations / training_progress lists: dt_ms, tokens_per_sec, mfu,\n"
           "memory_allocated_gb).\n\n"
           "Steady state: the first 10%% of the logged steps are warm-up (rounded up, at least 1,\n"
           "none under 5 steps; --skip-warmup N to choose), then a step is an outlier when its step\n"
           "time (else its logged rate) lies more than 3 x max(1.4826 x MAD, 1%% of the median) from\n"
           "the median.  Tokens/s = tokens per step / mean step time when the log (or --gbs and\n"
           "--seq) gives the tokens per step; the GPU count comes from the log or --gpus.\n\n"
           "With --model and --gpu (and the layout flags the log does not state): model FLOPs per\n"
           "token, MFU against the catalog peak, and `trainplan estimate`'s prediction for the same\n"
           "run; --row-out FILE writes one runs-file row per log (validation/runs format) for\n"
           "`trainplan validate` and `trainplan calibrate`.\n\n"
           "options:\n");
    cli_print_options(stdout, CMD_LOGS);
    printf("\nexit status: 0 success; 2 usage, input or I/O error (unknown format, no step lines).\n");
}

/* One log, read and evaluated. */
struct result {
    const char *path;
    struct tp_log_info info;
    struct tp_log_steady st;
    double steps, train_s, gpu_hours, cost; /* budget; NaN when not applicable */
    bool modelled;
    struct run run;
    double flops_per_token, model_tflops, mfu, peak_tflops;
    struct tp_time pred;
    double pred_mem_gib;
    char assumed[160];  /* run facts neither the log nor the command line gave */
    char row_id[160];
};

enum { MAX_LOG_BYTES = 1 << 30 };

/* Reads a whole file; prints the error and returns EXIT_USAGE on failure. */
static int read_all(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        cli_error("%s: %s", path, strerror(errno));
        return EXIT_USAGE;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
        if (n == cap) {
            if (cap >= MAX_LOG_BYTES) {
                free(buf);
                fclose(f);
                cli_error("%s: larger than 1 GiB", path);
                return EXIT_USAGE;
            }
            char *more = realloc(buf, cap * 2);
            if (!more) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = more;
            cap *= 2;
        }
    }
    int bad = !buf ? ENOMEM : ferror(f) ? errno : 0;
    fclose(f);
    if (bad) {
        free(buf);
        cli_error("%s: %s", path, strerror(bad ? bad : EIO));
        return EXIT_USAGE;
    }
    *out = buf;
    *len = n;
    return EXIT_OK;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The model, cluster and layout of the logged run: the command line, and what the log states
   where the command line is silent. */
static int resolve_logged_run(const struct cli_args *a, struct result *r)
{
    struct cli_args b = *a;
    const struct tp_log_info *in = &r->info;
    if (b.gpus == TP_UNSET && in->gpus)
        b.gpus = in->gpus;
    if (b.gbs == TP_UNSET && in->global_batch)
        b.gbs = (int64_t)in->global_batch;
    if (b.seq == TP_UNSET && in->seq)
        b.seq = (int64_t)in->seq;
    if (b.mbs == TP_UNSET && in->micro_batch)
        b.mbs = (int64_t)in->micro_batch;
    const struct {
        int64_t *dst;
        uint32_t v;
    } dims[] = {{&b.tp, in->tp}, {&b.pp, in->pp}, {&b.dp, in->dp}, {&b.cp, in->cp}};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        if (*dims[i].dst == TP_UNSET && dims[i].v)
            *dims[i].dst = dims[i].v;
    if (b.gpus == TP_UNSET && b.dp == TP_UNSET) {
        cli_error("%s: the log does not state the GPU count: give --gpus N", r->path);
        return EXIT_USAGE;
    }
    memset(&r->run, 0, sizeof r->run);
    int rc = cli_resolve_run(&b, &r->run);
    if (rc != EXIT_OK)
        return rc;
    const struct run *run = &r->run;
    size_t u = 0;
    if (b.seq == TP_UNSET)
        u += (size_t)snprintf(r->assumed + u, sizeof r->assumed - u, "seq %llu (the model's)",
                              (unsigned long long)run->j.seq);
    if (b.gbs == TP_UNSET && b.gas == TP_UNSET && u < sizeof r->assumed)
        snprintf(r->assumed + u, sizeof r->assumed - u, "%sglobal batch %llu (mbs %u x dp %u)",
                 u ? ", " : "", (unsigned long long)run->l.mbs * run->l.gas * run->l.dp,
                 run->l.mbs, run->l.dp);
    return EXIT_OK;
}

/* Model FLOPs, MFU against the catalog peak, and the estimate's prediction for the run. */
static int model_figures(const struct tp_calib *cal, struct result *r)
{
    const struct run *run = &r->run;
    struct tp_flops f;
    struct tp_error err = {{0}, {0}};
    if (tp_flops_per_token(&run->m, run->j.seq, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0, &f,
                           &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    r->modelled = true;
    r->flops_per_token = f.model;
    double peak = tp_job_peak_flops(&run->c, &run->j);
    r->peak_tflops = peak / 1e12;
    r->model_tflops = r->st.tokens_per_s_per_gpu * f.model / 1e12;
    r->mfu = tp_mfu(f.model, r->st.tokens_per_s_per_gpu, peak);
    struct tp_eval_opts o;
    tp_eval_opts_init(&o);
    static struct tp_evaluation ev;
    tp_evaluate(&run->m, &run->c, &run->j, &run->l, cal, &o, &ev, NULL);
    r->pred = ev.time;
    r->pred_mem_gib = ev.memory.total_bytes / 1073741824.0;
    return EXIT_OK;
}

static int evaluate(const struct cli_args *a, const struct tp_calib *cal, struct result *r,
                    size_t index)
{
    char *text = NULL;
    size_t len = 0;
    int rc = read_all(r->path, &text, &len);
    if (rc != EXIT_OK)
        return rc;
    struct tp_error err = {{0}, {0}};
    enum tp_log_format hint = (enum tp_log_format)a->log_format;
    enum tp_status st = tp_log_parse(text, len, hint, NULL, 0, &r->info, &err);
    struct tp_log_step *steps = NULL;
    size_t n = r->info.n_steps;
    if (st == TP_OK && n > 0) {
        steps = calloc(n, sizeof *steps);
        st = steps ? tp_log_parse(text, len, hint, steps, n, &r->info, &err)
                   : (snprintf(err.msg, sizeof err.msg, "out of memory"), TP_ENOMEM);
    }
    free(text);
    if (st != TP_OK) {
        free(steps);
        cli_error("%s: %s", r->path, err.msg);
        return EXIT_USAGE;
    }
    bool model = a->model || tp_shape_any(&a->shape);
    if (model && (rc = resolve_logged_run(a, r)) != EXIT_OK) {
        free(steps);
        return rc;
    }
    struct tp_log_steady_opts o;
    tp_log_steady_opts_init(&o);
    if (a->skip_warmup != TP_UNSET)
        o.skip_warmup = a->skip_warmup;
    if (a->gpus != TP_UNSET)
        o.gpus = (uint32_t)a->gpus;
    else if (model)
        o.gpus = r->run.c.n_gpus;
    if (a->gbs != TP_UNSET)
        o.global_batch = (uint64_t)a->gbs;
    if (a->seq != TP_UNSET)
        o.seq = (uint64_t)a->seq;
    st = tp_log_steady_state(steps, n, &r->info, &o, &r->st, &err);
    if (st == TP_OK && index == 0 && a->svg)
        rc = plot_logs(a->svg, base_name(r->path), steps, n, &r->st);
    free(steps);
    if (st != TP_OK) {
        cli_error("%s: %s", r->path, err.msg);
        return EXIT_USAGE;
    }
    if (rc != EXIT_OK)
        return rc;
    const struct tp_log_steady *s = &r->st;
    r->steps = r->train_s = r->gpu_hours = r->cost = NAN;
    if (a->tokens > 0) {
        if (!isfinite(s->tokens_per_s) && r->info.n_implausible) {
            cli_error("%s: --tokens needs the throughput in tokens/s, and the log's step times "
                      "or rates are implausible (%zu negative, zero, non-finite or impossible "
                      "figures dropped)", r->path, r->info.n_implausible);
            return EXIT_USAGE;
        }
        if (!isfinite(s->tokens_per_s)) {
            cli_error("%s: --tokens needs the throughput in tokens/s, which this log does not "
                      "give: add --gbs and --seq (tokens per step) or --gpus", r->path);
            return EXIT_USAGE;
        }
        r->train_s = a->tokens / s->tokens_per_s;
        if (s->tokens_per_step > 0)
            r->steps = tp_budget_steps(a->tokens, s->tokens_per_step);
        if (s->gpus)
            r->gpu_hours = tp_gpu_hours(r->train_s, s->gpus);
        if (a->price >= 0 && isfinite(r->gpu_hours))
            r->cost = r->gpu_hours * a->price;
    }
    if (model && (rc = model_figures(cal, r)) != EXIT_OK)
        return rc;
    if (a->row_out) {
        if (!isfinite(s->tokens_per_s_per_gpu)) {
            cli_error("%s: tokens/s per GPU is unknown, so no runs-file row: give --gbs and --seq "
                      "(tokens per step) or --gpus", r->path);
            return EXIT_USAGE;
        }
        snprintf(r->row_id, sizeof r->row_id, "logs:%zu:%s", index + 1, base_name(r->path));
    }
    return EXIT_OK;
}

static int write_rows(const char *out, const struct result *res, size_t n)
{
    char *text = NULL;
    size_t used = 0;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const struct result *r = &res[i];
        char note[224] = "";
        if (r->assumed[0])
            snprintf(note, sizeof note, "assumed by trainplan logs: %s", r->assumed);
        struct tp_log_row row = {r->row_id, r->path, note, &r->run.m, &r->run.c, &r->run.j,
                                 &r->run.l, &r->info, &r->st};
        size_t need = tp_log_runs_csv(&row, i == 0, NULL, 0);
        char *grown = realloc(text, used + need + 1);
        ok = grown != NULL;
        if (ok) {
            text = grown;
            tp_log_runs_csv(&row, i == 0, text + used, need + 1);
            used += need;
        }
    }
    char what[4200];
    snprintf(what, sizeof what, "--row-out %s", out);
    int rc = ok ? out_write(what, out, text ? text : "", used) : EXIT_USAGE;
    if (!ok)
        cli_error("--row-out %s: out of memory", out);
    free(text);
    return rc;
}

/* ----------------------------------------------------------------------------------------- */
/* Table                                                                                      */
/* ----------------------------------------------------------------------------------------- */

static void print_stated(const struct tp_log_info *in)
{
    char line[256] = "";
    size_t u = 0;
#define ADD(...)                                                                                  \
    do {                                                                                          \
        if (u < sizeof line)                                                                      \
            u += (size_t)snprintf(line + u, sizeof line - u, __VA_ARGS__);                        \
    } while (0)
    if (in->gpus)
        ADD("%u GPUs", in->gpus);
    if (in->tp || in->pp || in->dp)
        ADD("%s(tp %u, pp %u, dp %u%s)", u ? " " : "", in->tp, in->pp, in->dp,
            in->cp > 1 ? ", cp" : "");
    if (in->global_batch && in->seq) {
        char t[32];
        fmt_si(t, sizeof t, in->tokens_per_step);
        ADD("%sglobal batch %llu x seq %llu = %s tokens per step", u ? "; " : "",
            (unsigned long long)in->global_batch, (unsigned long long)in->seq, t);
    } else if (in->tokens_per_step > 0) {
        char t[32];
        fmt_si(t, sizeof t, in->tokens_per_step);
        ADD("%s%s tokens per step", u ? "; " : "", t);
    } else if (in->global_batch) {
        ADD("%sglobal batch %llu", u ? "; " : "", (unsigned long long)in->global_batch);
    }
    if (in->total_steps)
        ADD("%s%llu steps planned", u ? "; " : "", (unsigned long long)in->total_steps);
#undef ADD
    printf("stated       %s\n", u ? line : "no GPU count or batch (--gpus, --gbs, --seq supply them)");
}

/* Which log, what it states, the steps used and the rule that chose them. */
static void print_steps(const struct result *r)
{
    const struct tp_log_info *in = &r->info;
    const struct tp_log_steady *s = &r->st;
    printf("log          %s\n", r->path);
    printf("format       %s (%s)\n", tp_log_format_name(in->format),
           tp_log_format_label(in->format));
    print_stated(in);
    if (s->from_summary) {
        printf("steps        %zu logged, none with a step time or rate\n", s->n_steps);
    } else {
        printf("steps        %zu logged: %zu warm-up skipped, %zu outlier%s dropped, %zu used "
               "(iterations %llu-%llu)\n", s->n_steps, s->n_warmup, s->n_outliers,
               s->n_outliers == 1 ? "" : "s", s->n_used, (unsigned long long)s->first_step,
               (unsigned long long)s->last_step);
    }
    if (in->n_implausible)
        printf("implausible  %zu figure%s dropped before the steady state: negative, zero or "
               "non-finite\n             times or rates, MFU above 100%%, TFLOP/s or memory "
               "beyond any catalog GPU\n", in->n_implausible, in->n_implausible == 1 ? "" : "s");
    const char *split = strstr(s->rule, "; outliers:");
    if (split)
        printf("rule         %.*s;\n             %s\n", (int)(split - s->rule), s->rule, split + 2);
    else
        printf("rule         %s\n", s->rule);
}

/* The steady state the log gives. */
static void print_steady(const struct result *r)
{
    const struct tp_log_info *in = &r->info;
    const struct tp_log_steady *s = &r->st;
    printf("\nsteady state%s\n", s->from_summary ? " (the Trainer's summary: whole run)" : "");
    if (isfinite(s->step_s_median))
        printf("  %-20s %.4f s median, %.4f s mean\n", "step time", s->step_s_median,
               s->step_s_mean);
    else if (isfinite(s->step_s_mean))
        printf("  %-20s %.4f s%s\n", "step time", s->step_s_mean,
               s->step_time_derived ? " (tokens per step / tokens/s)" : " (mean)");
    if (isfinite(s->tokens_per_s) || isfinite(s->tokens_per_s_per_gpu)) {
        char tot[32] = "unknown", gpu[48];
        if (isfinite(s->tokens_per_s))
            fmt_si(tot, sizeof tot, s->tokens_per_s);
        printf("  %-20s %s in total", "tokens/s", tot);
        if (isfinite(s->tokens_per_s_per_gpu)) {
            fmt_count(gpu, sizeof gpu, (uint64_t)llround(s->tokens_per_s_per_gpu));
            printf(", %s per GPU", gpu);
            if (s->gpus)
                printf(" (%u GPUs)", s->gpus);
        } else {
            printf(" (per GPU: give --gpus N)");
        }
        printf("\n");
    } else if (isfinite(s->step_s_mean)) {
        printf("  %-20s unknown: give --gbs and --seq (the log does not state the tokens per "
               "step)\n", "tokens/s");
    }
    if (isfinite(s->samples_per_s))
        printf("  %-20s %.2f\n", "samples/s", s->samples_per_s);
    printf("  %-20s %s\n", "from", s->how);
    if (isfinite(s->tflops_per_gpu))
        printf("  %-20s %.1f (as the %s log counts them)\n", "TFLOP/s per GPU", s->tflops_per_gpu,
               tp_log_format_name(in->format));
    if (isfinite(s->mfu))
        printf("  %-20s %.1f%% (as the %s log counts it)\n", "MFU", 100 * s->mfu,
               tp_log_format_name(in->format));
    if (isfinite(s->mem_gib))
        printf("  %-20s %.2f GiB per GPU\n", "peak memory", s->mem_gib);
    if (isfinite(s->loss_last))
        printf("  %-20s %.4f (last step used)\n", "loss", s->loss_last);

}

/* The modelled run next to the log: FLOPs, MFU, the estimate and memory. */
static void print_modelled(const struct cli_args *a, const struct result *r)
{
    const struct tp_log_steady *s = &r->st;
    if (r->modelled) {
        const struct run *run = &r->run;
        printf("\nmodel        %s [%s], %u x %s, seq %llu\n", run->m.name, run->m.family,
               run->c.n_gpus, run->c.gpu.label, (unsigned long long)run->j.seq);
        if (isfinite(r->model_tflops))
            printf("             %.2f GFLOP per token (exact matmuls, causal attention) -> %.1f "
                   "TFLOP/s per GPU, MFU %.1f%% of %.0f TFLOP/s\n",
                   r->flops_per_token / 1e9, r->model_tflops, 100 * r->mfu, r->peak_tflops);
        if (r->assumed[0])
            printf("assumed      %s: not in the log, give --seq / --gbs\n", r->assumed);
        char pg[32];
        fmt_count(pg, sizeof pg, (uint64_t)llround(r->pred.tokens_per_s_per_gpu));
        printf("estimate     %s tokens/s per GPU, step %.4f s (%s)", pg, r->pred.step_s,
               a->calibration ? a->calibration : "built-in calibration");
        if (isfinite(s->tokens_per_s_per_gpu) && r->pred.tokens_per_s_per_gpu > 0)
            printf(": predicted/measured %+.1f%%",
                   100 * (r->pred.tokens_per_s_per_gpu / s->tokens_per_s_per_gpu - 1));
        printf("\nmemory       %.2f GiB per GPU predicted (worst stage)", r->pred_mem_gib);
        if (isfinite(s->mem_gib))
            printf(", %.2f GiB measured peak", s->mem_gib);
        printf("\n");
    }
}

static void print_one(const struct cli_args *a, const struct result *r)
{
    print_steps(r);
    print_steady(r);
    if (a->tokens > 0) {
        char tk[32], wall[32];
        fmt_si(tk, sizeof tk, a->tokens);
        fmt_duration(wall, sizeof wall, r->train_s);
        printf("\nto train %s tokens: ", tk);
        if (isfinite(r->steps)) {
            char st[32];
            fmt_count(st, sizeof st, (uint64_t)r->steps);
            printf("%s steps, ", st);
        }
        printf("%s wall-clock", wall);
        if (isfinite(r->gpu_hours))
            printf(", %.1f GPU-hours", r->gpu_hours);
        if (isfinite(r->cost))
            printf(", cost %.2f", r->cost);
        printf("\n");
    }
    print_modelled(a, r);
    if (r->row_id[0])
        printf("row          %s written to %s\n", r->row_id, a->row_out);
}

/* ----------------------------------------------------------------------------------------- */
/* JSON and CSV                                                                               */
/* ----------------------------------------------------------------------------------------- */

static json_t *jreal(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *jcount(uint64_t v)
{
    return v ? json_integer((json_int_t)v) : json_null();
}

/* What the log states of the run. */
static json_t *stated_json(const struct tp_log_info *in)
{
    json_t *stated = json_object();
    json_object_set_new(stated, "gpus", jcount(in->gpus));
    json_object_set_new(stated, "tp", jcount(in->tp));
    json_object_set_new(stated, "pp", jcount(in->pp));
    json_object_set_new(stated, "dp", jcount(in->dp));
    json_object_set_new(stated, "cp", jcount(in->cp));
    json_object_set_new(stated, "global_batch", jcount(in->global_batch));
    json_object_set_new(stated, "micro_batch", jcount(in->micro_batch));
    json_object_set_new(stated, "seq", jcount(in->seq));
    json_object_set_new(stated, "tokens_per_step",
                        in->tokens_per_step > 0 ? json_real(in->tokens_per_step) : json_null());
    json_object_set_new(stated, "total_steps", jcount(in->total_steps));
    return stated;
}

/* The Hugging Face Trainer's end-of-run summary, or null. */
static json_t *hf_summary_json(const struct tp_log_info *in)
{
    if (!isfinite(in->train_runtime_s))
        return json_null();
    json_t *h = json_object();
    json_object_set_new(h, "train_runtime_s", jreal(in->train_runtime_s));
    json_object_set_new(h, "train_samples_per_s", jreal(in->train_samples_per_s));
    json_object_set_new(h, "train_steps_per_s", jreal(in->train_steps_per_s));
    json_object_set_new(h, "train_tokens_per_s_per_gpu", jreal(in->train_tokens_per_s_per_gpu));
    json_object_set_new(h, "train_loss", jreal(in->train_loss));
    return h;
}

/* The modelled run next to the log, or null. */
static json_t *model_json(const struct cli_args *a, const struct result *r)
{
    if (!r->modelled)
        return json_null();
    const struct run *run = &r->run;
    json_t *m = json_object();
    json_object_set_new(m, "name", json_string(run->m.name));
    json_object_set_new(m, "gpu", json_string(run->c.gpu.key));
    json_object_set_new(m, "gpus", json_integer(run->c.n_gpus));
    json_object_set_new(m, "seq", json_integer((json_int_t)run->j.seq));
    json_object_set_new(m, "layout", tp_json_layout(&run->l));
    json_object_set_new(m, "model_flops_per_token", json_real(r->flops_per_token));
    json_object_set_new(m, "model_tflops_per_gpu", jreal(r->model_tflops));
    json_object_set_new(m, "mfu", jreal(r->mfu));
    json_object_set_new(m, "predicted_tokens_per_s_per_gpu",
                        jreal(r->pred.tokens_per_s_per_gpu));
    json_object_set_new(m, "predicted_step_time_s", jreal(r->pred.step_s));
    json_object_set_new(m, "predicted_mem_gib", jreal(r->pred_mem_gib));
    json_object_set_new(m, "calibration",
                        json_string(a->calibration ? a->calibration : "built-in defaults"));
    json_object_set_new(m, "assumed", json_string(r->assumed));
    return m;
}

static json_t *result_json(const struct cli_args *a, const struct result *r)
{
    const struct tp_log_info *in = &r->info;
    const struct tp_log_steady *s = &r->st;
    json_t *o = json_object();
    json_object_set_new(o, "file", json_string(r->path));
    json_object_set_new(o, "format", json_string(tp_log_format_name(in->format)));
    json_object_set_new(o, "format_label", json_string(tp_log_format_label(in->format)));
    json_object_set_new(o, "stated", stated_json(in));
    json_object_set_new(o, "steps_logged", json_integer((json_int_t)s->n_steps));
    json_object_set_new(o, "first_step", s->n_used && !s->from_summary
                                             ? json_integer((json_int_t)s->first_step)
                                             : json_null());
    json_object_set_new(o, "last_step", s->n_used && !s->from_summary
                                            ? json_integer((json_int_t)s->last_step)
                                            : json_null());
    json_object_set_new(o, "warmup_skipped", json_integer((json_int_t)s->n_warmup));
    json_object_set_new(o, "outliers", json_integer((json_int_t)s->n_outliers));
    json_object_set_new(o, "implausible_dropped", json_integer((json_int_t)in->n_implausible));
    json_object_set_new(o, "steps_used", json_integer((json_int_t)s->n_used));
    json_object_set_new(o, "outlier_basis", s->basis[0] ? json_string(s->basis) : json_null());
    json_object_set_new(o, "outlier_median", jreal(s->basis_median));
    json_object_set_new(o, "outlier_threshold", jreal(s->basis_threshold));
    json_object_set_new(o, "rule", json_string(s->rule));
    json_object_set_new(o, "from_summary", json_boolean(s->from_summary));
    json_object_set_new(o, "how", json_string(s->how));
    json_object_set_new(o, "step_time_s_median", jreal(s->step_s_median));
    json_object_set_new(o, "step_time_s_mean", jreal(s->step_s_mean));
    json_object_set_new(o, "step_time_derived", json_boolean(s->step_time_derived));
    json_object_set_new(o, "tokens_per_s", jreal(s->tokens_per_s));
    json_object_set_new(o, "tokens_per_s_per_gpu", jreal(s->tokens_per_s_per_gpu));
    json_object_set_new(o, "samples_per_s", jreal(s->samples_per_s));
    json_object_set_new(o, "tflops_per_gpu", jreal(s->tflops_per_gpu));
    json_object_set_new(o, "mfu", jreal(s->mfu));
    json_object_set_new(o, "peak_mem_gib", jreal(s->mem_gib));
    json_object_set_new(o, "loss_last", jreal(s->loss_last));
    json_object_set_new(o, "gpus", jcount(s->gpus));
    json_object_set_new(o, "tokens_per_step",
                        s->tokens_per_step > 0 ? json_real(s->tokens_per_step) : json_null());
    json_object_set_new(o, "hf_summary", hf_summary_json(in));
    json_object_set_new(o, "train_tokens", a->tokens > 0 ? json_real(a->tokens) : json_null());
    json_object_set_new(o, "train_steps", jreal(r->steps));
    json_object_set_new(o, "train_time_s", jreal(r->train_s));
    json_object_set_new(o, "gpu_hours", jreal(r->gpu_hours));
    json_object_set_new(o, "cost", jreal(r->cost));
    json_object_set_new(o, "model", model_json(a, r));
    json_object_set_new(o, "row_id", r->row_id[0] ? json_string(r->row_id) : json_null());
    return o;
}

static void csv_num(double v, bool last)
{
    if (isfinite(v))
        printf("%.10g", v);
    putchar(last ? '\n' : ',');
}

static void print_csv(const struct result *res, size_t n)
{
    printf("file,format,steps_logged,warmup_skipped,outliers,steps_used,step_time_s_median,"
           "step_time_s_mean,tokens_per_s,tokens_per_s_per_gpu,samples_per_s,tflops_per_gpu,mfu,"
           "peak_mem_gib,loss_last,gpus,tokens_per_step,train_time_s,gpu_hours,cost\n");
    for (size_t i = 0; i < n; i++) {
        const struct result *r = &res[i];
        const struct tp_log_steady *s = &r->st;
        csv_fwrite(stdout, r->path, strlen(r->path));
        printf(",%s,%zu,%zu,%zu,%zu,", tp_log_format_name(r->info.format), s->n_steps,
               s->n_warmup, s->n_outliers, s->n_used);
        csv_num(s->step_s_median, false);
        csv_num(s->step_s_mean, false);
        csv_num(s->tokens_per_s, false);
        csv_num(s->tokens_per_s_per_gpu, false);
        csv_num(s->samples_per_s, false);
        csv_num(s->tflops_per_gpu, false);
        csv_num(s->mfu, false);
        csv_num(s->mem_gib, false);
        csv_num(s->loss_last, false);
        csv_num(s->gpus ? s->gpus : NAN, false);
        csv_num(s->tokens_per_step > 0 ? s->tokens_per_step : NAN, false);
        csv_num(r->train_s, false);
        csv_num(r->gpu_hours, false);
        csv_num(r->cost, true);
    }
}

int cmd_logs(int argc, char **argv)
{
    struct cli_args a;
    int rc = cli_begin(argc, argv, CMD_LOGS, &a, help);
    if (rc >= 0)
        return rc;
    if (a.n_files == 0) {
        cli_error("no log file given (usage: trainplan logs FILE... [options]; see trainplan "
                  "logs --help)");
        return EXIT_USAGE;
    }
    bool model = a.model || tp_shape_any(&a.shape);
    if (a.row_out && !model) {
        cli_error("--row-out needs the model (--model MODEL) and the GPU (--gpu NAME) of the run");
        return EXIT_USAGE;
    }
    if (model && !a.gpu) {
        cli_error("--model needs --gpu NAME: the GPU the log was measured on");
        return EXIT_USAGE;
    }
    if (a.price >= 0 && !(a.tokens > 0)) {
        cli_error("--gpu-hour-price needs a token budget (--tokens N)");
        return EXIT_USAGE;
    }
    static struct tp_calib cal;
    tp_calib_init(&cal);
    if (a.calibration) {
        struct tp_error err = {{0}, {0}};
        if (tp_calib_from_file(a.calibration, &cal, &err) != TP_OK) {
            cli_error_field(&err);
            return EXIT_USAGE;
        }
    }
    struct result *res = calloc(a.n_files, sizeof *res);
    if (!res) {
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    rc = EXIT_OK;
    for (size_t i = 0; i < a.n_files && rc == EXIT_OK; i++) {
        res[i].path = a.files[i];
        rc = evaluate(&a, &cal, &res[i], i);
    }
    if (rc == EXIT_OK && a.row_out)
        rc = write_rows(a.row_out, res, a.n_files);
    if (rc != EXIT_OK) {
        free(res);
        return rc;
    }
    if (a.format == FMT_JSON) {
        json_t *list = json_array();
        for (size_t i = 0; i < a.n_files; i++)
            json_array_append_new(list, result_json(&a, &res[i]));
        rc = cli_print_json(json_pack("{s:i, s:s, s:o}", "schema_version", TP_SCHEMA_VERSION,
                                      "command", "logs", "logs", list),
                            10);
    } else if (a.format == FMT_CSV) {
        print_csv(res, a.n_files);
    } else {
        printf("trainplan %s - logs\n", TP_VERSION);
        for (size_t i = 0; i < a.n_files; i++) {
            printf("\n");
            print_one(&a, &res[i]);
        }
    }
    free(res);
    return rc == EXIT_OK ? cli_finish(EXIT_OK) : rc;
}
