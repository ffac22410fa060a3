/*
 * trainplan/search.h - the layout search over one stack and every stack, and model sizing for a
 * compute budget.
 *
 * Part of the public API; include "trainplan.h" for all of it.
 */
#ifndef TRAINPLAN_SEARCH_H
#define TRAINPLAN_SEARCH_H

#include "results.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------------------------------- */
/* Layout search                                                                              */
/* ----------------------------------------------------------------------------------------- */

/* Why a layout was rejected (the first constraint it breaks); append only. */
enum tp_reject {
    TP_REJECT_TP_HEADS = 0, /* tp must divide the query and key/value heads */
    TP_REJECT_LIMIT,        /* beyond --max-tp (default: a node), --max-pp, --max-cp, --max-ep */
    TP_REJECT_PP_LAYERS,    /* pp <= layers; pp * vpp must divide them (interleaving); with
                               vpp 1, pp must divide the layers, or the layers plus the
                               embedding and/or the head counted as one layer each */
    TP_REJECT_CP_SEQ,       /* 2 * cp must divide the sequence (load-balanced ring attention) */
    TP_REJECT_EP_EXPERTS,   /* ep must divide the routed experts */
    TP_REJECT_BATCH,        /* mbs * dp must divide the global batch */
    TP_REJECT_FRAMEWORK,    /* the framework cannot run it (DeepSpeed: data parallel and MoE only;
                               FSDP: no pipeline; DeepSpeed MoE not under ZeRO-3; ...) */
    TP_REJECT_MEMORY,       /* the worst stage does not fit, even with the optimizer offloaded */
    TP_REJECT_COUNT
};
/* Short stable name of a rejection reason ("tp-divides-heads", ..., "memory"). */
TP_API const char *tp_reject_name(enum tp_reject r);

/* recompute_mask bits: the three modes, and partial recompute (full on N blocks per stage,
   searched only together with TP_SEARCH_RC_FULL). */
enum {
    TP_SEARCH_RC_NONE = 1u << 0,
    TP_SEARCH_RC_SELECTIVE = 1u << 1,
    TP_SEARCH_RC_FULL = 1u << 2,
    TP_SEARCH_RC_PARTIAL = 1u << 3
};

struct tp_search_opts {
    uint64_t gbs;            /* global batch in sequences (fixed) */
    uint32_t max_tp;         /* 0 = gpus per node */
    uint32_t max_pp;         /* 0 = the layers */
    uint32_t max_cp;         /* default 1 (no context parallelism) */
    uint32_t max_ep;         /* 0 = no limit beyond dp * cp */
    uint32_t max_vpp;        /* interleaving chunks tried with pp > 1 (default 8) */
    uint32_t max_mbs;        /* micro-batch sizes 1..max_mbs (default 16) */
    double mem_headroom;     /* fraction of the capacity kept free (0..0.9) */
    unsigned zero_mask;      /* ZeRO stages to try, bit z (default all; the framework narrows) */
    unsigned recompute_mask; /* TP_SEARCH_RC_* (default all four) */
    bool offload;            /* try optimizer offload where a layout does not fit on the GPU */
    bool uneven_pp;          /* with pp > 1 and vpp 1, also try the splits that count the
                                embedding and/or the head as a layer (default true) */
    bool no_sp;              /* never sequence parallelism, even where the stack runs it with
                                TP (a measured run that states sp 0; default false) */
    bool exhaustive;         /* time every feasible layout: no pruning by dominance, every
                                partial-recompute count (tests; default false) */
    double probe_time_per_token; /* count the timed layouts faster than this (--explain);
                                    0 = none */
    /* Sharding: this call enumerates only the outer (tp, cp, pp) combinations whose running
       index i has i % n_shards == shard (n_shards 0 or 1: all).  Disjoint shards' stats add up
       (tp_search_stats_add) and their hits merge (tp_search_merge) to exactly the single-call
       result, so callers may run shards on threads; the library itself runs none. */
    uint32_t shard, n_shards;
};
TP_API void tp_search_opts_init(struct tp_search_opts *o);
/* The enumeration's lists as people write them: "none,selective,full,partial" into
   recompute_mask (partial needs full), "0,1,2,3" into zero_mask.  TP_EINVAL names the field
   (recompute_modes, zero_stages) and what it expected. */
TP_API enum tp_status tp_search_parse_recompute_modes(const char *text, unsigned *mask,
                                                      struct tp_error *err);
TP_API enum tp_status tp_search_parse_zero_stages(const char *text, unsigned *mask,
                                                  struct tp_error *err);

struct tp_search_hit {
    struct tp_layout layout; /* checked, as tp_time_step saw it */
    struct tp_time time;
    double memory_bytes;     /* worst stage */
    double time_per_token;   /* step_s / tokens_per_step: the rank key */
};

struct tp_search_stats {
    uint64_t evaluated;      /* layouts considered (a rejection at an outer level counts the
                                zero-stage x micro-batch x recompute choices it stands for;
                                partial recompute counts each count of blocks probed) */
    uint64_t feasible;       /* those that satisfy every constraint and fit */
    uint64_t dominated;      /* feasible, but a cheaper recompute mode (or fewer recomputed
                                blocks) of the same layout fits, so they cannot rank first and
                                were not timed */
    uint64_t rejected[TP_REJECT_COUNT]; /* sums to evaluated - feasible */
    uint64_t partial;        /* partial-recompute layouts probed (part of evaluated) */
    uint64_t uneven;         /* layouts with an uneven pipeline split (part of evaluated) */
    uint64_t faster_than_probe; /* timed layouts faster per token than probe_time_per_token */
};

/* Classifies one layout as the search would (dp derived from the GPUs, etp = tp, SP with TP
   under Megatron, gas from the global batch): the first constraint it breaks, or
   TP_REJECT_COUNT when it is feasible; then `mem` (when it got that far) and `t` (feasible)
   hold its evaluation.  Any valid pp_first/pp_last split passes (the search itself enumerates
   only the even and the embedding/head ones); the even split needs pp | L.  For --explain. */
TP_API enum tp_reject tp_search_check(const struct tp_model *m, const struct tp_cluster *c,
                               const struct tp_job *j, const struct tp_search_opts *o,
                               const struct tp_calib *cal, struct tp_layout *l,
                               struct tp_memory *mem, struct tp_time *t);

/* Enumerates the layouts of job `j` on cluster `c`, keeps the `cap` fastest per token in `hits`
   (sorted by tp_search_hit_cmp), and counts the rest by reason.  Pure and allocation-free. */
TP_API enum tp_status tp_search(const struct tp_model *m, const struct tp_cluster *c,
                         const struct tp_job *j, const struct tp_search_opts *o,
                         const struct tp_calib *cal, struct tp_search_hit *hits, size_t cap,
                         size_t *n_hits, struct tp_search_stats *st, struct tp_error *err);

/* The search's total order: time per token, then the layout fields (tp, pp, vpp, cp, ep, dp,
   zero, mbs, recompute, recompute_layers, pp_first, pp_last, offload).  <0, 0, >0. */
TP_API int tp_search_hit_cmp(const struct tp_search_hit *a, const struct tp_search_hit *b);
/* Merges two lists sorted by tp_search_hit_cmp into `out` (not overlapping them), keeping the
   first `cap`; returns how many it wrote. */
TP_API size_t tp_search_merge(const struct tp_search_hit *a, size_t na, const struct tp_search_hit *b,
                       size_t nb, struct tp_search_hit *out, size_t cap);
/* Adds the counts of `part` (one shard) to `sum`. */
TP_API void tp_search_stats_add(struct tp_search_stats *sum, const struct tp_search_stats *part);

/* Workers the caller lends the library (which starts no thread of its own).  `run` calls
   task(arg, k) once for every k in 0..n-1, on its threads in any order, and returns when every
   call has returned; a task may run on the calling thread.  `progress`, when not NULL, is
   called from the tasks after each piece of work: `done` of `total` pieces, `layouts`
   evaluated so far.  The results never depend on the workers or their order. */
struct tp_pool {
    unsigned workers;   /* tasks worth running at once; 0 or 1: the calling thread alone */
    void (*run)(void *ctx, unsigned n, void (*task)(void *arg, unsigned k), void *arg);
    void (*progress)(void *ctx, unsigned done, unsigned total, unsigned long long layouts);
    void *ctx;
};
/* The pieces a pooled search cuts the outer (tp, cp, pp) loop into: many more than workers,
   so that the few expensive combinations spread over them. */
#define TP_SEARCH_SHARDS 64
/* tp_search over `pool` (NULL, or one worker: one tp_search call on the calling thread): the
   TP_SEARCH_SHARDS shards taken by the workers in turn, each worker merging its own, the
   workers' lists merged at the end in tp_search_hit_cmp's order, so the hits and stats are
   exactly one tp_search call's.  Allocates 3 x cap hits per worker. */
TP_API enum tp_status tp_search_pool(const struct tp_model *m, const struct tp_cluster *c,
                                     const struct tp_job *j, const struct tp_search_opts *o,
                                     const struct tp_calib *cal, const struct tp_pool *pool,
                                     struct tp_search_hit *hits, size_t cap, size_t *n_hits,
                                     struct tp_search_stats *st, struct tp_error *err);

/* A search hit and the software stack it was found on (the search over every stack). */
struct tp_stack_hit {
    struct tp_search_hit h;
    enum tp_framework fw;
};
/* Orders by tp_search_hit_cmp, then by stack (for qsort). */
TP_API int tp_stack_hit_cmp(const void *a, const void *b);
/* Searches each of the `n_fw` stacks in `fw` (j->framework is left at the best's, else fw[0]),
   keeping the `cap` fastest over all of them, sorted by tp_stack_hit_cmp; the stats add up
   over the stacks.  Allocates a scratch list of cap hits per stack.  On the calling thread;
   tp_search_stacks_pool runs each stack's search over a pool (tp_search_pool), with the same
   result. */
TP_API enum tp_status tp_search_stacks(const struct tp_model *m, const struct tp_cluster *c,
                                       struct tp_job *j, const struct tp_search_opts *o,
                                       const struct tp_calib *cal,
                                       const enum tp_framework *fw, size_t n_fw,
                                       struct tp_stack_hit *out, size_t cap, size_t *n,
                                       struct tp_search_stats *st, struct tp_error *err);
TP_API enum tp_status tp_search_stacks_pool(const struct tp_model *m, const struct tp_cluster *c,
                                            struct tp_job *j, const struct tp_search_opts *o,
                                            const struct tp_calib *cal,
                                            const enum tp_framework *fw, size_t n_fw,
                                            const struct tp_pool *pool,
                                            struct tp_stack_hit *out, size_t cap, size_t *n,
                                            struct tp_search_stats *st, struct tp_error *err);
/* When no layout is feasible: the run searched and what bound (tp_search_nearest). */
struct tp_nearest_in {
    const struct tp_model *m;
    const struct tp_cluster *c;
    const struct tp_job *j;
    const struct tp_search_opts *o;
    const struct tp_calib *cal;
    const enum tp_framework *fw; /* the stacks searched */
    size_t n_fw;
    bool framework_given;        /* the caller named the stack (fw[0]): the others are tried */
    bool memory_bound;           /* layouts were rejected for memory (tp_search_stats) */
};
/* A search of cluster `c` with options `o` over the stacks `fw`: true, the fastest hit in
   *best, when a layout is feasible. */
typedef bool (*tp_search_fn)(void *ctx, const struct tp_cluster *c, const struct tp_job *j,
                             const struct tp_search_opts *o, const enum tp_framework *fw,
                             size_t n_fw, struct tp_stack_hit *best);
/* The nearest change of each kind after which a layout is feasible, as data (one setting
   each: "framework" another stack when one was named, "gbs" the nearest global batch within
   64 that a layout divides, "gpus" 2x, 4x or 8x the GPUs), with the layout and worst-stage
   memory it finds.  `fn` NULL: tp_search_stacks on the calling thread (the CLI passes its
   threaded search).  Returns the number written (at most 3). */
TP_API size_t tp_search_nearest(const struct tp_nearest_in *in, tp_search_fn fn, void *ctx,
                                struct tp_fix *out, size_t cap);
/* The relative difference in time per token within which a layout ties the best: half the 80%
   range of the best's class, in log space; `rg` receives that range. */
TP_API double tp_search_tie_band(const struct tp_model *m, const struct tp_cluster *c,
                                 const struct tp_job *j, const struct tp_stack_hit *best,
                                 unsigned domain, struct tp_range *rg);
/* The step-time term that differs most from the best's: "bubble +0.120s", or "best". */
TP_API void tp_search_differs(const struct tp_stack_hit *best, const struct tp_stack_hit *h,
                              char *buf, size_t len);

/* ----------------------------------------------------------------------------------------- */
/* Model sizing for a compute budget (trainplan size)                                         */
/* ----------------------------------------------------------------------------------------- */

/* What a scaling-law fit calls N (its parameter or model-scale convention). */
enum tp_scaling_n {
    TP_SCALING_N_TOTAL = 0,   /* every parameter, embedding and head included (Hoffmann 2022) */
    TP_SCALING_N_NONEMB,      /* excluding the token/position embedding and the LM head
                                 (Kaplan 2020) */
    TP_SCALING_N_DEEPSEEK_M   /* not parameters: M, non-embedding training FLOPs per token,
                                 attention included (DeepSeek LLM 2024) */
};

/* The form of a fit's compute-optimal allocation. */
enum tp_scaling_form {
    TP_SCALING_PARAMETRIC = 0, /* L(N, D) = E + A / N^alpha + B / D^beta; optimum in closed form
                                  under C = flops_per_nd * N * D (Hoffmann 2022 eq. 4) */
    TP_SCALING_KAPLAN,         /* L(N, D) = [(Nc/N)^(aN/aD) + Dc/D]^aD; N_opt = n_coef *
                                  C_pfday^n_exp, D_opt = C / (flops_per_nd * N_opt) */
    TP_SCALING_POWER           /* N_opt = n_coef * (C / c_ref)^n_exp and D_opt = d_coef *
                                  (C / c_ref)^d_exp; no loss law */
};

/* One published scaling-law fit, as data (src/search/scaling.c cites each). */
struct tp_scaling_fit {
    const char *key;          /* "hoffmann-3", "besiroglu", "kaplan", ... */
    const char *label;
    const char *source;       /* citation: paper, equation or table */
    const char *conventions;  /* what N, D and C mean in this fit, one line */
    enum tp_scaling_form form;
    enum tp_scaling_n n_kind;
    double flops_per_nd;      /* the fit's C / (N * D): 6 for 6ND; 1 for M * D */
    double E, A, B, alpha, beta;       /* PARAMETRIC; KAPLAN: Nc = A, Dc = B, aN = alpha,
                                          aD = beta */
    double n_coef, n_exp, d_coef, d_exp, c_ref; /* POWER (KAPLAN: n_coef, n_exp, c_ref) */
};

TP_API size_t tp_scaling_fit_count(void);
TP_API const struct tp_scaling_fit *tp_scaling_fit_get(size_t i);
/* A fit by key (case-insensitive); TP_ENOTFOUND lists the keys. */
TP_API enum tp_status tp_scaling_fit_find(const char *name, const struct tp_scaling_fit **out,
                                   struct tp_error *err);

/* A fit's compute-optimal allocation of `flops` (its own C convention). */
struct tp_scaling_opt {
    double flops;
    double n_opt;             /* in the fit's N convention (M in FLOPs/token for DeepSeek) */
    double d_opt;             /* training tokens */
    double loss_opt;          /* L(N_opt, D_opt); NaN when the fit has no loss law */
    double tokens_per_n;      /* d_opt / n_opt (NaN for DeepSeek's M) */
};
/* TP_EINVAL for a budget that is not a positive finite number. */
TP_API enum tp_status tp_scaling_optimum(const struct tp_scaling_fit *f, double flops,
                                  struct tp_scaling_opt *out, struct tp_error *err);
/* The fit's predicted loss at (n, d) in its conventions; NaN when it has no loss law. */
TP_API double tp_scaling_loss(const struct tp_scaling_fit *f, double n, double d);
/* The fit's N for a finalized model at sequence length `seq`: total parameters, parameters
   without embedding and head, or M = model FLOPs per token (causal) less the LM head's. */
TP_API double tp_scaling_n_of(const struct tp_scaling_fit *f, const struct tp_model *m, uint64_t seq);

/* Architecture families the size grid builds. */
enum tp_size_family { TP_FAMILY_LLAMA3 = 0, TP_FAMILY_QWEN3, TP_FAMILY_GPT, TP_FAMILY_COUNT };
TP_API const char *tp_size_family_name(enum tp_size_family f);
TP_API enum tp_status tp_size_family_find(const char *name, enum tp_size_family *out,
                                   struct tp_error *err);

struct tp_size_grid {
    enum tp_size_family family;
    uint32_t vocab;               /* 0 = the family's tokenizer */
    uint64_t seq;                 /* tokens per sequence (FLOPs per token, the cluster's job) */
    double aspect_min, aspect_max;/* hidden / layers kept (default 20..200) */
    uint32_t hidden_min, hidden_max; /* default 256..24576: multiples of 256, of 512 above 4096 */
    uint32_t layers_max;          /* default 160 (deepest released dense LLMs: 126-118); depths
                                     are multiples of 4, of 8 from 64 on */
};
TP_API void tp_size_grid_init(struct tp_size_grid *g);

/* One concrete shape of the family and what it gets from the budget. */
struct tp_size_shape {
    uint32_t layers, hidden, heads, kv_heads, ffn, vocab;
    uint32_t head_dim;            /* 128 (GPT: 64 below hidden 2048; tiny shapes hidden / 8) */
    bool tied;
    double params;                /* total, counted by tp_count_params */
    double fit_n;                 /* in the loss fit's convention */
    double flops_per_token;       /* exact model FLOPs (causal) at the grid's sequence length */
    double tokens;                /* D = budget / flops_per_token */
    double budget_flops;          /* model FLOPs spent: the budget, or rate x time x FLOPs */
    double loss;                  /* predicted by the loss fit (NaN: none) */
    /* with a cluster (has_layout) */
    bool has_layout;
    struct tp_search_hit best;    /* the search's fastest layout */
    double seconds;               /* training time for `tokens` */
};

/* Enumerates the family's shapes (hidden, layers) of the grid into `out` (NULL: counts);
   returns how many there are. */
TP_API size_t tp_size_enumerate(const struct tp_size_grid *g, struct tp_size_shape *out, size_t cap);
/* Fills the family's shape for s->layers and s->hidden (the rest of `s` is reset). */
TP_API void tp_size_enumerate_one(const struct tp_size_grid *g, struct tp_size_shape *s);
/* Builds the finalized model of a shape. */
TP_API enum tp_status tp_size_model(const struct tp_size_grid *g, const struct tp_size_shape *s,
                             struct tp_model *m, struct tp_error *err);
/* Counts the shape (params, fit_n, flops_per_token) for loss fit `f`, then, for a FLOP budget
   `flops` > 0, tokens = flops / flops_per_token and the loss. */
TP_API enum tp_status tp_size_count(const struct tp_size_grid *g, const struct tp_scaling_fit *f,
                             double flops, struct tp_size_shape *s, struct tp_error *err);
/* With a cluster: the search's fastest layout for the shape (`o->gbs` set), then tokens from
   `seconds` of training (flops == 0) or seconds from the budget (flops > 0), and the loss.
   TP_OK with has_layout false when no layout fits. */
TP_API enum tp_status tp_size_on_cluster(const struct tp_size_grid *g, const struct tp_scaling_fit *f,
                                  const struct tp_cluster *c, const struct tp_job *j,
                                  const struct tp_search_opts *o, const struct tp_calib *cal,
                                  double flops, double seconds, struct tp_size_shape *s,
                                  struct tp_error *err);

/* What `trainplan size` ranks: the grid, the loss fit, and a FLOP budget or a cluster. */
struct tp_size_req {
    const struct tp_size_grid *grid;
    const struct tp_scaling_fit *loss_fit; /* has a loss law */
    const struct tp_cluster *cluster;      /* NULL: no cluster, the budget is `flops` */
    const struct tp_job *job;              /* with a cluster */
    const struct tp_search_opts *opts;     /* with a cluster (gbs set) */
    const struct tp_calib *cal;            /* with a cluster (NULL: built-in) */
    double flops;                          /* > 0: the budget is fixed */
    double seconds;                        /* training time (cluster, flops == 0) */
    double tie_band;                       /* losses closer than this to a list's best tie
                                              (tp_size_tie_band); 0: no ties */
};

/* Which shapes may take a rank of a list. */
struct tp_size_filter {
    double max_params;                     /* 0 = no bound */
    double min_tpp, max_tpp;               /* tokens per parameter after evaluation; 0 = any */
};

/* The grid and what is known of each shape; tp_size_prepare allocates, tp_size_free frees. */
struct tp_size_state {
    struct tp_size_shape *shapes;
    size_t n;
    double *bound;                         /* a lower bound of each shape's loss */
    size_t *order;                         /* shapes by bound, ascending */
    unsigned char *done;                   /* 1 = evaluated */
    double rate, peak;                     /* with a cluster: the model FLOP/s per GPU the
                                              bounds assume, and the peak (the fallback) */
    size_t searched;                       /* shapes searched for a layout */
};

/* The default global batch of a size run, in sequences: DeepSeek LLM's B_opt = 0.292 C^0.3271
   tokens at `flops`, a power of two sequences per GPU, at least one per GPU. */
TP_API uint64_t tp_size_default_gbs(double flops, uint64_t seq, uint32_t gpus);
/* The fit's N of the grid's smallest (4 layers at hidden_min) and largest shape: the budgets
   whose optimum lies outside cannot be answered by the grid. */
TP_API enum tp_status tp_size_grid_span(const struct tp_size_grid *g, const struct tp_scaling_fit *f,
                                        double *lo, double *hi, struct tp_error *err);
/* The loss difference within which two shapes tie: what `frac` more compute buys at the fit's
   optimum, L*(C) - L*((1 + frac) C) (0 for a fit without a loss law). */
TP_API double tp_size_tie_band(const struct tp_scaling_fit *f, double flops, double frac);
/* Counts every shape of the grid and its loss bound (the loss itself without a cluster or
   with a fixed budget; else the loss at the tokens the cluster's peak would give, MFU 1). */
TP_API enum tp_status tp_size_prepare(const struct tp_size_req *r, struct tp_size_state *s,
                                      struct tp_error *err);
/* The `k` first shapes of a list among those `f` accepts, as indices into s->shapes, in
   *n_out: the shapes whose loss is within r->tie_band of the list's lowest come first, the
   fastest on the cluster first (highest MFU; without a cluster the fewest parameters), then
   the rest by loss.  Branch and bound: a shape is searched only while its bound can still
   rank, and once for all lists; the shapes of a batch on `pool` (struct tp_pool, as the
   search's: NULL or one worker, the calling thread), its progress as (shapes searched, shapes
   in the grid, 0).  The list does not depend on the pool. */
TP_API enum tp_status tp_size_best(const struct tp_size_req *r, struct tp_size_state *s,
                                   const struct tp_size_filter *f, const struct tp_pool *pool,
                                   size_t *out, size_t k, size_t *n_out, struct tp_error *err);
TP_API void tp_size_free(struct tp_size_state *s);

#ifdef __cplusplus
}
#endif
#endif /* TRAINPLAN_SEARCH_H */
