/*
 * mem_attn.c - the memory an attention block's backward holds beside its saved tensors
 * (docs/memory.md): torch's ring attention buffers under context parallelism, and the fused
 * attention kernel's own backward workspace.  Bytes per local token; pure and allocation-free.
 *
 * Sources: torch/distributed/tensor/experimental/_context_parallel/_attention.py
 * (_templated_ring_attention_backward, _AllGatherRotater, _ContextParallelOptions);
 * [ATTN-BWD]: FlashAttention-2's mha_bwd (csrc/flash_attn/flash_api.cpp, which PyTorch's SDPA flash backend
 * carries as aten/src/ATen/native/transformers/cuda/flash_attn/flash_api.cpp): dq_accum and
 * softmax_d in fp32; cudnn-frontend's SDPA backward node
 * (include/cudnn_frontend/node/scaled_dot_product_flash_attention.h, CompositeSDPABackwardNode:
 * dQ_accum and softmax_sum in its workspace, get_fe_workspace_size_node), which PyTorch allocates
 * from the caching allocator (aten/src/ATen/native/cudnn/MHA.cpp run_cudnn_SDP_bprop) and
 * Transformer Engine's fused attention runs alike.
 * [TE-DPA]: Transformer Engine's FusedAttnFunc (transformer_engine/pytorch/attention/
 * dot_product_attention/backends.py, commit d0067d0da): under fp8_dpa with the FP8 backward
 * (NVTE_FP8_DPA_BWD, default 1) it saves the quantized q_fp8, k_fp8, v_fp8 for the backward.
 */
#include "eval_internal.h"

/* torch's context parallelism, which torchtitan (parallel_dims cp) and Accelerate's FSDP2
   cp_size run (TRL's and the Trainer's context parallelism: accelerate/utils/fsdp_utils.py, TRL
   docs/source/distributing_training.md "Ring Attention (FSDP2)"); Megatron-Core's and NeMo's CP
   is Transformer Engine's (AttnFuncWithCPAndKVP2P), DeepSpeed's sequence parallelism Ulysses. */
bool tp_mem_torch_ring_cp(const struct tp_job *j, const struct tp_layout *l)
{
    if (l->cp <= 1)
        return false;
    return j->framework == TP_FW_FSDP || j->framework == TP_FW_TORCHTITAN ||
           (j->framework == TP_FW_AXOLOTL && j->fsdp_backend);
}

/* The widths of one token's local query and key + value heads (split by tp). */
static void local_widths(const struct tp_model *m, const struct tp_layout *l, double *q,
                         double *kv)
{
    if (m->attn == TP_ATTN_MLA) {
        *q = (double)m->n_heads * ((double)m->qk_nope_dim + m->qk_rope_dim);
        *kv = *q + (double)m->n_heads * m->v_head_dim;
    } else {
        *q = (double)m->n_heads * m->head_dim;
        *kv = 2.0 * m->n_kv_heads * m->head_dim;
    }
    *q /= l->tp;
    *kv /= l->tp;
}

/* Bytes per local token of torch's ring attention buffers at the backward of one attention
   block (_templated_ring_attention_backward), with the default _ContextParallelOptions
   (convert_to_f32 True, rotate_method ALL_GATHER):
     grad_query accumulated in fp32 (zeros_like(query, dtype=float32)) beside the op's 16-bit
       grad_query_, grad_key_ and grad_value_ of the current step: 4 q + 2 q + 2 (k + v);
     the K and V of every rank: _AllGatherRotater all-gathers the concatenated local K and V
       once (all_gather_tensor, kept as _aggregated_buffer for the whole loop), cp x 2 (k + v),
       plus the local torch.cat([key.flatten(), value.flatten()]) it was sent from, 2 (k + v);
     the K and V gradients travelling the other way (dkv_rotater, ALL_TO_ALL): fp32, the buffer
       received from the previous rank that grad_key and grad_value view, the concatenated one
       being sent and the next one being received (permute_tensor): 3 x 4 (k + v). */
double tp_mem_ring_bytes(const struct tp_model *m, const struct tp_layout *l)
{
    double q, kv;
    local_widths(m, l, &q, &kv);
    return 6 * q + (2.0 * l->cp + 2 + 2 + 12) * kv;
}

/* Bytes per local query token of the fused attention kernel's backward workspace, allocated by
   the op for its duration.  FlashAttention-2's mha_bwd accumulates dQ in fp32 (dq_accum,
   [batch, seqlen_q_rounded, heads, head_dim_rounded] float, whenever the keys span more than
   one block) and keeps softmax_d ([batch, heads, seqlen_q_rounded] float); cuDNN's SDPA
   backward (PyTorch's cuDNN backend, Transformer Engine's fused attention; FlashAttention-3's
   mha_bwd keeps the same two) takes dQ_accum ([b, h_q, s_q, d_qk] float) and softmax_sum
   ([b, h_q, s_q, 1] float) from its workspace: 4 bytes per query element and 4 per head either
   way.  FlashAttention 1.x keeps the same two (flash-attn v1.0.9 fmha_api.cpp mha_bwd: dq_tmp,
   [total_q, heads, head_size] float, whenever the keys span more than one block; softmax_d,
   [batch, heads, seqlen_q] float); its forward's o_tmp ([total_q, heads, head_size] float) is
   freed before the backward.  No FA kernel stores an s x s matrix.  FlashAttention-2 also
   expands dK and dV to every query head under GQA (dk_expanded, dv_expanded) only when the
   caller passes un-repeated K and V, and FlashAttention-3 accumulates them in fp32 per
   key/value head: neither is counted.  Eager
   attention saves its probabilities instead (block_activations' core term) and FlexAttention's
   Triton backward is not this code: 0. */
double tp_mem_attn_workspace(const struct tp_model *m, const struct tp_job *j,
                             const struct tp_layout *l)
{
    if (j->attn_impl != TP_ATTN_FLASH && j->attn_impl != TP_ATTN_FLASH1 &&
        j->attn_impl != TP_ATTN_FLASH2 && j->attn_impl != TP_ATTN_FLASH3 &&
        j->attn_impl != TP_ATTN_CUDNN919)
        return 0;
    double q, kv;
    local_widths(m, l, &q, &kv);
    return 4 * q + 4.0 * m->n_heads / l->tp;
}

/* Bytes per element of the Q, K and V the attention block keeps for its backward: 16-bit, or
   1 byte when FP8 attention saves the quantized copies it ran ([TE-DPA]: fp8_tensors = q_fp8,
   k_fp8, v_fp8; O stays 16-bit under current scaling, NVTE_DPA_FP8CS_O_in_F16 default 1, and
   is the output projection's input anyway).  Recomputing the attention core keeps the
   checkpoint's 16-bit inputs instead (Megatron-Core's core_attn checkpoint saves q, k, v). */
double tp_mem_attn_qkv_bytes(const struct tp_job *j, uint32_t rc)
{
    return j->fp8_attention && !(rc & TP_RC_CORE_ATTN) ? 1 : 2;
}
