/*
 * time.c - seconds per optimizer step from first principles (docs/physics.md §4-5).
 *
 * Per pipeline stage and micro-batch, every GEMM runs at its real shape (forward, data gradient,
 * weight gradient) with a shape-aware efficiency: the device's best GEMM fraction (MAMF, [MLE])
 * times tile and wave quantization on its SMs ([NV-DL]), or the bytes it moves over HBM when
 * that takes longer (small dimensions).  The attention core runs at its own efficiency with the
 * causal half of the work (FlashAttention) or, eager, as batched GEMMs over the full square plus
 * a memory-bound softmax.  Norms, activations, rotary, residuals, casts and the loss move bytes
 * over HBM.  Recompute adds a forward.
 *
 * Communication uses NCCL's ring cost (latency + volume over the achieved bus bandwidth) on a
 * two-level network ([NCCL-TUNE], [NCCLT], §4.3): TP/SP collectives per layer ([SHO19],
 * [KOR22]), context-parallel KV exchange, MoE all-to-all with the busiest rank's load, pipeline
 * send/recv and the 1F1B / interleaved bubble ([NAR21]), DP gradient reduction overlapped with
 * the last backward, ZeRO-3/FSDP gathers per micro-batch behind prefetch ([ZeRO], [FSDP]).  The
 * optimizer step is memory-bound over the sharded states (CPU Adam when offloaded).
 *
 * Rank order (Megatron-Core's default tp-cp-ep-dp-pp): TP ranks are adjacent, then CP, then DP,
 * then PP; expert parallel groups sit inside DP with stride etp.  A group of n ranks with stride
 * s has min(n, gpus_per_node / s) ranks in each node.
 *
 *
 * A plan (tp_time_plan_init) does the work that does not depend on the calibration once per
 * run: the checks, each stage's parameters, the FLOPs per token, the GEMM shapes' quantization,
 * which stages repeat the one before; calibrate's fit then prices each row thousands of times
 * with moving efficiencies (tp_time_planned), to the bit what tp_time_step gives.
 */
#include "time_internal.h"

#include <math.h>
#include <string.h>
/* Per-micro-batch times of one stage. */
struct stage_time {
    double fwd, bwd, recompute;      /* compute */
    double gemm, attn, mem;          /* compute split by kind (fwd + bwd + recompute) */
    double wgrad;                    /* the backward's weight-gradient GEMMs (DualPipe's W) */
    double tp, cp, ep, pp;           /* exposed communication */
    double overhead;
    double total;                    /* everything one micro-batch costs this stage */
    uint32_t moe_blocks;             /* blocks with routed experts on this stage */
};

/* sum += n * c, field by field: n blocks of one kind added to their stage (a count times the
   cost, not n additions: the same figure to the last bit or so, in O(kinds) per stage) */
static void add_cost(struct cost *sum, const struct cost *c, double n)
{
    sum->fwd_gemm += n * c->fwd_gemm;
    sum->bwd_gemm += n * c->bwd_gemm;
    sum->fwd_attn += n * c->fwd_attn;
    sum->bwd_attn += n * c->bwd_attn;
    sum->fwd_mem += n * c->fwd_mem;
    sum->bwd_mem += n * c->bwd_mem;
    sum->tp_fwd += n * c->tp_fwd;
    sum->tp_bwd += n * c->tp_bwd;
    sum->cp_fwd += n * c->cp_fwd;
    sum->cp_bwd += n * c->cp_bwd;
    sum->ep_fwd += n * c->ep_fwd;
    sum->ep_bwd += n * c->ep_bwd;
    sum->host_fwd += n * c->host_fwd;
    sum->host_bwd += n * c->host_bwd;
}

/* How many blocks of each kind stage `stage` holds, and how many of them full recompute reruns
   (the first recompute_layers of the stage, or all). */
static void stage_blocks(const struct tp_model *m, const struct tp_layout *l, uint32_t stage,
                         struct tp_stage_blocks *b)
{
    memset(b, 0, sizeof *b);
    uint32_t lo[TP_MAX_LAYERS], hi[TP_MAX_LAYERS];
    uint32_t ranges = tp_stage_ranges(m, l, stage, lo, hi);
    for (uint32_t r = 0; r < ranges; r++)
    for (uint32_t layer = lo[r]; layer < hi[r]; layer++) {
        unsigned k = tp_kind_of(m, layer);
        b->n[k]++;
        if (l->recompute == TP_RECOMPUTE_FULL &&
            (l->recompute_layers == 0 || b->blocks < l->recompute_layers))
            b->full[k]++;
        b->blocks++;
        b->moe_blocks += m->layer_moe[layer] != 0;
    }
}

static void stage_time(const struct ctx *x, const struct cost kinds[TP_TIME_KINDS], uint32_t stage,
                       const struct tp_stage_blocks *b, struct stage_time *st)
{
    const struct tp_model *m = x->m;
    const struct tp_layout *l = x->l;
    const struct tp_calib *cal = x->cal;
    struct cost sum, rc;
    memset(&sum, 0, sizeof sum);
    memset(&rc, 0, sizeof rc);
    memset(st, 0, sizeof *st);
    uint32_t mods = l->recompute_modules ? l->recompute_modules : TP_RC_CORE_ATTN;
    double sm_share = 0; /* SMs the MoE exchange takes from GEMMs it overlaps */
    for (unsigned k = 0; k < TP_TIME_KINDS; k++) {
        if (b->n[k] == 0)
            continue;
        const struct cost *c = &kinds[k];
        sm_share = c->ep_sm_share > sm_share ? c->ep_sm_share : sm_share;
        add_cost(&sum, c, b->n[k]);
        if (b->full[k])
            add_cost(&rc, c, b->full[k]); /* the forward again, with its collectives */
        if (l->recompute == TP_RECOMPUTE_SELECTIVE && (mods & TP_RC_CORE_ATTN))
            rc.fwd_attn += b->n[k] * c->fwd_attn;
        if (l->recompute == TP_RECOMPUTE_SELECTIVE && (mods & TP_RC_MOE) &&
            tp_block_ffn(k) == TP_BLOCK_FFN_MOE) {
            /* "moe": Megatron-Core's MoELayer.forward checkpoints route, dispatch, the routed
               experts, combine and the shared experts as one function (moe_layer.py,
               moe_layer_recompute), so the backward runs all of it again */
            rc.ep_fwd += b->n[k] * c->ep_fwd;
            rc.fwd_gemm += b->n[k] * c->ffn_fwd_gemm;
        } else if (l->recompute == TP_RECOMPUTE_SELECTIVE && (mods & TP_RC_SHARED) &&
                   tp_block_ffn(k) == TP_BLOCK_FFN_MOE) {
            rc.fwd_gemm += b->n[k] * c->shared_fwd_gemm; /* "shared_experts" */
        }
        if (l->recompute == TP_RECOMPUTE_SELECTIVE && (mods & TP_RC_MLP) &&
            tp_block_ffn(k) == TP_BLOCK_FFN_DENSE)
            rc.fwd_gemm += b->n[k] * c->ffn_fwd_gemm; /* "mlp": the dense MLP again */
        if (l->recompute == TP_RECOMPUTE_SELECTIVE && (mods & TP_RC_MLA_UP) &&
            tp_block_mixer(k) < TP_BLOCK_ATTN_CHUNKED &&
            m->attn == TP_ATTN_MLA) /* MLA's up-projections again (DeepSeek-V3 §3.2.3) */
            rc.fwd_gemm += b->n[k] * c->fwd_gemm *
                           tp_mla_up_share(m, tp_block_ffn(k) == TP_BLOCK_FFN_MOE);
        if (l->recompute == TP_RECOMPUTE_SELECTIVE && (mods & TP_RC_OP) &&
            tp_block_ffn(k) == TP_BLOCK_FFN_DENSE &&
            tp_block_mixer(k) <= TP_BLOCK_ATTN_CHUNKED && m->attn != TP_ATTN_MLA) {
            /* torchtitan's op policy (dense attention blocks): every other matmul and all the
               memory-bound ops again; the attention kernel and the collectives' outputs are
               kept */
            rc.fwd_gemm += b->n[k] * c->fwd_gemm * tp_per_op_recomputed_share(m);
            rc.fwd_mem += b->n[k] * c->fwd_mem;
        }
    }
    uint32_t n = b->blocks;
    st->moe_blocks = b->moe_blocks;
    struct cost outer;
    if (x->h.tape) /* the head's GEMMs */
        x->h.tape->pos = x->tape_outer;
    tp_outer_cost(x, stage == 0, stage == l->pp - 1, &outer);
    tp_outer_tp(x, stage == 0, stage == l->pp - 1, &outer); /* outer_tp.c */
    add_cost(&sum, &outer, 1);

    double ref = x->j->task == TP_TASK_DPO ? 1 : 0; /* DPO: the frozen reference's forward */
    double fwd_c = sum.fwd_gemm + sum.fwd_attn + sum.fwd_mem;
    st->fwd = fwd_c * (1 + ref);
    st->bwd = sum.bwd_gemm + sum.bwd_attn + sum.bwd_mem;
    st->recompute = rc.fwd_gemm + rc.fwd_attn + rc.fwd_mem;
    st->gemm = sum.fwd_gemm * (1 + ref) + sum.bwd_gemm + rc.fwd_gemm;
    st->attn = sum.fwd_attn * (1 + ref) + sum.bwd_attn + rc.fwd_attn;
    st->mem = sum.fwd_mem * (1 + ref) + sum.bwd_mem + rc.fwd_mem;
    /* the weight gradients are half the backward's GEMM FLOPs (dW = X^T dY beside dX = dY W) */
    st->wgrad = sum.bwd_gemm / 2;
    st->tp = (sum.tp_fwd * (1 + ref) + sum.tp_bwd + rc.tp_fwd) *
             (1 - (x->j->tp_comm_overlap ? cal->tp_overlap : 0));
    st->cp = sum.cp_fwd * (1 + ref) + sum.cp_bwd + rc.cp_fwd;
    st->ep = sum.ep_fwd * (1 + ref) + sum.ep_bwd + rc.ep_fwd;
    double compute = st->fwd + st->bwd + st->recompute;
    if (l->schedule == TP_SCHED_DUALPIPE) {
        /* DualPipe runs each forward chunk beside another micro-batch's backward chunk, so
           either's all-to-all hides behind the other's compute, up to that compute, on the
           micro-batches it pairs (moe_comm.c; DeepSeek-V3 report §3.2.1: "both all-to-all and
           PP communication can be fully hidden"); the GEMMs lose the exchange's SMs while it
           runs */
        double hidden = (st->ep < compute ? st->ep : compute) * tp_dualpipe_paired(l->pp, l->gas);
        st->ep -= hidden * (1 - sm_share);
    } else if (x->j->moe_a2a_overlap && l->gas > 1) {
        /* Megatron-Core's combined 1F1B (pipeline_parallel/combined_1f1b.py) runs micro-batch
           i + 1's forward with micro-batch i's backward: each side's all-to-all hides behind
           the other side's compute, up to that compute, on the chunks the interleaved
           schedule pairs: not its warm-up forwards nor its cool-down backwards (moe_comm.c) */
        double hidden = cal->ep_overlap * st->ep;
        hidden = (hidden < compute ? hidden : compute) *
                 tp_a2a_overlap_paired(l->pp, l->vpp, l->gas);
        st->ep -= hidden * (1 - sm_share);
    }
    if (l->pp > 1) {
        /* activations forward and gradients backward across each of the v chunk boundaries;
           with TP the scatter-gather optimisation sends 1/t ([NAR21] §4.1) */
        double bytes = x->tokens * m->hidden * x->h.act_bytes / l->tp;
        uint64_t stride = (uint64_t)l->tp * l->cp * l->dp;
        bool inter = stride >= x->c->gpus_per_node;
        double bw = inter ? cal->eff_inter * x->c->gpu.inter_bw : tp_comm_intra_bw(x->c, cal, 2);
        double one = tp_comm_latency(cal, 1, inter) + bytes / bw;
        st->pp = 2 * l->vpp * one * (1 + ref / 2) * (1 - cal->pp_overlap);
        if (tp_stack_get(x->j->framework)->ds_engine) {
            /* DeepSpeed's PipelineEngine sends and receives one tensor at a time, each a
               blocking p2p.send / p2p.recv (runtime/pipe/p2p.py; TrainSchedule's SendActivation,
               RecvActivation, SendGrad and RecvGrad are separate commands, schedule.py), where
               Megatron batches each send with the opposite receive (batch_isend_irecv): per
               neighbour and micro-batch the activation one way and its gradient the other, one
               after the other.  With TP the PartitionedTensor's meta travels as its own p2p
               before the data (pipe/engine.py _exec_send_activations / _exec_send_grads) */
            double meta = l->tp > 1 ? tp_comm_latency(cal, 1, inter) : 0;
            double links = (stage > 0) + (stage + 1 < l->pp);
            st->pp = links * 2 * (one + meta) * (1 - cal->pp_overlap);
        }
        if (l->schedule == TP_SCHED_DUALPIPE) /* hidden with the paired chunk's compute */
            st->pp *= 1 - tp_dualpipe_paired(l->pp, l->gas);
    }
    /* the data path's host work per micro-batch runs where the batch is loaded: the first and
       last stages (host.c) */
    double data_host = stage == 0 || stage == l->pp - 1 ? tp_host_micro_batch(x) : 0;
    data_host += tp_host_ds_micro_batch(x, stage); /* DeepSpeed's engine (host_ds.c) */
    data_host += stage == l->pp - 1 ? tp_host_loss_checks(x) : 0; /* host_step.c */
    st->overhead = cal->layer_overhead_s * n * (1 + ref / 2) +
                   sum.host_fwd * (1 + ref) + sum.host_bwd + rc.host_fwd + data_host;
    st->total = st->fwd + st->bwd + st->recompute + st->tp + st->cp + st->ep + st->pp +
                st->overhead;
}

/* DP / ZeRO communication of one stage: `per_step` after the last backward (reduction) or
   before the first forward (parameter gather), `per_mb_fwd`/`per_mb_bwd` every micro-batch. */
struct dp_comm {
    double step_reduce, step_gather, mb_fwd, mb_bwd;
};

/* DeepSpeed ZeRO-3 per micro-batch: gather for forward and again for backward, reduce-scatter,
   with ZeRO++ (Wang et al. 2023, arXiv:2306.10209; deepspeed/runtime/zero/
   partition_parameters.py, runtime/comm/coalesced_collectives.py) where the job asks:
   - qwZ: each gather moves int8 groups (1 B per weight; CUDAQuantizer's groups of up to
     8,000 weights carry a 4-byte scale each, negligible) and the receiver dequantizes the
     whole gathered weight (read 1 B, write 2);
   - hpZ: the forward gather leaves each rank a slice of the weights over its hpZ group (the
     secondary partition), and the backward (with its recompute) gathers from that group;
   - qgZ: the gradients go as int4 in two all-to-alls (all_to_all_quant_reduce): every rank
     of a node to every other (0.5 B per gradient), then each rank's node-reduced 1/g share to
     its peers in the other nodes; kernels: the quantize (read 2 B, write 0.5), the node's
     reduction (read 0.5 B per gradient, write 0.5 per reduced one) and the dequantize (read
     0.5 B, write 2 per reduced one). */
static void zeropp_comm(const struct ctx *x, double params, double gathered, double trainable,
                        uint32_t n, uint64_t stride, double ag, double rs, struct dp_comm *d)
{
    const struct tp_layout *l = x->l;
    const struct tp_job *j = x->j;
    const struct tp_cluster *c = x->c;
    const struct tp_calib *cal = x->cal;
    uint32_t gpn = c->gpus_per_node;
    double fwd = ag, bwd = ag;
    double deq = j->zero_quant_weights ? params * 3 / x->h.mem_bw : 0;
    if (j->zero_quant_weights) {
        gathered = params; /* int8 */
        fwd = bwd = tp_time_allgather(c, cal, gathered, n, tp_comm_per_node(n, stride, gpn)) + deq;
    }
    if (l->hpz > 1 && l->hpz < n)
        bwd = tp_time_allgather(c, cal, gathered, l->hpz, tp_comm_per_node(l->hpz, stride, gpn)) +
              deq;
    double red = rs;
    if (j->zero_quant_grads) {
        uint32_t g = tp_comm_per_node(n, stride, gpn), nodes = tp_comm_nodes_of(n, g);
        double q = trainable * 0.5; /* int4 */
        double intra = g > 1 ? q * (g - 1) / g / tp_comm_intra_bw(c, cal, g) : 0;
        double inter =
            nodes > 1 ? q / g * (nodes - 1) / nodes / (cal->eff_inter * c->gpu.inter_bw) : 0;
        double kernels = trainable * (2.5 + 0.5 + 3.0 / g) / x->h.mem_bw;
        red = tp_comm_latency(cal, g - 1.0 + (nodes - 1.0), nodes - 1.0) + intra + inter +
              kernels;
    }
    d->mb_fwd += fwd;
    d->mb_bwd += bwd + red;
}

static void dp_group_comm(const struct ctx *x, double params, double gemm, double trainable,
                          uint32_t n, uint64_t stride, struct dp_comm *d)
{
    const struct tp_layout *l = x->l;
    const struct tp_job *j = x->j;
    if (n <= 1 || params <= 0)
        return;
    uint32_t gpn = x->c->gpus_per_node;
    double bp = x->h.act_bytes; /* 16-bit parameters */
    /* gradient reduction dtype: Megatron reduces fp32 main grads, torchtitan's FSDP2 default
       reduce dtype is fp32; DeepSpeed and FSDP reduce in the 16-bit type */
    double bg = tp_stack_get(j->framework)->fp32_grad_reduce && !j->grad_16bit ? 4 : bp;
    if (tp_host_ds_bf16_optimizer(x)) {
        /* BF16_Optimizer all-reduces its fp32 gradients (pipe/engine.py _bf16_reduce_grads:
           buffered_allreduce_fallback) and all-gathers the updated 16-bit parameters from the
           DP partitions of its fp32 copy (bf16_optimizer.py update_lp_params), ZeRO 0 too */
        d->step_reduce += tp_time_allreduce(x->c, x->cal, trainable * 4, n,
                                            tp_comm_per_node(n, stride, gpn));
        d->step_gather += tp_time_allgather(x->c, x->cal, trainable * bp, n,
                                            tp_comm_per_node(n, stride, gpn));
        return;
    }
    uint32_t shard = l->shard_group && l->shard_group < n ? l->shard_group : n;
    uint32_t g = tp_comm_per_node(shard, stride, gpn);
    const struct tp_cluster *c = x->c;
    const struct tp_calib *cal = x->cal;
    double grads = trainable * bg;
    if (l->zero == 0) {
        d->step_reduce += tp_time_allreduce(c, cal, grads, n, tp_comm_per_node(n, stride, gpn));
        return;
    }
    double rs = tp_time_allgather(c, cal, grads, shard, g); /* reduce-scatter: same volume */
    /* the parameter all-gather moves the GEMM weights (`gemm` of `params`) in the FP8 format
       with fp8_param_gather (Megatron-Core --fp8-param-gather) */
    double gathered = (params - gemm) * bp + gemm * tp_gemm_weight_bytes(j, bp);
    double ag = tp_time_allgather(c, cal, gathered, shard, g);
    if (shard < n) {
        /* HSDP: shards are replicated across n/shard groups: all-reduce the reduced shard */
        uint32_t reps = n / shard;
        d->step_reduce += tp_time_allreduce(c, cal, grads / shard, reps,
                                            tp_comm_per_node(reps, stride * shard, gpn));
    }
    bool ds = tp_job_ds_zero(j);
    if (l->zero == 1) {
        d->step_reduce += rs;
        d->step_gather += trainable < params ? ag * trainable / params : ag;
    } else if (l->zero == 2 && ds) {
        /* DeepSpeed ZeRO-2 keeps no unsharded gradient: reduce-scatter every micro-batch */
        d->mb_bwd += rs;
        d->step_gather += ag * trainable / params;
    } else if (l->zero == 2) {
        /* FSDP SHARD_GRAD_OP: gather once per micro-batch's forward, reduce-scatter in its
           backward */
        d->mb_fwd += ag;
        d->mb_bwd += rs;
    } else if (ds) {
        zeropp_comm(x, params, gathered, trainable, n, stride, ag, rs, d);
    } else {
        /* FULL_SHARD: gather for forward and again for backward, reduce-scatter */
        d->mb_fwd += ag;
        d->mb_bwd += ag + rs;
    }
}

/* DeepSpeed ZeRO-3 gathers a module's parameters in a pre-forward / pre-backward hook and
   prefetches along the module order it traced on the first step.  Experts run in the loop only
   when tokens reach them, so the trace changes every step, prefetch is abandoned ("Invalidate
   trace cache") and every expert's tensors are fetched on demand, each an exposed hook, gather
   and wait (z3_fetch_s), in the forward, the backward and a recompute.  A leaf MoE block
   (set_z3_leaf_modules) fetches them with the block, behind prefetch. */
static double z3_expert_fetch(const struct ctx *x, const struct stage_time *st)
{
    const struct tp_layout *l = x->l;
    const struct tp_job *j = x->j;
    bool ds = tp_job_ds_zero(j);
    if (l->zero != 3 || !ds || tp_job_z3_leaf(x->m, j) || x->moe_impl != TP_MOE_EAGER || st->moe_blocks == 0)
        return 0;
    double tensors = (x->m->mlp == TP_MLP_GLU ? 3.0 : 2.0) * x->m->n_experts / l->ep;
    double passes = 2 + (l->recompute == TP_RECOMPUTE_FULL);
    return st->moe_blocks * tensors * passes * x->cal->z3_fetch_s;
}

/* The evaluation context of a checked run. */
static void ctx_init(struct ctx *x, const struct tp_model *m, const struct tp_cluster *c,
                     const struct tp_job *j, const struct tp_layout *l,
                     const struct tp_calib *cal)
{
    memset(x, 0, sizeof *x);
    x->m = m;
    x->c = c;
    x->j = j;
    x->l = l;
    x->cal = cal;
    tp_resolve_hw(c, j, cal, &x->h);
    double pairs = j->task == TP_TASK_DPO ? 2 : 1;
    x->seqs = (double)l->mbs * pairs;
    x->seq_local = (double)j->seq / l->cp;
    x->tokens = x->seqs * x->seq_local;
    x->frozen = j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA;
    x->eager = tp_stack_get(j->framework)->eager_modules && !j->fused_loss;
    x->moe_impl = tp_job_moe_impl(m, j, l);
    uint32_t gpn = c->gpus_per_node;
    x->g_tp = tp_comm_per_node(l->tp, 1, gpn);
    x->g_cp = tp_comm_per_node(l->cp, l->tp, gpn);
    x->g_ep = tp_comm_per_node(l->ep, l->etp, gpn);
}

/* What a DP / ZeRO collective of `comm` seconds adds to the step when `window` seconds of
   compute can cover it: the part that does not fit, plus the hidden part's cost to the compute
   beside it.  NCCL's ring kernels occupy SMs and HBM bandwidth while they run, so the GEMMs
   they overlap run slower: Lee et al. 2025 (arXiv:2507.03114) measure compute 18.9% slower on
   average while it overlaps collectives (up to 40%; GPT and Llama training on A100, H100,
   MI250 and MI210), the prior of overlap_slowdown. */
static double behind(const struct tp_calib *cal, double comm, double window)
{
    double hidden = comm < window ? comm : window;
    return comm - hidden + cal->overlap_slowdown * (hidden > 0 ? hidden : 0);
}

/* One stage per micro-batch and per step: its compute and exposed communication, the DP/ZeRO
   traffic, the optimizer and the offload. */
struct stage_eval {
    struct stage_time st;
    struct dp_comm d;
    double fetch;                    /* DeepSpeed ZeRO-3's on-demand expert fetches */
    double exposed, opt, offload, stage_s;
};

static void stage_eval(const struct ctx *x, const struct cost kinds[TP_TIME_KINDS], uint32_t s,
                       const struct tp_stage_blocks *b, const struct tp_shard_params *sp,
                       struct stage_eval *e)
{
    const struct tp_cluster *c = x->c;
    const struct tp_job *j = x->j;
    const struct tp_layout *l = x->l;
    const struct tp_calib *cal = x->cal;
    double gas = l->gas;
    struct stage_time *st = &e->st;
    stage_time(x, kinds, s, b, st);
    bool frozen = x->frozen;
    double dense_train = frozen ? sp->lora : sp->dense;
    double expert_train = frozen ? 0 : sp->expert;
    /* the weight gradients' accumulation under DeepSpeed's engine, in each backward (host_ds.c) */
    double accum = tp_host_ds_grad_accum(x, dense_train + expert_train);
    st->bwd += accum;
    st->mem += accum;
    st->total += accum;
    struct dp_comm d = {0, 0, 0, 0};
    uint32_t n_dense = l->dp * l->cp;
    uint32_t n_expert = (uint32_t)((uint64_t)l->tp * l->cp * l->dp / ((uint64_t)l->ep * l->etp));
    dp_group_comm(x, sp->dense, sp->quantizable - sp->quant_expert, dense_train, n_dense, l->tp,
                  &d);
    if (sp->expert > 0)
        dp_group_comm(x, sp->expert, sp->quant_expert, expert_train, n_expert,
                      (uint64_t)l->etp * l->ep, &d);
    if (l->schedule == TP_SCHED_DUALPIPE) {
        /* two copies of the stage's parameters (stage s and stage pp - 1 - s on each rank,
           DeepSeek-V3 report Table 2): twice the gradients to reduce, over twice the ranks */
        d.mb_fwd *= 2;
        d.mb_bwd *= 2;
        d.step_reduce *= 2;
        d.step_gather *= 2;
    }
    /* exposure: per-micro-batch gathers behind that micro-batch's compute (prefetch); the
       step's reduction behind the last backward, its gather behind the first forward */
    double fwd_w = st->fwd, bwd_w = st->bwd + st->recompute;
    /* DeepSpeed's engine reduces after the last backward (TrainSchedule's ReduceGrads follows
       the last BackwardPass; DeepSpeedEngine.backward calls allreduce_gradients after it, ZeRO
       0/1 without overlap_comm) and ZeRO 1 gathers the updated parameters inside its step():
       nothing runs beside either */
    double dp_ov = tp_stack_get(j->framework)->ds_engine ? 0 : cal->dp_overlap;
    double exposed = gas * (behind(cal, d.mb_fwd, cal->fsdp_overlap * fwd_w) +
                            behind(cal, d.mb_bwd, cal->fsdp_overlap * bwd_w));
    /* on-demand expert fetches: no prefetch hides them, so all of them is exposed, and all of
       them is DP/ZeRO traffic too (the total below counts them: issue 40) */
    double fetch = gas * z3_expert_fetch(x, st);
    exposed += fetch;
    d.step_reduce += tp_host_ds_tied_reduce(x, s); /* DeepSpeed's ReduceTiedGrads (host_ds.c) */
    exposed += behind(cal, d.step_reduce, dp_ov * bwd_w) +
               behind(cal, d.step_gather, dp_ov * fwd_w);
    /* optimizer over this GPU's shard of the trainable parameters */
    double n_opt_d = l->zero >= 1 ? (l->shard_group ? l->shard_group : n_dense) : 1;
    double n_opt_e = l->zero >= 1 ? n_expert : 1;
    double local = dense_train / n_opt_d + expert_train / (n_opt_e ? n_opt_e : 1);
    if (l->schedule == TP_SCHED_DUALPIPE && l->zero == 0)
        local *= 2; /* both copies' states, unsharded */
    double opt, offload = 0;
    if (l->offload != TP_OFFLOAD_NONE) {
        /* CPU Adam over host memory; gradients down and 16-bit weights up over PCIe */
        opt = local * (tp_optimizer_step_bytes(j->optimizer) - 2) / cal->host_adam_bw;
        offload = local * (2 + x->h.act_bytes) / (c->gpu.host_bw * cal->eff_pcie);
        if (l->offload == TP_OFFLOAD_PARAMS) { /* parameters stream in per micro-batch */
            /* in their stored bytes: QLoRA's linear weights as bitsandbytes' packed NF4 with
               their absmax constants (tp_nf4_weight_bytes; fsdp_qlora's FSDP CPUOffload moves
               the flat shard of the Params4bit storage), the rest 16-bit */
            double q = j->task == TP_TASK_QLORA ? sp->quantizable : 0;
            double bytes = (sp->dense + sp->expert - q) * x->h.act_bytes +
                           q * tp_nf4_weight_bytes();
            offload += gas * 2 * bytes / n_opt_d / (c->gpu.host_bw * cal->eff_pcie);
        }
    } else {
        opt = local * tp_optimizer_step_bytes(j->optimizer) / (c->gpu.hbm_bw * cal->opt_eff);
    }
    /* the step's host work beside the blocks, counted per stack (host_step.c) */
    opt += tp_host_step(x, s, b->blocks, dense_train + expert_train, opt);
    opt += tp_z3_subgroup_step_s(x, local);
    opt += tp_host_ds_step(x, s, b->blocks, dense_train); /* per-tensor checks (host_ds.c) */
    opt += tp_host_log_step(x, s, b->blocks, dense_train + expert_train); /* host_log.c */
    e->d = d;
    e->fetch = fetch;
    e->exposed = exposed;
    e->opt = opt;
    e->offload = offload;
    e->stage_s = gas * st->total + exposed + opt + offload;
}

/* The FLOPs per token a run's rates are counted with: model (MFU), hardware (HFU: plus what
   recompute reruns) and Megatron's model count (no LoRA / DPO adjustment). */
static enum tp_status flops_facts(const struct tp_model *m, const struct tp_job *j,
                                  const struct tp_layout *l, double *model, double *hardware,
                                  double *megatron)
{
    struct tp_flops f;
    /* packed documents: attention's FLOPs are counted within each (tp_attn_span) */
    if (tp_flops_model(m, (uint64_t)tp_attn_span(j), l->recompute, &f) != TP_OK)
        return TP_EINVAL;
    *model = f.model;
    if (j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA) /* no weight-gradient GEMMs for the
                                                                frozen base */
        *model = f.fwd + f.fwd_dense / 2 + 2 * f.fwd_attn;
    if (j->task == TP_TASK_DPO)
        *model += f.fwd; /* the reference model's forward */
    double rc = f.recompute;
    if (l->recompute == TP_RECOMPUTE_FULL && l->recompute_layers > 0 && l->pp > 0) {
        /* each stage recomputes min(N, its blocks): the share of all blocks rebuilt */
        uint64_t rebuilt = 0;
        for (uint32_t s = 0; s < l->pp; s++) {
            uint32_t b = tp_stage_blocks(m, l, s);
            rebuilt += b < l->recompute_layers ? b : l->recompute_layers;
        }
        rc *= (double)rebuilt / m->n_layers;
    }
    *hardware = *model + rc;
    *megatron = f.model;
    return TP_OK;
}

/* Throughput and FLOP rates of a priced step (out->step_s set); whether they are possible. */
static enum tp_status step_rates(const struct ctx *x, double model, double hardware,
                                 double megatron, struct tp_time *out)
{
    const struct tp_model *m = x->m;
    const struct tp_cluster *c = x->c;
    const struct tp_job *j = x->j;
    const struct tp_layout *l = x->l;
    double pairs = j->task == TP_TASK_DPO ? 2 : 1;
    /* tokens as the job counts them: trainable_frac of the slots (Axolotl's logged rate);
       the FLOP rates below use every slot processed */
    double samples = (double)l->mbs * l->gas * l->dp, counted = tp_job_trainable_frac(j);
    double n_gpus = (double)l->dp * l->tp * l->pp * l->cp;
    out->samples_per_step = samples;
    out->tokens_per_step = samples * (double)j->seq * pairs * counted;
    out->tokens_per_s = out->tokens_per_step / out->step_s;
    out->tokens_per_s_per_gpu = out->tokens_per_s / n_gpus;
    /* from the slots themselves, not back from the counted rate: the FLOP rates must not
       move with trainable_frac, not even by a rounding */
    out->slots_per_s_per_gpu = samples * (double)j->seq * pairs / out->step_s / n_gpus;
    out->samples_per_s = samples / out->step_s;
    out->model_flops_per_token = model;
    out->hw_flops_per_token = hardware;
    out->peak_flops = tp_job_peak_flops(c, j); /* the rate the GEMMs were priced at */
    double tps = out->slots_per_s_per_gpu;
    out->model_tflops_per_gpu = model * tps / 1e12;
    out->hw_tflops_per_gpu = out->hw_flops_per_token * tps / 1e12;
    out->mfu = tp_mfu(model, tps, out->peak_flops);
    out->hfu = tp_mfu(out->hw_flops_per_token, tps, out->peak_flops);
    out->megatron_tflops_per_gpu = megatron * tps / 1e12;
    double ckpt = l->recompute == TP_RECOMPUTE_FULL ? 4 : 3;
    double ds = tp_flops_nar21(m, (double)j->seq, 24 * ckpt, 16);
    out->deepspeed_tflops_per_gpu = ds * tps / 1e12;
    /* physically possible: a finite positive time and no more FLOPs than the peak the GEMMs
       run at (fp8: the fp8 peak; MFU itself stays against the 16-bit one) */
    double ceiling = x->h.fp8 ? c->gpu.peak_flops[x->h.gemm_dtype] : out->peak_flops;
    bool sane = isfinite(out->step_s) && out->step_s > 0 && isfinite(out->mfu) &&
                out->hw_flops_per_token * tps <= ceiling;
    return sane ? TP_OK : TP_EINVAL;
}

/* One stage evaluated in full (its blocks and parameters from the plan, or worked out). */
static void eval_stage(const struct ctx *x, const struct cost kinds[TP_TIME_KINDS],
                       const struct tp_time_plan *p, uint32_t s, struct stage_eval *e)
{
    if (p) {
        stage_eval(x, kinds, s, &p->stages[s].blocks, &p->stages[s].sp, e);
        return;
    }
    struct tp_shard_params sp;
    struct tp_stage_blocks b;
    uint32_t first, count;
    tp_stage_params(x->m, x->j, x->l, s, &sp, &first, &count);
    stage_blocks(x->m, x->l, s, &b);
    stage_eval(x, kinds, s, &b, &sp, e);
}

/* The mean of two stages' figures: a DualPipe rank's per-micro-batch pace. */
static void mean_eval(const struct stage_eval *a, const struct stage_eval *b,
                      struct stage_eval *out)
{
    *out = *a;
    struct stage_time *o = &out->st;
    const struct stage_time *p = &a->st, *q = &b->st;
#define AVG(f) o->f = (p->f + q->f) / 2
    AVG(fwd); AVG(bwd); AVG(recompute); AVG(gemm); AVG(attn); AVG(mem); AVG(wgrad);
    AVG(tp); AVG(cp); AVG(ep); AVG(pp); AVG(overhead); AVG(total);
#undef AVG
    o->moe_blocks = p->moe_blocks > q->moe_blocks ? p->moe_blocks : q->moe_blocks;
    out->d.mb_fwd = (a->d.mb_fwd + b->d.mb_fwd) / 2;
    out->d.mb_bwd = (a->d.mb_bwd + b->d.mb_bwd) / 2;
    out->d.step_reduce = (a->d.step_reduce + b->d.step_reduce) / 2;
    out->d.step_gather = (a->d.step_gather + b->d.step_gather) / 2;
    out->exposed = (a->exposed + b->exposed) / 2;
    out->opt = (a->opt + b->opt) / 2;
    out->offload = (a->offload + b->offload) / 2;
    out->stage_s = (a->stage_s + b->stage_s) / 2;
}

/* The step of a checked run: with a plan (its stage parameters, repeated stages, FLOPs and
   block kinds), or without (p NULL: everything worked out here). */
static enum tp_status step(const struct ctx *x, const struct tp_time_plan *p,
                           struct tp_time *out)
{
    const struct tp_model *m = x->m;
    const struct tp_layout *l = x->l;
    struct cost kinds[TP_TIME_KINDS];
    bool seen[TP_TIME_KINDS] = {false};
    for (uint32_t layer = 0; !p && layer < m->n_layers; layer++) {
        unsigned k = tp_kind_of(m, layer);
        if (!seen[k]) {
            tp_block_cost(x, layer, &kinds[k]);
            seen[k] = true;
        }
    }
    for (unsigned k = 0; p && k < TP_TIME_KINDS; k++) {
        if (p->kind_layer[k] == UINT32_MAX)
            continue;
        if (x->h.tape)
            x->h.tape->pos = p->kind_at[k];
        tp_block_cost(x, p->kind_layer[k], &kinds[k]);
    }
    /* the slowest stage sets the pipeline's pace */
    struct stage_eval e, worst;
    memset(&e, 0, sizeof e);
    memset(&worst, 0, sizeof worst);
    double sum_total = 0;
    uint32_t worst_stage = 0;
    bool dualpipe = l->schedule == TP_SCHED_DUALPIPE && l->pp > 1;
    for (uint32_t s = 0; dualpipe && s < l->pp / 2; s++) {
        /* DualPipe: rank s runs half the micro-batches through stage s and half through stage
           pp - 1 - s (DeepSeek-V3 report §3.2.1), so a rank's pace is the mean of its two
           stages' (a light first stage balances the rank that holds the head) */
        struct stage_eval a, b;
        eval_stage(x, kinds, p, s, &a);
        eval_stage(x, kinds, p, l->pp - 1 - s, &b);
        mean_eval(&a, &b, &e);
        sum_total += a.st.total + b.st.total;
        if (s == 0 || e.stage_s > worst.stage_s) {
            worst = e;
            worst_stage = e.stage_s == a.stage_s ? s : l->pp - 1 - s;
        }
    }
    for (uint32_t s = 0; !dualpipe && s < l->pp; s++) {
        /* a repeated stage keeps the one before's figures in e */
        bool repeat = p ? p->stages[s].same_as_prev : tp_stage_same_blocks(m, l, s);
        if (!repeat && p) {
            stage_eval(x, kinds, s, &p->stages[s].blocks, &p->stages[s].sp, &e);
        } else if (!repeat) {
            struct tp_shard_params sp;
            struct tp_stage_blocks b;
            uint32_t first, count;
            tp_stage_params(m, x->j, l, s, &sp, &first, &count);
            stage_blocks(m, l, s, &b);
            stage_eval(x, kinds, s, &b, &sp, &e);
        }
        sum_total += e.st.total;
        if (s == 0 || e.stage_s > worst.stage_s) {
            worst = e;
            worst_stage = s;
        }
    }
    double gas = l->gas;
    double mean = sum_total / l->pp;
    double v = l->schedule == TP_SCHED_INTERLEAVED || l->vpp > 1 ? l->vpp : 1;
    double bubble = l->pp > 1 ? (l->pp - 1) / v * mean : 0;
    if (l->schedule == TP_SCHED_DUALPIPE) {
        /* [DSV3] Table 2 from the slowest stage's chunk, scaled to the mean stage */
        double f = worst.st.fwd, b = worst.st.bwd + worst.st.recompute;
        double scale = f + b > 0 ? mean / (f + b) : 0;
        bubble = tp_dualpipe_bubble(l->pp, f * scale, b * scale, worst.st.wgrad * scale);
    }
    double step_overhead = x->cal->step_overhead_s;

    out->slowest_stage = worst_stage;
    out->fwd_s = gas * worst.st.fwd;
    out->bwd_s = gas * worst.st.bwd;
    out->recompute_s = gas * worst.st.recompute;
    out->gemm_s = gas * worst.st.gemm;
    out->attn_s = gas * worst.st.attn;
    out->elementwise_s = gas * worst.st.mem;
    out->overhead_s = gas * worst.st.overhead + step_overhead;
    out->tp_comm_s = gas * worst.st.tp;
    out->cp_comm_s = gas * worst.st.cp;
    out->ep_comm_s = gas * worst.st.ep;
    out->pp_comm_s = gas * worst.st.pp;
    out->dp_comm_s = worst.exposed > 0 ? worst.exposed : 0;
    out->dp_comm_total_s = worst.d.step_reduce + worst.d.step_gather +
                           gas * (worst.d.mb_fwd + worst.d.mb_bwd) + worst.fetch;
    out->bubble_s = bubble;
    out->optimizer_s = worst.opt;
    out->offload_s = worst.offload;
    out->step_s = gas * worst.st.total + bubble + out->dp_comm_s + worst.opt + worst.offload +
                  step_overhead;
    double model, hardware, megatron;
    if (p && !p->flops_ok) {
        return TP_EINVAL;
    } else if (p) {
        model = p->model_flops;
        hardware = p->hw_flops;
        megatron = p->megatron_flops;
    } else if (flops_facts(m, x->j, l, &model, &hardware, &megatron) != TP_OK) {
        return TP_EINVAL;
    }
    return step_rates(x, model, hardware, megatron, out);
}

static enum tp_status rejected(struct tp_time *out)
{
    out->step_s = out->tokens_per_s = out->tokens_per_s_per_gpu = out->mfu = NAN;
    return TP_EINVAL;
}

enum tp_status tp_time_step(const struct tp_model *m, const struct tp_cluster *c,
                            const struct tp_job *j, const struct tp_layout *l,
                            const struct tp_calib *cal, struct tp_time *out)
{
    memset(out, 0, sizeof *out);
    if (!cal || tp_run_check(m, c, j, l, cal, NULL) != TP_OK)
        return rejected(out);
    struct ctx x;
    ctx_init(&x, m, c, j, l, cal);
    return step(&x, NULL, out);
}

/* ---- plans: the calibration-independent work once per run --------------------------------- */

enum tp_status tp_time_plan_init(struct tp_time_plan *p, const struct tp_model *m,
                                 const struct tp_cluster *c, const struct tp_job *j,
                                 const struct tp_layout *l, const struct tp_calib *cal,
                                 struct tp_time_stage *stages)
{
    memset(p, 0, sizeof *p);
    p->m = m;
    p->c = c;
    p->j = j;
    p->l = l;
    p->stages = stages;
    if (!cal || tp_run_check(m, c, j, l, cal, NULL) != TP_OK)
        return TP_EINVAL;
    p->flops_ok = flops_facts(m, j, l, &p->model_flops, &p->hw_flops, &p->megatron_flops) ==
                  TP_OK;
    for (uint32_t s = 0; s < l->pp; s++) {
        uint32_t first, count;
        tp_stage_params(m, j, l, s, &stages[s].sp, &first, &count);
        stage_blocks(m, l, s, &stages[s].blocks);
        /* the test the plain evaluation makes: one rule for which stages repeat */
        stages[s].same_as_prev = tp_stage_same_blocks(m, l, s);
    }
    for (unsigned k = 0; k < TP_TIME_KINDS; k++)
        p->kind_layer[k] = UINT32_MAX;
    for (uint32_t layer = 0; layer < m->n_layers; layer++) {
        unsigned k = tp_kind_of(m, layer);
        if (p->kind_layer[k] == UINT32_MAX) {
            p->kind_layer[k] = layer;
            p->kpq[k] = tp_keys_per_query(m, layer, tp_attn_span(j), TP_ATTN_CAUSAL);
        }
    }
    /* record every GEMM's shape figures, block kind by block kind, then the head's */
    struct ctx x;
    ctx_init(&x, m, c, j, l, cal);
    struct tape t = {NULL, p->rec, 0, TP_TIME_TAPE, false};
    x.h.tape = &t;
    x.kpq = p->kpq;
    struct cost scratch;
    for (unsigned k = 0; k < TP_TIME_KINDS; k++) {
        p->kind_at[k] = t.pos;
        if (p->kind_layer[k] != UINT32_MAX)
            tp_block_cost(&x, p->kind_layer[k], &scratch);
    }
    p->outer_at = t.pos;
    tp_outer_cost(&x, false, true, &scratch);
    p->taped = !t.overflow;
    p->tile_m = x.h.tile_m;
    p->tile_n = x.h.tile_n;
    p->ok = true;
    return TP_OK;
}

enum tp_status tp_time_planned(const struct tp_time_plan *p, const struct tp_calib *cal,
                               struct tp_time *out)
{
    memset(out, 0, sizeof *out);
    if (!p->ok || !cal || tp_calib_check(cal, NULL) != TP_OK)
        return rejected(out);
    struct ctx x;
    ctx_init(&x, p->m, p->c, p->j, p->l, cal);
    x.kpq = p->kpq;
    x.tape_outer = p->outer_at;
    struct tape t = {p->rec, NULL, 0, TP_TIME_TAPE, false};
    if (p->taped && x.h.tile_m == p->tile_m && x.h.tile_n == p->tile_n)
        x.h.tape = &t;
    return step(&x, p, out);
}
