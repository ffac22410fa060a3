/*
 * call_logs.c - `logs` as results: each log read, parsed (tp_log_parse), its steady state
 * (tp_log_steady_state), the time a token budget takes and, with the model and cluster
 * described, model FLOPs, MFU and the estimate's prediction for the run; and the document
 * `trainplan logs --format json` prints.  The CLI renders its table, CSV, plot and runs-file
 * rows from the same results; bindings get the document (tp_call_runs_json).
 */
#include "api_internal.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_LOG_BYTES = 1 << 30 };

/* Reads a whole file (at most 1 GiB). */
static enum tp_status read_all(const char *path, char **out, size_t *len, struct tp_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tp_fail(err, TP_EIO, "%s: %s", path, strerror(errno));
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
                return tp_fail(err, TP_EINVAL, "%s: larger than 1 GiB", path);
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
        return tp_fail(err, bad == ENOMEM ? TP_ENOMEM : TP_EIO, "%s: %s", path, strerror(bad));
    }
    *out = buf;
    *len = n;
    return TP_OK;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* An error of the log's reader, prefixed with the file. */
static enum tp_status path_fail(const char *path, enum tp_status st, struct tp_error *err)
{
    char msg[sizeof err->msg];
    tp_snprintf(msg, sizeof msg, "%s", err->msg);
    return tp_fail(err, st, "%s: %s", path, msg);
}

/* The model, cluster and layout of the logged run: the command line, and what the log states
   where the command line is silent. */
static enum tp_status resolve_logged_run(const struct tp_args *a, struct tp_logs_result *r,
                                         struct tp_error *err)
{
    struct tp_args *b = malloc(sizeof *b);
    if (!b)
        return tp_fail(err, TP_ENOMEM, "out of memory");
    *b = *a;
    const struct tp_log_info *in = &r->info;
    if (b->gpus == TP_UNSET && in->gpus)
        b->gpus = in->gpus;
    if (b->gbs == TP_UNSET && in->global_batch)
        b->gbs = (int64_t)in->global_batch;
    if (b->seq == TP_UNSET && in->seq)
        b->seq = (int64_t)in->seq;
    if (b->mbs == TP_UNSET && in->micro_batch)
        b->mbs = (int64_t)in->micro_batch;
    const struct {
        int64_t *dst;
        uint32_t v;
    } dims[] = {{&b->tp, in->tp}, {&b->pp, in->pp}, {&b->dp, in->dp}, {&b->cp, in->cp}};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        if (*dims[i].dst == TP_UNSET && dims[i].v)
            *dims[i].dst = dims[i].v;
    enum tp_status s = TP_OK;
    struct tp_request q;
    char notes[512];
    if (b->gpus == TP_UNSET && b->dp == TP_UNSET)
        s = tp_fail_field(err, TP_EINVAL, "gpus", "%s: the log does not state the GPU count: "
                          "give --gpus N", r->path);
    if (s == TP_OK)
        s = tp_args_model(b, &r->m, notes, sizeof notes, err);
    if (s == TP_OK)
        s = tp_args_request(b, &q, err);
    if (s == TP_OK)
        s = tp_request_resolve(&q, &r->m, &r->c, &r->j, &r->l, err);
    if (s != TP_OK) {
        free(b);
        return s;
    }
    size_t u = 0;
    if (b->seq == TP_UNSET)
        u += (size_t)tp_snprintf(r->assumed + u, sizeof r->assumed - u, "seq %llu (the model's)",
                              (unsigned long long)r->j.seq);
    if (b->gbs == TP_UNSET && b->gas == TP_UNSET && u < sizeof r->assumed)
        tp_snprintf(r->assumed + u, sizeof r->assumed - u, "%sglobal batch %llu (mbs %u x dp %u)",
                 u ? ", " : "", (unsigned long long)r->l.mbs * r->l.gas * r->l.dp,
                 r->l.mbs, r->l.dp);
    free(b);
    return TP_OK;
}

/* Model FLOPs, MFU against the catalog peak, and the estimate's prediction for the run. */
static enum tp_status model_figures(const struct tp_calib *cal, struct tp_logs_result *r,
                                    struct tp_error *err)
{
    struct tp_flops f;
    TRY(tp_flops_per_token(&r->m, r->j.seq, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0, &f, err));
    r->modelled = true;
    r->flops_per_token = f.model;
    double peak = tp_job_peak_flops(&r->c, &r->j);
    r->peak_tflops = peak / 1e12;
    r->model_tflops = r->st.tokens_per_s_per_gpu * f.model / 1e12;
    r->mfu = tp_mfu(f.model, r->st.tokens_per_s_per_gpu, peak);
    struct tp_eval_opts o;
    tp_eval_opts_init(&o);
    struct tp_evaluation *ev = malloc(sizeof *ev);
    if (!ev)
        return tp_fail(err, TP_ENOMEM, "out of memory");
    tp_evaluate(&r->m, &r->c, &r->j, &r->l, cal, &o, ev, NULL);
    r->pred = ev->time;
    r->pred_mem_gib = ev->memory.total_bytes / 1073741824.0;
    free(ev);
    return TP_OK;
}

enum tp_status tp_logs_result_eval(const struct tp_args *a, const struct tp_calib *cal,
                                   struct tp_logs_result *r, size_t index,
                                   struct tp_log_step **steps_out, size_t *n_steps,
                                   struct tp_error *err)
{
    *steps_out = NULL;
    *n_steps = 0;
    char *text = NULL;
    size_t len = 0;
    TRY(read_all(r->path, &text, &len, err));
    enum tp_log_format hint = (enum tp_log_format)a->log_format;
    enum tp_status st = tp_log_parse(text, len, hint, NULL, 0, &r->info, err);
    struct tp_log_step *steps = NULL;
    size_t n = r->info.n_steps;
    if (st == TP_OK && n > 0) {
        steps = calloc(n, sizeof *steps);
        st = steps ? tp_log_parse(text, len, hint, steps, n, &r->info, err)
                   : tp_fail(err, TP_ENOMEM, "out of memory");
    }
    free(text);
    if (st != TP_OK) {
        free(steps);
        return path_fail(r->path, st, err);
    }
    bool model = a->model || tp_shape_any(&a->shape);
    if (model && (st = resolve_logged_run(a, r, err)) != TP_OK) {
        free(steps);
        return st;
    }
    struct tp_log_steady_opts o;
    tp_log_steady_opts_init(&o);
    if (a->skip_warmup != TP_UNSET)
        o.skip_warmup = a->skip_warmup;
    if (a->gpus != TP_UNSET)
        o.gpus = (uint32_t)a->gpus;
    else if (model)
        o.gpus = r->c.n_gpus;
    if (a->gbs != TP_UNSET)
        o.global_batch = (uint64_t)a->gbs;
    if (a->seq != TP_UNSET)
        o.seq = (uint64_t)a->seq;
    st = tp_log_steady_state(steps, n, &r->info, &o, &r->st, err);
    if (st != TP_OK) {
        free(steps);
        return path_fail(r->path, st, err);
    }
    *steps_out = steps;
    *n_steps = n;
    const struct tp_log_steady *s = &r->st;
    r->steps = r->train_s = r->gpu_hours = r->cost = NAN;
    if (a->tokens > 0) {
        if (!isfinite(s->tokens_per_s) && r->info.n_implausible) {
            return tp_fail(err, TP_EINVAL, "%s: --tokens needs the throughput in tokens/s, and "
                           "the log's step times or rates are implausible (%zu negative, zero, "
                           "non-finite or impossible figures dropped)", r->path,
                           r->info.n_implausible);
        }
        if (!isfinite(s->tokens_per_s)) {
            return tp_fail(err, TP_EINVAL, "%s: --tokens needs the throughput in tokens/s, which "
                           "this log does not give: add --gbs and --seq (tokens per step) or "
                           "--gpus", r->path);
        }
        r->train_s = a->tokens / s->tokens_per_s;
        if (s->tokens_per_step > 0)
            r->steps = tp_budget_steps(a->tokens, s->tokens_per_step);
        if (s->gpus)
            r->gpu_hours = tp_gpu_hours(r->train_s, s->gpus);
        if (a->price >= 0 && isfinite(r->gpu_hours))
            r->cost = r->gpu_hours * a->price;
    }
    if (model)
        TRY(model_figures(cal, r, err));
    if (a->row_out) {
        if (!isfinite(s->tokens_per_s_per_gpu)) {
            return tp_fail(err, TP_EINVAL, "%s: tokens/s per GPU is unknown, so no runs-file "
                           "row: give --gbs and --seq (tokens per step) or --gpus", r->path);
        }
        tp_snprintf(r->row_id, sizeof r->row_id, "logs:%zu:%s", index + 1, base_name(r->path));
    }
    return TP_OK;
}

enum tp_status tp_logs_check(const struct tp_args *a, struct tp_error *err)
{
    if (a->n_files == 0)
        return tp_fail_field(err, TP_EINVAL, "files", "no log file given (usage: trainplan logs "
                             "FILE... [options]; see trainplan logs --help)");
    bool model = a->model || tp_shape_any(&a->shape);
    if (a->row_out && !model)
        return tp_fail(err, TP_EINVAL, "--row-out needs the model (--model MODEL) and the GPU "
                       "(--gpu NAME) of the run");
    if (model && !a->gpu)
        return tp_fail(err, TP_EINVAL, "--model needs --gpu NAME: the GPU the log was measured "
                       "on");
    if (a->price >= 0 && !(a->tokens > 0))
        return tp_fail(err, TP_EINVAL, "--gpu-hour-price needs a token budget (--tokens N)");
    return TP_OK;
}

/* Where the answer changes its basis without the user asking: up to three notes, one line
   each (tokens counted, memory kind, the model's FLOPs against the log's). */
/* Beyond 3/4..4/3 no FLOP convention explains the gap: the widest between logs is 4/3, the
   recompute forward Megatron-DeepSpeed's throughput formula counts as hardware FLOPs
   (megatron/utils.py throughput_calculator: x4 instead of x3 with checkpoint_activations). */
#define TFLOPS_AGREE_LO 0.75
#define TFLOPS_AGREE_HI (4.0 / 3.0)

size_t tp_logs_notes(const struct tp_logs_result *r, char notes[][TP_LOGS_NOTE_LEN], bool memory)
{
    const struct tp_log_steady *s = &r->st;
    size_t n = 0;
    double lg = s->logged_tokens_per_s_per_gpu;
    if (s->tokens_from_step && isfinite(lg) && isfinite(s->tokens_per_s_per_gpu) && lg > 0 &&
        fabs(s->tokens_per_s_per_gpu / lg - 1) > 0.05) {
        char slots[32], own[32];
        tp_fmt_count(slots, sizeof slots, (uint64_t)llround(s->tokens_per_s_per_gpu));
        tp_fmt_count(own, sizeof own, (uint64_t)llround(lg));
        tp_snprintf(notes[n++], TP_LOGS_NOTE_LEN,
                 "tokens/s per GPU counts slots (global batch x seq / step time): %s; the log's "
                 "own rate counts the tokens it trained on: %s (x%.2f). --seq / --gbs switched "
                 "the basis",
                 slots, own, s->tokens_per_s_per_gpu / lg);
    }
    if (memory && s->mem_kind && isfinite(s->mem_gib)) {
        if (isfinite(s->mem_alloc_gib))
            tp_snprintf(notes[n++], TP_LOGS_NOTE_LEN,
                     "peak memory is the %s, %.2f GiB; the peak allocated is %.2f GiB "
                     "(allocated counts the tensors, reserved adds the caching allocator's pool)",
                     s->mem_kind, s->mem_gib, s->mem_alloc_gib);
        else
            tp_snprintf(notes[n++], TP_LOGS_NOTE_LEN, "peak memory is the %s", s->mem_kind);
    }
    if (r->modelled && isfinite(s->tflops_per_gpu) && r->model_tflops > 0) {
        double k = s->tflops_per_gpu / r->model_tflops;
        if (k < TFLOPS_AGREE_LO || k > TFLOPS_AGREE_HI)
            tp_snprintf(notes[n++], TP_LOGS_NOTE_LEN,
                     "the log's %.1f TFLOP/s per GPU is %.2fx what the model implies (%.1f from "
                     "%s at the measured tokens/s): the model may be wrong (another size or "
                     "shape), or the log counts tokens otherwise; no FLOP convention differs by "
                     "more than 4/3",
                     s->tflops_per_gpu, k, r->model_tflops, r->m.name);
    }
    return n;
}

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
static json_t *model_json(const struct tp_args *a, const struct tp_logs_result *r)
{
    if (!r->modelled)
        return json_null();
    json_t *m = json_object();
    json_object_set_new(m, "name", json_string(r->m.name));
    json_object_set_new(m, "gpu", json_string(r->c.gpu.key));
    json_object_set_new(m, "gpus", json_integer(r->c.n_gpus));
    json_object_set_new(m, "seq", json_integer((json_int_t)r->j.seq));
    json_object_set_new(m, "layout", tp_json_layout(&r->l));
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

static json_t *result_json(const struct tp_args *a, const struct tp_logs_result *r)
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
    json_object_set_new(o, "peak_mem_kind", s->mem_kind ? json_string(s->mem_kind) : json_null());
    json_object_set_new(o, "peak_mem_allocated_gib", jreal(s->mem_alloc_gib));
    json_object_set_new(o, "tokens_basis", json_string(s->tokens_from_step ? "slots" : "logged"));
    json_object_set_new(o, "logged_tokens_per_s_per_gpu", jreal(s->logged_tokens_per_s_per_gpu));
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
    char notes[TP_LOGS_MAX_NOTES][TP_LOGS_NOTE_LEN];
    size_t n = tp_logs_notes(r, notes, true);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, json_string(notes[i]));
    json_object_set_new(o, "notes", arr);
    return o;
}

json_t *tp_json_logs(const struct tp_args *a, const struct tp_logs_result *res, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++)
        json_array_append_new(list, result_json(a, &res[i]));
    return list ? json_pack("{s:i, s:s, s:o}", "schema_version", TP_SCHEMA_VERSION, "command",
                            "logs", "logs", list)
                : NULL;
}
