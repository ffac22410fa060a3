/*
 * moe_host.c - the host sync of Megatron-Core's dropless token dispatchers: what it costs a
 * MoE block's forward when the host can no longer run ahead of the GPU across it.
 *
 * The code (NVIDIA/Megatron-LM e4b7259801, 2025-11-20, the Megatron-Core of the 25.11 NeMo
 * container; megatron/core/transformer/moe/token_dispatcher.py):
 *   - MoEAlltoAllTokenDispatcher.preprocess: dropless, the split sizes of the all-to-all
 *     (input_splits, output_splits, the per-expert counts gathered over the EP group by
 *     gather_from_sequence_parallel_region) are computed on the GPU, and the sync point is
 *     "before_ep_alltoall" (ep or tp > 1), "before_permutation_1" under a capacity factor
 *     without padding, "before_finish" otherwise.  _maybe_dtoh_and_synchronize copies them to
 *     the host on a side stream at "before_permutation_1" and waits for that copy
 *     (d2h_event.synchronize) at the sync point: the host waits for everything the layer
 *     queued before the copy (the attention, the router, the count exchange).  With
 *     moe_pad_expert_input_to_capacity (drop_and_pad) the shapes come from the capacity, no
 *     copy is made and nothing waits ("no_sync").
 *   - MoEAllGatherTokenDispatcher.dispatch_postprocess: local_map.sum(dim=0).long().cpu(), a
 *     blocking copy, every dropless forward.
 *   - MoEFlexTokenDispatcher (DeepEP, HybridEP): the received counts per expert come back to
 *     the host as a list (_DeepepManager.get_number_of_tokens_per_expert) before the grouped
 *     GEMMs, whose split sizes (TE GroupedLinear's m_splits) are host integers.
 * The backward reuses the forward's split sizes (the autograd functions keep them), so it
 * does not wait; a recomputed forward waits again.
 * Checked unchanged in the Megatron-Core of the later containers the Qwen3-30B-A3B rows ran
 * ([MB-REL]: core_r0.16.0 b0cc2706d for 26.02, 55ac70825 for 26.02.01, 0.17.0 d7288711b for
 * 26.04 and 26.04.01): the same sync-point priorities and _maybe_dtoh_and_synchronize; with
 * moe_preprocess in a TE-scoped CUDA graph (cuda_graph_scope [moe_router, moe_preprocess], the
 * B200 and H100 recipes) the copy itself moves to "before_ep_alltoall", where the wait is, so
 * nothing runs between copy and wait; the HybridEP manager (_HybridEPManager.dispatch) takes
 * its received counts back as num_permuted_tokens = tokens_per_expert.sum(), and its own
 * comment says an unbounded receive "will cause a CPU sync": the flex path waits as priced.
 *
 * What the wait costs.  Without it the host runs ahead and each block takes
 * max(host, GPU) (host.c).  With it, the host stops at the sync until the GPU has drained
 * the part before it, so the launches after the sync (the exchange, the experts, the
 * combine: "post") can no longer be issued while the GPU runs the part before it (the
 * attention and the router: "pre").  Between two syncs the host issues post then pre, and
 * the GPU runs each as it arrives:
 *     interval = max(H_post + H_pre, G_post + G_pre, H_post + G_pre),
 * so the wait adds max(0, min(H_post - G_post, G_pre - H_pre)) [derived]: the host surplus
 * of the part after the sync, up to the GPU surplus of the part before it; nothing when
 * the experts' GPU work covers their launches (large micro-batches, a slow exchange), and
 * nothing when the attention does not cover its own launches (the block is host-bound and
 * host.c already charges it).  Plus the wait itself: the copy's completion reaching the
 * host and the next launch reaching the GPU, with the GPU idle (host_sync_s, the
 * calibration's time of one drained device-to-host sync).
 *
 * Launches after the sync, Megatron-Core's alltoall dispatcher and TEGroupedMLP (experts.py)
 * [derived, counted from the code above]: two all_to_all calls for the tokens and probs and
 * one for the combine, each a c10d collective with its Python and CUDA calls (host.c's
 * TP_HOST_COLL_BESIDE_OPS, three launches' worth beside the launch); sort_chunks_by_idxs before the
 * experts and after them, the fused weighted activation, unpermute: 4 launches; each
 * GroupedLinear's input quantize and its Python: 2 launches for fc1 and for fc2; the
 * grouped GEMMs, one cuBLAS launch per local expert from TE's C++ loop
 * (general_grouped_gemm), half an eager op each (host.c: a C++ call costs about half the
 * Python one, pytorch/pytorch#41383); the dispatcher's and the experts' module calls, a
 * quarter of a launch each (host.c).  The part before the sync is the rest of the block's
 * launches as host.c counts them (tp_host_launches) less the 7 of those that fall after it
 * (the MLP's fc1, activation, fc2 and bias-dropout-add, and 3 of the permutation's).
 *
 * What this does not price: the measured gap on Megatron-Bridge's dropless Qwen3-30B-A3B
 * rows at micro-batch 1-2 (docs/moe.md "The dropless dispatcher's host sync") is 6-17 ms
 * per MoE layer and micro-batch; the wait as priced here is about 0.05 ms on them,
 * because host.c's launch counts put the whole block's host time near 1 ms.  The rest would
 * need the eager host time of a Megatron-Core MoE layer, which no public profile gives.
 * The nearest published figure is Transformer Engine's own for its fused MXFP8 grouped MLP
 * ([TE-CPU] #2897: about 1.2 ms of CPU forward and 2.1 ms backward on GB200 with 64 experts,
 * against the 37 eager ops, about 0.45 ms, counted here for the unfused path's forward): a
 * different op, CPU and expert count, so it is quoted, not transferred (docs/moe.md
 * "Qwen3-30B-A3B in Megatron-Bridge by release").
 * Not modelled either: CUDA graphs of the post-sync part (Megatron-Core's paged stash with
 * moe_expert_rank_capacity_factor, 2026, which makes the dropless shapes static).
 */
#include "time_internal.h"

/* Host time after the sync of one MoE block's forward, in eager ops (the header's count):
   `colls` collectives issued after it (the alltoall dispatcher's dispatch of tokens and probs
   and its combine; the allgather and flex dispatchers have exchanged the tokens before they
   wait and issue only the combine; none within one rank). */
static double post_sync_ops(const struct ctx *x, uint32_t layer, double colls)
{
    const double kernels = 4 + 2 * 2;         /* sorts, activation, unpermute; fc quantizes */
    const double modules = 0.25 * 4;          /* dispatcher, experts, fc1, fc2 */
    double gemms, bwd; /* TE's C++ loop, fc1 and fc2 (host.c) */
    tp_host_expert_ops(x, layer, &gemms, &bwd);
    return colls * TP_HOST_COLL_OPS + kernels + gemms + modules;
}

/* Launches host.c counts in an MoE block that fall after the sync: the MLP's fc1,
   activation, fc2, bias-dropout-add and the dispatcher's permutations. */
#define HOST_C_POST_LAUNCHES 7.0

/* Whether block `layer`'s dispatcher waits for its split sizes on the host every forward:
   Megatron-Core's dropless grouped MoE. */
static bool dispatch_syncs(const struct ctx *x, uint32_t layer)
{
    const struct tp_job *j = x->j;
    return x->m->layer_moe[layer] && j->framework == TP_FW_MEGATRON &&
           x->moe_impl == TP_MOE_GROUPED && !j->moe_pad_capacity;
}

double tp_moe_sync_exposed(const struct ctx *x, uint32_t layer, const struct cost *c)
{
    if (!dispatch_syncs(x, layer))
        return 0;
    double op = x->cal->eager_op_s;
    double f, b;
    tp_host_launches(x, layer, &f, &b);
    double colls = x->l->ep * x->l->tp == 1 ? 0
                   : x->j->moe_dispatcher == TP_MOE_DISPATCH_ALLTOALL ? 3 : 1;
    double h_post = post_sync_ops(x, layer, colls) * op;
    double h_pre = (f - HOST_C_POST_LAUNCHES) * op;
    if (h_pre < 0)
        h_pre = 0;
    double gpu_f = c->fwd_gemm + c->fwd_attn + c->fwd_mem + c->tp_fwd + c->cp_fwd + c->ep_fwd;
    double g_post = c->moe_post_fwd, g_pre = gpu_f - g_post;
    double a = h_post - g_post, bsur = g_pre - h_pre;
    double lost = a < bsur ? a : bsur;
    return x->cal->host_sync_s + (lost > 0 ? lost : 0);
}
