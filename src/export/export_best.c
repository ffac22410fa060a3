/*
 * export_best.c - export --best: the fastest layout the target's files run.  The search is
 * narrowed to what the format expresses (tp_export_search_limits), its first hits are built
 * in turn and the first that builds is the answer; the unrestricted search's best is named
 * when it is faster and the target cannot run it.  The CLI (export --best, over its thread
 * pool) and the bindings (tp_call_export, on the calling thread) call this one function.
 */
#include "export_internal.h"

#include <stdio.h>

enum { BEST_TRIES = 32 };

/* Whether format `fmt` builds the layout; the reason in `err` when not. */
static bool exportable(enum tp_export_format fmt, const struct tp_model *m,
                       const struct tp_cluster *c, const struct tp_job *j,
                       const struct tp_layout *l, struct tp_export *x, struct tp_error *err)
{
    struct tp_export_opts o;
    tp_export_opts_init(&o);
    bool ok = tp_export_build(fmt, m, c, j, l, &o, x, err) == TP_OK;
    tp_export_free(x);
    return ok;
}

static void layout_words(const struct tp_layout *l, char *buf, size_t len)
{
    snprintf(buf, len, "dp %u tp %u pp %u vpp %u cp %u ep %u, ZeRO-%u, mbs %u x gas %u", l->dp,
             l->tp, l->pp, l->vpp, l->cp, l->ep, l->zero, l->mbs, l->gas);
}

enum tp_status tp_export_best(enum tp_export_format fmt, const char *to,
                              const struct tp_model *m, const struct tp_cluster *c,
                              const struct tp_job *j, const struct tp_search_opts *all,
                              const struct tp_calib *cal, const struct tp_pool *pool,
                              struct tp_export_best *out, struct tp_error *err)
{
    struct tp_search_opts o = *all;
    tp_export_search_limits(fmt, j, &o);
    struct tp_search_hit hit[BEST_TRIES], top[1];
    size_t n = 0, n_top = 0;
    struct tp_search_stats st;
    out->found = false;
    out->note[0] = '\0';
    TRY(tp_search_pool(m, c, j, &o, cal, pool, hit, BEST_TRIES, &n, &st, err));
    TRY(tp_search_pool(m, c, j, all, cal, pool, top, 1, &n_top, &st, err));
    out->evaluated = st.evaluated;
    static _Thread_local struct tp_export x; /* large: one per thread, reused */
    struct tp_error why = {{0}, {0}}, skip;
    size_t pick = n;
    for (size_t i = 0; i < n && pick == n; i++)
        if (exportable(fmt, m, c, j, &hit[i].layout, &x, i ? &skip : &why))
            pick = i;
    char words[160];
    if (pick == n) {
        if (n == 0 && n_top == 0)
            return TP_OK; /* nothing fits: out->found stays false */
        if (n_top && !exportable(fmt, m, c, j, &top[0].layout, &x, &why))
            layout_words(&top[0].layout, words, sizeof words);
        else
            snprintf(words, sizeof words, "none");
        char msg[sizeof why.msg];
        snprintf(msg, sizeof msg, "%s", why.msg[0] ? why.msg : "none fits");
        return tp_fail_field(err, TP_EUNSUPPORTED, "best", "--to %s --best: no layout that "
                             "fits can be exported to %s (the fastest, %s: %s)", to, to, words,
                             msg);
    }
    out->found = true;
    out->layout = hit[pick].layout;
    if (n_top && top[0].time_per_token < hit[pick].time_per_token * (1 - 1e-9) &&
        !exportable(fmt, m, c, j, &top[0].layout, &x, &why)) {
        layout_words(&top[0].layout, words, sizeof words);
        tp_snprintf(out->note, sizeof out->note, "the fastest layout, %s, runs %.1f%% faster but "
                 "%s cannot run it: %s", words,
                 100 * (hit[pick].time_per_token / top[0].time_per_token - 1), to, why.msg);
    }
    return TP_OK;
}
