/*
 * test_search.c - the layout search returns only valid layouts, agrees with the estimate of each,
 * accounts for every rejected layout, and its pruning never changes the winner.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>
#include <string.h>

enum { K = 20 };

struct world {
    struct tp_model m;
    struct tp_cluster c;
    struct tp_job j;
    struct tp_calib cal;
    struct tp_search_opts o;
};

static void setup(struct world *w, const char *preset, const char *gpu, uint32_t n,
                  enum tp_framework fw, uint64_t gbs, uint64_t seq)
{
    struct tp_error err = {{0}};
    if (tp_model_from_preset(preset, &w->m, &err) != TP_OK)
        fail_msg("%s", err.msg);
    const struct tp_gpu *g;
    if (tp_gpu_find(gpu, &g, &err) != TP_OK)
        fail_msg("%s", err.msg);
    w->c.gpu = *g;
    w->c.n_gpus = n;
    w->c.gpus_per_node = g->gpus_per_node;
    tp_job_init(&w->j);
    w->j.framework = fw;
    w->j.seq = seq;
    tp_calib_init(&w->cal);
    tp_search_opts_init(&w->o);
    w->o.gbs = gbs;
}

static size_t search(struct world *w, struct tp_search_hit *hits, struct tp_search_stats *st)
{
    size_t n = 0;
    struct tp_error err = {{0}};
    if (tp_search(&w->m, &w->c, &w->j, &w->o, &w->cal, hits, K, &n, st, &err) != TP_OK)
        fail_msg("%s", err.msg);
    return n;
}

/* Every hit satisfies every constraint, fits, matches tp_time_step, and hits are sorted. */
static void check_hits(struct world *w, const struct tp_search_hit *hits, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct tp_layout l = hits[i].layout;
        struct tp_error err = {{0}};
        assert_int_equal(tp_layout_check(&w->m, &w->c, &w->j, &l, &err), TP_OK);
        assert_int_equal(l.tp * l.pp * l.cp * l.dp, w->c.n_gpus);
        assert_true((uint64_t)l.mbs * l.gas * l.dp == w->o.gbs);
        assert_true(l.tp <= w->c.gpus_per_node);
        assert_int_equal(w->m.n_heads % l.tp, 0);
        assert_int_equal(w->m.n_kv_heads % l.tp, 0);
        struct tp_memory mem;
        tp_memory_worst(&w->m, &w->c, &w->j, &l, &mem);
        assert_true(mem.fits);
        assert_true(mem.total_bytes == hits[i].memory_bytes);
        struct tp_time t;
        tp_time_step(&w->m, &w->c, &w->j, &l, &w->cal, &t);
        assert_true(t.step_s == hits[i].time.step_s);
        assert_true(t.tokens_per_s_per_gpu == hits[i].time.tokens_per_s_per_gpu);
        if (i > 0)
            assert_true(hits[i - 1].time_per_token <= hits[i].time_per_token);
    }
}

/* --explain's classifier agrees with the search: every hit is feasible with the same time, and
   probing the best hit ranks it first. */
static void check_explain(struct world *w, const struct tp_search_hit *hits, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct tp_layout l = hits[i].layout;
        l.offload = TP_OFFLOAD_NONE;
        if (hits[i].layout.offload != TP_OFFLOAD_NONE)
            continue; /* the search added offload because the plain layout does not fit */
        struct tp_memory mem;
        struct tp_time t;
        assert_int_equal(tp_search_check(&w->m, &w->c, &w->j, &w->o, &w->cal, &l, &mem, &t),
                         TP_REJECT_COUNT);
        assert_true(t.step_s == hits[i].time.step_s);
    }
    if (n == 0)
        return;
    struct tp_search_opts probe = w->o;
    probe.probe_time_per_token = hits[0].time_per_token;
    static struct tp_search_hit tmp[K];
    size_t k;
    struct tp_search_stats st;
    struct tp_error err = {{0}};
    assert_int_equal(tp_search(&w->m, &w->c, &w->j, &probe, &w->cal, tmp, K, &k, &st, &err),
                     TP_OK);
    assert_int_equal(st.faster_than_probe, 0);
    if (n > 1) {
        probe.probe_time_per_token = hits[n - 1].time_per_token;
        assert_int_equal(tp_search(&w->m, &w->c, &w->j, &probe, &w->cal, tmp, K, &k, &st, &err),
                         TP_OK);
        assert_true(st.faster_than_probe >= n - 1 - 1);
    }
}

static void check_counts(const struct tp_search_stats *st)
{
    uint64_t sum = 0;
    for (int i = 0; i < TP_REJECT_COUNT; i++)
        sum += st->rejected[i];
    assert_true(sum == st->evaluated - st->feasible);
    assert_true(st->dominated <= st->feasible);
}

static void test_megatron_gpt3(void **state)
{
    (void)state;
    static struct world w;
    static struct tp_search_hit hits[K];
    struct tp_search_stats st;
    setup(&w, "gpt3-175b", "a100-80gb", 128, TP_FW_MEGATRON, 256, 2048);
    size_t n = search(&w, hits, &st);
    assert_true(n > 0);
    check_hits(&w, hits, n);
    check_counts(&st);
    /* the 175B model does not fit without model parallelism */
    for (size_t i = 0; i < n; i++)
        assert_true(hits[i].layout.tp * hits[i].layout.pp > 1);
    assert_true(st.rejected[TP_REJECT_MEMORY] > 0);
}

/* Pruned (one search over all recompute modes) and exhaustive (each mode on its own, every
   layout timed) agree on the best layout. */
static void test_pruning_keeps_the_best(void **state)
{
    (void)state;
    static const struct {
        const char *preset, *gpu;
        uint32_t n;
        enum tp_framework fw;
        uint64_t gbs, seq;
    } cases[] = {{"llama-3.1-8b", "h100-sxm", 16, TP_FW_MEGATRON, 128, 8192},
                 {"llama-3.1-70b", "h100-sxm", 64, TP_FW_MEGATRON, 256, 4096},
                 {"qwen3-30b-a3b", "h100-sxm", 16, TP_FW_MEGATRON, 256, 4096},
                 {"llama-3.1-8b", "a100-40gb", 8, TP_FW_FSDP, 64, 4096},
                 {"mixtral-8x7b", "mi300x", 8, TP_FW_DEEPSPEED, 64, 4096}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        static struct world w;
        static struct tp_search_hit pruned[K], single[K];
        struct tp_search_stats st;
        setup(&w, cases[c].preset, cases[c].gpu, cases[c].n, cases[c].fw, cases[c].gbs,
              cases[c].seq);
        size_t n = search(&w, pruned, &st);
        check_hits(&w, pruned, n);
        check_counts(&st);
        check_explain(&w, pruned, n);
        double best = INFINITY;
        for (unsigned mode = 0; mode < 3; mode++) {
            w.o.recompute_mask = 1u << mode;
            struct tp_search_stats s1;
            size_t k = search(&w, single, &s1);
            assert_int_equal(s1.dominated, 0);
            check_counts(&s1);
            if (k > 0 && single[0].time_per_token < best)
                best = single[0].time_per_token;
        }
        assert_true(n > 0);
        assert_true(pruned[0].time_per_token == best);
    }
}

/* Framework presets restrict the knobs to what the framework runs. */
static void test_framework_limits(void **state)
{
    (void)state;
    static struct world w;
    static struct tp_search_hit hits[K];
    struct tp_search_stats st;
    setup(&w, "mixtral-8x7b", "mi300x", 8, TP_FW_DEEPSPEED, 64, 4096);
    size_t n = search(&w, hits, &st);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        const struct tp_layout *l = &hits[i].layout;
        assert_true(l->tp == 1 && l->pp == 1 && l->cp == 1);
        assert_false(l->ep > 1 && l->zero == 3); /* DeepSpeed MoE does not run under ZeRO-3 */
    }
    assert_true(st.rejected[TP_REJECT_FRAMEWORK] > 0);
    setup(&w, "llama-3.1-8b", "h100-sxm", 16, TP_FW_FSDP, 128, 4096);
    n = search(&w, hits, &st);
    for (size_t i = 0; i < n; i++)
        assert_true(hits[i].layout.pp == 1 && hits[i].layout.zero != 1);
}

/* Impossible: nothing fits, every layout is accounted for, and the headroom only removes. */
static void test_nothing_fits(void **state)
{
    (void)state;
    static struct world w;
    static struct tp_search_hit hits[K];
    struct tp_search_stats st;
    setup(&w, "llama-3.1-405b", "rtx4090", 8, TP_FW_MEGATRON, 64, 4096);
    assert_int_equal(search(&w, hits, &st), 0);
    struct tp_layout l;
    tp_layout_init(&l);
    l.tp = 8;
    struct tp_memory mem;
    struct tp_time t;
    assert_int_equal(tp_search_check(&w.m, &w.c, &w.j, &w.o, &w.cal, &l, &mem, &t),
                     TP_REJECT_MEMORY);
    l.tp = 3;
    assert_int_equal(tp_search_check(&w.m, &w.c, &w.j, &w.o, &w.cal, &l, &mem, &t),
                     TP_REJECT_LIMIT); /* 3 does not divide 8 GPUs */
    assert_int_equal(st.feasible, 0);
    check_counts(&st);
    setup(&w, "llama-3.1-8b", "h100-sxm", 8, TP_FW_MEGATRON, 64, 4096);
    struct tp_search_stats a, b;
    search(&w, hits, &a);
    w.o.mem_headroom = 0.5;
    search(&w, hits, &b);
    assert_true(b.feasible < a.feasible && b.evaluated == a.evaluated);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_megatron_gpt3),
        cmocka_unit_test(test_pruning_keeps_the_best),
        cmocka_unit_test(test_framework_limits),
        cmocka_unit_test(test_nothing_fits),
    };
    return cmocka_run_group_tests_name("search", tests, NULL, NULL);
}
