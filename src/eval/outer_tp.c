/*
 * outer_tp.c - the tensor-parallel collectives outside the blocks: the vocabulary-parallel
 * embedding, the vocabulary-parallel output layer and the vocabulary-parallel cross-entropy.
 * The blocks' collectives are priced per block (time_block.c); until this file the first and
 * the last pipeline stage's embedding, head and loss ran none, although every stack that splits
 * the vocabulary over the TP group runs them once per micro-batch.  Counted from the code
 * (nothing fitted; the time is the model's own ring all-reduce, comm.c):
 *
 *   - the embedding (first stage): VocabParallelEmbedding looks up the rows of its vocabulary
 *     shard, zeroes the others' and sums the partial embeddings over the TP group:
 *     reduce_from_tensor_model_parallel_region, an all-reduce of T x h 16-bit elements, forward
 *     only (its backward is the identity); under sequence parallelism a reduce-scatter forward
 *     and its all-gather backward ([MDS-CODE] megatron/core/tensor_parallel/layers.py
 *     VocabParallelEmbedding.forward at c08e2cc2; Megatron-Core's
 *     megatron/core/tensor_parallel/layers.py the same, reduce_scatter_to_sequence_parallel_
 *     region with --sequence-parallel; torchtitan's tok_embeddings RowwiseParallel likewise).
 *   - the output layer (last stage): parallel_lm_logits copies its input into the TP region,
 *     whose backward all-reduces the input's gradient, T x h 16-bit elements (copy_to_tensor_
 *     model_parallel_region, or the same all-reduce issued inside linear_with_grad_accumulation_
 *     and_async_allreduce); under sequence parallelism an all-gather of the input forward and a
 *     reduce-scatter of its gradient backward ([MDS-CODE] megatron/model/language_model.py
 *     parallel_lm_logits; Megatron-Core's output_layer, a ColumnParallelLinear).
 *   - the loss (last stage): the vocabulary-parallel cross-entropy reduces three per-token
 *     fp32 vectors over the TP group in its forward: the logits' maximum, the target's logit
 *     and the sum of the exponentials (_VocabParallelCrossEntropy.forward: three
 *     torch.distributed.all_reduce calls, [MDS-CODE] megatron/core/tensor_parallel/
 *     cross_entropy.py; PyTorch's loss_parallel, torch/distributed/tensor/parallel/loss.py
 *     _log_softmax and _nll_loss_forward, the same three).  T x 4 bytes each: latency-bound.
 *     Megatron-Core's cross_entropy_loss_fusion concatenates the last two (two calls); priced
 *     as three.
 * A full recompute reruns the blocks only: none of these runs again in the backward.
 */
#include "time_internal.h"

/* fp32 vectors the vocabulary-parallel cross-entropy all-reduces per micro-batch */
#define CE_ALLREDUCES 3.0

void tp_outer_tp(const struct ctx *x, bool first, bool last, struct cost *c)
{
    const struct tp_layout *l = x->l;
    if (l->tp <= 1 || (!first && !last))
        return;
    /* one all-reduce of the micro-batch's hidden states; under sequence parallelism its
       reduce-scatter half runs one way and its all-gather half the other */
    double coll = tp_time_allreduce(x->c, x->cal, x->tokens * x->m->hidden * x->h.act_bytes,
                                    l->tp, x->g_tp);
    if (first) { /* the embedding: all-reduce forward; SP reduce-scatter / all-gather */
        c->tp_fwd += l->sp ? coll / 2 : coll;
        c->tp_bwd += l->sp ? coll / 2 : 0;
    }
    if (last) { /* the head: all-reduce of the input's gradient; SP all-gather / reduce-scatter */
        c->tp_fwd += l->sp ? coll / 2 : 0;
        c->tp_bwd += l->sp ? coll / 2 : coll;
        c->tp_fwd += CE_ALLREDUCES *
                     tp_time_allreduce(x->c, x->cal, x->tokens * 4, l->tp, x->g_tp);
    }
}
