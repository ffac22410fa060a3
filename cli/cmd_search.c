/*
 * cmd_search.c - `trainplan search MODEL --gpu G --gpus N --gbs B ...`: the fastest parallel
 * layouts that fit, and why the others lose.
 *
 * Exit status 0 when at least one layout is feasible, 1 when none is, 2 on bad input.
 */
#include "cli.h"
#include "plot.h"
#include "par_search.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_TOP = SEARCH_MAX_TOP };

/* How the search runs: the stacks, threads and the progress line (a terminal only). */
static struct search_ctl ctl;

static int run_search(const struct run *r, const struct tp_search_opts *o,
                      const struct tp_calib *cal, struct tp_search_hit *hits, size_t cap,
                      size_t *n, struct tp_search_stats *st)
{
    struct tp_error err = {{0}, {0}};
    if (par_search(&r->m, &r->c, &r->j, o, cal, ctl.threads, ctl.progress, hits, cap, n, st,
                   &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

static void help(void)
{
    printf("usage: trainplan search MODEL [--gpu NAME] [--gpus N] --gbs B [--seq S] [job options]\n"
           "                        [--top K] [--max-tp N] [--max-pp N] [--max-cp N] [--max-ep N]\n"
           "                        [--max-mbs N] [--mem-headroom F] [--no-offload] [--even-pp]\n"
           "                        [--recompute-modes LIST] [--zero-stages LIST] [--threads N]\n"
           "                        [--explain \"K=V ...\"]\n\n"
           "Enumerates every consistent layout (tp, pp, vpp, the pipeline split, dp, ep, cp, ZeRO\n"
           "stage, micro-batch at the fixed global batch, recompute none/selective/full/full on N\n"
           "blocks per stage, optimizer offload) that a stack can run (every stack unless\n"
           "--framework names one; each result says which), evaluates each with\n"
           "the memory and time models of `trainplan estimate`, and lists the fastest per token,\n"
           "with the number of layouts rejected by each named constraint.  Pipeline splits: the\n"
           "even one when pp divides the layers, and (vpp 1) the ones that count the embedding\n"
           "and/or the head as a layer (split column: first+middle stages x blocks+last; ',dual':\n"
           "DeepSeek-V3's DualPipe schedule, tried for MoE models on megatron and torchtitan).\n"
           "recompute full(N): only N blocks per stage recomputed.  '=' marks the layouts within\n"
           "the estimate's uncertainty of the best (ties); 'differs most' names the step-time\n"
           "term that separates a layout from the best.\n\n"
           "JSON keys (CSV: the results): schema_version, evaluated, feasible, dominated,\n"
           "partial_recompute_layouts, tie_band, listed,\n"
           "uneven_split_layouts, rejected{reason: count}, results[] (stack, tie, differs_most, dp,\n"
           "tp, pp, vpp, pp_first,\n"
           "pp_last, ep, cp, zero, mbs, gas, recompute, recompute_layers, offload and the\n"
           "estimate keys step_time_s, tokens_per_s_per_gpu, mfu, ...), defaults_that_matter[].\n\n"
           "options:\n");
    cli_print_options(stdout, CMD_SEARCH);
    printf("\nexit status: 0 a layout fits; 1 none fits; 2 usage or input error.\n");
}

/* A hit's memory verdict: tight when it fits by less than the memory model's error for its
   stack (tp_memory_margin), which the default search does not keep free (--mem-headroom). */
static enum tp_mem_verdict hit_verdict(const struct run *r, const struct tp_stack_hit *h)
{
    struct tp_job j = r->j;
    j.framework = h->fw;
    return tp_memory_verdict(h->h.memory_bytes, r->c.gpu.hbm_bytes, tp_memory_margin(&j, NULL));
}

/* The document from the library's builder (the Python package's), or its results as CSV. */
static int print_json(const struct run *r, const struct tp_search_stats *st,
                      const struct tp_stack_hit *hits, size_t n, uint64_t gbs,
                      const char *outside, double band, bool csv, const struct tp_fix *near,
                      size_t n_near, const struct cli_advice *adv)
{
    if (csv) {
        json_t *rows = json_array();
        for (size_t i = 0; i < n; i++) {
            json_t *o = json_pack("{s:I}", "rank", (json_int_t)(i + 1));
            json_t *h = tp_json_search_hit(&hits[i], &hits[0], band);
            json_object_update(o, h);
            json_decref(h);
            if (i == 0)
                cli_advice_cell(o, adv, false);
            json_object_set_new(o, "memory_verdict",
                                json_string(tp_mem_verdict_name(hit_verdict(r, &hits[i]))));
            json_array_append_new(rows, o);
        }
        return out_csv_rows(rows);
    }
    json_t *doc = tp_json_search(&r->m, &r->c, &r->j, gbs, st, hits, n, outside, band, near,
                                 n_near);
    cli_advice_json(doc, adv, false);
    return cli_print_json(doc, 8);
}

/* The split column: "-" for the even split, else the blocks per stage; ",dual" (or "dual")
   under DeepSeek-V3's DualPipe schedule. */
static void split_text(const struct tp_model *m, const struct tp_layout *l, char *buf,
                       size_t len)
{
    bool dual = l->schedule == TP_SCHED_DUALPIPE;
    if (l->pp_first || l->pp_last) {
        report_split(m, l, buf, len);
        if (dual && strlen(buf) + 6 < len)
            strcat(buf, ",dual");
    } else {
        snprintf(buf, len, "%s", dual ? "dual" : "-");
    }
}

/* An MoE search whose best layout puts the experts in parallel: why the best layout that
   replicates them (ep 1) loses, term by term. */
static void replicated_experts(const struct run *r, const struct tp_stack_hit *hits, size_t n)
{
    if (r->m.n_experts == 0 || n == 0 || hits[0].h.layout.ep <= 1)
        return;
    size_t k = 0;
    while (k < n && hits[k].h.layout.ep > 1)
        k++;
    if (k == n) {
        printf("experts replicated (ep 1): no such layout among the %zu shown\n", n);
        return;
    }
    const struct tp_time *a = &hits[k].h.time, *b = &hits[0].h.time;
    printf("experts replicated (ep 1): best at rank %zu, %+.0f%% per token: DP/ZeRO %+.3f s "
           "(every expert's weights gathered or reduced over the data-parallel ranks), TP "
           "%+.3f s, compute %+.3f s, bubble %+.3f s, against EP all-to-all %+.3f s\n", k + 1,
           100 * (hits[k].h.time_per_token / hits[0].h.time_per_token - 1),
           a->dp_comm_s - b->dp_comm_s, a->tp_comm_s - b->tp_comm_s,
           a->fwd_s + a->bwd_s + a->recompute_s - (b->fwd_s + b->bwd_s + b->recompute_s),
           a->bubble_s - b->bubble_s, a->ep_comm_s - b->ep_comm_s);
}

static void print_table(const struct run *r, const struct tp_search_stats *st,
                        const struct tp_stack_hit *hits, size_t n, uint64_t gbs, bool all_stacks,
                        double band, const struct tp_range *rg)
{
    printf("trainplan %s - search\n\n", TP_VERSION);
    printf("model    %s [%s]\n", r->m.name, r->m.family);
    printf("cluster  %u x %s (%u per node)\n", r->c.n_gpus, r->c.gpu.label, r->c.gpus_per_node);
    printf("job      %s, %s, %s, seq %llu, global batch %llu sequences\n",
           tp_name(TP_NAMES_TASK, (int)r->j.task), tp_name(TP_NAMES_PRECISION, (int)r->j.precision),
           all_stacks ? "every stack (--framework picks one)" : tp_stack_get(r->j.framework)->key,
           (unsigned long long)r->j.seq, (unsigned long long)gbs);
    printf("\nevaluated %llu layouts%s (%llu with partial recompute, %llu with an uneven pipeline "
           "split): %llu feasible (%llu of them dominated by a cheaper recompute mode), "
           "rejected:\n",
           (unsigned long long)st->evaluated, all_stacks ? " over the stacks" : "",
           (unsigned long long)st->partial, (unsigned long long)st->uneven,
           (unsigned long long)st->feasible, (unsigned long long)st->dominated);
    for (int i = 0; i < TP_REJECT_COUNT; i++)
        if (st->rejected[i])
            printf("  %-20s %12llu\n", tp_reject_name((enum tp_reject)i),
                   (unsigned long long)st->rejected[i]);
    if (n == 0)
        return;
    printf("\n%-5s %-18s %4s %4s %4s %4s %-12s %2s %4s %4s %4s %4s %5s %-9s %-9s %9s %9s %6s %7s"
           "  %s\n",
           "rank", "stack", "dp", "tp", "pp", "vpp", "split", "sp", "cp", "ep", "zero", "mbs",
           "gas", "recompute", "offload", "step s", "tok/s/GPU", "MFU", "mem GiB",
           "differs most");
    for (size_t i = 0; i < n; i++) {
        const struct tp_layout *l = &hits[i].h.layout;
        const struct tp_time *t = &hits[i].h.time;
        char split[48], rc[24], differs[48];
        split_text(&r->m, l, split, sizeof split);
        report_recompute(l, rc, sizeof rc);
        tp_search_differs(&hits[0], &hits[i], differs, sizeof differs);
        if (hit_verdict(r, &hits[i]) == TP_MEM_TIGHT) { /* within the model's memory error */
            char d[sizeof differs];
            memcpy(d, differs, sizeof d);
            snprintf(differs, sizeof differs, "tight memory%s%.32s", d[0] ? "; " : "", d);
        }
        bool tie = hits[i].h.time_per_token <= hits[0].h.time_per_token * (1 + band);
        printf("%4zu%c %-18s %4u %4u %4u %4u %-12s %2s %4u %4u %4u %4u %5u %-9s %-9s %9.3f %9.0f "
               "%5.1f%% %7.1f  %s\n",
               i + 1, tie ? '=' : ' ', tp_stack_get(hits[i].fw)->key, l->dp, l->tp, l->pp, l->vpp,
               split, l->sp && l->tp > 1 ? "y" : "-", l->cp, l->ep, l->zero, l->mbs, l->gas, rc,
               tp_name(TP_NAMES_OFFLOAD, (int)l->offload), t->step_s, t->tokens_per_s_per_gpu, 100 * t->mfu,
               hits[i].h.memory_bytes / 1073741824.0, differs);
    }
    if (hit_verdict(r, &hits[0]) == TP_MEM_TIGHT) {
        struct tp_job j = r->j;
        j.framework = hits[0].fw;
        double m = tp_memory_margin(&j, NULL);
        /* kept free: total <= capacity / (1 + m), i.e. a headroom of m / (1 + m), rounded up */
        printf("\nwarning: the best layout fits by less than the memory model's error for its "
               "stack (%.0f%%): tight; --mem-headroom %.2f searches with that margin kept free\n",
               100 * m, ceil(100 * m / (1 + m)) / 100);
    }
    printf("\n= ties the best: within %.0f%% per token, the estimate's uncertainty (half its 80%% "
           "range less the spread between sources, which layouts on one cluster share; %s: "
           "%s%s)\n", 100 * band, rg->cls, rg->basis,
           rg->widened ? "; widened: outside the calibrated domain" : "");
    const struct tp_time *b = &hits[0].h.time;
    printf("\nbest layout, time per step: compute %.3f s, TP %.3f, CP %.3f, EP %.3f, PP %.3f, "
           "bubble %.3f, DP %.3f, optimizer %.3f, offload %.3f, overhead %.3f\n",
           b->fwd_s + b->bwd_s + b->recompute_s, b->tp_comm_s, b->cp_comm_s, b->ep_comm_s,
           b->pp_comm_s, b->bubble_s, b->dp_comm_s, b->optimizer_s, b->offload_s, b->overhead_s);
    replicated_experts(r, hits, n);
}

#define EXPLAIN_KEYS "tp pp vpp pp_first pp_last cp ep zero mbs recompute recompute_layers offload"

/* Applies "tp=8 pp=4 mbs=2 recompute=full" to `l`; a new pp without a vpp resets vpp to 1 and
   without pp_first/pp_last the split to the even one; a new recompute mode without
   recompute_layers recomputes every block, and recompute_layers alone means recompute=full.
   Returns EXIT_OK or prints the error. */
/* Which of zero, recompute and offload --explain named (the rest may be re-chosen). */
static bool explain_zero, explain_rc, explain_offload;

static int parse_explain(const char *text, struct tp_layout *l)
{
    bool pp_given = false, vpp_given = false, split_given = false, rc_given = false;
    bool rl_given = false;
    explain_zero = explain_rc = explain_offload = false;
    static const struct {
        const char *key;
        size_t offset;
    } dims[] = {{"tp", offsetof(struct tp_layout, tp)},     {"pp", offsetof(struct tp_layout, pp)},
                {"vpp", offsetof(struct tp_layout, vpp)},   {"cp", offsetof(struct tp_layout, cp)},
                {"ep", offsetof(struct tp_layout, ep)},     {"zero", offsetof(struct tp_layout, zero)},
                {"mbs", offsetof(struct tp_layout, mbs)},
                {"pp_first", offsetof(struct tp_layout, pp_first)},
                {"pp_last", offsetof(struct tp_layout, pp_last)},
                {"recompute_layers", offsetof(struct tp_layout, recompute_layers)}};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *tok = strtok_r(buf, " ,", &save); tok;
         tok = strtok_r(NULL, " ,", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1]) {
            cli_error("--explain: \"%s\" is not key=value (keys: " EXPLAIN_KEYS ")", tok);
            return EXIT_USAGE;
        }
        *eq = '\0';
        const char *val = eq + 1;
        if (strcmp(tok, "recompute") == 0 || strcmp(tok, "offload") == 0) {
            int found = tp_name_value(tok[0] == 'r' ? TP_NAMES_RECOMPUTE : TP_NAMES_OFFLOAD, val);
            if (found < 0) {
                cli_error("--explain: %s=%s: expected %s", tok, val,
                          tok[0] == 'r' ? "none, selective or full" : "none or optimizer");
                return EXIT_USAGE;
            }
            if (tok[0] == 'r')
                l->recompute = (enum tp_recompute)found;
            else
                l->offload = (enum tp_offload)found;
            rc_given = rc_given || tok[0] == 'r';
            explain_offload = explain_offload || tok[0] == 'o';
            continue;
        }
        size_t i = 0;
        while (i < sizeof dims / sizeof dims[0] && strcmp(dims[i].key, tok) != 0)
            i++;
        char *end;
        long v = strtol(val, &end, 10);
        if (i == sizeof dims / sizeof dims[0] || *end || v < 0 || v > 1 << 20) {
            cli_error("--explain: %s=%s: unknown key or not a whole number (keys: " EXPLAIN_KEYS
                      ")", tok, val);
            return EXIT_USAGE;
        }
        *(uint32_t *)(void *)((char *)l + dims[i].offset) = (uint32_t)v;
        pp_given = pp_given || strcmp(tok, "pp") == 0;
        vpp_given = vpp_given || strcmp(tok, "vpp") == 0;
        split_given = split_given || strncmp(tok, "pp_", 3) == 0;
        rl_given = rl_given || strcmp(tok, "recompute_layers") == 0;
        explain_zero = explain_zero || strcmp(tok, "zero") == 0;
    }
    explain_rc = rc_given || rl_given;
    if (pp_given && !vpp_given)
        l->vpp = 1;
    if (pp_given && !split_given)
        l->pp_first = l->pp_last = 0;
    if (rc_given && !rl_given)
        l->recompute_layers = 0;
    if (rl_given && !rc_given)
        l->recompute = TP_RECOMPUTE_FULL;
    if (l->recompute_layers && l->recompute != TP_RECOMPUTE_FULL) {
        cli_error("--explain: recompute_layers=%u needs recompute=full", l->recompute_layers);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

static const char *reason_text(enum tp_reject r)
{
    switch (r) {
    case TP_REJECT_TP_HEADS: return "tp must divide the attention heads and the key/value heads";
    case TP_REJECT_LIMIT: return "a size is beyond the search limits (--max-tp defaults to a node; "
                                 "tp*pp*cp must divide the GPUs)";
    case TP_REJECT_PP_LAYERS: return "pp must divide the layers (vpp > 1: pp*vpp; vpp 1: or the "
                                     "layers plus the embedding and/or the head, with "
                                     "pp_first/pp_last one block short), and vpp needs pp > 1";
    case TP_REJECT_CP_SEQ: return "2*cp must divide the sequence length";
    case TP_REJECT_EP_EXPERTS: return "ep must divide the experts and dp*cp";
    case TP_REJECT_BATCH: return "mbs*dp must divide the global batch";
    case TP_REJECT_FRAMEWORK: return "the framework does not run this combination";
    case TP_REJECT_MEMORY: return "the worst pipeline stage does not fit in memory";
    case TP_REJECT_COUNT: break;
    }
    return "feasible";
}

static void side(const char *label, double a, double b)
{
    printf("  %-34s %12.3f %12.3f\n", label, a, b);
}

/* The knobs --explain did not name come from the best layout; where the stack cannot run them
   with the named ones (Megatron-FSDP's zero 3 with pp > 1) or they do not fit, the fastest
   ZeRO stage, recompute mode and offload that work take their place, as the search would. */
static enum tp_reject explain_check(const struct run *r, const struct tp_search_opts *o,
                                    const struct tp_calib *cal, struct tp_layout *l,
                                    struct tp_memory *mem, struct tp_time *t)
{
    struct tp_layout given = *l;
    enum tp_reject why = tp_search_check(&r->m, &r->c, &r->j, o, cal, l, mem, t);
    if (why != TP_REJECT_FRAMEWORK && why != TP_REJECT_MEMORY)
        return why;
    struct tp_layout best = given;
    double best_tpt = INFINITY;
    for (uint32_t z = 0; z < 4; z++)
        for (int rc = 0; rc < 3; rc++)
            for (int off = 0; off < 2; off++) {
                struct tp_layout c = given;
                struct tp_memory m;
                struct tp_time tt;
                if ((explain_zero && z != given.zero) || (explain_rc && rc != (int)given.recompute) ||
                    (explain_offload && off != (int)given.offload))
                    continue;
                c.zero = z;
                if (!explain_rc) {
                    c.recompute = (enum tp_recompute)rc;
                    c.recompute_layers = 0;
                }
                c.offload = (enum tp_offload)off;
                if (tp_search_check(&r->m, &r->c, &r->j, o, cal, &c, &m, &tt) == TP_REJECT_COUNT &&
                    tt.step_s / tt.tokens_per_step < best_tpt) {
                    best_tpt = tt.step_s / tt.tokens_per_step;
                    best = c;
                }
            }
    if (isinf(best_tpt)) {
        *l = given;
        return tp_search_check(&r->m, &r->c, &r->j, o, cal, l, mem, t);
    }
    *l = best;
    return tp_search_check(&r->m, &r->c, &r->j, o, cal, l, mem, t);
}

static void explain(const struct run *r, const struct tp_search_opts *o,
                    const struct tp_calib *cal, const struct tp_search_hit *best,
                    struct tp_layout *l, const char *text, double band)
{
    struct tp_memory mem;
    struct tp_time t;
    struct tp_layout asked = *l;
    enum tp_reject why = explain_check(r, o, cal, l, &mem, &t);
    char split[64] = "", rc[24];
    /* the split is known valid once the checks before pp-divides-layers have passed it */
    if ((l->pp_first || l->pp_last) && why != TP_REJECT_LIMIT && why != TP_REJECT_TP_HEADS &&
        why != TP_REJECT_PP_LAYERS) {
        char blocks[40];
        report_split(&r->m, l, blocks, sizeof blocks);
        snprintf(split, sizeof split, " (blocks %s)", blocks);
    }
    report_recompute(l, rc, sizeof rc);
    printf("\nexplain %s (what is not named as the best layout; offload none unless named): tp %u "
           "pp %u%s vpp %u dp %u cp %u ep %u zero %u mbs %u recompute %s offload %s\n",
           text, l->tp, l->pp, split, l->vpp, l->dp, l->cp, l->ep, l->zero, l->mbs, rc,
           tp_name(TP_NAMES_OFFLOAD, (int)l->offload));
    if (l->zero != asked.zero || l->recompute != asked.recompute ||
        l->recompute_layers != asked.recompute_layers || l->offload != asked.offload) {
        char was[24];
        report_recompute(&asked, was, sizeof was);
        printf("  changed so it runs (not named; as given: zero %u recompute %s offload %s did "
               "not fit or the stack cannot run it)\n", asked.zero, was,
               tp_name(TP_NAMES_OFFLOAD, (int)asked.offload));
    }
    if (why != TP_REJECT_COUNT) {
        printf("  rejected (%s): %s", tp_reject_name(why), reason_text(why));
        if (why == TP_REJECT_MEMORY)
            printf(" (%.1f GiB of %.1f GiB usable)", mem.total_bytes / 1073741824.0,
                   r->c.gpu.hbm_bytes * (1 - o->mem_headroom) / 1073741824.0);
        printf("\n");
        return;
    }
    struct tp_search_opts probe = *o;
    probe.probe_time_per_token = t.step_s / t.tokens_per_step;
    struct tp_search_hit one[1];
    size_t n;
    struct tp_search_stats st;
    if (run_search(r, &probe, cal, one, 1, &n, &st) != EXIT_OK)
        return;
    double worse = probe.probe_time_per_token / best->time_per_token - 1;
    /* the search times only undominated layouts: the explained one may not be among them
       (a cheaper recompute mode of the same sizes fits), so say how many are faster */
    unsigned long long faster = st.faster_than_probe, timed = st.feasible - st.dominated;
    printf("  feasible: rank %llu, %llu of the search's %llu timed layouts faster%s; %+.1f%% "
           "time per token against the best: %s (the band is %.0f%%, the estimate's "
           "uncertainty)\n\n", faster + 1, faster, timed,
           faster + 1 > timed ? " (this layout is not among them: a cheaper one of the same "
                                "sizes dominates it)" : "",
           100 * worse, worse <= band ? "a tie" : "slower than the band of ties", 100 * band);
    const struct tp_time *b = &best->time;
    printf("  %-34s %12s %12s\n", "seconds per step", "explained", "best");
    side("compute (fwd + bwd + recompute)", t.fwd_s + t.bwd_s + t.recompute_s,
         b->fwd_s + b->bwd_s + b->recompute_s);
    side("TP collectives", t.tp_comm_s, b->tp_comm_s);
    side("CP exchange", t.cp_comm_s, b->cp_comm_s);
    side("MoE all-to-all", t.ep_comm_s, b->ep_comm_s);
    side("pipeline send/recv", t.pp_comm_s, b->pp_comm_s);
    side("pipeline bubble", t.bubble_s, b->bubble_s);
    side("DP / ZeRO (exposed)", t.dp_comm_s, b->dp_comm_s);
    side("optimizer + offload", t.optimizer_s + t.offload_s, b->optimizer_s + b->offload_s);
    side("overhead", t.overhead_s, b->overhead_s);
    side("step", t.step_s, b->step_s);
    side("tokens/s per GPU", t.tokens_per_s_per_gpu, b->tokens_per_s_per_gpu);
    side("memory, GiB (worst stage)", mem.total_bytes / 1073741824.0,
         best->memory_bytes / 1073741824.0);
}

enum { MAX_COUNTS = CLI_MAX_SWEEP_VALUES };

/* Train time and GPU-hours for a token budget (or per million tokens without one). */
static void budget(const struct tp_time *t, uint32_t gpus, double tokens, double *train_s,
                   double *gpu_hours)
{
    double steps = tokens > 0 ? tp_budget_steps(tokens, t->tokens_per_step)
                              : 1e6 / t->tokens_per_step;
    *train_s = steps * t->step_s;
    *gpu_hours = tp_gpu_hours(*train_s, gpus);
}

/* The sweep as JSON or CSV: one object per GPU count. */
static int sweep_json(const struct cli_args *a, const struct run *r,
                      const struct tp_search_opts *o, const struct plot_sweep *ps,
                      const struct tp_range *rg, bool any)
{
    int rc;
    bool priced = a->price >= 0;
    json_t *list = json_array();
    for (size_t i = 0; i < ps->n; i++) {
        json_t *e = json_pack("{s:I}", "gpus", (json_int_t)ps->gpus[i]);
        if (ps->found[i]) { /* gpus first: the CSV header follows the keys' order */
            json_t *h = tp_json_search_hit(&ps->best[i], &ps->best[i], 0);
            json_object_update(e, h);
            json_decref(h);
        }
        json_object_set_new(e, "feasible", json_boolean(ps->found[i]));
        json_object_set_new(e, "pareto", json_boolean(ps->front[i]));
        if (ps->found[i]) {
            json_object_set_new(e, a->tokens > 0 ? "train_time_s" : "time_per_million_tokens_s",
                                json_real(ps->train_s[i]));
            json_object_set_new(e, a->tokens > 0 ? "gpu_hours" : "gpu_hours_per_million_tokens",
                                json_real(ps->gpu_hours[i]));
            json_object_set_new(e, "cost", priced ? json_real(ps->gpu_hours[i] * a->price)
                                                  : json_null());
            /* the 80% range, as estimate gives it (issue 40: sweeps keep their ranges) */
            const struct tp_time *t = &ps->best[i].h.time;
            const char *tk = a->tokens > 0 ? "train_time_s" : "time_per_million_tokens_s";
            char key[48];
            json_object_set_new(e, "tokens_per_s_per_gpu_low",
                                json_real(t->tokens_per_s_per_gpu * rg[i].lo));
            json_object_set_new(e, "tokens_per_s_per_gpu_high",
                                json_real(t->tokens_per_s_per_gpu * rg[i].hi));
            json_object_set_new(e, "step_time_s_low", json_real(t->step_s / rg[i].hi));
            json_object_set_new(e, "step_time_s_high", json_real(t->step_s / rg[i].lo));
            snprintf(key, sizeof key, "%s_low", tk);
            json_object_set_new(e, key, json_real(ps->train_s[i] / rg[i].hi));
            snprintf(key, sizeof key, "%s_high", tk);
            json_object_set_new(e, key, json_real(ps->train_s[i] / rg[i].lo));
            json_object_set_new(e, "range_class", json_string(rg[i].cls));
        }
        json_array_append_new(list, e);
    }
    if (a->format == FMT_CSV)
        return (rc = out_csv_rows(list)) != EXIT_OK ? rc : cli_finish(any ? EXIT_OK : EXIT_NO);
    json_t *doc = json_pack("{s:i, s:s, s:{s:s}, s:s, s:I, s:I, s:o}", "schema_version",
                            TP_SCHEMA_VERSION, "command", "search", "model", "name",
                            r->m.name, "gpu", r->c.gpu.key, "global_batch",
                            (json_int_t)o->gbs, "seq", (json_int_t)r->j.seq, "sweep", list);
    if ((rc = cli_print_json(doc, 8)) != EXIT_OK)
        return rc;
    return cli_finish(any ? EXIT_OK : EXIT_NO);
}

/* The sweep as a table: the best layout per GPU count, * on the Pareto front. */
static int sweep_table(const struct cli_args *a, const struct run *r,
                       const struct tp_search_opts *o, const struct plot_sweep *ps, bool any)
{
    bool priced = a->price >= 0;
    printf("trainplan %s - search over GPU counts\n\n", TP_VERSION);
    printf("model    %s; %s; seq %llu, global batch %llu; %s\n", r->m.name, r->c.gpu.label,
           (unsigned long long)r->j.seq, (unsigned long long)o->gbs,
           ctl.n_fw > 1 ? "every stack (--framework picks one)" : tp_stack_get(ctl.fw[0])->key);
    char tk[32];
    fmt_si(tk, sizeof tk, a->tokens > 0 ? a->tokens : 1e6);
    printf("\nbest layout per GPU count; time and GPU-hours for %s tokens; * = Pareto front of "
           "time against GPU-hours%s\n\n",
           tk, priced ? " (and cost)" : "");
    printf("  %6s %-18s %4s %4s %4s %4s %-12s %4s %4s %4s %5s %-9s %9s %9s %6s %12s %12s%s\n",
           "gpus", "stack", "dp", "tp", "pp", "vpp", "split", "ep", "zero", "mbs", "gas", "recompute", "step s",
           "tok/s/GPU", "MFU", "time", "GPU-hours", priced ? "         cost" : "");
    for (size_t i = 0; i < ps->n; i++) {
        if (!ps->found[i]) {
            printf("  %6lld  no feasible layout\n", (long long)ps->gpus[i]);
            continue;
        }
        const struct tp_layout *l = &ps->best[i].h.layout;
        const struct tp_time *t = &ps->best[i].h.time;
        char wall[32], split[48], rcs[24];
        fmt_duration(wall, sizeof wall, ps->train_s[i]);
        split_text(&r->m, l, split, sizeof split);
        report_recompute(l, rcs, sizeof rcs);
        printf("%c %6lld %-18s %4u %4u %4u %4u %-12s %4u %4u %4u %5u %-9s %9.3f %9.0f %5.1f%% %12s "
               "%12.1f",
               ps->front[i] ? '*' : ' ', (long long)ps->gpus[i], tp_stack_get(ps->best[i].fw)->key, l->dp, l->tp, l->pp, l->vpp, split, l->ep,
               l->zero, l->mbs, l->gas, rcs, t->step_s, t->tokens_per_s_per_gpu, 100 * t->mfu,
               wall, ps->gpu_hours[i]);
        if (priced)
            printf(" %12.2f", ps->gpu_hours[i] * a->price);
        printf("\n");
    }
    return cli_finish(any ? EXIT_OK : EXIT_NO);
}

static int sweep(const struct cli_args *a, struct run *r, const struct tp_search_opts *o,
                 const struct tp_calib *cal)
{
    int64_t counts[MAX_COUNTS];
    size_t nc;
    int rc = cli_parse_list("gpus", a->gpus_list, 1, 1 << 20, counts, MAX_COUNTS, &nc);
    if (rc != EXIT_OK)
        return rc;
    static struct tp_stack_hit best[MAX_COUNTS];
    static struct tp_range range[MAX_COUNTS];
    bool found[MAX_COUNTS];
    double train[MAX_COUNTS], hours[MAX_COUNTS];
    size_t any = 0;
    for (size_t i = 0; i < nc; i++) {
        r->c.n_gpus = (uint32_t)counts[i];
        size_t n;
        struct tp_search_stats st;
        if ((rc = search_stacks(r, o, cal, &ctl, &best[i], 1, &n, &st)) != EXIT_OK)
            return rc;
        found[i] = n > 0;
        any += n > 0;
        if (found[i]) {
            budget(&best[i].h.time, (uint32_t)counts[i], a->tokens, &train[i], &hours[i]);
            struct tp_job j = r->j;
            j.framework = best[i].fw;
            char why[320] = "";
            unsigned domain = tp_calib_domain_check(cal, &r->m, &r->c, &j,
                                                    best[i].h.time.mfu, why, sizeof why);
            tp_time_range(&r->m, &r->c, &j, &best[i].h.layout, domain, &range[i]);
        }
    }
    /* Pareto front of time against GPU-hours: no other count is at least as fast and as cheap
       and better in one of them */
    bool front[MAX_COUNTS];
    tp_pareto_front(train, hours, found, nc, front);
    uint32_t gpus[MAX_COUNTS];
    for (size_t i = 0; i < nc; i++)
        gpus[i] = (uint32_t)counts[i];
    struct plot_sweep ps = {gpus, found, front, train, hours, best, nc, a->tokens};
    if (a->svg && (rc = plot_search(a->svg, r, &ps)) != EXIT_OK)
        return rc;
    if (a->format != FMT_TABLE)
        return sweep_json(a, r, o, &ps, range, any > 0);
    return sweep_table(a, r, o, &ps, any > 0);
}

/* The best layout evaluated as estimate does, over a token budget. */
static void print_budget(const struct cli_args *a, const struct run *r, const struct tp_calib *cal,
                         const struct tp_layout *best)
{
    struct tp_eval_opts eo;
    tp_eval_opts_init(&eo);
    eo.tokens = a->tokens;
    eo.gpu_hour_price = a->price;
    static struct tp_evaluation ev;
    tp_evaluate(&r->m, &r->c, &r->j, best, cal, &eo, &ev, NULL);
    printf("best layout trains %.3g tokens in %.1f h, %.1f GPU-hours", a->tokens,
           ev.wall.total_s / 3600, ev.gpu_hours);
    if (a->price >= 0)
        printf(", cost %.2f", ev.cost);
    printf("\n");
}

int cmd_search(int argc, char **argv)
{
    struct cli_args a;
    static struct run r;
    int rc = cli_begin_run(argc, argv, CMD_SEARCH, &a, help, &r);
    if (rc >= 0)
        return rc;
    if (a.gbs == TP_UNSET) {
        cli_error("search needs the global batch (--gbs, in sequences)");
        return EXIT_USAGE;
    }
    if (a.svg && !a.gpus_list) {
        cli_error("--svg on search plots time against GPU-hours over GPU counts: give --gpus as "
                  "a list (8,16,32) or a range (8..512)");
        return EXIT_USAGE;
    }
    struct tp_layout scratch;
    tp_layout_init(&scratch);
    if (a.explain && (rc = parse_explain(a.explain, &scratch)) != EXIT_OK)
        return rc;
    static struct tp_calib cal;
    tp_calib_init(&cal);
    struct tp_error err = {{0}, {0}};
    if (a.calibration && tp_calib_from_file(a.calibration, &cal, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    struct tp_search_opts o;
    if ((rc = cli_search_opts(&a, (uint64_t)a.gbs, &o)) != EXIT_OK)
        return rc;
    ctl.threads = a.threads != TP_UNSET ? (unsigned)a.threads : par_cpus();
    ctl.progress = isatty(STDERR_FILENO) != 0 && !a.quiet;
    /* no --framework: every stack, each result labelled with its own */
    ctl.n_fw = 0;
    for (int f = 0; f < TP_FW_COUNT; f++)
        if (a.framework == TP_UNSET || f == a.framework)
            ctl.fw[ctl.n_fw++] = (enum tp_framework)f;
    if (a.gpus_list)
        return sweep(&a, &r, &o, &cal);
    size_t top = a.top != TP_UNSET ? (size_t)a.top : 5;
    static struct tp_stack_hit hits[MAX_TOP];
    size_t n;
    struct tp_search_stats st;
    if ((rc = search_stacks(&r, &o, &cal, &ctl, hits, top, &n, &st)) != EXIT_OK)
        return rc;
    char outside[320];
    unsigned domain = tp_calib_domain_check(&cal, &r.m, &r.c, &r.j,
                                            n ? hits[0].h.time.mfu : NAN, outside, sizeof outside);
    struct tp_range rg = {0};
    double band = n ? tp_search_tie_band(&r.m, &r.c, &r.j, &hits[0], domain, &rg) : 0;
    struct tp_fix near[3];
    size_t n_near = n || a.format == FMT_CSV
                        ? 0 : search_nearest(&r, &o, &cal, &ctl, &st, a.framework != TP_UNSET, near, 3);
    /* the defaults the best layout hangs on: what the search did not choose (advice.c) */
    static struct cli_advice adv;
    memset(&adv, 0, sizeof adv);
    if (n > 0) {
        static struct run best;
        best = r;
        best.j.framework = hits[0].fw;
        best.l = hits[0].h.layout;
        cli_advice(&a, &best, &cal, TP_GIVEN_MBS | TP_GIVEN_GBS | TP_GIVEN_RECOMPUTE |
                                        TP_GIVEN_ZERO | TP_GIVEN_FRAMEWORK, false, &adv);
    }
    if (a.format != FMT_TABLE) {
        if ((rc = print_json(&r, &st, hits, n, o.gbs, outside, band, a.format == FMT_CSV, near,
                             n_near, &adv)) != EXIT_OK)
            return rc;
    } else {
        print_table(&r, &st, hits, n, o.gbs, ctl.n_fw > 1, band, &rg);
        if (n > 0) {
            static struct run best;
            best = r;
            best.j.framework = hits[0].fw;
            best.l = hits[0].h.layout;
            cli_advice_print(&best, &adv, false);
        }
        if (n == 0)
            search_nothing(&ctl, &o, &st, near, n_near);
        if (outside[0])
            printf("warning: outside what the calibration was fitted on: %s\n", outside);
        if (n > 0)
            cli_warn_misaligned(&r.m, hits[0].h.layout.tp, r.j.precision);
        if (n > 0 && a.tokens > 0)
            print_budget(&a, &r, &cal, &hits[0].h.layout);
        if (a.explain) {
            struct tp_layout l;
            tp_layout_init(&l);
            if (n > 0)
                l = hits[0].h.layout;
            /* the sizes the user did not name come from the best layout, but never its
               optimizer offload: the explained layout is the user's (issue 40) */
            l.offload = TP_OFFLOAD_NONE;
            if ((rc = parse_explain(a.explain, &l)) != EXIT_OK)
                return rc;
            if (n > 0)
                explain(&r, &o, &cal, &hits[0].h, &l, a.explain, band);
        }
    }
    return cli_finish(n > 0 ? EXIT_OK : EXIT_NO);
}
