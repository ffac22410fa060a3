/*
 * runs_recipes.c - what the stack of a runs-file row does where the row is silent: recipe
 * defaults with their sources (the loss kernel, 16-bit main gradients, recompute of chosen
 * modules), and the stack columns that state it outright.  Each default is recorded in the
 * row's assumptions.
 */
#include "runs_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The capacity factor a row's notes quote: Megatron-Core's flag as written on the command line
   ("--moe-expert-capacity-factor 2") or as its config field ("moe_expert_capacity_factor 1.0",
   "= 1.0"), else a benchmark table's "capacity=3" (xtuner's megatron_moe_benchmark.md); 0 when
   none is quoted or what follows is not a number ("moe_expert_capacity_factor None"). */
static double notes_capacity(const char *notes)
{
    static const char *const KEYS[] = {"--moe-expert-capacity-factor",
                                       "moe_expert_capacity_factor", "capacity="};
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++) {
        const char *at = strstr(notes, KEYS[i]);
        if (!at)
            continue;
        at += strlen(KEYS[i]);
        while (*at == ' ' || *at == '=' || *at == ':')
            at++;
        if (*at < '0' || *at > '9')
            continue;
        char *end;
        double cf = strtod(at, &end);
        if (end != at && cf > 0 && cf <= 64)
            return cf;
    }
    return 0;
}

/* What a row's recipe does that the row leaves unsaid: the loss kernel, 16-bit main gradients,
   forced-balance routing, the capacity factor its notes quote. */
void tp_row_recipe_job(const struct row *r, struct tp_job *j)
{
    const char *fw = tp_row_cell(r, "framework"), *notes = tp_row_cell(r, "notes");
    /* a loss that never holds the full fp32 logits: Liger's fused linear cross-entropy, TRL's
       chunked_nll, Apple's cut cross-entropy */
    if (strstr(fw, "Liger") || strstr(notes, "Liger") || strstr(notes, "chunked_nll") ||
        strstr(notes, "cut_cross_entropy"))
        j->fused_loss = true;
    if (strstr(notes, "chunked_nll")) /* whose chunks hold the head's weight in fp32 */
        j->loss_impl = TP_LOSS_CHUNKED;
    /* DeepEP (Megatron-Core's flex dispatcher, --moe-enable-deepep) named in a row's notes: the
       hierarchical dispatch (src/eval/moe_comm.c); a moe_dispatcher column decides instead */
    if (strstr(notes, "deepep") || strstr(notes, "DeepEP")) {
        j->moe_dispatcher = TP_MOE_DISPATCH_FLEX;
        tp_row_assume(r->run, "DeepEP dispatch (flex dispatcher), as the notes name it");
    }
    /* HybridEP: the recipe's own setting quoted in the notes (Megatron-Bridge
       scripts/performance configs: moe_flex_dispatcher_backend "hybridep" with
       moe_token_dispatcher_type flex), not a mention of it in passing */
    if (strstr(notes, "moe_flex_dispatcher_backend hybridep") ||
        strstr(notes, "moe_flex_dispatcher_backend \"hybridep\"")) {
        j->moe_dispatcher = TP_MOE_DISPATCH_HYBRIDEP;
        tp_row_assume(r->run, "HybridEP dispatch (flex dispatcher, moe_flex_dispatcher_backend "
                              "hybridep), as the recipe in the notes sets it");
    }
    /* Transformer Engine's cross-entropy (--cross-entropy-fusion-impl te) writes the gradient
       into its 16-bit input in the forward (transformer_engine/pytorch/cross_entropy.py) */
    if (strstr(notes, "cross-entropy-fusion-impl te"))
        j->loss_impl = TP_LOSS_16BIT;
    /* ... which Megatron-Bridge's performance recipes run (cross_entropy_fusion_impl "te" in the
       perf configs since 2025-08, _benchmark_common in perf_recipes/_common.py today) */
    if (strstr(tp_row_cell(r, "source"), "Megatron-Bridge") &&
        tp_row_release_year(tp_row_cell(r, "source_version_or_date")) >= 2025) {
        j->loss_impl = TP_LOSS_16BIT;
        tp_row_assume(r->run,
                      "Transformer Engine's cross-entropy (Megatron-Bridge performance recipes)");
    }
    /* llm-foundry's default loss_fn "fused_crossentropy" (ComposerMPTCausalLM,
       llmfoundry/models/mpt/modeling_mpt.py) is flash-attn's cross-entropy kernel */
    if (strcmp(tp_row_cell(r, "framework_key"), "llm-foundry") == 0) {
        j->loss_impl = TP_LOSS_16BIT;
        tp_row_assume(r->run, "flash-attn fused cross-entropy (llm-foundry's default loss_fn)");
    }
    /* NeMo 2 and Megatron-Bridge performance recipes keep and reduce the main gradients in
       16 bits (_perf_precision: grad_reduce_in_fp32 = False); so did the NeMo 1 launcher's
       H100 performance runs of 2024 (NeMo-Framework-Launcher examples/training/gpt/h100/
       20b_fp8_1node.sh, llama/h100/llama2_70b_bf16.sh: +training.model.optim.grad_sync_dtype=
       bf16) */
    if (strcmp(tp_row_cell(r, "framework_key"), "nemo") == 0 &&
        tp_row_release_year(tp_row_cell(r, "source_version_or_date")) >= 2024) {
        j->grad_16bit = true;
        tp_row_assume(r->run, "16-bit main gradients (grad_reduce_in_fp32 False)");
    }
    /* FP8 weights (fp8_param_gather): NeMo 2's bf16_with_fp8_mixed (nemo/collections/llm/
       recipes/precision/mixed_precision.py: fp8_params / fp8_param_gather = True) and
       Megatron-Bridge's delayed, tensorwise (current scaling) and MXFP8 recipes
       (src/megatron/bridge/training/mixed_precision.py), which its performance scripts run for
       fp8_cs and fp8_mx; its blockwise (subchannel, fp8_sc) recipe sets it False */
    const char *recipe = tp_row_cell(r, "fp8_recipe");
    if (strcmp(tp_row_cell(r, "framework_key"), "nemo") == 0 &&
        tp_row_release_year(tp_row_cell(r, "source_version_or_date")) >= 2025 &&
        (j->precision == TP_PREC_FP8 || j->precision == TP_PREC_MXFP8) &&
        !strstr(recipe, "block") && !strstr(recipe, "subchannel")) {
        j->fp8_param_gather = true;
        tp_row_assume(r->run, "FP8 weights (fp8_param_gather, the NeMo/Megatron-Bridge recipe)");
    }
    if (strstr(notes, "fp8-param-gather") || strstr(notes, "fp8_param_gather"))
        j->fp8_param_gather = true;
    /* the caching allocator's expandable segments, where the notes quote the run's
       PYTORCH_CUDA_ALLOC_CONF (memory only: mem_runtime.c, a quarter of the fragmentation) */
    if (strstr(notes, "expandable_segments") && !strstr(notes, "expandable_segments:False"))
        j->expandable_segments = true;
    /* torchtitan's Llama 3.1 405B config gathers FSDP's shards in FP8 when Float8 is on:
       train_configs/llama3_405b.toml sets enable_fsdp_float8_all_gather and
       precompute_float8_dynamic_scale_for_fsdp, at the commits of both published tables
       (4d88a8a44, docs/performance.md 2024-10; 9dec370, benchmarks 2024-12).  The 8B and 70B
       configs leave Float8 off, and the benchmark turned it on from the command line without
       saying more, so their rows keep 16-bit gathers */
    if (strcmp(tp_row_cell(r, "framework_key"), "torchtitan") == 0 &&
        j->precision == TP_PREC_FP8 && strcasecmp(recipe, "rowwise") != 0 &&
        strstr(tp_row_cell(r, "model"), "405B")) {
        j->fp8_param_gather = true;
        tp_row_assume(r->run, "FSDP all-gathers in FP8 (torchtitan's llama3_405b.toml: "
                              "enable_fsdp_float8_all_gather)");
    }
    /* the FP8 recipe's scaling: torchao's row-wise recipe has physics of its own; tensor-wise
       (delayed, current) is the default; a block-scaled FP8 recipe is priced as tensor-wise */
    if (j->precision == TP_PREC_FP8 && strcasecmp(recipe, "rowwise") == 0)
        j->fp8_recipe = TP_FP8_ROWWISE;
    else if (j->precision == TP_PREC_FP8 && (strstr(recipe, "block") || strstr(recipe, "subchannel")))
        tp_row_assume(r->run, "block-scaled FP8 priced as tensor-wise scaling");
    /* NeMo 1.x LoRA (the 2024 containers' fine-tuning tables) adapts the fused QKV projection
       alone, at adapter_dim 32: LoraPEFTConfig (nemo/collections/nlp/parts/peft_config.py)
       builds only the LORA_KQV_ADAPTER, target_modules ['attention_qkv'] by default
       (megatron_gpt_finetuning_config.yaml); NeMo 2 and Megatron-Bridge adapt the four
       linears */
    if (j->task == TP_TASK_LORA && strcmp(tp_row_cell(r, "framework_key"), "nemo") == 0 &&
        tp_row_release_year(tp_row_cell(r, "source_version_or_date")) == 2024) {
        j->lora_targets = TP_LORA_Q | TP_LORA_K | TP_LORA_V;
        j->lora_rank = 32;
        tp_row_assume(r->run, "LoRA on the QKV projection at rank 32 (NeMo 1.x LoRA)");
    }
    /* a framework cell that states the adapters' targets as the attention projections (the
       MLPerf llama2_70b_lora submissions' NeMo PEFT config, [FROZEN-LIN]
       megatron_gpt_peft_tuning_config.yaml: target_modules ['attention'], i.e. linear_qkv and
       linear_proj) */
    if ((j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA) &&
        strstr(tp_row_cell(r, "framework"), "on the attention projections")) {
        j->lora_targets = TP_LORA_Q | TP_LORA_K | TP_LORA_V | TP_LORA_O;
        tp_row_assume(r->run, "LoRA on the attention projections (the framework cell)");
    }
    /* NeMo's fine-tuning tables pack SQuAD into the sequence (the notes: "SQuAD packed to 4096
       tokens"), and its packed sequences keep each example to itself (TE's THD attention with
       cu_seqlens: the NeMo user guide's "Sequence Packing for SFT/PEFT").  A SQuAD v1.1
       example is about 1,000 bytes as TFDS stores it (94.06 MiB for 98,169 examples, the
       paragraph repeated with each question), about 250 Llama tokens; the attention's
       per-block cost makes the prediction nearly indifferent to it (150 to 400 tokens move
       these rows by under 2%) */
    if (strcmp(tp_row_cell(r, "framework_key"), "nemo") == 0 && strstr(notes, "SQuAD packed")) {
        j->doc_len = 250;
        tp_row_assume(r->run, "packed SQuAD examples of about 250 tokens, each attending to "
                              "itself");
    }
    /* Megatron-Bridge MoE benchmarks force-balance the routing (the source's footnote); a
       moe_routing column decides instead */
    if (strstr(notes, "force-balance"))
        j->moe_routing = TP_MOE_ROUTING_FORCED;
    /* token dropping as the notes quote it (Megatron-Core drops, per source rank, what lies
       above the factor times that rank's mean: moe_utils.py apply_router_token_dropping,
       src/eval/moe_skew.c tp_moe_load); a moe_capacity column decides instead */
    double cf = notes_capacity(notes);
    if (cf > 0) {
        j->moe_capacity = cf;
        tp_row_assume(r->run, "token drop at the capacity factor the notes quote");
    }
    /* Megatron-Bridge's token-drop runs (25.09: scripts/performance/run_script.py at cac49dcd7
       calls apply_moe_token_drop on Qwen3's recipes) take that function's defaults,
       moe_expert_capacity_factor 1.0 and moe_pad_expert_input_to_capacity True
       (src/megatron/bridge/training/utils/moe_token_drop.py): the padded path, whose
       dispatcher never waits on the host (src/eval/moe_host.c) */
    if (strstr(notes, "MoE token-drop run") && j->framework == TP_FW_MEGATRON) {
        j->moe_capacity = 1.0;
        j->moe_pad_capacity = true;
        tp_row_assume(r->run, "token drop at capacity factor 1, padded (Megatron-Bridge "
                              "apply_moe_token_drop defaults)");
    }
}

/* Megatron-Bridge performance recipes that recompute modules the summary table does not show:
   GPT-OSS 120B on B200, GB200 and H100 sets recompute_modules ["layernorm", "moe_act"]
   (scripts/performance/configs/gpt_oss/gpt_oss_workload_base_configs.py, *_BF16_V1/V2; the
   B200 and H100 FP8 variants alias them; GB200's MXFP8 V2 clears the list). */
bool tp_row_recipe_recompute(const struct row *r, struct tp_layout *l)
{
    const char *gpu = tp_row_cell(r, "gpu_type"), *prec = tp_row_cell(r, "precision");
    bool listed = strcmp(gpu, "b200") == 0 || strcmp(gpu, "h100-sxm") == 0 ||
                  (strcmp(gpu, "gb200") == 0 && strcmp(prec, "bf16") == 0);
    if (strcmp(tp_row_cell(r, "framework_key"), "nemo") != 0 ||
        strcmp(tp_row_cell(r, "arch"), "gpt_oss") != 0 ||
        !strstr(tp_row_cell(r, "source"), "Megatron-Bridge") || !listed)
        return false;
    l->recompute = TP_RECOMPUTE_SELECTIVE;
    l->recompute_modules = TP_RC_LAYERNORM | TP_RC_MOE_ACT;
    return true;
}

/* A boolean column's cell: "1" or "true" (any case); tp_row_stack_columns has refused
   anything but those and "0" / "false". */
static bool cell_true(const char *cell)
{
    return strcmp(cell, "1") == 0 || strcasecmp(cell, "true") == 0;
}

bool tp_row_a2a_overlap(const struct row *r, bool *assumed)
{
    const char *col = tp_row_cell(r, "moe_a2a_overlap"), *notes = tp_row_cell(r, "notes");
    *assumed = false;
    if (*col)
        return cell_true(col);
    /* the off spellings first: Megatron's flag and the Megatron-Bridge preset field as the
       notes quote them ("moe_a2a_overlap=False", "moe_a2a_overlap False") */
    if (strstr(notes, "no-overlap-moe-expert-parallel-comm") ||
        strstr(notes, "moe_a2a_overlap=False") || strstr(notes, "moe_a2a_overlap False"))
        return false;
    if (strstr(notes, "overlap-moe-expert-parallel-comm") ||
        strstr(notes, "overlap_moe_expert_parallel_comm") || strstr(notes, "moe_a2a_overlap"))
        return true;
    /* Megatron-Bridge's Qwen3-30B-A3B MXFP8 recipes for GB200, GB300 and B300 from 26.06 on
       set moe_a2a_overlap (overlap_moe_expert_parallel_comm, delay_wgrad_compute): commit
       bac3ffeb, "Enable Qwen3 GB200/GB300/GB300 MXFP8 CuTeDSL Fusion and Full-Iter CUDA Graphs
       for 26.06" (PR #4249, 2026-06-10), scripts/performance/configs/qwen/
       qwen3_workload_base_configs.py at v0.5.0 (the 26.06 container's Megatron-Bridge):
       QWEN3_30B_A3B_PRETRAIN_CONFIG_{GB300,GB200,B300}_FP8_MX_V1 all set moe_a2a_overlap=True
       (the title names GB300 twice; the B300 preset is in the same diff) */
    *assumed = tp_row_bridge_qwen3_mxfp8(r, true);
    return *assumed;
}

bool tp_row_bridge_qwen3_mxfp8(const struct row *r, bool b300)
{
    const char *gpu = tp_row_cell(r, "gpu_type");
    return strcmp(tp_row_cell(r, "framework_key"), "nemo") == 0 &&
           strstr(tp_row_cell(r, "source"), "Megatron-Bridge") &&
           strcmp(tp_row_cell(r, "arch"), "qwen3_moe") == 0 &&
           strcmp(tp_row_cell(r, "precision"), "mxfp8") == 0 &&
           (strcmp(gpu, "gb200") == 0 || strcmp(gpu, "gb300") == 0 ||
            (b300 && strcmp(gpu, "b300") == 0)) &&
           tp_row_release_month(tp_row_cell(r, "source_version_or_date")) >= 202606;
}

/* The stack columns (optimizer, fused_loss, moe_impl, attention): a cell that is given decides;
   an empty one keeps what the free-text hints and defaults gave. */
enum tp_status tp_row_stack_columns(const struct row *r, struct tp_job *j)
{
    static const struct {
        const char *name;
        int value;
    } OPTS[] = {{"adamw", TP_OPT_ADAMW},           {"adam", TP_OPT_ADAMW},
                {"adamw-8bit", TP_OPT_ADAMW_8BIT}, {"adamw_8bit", TP_OPT_ADAMW_8BIT},
                {"adamw_bnb_8bit", TP_OPT_ADAMW_8BIT}, {"paged_adamw_8bit", TP_OPT_ADAMW_8BIT},
                {"adamw-4bit", TP_OPT_ADAMW_4BIT}, {"adamw_4bit", TP_OPT_ADAMW_4BIT},
                {"adafactor", TP_OPT_ADAFACTOR},   {"sgd", TP_OPT_SGD},
                {"adamw-bf16", TP_OPT_ADAMW_BF16}},
      MOE[] = {{"eager", TP_MOE_EAGER},         {"hf", TP_MOE_EAGER},
               {"grouped", TP_MOE_GROUPED},     {"megablocks", TP_MOE_GROUPED},
               {"deepspeed", TP_MOE_DEEPSPEED}, {"tutel", TP_MOE_DEEPSPEED},
               {"dense", TP_MOE_DENSE}},
      ATTN[] = {{"flash", TP_ATTN_FLASH},  {"flash1", TP_ATTN_FLASH1}, {"fa1", TP_ATTN_FLASH1},
                {"flash2", TP_ATTN_FLASH2}, {"fa2", TP_ATTN_FLASH2},
                {"flash3", TP_ATTN_FLASH3}, {"fa3", TP_ATTN_FLASH3},  {"cudnn", TP_ATTN_FLASH3},
                {"cudnn9.19", TP_ATTN_CUDNN919},
                {"eager", TP_ATTN_EAGER},  {"fused-softmax", TP_ATTN_EAGER},
                {"math", TP_ATTN_EAGER},   {"flex", TP_ATTN_FLEX}, {"flex_attention", TP_ATTN_FLEX}},
      DISPATCH[] = {{"alltoall", TP_MOE_DISPATCH_ALLTOALL}, {"allgather", TP_MOE_DISPATCH_ALLGATHER},
                    {"flex", TP_MOE_DISPATCH_FLEX}, {"deepep", TP_MOE_DISPATCH_FLEX},
                    {"hybridep", TP_MOE_DISPATCH_HYBRIDEP}},
      ROUTING[] = {{"corpus", TP_MOE_ROUTING_CORPUS}, {"dataset", TP_MOE_ROUTING_DATASET},
                   {"forced", TP_MOE_ROUTING_FORCED}, {"force-balanced", TP_MOE_ROUTING_FORCED}};
    const struct {
        const char *col;
        const void *table;
        size_t n;
        int *dst;
    } cols[] = {{"optimizer", OPTS, sizeof OPTS / sizeof OPTS[0], (int *)&j->optimizer},
                {"moe_impl", MOE, sizeof MOE / sizeof MOE[0], (int *)&j->moe_impl},
                {"attention", ATTN, sizeof ATTN / sizeof ATTN[0], (int *)&j->attn_impl},
                {"moe_dispatcher", DISPATCH, sizeof DISPATCH / sizeof DISPATCH[0],
                 (int *)&j->moe_dispatcher},
                {"moe_routing", ROUTING, sizeof ROUTING / sizeof ROUTING[0],
                 (int *)&j->moe_routing}};
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
        const char *v = tp_row_cell(r, cols[c].col);
        if (!*v)
            continue;
        const struct {
            const char *name;
            int value;
        } *t = cols[c].table;
        size_t i = 0;
        while (i < cols[c].n && strcasecmp(t[i].name, v) != 0)
            i++;
        if (i == cols[c].n)
            return tp_fail(r->err, TP_EINVAL, "%s \"%s\" is not a known value", cols[c].col, v);
        *cols[c].dst = t[i].value;
    }
    TRY(tp_row_u32(r, "lora_rank", false, j->lora_rank, &j->lora_rank));
    TRY(tp_row_u32(r, "doc_len", false, j->doc_len, &j->doc_len));
    static const char *const LOSSES[] = {"default", "16bit", "hf", "hf-fp32-logits", "upcast",
                                         "chunked"};
    const char *loss = tp_row_cell(r, "loss");
    for (size_t i = 0; *loss && i <= sizeof LOSSES / sizeof LOSSES[0]; i++) {
        if (i == sizeof LOSSES / sizeof LOSSES[0])
            return tp_fail(r->err, TP_EINVAL, "loss \"%s\" is not a known value", loss);
        if (strcasecmp(loss, LOSSES[i]) == 0) {
            j->loss_impl = (enum tp_loss_impl)i;
            break;
        }
    }
    TRY(tp_row_bool(r, "kbit_fp32", false, &j->kbit_fp32));
    /* dropout kept in training (Megatron's --attention-dropout / --hidden-dropout default 0.1) */
    TRY(tp_row_bool(r, "dropout", j->dropout, &j->dropout));
    TRY(tp_row_bool(r, "fused_loss", j->fused_loss, &j->fused_loss));
    TRY(tp_row_bool(r, "fp8_param_gather", j->fp8_param_gather, &j->fp8_param_gather));
    /* the gated MLP's activation input kept in FP8 (Megatron-Core
       --activation-func-fp8-input-store): the fp8_act_store column, else the spellings the
       notes quote under an FP8 or FP4 recipe (NVIDIA's MLPerf NeMo configs FP8_ACT=1, AMD's
       FP8_ACTIVATION=True, the config field and the flag) */
    const char *nt = tp_row_cell(r, "notes");
    enum tp_dtype gd = tp_prec_gemm_dtype(j->precision);
    bool act8 = (gd == TP_FP8 || gd == TP_FP4) &&
                (strstr(nt, "FP8_ACT=1") || strstr(nt, "FP8_ACTIVATION=True") ||
                 strstr(nt, "activation_func_fp8_input_store") ||
                 strstr(nt, "activation-func-fp8-input-store"));
    TRY(tp_row_bool(r, "fp8_act_store", act8, &j->fp8_act_store));
    /* the frozen GEMM weights' storage (task lora; docs/runs-file.md): as the row's config
       states it, e.g. MLPerf's PRE_QUANTIZED_MODEL=True with FP4_RECIPE=nvfp4; empty = auto */
    static const char *const frozen[] = {"auto", "16bit", "fp8", "mxfp8", "nvfp4", "bf16",
                                         "fp16"};
    static const enum tp_frozen_format frozen_v[] = {
        TP_FROZEN_AUTO, TP_FROZEN_16BIT, TP_FROZEN_FP8,  TP_FROZEN_MXFP8,
        TP_FROZEN_NVFP4, TP_FROZEN_16BIT, TP_FROZEN_16BIT};
    int fi;
    TRY(tp_row_enum(r, "frozen_weights", frozen, sizeof frozen / sizeof frozen[0], &fi));
    if (fi >= 0)
        j->frozen_weights = frozen_v[fi];
    /* DeepSpeed ZeRO++: zero_quantized_weights / zero_quantized_gradients, as its config says */
    TRY(tp_row_bool(r, "zero_quantized_weights", false, &j->zero_quant_weights));
    TRY(tp_row_bool(r, "zero_quantized_gradients", false, &j->zero_quant_grads));
    bool unused;
    TRY(tp_row_bool(r, "moe_a2a_overlap", false, &unused)); /* read by tp_row_a2a_overlap */
    /* the FP8 recipe's scaling (docs/runs-file.md) */
    static const char *const recipes[] = {"tensorwise", "delayed", "current", "rowwise",
                                          "blockwise", "subchannel"};
    int ri;
    TRY(tp_row_enum(r, "fp8_recipe", recipes, sizeof recipes / sizeof recipes[0], &ri));
    /* the token-dropping capacity factor (Megatron-Core --moe-expert-capacity-factor); 0 is
       dropless, stated */
    double cap;
    TRY(tp_row_real(r, "moe_capacity", &cap));
    if (isfinite(cap)) {
        if (!(cap >= 0 && cap <= 64))
            return tp_fail(r->err, TP_EINVAL,
                           "moe_capacity \"%s\" is out of range (0 = dropless, else 0 < f <= 64)",
                           tp_row_cell(r, "moe_capacity"));
        j->moe_capacity = cap;
        if (cap == 0)
            j->moe_pad_capacity = false;
    }
    /* the share of token slots the row's throughput counts (Axolotl: trainable tokens) */
    double frac;
    TRY(tp_row_real(r, "trainable_frac", &frac));
    if (isfinite(frac)) {
        if (!(frac > 0 && frac <= 1))
            return tp_fail(r->err, TP_EINVAL, "trainable_frac \"%s\" is out of range (0 < f <= 1)",
                           tp_row_cell(r, "trainable_frac"));
        j->trainable_frac = frac;
    }
    return TP_OK;
}
