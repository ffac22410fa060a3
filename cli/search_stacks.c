/*
 * search_stacks.c - the search over every software stack the user could run (no --framework)
 * on the CLI's threads (the ties and differs_most: src/core/stack_search.c), and when
 * nothing is feasible, the constraint that binds and the nearest change that works.
 */
#include "cli.h"
#include "par_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int search_stacks(struct run *r, const struct tp_search_opts *o, const struct tp_calib *cal,
                  const struct search_ctl *ctl, struct tp_stack_hit *out, size_t cap, size_t *n,
                  struct tp_search_stats *st)
{
    static struct tp_search_hit part[SEARCH_MAX_TOP];
    static struct tp_stack_hit all[SEARCH_MAX_TOP * TP_FW_COUNT];
    size_t total = 0;
    memset(st, 0, sizeof *st);
    if (cap > SEARCH_MAX_TOP)
        cap = SEARCH_MAX_TOP;
    for (size_t f = 0; f < ctl->n_fw; f++) {
        struct tp_search_stats s;
        size_t k;
        struct tp_error err = {{0}, {0}};
        r->j.framework = ctl->fw[f];
        if (par_search(&r->m, &r->c, &r->j, o, cal, ctl->threads, ctl->progress, part, cap, &k,
                       &s, &err) != TP_OK) {
            cli_error_field(&err);
            return EXIT_USAGE;
        }
        tp_search_stats_add(st, &s);
        for (size_t i = 0; i < k; i++) {
            all[total].h = part[i];
            all[total++].fw = ctl->fw[f];
        }
    }
    qsort(all, total, sizeof all[0], tp_stack_hit_cmp);
    *n = total < cap ? total : cap;
    memcpy(out, all, *n * sizeof *out);
    r->j.framework = *n ? out[0].fw : ctl->fw[0];
    return EXIT_OK;
}

static bool feasible(struct run *r, const struct tp_search_opts *o, const struct tp_calib *cal,
                     const struct search_ctl *ctl)
{
    static struct tp_stack_hit one[1];
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
                       "%s\n", tp_stack_get(ctl->fw[0])->key, tp_stack_get((enum tp_framework)f)->key);
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
