/*
 * host_log.c - what Megatron's per-step logging of the parameters' norm and the gradients'
 * zeros costs (tp_job.log_params_norm, tp_job.log_num_zeros: --log-params-norm and
 * --log-num-zeros-in-grad), read from the code that runs them [MCORE-CI] [MDS-CODE].  Both are
 * off by default in Megatron-LM and in production recipes; Megatron-LM's functional tests and
 * many example scripts set them (with --log-interval 1 they run every step).
 *
 * Where they run, the GPU is idle: count_zeros_fp32 runs inside the optimizer's step() after
 * clip_grad_norm, whose total norm is read back with .item(); calc_params_l2_norm runs in the
 * training loop after `optimizer.get_loss_scale().item()` (megatron/training/training.py:
 * "First .item() after the train_step: a device sync draining the iteration's pending GPU
 * queue").  So nothing hides their host work: each costs its host ops, its kernels' bytes on
 * the GPU and its collectives' latency, whole, and ends with its own .item() (a drain: its
 * call and the launch the idle GPU then waits for, 2 eager ops as in host_ds.c).  Every count
 * below is taken from the code; its price is in eager ops (eager_op_s, host.c).
 *
 * --log-params-norm, Megatron-Core (megatron/training/utils/common_utils.py
 * calc_params_l2_norm, NVIDIA/Megatron-LM d98e8a64dd): a Python walk over every parameter of
 * the rank (the TP-duplicate, GTP and shared filters, to_local_if_dtensor and _get_param_data:
 * about a module call's Python each, MODULE_OPS of host.c [derived]); the data are the
 * optimizer's fp32 main parameters (Float16OptimizerWithFloat16Params and the distributed
 * optimizer set param.main_param; under the distributed optimizer the rank's shard only), so
 * no per-tensor copy; then eight buckets' multi_tensor_l2norm (a zeros or the kernel, and the
 * square: 2 ops each), six adds, six all-reduces (the sharded buckets' over the data-parallel
 * group, the rest over the model-parallel group) and norm_2.item().  Its bytes: 4 per main
 * parameter read once.  The code's own comment gives the size of the whole: "~10ms steady".
 * --log-params-norm, Megatron-DeepSpeed (megatron/utils.py calc_params_l2_norm, c08e2cc2): the
 * same walk, `param.data.float()` per tensor in bf16 (a launch; 2 + 4 bytes per element), the
 * accelerator's IntTensor([0]) (a CUDA tensor from a Python list: a drain), one
 * multi_tensor_l2norm and its square, one all-reduce over the model-parallel group, .item().
 * --log-num-zeros-in-grad, Megatron-Core (megatron/core/optimizer/clip_grads.py
 * count_zeros_fp32): per gradient tensor of the optimizer's parameters (the main parameters:
 * the rank's shard under the distributed optimizer) the filters (Python), detach,
 * torch.count_nonzero (on CUDA `(self != 0).sum()`: 2 kernels), `numel - count` and the running
 * add: 4 launches and a dispatcher-only op, 5 eager ops [counted]; 6 bytes per element (the
 * fp32 gradient read, the mask written and read); then one all-reduce over the grad-stats group
 * and .item().  Megatron-DeepSpeed under DeepSpeed's engine logs 0 without counting
 * (megatron/training.py train_step: `num_zeros_in_grad = 0`): nothing.
 *
 * Tensors per rank: each block's, as Megatron-Core names them (transformer_layer.py with TE's
 * fused norms): the input norm (weight, and bias for LayerNorm), linear_qkv (or MLA's four
 * projections and two norms), linear_proj, q/k norms, the pre-MLP norm, fc1 and fc2 (their
 * biases where the model has them); an MoE block's router and, per local expert, TE
 * GroupedLinear's fc1 and fc2 weights (one tensor per expert), and the shared experts' pair;
 * the first stage adds the word (and learned position) embedding, the last the final norm and
 * the output layer (untied, or tied across stages).  A partition under the distributed
 * optimizer holds 1/dp of them plus the one its boundary splits (host_ds.c's rule).
 */
#include "time_internal.h"

/* Python per tensor of the walks, in eager ops: about one module call's (host.c). */
#define WALK_OPS 0.25
/* count_zeros_fp32 per gradient tensor: ne, sum, rsub and add launches and the detach. */
#define ZEROS_OPS 5.0
#define ZEROS_BYTES 6.0
/* Megatron-Core's calc_params_l2_norm beside the walk: 8 buckets x (norm, square), 6 adds. */
#define MCORE_NORM_OPS (8 * 2.0 + 6)
#define MCORE_NORM_COLLS 6.0

static double norm_tensors(const struct tp_model *m)
{
    return m->norm == TP_NORM_LAYER ? 2 : 1;
}

/* Megatron-Core's parameter tensors of block `layer` on a rank of an `ep`-wide expert group. */
static double block_tensors(const struct tp_model *m, uint32_t layer, uint32_t ep)
{
    double nt = norm_tensors(m), b = m->qkv_bias ? 1 : 0;
    bool mla = m->q_lora_rank > 0 || m->kv_lora_rank > 0;
    double t = nt * (m->norms_per_block > 2 ? m->norms_per_block / 2.0 : 1);
    t += mla ? 4 + 2 : 1 + b;         /* qkv, or MLA's projections and their two norms */
    t += 1 + (m->o_bias ? 1 : 0);     /* linear_proj */
    t += m->qk_norm ? 2 : 0;
    if (m->layer_no_ffn[layer])
        return t;
    t += nt; /* the pre-MLP norm */
    if (m->layer_moe[layer]) {
        double local = (double)m->n_experts / (ep ? ep : 1);
        t += 1 + (m->router_bias ? 1 : 0) + local * (m->expert_bias ? 4 : 2);
        t += m->n_shared_experts > 0 ? 2 : 0;
    } else {
        t += m->mlp_bias ? 4 : 2;
    }
    return t;
}

/* The parameter tensors of stage `stage` holding `blocks` blocks on one rank. */
double tp_host_stage_tensors(const struct ctx *x, uint32_t stage, uint32_t blocks)
{
    const struct tp_model *m = x->m;
    const struct tp_layout *l = x->l;
    double per = 0;
    for (uint32_t i = 0; i < m->n_layers; i++)
        per += block_tensors(m, i, l->ep);
    double t = m->n_layers ? per / m->n_layers * blocks : 0;
    if (stage == 0)
        t += 1 + (m->pos == TP_POS_LEARNED ? 1 : 0);
    if (stage + 1 == l->pp)
        t += norm_tensors(m) + (!m->tied || l->pp > 1 ? 1 : 0);
    return t;
}

double tp_host_log_step(const struct ctx *x, uint32_t stage, uint32_t blocks, double params)
{
    const struct tp_job *j = x->j;
    const struct tp_layout *l = x->l;
    bool mcore = j->framework == TP_FW_MEGATRON, mds = j->framework == TP_FW_MEGATRON_DS;
    if (!(mcore || mds) || !(j->log_params_norm || (mcore && j->log_num_zeros)))
        return 0;
    double op = x->cal->eager_op_s, bw = x->h.mem_bw;
    double tensors = tp_host_stage_tensors(x, stage, blocks);
    bool sharded = mcore && l->zero >= 1 && l->dp > 1; /* the distributed optimizer */
    double own_t = sharded ? tensors / l->dp + 1 : tensors;
    double own_p = sharded ? params / l->dp : params;
    uint32_t mp = l->tp * l->pp, dpn = l->dp * l->cp;
    double t = 0;
    if (j->log_params_norm && mcore) {
        double ops = tensors * WALK_OPS + MCORE_NORM_OPS + MCORE_NORM_COLLS * TP_HOST_COLL_OPS +
                     TP_HOST_DRAIN_OPS;
        t += ops * op + own_p * 4 / bw + tp_host_small_allreduce(x, mp, 1) +
             (sharded ? tp_host_small_allreduce(x, dpn, mp) : 0);
    } else if (j->log_params_norm) { /* Megatron-DeepSpeed */
        bool bf16 = j->precision == TP_PREC_BF16;
        double ops = tensors * (WALK_OPS + (bf16 ? 1 : 0)) + TP_HOST_DRAIN_OPS + 2 +
                     TP_HOST_COLL_OPS + TP_HOST_DRAIN_OPS;
        t += ops * op + params * (bf16 ? 2 + 4 + 4 : 2) / bw + tp_host_small_allreduce(x, mp, 1);
    }
    if (j->log_num_zeros && mcore) {
        /* the grad-stats group: the model-parallel group, every rank under the distributed
           optimizer (its partial counts) */
        t += (own_t * ZEROS_OPS + TP_HOST_COLL_OPS + TP_HOST_DRAIN_OPS) * op +
             own_p * ZEROS_BYTES / bw + tp_host_small_allreduce(x, sharded ? mp * dpn : mp, 1);
    }
    return t;
}
