/*
 * plan_internal.h - what the plan floor (layouts, pipeline stages, stacks and their rules,
 * precision, recompute, the checks, the GPU catalog) shares with the floors above it.  Not
 * installed, not public.
 */
#ifndef TP_PLAN_INTERNAL_H
#define TP_PLAN_INTERNAL_H

#include "model_internal.h"

/* Whether the job's stack runs ZeRO stage `zero` with `mode` offloaded (stack.c). */
bool tp_stack_offloads(const struct tp_job *j, uint32_t zero, enum tp_offload mode);
/* DualPipe's micro-batch rule: an even count, at least 2 x pp (stack.c; true for the others). */
bool tp_dualpipe_gas_ok(const struct tp_layout *l);
/* The catalog key of the entry whose die `key` is built on (gb200 -> b200); else `key`. */
const char *tp_gpu_die(const char *key);
/* The measured MAMF of a GPU, or of its die's catalog entry; 0 when none was measured. */
double tp_gpu_mamf(const struct tp_gpu *g, bool fp8);
/* The blocks of stage `stage` of a checked layout as ranges [lo[i], hi[i]); returns how many
   (memory.c).  lo and hi hold TP_MAX_LAYERS entries. */
uint32_t tp_stage_ranges(const struct tp_model *m, const struct tp_layout *l, uint32_t stage,
                         uint32_t *lo, uint32_t *hi);
/* Whether middle stage s (neither the first two nor the last) holds the blocks of stage s - 1
   in the same order, with no pp_layout map: then it has the same parameters, block costs and
   activations per micro-batch (memory.c). */
bool tp_stage_same_blocks(const struct tp_model *m, const struct tp_layout *l, uint32_t s);
/* pp_first/pp_last with vpp > 1 as Megatron-Core builds them, into l->pp_map (pp_layout.c). */
enum tp_status tp_layout_pp_uneven(uint32_t n_layers, struct tp_layout *l, struct tp_error *err);
/* The uneven-split part of tp_layout_check (pp_first, pp_last) (layout.c). */
enum tp_status tp_layout_check_split(const struct tp_model *m, const struct tp_layout *l,
                                     struct tp_error *err);
/* --attention flash1 where FlashAttention 1.x has a kernel: the GPU, the precision, no FP8
   attention and, with `m`, its head dimension (stack.c). */
enum tp_status tp_flash1_check(const struct tp_model *m, const struct tp_cluster *c,
                               const struct tp_job *j, struct tp_error *err);
/* The calibration's efficiencies are positive (the part of tp_run_check about it; check.c). */
enum tp_status tp_calib_check(const struct tp_calib *cal, struct tp_error *err);

#endif
