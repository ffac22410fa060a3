/*
 * plot.h - `--svg FILE`: each command's figures as one of the library's charts (tp_svg_*),
 * written to a file.  Every function returns EXIT_OK, or EXIT_USAGE after an error line.
 */
#ifndef TP_CLI_PLOT_H
#define TP_CLI_PLOT_H

#include "cli.h"

/* memory: a stacked bar per pipeline stage, by component, with the GPU's capacity. */
int plot_memory(const char *path, const struct run *r);
/* estimate: the step time as one bar, by what it is spent on. */
int plot_estimate(const char *path, const struct run *r, const struct tp_time *t);
/* search --gpus A..B: time against GPU-hours per GPU count, the Pareto front joined. */
struct plot_sweep {
    const uint32_t *gpus;
    const bool *found, *front;
    const double *train_s, *gpu_hours;
    const struct tp_stack_hit *best; /* the best layout per count and its stack */
    size_t n;
    double tokens;          /* the budget (0: per million tokens) */
};
int plot_search(const char *path, const struct run *r, const struct plot_sweep *s);
/* validate: predicted against measured tokens/s per GPU, one colour per source. */
int plot_validate(const char *path, const struct tp_runs *runs, const struct tp_run_eval *ev);
/* logs: step time and tokens/s over the logged steps, warm-up and outliers marked. */
int plot_logs(const char *path, const char *log_name, const struct tp_log_step *steps, size_t n,
              const struct tp_log_steady *st);
/* size: predicted loss against parameters for the budget, the ranked shapes and the fit's
   optimum marked. */
struct plot_size {
    const struct tp_size_shape *shapes;
    const unsigned char *done;   /* evaluated shapes (their loss is known) */
    size_t n;
    const size_t *top;           /* ranked, best first */
    size_t n_top;
    const char *fit_key, *family;
    double flops, n_opt;         /* the budget, the loss fit's optimum (NaN: none) */
};
int plot_size(const char *path, const struct plot_size *s);

#endif
