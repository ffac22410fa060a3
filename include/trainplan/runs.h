/*
 * trainplan/runs.h - measured runs and the calibration: the runs-file rows, loading them,
 * validation against predictions, the calibration fit and training logs.
 *
 * Part of the public API; include "trainplan.h" for all of it.
 */
#ifndef TRAINPLAN_RUNS_H
#define TRAINPLAN_RUNS_H

#include "results.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------------------------------- */
/* Measured runs (the runs-file format of validation/runs/README.md)                          */
/* ----------------------------------------------------------------------------------------- */

/* One measured run mapped to model, cluster, job and layout.  Measured figures are NaN when
   the row does not give them. */
struct tp_run {
    char row_id[96];
    char source[96];        /* the file's source key (row_id before ':') */
    char release[32];       /* source_version_or_date as given (a container release, a date) */
    char framework_key[24];
    char assumptions[512];  /* defaults the mapper had to assume, ';'-separated */
    struct tp_model model;
    struct tp_cluster cluster;
    struct tp_job job;
    struct tp_layout layout;
    double tokens_per_s_per_gpu, step_time_s, tflops_per_gpu, mfu, hfu;
    double samples_per_s;   /* sequences per second, all GPUs (NaN: not given) */
    double wall_clock_h, total_tokens; /* a whole run: hours and tokens (NaN: not given) */
    char tflops_convention[24]; /* how tflops_per_gpu / mfu count FLOPs (runs README) */
    double global_batch;    /* sequences per step as mapped (mbs * gas * dp) */
    double mem_gib;         /* measured peak memory per GPU (GiB as the source prints it) */
    enum tp_mem_kind mem_kind; /* which memory mem_gib is (the mem_kind column) */
    bool oom;
    bool duplicate;         /* dup_of is set: the same measurement as another row */
    bool gas_unknown;       /* grad_accum was empty (derived from global_batch, else 1) */
    bool mbs_unknown;       /* micro_batch was empty (derived or assumed 1) */
    bool layout_searched;   /* tp, pp and dp were empty: the layout is the fastest tp_search
                               finds under the row's stated constraints (an assumption:
                               validate marks it, calibrate does not fit the row) */
    bool heads_assumed;     /* n_heads was empty: hidden / 128 assumed (validate marks it,
                               calibrate does not fit the row) */
};

/* Maps one row, given as parallel arrays of column names and cell texts (empty = unknown), to
   a run.  Columns are found by name, in any order; extra columns are ignored.  A row that
   cannot be mapped returns TP_EINVAL / TP_EUNSUPPORTED with the reason naming the column (e.g.
   "seq_len is empty", "precision \"notfp8\" is not a known value (...)", "global_batch 16
   differs from micro_batch x grad_accum x dp = ...", "mfu 45 is not a fraction of the peak"):
   numbers must be plain decimals, enumerated cells whole known values, booleans 1/0/true/false,
   cells must agree and measured figures be possible on the row's GPU. */
TP_API enum tp_status tp_run_from_row(const char *const *cols, const char *const *cells, size_t n,
                               struct tp_run *out, struct tp_error *err);

/* FLOPs per token that a TFLOP/s convention of the runs file counts for this model at sequence
   length `seq` ("megatron-hfu-2021", "korthikanti-mfu", "megatron-core", "nemo-model",
   "llm-foundry", "torchtitan", "dgxc-formula"); 0 for "other", empty or unknown names. */
TP_API double tp_convention_flops_per_token(const struct tp_model *m, uint64_t seq, const char *conv);

/* The run's measured throughput in tokens/s per GPU: the row's own figure, else its step time
   over the mapped batch, else its TFLOP/s (or MFU times the dense 16-bit peak) divided by its
   convention's FLOPs per token.  NaN when none applies; `how` (may be NULL) names the route. */
TP_API double tp_run_measured_tokens_per_s(const struct tp_run *run, const char **how);
/* Whether the run rests on an assumption the fit must not learn from: a searched layout or an
   assumed head count (calibrate and the calibration benchmarks leave it out). */
TP_API bool tp_run_assumed(const struct tp_run *run);

/* Called once per data row of a runs file with the mapped run and why == NULL, or, when the
   row cannot be mapped, with the run's identity and measured figures filled and the reason in
   `why`.  Return false to stop reading. */
typedef bool (*tp_run_fn)(void *ctx, const char *path, size_t line, const struct tp_run *run,
                          const struct tp_error *why);
/* Reads a runs CSV (RFC 4180 quoting, strictly; the first line names the columns; a UTF-8
   byte-order mark is skipped) and calls `fn` for every row with the physical line it starts
   on.  A row the reader refuses before mapping (more than 256 cells, extra cells, a NUL, a
   control character or bytes that are not UTF-8) comes with `why` like an unmappable one.
   TP_EIO for an unreadable file; TP_EINVAL "PATH line N: ..." for malformed CSV (an unclosed
   quote named on the line it opened), a header naming a column twice, or no runs header
   (docs/runs-file.md, "What is refused"). */
TP_API enum tp_status tp_runs_read(const char *path, tp_run_fn fn, void *ctx, struct tp_error *err);
/* `s` with every control character (C0, DEL, C1) and every byte that is not UTF-8 written as
   \\xNN, for echoing input (row ids, names, paths, messages) to a terminal or a table; like
   snprintf, returns the length needed and truncates to len - 1. */
TP_API size_t tp_text_escape(const char *s, char *out, size_t len);

/* ----------------------------------------------------------------------------------------- */
/* Validation: predicted against measured (trainplan validate)                                 */
/* ----------------------------------------------------------------------------------------- */

/* One mapped run predicted with a calibration. */
struct tp_run_eval {
    double predicted_tokens_per_s_per_gpu;
    double measured_tokens_per_s_per_gpu; /* NaN: the row has no convertible throughput */
    const char *measured_from;  /* the row's figure: "tokens/s", "step time", "TFLOP/s", "MFU",
                                   "HFU" or "" */
    /* the same comparison in the row's own unit (step time s, TFLOP/s under the row's
       convention, MFU or HFU in %; tokens/s per GPU otherwise) */
    double predicted_native, measured_native;
    const char *native_unit;
    double err;                 /* predicted / measured tokens/s - 1 (NaN when unmeasured) */
    double predicted_step_s;
    double predicted_mem_gib;   /* worst stage, as the row's mem_kind measures it */
    double measured_mem_gib;    /* NaN when the row gives none */
    double mem_err;             /* predicted / measured - 1 */
    bool predicted_fits, measured_oom;
    enum tp_mem_verdict predicted_verdict; /* fits, tight (within the model's error), no fit */
    unsigned domain;            /* TP_DOMAIN_* flags */
    char domain_note[320];
    struct tp_range range;      /* the prediction's 80% range (tp_time_range) */
    bool in_range;              /* the measured tokens/s lies inside it */
    struct tp_time time;
};

/* Predicts one mapped run (tp_run_from_row) with `cal` and pairs it with what was measured.
   TP_EINVAL (NaN predictions) when tp_run_check() rejects the run. */
TP_API enum tp_status tp_run_evaluate(const struct tp_run *run, const struct tp_calib *cal,
                     struct tp_run_eval *out);

/* Error statistics of relative errors (predicted / measured - 1). */
struct tp_err_stats {
    size_t n;
    double median_abs, p90_abs; /* of |err|, linear interpolation between order statistics */
    double bias;                /* median of the signed errors */
};
/* `scratch` holds n doubles; NaNs in `err` are skipped. */
TP_API void tp_err_stats(const double *err, size_t n, double *scratch, struct tp_err_stats *out);

/* The spread of held-out log errors x = log(measured / predicted) as a one-way random-effects
   model, x = mu + b_source + e_row (src/fit/crossval.c; docs/calibration.md "Ranges"): mu the
   mean of the sources' means (each source weighs one), `within` the pooled standard deviation
   of e inside the sources, `tau` the standard deviation of b between them (method of moments:
   the variance of the source means less the share of `within` they carry, at least 0).
   source[i] < n numbers row i's source (tp_source_ordinals' order).  `within` is NaN when no
   source has two rows, `tau` NaN under two sources; NaN x are skipped.  TP_ENOMEM when out of
   memory. */
struct tp_range_spread {
    double mu, within, tau;
    size_t rows, sources;
};
TP_API enum tp_status tp_range_spread(const double *x, const uint32_t *source, size_t n,
                                      struct tp_range_spread *out);

/* Measured runs of one or more runs files in memory (src/readers/runs_load.c), for validate and
   calibrate. */
struct tp_skipped_row {
    char row_id[96];
    char why[640];                  /* the mapper's reason, then "(path line N)" */
};
struct tp_runs {
    struct tp_run *runs;            /* mapped rows with something measured, in file order */
    size_t n;
    struct tp_skipped_row *skipped; /* rows that could not be mapped, with the reason */
    size_t n_skipped;
    size_t duplicates;              /* rows marked dup_of (the same measurement as another) */
    size_t unmeasured;              /* mapped rows with no throughput, memory or OOM figure */
    const char *const *files;       /* the caller's file names (for messages) */
    size_t n_files;
};
/* Reads every file (tp_runs_read); on an unreadable or malformed file, TP_EIO / TP_EINVAL with
   nothing left to free.  Free with tp_runs_free. */
TP_API enum tp_status tp_runs_load(const char *const *files, size_t n_files, struct tp_runs *out,
                                   struct tp_error *err);
TP_API void tp_runs_free(struct tp_runs *r);

/* What validate groups the rows by: the row's source key, GPU key or framework key. */
enum tp_run_group { TP_GROUP_SOURCE, TP_GROUP_GPU, TP_GROUP_FRAMEWORK };
TP_API const char *tp_run_group_key(const struct tp_run *r, enum tp_run_group g);

/* Every loaded run predicted with one calibration (src/eval/validate_runs.c). */
struct tp_validation {
    const struct tp_runs *runs;
    struct tp_run_eval *ev;         /* ev[i] for runs->runs[i] */
    double *err, *scratch;          /* working memory of the statistics */
};
TP_API enum tp_status tp_validate_runs(const struct tp_runs *runs, const struct tp_calib *cal,
                                       struct tp_validation *out, struct tp_error *err);
TP_API void tp_validation_free(struct tp_validation *v);
/* Throughput errors of the rows whose group key equals `value` (NULL: every row). */
TP_API void tp_validation_stats(const struct tp_validation *v, enum tp_run_group g,
                                const char *value, struct tp_err_stats *st);
/* The groups in order of first appearance: false unless row i is the first of its group, else
   its key ("(none)" for an empty one) and the group's statistics. */
TP_API bool tp_validation_group(const struct tp_validation *v, enum tp_run_group g, size_t i,
                                const char **key, struct tp_err_stats *st);
struct tp_validation_summary {
    struct tp_err_stats throughput; /* every row */
    struct tp_err_stats memory;     /* rows with a measured peak: worst stage against it */
    size_t oom, oom_predicted;      /* OOM rows, and those predicted not to fit */
    size_t oom_tight;               /* OOM rows predicted to fit, but tight */
    size_t completed, completed_fit;/* rows that ran, and those predicted to fit */
    size_t completed_tight;         /* rows that ran predicted to fit, but tight */
    size_t measured, in_range;      /* rows with a throughput, and those inside the 80% range */
    size_t outside_domain;          /* rows outside the calibration's domain */
    struct tp_err_stats searched;   /* the rows with a searched layout (also in throughput) */
    /* every source weighing one, over the sources with a throughput row: how many, the median
       of their median |error| (NAN when none) and the mean of their shares inside the 80% range
       (NAN when none) */
    size_t sources;
    double source_median, source_in_range;
};
TP_API void tp_validation_summarize(const struct tp_validation *v,
                                    struct tp_validation_summary *s);

/* Validation as a stream (src/eval/validate_stream.c): rows added one at a time, the summary
   from running counts and, for the error quantiles, a reservoir of at most TP_RESERVOIR errors
   per statistic (Algorithm R, fixed seed: the same file gives the same figures).  While a
   statistic has seen at most TP_RESERVOIR errors its quantiles are exactly those of
   tp_validation_summarize / tp_validation_group.  Memory: the reservoirs and one entry per
   group, whatever the number of rows. */
#define TP_RESERVOIR 8192
struct tp_validate_stream;
/* NULL when out of memory. */
TP_API struct tp_validate_stream *tp_validate_stream_new(void);
TP_API void tp_validate_stream_free(struct tp_validate_stream *s);
/* Adds one evaluated run (tp_run_evaluate); TP_ENOMEM when a reservoir or group cannot grow. */
TP_API enum tp_status tp_validate_stream_add(struct tp_validate_stream *s, const struct tp_run *run,
                                             const struct tp_run_eval *e, struct tp_error *err);
TP_API void tp_validate_stream_summarize(const struct tp_validate_stream *s,
                                         struct tp_validation_summary *out);
/* The groups in order of first appearance: how many, and group i's key ("(none)" for an
   empty one) and statistics. */
TP_API size_t tp_validate_stream_groups(const struct tp_validate_stream *s, enum tp_run_group g);
TP_API void tp_validate_stream_group(const struct tp_validate_stream *s, enum tp_run_group g,
                                     size_t i, const char **key, struct tp_err_stats *st);
/* Whether a mapped run measured anything validate compares (a throughput in any of the
   documented forms, a memory peak or an OOM): tp_runs_load keeps only those. */
TP_API bool tp_run_measured_something(const struct tp_run *r);

/* ----------------------------------------------------------------------------------------- */
/* Calibration fit (trainplan calibrate)                                                       */
/* ----------------------------------------------------------------------------------------- */

struct tp_fit_opts {
    double prior_weight;   /* pull toward the base values, in rows' worth (default 0.4;
                              lambda = prior_weight / rows) */
    uint32_t min_gpu_rows; /* a GPU type gets its own GEMM rate from this many rows (default 5) */
    uint32_t max_evals;    /* objective evaluations per least-squares run (default 2500) */
    uint32_t rounds;       /* alternations of the global and per-GPU fits (default 2) */
    bool per_gpu;          /* fit per-GPU GEMM rates (default true) */
    uint32_t starts;       /* fit starts: the base, then the best quasi-random points
                              (default 1: on the shipped runs four starts reached the same
                              optimum, to 1e-8 of the loss, in the fit and every fold) */
    uint32_t samples;      /* quasi-random points tried for the starts (default 256) */
    uint32_t fold_rows;    /* leave-one-source-out: each fold fits on at most this many of the
                              other sources' rows, evenly spaced in their order (default 1024;
                              0: every row); the held-out rows are all predicted */
    uint32_t fit_rows;     /* tp_calibrate_runs (the verb) fits at most this many of the rows,
                              evenly spaced in their order, and predicts every row before and
                              after (default 8192; 0: every row); res.rows says how many */
    uint32_t max_folds;    /* at most this many folds: with more sources, fold f holds out
                              every source numbered f mod max_folds (in order of first
                              appearance; default 16; 0 or 1: one fold per source).  The two bound
                              the cross-validation of a large file to about 2 fits' work. */
    /* called every 256 objective evaluations with the count so far in this fit (NULL: none);
       in tp_calib_cross_validate, the count summed over the folds so far, one call at a time
       whatever thread runs the fold; the library prints nothing, the caller may show progress */
    void (*progress)(void *ctx, unsigned evaluations);
    void *progress_ctx;
    uint32_t threads;      /* tp_calib_cross_validate's folds run on this many threads (default
                              0: one per online CPU); the figures do not depend on it */
};
TP_API void tp_fit_opts_init(struct tp_fit_opts *o);

#define TP_FIT_MAX_PARAMS 48
struct tp_fit_param {
    char name[48];         /* calibration key ("gemm_scale", "gpus.h100-sxm.mamf_bf16") */
    double before, after;
    bool identified;       /* the rows move the objective when it moves; false: kept */
    /* what pins it (trainplan calibrate --explain; src/fit/fit.c) */
    uint32_t rows, sources; /* fitted rows whose prediction moves by over 0.5% when the
                               parameter moves by 0.2 in its fitting coordinate, and their
                               sources */
    char top_source[48];   /* the source with most such rows ("" when none) */
    double se;             /* standard error of `after`, in its own units (NAN: not fitted) */
    double prior, prior_sd; /* the prior (the base's value) and its 1-sigma width in the
                               fitting coordinate (log or logit) */
    bool measured_prior;   /* the prior is a published measurement (`cite`): the fit moves it
                              only within that measurement's uncertainty */
    bool at_bound;         /* the free fit would put it at a bound: held at its prior */
    const char *cite;      /* the measurement behind the prior ("" when none; static) */
};
struct tp_fit_result {
    size_t rows, sources;
    double objective_before, objective_after; /* reported: mean over sources of the median
                                                 |log(predicted / measured)| (the fit itself
                                                 minimises a pseudo-Huber loss, fit.c) */
    unsigned evaluations;  /* of the objective (each predicts every row) */
    uint32_t folds;        /* tp_calib_fit_validate: the folds run (0: none, one source) */
    uint32_t fold_rows;    /* and the cap on a fold's rows where one bit (0: none did) */
    size_t n_params;
    struct tp_fit_param params[TP_FIT_MAX_PARAMS];
};

/* Fits the efficiency parameters (docs/design.md "Calibration") starting from and regularised
   toward `base`; `out` is `base` with the fitted values and the rows' domain joined to its own.
   Allocates working memory (GSL); TP_EINVAL when there is nothing to fit. */
TP_API enum tp_status tp_calib_fit(const struct tp_run *const *runs, const double *measured, size_t n,
                            const struct tp_calib *base, const struct tp_fit_opts *o,
                            struct tp_calib *out, struct tp_fit_result *res,
                            struct tp_error *err);
/* Leave-one-source-out: for each source, fits on the other sources' rows and predicts its own;
   held_out[i] = predicted / measured - 1 (NaN when only one source).  Past o->max_folds
   sources, each fold holds out a group of sources; each fold fits on at most o->fold_rows
   rows.  The folds run on
   o->threads POSIX threads; each is the fit tp_calib_fit would make of its rows. */
TP_API enum tp_status tp_calib_cross_validate(const struct tp_run *const *runs, const double *measured,
                                       size_t n, const struct tp_calib *base,
                                       const struct tp_fit_opts *o, double *held_out,
                                       struct tp_error *err);
/* Both in one call: the fit to every row (tp_calib_fit's `out` and `res`) and, when held_out is
   not NULL, leave-one-source-out, the fit and the folds side by side on o->threads threads over
   the rows' calibration-independent work done once.  The same figures as the two calls. */
TP_API enum tp_status tp_calib_fit_validate(const struct tp_run *const *runs,
                                            const double *measured, size_t n,
                                            const struct tp_calib *base,
                                            const struct tp_fit_opts *o, struct tp_calib *out,
                                            struct tp_fit_result *res, double *held_out,
                                            struct tp_error *err);

/* A calibration fitted to loaded runs and each row's error before, after and held out
   (src/fit/calibrate_runs.c): what `trainplan calibrate` and trainplan.calibrate report. */
struct tp_calibration {
    const struct tp_runs *runs;
    const struct tp_run **rows;     /* the rows with a measured throughput (n), fitted */
    double *measured;               /* their tokens/s per GPU */
    size_t n;
    struct tp_calib base, fitted;
    struct tp_fit_result res;
    double *before, *after;         /* predicted / measured - 1 with base and fitted */
    double *held_out;               /* leave-one-source-out (NaN without it, or one source) */
    double *pick, *scratch;         /* working memory of the statistics */
    uint32_t *src_ord;              /* per row: its source's number (first appearance order) */
    size_t *src_first;              /* per source number: its first row */
    size_t *by_src;                 /* the rows grouped by source, in order within each */
    size_t *src_at;                 /* source s's rows are by_src[src_at[s] .. src_at[s+1]) */
    size_t n_sources;               /* of all n rows (res.sources: of the rows fitted) */
    bool cross_validated;           /* asked for, over two or more sources */
    size_t assumed;                 /* rows with a measured throughput not fitted because
                                       their layout was searched or their head count assumed */
};
/* Fits the rows of `runs` that measured a throughput and state their layout (TP_EINVAL when
   none did; a row whose layout was searched or head count assumed is counted in `assumed`,
   not fitted) starting from
   `base`, leave-one-source-out beside it when `cross_validate`.  Free with
   tp_calibration_free. */
TP_API enum tp_status tp_calibrate_runs(const struct tp_runs *runs, const struct tp_calib *base,
                                        const struct tp_fit_opts *o, bool cross_validate,
                                        struct tp_calibration *out, struct tp_error *err);
TP_API void tp_calibration_free(struct tp_calibration *r);
/* Statistics of `errs` (r->before, r->after or r->held_out) over the fitted rows of `source`
   (NULL: all). */
TP_API void tp_calibration_stats(const struct tp_calibration *r, const double *errs,
                                 const char *source, struct tp_err_stats *st);
/* The sources in order of first appearance: false unless fitted row i is the first of its
   source, else the source and its statistics before, after and held out (st[0..2]). */
TP_API bool tp_calibration_source(const struct tp_calibration *r, size_t i, const char **source,
                                  struct tp_err_stats st[3]);
/* The base calibration a fit starts from: NULL the built-in defaults, "prior" the physics
   priors, else a calibration file; *name says which ("built-in defaults", "physics priors" or
   the file name). */
TP_API enum tp_status tp_calib_base(const char *base, struct tp_calib *out, const char **name,
                                    struct tp_error *err);
/* Writes `c` as a calibration file (tp_calib_to_json's text); TP_EIO naming "output". */
TP_API enum tp_status tp_calib_write(const struct tp_calib *c, const char *path,
                                     struct tp_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Training logs (trainplan logs)                                                             */
/* ----------------------------------------------------------------------------------------- */

/* The log formats tp_log_parse() understands; append only. */
enum tp_log_format {
    TP_LOG_UNKNOWN = 0,
    TP_LOG_MEGATRON,    /* Megatron-LM / Megatron-Core: " iteration N/ M | ... | elapsed time per
                           iteration (ms): X | throughput per GPU (TFLOP/s/GPU): X | ..." */
    TP_LOG_MEGATRON_DS, /* Megatron-DeepSpeed: the same lines with "samples per second: X" and
                           "TFLOPs: X" */
    TP_LOG_HF,          /* Hugging Face Trainer, Axolotl, TRL: per-step dicts {'loss': ...}, the
                           tqdm progress bar, the {'train_runtime': ...} summary */
    TP_LOG_TORCHTITAN,  /* "step: N  loss: X  memory: X GiB(p%)  tps: N  tflops: X  mfu: X%" */
    TP_LOG_NANOGPT,     /* "iter N: loss X, time X ms, mfu X%" */
    TP_LOG_LLMC,        /* llm.c "step N/M | loss X ... | X ms | X% bf16 MFU | X tok/s" */
    TP_LOG_JSON,        /* the users' JSON run logs: "training_iterations" / "training_progress"
                           lists of {iter, loss, dt_ms, tokens_per_sec, mfu, memory_allocated_gb} */
    TP_LOG_FORMAT_COUNT
};

/* Stable short name ("megatron", "megatron-deepspeed", "hf", "torchtitan", "nanogpt", "llm.c",
   "json"; "unknown") and a human description. */
TP_API const char *tp_log_format_name(enum tp_log_format f);
TP_API const char *tp_log_format_label(enum tp_log_format f);
/* The list a user reads when a file is in none of the formats (static string). */
TP_API const char *tp_log_formats_understood(void);
/* A format by name or alias ("megatron-lm", "axolotl", "trl", "llmc", ...); TP_ENOTFOUND
   lists the names. */
TP_API enum tp_status tp_log_format_find(const char *name, enum tp_log_format *out,
                                  struct tp_error *err);

/* One logged step.  Every figure is as the log prints it, NaN when the line does not give it. */
struct tp_log_step {
    uint64_t step;               /* the iteration number as logged (HF without a progress bar:
                                    1, 2, ... in order) */
    double step_s;               /* seconds per optimizer step */
    double tokens_per_s;         /* all GPUs together */
    double tokens_per_s_per_gpu;
    double samples_per_s;
    double tflops_per_gpu;       /* under the framework's own FLOP convention */
    double mfu;                  /* fraction 0..1, the framework's convention and peak */
    double mem_gib;              /* peak memory per GPU in GiB (reserved where the log gives it;
                                    a JSON log's "gb" figure kept as printed) */
    double loss;
};

/* What a log states about the run as a whole; 0 / NaN = not stated. */
struct tp_log_info {
    enum tp_log_format format;
    size_t n_steps;              /* step records found (all of them, also beyond `cap`) */
    size_t n_lines;              /* text lines read (0 for JSON) */
    uint32_t gpus;               /* world size (Megatron, llm.c, torchtitan device mesh, JSON
                                    config; HF: total batch / (per-device batch x accumulation)) */
    uint32_t tp, pp, dp, cp;     /* Megatron's parallel sizes */
    uint64_t global_batch;       /* sequences per optimizer step */
    uint64_t micro_batch;        /* sequences per micro-batch per GPU */
    uint64_t grad_accum;         /* micro-batches per step (HF banner) */
    uint64_t seq;                /* tokens per sequence */
    double tokens_per_step;      /* as stated (nanoGPT, llm.c, JSON config), else
                                    global_batch x seq */
    uint64_t total_steps;        /* planned steps (train_iters, max_steps, progress-bar total) */
    double mem_gib;              /* peak from separate memory reports (Megatron "memory (MB)"
                                    lines: max reserved, else max allocated); NaN */
    /* the Hugging Face Trainer's end-of-training summary (whole run, warm-up included) */
    double train_runtime_s, train_samples_per_s, train_steps_per_s, train_loss;
    double train_tokens_per_s_per_gpu; /* "train_tokens_per_second": per device */
    size_t n_implausible;        /* figures dropped as physically impossible (negative, zero or
                                    non-finite times and rates, MFU above 1, TFLOP/s above the
                                    fastest catalog GPU's peak, memory above twice the largest
                                    HBM): the steady state never sees them */
    const char *mem_kind;        /* what the peak memory counts, in words (static): "max
                                    reserved", "device reserved", "max allocated", ...; NULL
                                    when the log gives none */
    double mem_alloc_gib;        /* peak allocated per GPU in GiB where the log gives it beside
                                    a reserved figure (the peak above is then the reserved); NaN */
};

/* Parses a training log held in memory (text, or a JSON document).  With `hint` ==
   TP_LOG_UNKNOWN the format is detected from the content: a JSON object with a
   training_iterations / training_progress list, else the text format with the most step lines.
   Up to `cap` step records go into `steps` (NULL with cap 0 counts them: info->n_steps).
   Errors (TP_EINVAL): an empty text; no known format ("no known training-log format found
   (understood: ...)"); with a hint, no step lines of that format.  A log whose only figures are
   the HF summary is accepted with 0 steps.  Allocates a line buffer, a pattern and (JSON) the
   document, all released before returning. */
TP_API enum tp_status tp_log_parse(const char *text, size_t len, enum tp_log_format hint,
                            struct tp_log_step *steps, size_t cap, struct tp_log_info *info,
                            struct tp_error *err);

/* How the steady state is taken. */
struct tp_log_steady_opts {
    int64_t skip_warmup;         /* logged steps to skip at the start; < 0 = the default rule:
                                    the first 10% (rounded up, at least 1) when there are >= 5 */
    uint32_t gpus;               /* 0 = as the log states */
    uint64_t global_batch, seq;  /* 0 = as the log states (tokens per step = their product) */
};
TP_API void tp_log_steady_opts_init(struct tp_log_steady_opts *o);

/*
 * The steady state of a log (docs/design.md "Training logs").  Warm-up: the first
 * `skip_warmup` logged steps are skipped.  Outliers: on the first series the log has, in the
 * order step time, tokens/s per GPU, tokens/s, samples/s, TFLOP/s, MFU, a step is dropped when
 * it lies more than 3 robust standard deviations from the median of the steps after warm-up,
 * the robust SD being max(1.4826 x MAD, 1% of the median).  Figures are over the steps kept:
 * median and mean step time; tokens/s = tokens per step / mean step time when both are known,
 * else the mean of the logged rates (per GPU x GPUs and back when one side is missing);
 * TFLOP/s and MFU the mean of the logged figures; memory the peak of the whole log.
 */
struct tp_log_steady {
    size_t n_steps, n_warmup, n_outliers, n_used;
    bool warmup_default;         /* n_warmup came from the default rule */
    uint64_t first_step, last_step; /* iteration numbers of the first and last step used */
    const char *basis;           /* series the outlier rule ran on ("step time", ...; static) */
    double basis_median, basis_threshold; /* dropped beyond median +- threshold (basis units:
                                             seconds, tokens/s, ..., MFU fraction) */
    double step_s_median, step_s_mean;
    double tokens_per_s, tokens_per_s_per_gpu, samples_per_s;
    double tflops_per_gpu, mfu;  /* as logged (the framework's convention) */
    double mem_gib;              /* peak per GPU over the whole log */
    double loss_last;            /* of the last step used */
    double tokens_per_step;      /* used for the derivations (0 = unknown) */
    uint32_t gpus;               /* used for the derivations (0 = unknown) */
    uint64_t global_batch, seq;  /* used (0 = unknown) */
    bool step_time_derived;      /* step time = tokens per step / tokens/s (not logged) */
    bool from_summary;           /* no per-step timing: the HF summary's whole-run averages */
    char rule[320];              /* the warm-up and outlier rule with its numbers, one line */
    char how[192];               /* where throughput and step time come from, one line */
    const char *mem_kind;        /* what mem_gib counts (tp_log_info.mem_kind); NULL = unknown */
    double mem_alloc_gib;        /* peak allocated where the log also gives it; NaN */
    bool tokens_from_step;       /* tokens/s = tokens per step / step time (slots: every
                                    sequence x seq), not the log's own rate */
    double logged_tokens_per_s_per_gpu; /* the log's own rate per GPU (the tokens it counts:
                                    trainable or non-padding ones in HF/Axolotl); NaN = none */
};

/* Whether one step (after the warm-up) is an outlier under `o`'s rule: its figure of the
   series `o->basis` lies more than basis_threshold from basis_median. */
TP_API bool tp_log_is_outlier(const struct tp_log_steady *o, const struct tp_log_step *s);
/* Computes the steady state of n parsed steps.  Allocates scratch (freed before returning).
   TP_EINVAL when nothing is left to measure (no steps, no timing figure, warm-up >= steps). */
TP_API enum tp_status tp_log_steady_state(const struct tp_log_step *steps, size_t n,
                                   const struct tp_log_info *info,
                                   const struct tp_log_steady_opts *o, struct tp_log_steady *out,
                                   struct tp_error *err);

/* A measured run for the runs-file format (data/runs/calibration.md). */
struct tp_log_row {
    const char *row_id;          /* unique, "source:n" style */
    const char *source_ref;      /* the log file */
    const char *note;            /* appended to the notes column; may be NULL */
    const struct tp_model *model;
    const struct tp_cluster *cluster;
    const struct tp_job *job;
    const struct tp_layout *layout; /* checked (tp_layout_check) */
    const struct tp_log_info *info;
    const struct tp_log_steady *steady;
};

/* Writes the runs file's canonical header line (with `header`) and one row for `r` into buf as
   RFC 4180 CSV (cells quoted where they need it); tp_runs_read() reads it back.  Returns the
   length needed, like snprintf. */
TP_API size_t tp_log_runs_csv(const struct tp_log_row *r, bool header, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* TRAINPLAN_RUNS_H */
