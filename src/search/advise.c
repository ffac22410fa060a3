/*
 * advise.c - advice read off the model by re-evaluating the run with one thing changed.
 *
 * tp_time_suggest is estimate's counterpart of tp_memory_suggest (suggest.c): the changes the
 * job's stack can run after which the run still fits and is faster, each priced by the same
 * tp_time_step, so a gain is the model's own figure.  tp_defaults_that_matter re-evaluates the
 * run with the neighbouring values of every input the user left at its default and says which
 * of them move the answer by more than the estimate's 80% range (range.c): the answer then
 * hangs on a value nobody chose.
 *
 * Both run tp_layout_check, tp_stack_check, tp_memory_worst and tp_time_step per candidate
 * (a few dozen): pure and allocation-free, as the evaluation core is.
 */
#include "search_internal.h"

#include <math.h>
#include <string.h>

/* A candidate: at most two settings, the run with them and its figures. */
struct trial {
    struct tp_job j;
    struct tp_layout l;
    struct tp_setting set[2];
    size_t n_set;
    bool ok, fits;
    double bytes, tps;
};

enum { MAX_TRIALS = 32 };

/* What each change buys (docs/physics.md: §3 the memory terms, §4 the step's terms). */
static const char R_MBS[] = "larger GEMMs and fewer steps' fixed costs, the global batch kept";
static const char R_RECOMPUTE[] = "less of the forward pass run again in the backward";
static const char R_OFFLOAD[] = "no host transfers of optimizer states or parameters";
static const char R_ZERO[] = "fewer ZeRO gathers and reduce-scatters per step";
static const char R_EP[] = "experts split over more GPUs: fewer expert weights to gather";
static const char R_LEAF[] = "an MoE block's experts fetched as one ZeRO-3 leaf module";
static const char R_A2A[] = "the expert all-to-all overlapped with computation";

/* Checks and evaluates t (ok false when the stack or the layout rejects it). */
static void run(const struct tp_model *m, const struct tp_cluster *c, const struct tp_calib *cal,
                struct trial *t)
{
    struct tp_error err;
    t->ok = false;
    if (tp_layout_check(m, c, &t->j, &t->l, &err) != TP_OK ||
        tp_stack_check(m, &t->j, &t->l, &err) != TP_OK)
        return;
    struct tp_memory mem;
    if (tp_memory_worst(m, c, &t->j, &t->l, &mem) != TP_OK)
        return;
    struct tp_time tm;
    if (tp_time_step(m, c, &t->j, &t->l, cal, &tm) != TP_OK || !(tm.tokens_per_s_per_gpu > 0))
        return;
    t->ok = true;
    t->fits = mem.fits;
    t->bytes = mem.total_bytes;
    t->tps = tm.tokens_per_s_per_gpu;
}

static size_t add(struct trial *list, size_t n, const struct tp_job *j, const struct tp_layout *l,
                  const char *field, const char *value, const char *reason, const char *field2,
                  const char *value2)
{
    if (n >= MAX_TRIALS)
        return n;
    struct trial *t = &list[n];
    memset(t, 0, sizeof *t);
    t->j = *j;
    t->l = *l;
    tp_setting_set(&t->set[0], field, value, 0, reason);
    t->n_set = 1;
    if (field2)
        tp_setting_set(&t->set[t->n_set++], field2, value2, 0, reason);
    return n + 1;
}

/* The micro-batch `mbs` with the global batch kept (gas scaled down); false when it does not
   divide the samples per data-parallel rank. */
static bool with_mbs(const struct tp_layout *l, uint32_t mbs, struct tp_layout *x)
{
    uint64_t per = (uint64_t)l->mbs * l->gas;
    if (mbs == 0 || per % mbs != 0)
        return false;
    *x = *l;
    x->mbs = mbs;
    x->gas = (uint32_t)(per / mbs);
    return true;
}

static size_t speed_trials(const struct tp_model *m, const struct tp_job *j,
                           const struct tp_layout *l, struct trial *out)
{
    size_t n = 0;
    char v1[24], v2[24];
    struct tp_layout x;
    struct tp_job y;
    for (uint32_t f = 2; f <= 16; f *= 2) {
        if (!with_mbs(l, l->mbs * f, &x))
            break;
        tp_snprintf(v1, sizeof v1, "%u", x.mbs);
        tp_snprintf(v2, sizeof v2, "%u", x.gas);
        n = add(out, n, j, &x, "mbs", v1, R_MBS, "gas", v2);
    }
    for (int rc = (int)l->recompute - 1; rc >= TP_RECOMPUTE_NONE; rc--) {
        x = *l;
        x.recompute = (enum tp_recompute)rc;
        x.recompute_layers = 0;
        n = add(out, n, j, &x, "recompute", tp_name(TP_NAMES_RECOMPUTE, rc), R_RECOMPUTE, NULL,
                NULL);
    }
    if (l->recompute == TP_RECOMPUTE_FULL && l->recompute_layers == 0) {
        /* partial recompute: half the blocks of a stage stored (Megatron --recompute-num-layers) */
        x = *l;
        uint32_t per_stage = m->n_layers / (l->pp ? l->pp : 1);
        x.recompute_layers = per_stage / 2;
        tp_snprintf(v1, sizeof v1, "%u", x.recompute_layers);
        if (x.recompute_layers > 0)
            n = add(out, n, j, &x, "recompute_layers", v1, R_RECOMPUTE, NULL, NULL);
    }
    if (l->offload != TP_OFFLOAD_NONE || l->offload_activations) {
        x = *l;
        x.offload = TP_OFFLOAD_NONE;
        x.offload_activations = false;
        x.offload_layers = 0;
        n = add(out, n, j, &x, "offload", tp_name(TP_NAMES_OFFLOAD, TP_OFFLOAD_NONE), R_OFFLOAD,
                NULL, NULL);
    }
    bool moe = m->n_experts > 0;
    for (int z = (int)l->zero - 1; z >= 0 && l->offload == TP_OFFLOAD_NONE; z--) {
        x = *l;
        x.zero = (uint32_t)z;
        tp_snprintf(v1, sizeof v1, "%d", z);
        n = add(out, n, j, &x, "zero", v1, R_ZERO, NULL, NULL);
        /* an MoE model: the lower stage with the experts split further (ZeRO-2 + EP) */
        for (uint32_t f = 2; moe && f <= 8 && l->ep * f <= m->n_experts; f *= 2) {
            x.ep = l->ep * f;
            tp_snprintf(v2, sizeof v2, "%u", x.ep);
            n = add(out, n, j, &x, "zero", v1, R_EP, "ep", v2);
        }
    }
    for (uint32_t f = 2; moe && f <= 8 && l->ep * f <= m->n_experts; f *= 2) {
        x = *l;
        x.ep = l->ep * f;
        tp_snprintf(v1, sizeof v1, "%u", x.ep);
        n = add(out, n, j, &x, "ep", v1, R_EP, NULL, NULL);
    }
    if (moe && l->zero == 3 && !tp_job_z3_leaf(m, j)) {
        y = *j;
        y.z3_leaf = true;
        n = add(out, n, &y, l, "z3_leaf", "true", R_LEAF, NULL, NULL);
    }
    if (moe && l->ep > 1 && !j->moe_a2a_overlap) {
        y = *j;
        y.moe_a2a_overlap = true;
        n = add(out, n, &y, l, "moe_a2a_overlap", "true", R_A2A, NULL, NULL);
    }
    return n;
}

/* The run as given, the trials' yardstick; false when it cannot be evaluated. */
static bool run_base(const struct tp_model *m, const struct tp_cluster *c,
                     const struct tp_job *j, const struct tp_layout *l,
                     const struct tp_calib *cal, struct trial *base)
{
    memset(base, 0, sizeof *base);
    base->j = *j;
    base->l = *l;
    run(m, c, cal, base);
    return base->ok;
}

size_t tp_time_suggest(const struct tp_model *m, const struct tp_cluster *c,
                       const struct tp_job *j, const struct tp_layout *l,
                       const struct tp_calib *cal, struct tp_speedup *out, size_t cap)
{
    struct trial base, t[MAX_TRIALS];
    if (!run_base(m, c, j, l, cal, &base) || cap == 0)
        return 0;
    size_t n = speed_trials(m, j, l, t), found = 0;
    for (size_t i = 0; i < n; i++) {
        run(m, c, cal, &t[i]);
        /* a gain inside 1% is noise next to the model's own error */
        if (!t[i].ok || !t[i].fits || !(t[i].tps > base.tps * 1.01))
            continue;
        /* one per kind (the first setting's field): the fastest */
        size_t k = 0;
        while (k < found && strcmp(out[k].fix.set[0].field, t[i].set[0].field) != 0)
            k++;
        if (k < found && out[k].tokens_per_s_per_gpu >= t[i].tps)
            continue;
        if (k == found) {
            if (found == cap) {
                /* full: replace the slowest when this one beats it */
                size_t worst = 0;
                for (size_t q = 1; q < found; q++)
                    if (out[q].tokens_per_s_per_gpu < out[worst].tokens_per_s_per_gpu)
                        worst = q;
                if (out[worst].tokens_per_s_per_gpu >= t[i].tps)
                    continue;
                k = worst;
            } else {
                found++;
            }
        }
        struct tp_speedup *s = &out[k];
        memset(s, 0, sizeof *s);
        for (size_t q = 0; q < t[i].n_set; q++)
            s->fix.set[s->fix.n_set++] = t[i].set[q];
        s->fix.job = t[i].j;
        s->fix.layout = t[i].l;
        s->fix.total_bytes = t[i].bytes;
        s->tokens_per_s_per_gpu = t[i].tps;
        s->gain = t[i].tps / base.tps;
    }
    /* fastest first (insertion sort: a handful) */
    for (size_t i = 1; i < found; i++)
        for (size_t q = i; q > 0 && out[q].gain > out[q - 1].gain; q--) {
            struct tp_speedup tmp = out[q];
            out[q] = out[q - 1];
            out[q - 1] = tmp;
        }
    return found;
}

/* ---- defaults that move the answer ------------------------------------------------------ */

/* The neighbours of one defaulted input, appended to `t`. */
static size_t neighbours(const struct tp_job *j, const struct tp_layout *l, unsigned given,
                         const char *field, struct trial *t)
{
    size_t n = 0;
    char v[24];
    struct tp_layout x;
    struct tp_job y;
    if (strcmp(field, "mbs") == 0 && !(given & TP_GIVEN_MBS)) {
        /* with the global batch given it is kept (gas scaled); else the batch grows with it */
        const uint32_t f[] = {2, 4, 8, 16};
        if (l->mbs > 1) {
            x = *l;
            x.mbs = l->mbs / 2;
            bool ok = (given & TP_GIVEN_GBS) ? with_mbs(l, l->mbs / 2, &x) : true;
            tp_snprintf(v, sizeof v, "%u", x.mbs);
            if (ok)
                n = add(t, n, j, &x, "mbs", v, NULL, NULL, NULL);
        }
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
            x = *l;
            x.mbs = l->mbs * f[i];
            if ((given & TP_GIVEN_GBS) && !with_mbs(l, l->mbs * f[i], &x))
                break;
            tp_snprintf(v, sizeof v, "%u", x.mbs);
            n = add(t, n, j, &x, "mbs", v, NULL, NULL, NULL);
        }
    } else if (strcmp(field, "gas") == 0 && !(given & TP_GIVEN_GBS)) {
        const uint32_t f[] = {2, 4, 8};
        if (l->gas > 1) {
            x = *l;
            x.gas = l->gas / 2;
            tp_snprintf(v, sizeof v, "%u", x.gas);
            n = add(t, n, j, &x, "gas", v, NULL, NULL, NULL);
        }
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
            x = *l;
            x.gas = l->gas * f[i];
            tp_snprintf(v, sizeof v, "%u", x.gas);
            n = add(t, n, j, &x, "gas", v, NULL, NULL, NULL);
        }
    } else if (strcmp(field, "recompute") == 0 && !(given & TP_GIVEN_RECOMPUTE)) {
        for (int rc = TP_RECOMPUTE_NONE; rc <= TP_RECOMPUTE_FULL; rc++) {
            if (rc == (int)l->recompute)
                continue;
            x = *l;
            x.recompute = (enum tp_recompute)rc;
            x.recompute_layers = 0;
            n = add(t, n, j, &x, "recompute", tp_name(TP_NAMES_RECOMPUTE, rc), NULL, NULL, NULL);
        }
    } else if (strcmp(field, "zero") == 0 && !(given & TP_GIVEN_ZERO)) {
        for (uint32_t z = 0; z <= 3; z++) {
            if (z == l->zero)
                continue;
            x = *l;
            x.zero = z;
            tp_snprintf(v, sizeof v, "%u", z);
            n = add(t, n, j, &x, "zero", v, NULL, NULL, NULL);
        }
    } else if (strcmp(field, "seq") == 0 && !(given & TP_GIVEN_SEQ)) {
        /* the model's context taken as the sequence: half and twice it (tp_layout_check
           rejects what the model cannot take: a learned position table's length) */
        const uint64_t s[] = {j->seq / 2, j->seq * 2};
        for (size_t i = 0; i < 2; i++) {
            if (s[i] < 128)
                continue;
            y = *j;
            y.seq = s[i];
            tp_snprintf(v, sizeof v, "%llu", (unsigned long long)s[i]);
            n = add(t, n, &y, l, "seq", v, NULL, NULL, NULL);
        }
    } else if (strcmp(field, "framework") == 0 && !(given & TP_GIVEN_FRAMEWORK)) {
        for (int fw = 0; fw < TP_FW_COUNT; fw++) {
            if (fw == (int)j->framework)
                continue;
            y = *j;
            y.framework = (enum tp_framework)fw;
            y.moe_impl = TP_MOE_DEFAULT;
            n = add(t, n, &y, l, "framework", tp_stack_get((enum tp_framework)fw)->key, NULL,
                    NULL, NULL);
        }
    }
    return n;
}

size_t tp_defaults_that_matter(const struct tp_model *m, const struct tp_cluster *c,
                               const struct tp_job *j, const struct tp_layout *l,
                               const struct tp_calib *cal, unsigned given,
                               struct tp_default_effect *out, size_t cap)
{
    struct trial base, t[MAX_TRIALS];
    if (!run_base(m, c, j, l, cal, &base) || cap == 0)
        return 0;
    struct tp_range rg;
    tp_time_range(m, c, j, l, 0, &rg);
    static const char *const FIELDS[] = {"mbs", "gas", "gpus_per_node", "framework", "recompute",
                                         "zero", "seq"};
    size_t found = 0;
    for (size_t f = 0; f < sizeof FIELDS / sizeof FIELDS[0] && found < cap; f++) {
        size_t n;
        char taken[24];
        struct tp_cluster half = *c;
        const struct tp_cluster *cc = c;
        if (strcmp(FIELDS[f], "gpus_per_node") == 0) {
            /* half the GPUs per node: where a layout's groups start to cross nodes */
            n = 0;
            if (!(given & TP_GIVEN_GPUS_PER_NODE) && c->gpus_per_node >= 2 &&
                c->n_gpus > c->gpus_per_node / 2) {
                half.gpus_per_node = c->gpus_per_node / 2;
                char v[24];
                tp_snprintf(v, sizeof v, "%u", half.gpus_per_node);
                n = add(t, 0, j, l, "gpus_per_node", v, NULL, NULL, NULL);
                cc = &half;
            }
            tp_snprintf(taken, sizeof taken, "%u", c->gpus_per_node);
        } else {
            n = neighbours(j, l, given, FIELDS[f], t);
            if (strcmp(FIELDS[f], "mbs") == 0)
                tp_snprintf(taken, sizeof taken, "%u", l->mbs);
            else if (strcmp(FIELDS[f], "gas") == 0)
                tp_snprintf(taken, sizeof taken, "%u", l->gas);
            else if (strcmp(FIELDS[f], "framework") == 0)
                tp_snprintf(taken, sizeof taken, "%s", tp_stack_get(j->framework)->key);
            else if (strcmp(FIELDS[f], "seq") == 0)
                tp_snprintf(taken, sizeof taken, "%llu", (unsigned long long)j->seq);
            else if (strcmp(FIELDS[f], "recompute") == 0)
                tp_snprintf(taken, sizeof taken, "%s", tp_name(TP_NAMES_RECOMPUTE,
                                                               (int)l->recompute));
            else
                tp_snprintf(taken, sizeof taken, "%u", l->zero);
        }
        /* the neighbour that fits and moves tokens/s most; else the first that runs */
        int pick = -1;
        double best = -1;
        for (size_t i = 0; i < n; i++) {
            run(m, cc, cal, &t[i]);
            if (!t[i].ok)
                continue;
            double move = fabs(log(t[i].tps / base.tps));
            if (t[i].fits && (pick < 0 || !t[pick].fits || move > best)) {
                pick = (int)i;
                best = move;
            } else if (pick < 0) {
                pick = (int)i;
            }
        }
        if (pick < 0)
            continue;
        const struct trial *k = &t[pick];
        struct tp_default_effect e;
        memset(&e, 0, sizeof e);
        tp_snprintf(e.field, sizeof e.field, "%s", k->set[0].field);
        tp_snprintf(e.taken, sizeof e.taken, "%s", taken);
        tp_snprintf(e.tried, sizeof e.tried, "%s", k->set[0].value);
        e.ratio = k->tps / base.tps;
        e.total_bytes = k->bytes;
        e.fits = k->fits;
        /* past the range, taken to hold the prediction itself: a range whose centre lies off
           the prediction (hf/other/moe's 0.46-0.98) would otherwise flag a default that changes
           nothing */
        e.moves_time = k->fits && (e.ratio < fmin(rg.lo, 1) || e.ratio > fmax(rg.hi, 1));
        /* memory has no 80% range of its own: the verdict flipping always counts, and a move
           of a tenth of the worst stage (a choice, stated in docs/advice.md: a default that
           changes the headroom a user plans by that much is worth a line) */
        e.moves_memory = k->fits != base.fits || fabs(k->bytes / base.bytes - 1) > 0.10;
        if (e.moves_time || e.moves_memory)
            out[found++] = e;
    }
    /* largest move of tokens/s first */
    for (size_t i = 1; i < found; i++)
        for (size_t q = i; q > 0 && fabs(log(out[q].ratio)) > fabs(log(out[q - 1].ratio)); q--) {
            struct tp_default_effect tmp = out[q];
            out[q] = out[q - 1];
            out[q - 1] = tmp;
        }
    return found;
}
