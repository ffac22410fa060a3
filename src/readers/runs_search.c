/*
 * runs_search.c - the layout of a runs-file row that states none (tp or pp empty, and dp
 * empty): published MFU figures whose sources give the model, the GPU count, the batch
 * (sometimes) and the recompute mode, but not the split.
 *
 * The authors tuned their layout; the layout they would have tuned is taken to be the fastest
 * one trainplan's search (tp_search, the core of `trainplan search`) finds for the row's model,
 * cluster, job and stack under every constraint the row does state: the GPUs, the global
 * batch, the micro-batch and accumulation, tp, pp, vpp, cp and ep where given, the recompute
 * mode, sequence parallelism when stated off, the ZeRO stage or distributed optimizer, the
 * precision and framework.  The search runs with the built-in calibration, so a row maps to
 * the same layout whatever calibration validate is given.  The row is marked
 * (run->layout_searched): validate shows it, calibrate does not fit it, since its layout is an
 * assumption, not a measurement.
 */
#include "runs_internal.h"

#include <stdlib.h>
#include <string.h>

/* Bounds on the search's cost (validate runs it while reading the file): the layouts it
   enumerates grow with the divisors of the GPU count, and every hit kept is a timed layout. */
#define MAX_SEARCH_GPUS 65536
#define SEARCH_HITS 64

static bool stated(const struct row *r, const char *col)
{
    return *tp_row_cell(r, col) != '\0';
}

/* Whether hit layout `h` agrees with every layout cell the row states. */
static bool agrees(const struct row *r, const struct tp_run *run, const struct tp_layout *h)
{
    const struct tp_layout *l = &run->layout;
    return (!l->tp || h->tp == l->tp) && (!l->pp || h->pp == l->pp) && h->cp == l->cp &&
           (!stated(r, "ep") || h->ep == l->ep) && (!stated(r, "vpp") || h->vpp == l->vpp) &&
           (run->mbs_unknown || h->mbs == l->mbs) && (run->gas_unknown || h->gas == l->gas);
}

/* The search options that encode the row's stated constraints. */
static void constrain(const struct row *r, const struct tp_run *run, uint64_t gbs,
                      struct tp_search_opts *o)
{
    const struct tp_layout *l = &run->layout;
    tp_search_opts_init(o);
    o->gbs = gbs;
    o->max_tp = l->tp;   /* 0 (not stated): up to a node */
    o->max_pp = l->pp;   /* 0: up to the layers */
    o->max_cp = l->cp;   /* the cp cell, 1 when empty: no context parallelism unless stated */
    o->max_ep = stated(r, "ep") ? l->ep : 0;
    if (stated(r, "vpp"))
        o->max_vpp = l->vpp;
    if (!run->mbs_unknown)
        o->max_mbs = l->mbs;
    o->zero_mask = 1u << l->zero;
    o->recompute_mask = l->recompute == TP_RECOMPUTE_FULL        ? TP_SEARCH_RC_FULL
                        : l->recompute == TP_RECOMPUTE_SELECTIVE ? TP_SEARCH_RC_SELECTIVE
                                                                 : TP_SEARCH_RC_NONE;
    o->offload = false; /* a run that does not say it offloaded its optimizer did not */
    o->no_sp = stated(r, "sp") && !l->sp;
    /* uneven first/last pipeline stages came with Megatron Core 0.9.0 ("Uneven pipeline
       parallelism", Megatron-LM CHANGELOG.md, late 2024): a stack released before 2025
       splits the blocks evenly */
    long year = tp_row_release_year(tp_row_cell(r, "source_version_or_date"));
    o->uneven_pp = year == 0 || year >= 2025;
}

/* The searched layout into the row's: the split and batch from the hit, the row's own
   recompute modules and offload settings kept. */
static void adopt(struct tp_run *run, const struct tp_layout *h)
{
    struct tp_layout *l = &run->layout;
    l->tp = h->tp;
    l->pp = h->pp;
    l->dp = h->dp;
    l->cp = h->cp;
    l->ep = h->ep;
    if (!l->etp) /* the etp cell, else the search's (etp = tp) */
        l->etp = h->etp;
    l->vpp = h->vpp;
    l->pp_first = h->pp_first;
    l->pp_last = h->pp_last;
    l->sp = h->sp;
    l->mbs = h->mbs;
    l->gas = h->gas;
    run->mbs_unknown = run->gas_unknown = false;
    run->layout_searched = true;
    tp_row_assume(run, "layout searched (the fastest the search finds under the row's stated "
                       "constraints)");
}

enum tp_status tp_row_search_layout(const struct row *r, struct tp_run *run)
{
    const char *unknown = run->layout.tp ? "pp and dp" : run->layout.pp ? "tp and dp"
                                                                        : "tp, pp and dp";
    uint32_t n = run->cluster.n_gpus;
    if (n == 0 || n > MAX_SEARCH_GPUS)
        return tp_fail(r->err, TP_EINVAL, "the layout is unknown (%s are empty) and num_gpus "
                       "%u is outside the 1..%u GPUs validate searches a layout for", unknown,
                       n, MAX_SEARCH_GPUS);
    uint32_t gbs = 0;
    TRY(tp_row_u32(r, "global_batch", false, 0, &gbs));
    if (!gbs) {
        /* one sequence per GPU per step: the global batch of Korthikanti et al. 2022 Table 3
           (175B on 64 GPUs: 64; 530B on 280: 280; 1T on 512: 512) and of Narayanan et al. 2021
           Table 1's largest runs (530B on 2520 GPUs: 2520; 1T on 3072: 3072) */
        gbs = n;
        tp_row_assume(run, "global_batch = num_gpus (one sequence per GPU, Korthikanti et al. "
                           "2022 Table 3)");
    }
    struct tp_search_opts o;
    constrain(r, run, gbs, &o);
    struct tp_calib cal;
    tp_calib_init(&cal);
    bool unused;
    run->job.tp_comm_overlap = tp_row_tp_overlap(r, 2, &unused); /* for every tp > 1 tried */
    run->job.no_async_tp_allreduce = tp_row_no_async_tp(r);
    struct tp_search_hit *hits = calloc(SEARCH_HITS, sizeof *hits);
    if (!hits)
        return tp_fail(r->err, TP_ENOMEM, "out of memory");
    size_t n_hits = 0;
    struct tp_search_stats st;
    struct tp_error inner;
    enum tp_status s = tp_search(&run->model, &run->cluster, &run->job, &o, &cal, hits,
                                 SEARCH_HITS, &n_hits, &st, &inner);
    size_t pick = 0;
    while (s == TP_OK && pick < n_hits && !agrees(r, run, &hits[pick].layout))
        pick++;
    if (s == TP_OK && pick < n_hits)
        adopt(run, &hits[pick].layout);
    free(hits);
    if (s != TP_OK)
        return tp_fail(r->err, s, "the layout is unknown (%s are empty) and cannot be searched: "
                       "%s", unknown, inner.msg);
    if (pick == n_hits)
        return tp_fail(r->err, TP_EINVAL, "the layout is unknown (%s are empty) and none of "
                       "the %llu layouts the search tried divides the batch and fits under the "
                       "row's stated settings", unknown, (unsigned long long)st.evaluated);
    return TP_OK;
}
