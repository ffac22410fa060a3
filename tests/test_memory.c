/*
 * test_memory.c - known-answer and property tests for the per-GPU memory model.
 *
 * Expected values: the ZeRO paper's 7.5B-on-64-GPUs example ([ZeRO] Fig. 1), DeepSpeed's
 * memory estimators ([DS-MEM]), Korthikanti et al.'s per-layer activations ([KOR22] Table 2),
 * the QLoRA byte count ([BNB], QLoRA §3) and the worked figures of docs/physics.md §3.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GIB 1073741824.0

#include "run_fixture.h"

static void setup_run(const char *preset, const char *gpu, uint32_t gpus)
{
    fixture_run(preset, gpu, gpus);
}

static struct tp_memory eval(void)
{
    return fixture_memory();
}

static double states(const struct tp_memory *m)
{
    return m->weights_bytes + m->grads_bytes + m->optimizer_bytes;
}

static void near(const char *what, double got, double want, double tol)
{
    if (fabs(got - want) > tol)
        fail_msg("%s: got %.6g, expected %.6g (+-%g)", what, got, want, tol);
}

static void test_zero_paper(void **state)
{
    (void)state;
    /* [ZeRO] Fig. 1: Psi = 7.5B, N_d = 64, K = 12: 120 / 31.4 / 16.6 / 1.88 GB.  The bytes per
       parameter are model-independent, so any model scaled to 7.5B must give these. */
    static const double want[4] = {120e9, 31.4e9, 16.6e9, 1.875e9};
    setup_run("llama-3.1-8b", "h100-sxm", 64);
    job.framework = TP_FW_FSDP;
    for (uint32_t z = 0; z <= 3; z++) {
        lay.zero = z;
        struct tp_memory m = eval();
        near("zero paper", states(&m) / m.params * 7.5e9, want[z], 0.05e9);
    }
    /* docs/physics.md §3.2: Llama-3.1-8B on N_d = 8: 128.5 / 44.2 / 30.1 / 16.06 GB;
       Megatron distributed optimizer 6*8.03 + 12*8.03/8 = 60.2 GB */
    static const double want8[4] = {128.5e9, 44.2e9, 30.1e9, 16.06e9};
    cluster.n_gpus = 8;
    for (uint32_t z = 0; z <= 3; z++) {
        lay.zero = z;
        struct tp_memory m = eval();
        near("llama 8 gpus", states(&m), want8[z], 0.05e9);
    }
    job.framework = TP_FW_MEGATRON;
    lay.zero = 1;
    struct tp_memory m = eval();
    near("megatron distopt", states(&m), 60.2e9, 0.05e9);
    /* --optimizer-cpu-offload (HybridDeviceOptimizer): the optimizer shard (12P/8) moves to the
       host with an fp32 copy of its gradients (4P/8); DDP's fp32 gradient buffer stays on the
       GPU: 2P + 4P = 48.2 GB per GPU, 8 * 16P/8 = 128.5 GB per node */
    lay.offload = TP_OFFLOAD_OPTIMIZER;
    m = eval();
    near("megatron offload", states(&m), 6 * m.params, 1);
    near("megatron offload host", m.host_bytes_per_node, 16 * m.params, 1);
    near("megatron offload 8b", states(&m), 48.2e9, 0.05e9);
}

static void test_deepspeed_estimator(void **state)
{
    (void)state;
    /* [DS-MEM] estimate_zero2/3_model_states_mem_needs, t5-3b (2851M params) on 8 GPUs:
       ZeRO-2: 2P + 18P/8 = 11.28 GiB (stage_1_and_2.py since PR #5099, 2024-06: the 16-bit
       gradients are partitioned; the estimator before it said 4P + 16P/8); with optimizer
       offload: 2P = 5.31 GiB; ZeRO-3: 18P/8 + 4 * largest layer.  Per-parameter bytes applied
       to P = 2851M.  Stage 1 keeps the 16-bit gradients whole: 4P + 16P/8 = 15.93 GiB. */
    const double P = 2851e6;
    setup_run("llama-3.1-8b", "h100-sxm", 8);
    job.framework = TP_FW_DEEPSPEED;
    lay.zero = 2;
    struct tp_memory m = eval();
    near("ds zero2", states(&m) / m.params * P / GIB, 11.28, 0.01);
    lay.zero = 1;
    m = eval();
    near("ds zero1", states(&m) / m.params * P / GIB, 15.93, 0.01);
    lay.zero = 2;
    lay.offload = TP_OFFLOAD_OPTIMIZER;
    m = eval();
    near("ds zero2 offload", states(&m) / m.params * P / GIB, 5.31, 0.01);
    lay.offload = TP_OFFLOAD_NONE;
    lay.zero = 3;
    m = eval();
    near("ds zero3 states", states(&m) / m.params, 18.0 / 8, 1e-9);
    /* gather: 16-bit weights + gradients of the largest unit: the 525M-parameter head here
       (2 * 218M-parameter blocks is smaller) */
    near("ds zero3 gather", m.gather_bytes, 4.0 * 128256 * 4096, 1);
}

static double layer_act(uint32_t tp, bool sp, enum tp_recompute rc)
{
    setup_run("gpt3-175b", "a100-80gb", tp);
    job.seq = 2048;
    job.dropout = true;
    job.attn_impl = TP_ATTN_EAGER;
    lay.tp = tp;
    lay.sp = sp;
    lay.recompute = rc;
    struct tp_memory m = eval();
    return m.activations_bytes;
}

static void test_korthikanti(void **state)
{
    (void)state;
    /* [KOR22] Table 2 for GPT-3 175B (s 2048, H 12288, a 96, b 1), per layer:
       no parallelism s b H (34 + 5 a s / H) = 2.87 GB; TP 8: 0.539 GiB; TP 8 + SP: 0.334 GiB;
       + selective recompute: 0.0996 GiB; full recompute: 2 s b H / t = 0.0059 GiB. */
    near("no parallelism", layer_act(1, false, TP_RECOMPUTE_NONE) / 96, 2.87e9, 0.005e9);
    near("tp8", layer_act(8, false, TP_RECOMPUTE_NONE) / 96 / GIB, 0.539, 0.0005);
    near("tp8 sp", layer_act(8, true, TP_RECOMPUTE_NONE) / 96 / GIB, 0.334, 0.0005);
    near("tp8 sp selective", layer_act(8, true, TP_RECOMPUTE_SELECTIVE) / 96 / GIB, 0.0996,
         0.00005);
    /* full: 96 block inputs plus one block rebuilt during its backward */
    double full = layer_act(8, true, TP_RECOMPUTE_FULL);
    near("tp8 sp full", (full - 0.334 * GIB) / 96 / GIB, 0.0059, 0.0001);
    /* TP without SP, exact closed form: s b H (10 + 24/t + 5 a s / (H t)) */
    double s = 2048, H = 12288, a = 96, t = 8;
    near("tp8 closed form", layer_act(8, false, TP_RECOMPUTE_NONE) / 96,
         s * H * (10 + 24 / t + 5 * a * s / (H * t)), 1);
}

static void test_modern_decoder_worked_total(void **state)
{
    (void)state;
    /* docs/physics.md §3.7-3.8: Llama-3.1-8B, 8 x H100 80 GB, FSDP FULL_SHARD, s 8192,
       b 1, no recompute: A_tok = 139,392 B/token/layer -> 36.5 GB; logits 2.10 + 4.20 GB;
       states 16.06 GB; overhead 1.0 + 0.5 + 8% of (states + activations); total ~ 66 GB.
       With full recompute ~ 31 GB.  The 8% applies to the logits too (fragmentation is "5-15% of
       peak allocated", §3.8's table; the logits are allocated like any activation): 6.21 GB,
       total 67.2 GB (the gather, 1.75 GB, and the NCCL share make the rest). */
    setup_run("llama-3.1-8b", "h100-sxm", 8);
    job.framework = TP_FW_FSDP;
    job.seq = 8192;
    lay.zero = 3;
    /* ... with the Hugging Face / plain PyTorch MLP written op by op, act_fn(gate) * up keeps the
       activation's output too: + 2 I = 28,672 B (docs/memory.md), 168,064 B per token per layer,
       44.06 GB; a fused SwiGLU (Liger, Megatron-Core's bias_swiglu) keeps the 139,392 B */
    struct tp_memory m = eval();
    const double eager = 139392.0 + 2 * 14336;
    near("activations", m.activations_bytes, eager * 8192 * 32, 1);
    near("logits", m.logits_bytes, 6.30e9, 0.01e9);
    near("states", states(&m), 16.06e9, 0.01e9);
    near("overhead", m.overhead_bytes, 1.5e9 + 0.08 * (16.06e9 + 44.06e9 + 6.30e9), 0.01e9);
    near("total", m.total_bytes, 75.3e9, 1.0e9);
    assert_true(m.fits);
    job.fused_loss = true; /* Liger: its SwiGLU too */
    near("fused SwiGLU activations", eval().activations_bytes, 139392.0 * 8192 * 32, 1);
    job.fused_loss = false;
    job.loss_impl = TP_LOSS_CHUNKED; /* TRL's chunked_nll replaces the loss, not the MLP */
    job.fused_loss = true;
    near("chunked_nll activations", eval().activations_bytes, eager * 8192 * 32, 1);
    job.fused_loss = false;
    job.loss_impl = TP_LOSS_DEFAULT;
    job.framework = TP_FW_MEGATRON; /* bias_swiglu_impl keeps its input only */
    lay.zero = 1;
    near("Megatron-Core activations", eval().activations_bytes, 139392.0 * 8192 * 32, 1);
    job.framework = TP_FW_FSDP;
    lay.zero = 3;
    lay.recompute = TP_RECOMPUTE_FULL;
    m = eval();
    near("full recompute activations", m.activations_bytes, 2.0 * 4096 * 8192 * 32 + eager * 8192,
         1);
    near("full recompute total", m.total_bytes, 31e9, 1.0e9);
}

static void test_qlora_lora(void **state)
{
    (void)state;
    /* docs/physics.md §3.6: Llama-3.1-8B QLoRA: 6,979,321,856 linear params x 0.5159 B
       (NF4 + double-quantized absmax: 0.5 + 1/64 + 4/(64*256)) = 3.60 GB, plus embedding and
       head in bf16 2.10 GB -> 5.70 GB base; r = 16 on all 7 projections: 41,943,040 adapter
       params at 16 B = 0.67 GB. */
    setup_run("llama-3.1-8b", "h100-sxm", 1);
    job.task = TP_TASK_QLORA;
    struct tp_memory m = eval();
    double nf4 = 6979321856.0 * (0.5 + 1.0 / 64 + 4.0 / (64 * 256));
    double bf16 = 2.0 * (2.0 * 525336576 + 266240); /* embedding, head, norms */
    near("qlora states", states(&m), nf4 + bf16 + 16.0 * 41943040, 1);
    near("qlora base GB", nf4 + bf16, 5.70e9, 0.01e9);
    job.task = TP_TASK_LORA;
    m = eval();
    near("lora states", states(&m), 2.0 * 8030261248 + 16.0 * 41943040, 1);
    job.lora_targets = TP_LORA_Q | TP_LORA_V;
    m = eval();
    near("lora q,v", states(&m), 2.0 * 8030261248 + 16.0 * 32 * 16 * (8192 + 5120), 1);
}

static void test_moe_megatron(void **state)
{
    (void)state;
    /* docs/physics.md §3.3: Qwen3-30B-A3B, Megatron bf16 + fp32 grads, distributed
       optimizer: world 8, EP 8: 1.541*(6 + 1.5) + 3.624*(6 + 12) = 76.8 GB;
       world 32, EP 8 (EDP 4): 1.541*6.375 + 3.624*9 = 42.4 GB */
    setup_run("qwen3-30b-a3b", "h100-sxm", 8);
    job.framework = TP_FW_MEGATRON;
    lay.zero = 1;
    lay.ep = 8;
    struct tp_memory m = eval();
    near("world 8", states(&m), 76.8e9, 0.05e9);
    cluster.n_gpus = 32;
    m = eval();
    near("world 32", states(&m), 42.4e9, 0.05e9);
}

/* Megatron-Core's routed copies (TEGroupedMLP, megatron/core/transformer/moe/experts.py at
   6a6cd478, the Megatron-LM that Pai-Megatron-Patch 2b201af runs): per copy the grouped fc1's
   input (2H), the fc1 output the weighted SwiGLU keeps (2 x 2I), its output fc2 keeps (2I) and
   the fp32 routing weight (4): Qwen3-30B-A3B, 2 x 2048 + 6 x 768 + 4 = 8,708 B, top-8.
   Pai-Megatron-Patch issue #643's layout (16 H800, PP 2, EP 8, micro-batch 1, 8,192 tokens):
   stage 0 holds 24 blocks of 2 micro-batches.  Dropless at a given skew of 1.2
   (--moe-imbalance; the derived one is tests/test_moe_skew.c's), the busiest rank holds 1.2x;
   a capacity factor caps it (topk_softmax_with_capacity keeps ceil(cf T k / E) of each
   rank's tokens per expert), so cf 1.0 holds 1.0x and cf 2.0 the skew; padded to capacity,
   every expert holds cf x the mean. */
static void test_moe_capacity_load(void **state)
{
    (void)state;
    setup_run("qwen3-30b-a3b", "h800", 16);
    job.framework = TP_FW_MEGATRON;
    job.seq = 8192;
    lay.pp = 2;
    lay.ep = 8;
    lay.dp = 8;
    lay.zero = 1;
    lay.mbs = 1;
    lay.gas = 16;
    job.moe_imbalance = 1.2;
    double copy = 2.0 * 2048 + 6.0 * 768 + 4, per_load = 8 * copy * 8192.0 * 24 * 2;
    struct tp_memory dropless = eval();
    assert_int_equal(dropless.stage, 0);
    near("in flight", dropless.in_flight, 2, 0);
    job.moe_capacity = 1.0;
    struct tp_memory cf1 = eval();
    near("cf 1.0 holds the mean", dropless.activations_bytes - cf1.activations_bytes,
         0.2 * per_load, 1);
    job.moe_capacity = 2.0;
    struct tp_memory cf2 = eval();
    near("cf 2.0 above the skew drops nothing", cf2.activations_bytes,
         dropless.activations_bytes, 1);
    job.moe_pad_capacity = true;
    struct tp_memory padded = eval();
    near("padded to cf 2.0", padded.activations_bytes - dropless.activations_bytes,
         0.8 * per_load, 1);
}

static void test_lora_megatron(void **state)
{
    (void)state;
    /* ms-swift examples/train/flash_attention_3/mcore.sh (Megatron-SWIFT): Qwen3-30B-A3B LoRA,
       rank 32, all-linear, EP 4 on 4 GPUs, the distributed optimizer.  Qwen3-30B-A3B
       config.json: 48 blocks, hidden 2048, 32 x 128 query and 4 x 128 key/value heads, 128
       experts of width 768: 1,541,093,376 dense and 28,991,029,248 expert parameters.
       The frozen base: 2 B per parameter, the experts split over EP 4.
       The adapters: Megatron-Core's fused linear_qkv and linear_fc1 take one lora_A each
       (swift/megatron/tuners/lora.py update_layer), so per block r (2048 + 4096 + 2 x 512) on
       linear_qkv, r (4096 + 2048) on linear_proj and, per expert, r (2048 + 2 x 768) on fc1
       and r (768 + 2048) on fc2.  Float16Module casts them to bf16 (megatron/core/transformer/
       module.py) and they train as Megatron trains its weights: 2 + 4 (fp32 main gradient)
       + 12 (fp32 master, Adam m and v) B, the 12 sharded over the data-parallel group (4) for
       the dense adapters and over the expert-data-parallel group (4 / EP 4 = 1) for the
       experts' (distributed_data_parallel.py expert_parallel_buffers). */
    setup_run("qwen3-30b-a3b", "h100-sxm", 4);
    job.framework = TP_FW_MEGATRON;
    job.task = TP_TASK_LORA;
    job.lora_rank = 32;
    lay.zero = 1;
    lay.ep = 4;
    struct tp_memory m = eval();
    double base = 2.0 * (1541093376.0 + 28991029248.0 / 4);
    double dense = 48.0 * 32 * ((2048 + 4096 + 2 * 512) + (4096 + 2048));
    double expert = 48.0 * 128 * 32 * ((2048 + 2 * 768) + (768 + 2048)) / 4;
    near("megatron lora dense adapters", dense, 20447232, 0);
    near("megatron lora expert adapters", expert, 314572800, 0);
    near("megatron lora states", states(&m), base + (2 + 4 + 12.0 / 4) * dense + 18 * expert,
         1);
    /* the same run on the Hugging Face conventions keeps PEFT's separate projections and
       fp32 adapters, 16 B sharded over all 4 ranks as ZeRO-1 shards them */
    job.framework = TP_FW_FSDP;
    m = eval();
    double hf = 48.0 * 32 * ((2048 + 4096) + 2 * (2048 + 512) + (4096 + 2048)) +
                48.0 * 128 * 32 * 3 * (2048 + 768) / 4;
    near("hf lora states", states(&m), base + (4 + 4 + 8.0 / 4) * hf, 1);
}

static void test_pipeline_and_dpo(void **state)
{
    (void)state;
    setup_run("llama-3.1-70b", "h100-sxm", 64);
    lay.pp = 8;
    lay.tp = 8;
    lay.sp = true;
    lay.gas = 32;
    struct tp_error err = {{0}, {0}};
    struct tp_layout l = lay;
    assert_int_equal(tp_layout_check(&model, &cluster, &job, &l, &err), TP_OK);
    struct tp_memory first, last;
    tp_memory_stage(&model, &cluster, &job, &l, 0, &first);
    tp_memory_stage(&model, &cluster, &job, &l, 7, &last);
    /* [KOR22]: stage i of 1F1B holds min(p - i, m) micro-batches */
    near("stage 0 in flight", first.in_flight, 8, 0);
    near("stage 7 in flight", last.in_flight, 1, 0);
    assert_true(last.logits_bytes > 0 && first.logits_bytes == 0);
    assert_int_equal(first.n_layers, 10);
    /* [MEG-M]: interleaving multiplies by 1 + (p-1)/(p v): p 8, v 2 -> 1.4375 */
    lay.vpp = 2;
    l = lay;
    assert_int_equal(tp_layout_check(&model, &cluster, &job, &l, &err), TP_OK);
    tp_memory_stage(&model, &cluster, &job, &l, 0, &first);
    near("interleaved", first.in_flight, 8 * 1.4375, 1e-12);
    /* DPO: chosen + rejected doubles the activations and a frozen reference adds weights */
    setup_run("llama-3.1-8b", "h100-sxm", 8);
    struct tp_memory sft = eval();
    job.task = TP_TASK_DPO;
    struct tp_memory dpo = eval();
    near("dpo activations", dpo.activations_bytes, 2 * sft.activations_bytes, 1);
    near("dpo reference", dpo.weights_bytes - sft.weights_bytes, sft.weights_bytes, 1);
}

static void expect_error(const char *needle)
{
    struct tp_error err = {{0}, {0}};
    struct tp_layout l = lay;
    if (tp_layout_check(&model, &cluster, &job, &l, &err) != TP_EINVAL)
        fail_msg("expected an error containing \"%s\"", needle);
    if (!strstr(err.msg, needle))
        fail_msg("message \"%s\" lacks \"%s\"", err.msg, needle);
}

static void test_layout_errors(void **state)
{
    (void)state;
    setup_run("llama-3.1-8b", "h100-sxm", 8);
    lay.tp = 3;
    cluster.n_gpus = 9;
    expect_error("tp 3 must divide num_attention_heads=32 (try 1, 2, 4, 8, 16, 32)");
    /* the error names its field, for the CLI's --tp and a binding's tp= */
    struct tp_error field_err = {{0}, {0}};
    struct tp_layout bad = lay;
    assert_int_equal(tp_layout_check(&model, &cluster, &job, &bad, &field_err), TP_EINVAL);
    assert_string_equal(field_err.field, "tp");
    lay.tp = 2;
    lay.dp = 3;
    cluster.n_gpus = 8;
    expect_error("tp*pp*cp*dp = 2*1*1*3 = 6 but gpus=8");
    lay.dp = 0;
    lay.pp = 3;
    expect_error("does not divide gpus=8");
    lay.pp = 1;
    lay.ep = 2;
    expect_error("needs an MoE model");
    setup_run("mixtral-8x7b", "h100-sxm", 8);
    lay.ep = 3;
    expect_error("ep 3 must divide num_experts=8");
    lay.ep = 8;
    lay.zero = 3;
    expect_error("DeepSpeed's MoE layer does not run under ZeRO-3");
    lay.zero = 0;
    lay.offload = TP_OFFLOAD_PARAMS;
    expect_error("offload params needs zero=3");

    /* uneven pipeline splits (32 blocks) */
    setup_run("llama-3.1-8b", "h100-sxm", 8);
    lay.pp = 4;
    lay.pp_first = 6;
    lay.pp_last = 7;
    expect_error("the 19 blocks left by pp_first=6 and pp_last=7 do not split evenly over "
                 "the other 2 stages");
    lay.pp_first = 7;
    lay.vpp = 2; /* Megatron-Core splits each rank's blocks equally over its chunks */
    expect_error("pipeline rank 0 holds 7 blocks, which do not split into vpp=2 equal chunks");
    lay.vpp = 1;
    lay.recompute = TP_RECOMPUTE_FULL;
    lay.recompute_layers = 10; /* 7 + 9 + 9 + 7 */
    expect_error("recompute_layers 10 exceeds the 9 blocks of the largest stage");
    lay.recompute_layers = 9;
    struct tp_error err = {{0}, {0}};
    struct tp_layout l = lay;
    assert_int_equal(tp_layout_check(&model, &cluster, &job, &l, &err), TP_OK);
    lay.pp = 2;
    lay.pp_first = 15;
    lay.pp_last = 15;
    lay.recompute_layers = 0;
    expect_error("pp_first=15 and pp_last=15 must add up to num_hidden_layers=32");
    lay.pp_last = 0; /* 15 + 17 */
    l = lay;
    assert_int_equal(tp_layout_check(&model, &cluster, &job, &l, &err), TP_OK);
    assert_int_equal(tp_stage_blocks(&model, &l, 1), 17);
    lay.pp = 1;
    expect_error("pp_first/pp_last need pipeline parallelism");
}

/* Uneven pipeline split, known answer: Llama 3.1 70B (80 blocks), tp 8 + SP, pp 4, mbs 1,
   seq 4096, no recompute.  One block stores, per token, 8H (norm inputs, normed inputs of QKV
   and MLP) + 2(q + k + v + o) + 4 n_q (LSE) + 6 I (SwiGLU) bytes = 65,536 + 36,864 + 256 +
   172,032 = 274,688 B, split 8 ways by TP + SP: 34,336 B.  Stage 0 of 1F1B holds 4 micro-batches
   in flight, stage 1 holds 3.  Even: 20 blocks per stage; --pp-first 19 --pp-last 19 (the
   embedding and the head counted as a layer each): 19 + 21 + 21 + 19. */
static void test_uneven_split(void **state)
{
    (void)state;
    setup_run("llama-3.1-70b", "h100-sxm", 32);
    job.seq = 4096;
    lay.tp = 8;
    lay.sp = true;
    lay.pp = 4;
    lay.gas = 8;
    struct tp_error err = {{0}, {0}};
    struct tp_layout even = lay, split = lay;
    split.pp_first = split.pp_last = 19;
    assert_int_equal(tp_layout_check(&model, &cluster, &job, &even, &err), TP_OK);
    assert_int_equal(tp_layout_check(&model, &cluster, &job, &split, &err), TP_OK);
    /* bytes per micro-batch: the modern decoder's 274,688 B per token, and the eager MLP's
       activation output (2 x 28,672, docs/memory.md), split by tp 8 under SP */
    const double per_block = (274688.0 + 2 * 28672) / 8 * 4096;
    struct tp_memory e0, s0, s1, s3;
    tp_memory_stage(&model, &cluster, &job, &even, 0, &e0);
    tp_memory_stage(&model, &cluster, &job, &split, 0, &s0);
    tp_memory_stage(&model, &cluster, &job, &split, 1, &s1);
    tp_memory_stage(&model, &cluster, &job, &split, 3, &s3);
    near("even stage 0 activations", e0.activations_bytes, 20 * 4 * per_block, 1);
    near("uneven stage 0 activations", s0.activations_bytes, 19 * 4 * per_block, 1);
    near("uneven stage 1 activations", s1.activations_bytes, 21 * 3 * per_block, 1);
    near("uneven stage 3 activations", s3.activations_bytes, 19 * 1 * per_block, 1);
    assert_int_equal(s0.first_layer, 0);
    assert_int_equal(s0.n_layers, 19);
    assert_int_equal(s1.first_layer, 19);
    assert_int_equal(s1.n_layers, 21);
    assert_int_equal(s3.first_layer, 61);
    assert_int_equal(s3.n_layers, 19);
    /* one block fewer on stage 0: its weights shrink by exactly one block's TP shard */
    double block = 0;
    struct tp_tensor t[TP_MAX_BLOCK_TENSORS];
    size_t n = tp_block_tensors(&model, 0, t);
    for (size_t i = 0; i < n; i++)
        block += (double)t[i].rows * t[i].cols * t[i].count / (t[i].replicated ? 1 : 8);
    near("stage 0 parameters", e0.params - s0.params, block, 1e-3);
    /* the worst stage is now a middle one */
    struct tp_memory w;
    tp_memory_worst(&model, &cluster, &job, &split, &w);
    assert_true(w.stage == 0 || w.stage == 1);
    assert_true(w.total_bytes >= s1.total_bytes && w.total_bytes >= s0.total_bytes);
}

static uint64_t rng = 88172645463325252ull;
static uint32_t pick(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

/* Property tests over random layouts of several models. */
static void test_properties(void **state)
{
    (void)state;
    static const char *const models[] = {"llama-3.1-8b", "qwen3-30b-a3b", "gpt3-175b",
                                         "mixtral-8x7b", "deepseek-v3", "llama-3.1-70b"};
    static const uint32_t pow2[] = {1, 2, 4, 8};
    int checked = 0;
    for (int it = 0; it < 3000; it++) {
        setup_run(models[pick(6)], "h100-sxm", 64 << pick(3));
        job.framework = (enum tp_framework)pick(3);
        job.optimizer = (enum tp_optimizer)pick(6);
        job.task = (enum tp_task)pick(5);
        job.seq = 1024u << pick(4);
        lay.tp = pow2[pick(4)];
        lay.pp = pow2[pick(3)];
        lay.mbs = 1 + pick(4);
        lay.gas = 1 + pick(8);
        lay.ep = model.n_experts ? pow2[pick(4)] : 1;
        lay.zero = pick(3); /* raised below */
        struct tp_error err;
        struct tp_layout l = lay;
        if (tp_layout_check(&model, &cluster, &job, &l, &err) != TP_OK)
            continue;
        struct tp_memory prev, cur;
        tp_memory_worst(&model, &cluster, &job, &l, &prev);
        assert_true(isfinite(prev.total_bytes) && prev.total_bytes > 0);
        /* more sharding never raises model-state bytes, stage by stage (the worst stage can
           change with the stage: DeepSeek-V3's uneven stages under pp 4) */
        for (uint32_t s = 0; s < l.pp; s++) {
            tp_memory_stage(&model, &cluster, &job, &l, s, &prev);
            for (uint32_t z = l.zero + 1; z <= 3; z++) {
                struct tp_layout lz = l;
                lz.zero = z;
                if (tp_layout_check(&model, &cluster, &job, &lz, &err) != TP_OK)
                    break;
                tp_memory_stage(&model, &cluster, &job, &lz, s, &cur);
                if (states(&cur) > states(&prev) * (1 + 1e-12))
                    fail_msg("%s stage %u zero %u -> %u raised states %.4g -> %.4g (framework "
                             "%d, task %d, dp %u tp %u pp %u ep %u etp %u)", model.name, s,
                             z - 1, z, states(&prev), states(&cur), (int)job.framework,
                             (int)job.task, lz.dp, lz.tp, lz.pp, lz.ep, lz.etp);
                prev = cur;
            }
        }
        /* more DP never raises per-GPU weights under ZeRO-3 */
        struct tp_layout l3 = l;
        l3.zero = 3;
        l3.dp = 0;
        if (tp_layout_check(&model, &cluster, &job, &l3, &err) == TP_OK) {
            tp_memory_worst(&model, &cluster, &job, &l3, &prev);
            struct tp_cluster big = cluster;
            big.n_gpus *= 2;
            struct tp_layout l4 = l3;
            l4.dp = 0;
            if (tp_layout_check(&model, &big, &job, &l4, &err) == TP_OK) {
                tp_memory_worst(&model, &big, &job, &l4, &cur);
                assert_true(cur.weights_bytes <= prev.weights_bytes * (1 + 1e-12));
            }
        }
        /* recompute never raises activation bytes */
        double act[3];
        for (int rc = 0; rc < 3; rc++) {
            struct tp_layout lr = l;
            lr.recompute = (enum tp_recompute)rc;
            tp_memory_stage(&model, &cluster, &job, &lr, 0, &cur);
            act[rc] = cur.activations_bytes;
            assert_true(isfinite(cur.total_bytes) && cur.total_bytes > 0);
        }
        assert_true(act[1] <= act[0] * (1 + 1e-12));
        assert_true(act[2] <= act[0] * (1 + 1e-12));
        checked++;
    }
    assert_true(checked > 500);
}

static void test_suggestions(void **state)
{
    (void)state;
    /* Llama 3.3 70B SFT on 8 x MI300X with plain DDP does not fit; every suggested change must
       fit when evaluated on its own. */
    setup_run("llama-3.3-70b", "mi300x", 8);
    job.task = TP_TASK_SFT;
    job.seq = 8192;
    lay.mbs = 4;
    lay.gas = 4;
    struct tp_memory m = eval();
    assert_false(m.fits);
    struct tp_fix fixes[6];
    size_t n = tp_memory_suggest(&model, &cluster, &job, &lay, fixes, 6);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        struct tp_layout l = fixes[i].layout;
        struct tp_error err;
        assert_int_equal(tp_layout_check(&model, &cluster, &fixes[i].job, &l, &err), TP_OK);
        struct tp_memory f;
        tp_memory_worst(&model, &cluster, &fixes[i].job, &l, &f);
        assert_true(f.fits);
        near("fix total", f.total_bytes, fixes[i].total_bytes, 1);
    }
}

/* FP8 parameter storage (Megatron-Core --fp8-param-gather) on Llama 3 70B (Llama 3 paper
   Table 3: hidden 8192, 80 layers, 64 query / 8 KV heads of 128, SwiGLU FFN 28672, vocab
   128256, untied).  GEMM weights per layer: q and o 8192^2 = 67,108,864 each, k and v
   8192 x 1024 = 8,388,608 each, gate, up and down 8192 x 28672 = 234,881,024 each: 855,638,016,
   68,451,041,280 over 80 layers; the embedding and the head 2 x 128256 x 8192 = 2,101,346,304
   and the norms 161 x 8192 = 1,318,912 stay 16-bit (70,553,706,496 in all).  At TP 8 a GPU
   holds (70,553,706,496 - 1,318,912) / 8 + 1,318,912 = 8,820,367,360 parameters of which
   8,556,380,160 GEMM weights: FP8 saves 1 byte on each (8.0 GiB of 16.4), MXFP8 1 - 1/32 (its
   E8M0 scale per 32 elements).  Under ZeRO-3 the weights are sharded over DP 8, and the gathered
   unit (two blocks of 106,954,752 GEMM weights + 16,384 norm weights) carries its GEMM weights
   in 1 byte. */
static void setup_70b_tp8(const char *gpu, enum tp_precision p)
{
    setup_run("llama-3.1-70b", gpu, 64);
    job.framework = TP_FW_MEGATRON;
    job.precision = p;
    lay.tp = 8;
    lay.sp = true;
    lay.dp = 8;
    lay.zero = 1;
}

static void test_fp8_param_gather(void **state)
{
    (void)state;
    const double params = 8820367360.0, gemm = 8556380160.0;
    setup_70b_tp8("h100-sxm", TP_PREC_FP8);
    struct tp_memory off = eval();
    assert_true(off.params == params);
    near("bf16 weights", off.weights_bytes, 2 * params, 1);
    job.fp8_param_gather = true;
    struct tp_memory on = eval();
    near("fp8 weights", on.weights_bytes, 2 * params - gemm, 1);
    near("fp8 others", on.grads_bytes + on.optimizer_bytes, off.grads_bytes + off.optimizer_bytes,
         1);
    near("fp8 total", off.total_bytes - on.total_bytes, gemm * (1 + job.overhead_frag), 1);
    /* ZeRO-3 (Megatron-FSDP optim_grads_params) */
    lay.zero = 3;
    job.fp8_param_gather = false;
    off = eval();
    job.fp8_param_gather = true;
    on = eval();
    near("zero-3 weights", off.weights_bytes - on.weights_bytes, gemm / 8, 1);
    near("zero-3 gathered bf16", off.gather_bytes, 4 * 2 * (106954752.0 + 16384), 1);
    near("zero-3 gathered fp8", off.gather_bytes - on.gather_bytes, 2 * 106954752.0, 1);
    /* MXFP8 on Blackwell: 1 + 1/32 bytes per GEMM weight */
    setup_70b_tp8("b200", TP_PREC_MXFP8);
    job.fp8_param_gather = true;
    on = eval();
    near("mxfp8 weights", on.weights_bytes, 2 * params - gemm * (1 - 1.0 / 32), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_paper),         cmocka_unit_test(test_deepspeed_estimator),
        cmocka_unit_test(test_korthikanti),        cmocka_unit_test(test_modern_decoder_worked_total),
        cmocka_unit_test(test_qlora_lora),         cmocka_unit_test(test_moe_megatron),
        cmocka_unit_test(test_moe_capacity_load),
        cmocka_unit_test(test_lora_megatron),
        cmocka_unit_test(test_pipeline_and_dpo),   cmocka_unit_test(test_layout_errors),
        cmocka_unit_test(test_uneven_split),       cmocka_unit_test(test_fp8_param_gather),
        cmocka_unit_test(test_properties),         cmocka_unit_test(test_suggestions),
    };
    return cmocka_run_group_tests_name("memory", tests, NULL, NULL);
}
