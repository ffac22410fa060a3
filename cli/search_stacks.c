/*
 * search_stacks.c - the search's options from the flags (search and export --best), the search
 * over every software stack the user could run (no --framework: the library's
 * tp_search_stacks_pool on the CLI's threads), and when nothing is feasible, the constraint
 * that binds and the nearest change that works, rendered.
 */
#include "cli.h"
#include "par_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cli_search_opts(const struct cli_args *a, uint64_t gbs, struct tp_search_opts *o)
{
    struct tp_error err = {{0}, {0}};
    if (tp_args_search_opts(a, gbs, o, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

int search_stacks(struct run *r, const struct tp_search_opts *o, const struct tp_calib *cal,
                  const struct search_ctl *ctl, struct tp_stack_hit *out, size_t cap, size_t *n,
                  struct tp_search_stats *st)
{
    struct par_pool *state;
    struct tp_pool pool = par_pool(&state, ctl->threads, ctl->progress);
    struct tp_error err = {{0}, {0}};
    enum tp_status s = tp_search_stacks_pool(&r->m, &r->c, &r->j, o, cal, ctl->fw, ctl->n_fw,
                                             &pool, out, cap > SEARCH_MAX_TOP ? SEARCH_MAX_TOP
                                                                              : cap,
                                             n, st, &err);
    par_pool_free(state);
    if (s != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* tp_search_nearest's search: the CLI's threaded one, quiet. */
struct nearest_ctx {
    const struct run *r;
    const struct tp_calib *cal;
    const struct search_ctl *ctl;
};

static bool feasible(void *ctx, const struct tp_cluster *c, const struct tp_job *j,
                     const struct tp_search_opts *o, const enum tp_framework *fw, size_t n_fw,
                     struct tp_stack_hit *best)
{
    const struct nearest_ctx *x = ctx;
    static struct run try;
    try = *x->r;
    try.c = *c;
    try.j = *j;
    struct search_ctl quiet = *x->ctl;
    quiet.progress = false;
    quiet.n_fw = n_fw;
    memcpy(quiet.fw, fw, n_fw * sizeof *fw);
    size_t n = 0;
    struct tp_search_stats st;
    cli_error_capture((char[8]){0}, 8);
    int rc = search_stacks(&try, o, x->cal, &quiet, best, 1, &n, &st);
    cli_error_capture(NULL, 0);
    return rc == EXIT_OK && n > 0;
}

size_t search_nearest(const struct run *r, const struct tp_search_opts *o,
                      const struct tp_calib *cal, const struct search_ctl *ctl,
                      const struct tp_search_stats *st, bool framework_given, struct tp_fix *out,
                      size_t cap)
{
    struct nearest_ctx x = {r, cal, ctl};
    struct tp_nearest_in in = {&r->m, &r->c, &r->j, o, cal, ctl->fw, ctl->n_fw,
                               framework_given, st->rejected[TP_REJECT_MEMORY] > 0};
    return tp_search_nearest(&in, feasible, &x, out, cap);
}

void search_nothing(const struct search_ctl *ctl, const struct tp_search_opts *o,
                    const struct tp_search_stats *st, const struct tp_fix *near, size_t n)
{
    printf("\nno layout is feasible; what binds, by the nearest change that works:\n");
    for (size_t i = 0; i < n; i++) {
        const struct tp_setting *s = &near[i].set[0];
        if (strcmp(s->field, "framework") == 0)
            printf("  framework: %s cannot run any layout that fits; works with --framework "
                   "%s\n", tp_stack_get(ctl->fw[0])->key, s->value);
        else if (strcmp(s->field, "gbs") == 0)
            printf("  batch-divides: no layout's mbs*dp divides %llu; works with --gbs %s "
                   "(the nearest)\n", (unsigned long long)o->gbs, s->value);
        else
            printf("  %s: works with --gpus %s\n",
                   st->rejected[TP_REJECT_MEMORY] ? "memory" : "GPUs", s->value);
    }
    if (st->rejected[TP_REJECT_MEMORY])
        printf("  memory: a GPU with more memory, or a smaller --mem-headroom, also help\n");
    else if (n == 0)
        printf("  none found (another stack, a global batch within 64, up to 8x the GPUs); the "
               "counts above say which constraints reject the layouts\n");
}
