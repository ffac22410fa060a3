/*
 * moe_comm.c - the expert-parallel token exchange as large MoE runs do it (docs/moe.md), and
 * DeepSeek-V3's DualPipe schedule: its bubble and what its overlap hides.
 *
 * Sources:
 *   [DSV3]   DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437: §2.1.2
 *            node-limited routing ("each token will be sent to at most M nodes", M = 4);
 *            §3.2.1 DualPipe and Table 2 (bubble (PP/2 - 1)(F&B + B - 3W), 2x parameters,
 *            PP + 1 activations); §3.2.2 the all-to-all: "IB (50 GB/s)", "NVLink (160 GB/s)",
 *            tokens sent over IB once per target node and forwarded over NVLink, "only 20 SMs
 *            are sufficient to fully utilize the bandwidths of IB and NVLink"; §3.3 FP8
 *            dispatch, BF16 combine.
 *   [DEEPEP] deepseek-ai/DeepEP docs/legacy.md (V1 normal kernels, H800 + CX7 400 Gb/s,
 *            4096 tokens, hidden 7168, top-4 groups, top-8 experts, FP8 dispatch / BF16
 *            combine): intranode EP 8 153 / 158 GB/s (NVLink), internode EP 16 / 32 / 64
 *            43-58 GB/s (RDMA) bottleneck bandwidth: the link rate, dispatch and combine alike.
 *   [DUALPIPE] deepseek-ai/DualPipe README (the same table as [DSV3] Table 2).
 *   [MCORE]  Megatron-Core megatron/core/transformer/moe/token_dispatcher.py:
 *            MoEAlltoAllTokenDispatcher (permute one copy per routed expert, all-to-all),
 *            MoEAllGatherTokenDispatcher (gather every rank's tokens, reduce-scatter back),
 *            MoEFlexTokenDispatcher (DeepEP / HybridEP, --moe-token-dispatcher-type flex);
 *            _HybridEPManager.dispatch passes the 16-bit hidden states (no FP8 dispatch) and
 *            config.moe_hybridep_num_sms SMs (transformer_config.py default 16: "In pure NVL
 *            scenarios, 16 SMs can generally achieve good bandwidth").
 *   [HEP]    deepseek-ai/DeepEP docs/README_Hybrid-EP.md at 41cad9444962 ("Performance
 *            Results", 4096 tokens per rank, hidden 7168, top-8, 8 local experts, uniform
 *            random routing, Torch API at 16 SMs) and tests/test_hybrid_ep.py (how the
 *            "algorithm bandwidth" counts bytes: NVLink = the rank's dispatched tokens x
 *            hidden x 2, its own copies included; IB = tokens x nodes reached x hidden x 2,
 *            the local node included, count_rdma_send_from_routing_map); H100 over IB
 *            (one 400 Gb/s NIC per GPU, 8 per node), 16/32/64 ranks: dispatch 54.47, 47.36,
 *            41.24, combine 53.35, 52.53, 46.57 GB/s (not priced: tp_moe_comm).
 */
#include "time_internal.h"

#include <math.h>

/* Distinct bins hit when `k` items fall uniformly into `n` bins (the expected count). */
static double distinct(double n, double k)
{
    if (n <= 1)
        return n > 0 ? 1 : 0;
    return n * (1 - pow(1 - 1 / n, k));
}

/* Nodes a token may reach: all N of the group's, or under group-limited routing the nodes its
   best router_group_topk groups span (groups nested in nodes: at most that many nodes; groups
   spread over several nodes each: that many groups' worth). */
double tp_moe_node_limit(const struct tp_model *m, double nodes)
{
    double g = m->router_groups, top = m->router_group_topk;
    if (g <= 0 || top <= 0 || top >= g)
        return nodes;
    double reach = g >= nodes ? top : top * nodes / g;
    return reach < nodes ? reach : nodes;
}

/* DeepEP's hierarchical dispatch (or combine) of `tokens` tokens of `bytes_el` bytes per
   element: each token crosses InfiniBand once per remote node it reaches and is forwarded over
   NVLink to the distinct ranks of each node that hold its experts ([DSV3] §3.2.2); the two
   run pipelined, so the slower sets the time (DeepEP's "bottleneck bandwidth").  Megatron-Core's
   flex dispatcher runs it over the TP x EP group with each expert's etp shards as destinations
   of their own ("a single communication group over all TP and EP ranks", router top-k and
   experts times tp_size): the shards of one expert sit on adjacent ranks of one node. */
static double hierarchical(const struct ctx *x, double tokens, double bytes_el, double imb)
{
    const struct tp_model *m = x->m;
    const struct tp_calib *cal = x->cal;
    double etp = x->l->etp > 1 ? x->l->etp : 1;
    uint32_t n_ranks = x->l->ep * (uint32_t)etp;
    uint32_t g_ranks = etp > 1 ? tp_comm_per_node(n_ranks, 1, x->c->gpus_per_node) : x->g_ep;
    double n = n_ranks, g = g_ranks, k = m->top_k, H = m->hidden;
    double nodes = tp_comm_nodes_of(n_ranks, g_ranks);
    double reach = tp_moe_node_limit(m, nodes);
    double hit = distinct(reach, k);           /* nodes a token lands on */
    double remote = hit * (nodes - 1) / nodes; /* of them not the sender's */
    /* ranks per node it lands on: the experts it picks there, each on its etp shards */
    double ranks = etp * distinct(g / etp, k / hit);
    double row = H * bytes_el * imb;           /* bytes of one copy, busiest rank's load */
    double nvl = tokens * hit * ranks * row;
    if (nodes <= 1) /* one node: NVLink to the other ranks only */
        nvl = tokens * etp * distinct(n / etp, k) * (n - 1) / n * row;
    double ib = tokens * remote * row;
    double t_nvl = nvl / tp_comm_intra_bw(x->c, cal, g_ranks);
    double t_ib = nodes > 1 ? ib / (cal->eff_inter * x->c->gpu.inter_bw) : 0;
    return tp_comm_latency(cal, 1, nodes > 1) + (t_ib > t_nvl ? t_ib : t_nvl);
}

/* HybridEP's measured algorithm bandwidth inside one NVLink domain ([HEP], Torch API, 16 SMs,
   BF16 dispatch and combine) as a share of the link it ran on: GB200 NVL72 (900 GB/s per
   direction) at 8/16/24/32/36 ranks (dispatch 550.10, 472.84, 441.89, 485.50, 469.96 GB/s;
   combine 538.44, 474.48, 444.40, 423.19, 418.27).  B200's EP 8 (535.94 / 530.86 GB/s) lies
   within 3% of GB200's share of the same 900 GB/s (tests/test_hybridep.c). */
static const double HEP_NVL_RANKS[] = {8, 16, 24, 32, 36};
static const double HEP_NVL_DISPATCH[] = {550.10 / 900, 472.84 / 900, 441.89 / 900,
                                          485.50 / 900, 469.96 / 900};
static const double HEP_NVL_COMBINE[] = {538.44 / 900, 474.48 / 900, 444.40 / 900,
                                         423.19 / 900, 418.27 / 900};
#define HEP_NVL_N (sizeof HEP_NVL_RANKS / sizeof HEP_NVL_RANKS[0])

/* SMs HybridEP's kernels hold under Megatron-Core: moe_hybridep_num_sms, default 16 ([MCORE]
   transformer_config.py), the setting of [HEP]'s tables. */
#define HYBRIDEP_SMS 16.0

/* The measured share at `ranks`: piecewise-linear between the measured group sizes, held at
   the ends (EP 2-4 and EP 37-72 of an NVL72 rack were not benchmarked). */
static double hep_share(const double *share, double ranks)
{
    if (ranks <= HEP_NVL_RANKS[0])
        return share[0];
    for (size_t i = 1; i < HEP_NVL_N; i++)
        if (ranks <= HEP_NVL_RANKS[i])
            return share[i - 1] + (share[i] - share[i - 1]) * (ranks - HEP_NVL_RANKS[i - 1]) /
                                      (HEP_NVL_RANKS[i] - HEP_NVL_RANKS[i - 1]);
    return share[HEP_NVL_N - 1];
}

/* One HybridEP dispatch (combine = false) or combine of `tokens` 16-bit tokens inside one
   NVLink domain, over the TP x EP group Megatron-Core gives it, counted as [HEP] counts it:
   each rank receives one copy per token that picks any of its experts (its own included), at
   the measured share of this GPU's NVLink.  The measured bandwidth is an achieved one: no
   calibrated efficiency on top. */
static double hybridep_nvl(const struct ctx *x, double tokens, double imb, bool combine)
{
    double etp = x->l->etp > 1 ? x->l->etp : 1;
    double n = (double)x->l->ep * etp;
    double row = x->m->hidden * x->h.act_bytes * imb; /* one copy, the busiest rank's load */
    double recv = tokens * etp * distinct(n / etp, x->m->top_k) * row;
    double bw = x->c->gpu.intra_bw * hep_share(combine ? HEP_NVL_COMBINE : HEP_NVL_DISPATCH, n);
    return tp_comm_latency(x->cal, 1, 0) + recv / bw;
}

/* Expert tensor parallelism: after the all-to-all each rank of an etp group gathers the
   copies its etp peers received (all-gather), and the combine reduce-scatters the partial
   outputs back (Megatron-Core token_dispatcher.py, MoEAlltoAllTokenDispatcher: "all-gather
   over ETP" after the EP all-to-all).  `bytes` is what one rank received. */
static double etp_exchange(const struct ctx *x, double bytes)
{
    uint32_t etp = x->l->etp;
    if (etp <= 1)
        return 0;
    uint32_t g = tp_comm_per_node(etp, 1, x->c->gpus_per_node);
    return tp_time_allgather(x->c, x->cal, bytes * etp, etp, g);
}

/* DeepEP's FP8 dispatch: 1 byte per element and an fp32 scale per 128 ([DSV3] §3.3: the
   activations before the up-projections quantized in 1 x 128 tiles, then dispatched) */
#define FP8_TILE_BYTES (1.0 + 4.0 / 128)

/* Tokens one rank routes: under Megatron sequence parallelism (which Megatron-Core requires
   with tensor and expert parallelism together, arguments.py) each TP rank holds and dispatches
   its T/tp share (MoEAlltoAllTokenDispatcher works on the [S/TP, B, H] hidden states). */
double tp_moe_routed_tokens(const struct ctx *x)
{
    const struct tp_layout *l = x->l;
    return l->sp && l->tp > 1 ? x->tokens / l->tp : x->tokens;
}

void tp_moe_comm(const struct ctx *x, double imb, struct tp_moe_comm *out)
{
    const struct tp_model *m = x->m;
    const struct tp_layout *l = x->l;
    double T = tp_moe_routed_tokens(x), H = m->hidden, k = m->top_k, b = x->h.act_bytes;
    out->fwd = out->bwd = out->sm_share = 0;
    if (l->ep <= 1)
        return;
    switch (x->j->moe_dispatcher) {
    case TP_MOE_DISPATCH_ALLGATHER: {
        /* every rank gathers the group's T x ep tokens (and their routing), the outputs come
           back by a reduce-scatter of the same size; the backward swaps the two ([MCORE]) */
        double ag = tp_time_allgather(x->c, x->cal, T * l->ep * H * b, l->ep, x->g_ep);
        out->fwd = out->bwd = 2 * ag;
        return;
    }
    case TP_MOE_DISPATCH_FLEX: {
        /* FP8 dispatch where the GEMMs run FP8, 16-bit combine; the backward of a dispatch is
           a combine and of a combine a dispatch of the gradients, FP8 too before the
           down-projection ([DSV3] §3.3) */
        double bd = x->h.fp8 ? FP8_TILE_BYTES : b;
        double one = hierarchical(x, T, bd, imb) + hierarchical(x, T, b, imb);
        out->fwd = out->bwd = one;
        /* the kernels run on SMs of their own: 20 of H800's 132 in [DSV3] §3.2.2 */
        out->sm_share = x->h.sms > 0 ? TP_MOE_COMM_SMS / x->h.sms : 0;
        return;
    }
    case TP_MOE_DISPATCH_HYBRIDEP: {
        /* Across NVLink domains HybridEP's time is its RDMA leg, measured only at hidden 7168
           on H100 ([HEP]); priced from that table the Megatron-Bridge H100 EP 16 rows (hidden
           2048) go from 16% too slow to 24-27% too fast and the held-out figures past their
           bar (docs/moe.md "HybridEP"), so there it keeps the plain all-to-all's price */
        uint32_t etp = x->l->etp > 1 ? x->l->etp : 1;
        uint32_t g = etp > 1 ? tp_comm_per_node(l->ep * etp, 1, x->c->gpus_per_node) : x->g_ep;
        if (tp_comm_nodes_of(l->ep * etp, g) > 1)
            break;
        /* a dispatch and a combine each way, 16-bit ([MCORE] passes the BF16 hidden states);
           its kernels hold moe_hybridep_num_sms SMs while they run */
        double one = hybridep_nvl(x, T, imb, false) + hybridep_nvl(x, T, imb, true);
        out->fwd = out->bwd = one;
        out->sm_share = x->h.sms > 0 ? HYBRIDEP_SMS / x->h.sms : 0;
        return;
    }
    case TP_MOE_DISPATCH_ALLTOALL:
        break;
    }
    /* every routed copy sent on its own (the permutation makes k copies first), 16-bit */
    double a2a = tp_time_alltoall(x->c, x->cal, T * k * H * b * imb, l->ep, x->g_ep);
    out->fwd = 2 * a2a + 2 * etp_exchange(x, T * k * H * b * imb);
    out->bwd = out->fwd;
}

/* DualPipe's bubble per step ([DSV3] Table 2): (pp/2 - 1)(F&B + B - 3W) with F a forward
   chunk, B a full backward chunk (its recompute included), W the backward's weight-gradient
   part and F&B a forward and a backward chunk run together (their compute, communication
   hidden).  1F1B's is (pp - 1)(F + B). */
double tp_dualpipe_bubble(uint32_t pp, double f, double b, double w)
{
    if (pp < 2)
        return 0;
    double fb = f + b;
    double per = fb + b - 3 * w;
    return (pp / 2.0 - 1) * (per > 0 ? per : 0);
}

/* Share of the micro-batches whose chunks DualPipe pairs with another's: all but the warm-up
   and cool-down. */
double tp_dualpipe_paired(uint32_t pp, uint32_t gas)
{
    /* dualpipe.py step() on the end ranks (half_rank 0, the fewest pairs): step 4 runs
       2 (gas/2 - pp + 1) overlapped forward-backward pairs and step 5 pp/2 - 1 more, of the
       gas backward chunks each rank runs */
    double pairs = gas - 1.5 * pp + 1;
    return gas > 0 && pairs > 0 ? pairs / gas : 0;
}

/* Share of a pipeline rank's forward and backward chunks that Megatron-Core's 1F1B all-to-all
   overlap (--overlap-moe-expert-parallel-comm) runs in pairs.  Its schedule
   (megatron/core/pipeline_parallel/schedules.py, get_pp_rank_microbatches) runs the warm-up
   forward chunks alone, and as many cool-down backward chunks: on pipeline rank r of pp with
   vpp model chunks, (pp - r - 1) * 2 + (vpp - 1) * pp of the gas * vpp, plus one more "to
   ensure the forward and backward computations are independent in all 1f1b steps"; without a
   pipeline the first forward and the last backward have no partner.  Only the paired chunks
   hide their exchange (models/common/model_chunk_schedule_plan.py: combine_bwd beside the
   attention forward, dispatch_fwd and dispatch_bwd beside mlp_bwd and mlp_fwd, combine_fwd
   beside the attention backward).  Rank 0, with the longest warm-up, sets the pace; one
   figure for every stage keeps repeated stages' times shared (time.c). */
double tp_a2a_overlap_paired(uint32_t pp, uint32_t vpp, uint32_t gas)
{
    double v = vpp > 1 ? vpp : 1, chunks = (double)gas * v;
    double warm = 1;
    if (pp > 1)
        warm = (pp - 1.0) * (v > 1 ? 2 : 1) + (v - 1) * pp + 1;
    return chunks > warm ? (chunks - warm) / chunks : 0;
}

/* The share of an MLA block's forward GEMM work in its up-projections (q_b and kv_b, rebuilt
   from the latents when mla_up_proj is recomputed: DeepSeek-V3 report §3.2.3, "we recompute
   all RMSNorm operations and MLA up-projections during back-propagation"), the routed experts
   counted at top-k.  Multiply-accumulates per token: */
double tp_mla_up_share(const struct tp_model *m, bool moe)
{
    double H = m->hidden, nh = m->n_heads, qk = (double)m->qk_nope_dim + m->qk_rope_dim;
    double q_up = m->q_lora_rank ? (double)m->q_lora_rank * nh * qk : 0;
    double kv_up = (double)m->kv_lora_rank * nh * ((double)m->qk_nope_dim + m->v_head_dim);
    double q_in = m->q_lora_rank ? H * m->q_lora_rank : H * nh * qk;
    double attn = q_in + q_up + H * ((double)m->kv_lora_rank + m->qk_rope_dim) + kv_up +
                  nh * (double)m->v_head_dim * H;
    double glu = m->mlp == TP_MLP_GLU ? 3 : 2;
    double ffn = moe ? glu * H * ((double)m->top_k * m->moe_ffn + m->shared_ffn) +
                           H * m->n_experts
                     : glu * H * m->ffn;
    return (q_up + kv_up) / (attn + ffn);
}
