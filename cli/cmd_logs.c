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
           "--seq) gives the tokens per step; the GPU count comes from the log or --gpus.\n"
           "Notes say when the answer changes basis: slots/s in place of the log's own rate,\n"
           "which peak memory (max reserved or allocated), and a logged TFLOP/s outside 3/4..4/3\n"
           "of what --model implies (JSON: notes[], peak_mem_kind, tokens_basis).\n\n"
           "With --model and --gpu (and the layout flags the log does not state): model FLOPs per\n"
           "token, MFU against the catalog peak, and `trainplan estimate`'s prediction for the same\n"
           "run; --row-out FILE writes one runs-file row per log (validation/runs format) for\n"
           "`trainplan validate` and `trainplan calibrate`.\n\n"
           "options:\n");
    cli_print_options(stdout, CMD_LOGS);
    printf("\nexit status: 0 success; 2 usage, input or I/O error (unknown format, no step lines).\n");
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int evaluate(const struct cli_args *a, const struct tp_calib *cal, struct tp_logs_result *r,
                    size_t index)
{
    struct tp_log_step *steps;
    size_t n;
    struct tp_error err = {{0}, {0}};
    if (tp_logs_result_eval(a, cal, r, index, &steps, &n, &err) != TP_OK) {
        free(steps);
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    int rc = index == 0 && a->svg ? plot_logs(a->svg, base_name(r->path), steps, n, &r->st)
                                  : EXIT_OK;
    free(steps);
    return rc;
}

static int write_rows(const char *out, const struct tp_logs_result *res, size_t n)
{
    char *text = NULL;
    size_t used = 0;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const struct tp_logs_result *r = &res[i];
        char note[224] = "";
        if (r->assumed[0])
            snprintf(note, sizeof note, "assumed by trainplan logs: %s", r->assumed);
        struct tp_log_row row = {r->row_id, r->path, note, &r->m, &r->c, &r->j,
                                 &r->l, &r->info, &r->st};
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
static void print_steps(const struct tp_logs_result *r)
{
    const struct tp_log_info *in = &r->info;
    const struct tp_log_steady *s = &r->st;
    printf("log          %s\n", cli_escape(r->path));
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
static void print_steady(const struct tp_logs_result *r)
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
    if (isfinite(s->mem_gib)) {
        printf("  %-20s %.2f GiB per GPU", "peak memory", s->mem_gib);
        if (s->mem_kind) { /* the kind without its source: "max reserved" */
            size_t k = strcspn(s->mem_kind, "(");
            while (k > 0 && s->mem_kind[k - 1] == ' ')
                k--;
            printf(" (%.*s)", (int)k, s->mem_kind);
        }
        if (isfinite(s->mem_alloc_gib))
            printf("; %.2f GiB max allocated", s->mem_alloc_gib);
        printf("\n");
    }
    if (isfinite(s->loss_last))
        printf("  %-20s %.4f (last step used)\n", "loss", s->loss_last);

}

/* The modelled run next to the log: FLOPs, MFU, the estimate and memory. */
static void print_modelled(const struct cli_args *a, const struct tp_logs_result *r)
{
    const struct tp_log_steady *s = &r->st;
    if (r->modelled) {
        printf("\nmodel        %s [%s], %u x %s, seq %llu\n", r->m.name, r->m.family,
               r->c.n_gpus, r->c.gpu.label, (unsigned long long)r->j.seq);
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
        if (isfinite(s->mem_alloc_gib))
            printf(", %.2f GiB measured peak allocated (%.2f reserved)", s->mem_alloc_gib,
                   s->mem_gib);
        else if (isfinite(s->mem_gib))
            printf(", %.2f GiB measured peak", s->mem_gib);
        printf("\n");
    }
}

static void print_one(const struct cli_args *a, const struct tp_logs_result *r)
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
    char notes[TP_LOGS_MAX_NOTES][TP_LOGS_NOTE_LEN];
    size_t n = tp_logs_notes(r, notes, false); /* the peak memory line says its kind */
    for (size_t i = 0; i < n; i++)
        printf("%s %s\n", i ? "           " : "\nnote       ", notes[i]);
    if (r->row_id[0])
        printf("row          %s written to %s\n", cli_escape(r->row_id), cli_escape(a->row_out));
}

/* ----------------------------------------------------------------------------------------- */
/* JSON and CSV                                                                               */
/* ----------------------------------------------------------------------------------------- */

static void csv_num(double v, bool last)
{
    if (isfinite(v))
        printf("%.10g", v);
    putchar(last ? '\n' : ',');
}

static void print_csv(const struct tp_logs_result *res, size_t n)
{
    printf("file,format,steps_logged,warmup_skipped,outliers,steps_used,step_time_s_median,"
           "step_time_s_mean,tokens_per_s,tokens_per_s_per_gpu,samples_per_s,tflops_per_gpu,mfu,"
           "peak_mem_gib,loss_last,gpus,tokens_per_step,train_time_s,gpu_hours,cost,"
           "peak_mem_kind,notes\n");
    for (size_t i = 0; i < n; i++) {
        const struct tp_logs_result *r = &res[i];
        const struct tp_log_steady *s = &r->st;
        const char *shown = cli_escape(r->path);
        csv_fwrite(stdout, shown, strlen(shown));
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
        csv_num(r->cost, false);
        const char *kind = s->mem_kind ? s->mem_kind : "";
        csv_fwrite(stdout, kind, strlen(kind));
        char notes[TP_LOGS_MAX_NOTES][TP_LOGS_NOTE_LEN], joined[TP_LOGS_MAX_NOTES * TP_LOGS_NOTE_LEN + 8] = "";
        size_t nn = tp_logs_notes(r, notes, true), at = 0;
        for (size_t k = 0; k < nn; k++) {
            int w = snprintf(joined + at, sizeof joined - at, "%s%s", k ? "; " : "", notes[k]);
            at += w > 0 ? (size_t)w : 0;
        }
        printf(",");
        csv_fwrite(stdout, joined, strlen(joined));
        printf("\n");
    }
}

int cmd_logs(int argc, char **argv)
{
    struct cli_args a;
    int rc = cli_begin(argc, argv, CMD_LOGS, &a, help);
    if (rc >= 0)
        return rc;
    struct tp_error cerr = {{0}, {0}};
    if (tp_logs_check(&a, &cerr) != TP_OK) {
        cli_error_field(&cerr);
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
    struct tp_logs_result *res = calloc(a.n_files, sizeof *res);
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
        rc = cli_print_json(tp_json_logs(&a, res, a.n_files), 10);
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
