/*
 * search_stacks.c - the search over every software stack the user could run (no --framework),
 * ties within the estimate's uncertainty, what separates a layout from the best, and when
 * nothing is feasible, the constraint that binds and the nearest change that works.
 */
#include "cli.h"
#include "par_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_hits(const void *pa, const void *pb)
{
    const struct stack_hit *a = pa, *b = pb;
    int c = tp_search_hit_cmp(&a->h, &b->h);
    return c ? c : (a->fw > b->fw) - (a->fw < b->fw);
}

int search_stacks(struct run *r, const struct tp_search_opts *o, const struct tp_calib *cal,
                  const struct search_ctl *ctl, struct stack_hit *out, size_t cap, size_t *n,
                  struct tp_search_stats *st)
{
    static struct tp_search_hit part[SEARCH_MAX_TOP];
    static struct stack_hit all[SEARCH_MAX_TOP * TP_FW_COUNT];
    size_t total = 0;
    memset(st, 0, sizeof *st);
    if (cap > SEARCH_MAX_TOP)
        cap = SEARCH_MAX_TOP;
    for (size_t f = 0; f < ctl->n_fw; f++) {
        struct tp_search_stats s;
        size_t k;
        struct tp_error err = {{0}};
        r->j.framework = ctl->fw[f];
        if (par_search(&r->m, &r->c, &r->j, o, cal, ctl->threads, ctl->progress, part, cap, &k,
                       &s, &err) != TP_OK) {
            cli_error("%s", err.msg);
            return EXIT_USAGE;
        }
        tp_search_stats_add(st, &s);
        for (size_t i = 0; i < k; i++) {
            all[total].h = part[i];
            all[total++].fw = ctl->fw[f];
        }
    }
    qsort(all, total, sizeof all[0], cmp_hits);
    *n = total < cap ? total : cap;
    memcpy(out, all, *n * sizeof *out);
    r->j.framework = *n ? out[0].fw : ctl->fw[0];
    return EXIT_OK;
}

double search_tie_band(const struct run *r, const struct stack_hit *best, unsigned domain,
                       struct tp_range *rg)
{
    struct tp_job j = r->j;
    j.framework = best->fw;
    tp_time_range(&r->m, &r->c, &j, &best->h.layout, domain, rg);
    /* half the 80% range, in log space: two predictions closer than that are not told apart
       by what the model got right on held-out runs of the class (src/range.c) */
    return exp(0.5 * (log(rg->hi) - log(rg->lo))) - 1;
}

void search_differs(const struct stack_hit *best, const struct stack_hit *h, char *buf,
                    size_t len)
{
    const struct tp_time *a = &h->h.time, *b = &best->h.time;
    const struct {
        const char *name;
        double d;
    } terms[] = {
        {"compute", a->fwd_s + a->bwd_s + a->recompute_s - (b->fwd_s + b->bwd_s + b->recompute_s)},
        {"TP comm", a->tp_comm_s - b->tp_comm_s},
        {"CP comm", a->cp_comm_s - b->cp_comm_s},
        {"EP comm", a->ep_comm_s - b->ep_comm_s},
        {"PP comm", a->pp_comm_s - b->pp_comm_s},
        {"bubble", a->bubble_s - b->bubble_s},
        {"DP comm", a->dp_comm_s - b->dp_comm_s},
        {"optimizer", a->optimizer_s + a->offload_s - (b->optimizer_s + b->offload_s)},
        {"overhead", a->overhead_s - b->overhead_s}};
    if (h == best) {
        snprintf(buf, len, "best");
        return;
    }
    size_t k = 0;
    for (size_t i = 1; i < sizeof terms / sizeof terms[0]; i++)
        if (fabs(terms[i].d) > fabs(terms[k].d))
            k = i;
    /* per token: the global batch is the same, so the step's seconds compare directly */
    snprintf(buf, len, "%s %+.3fs", terms[k].name, terms[k].d);
}

static bool feasible(struct run *r, const struct tp_search_opts *o, const struct tp_calib *cal,
                     const struct search_ctl *ctl)
{
    static struct stack_hit one[1];
    size_t n = 0;
    struct tp_search_stats st;
    struct search_ctl quiet = *ctl;
    quiet.progress = false;
    cli_error_capture((char[8]){0}, 8);
    int rc = search_stacks(r, o, cal, &quiet, one, 1, &n, &st);
    cli_error_capture(NULL, 0);
    return rc == EXIT_OK && n > 0;
}

void search_nothing(struct run *r, const struct tp_search_opts *o, const struct tp_calib *cal,
                    const struct search_ctl *ctl, const struct tp_search_stats *st,
                    bool framework_given)
{
    printf("\nno layout is feasible; what binds, by the nearest change that works:\n");
    bool any = false;
    struct run try = *r;
    /* another stack, when the user named one */
    if (framework_given) {
        struct search_ctl all = *ctl;
        for (size_t f = 0; f < TP_FW_COUNT; f++) {
            if ((enum tp_framework)f == ctl->fw[0])
                continue;
            all.fw[0] = (enum tp_framework)f;
            all.n_fw = 1;
            if ((any = feasible(&try, o, cal, &all))) {
                printf("  framework: %s cannot run any layout that fits; works with --framework "
                       "%s\n", framework_names[ctl->fw[0]], framework_names[f]);
                break;
            }
        }
    }
    /* the nearest global batch that a layout divides */
    struct tp_search_opts g = *o;
    for (uint64_t d = 1; d <= o->gbs && d <= 64; d++) {
        bool found = false;
        for (int s = -1; s <= 1 && !found; s += 2) {
            if (s < 0 && d >= o->gbs)
                continue;
            g.gbs = s < 0 ? o->gbs - d : o->gbs + d;
            if ((found = feasible(&try, &g, cal, ctl)))
                printf("  batch-divides: no layout's mbs*dp divides %llu; works with --gbs %llu "
                       "(the nearest)\n", (unsigned long long)o->gbs, (unsigned long long)g.gbs);
        }
        if (found) {
            any = true;
            break;
        }
    }
    /* more GPUs, or a GPU with more memory */
    for (uint32_t k = 2; k <= 8; k *= 2) {
        try = *r;
        try.c.n_gpus = r->c.n_gpus * k;
        if (feasible(&try, o, cal, ctl)) {
            printf("  %s: works with --gpus %u\n",
                   st->rejected[TP_REJECT_MEMORY] ? "memory" : "GPUs", try.c.n_gpus);
            any = true;
            break;
        }
    }
    if (st->rejected[TP_REJECT_MEMORY])
        printf("  memory: a GPU with more memory, or a smaller --mem-headroom, also help\n");
    else if (!any)
        printf("  none found (another stack, a global batch within 64, up to 8x the GPUs); the "
               "counts above say which constraints reject the layouts\n");
}
