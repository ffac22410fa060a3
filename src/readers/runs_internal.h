/*
 * runs_internal.h - one runs-file row as runs.c, runs_recipes.c and runs_pack.c read it.
 */
#ifndef TP_RUNS_INTERNAL_H
#define TP_RUNS_INTERNAL_H

#include "logs_internal.h"

struct row {
    const char *const *cols;
    const char *const *cells;
    size_t n;
    struct tp_error *err;
    struct tp_run *run;
};

/* The cell of column `name` ("" when the column is absent or the cell empty). */
const char *tp_row_cell(const struct row *r, const char *name);
/* Appends an assumption to the run's list ("; "-separated). */
void tp_row_assume(struct tp_run *run, const char *text);
/* The release month of a row's stack as yyyymm ("2024-07", "26.06.01"), and its year; 0 when
   the cell names neither a calendar date nor a container release. */
long tp_row_release_month(const char *date);
long tp_row_release_year(const char *date);
/* Megatron-Core's EP all-to-all overlap: the moe_a2a_overlap column, the notes' flag, else the
   Megatron-Bridge recipes that run it (*assumed true then). */
bool tp_row_a2a_overlap(const struct row *r, bool *assumed);

/* A non-negative whole number (`dflt` when empty) / a real number (NaN when empty); an
   error naming the column when malformed. */
enum tp_status tp_row_u32(const struct row *r, const char *name, bool required, uint32_t dflt,
                          uint32_t *out);
enum tp_status tp_row_real(const struct row *r, const char *name, double *out);

/* runs_check.c: a plain decimal ("12", "0.41", "1.7e9"; no hex floats, inf, nan, spaces or
   units) */
bool tp_row_plain_number(const char *s);
/* The index of the cell of `col` among `names` (exact; -1 when empty); an error naming the
   column and listing the values otherwise. */
enum tp_status tp_row_enum(const struct row *r, const char *col, const char *const *names,
                           size_t n, int *out);
/* A boolean cell: 1, 0, true, false (any case); `dflt` when empty; an error otherwise. */
enum tp_status tp_row_bool(const struct row *r, const char *col, bool dflt, bool *out);
/* The global batch the row states (gbs; 0 when empty) against micro_batch x grad_accum x dp as
   mapped (run->global_batch): an error naming the cells when they disagree. */
enum tp_status tp_row_check_batch(const struct row *r, const struct tp_run *run, uint32_t gbs);

/* Transformer Engine's TP communication overlap at tensor-parallel size `tp` (runs.c);
   *assumed when the row does not state it. */
bool tp_row_tp_overlap(const struct row *r, uint32_t tp, bool *assumed);
bool tp_row_no_async_tp(const struct row *r);

/* runs_search.c: the layout of a row that gives no tp/pp and no dp, searched. */
enum tp_status tp_row_search_layout(const struct row *r, struct tp_run *run);

/* runs_recipes.c */
void tp_row_recipe_job(const struct row *r, struct tp_job *j);
bool tp_row_recipe_recompute(const struct row *r, struct tp_layout *l);
enum tp_status tp_row_stack_columns(const struct row *r, struct tp_job *j);
/* A Megatron-Bridge Qwen3 MoE MXFP8 row from the 26.06 container on, on GB200 or GB300 (and B300
   when `b300`): the recipes of commit bac3ffeb, which set moe_a2a_overlap (GB200/GB300) and
   fp8_dot_product_attention (also B300) */
bool tp_row_bridge_qwen3_mxfp8(const struct row *r, bool b300);

/* runs_graphs.c: the cuda_graphs column, else the notes' CUDA-graph flags (Megatron-Core rows) */
enum tp_status tp_row_cuda_graphs(const struct row *r, struct tp_job *j);

/* runs_pack.c: the pack_fill column (the mean tokens per packed sequence over seq_len) turns
   the job's sequence into the mean packed length */
enum tp_status tp_row_pack_fill(const struct row *r, struct tp_job *j);

/* runs_fp8attn.c: FP8 attention, from the fp8_attention column or the notes (an error naming
   the column when its cell is not a boolean). */
enum tp_status tp_row_fp8_attention(const struct row *r, struct tp_job *j);

/* runs_steplog.c: Megatron's per-step --log-params-norm / --log-num-zeros-in-grad, from the
   notes' quoted arguments (after the framework is known) */
void tp_row_step_logging(const struct row *r, struct tp_job *j);

#endif
