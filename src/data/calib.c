/*
 * calib.c - the time model's efficiency parameters: physics priors, the built-in calibration
 * (data/calibration.json, compiled in) and the calibration file (JSON, read and written with
 * jansson).
 *
 * Priors (tp_calib_prior), before any fit; docs/physics.md section numbers:
 *   MAMF fractions per GPU live in the catalog; 0.80 for GPUs without a measurement (the
 *     H100/B200 range); fp8/bf16 MAMF ratio 0.90 (H100 0.709/0.803 = 0.88, H200 0.91,
 *     B200 0.98); GEMM tiles 128 x 128 (the CUTLASS/cuBLAS bf16 CTA shape on sm80/sm90);
 *     gemm_scale 1: training GEMMs at the MAMF sweep's rate.  grouped_gemm_scale 1: a grouped
 *     GEMM runs the dense kernel's tiles over a list of problems (CUTLASS grouped GEMM,
 *     cuBLAS grouped batched GEMM), whose per-group tile and wave quantization gemm() already
 *     prices [derived]; the MoE rows pin what the grouped kernels lose beyond that (scheduling,
 *     the routing metadata), apart from the dense rate (issue 36: a GPU's dense rate fitted on
 *     MoE rows alone put dense B200 runs 18-21% too fast).
 *   attention: FlashAttention forward at 0.50 of the 16-bit peak (§5.1: 0.5-0.7 on H100 for
 *     d_h 128), backward 2.5x the forward (5 of its 7 matmuls: 2.5x the forward's 2); that is the
 *     architecture-native kernel (FlashAttention-3, cuDNN/TE).  FlashAttention-2 on Hopper and
 *     Blackwell (async-MMA GPUs) at 0.55 of it (FlashAttention-3, arXiv:2407.08608, Fig. 5:
 *     FA2 335-370 vs FA3 610-660 TFLOP/s, H100 bf16, head dim 128).  Each 128-query block
 *     pays 256 keys of uncounted work (attn_block_keys): FA3 causal forward, head dim 128,
 *     at 512 tokens runs at 0.47 of its 16k rate (292 vs 616 TFLOP/s, Fig. 5), and
 *     256 / (256 + 256) is 0.5.
 *   memory-bound kernels at 0.60 of HBM bandwidth; fused stacks remove 0.80 of the op-by-op
 *     traffic of eager code (§5.1 eta_kernel 0.80-0.90 fused vs 0.6-0.7 eager) [heuristic].
 *   network: eps_nvlink 0.80, eps_ib 0.90, eps_pcie 0.75 (§4.2); NCCL ring latency 8.4 us
 *     base, 3.4 us per intra-node step, 14 us per inter-node step ([NCCL-TUNE] tuning.cc).
 *   overlap: DP reduction behind 0.85 of the last backward (§5.3 phi 0.8-0.9); ZeRO-3
 *     prefetch behind 0.85 of the covering compute; TP collectives of jobs that overlap them
 *     (Transformer Engine userbuffers) 0.60 hidden [heuristic]; the MoE all-to-all of jobs
 *     that run Megatron-Core's EP A2A overlap 0.80 hidden behind the other micro-batch's
 *     compute [heuristic]; those of the other jobs, and pipeline transfers, exposed (0)
 *     unless a fit finds otherwise; a DP/ZeRO collective hidden behind compute slows that
 *     compute by 0.189 of its own duration (overlap_slowdown: Lee et al. 2025,
 *     arXiv:2507.03114, mean compute slowdown while overlapped on A100/H100/MI250/MI210;
 *     src/eval/time.c behind); optimizer kernels at
 *     0.80 of HBM bandwidth (§5.3);
 *     CPU Adam 20 GB/s of host memory per GPU [heuristic]; 0.05 s per step of host overhead
 *     beyond what src/eval/host_step.c counts from each stack's code (the optimizer's launches
 *     and drains, the loss checks, a full graph's copies: under a millisecond on fused
 *     stacks), the residual: data loading, scheduler, logging and whatever else the rows need
 *     [heuristic; the rows pin it: 105 rows of 6 sources in the built-in fit, calibrate
 *     --explain; held at a 5 ms prior it breaks the held-out figures, docs/host.md].
 *   eager stacks (src/eval/time.c expert_loop, z3_expert_fetch) and every block's launches
 *     (src/eval/host.c): 12 us of host time per eager PyTorch op (Python, dispatcher and launch;
 *     the per-op overhead CUDA graphs exist to remove): pytorch/pytorch#41383 measures 6.8 us
 *     of CPU per op with autograd before the CUDA launch's 1-3 us, 5-25 us per op in all (the
 *     fit holds it to that band: src/fit/fit.c); 50 us per device-to-host sync with the queue drained (torch.where in Hugging
 *     Face's expert loop) [heuristic]; 12 ops per expert forward (modeling_qwen3_moe.py: where,
 *     index, gate, up, act, mul, down, weight index and mul, index_add_, casts) [derived];
 *     500 us per on-demand ZeRO-3 fetch of one Linear's weight: the pre- and post-forward
 *     hooks' Python (fetch_sub_module, release), a small all-gather (~30 us on 8 NVLink GPUs)
 *     and the wait that drains the launch queue [derived estimate; held-out check: ms-swift's
 *     Qwen1.5-MoE-A2.7B ZeRO-2 vs ZeRO-3 benchmark, data/runs/public_hf_stacks.csv].  A measured
 *     magnitude: DeepSpeed PR #1188 (2021) times the forward of a 5.1B BERT (64 layers, six
 *     Linear weights each, 386 fetches) on 8 NVLink A100s at 470 ms before and 270 ms after its
 *     fetch fixes, against 60 ms under ZeRO-2 (issue #1174); less the ~42 ms of moving 10.2 GB
 *     at ~210 GB/s, 0.95 and 0.44 ms per exposed fetch.
 * The built-in defaults are these priors with the parameters `trainplan calibrate --base prior`
 * fitted over data/runs (data/calibration.json; `make calibration` regenerates
 * it, `make check-calibration` fails when it is stale).
 */
#include "data_internal.h"
#include "time_internal.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tp_calib_prior(struct tp_calib *c)
{
    memset(c, 0, sizeof *c);
    c->mamf_default = 0.80;
    c->fp8_mamf_ratio = 0.90;
    c->fp8_rowwise_ratio = 0.90;
    c->gemm_scale = 1.0;
    c->grouped_gemm_scale = 1.0;
    c->tile_m = 128;
    c->tile_n = 128;
    c->attn_eff = 0.50;
    c->attn_bwd_ratio = 2.5;
    c->attn_block_keys = 256;
    c->fa2_ratio = 0.55;
    c->cudnn_gen_ratio = 1.16; /* cudnn-frontend benchmark/: 9.19.1 over 9.1.0 (fit.c) */
    c->mem_eff = 0.60;
    c->fused_elementwise = 0.80;
    c->layer_overhead_s = 0.0; /* superseded by the launches of src/eval/host.c; not fitted */
    c->eager_op_s = 12e-6;
    c->host_sync_s = 50e-6;
    c->moe_eager_ops = 12;
    c->z3_fetch_s = 500e-6;
    c->step_overhead_s = 0.05;
    c->eff_intra = 0.80;
    c->eff_inter = 0.90;
    c->eff_pcie = 0.75;
    c->lat_base_s = 8.4e-6;
    c->lat_intra_s = 3.4e-6;
    c->lat_inter_s = 14e-6;
    c->dp_overlap = 0.85;
    c->fsdp_overlap = 0.85;
    c->tp_overlap = 0.60;
    c->ep_overlap = 0.80;
    c->pp_overlap = 0.0;
    c->overlap_slowdown = 0.189;
    c->opt_eff = 0.80;
    c->host_adam_bw = 20e9;
}

/* data/calibration.json as a C string (the Makefile generates it) */
static const char BUILTIN[] =
#include "calib_defaults.inc"
    ;

void tp_calib_init(struct tp_calib *c)
{
    tp_calib_prior(c);
    struct tp_error err;
    /* tests/test_time.c checks that the built-in file reads and equals data/calibration.json */
    if (tp_calib_from_json(BUILTIN, sizeof BUILTIN - 1, c, &err) != TP_OK)
        tp_calib_prior(c);
}

/* The scalar fields, in file order, with the range a value must lie in. */
struct field {
    const char *name;
    size_t offset;
    bool integer;
    double lo, hi;
};

#define R(f, lo, hi) {#f, offsetof(struct tp_calib, f), false, lo, hi}
#define I(f, lo, hi) {#f, offsetof(struct tp_calib, f), true, lo, hi}
static const struct field FIELDS[] = {
    R(mamf_default, 0.01, 1),    R(fp8_mamf_ratio, 0.1, 2),  R(fp8_rowwise_ratio, 0.05, 1),
    R(gemm_scale, 0.01, 2),      R(grouped_gemm_scale, 0.01, 2),
    I(tile_m, 8, 1024),          I(tile_n, 8, 1024),         R(attn_eff, 0.01, 1),
    R(attn_bwd_ratio, 1, 10),    R(attn_block_keys, 0, 65536), R(fa2_ratio, 0.05, 1),
    R(cudnn_gen_ratio, 0.5, 2),
    R(mem_eff, 0.01, 1),         R(fused_elementwise, 0, 1),
    R(layer_overhead_s, 0, 1),   R(eager_op_s, 0, 0.01),     R(host_sync_s, 0, 0.1),
    R(moe_eager_ops, 0, 1000),   R(z3_fetch_s, 0, 0.1),
    R(step_overhead_s, 0, 3600), R(eff_intra, 0.01, 2),
    R(eff_inter, 0.01, 2),       R(eff_pcie, 0.01, 2),       R(lat_base_s, 0, 1),
    R(lat_intra_s, 0, 1),        R(lat_inter_s, 0, 1),       R(dp_overlap, 0, 1),
    R(fsdp_overlap, 0, 1),       R(tp_overlap, 0, 1),        R(ep_overlap, 0, 1),
    R(pp_overlap, 0, 1),         R(overlap_slowdown, 0, 1),  R(opt_eff, 0.01, 1),
    R(host_adam_bw, 1e6, 1e13),
};
#undef R
#undef I
#define N_FIELDS (sizeof FIELDS / sizeof FIELDS[0])

struct gpu_field {
    const char *name;
    size_t offset;
};
static const struct gpu_field GPU_FIELDS[] = {
    {"mamf_bf16", offsetof(struct tp_calib_gpu, mamf_bf16)},
    {"mamf_fp8", offsetof(struct tp_calib_gpu, mamf_fp8)},
    {"attn_eff", offsetof(struct tp_calib_gpu, attn_eff)},
    {"mem_eff", offsetof(struct tp_calib_gpu, mem_eff)},
};
#define N_GPU_FIELDS (sizeof GPU_FIELDS / sizeof GPU_FIELDS[0])

static enum tp_status number(json_t *v, const char *where, double lo, double hi, bool integer,
                             double *out, struct tp_error *err)
{
    if (!json_is_number(v))
        return tp_fail(err, TP_EINVAL, "calibration: %s must be a number", where);
    double x = json_number_value(v);
    if (!isfinite(x) || x < lo || x > hi || (integer && x != floor(x)))
        return tp_fail(err, TP_EINVAL, "calibration: %s = %g is out of range (%g..%g%s)", where,
                       x, lo, hi, integer ? ", whole" : "");
    *out = x;
    return TP_OK;
}

static enum tp_status read_gpus(json_t *obj, struct tp_calib *c, struct tp_error *err)
{
    if (!json_is_object(obj))
        return tp_fail(err, TP_EINVAL, "calibration: \"gpus\" must be an object of GPU keys");
    const char *key;
    json_t *entry;
    json_object_foreach(obj, key, entry) {
        const struct tp_gpu *g;
        struct tp_error inner;
        if (tp_gpu_find(key, &g, &inner) != TP_OK)
            return tp_fail(err, TP_EINVAL, "calibration: gpus: %s", inner.msg);
        if (!json_is_object(entry))
            return tp_fail(err, TP_EINVAL, "calibration: gpus.%s must be an object", key);
        struct tp_calib_gpu *e = (struct tp_calib_gpu *)tp_calib_gpu_find(c, g->key);
        if (!e) {
            if (c->n_gpus >= TP_CALIB_MAX_GPUS)
                return tp_fail(err, TP_EINVAL, "calibration: more than %d GPU entries",
                               TP_CALIB_MAX_GPUS);
            e = &c->gpus[c->n_gpus++];
            memset(e, 0, sizeof *e);
            tp_snprintf(e->key, sizeof e->key, "%s", g->key);
        }
        const char *name;
        json_t *v;
        json_object_foreach(entry, name, v) {
            size_t i = 0;
            while (i < N_GPU_FIELDS && strcmp(GPU_FIELDS[i].name, name) != 0)
                i++;
            if (i == N_GPU_FIELDS)
                return tp_fail(err, TP_EINVAL,
                               "calibration: gpus.%s.%s is not a parameter (known: mamf_bf16, "
                               "mamf_fp8, attn_eff, mem_eff)", key, name);
            char where[96];
            tp_snprintf(where, sizeof where, "gpus.%s.%s", key, name);
            double x;
            TRY(number(v, where, 0, 1.5, false, &x, err));
            *(double *)(void *)((char *)e + GPU_FIELDS[i].offset) = x;
        }
    }
    return TP_OK;
}

/* A whole number in 0..hi from `obj[key]` (absent: 0). */
static enum tp_status count(json_t *obj, const char *key, const char *where, double hi,
                            double *out, struct tp_error *err)
{
    json_t *v = json_object_get(obj, key);
    *out = 0;
    if (!v)
        return TP_OK;
    char at[96];
    tp_snprintf(at, sizeof at, "%s.%s", where, key);
    return number(v, at, 0, hi, false, out, err);
}

/* fit.gpus keys of the highest MFU measured, by precision class (struct tp_calib_domain) */
static const char *const MFU_KEYS[2][2] = {{"max_mfu", "max_mfu_row"},
                                           {"max_mfu_8bit", "max_mfu_8bit_row"}};

/* "fit": the domain a calibration was fitted on (other provenance keys are ignored). */
static enum tp_status read_domain(json_t *fit, struct tp_calib_domain *d, struct tp_error *err)
{
    if (!json_is_object(fit))
        return tp_fail(err, TP_EINVAL, "calibration: \"fit\" must be an object");
    memset(d, 0, sizeof *d);
    double x;
    TRY(count(fit, "rows", "fit", 1e9, &x, err));
    d->rows = (uint32_t)x;
    TRY(count(fit, "sources", "fit", 1e9, &x, err));
    d->sources = (uint32_t)x;
    TRY(count(fit, "min_params", "fit", 1e16, &d->min_params, err));
    TRY(count(fit, "max_params", "fit", 1e16, &d->max_params, err));
    TRY(count(fit, "max_seq", "fit", 1e9, &x, err));
    d->max_seq = (uint64_t)x;
    json_t *stacks = json_object_get(fit, "stacks");
    if (stacks && !json_is_array(stacks))
        return tp_fail(err, TP_EINVAL, "calibration: fit.stacks must be an array of stack keys");
    size_t si;
    json_t *sv;
    json_array_foreach(stacks, si, sv) {
        const struct tp_stack *s;
        if (!json_is_string(sv) || tp_stack_find(json_string_value(sv), &s, NULL) != TP_OK)
            return tp_fail(err, TP_EINVAL, "calibration: fit.stacks[%zu] is not a known stack",
                           si);
        d->stacks |= 1u << s->fw;
    }
    json_t *gpus = json_object_get(fit, "gpus");
    if (!gpus)
        return TP_OK;
    if (!json_is_object(gpus))
        return tp_fail(err, TP_EINVAL, "calibration: fit.gpus must be an object of GPU keys");
    const char *key;
    json_t *e;
    json_object_foreach(gpus, key, e) {
        if (d->n_gpus >= TP_CALIB_MAX_GPUS)
            return tp_fail(err, TP_EINVAL, "calibration: fit.gpus has more than %d entries",
                           TP_CALIB_MAX_GPUS);
        if (!json_is_object(e))
            return tp_fail(err, TP_EINVAL, "calibration: fit.gpus.%s must be an object", key);
        tp_snprintf(d->gpu[d->n_gpus].key, sizeof d->gpu[0].key, "%s", key);
        TRY(count(e, "rows", "fit.gpus", 1e9, &x, err));
        d->gpu[d->n_gpus].rows = (uint32_t)x;
        TRY(count(e, "max_gpus", "fit.gpus", 1e9, &x, err));
        d->gpu[d->n_gpus].max_gpus = (uint32_t)x;
        for (int k = 0; k < 2; k++) {
            /* MFU against the 16-bit peak: 8- and 4-bit runs may pass 1 */
            TRY(count(e, MFU_KEYS[k][0], "fit.gpus", 4, &d->gpu[d->n_gpus].max_mfu[k], err));
            json_t *row = json_object_get(e, MFU_KEYS[k][1]);
            if (row && !json_is_string(row))
                return tp_fail(err, TP_EINVAL, "calibration: fit.gpus.%s.%s must be a string",
                               key, MFU_KEYS[k][1]);
            tp_snprintf(d->gpu[d->n_gpus].max_mfu_row[k], sizeof d->gpu[0].max_mfu_row[k], "%s",
                        row ? json_string_value(row) : "");
        }
        d->n_gpus++;
    }
    return TP_OK;
}

static enum tp_status from_doc(json_t *doc, struct tp_calib *c, struct tp_error *err)
{
    if (!json_is_object(doc))
        return tp_fail(err, TP_EINVAL, "calibration: the document must be a JSON object");
    struct tp_calib next = *c;
    const char *name;
    json_t *v;
    json_object_foreach(doc, name, v) {
        if (strcmp(name, "gpus") == 0) {
            TRY(read_gpus(v, &next, err));
            continue;
        }
        if (strcmp(name, "fit") == 0) {
            TRY(read_domain(v, &next.domain, err));
            continue;
        }
        if (strcmp(name, "schema_version") == 0 || strcmp(name, "comment") == 0)
            continue; /* provenance written by `trainplan calibrate` */
        size_t i = 0;
        while (i < N_FIELDS && strcmp(FIELDS[i].name, name) != 0)
            i++;
        if (i == N_FIELDS) {
            unsigned best = 99;
            const char *close = NULL;
            for (size_t k = 0; k < N_FIELDS; k++) {
                unsigned d = tp_edit_distance(name, FIELDS[k].name);
                if (d < best) {
                    best = d;
                    close = FIELDS[k].name;
                }
            }
            return tp_fail(err, TP_EINVAL, "calibration: unknown parameter \"%s\"%s%s%s", name,
                           best <= 3 ? " (did you mean " : "", best <= 3 ? close : "",
                           best <= 3 ? "?)" : "");
        }
        double x;
        TRY(number(v, name, FIELDS[i].lo, FIELDS[i].hi, FIELDS[i].integer, &x, err));
        char *p = (char *)&next + FIELDS[i].offset;
        if (FIELDS[i].integer)
            *(uint32_t *)(void *)p = (uint32_t)x;
        else
            *(double *)(void *)p = x;
    }
    *c = next;
    return TP_OK;
}

enum tp_status tp_calib_from_json(const char *json, size_t len, struct tp_calib *c,
                                  struct tp_error *err)
{
    json_error_t je;
    json_t *doc = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!doc)
        return tp_fail(err, TP_EINVAL, "calibration: line %d: %s", je.line, je.text);
    enum tp_status st = from_doc(doc, c, err);
    json_decref(doc);
    return st;
}

enum tp_status tp_calib_from_file(const char *path, struct tp_calib *c, struct tp_error *err)
{
    json_error_t je;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!doc) {
        FILE *f = fopen(path, "r");
        if (!f)
            return tp_fail(err, TP_EIO, "%s: cannot open the calibration file", path);
        fclose(f);
        return tp_fail(err, TP_EINVAL, "%s: line %d: %s", path, je.line, je.text);
    }
    enum tp_status st = from_doc(doc, c, err);
    json_decref(doc);
    if (st != TP_OK) {
        char msg[sizeof err->msg];
        tp_snprintf(msg, sizeof msg, "%s", err->msg);
        return tp_fail(err, st, "%s: %s", path, msg);
    }
    return TP_OK;
}

size_t tp_calib_to_json(const struct tp_calib *c, char *buf, size_t len)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "schema_version", json_integer(TP_SCHEMA_VERSION));
    for (size_t i = 0; i < N_FIELDS; i++) {
        const char *p = (const char *)c + FIELDS[i].offset;
        json_object_set_new(doc, FIELDS[i].name,
                            FIELDS[i].integer ? json_integer(*(const uint32_t *)(const void *)p)
                                              : json_real(*(const double *)(const void *)p));
    }
    json_t *gpus = json_object();
    for (size_t i = 0; i < c->n_gpus && i < TP_CALIB_MAX_GPUS; i++) {
        json_t *e = json_object();
        for (size_t k = 0; k < N_GPU_FIELDS; k++) {
            double x = *(const double *)(const void *)((const char *)&c->gpus[i] +
                                                       GPU_FIELDS[k].offset);
            if (x > 0)
                json_object_set_new(e, GPU_FIELDS[k].name, json_real(x));
        }
        json_object_set_new(gpus, c->gpus[i].key, e);
    }
    json_object_set_new(doc, "gpus", gpus);
    const struct tp_calib_domain *d = &c->domain;
    if (d->rows) {
        json_t *fit = json_object(), *dg = json_object();
        json_object_set_new(fit, "rows", json_integer(d->rows));
        json_object_set_new(fit, "sources", json_integer(d->sources));
        json_object_set_new(fit, "min_params", json_real(d->min_params));
        json_object_set_new(fit, "max_params", json_real(d->max_params));
        json_object_set_new(fit, "max_seq", json_integer((json_int_t)d->max_seq));
        if (d->stacks) { /* the stacks measured, by key */
            json_t *st = json_array();
            for (unsigned f = 0; f < TP_FW_COUNT; f++)
                if (d->stacks & (1u << f))
                    json_array_append_new(st, json_string(tp_stack_get((enum tp_framework)f)->key));
            json_object_set_new(fit, "stacks", st);
        }
        for (uint32_t i = 0; i < d->n_gpus && i < TP_CALIB_MAX_GPUS; i++) {
            json_t *e = json_pack("{s:i, s:i}", "rows", (json_int_t)d->gpu[i].rows, "max_gpus",
                                  (json_int_t)d->gpu[i].max_gpus);
            for (int k = 0; k < 2; k++)
                if (d->gpu[i].max_mfu[k] > 0) {
                    json_object_set_new(e, MFU_KEYS[k][0], json_real(d->gpu[i].max_mfu[k]));
                    json_object_set_new(e, MFU_KEYS[k][1],
                                        json_string(d->gpu[i].max_mfu_row[k]));
                }
            json_object_set_new(dg, d->gpu[i].key, e);
        }
        json_object_set_new(fit, "gpus", dg);
        json_object_set_new(doc, "fit", fit);
    }
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    json_decref(doc);
    size_t need = text ? strlen(text) + 2 : 1;
    if (buf && len > 0)
        tp_snprintf(buf, len, "%s\n", text ? text : "");
    free(text);
    return need;
}
