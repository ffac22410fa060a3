/*
 * run_fixture.h - one run to price, for the tests of a step or of its memory (test_time.c,
 * test_host.c, test_advise.c, test_moe_hf.c, test_memory.c, ...): a preset on N GPUs of a type,
 * the job and the layout at their defaults and the built-in calibration; each test then sets
 * what its source ran.
 */
#ifndef TP_TEST_RUN_FIXTURE_H
#define TP_TEST_RUN_FIXTURE_H

#include "trainplan.h"

static struct tp_model model;
static struct tp_cluster cluster;
static struct tp_job job;
static struct tp_layout lay;
static struct tp_calib cal;

static inline void fixture_run(const char *preset, const char *gpu, uint32_t gpus)
{
    struct tp_error err = {{0}, {0}};
    if (tp_model_from_preset(preset, &model, &err) != TP_OK)
        fail_msg("%s", err.msg);
    if (tp_cluster_init(&cluster, gpu, gpus, &err) != TP_OK)
        fail_msg("%s", err.msg);
    tp_job_init(&job);
    tp_layout_init(&lay);
    tp_calib_init(&cal);
}

/* A catalog GPU by key. */
static inline const struct tp_gpu *fixture_gpu(const char *key)
{
    const struct tp_gpu *g;
    struct tp_error err = {{0}, {0}};
    if (tp_gpu_find(key, &g, &err) != TP_OK)
        fail_msg("%s", err.msg);
    return g;
}

/* The run as set is one the library and its stack accept. */
static inline void fixture_check(void)
{
    struct tp_error err = {{0}, {0}};
    if (tp_layout_check(&model, &cluster, &job, &lay, &err) != TP_OK ||
        tp_stack_check(&model, &job, &lay, &err) != TP_OK)
        fail_msg("%s", err.msg);
}

/* The step time of the run as set, under stack `fw` (its layout checked first). */
static inline struct tp_time fixture_step(enum tp_framework fw)
{
    struct tp_error err = {{0}, {0}};
    struct tp_time t;
    job.framework = fw;
    if (tp_layout_check(&model, &cluster, &job, &lay, &err) != TP_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(tp_time_step(&model, &cluster, &job, &lay, &cal, &t), TP_OK);
    return t;
}

/* The worst pipeline stage's memory of the run as set (its layout checked first). */
static inline struct tp_memory fixture_memory(void)
{
    struct tp_error err = {{0}, {0}};
    struct tp_layout l = lay;
    if (tp_layout_check(&model, &cluster, &job, &l, &err) != TP_OK)
        fail_msg("%s", err.msg);
    struct tp_memory m;
    tp_memory_worst(&model, &cluster, &job, &l, &m);
    return m;
}

#endif
