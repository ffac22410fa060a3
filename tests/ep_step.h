/*
 * ep_step.h - DeepEP's and HybridEP's benchmarks as a training step, for the MoE tests
 * (test_moe.c, test_moe_comm_megatron.c, test_hybridep.c): `m` on `gpus` of `gpu` (H800 and
 * FP8 for ep_step_comm), Megatron, 4096 tokens per rank, uniform routing (the benchmarks route
 * uniformly), EP over `ep` ranks with dispatcher `d`; the step's exposed expert-parallel
 * seconds.
 */
#ifndef TP_TEST_EP_STEP_H
#define TP_TEST_EP_STEP_H

#include "trainplan.h"

static inline double ep_step_comm_on(const struct tp_model *m, const char *gpu,
                                     enum tp_precision prec, uint32_t gpus, uint32_t ep,
                                     enum tp_moe_dispatcher d)
{
    struct tp_cluster c;
    struct tp_job j;
    struct tp_layout l;
    struct tp_calib cal;
    struct tp_time t;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_cluster_init(&c, gpu, gpus, &err), TP_OK);
    tp_job_init(&j);
    tp_layout_init(&l);
    tp_calib_init(&cal);
    j.framework = TP_FW_MEGATRON;
    j.precision = prec;
    j.seq = 4096;
    j.moe_imbalance = 1;
    j.moe_dispatcher = d;
    l.dp = gpus;
    l.ep = ep;
    l.zero = 1;
    l.recompute = TP_RECOMPUTE_NONE;
    assert_int_equal(tp_layout_check(m, &c, &j, &l, &err), TP_OK);
    assert_int_equal(tp_time_step(m, &c, &j, &l, &cal, &t), TP_OK);
    return t.ep_comm_s;
}

static inline double ep_step_comm(const struct tp_model *m, uint32_t gpus, uint32_t ep,
                                  enum tp_moe_dispatcher d)
{
    return ep_step_comm_on(m, "h800", TP_PREC_FP8, gpus, ep, d);
}

#endif
