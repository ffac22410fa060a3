/*
 * calib_lookup.c - what the evaluation reads from a calibration: a GPU's entry and its GEMM
 * rates, and whether an input lies in the domain the calibration was fitted on (moved here from
 * data/calib.c, which reads and writes calibration files, so that the evaluation does not call
 * up into the data floor).
 */
#include "eval_internal.h"
#include "time_internal.h"

#include <string.h>

void tp_calib_gemm_rates(const struct tp_calib *c, const struct tp_gpu *g, double *mamf,
                         double *mamf8)
{
    const struct tp_calib_gpu *o = tp_calib_gpu_find(c, g->key);
    double m16 = tp_gpu_mamf(g, false), m8 = tp_gpu_mamf(g, true);
    *mamf = o && o->mamf_bf16 > 0 ? o->mamf_bf16 : m16 > 0 ? m16 : c->mamf_default;
    *mamf8 = o && o->mamf_fp8 > 0 ? o->mamf_fp8 : m8 > 0 ? m8 : *mamf * c->fp8_mamf_ratio;
}

const struct tp_calib_gpu *tp_calib_gpu_find(const struct tp_calib *c, const char *key)
{
    for (size_t i = 0; i < c->n_gpus && i < TP_CALIB_MAX_GPUS; i++)
        if (strcmp(c->gpus[i].key, key) == 0)
            return &c->gpus[i];
    return NULL;
}

uint32_t tp_calib_domain_gpu(const struct tp_calib_domain *d, const char *key)
{
    uint32_t i = 0;
    while (i < d->n_gpus && strcmp(d->gpu[i].key, key) != 0)
        i++;
    return i;
}

unsigned tp_calib_domain_check(const struct tp_calib *c, const struct tp_model *m,
                               const struct tp_cluster *cl, const struct tp_job *j, double mfu,
                               char *why, size_t len)
{
    const struct tp_calib_domain *d = &c->domain;
    unsigned flags = 0;
    size_t at = 0;
    if (len)
        why[0] = 0;
    if (d->rows == 0)
        return 0;
#define SAY(...)                                                                                \
    do {                                                                                        \
        if (at < len) {                                                                         \
            int k = tp_snprintf(why + at, len - at, "%s", at ? "; " : "");                         \
            at += k > 0 ? (size_t)k : 0;                                                        \
        }                                                                                       \
        if (at < len) {                                                                         \
            int k = tp_snprintf(why + at, len - at, __VA_ARGS__);                                  \
            at += k > 0 ? (size_t)k : 0;                                                        \
        }                                                                                       \
    } while (0)
    uint32_t i = tp_calib_domain_gpu(d, cl->gpu.key);
    if (i == d->n_gpus) {
        flags |= TP_DOMAIN_GPU;
        SAY("%s was never measured by this calibration", cl->gpu.key);
    } else if (cl->n_gpus > 4.0 * d->gpu[i].max_gpus) {
        flags |= TP_DOMAIN_SCALE;
        SAY("%u GPUs is over 4x the largest %s run calibrated (%u)", cl->n_gpus, cl->gpu.key,
            d->gpu[i].max_gpus);
    }
    if (d->max_params > 0) {
        struct tp_params p;
        tp_count_params(m, &p);
        double n = (double)p.total;
        if (n > 4 * d->max_params || n < d->min_params / 4) {
            flags |= TP_DOMAIN_SIZE;
            SAY("%.3g parameters lies far outside the calibrated %.3g..%.3g", n, d->min_params,
                d->max_params);
        }
    }
    if (d->max_seq && j->seq > 4 * d->max_seq) {
        flags |= TP_DOMAIN_SEQ;
        SAY("sequence %llu is over 4x the longest calibrated (%llu)",
            (unsigned long long)j->seq, (unsigned long long)d->max_seq);
    }
    /* a stack counts as measured when a stack of its kernel style was (eval/host.c:
       DeepSpeed's engine, FSDP and torchtitan run the same eager PyTorch blocks) */
    bool style_seen = d->stacks == 0;
    for (unsigned f = 0; f < TP_FW_COUNT && !style_seen; f++)
        style_seen = (d->stacks & (1u << f)) &&
                     tp_kernel_style_of((enum tp_framework)f) == tp_kernel_style_of(j->framework);
    if (!style_seen) {
        flags |= TP_DOMAIN_STACK;
        SAY("no stack with %s's kernels was measured by this calibration",
            tp_stack_get(j->framework)->key);
    }
    const struct tp_calib_gpu *own = tp_calib_gpu_find(c, cl->gpu.key);
    if (!(own && own->mamf_bf16 > 0) && tp_gpu_mamf(&cl->gpu, false) <= 0) {
        flags |= TP_DOMAIN_MAMF;
        SAY("%s has no measured GEMM efficiency: MAMF %.2f assumed (the data-center GPUs "
            "measured)", cl->gpu.key, c->mamf_default);
    }
#undef SAY
    return flags | tp_calib_mfu_check(c, cl, j, mfu, why, len);
}

int tp_mfu_class(enum tp_precision p)
{
    return tp_prec_gemm_dtype(p) >= TP_FP8;
}

unsigned tp_calib_mfu_check(const struct tp_calib *c, const struct tp_cluster *cl,
                            const struct tp_job *j, double mfu, char *why, size_t len)
{
    const struct tp_calib_domain *d = &c->domain;
    uint32_t i = tp_calib_domain_gpu(d, cl->gpu.key);
    int k = tp_mfu_class(j->precision);
    /* 1% over: the sources print three or four digits, so a prediction that rounds to the
       best measurement is not past it */
    if (i == d->n_gpus || !(d->gpu[i].max_mfu[k] > 0) || !(mfu > 1.01 * d->gpu[i].max_mfu[k]))
        return 0;
    size_t at = why && len ? strnlen(why, len) : len;
    if (at + 1 < len)
        tp_snprintf(why + at, len - at, "%sMFU %.1f%% lies above the highest any %s run measured "
                    "on %s (%.1f%%, %s)", at ? "; " : "", 100 * mfu,
                    k ? "8- or 4-bit" : "16-bit", cl->gpu.key, 100 * d->gpu[i].max_mfu[k],
                    d->gpu[i].max_mfu_row[k]);
    return TP_DOMAIN_MFU;
}
