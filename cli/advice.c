/*
 * advice.c - what the run verbs say beyond their figures: the defaults that moved the answer
 * (tp_defaults_that_matter), the changes that make a run faster (tp_time_suggest), and the
 * cluster assumed when --gpu or --gpus was not given.
 */
#include "cli.h"

#include <math.h>
#include <string.h>

void cli_advice(const struct cli_args *a, const struct run *r, const struct tp_calib *cal,
                unsigned given, bool speedups, struct cli_advice *out)
{
    memset(out, 0, sizeof *out);
    out->n_dflt = tp_defaults_that_matter(&r->m, &r->c, &r->j, &r->l, cal,
                                          given | a->given, out->dflt,
                                          sizeof out->dflt / sizeof out->dflt[0]);
    tp_time_range(&r->m, &r->c, &r->j, &r->l, 0, &out->range);
    struct tp_memory mem;
    if (tp_memory_worst(&r->m, &r->c, &r->j, &r->l, &mem) == TP_OK)
        out->base_bytes = mem.total_bytes;
    if (speedups)
        out->n_fast = tp_time_suggest(&r->m, &r->c, &r->j, &r->l, cal, out->fast,
                                      sizeof out->fast / sizeof out->fast[0]);
}

/* A default's neighbour as the flag that sets it ("--mbs 16", "--framework megatron"). */
static void effect_flags(const struct run *r, const struct tp_default_effect *e, bool tried,
                         char *buf, size_t len)
{
    struct tp_fix f;
    memset(&f, 0, sizeof f);
    f.n_set = 1;
    snprintf(f.set[0].field, sizeof f.set[0].field, "%s", e->field);
    snprintf(f.set[0].value, sizeof f.set[0].value, "%s", tried ? e->tried : e->taken);
    report_fix_flags(&r->j, &f, buf, len);
}

void cli_advice_print(const struct run *r, const struct cli_advice *adv, bool memory)
{
    size_t shown = 0;
    for (size_t i = 0; i < adv->n_dflt; i++) {
        const struct tp_default_effect *e = &adv->dflt[i];
        if (memory ? !e->moves_memory : !e->moves_time)
            continue;
        if (shown++ == 0) {
            if (memory)
                printf("\ndefaults that move the answer (not given; the worst stage with the "
                       "neighbouring value)\n");
            else
                printf("\ndefaults that move the answer (not given; tokens/s per GPU with the "
                       "neighbouring value moves past the 80%% band of two settings on one "
                       "cluster, x%.2f-x%.2f)\n",
                       1 / tp_range_relative(&adv->range), tp_range_relative(&adv->range));
        }
        char taken[64], tried[64];
        effect_flags(r, e, false, taken, sizeof taken);
        effect_flags(r, e, true, tried, sizeof tried);
        printf("  %-22s with %-24s", taken, tried);
        if (memory)
            printf(" %8.2f GiB (%+.0f%%)%s\n", e->total_bytes / 1073741824.0,
                   100 * (e->total_bytes / adv->base_bytes - 1),
                   e->fits ? "" : ", does not fit");
        else
            printf(" x%.2f tokens/s per GPU%s\n", e->ratio,
                   e->moves_memory ? (e->fits ? " (memory moves too)" : "") : "");
    }
    if (memory || adv->n_fast == 0)
        return;
    printf("\nfaster with (each change alone, on this stack, still fitting: the model's figures)\n");
    for (size_t i = 0; i < adv->n_fast; i++) {
        const struct tp_speedup *s = &adv->fast[i];
        char flags[160];
        report_fix_flags(&r->j, &s->fix, flags, sizeof flags);
        printf("  %-34s x%.2f  %8.0f tokens/s per GPU  %6.2f GiB  %s\n", flags, s->gain,
               s->tokens_per_s_per_gpu, s->fix.total_bytes / 1073741824.0,
               s->fix.set[s->fix.n_set - 1].reason ? s->fix.set[s->fix.n_set - 1].reason : "");
    }
}

void cli_advice_json(json_t *doc, const struct cli_advice *adv, bool speedups)
{
    if (!doc)
        return;
    json_object_set_new(doc, "defaults_that_matter", tp_json_default_effects(adv->dflt,
                                                                              adv->n_dflt));
    if (speedups)
        json_object_set_new(doc, "speedups", tp_json_speedups(adv->fast, adv->n_fast));
}

void cli_advice_cell(json_t *row, const struct cli_advice *adv, bool speedups)
{
    if (!row)
        return;
    char text[512] = "";
    size_t at = 0;
    for (size_t i = 0; i < adv->n_dflt && at + 1 < sizeof text; i++) {
        const struct tp_default_effect *e = &adv->dflt[i];
        int n = snprintf(text + at, sizeof text - at, "%s%s %s->%s x%.2f%s", i ? "; " : "",
                         e->field, e->taken, e->tried, e->ratio, e->fits ? "" : " (no fit)");
        at += n > 0 ? (size_t)n : 0;
    }
    json_object_set_new(row, "defaults_that_matter", json_string(at < sizeof text ? text : ""));
    if (!speedups)
        return;
    text[0] = '\0';
    at = 0;
    for (size_t i = 0; i < adv->n_fast && at + 1 < sizeof text; i++) {
        char flags[160];
        report_fix_flags(&adv->fast[i].fix.job, &adv->fast[i].fix, flags, sizeof flags);
        int n = snprintf(text + at, sizeof text - at, "%s%s x%.2f", i ? "; " : "", flags,
                         adv->fast[i].gain);
        at += n > 0 ? (size_t)n : 0;
    }
    json_object_set_new(row, "speedups", json_string(at < sizeof text ? text : ""));
}

void cli_advice_notes(const struct run *r, const struct cli_advice *adv)
{
    for (size_t i = 0; i < adv->n_dflt; i++) {
        const struct tp_default_effect *e = &adv->dflt[i];
        if (!e->moves_time)
            continue;
        char taken[64], tried[64];
        effect_flags(r, e, false, taken, sizeof taken);
        effect_flags(r, e, true, tried, sizeof tried);
        fprintf(stderr, "trainplan: note: not given, %s taken; with %s tokens/s per GPU moves "
                "x%.2f (past the 80%% band of two settings on one cluster, x%.2f-x%.2f)\n",
                taken, tried, e->ratio, 1 / tp_range_relative(&adv->range),
                tp_range_relative(&adv->range));
    }
}
