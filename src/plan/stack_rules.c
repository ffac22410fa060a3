/*
 * stack_rules.c - the training frameworks' own validity rules for a layout, as one table.
 *
 * Each row is an assertion (or a documented requirement) of the framework's own start-up code,
 * ported with the file and line it stands on at the commit read:
 *   Megatron-LM  NVIDIA/Megatron-LM @ 67f3515c (2026-01-29): megatron/training/arguments.py
 *                (validate_args), megatron/core/transformer/transformer_config.py
 *                (TransformerConfig.__post_init__), megatron/core/model_parallel_config.py
 *   DeepSpeed    deepspeedai/DeepSpeed @ edaa7221 (2026-08-22): deepspeed/runtime/pipe/engine.py,
 *                deepspeed/runtime/engine.py
 *   Axolotl      axolotl-ai-cloud/axolotl @ 067b021c (2026-07-24):
 *                src/axolotl/utils/schemas/validation.py
 *   torchtitan   pytorch/torchtitan @ b5bcd76c (2026-08-21): torchtitan/distributed/parallel_dims.py,
 *                torchtitan/trainer.py
 * tp_stack_check (stack.c) refuses a layout that breaks a rule of its --framework, naming the
 * rule and the source; tp_layout_check applies the fix rules first (what the framework's
 * documentation says must be on, trainplan turns on, as the plan a user of that stack runs).
 * The capabilities of each stack (which parallelisms it runs at all) stay in stack.c.
 */
#include "plan_internal.h"
#include "stack_rules.h"

#include <string.h>

#define MEGATRON TP_FW_BIT(TP_FW_MEGATRON)
#define MEGATRON_DS TP_FW_BIT(TP_FW_MEGATRON_DS)
#define DEEPSPEED TP_FW_BIT(TP_FW_DEEPSPEED)
#define AXOLOTL TP_FW_BIT(TP_FW_AXOLOTL)
#define TORCHTITAN TP_FW_BIT(TP_FW_TORCHTITAN)

#define MLM "NVIDIA/Megatron-LM@67f3515c "
#define DS "deepspeedai/DeepSpeed@edaa7221 "
#define AX "axolotl-ai-cloud/axolotl@067b021c "
#define TT "pytorch/torchtitan@b5bcd76c "

#define WHY(...)                                                                                  \
    do {                                                                                          \
        if (why)                                                                                  \
            tp_snprintf(why, len, __VA_ARGS__);                                                   \
    } while (0)

/* ---- Megatron-LM ------------------------------------------------------------------------- */

static bool heads_tp(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                     char *why, size_t len)
{
    (void)j;
    WHY("%u attention heads are not a multiple of tp %u", m->n_heads, l->tp);
    return m->n_heads % l->tp != 0;
}

static bool groups_tp(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                      char *why, size_t len)
{
    (void)j;
    WHY("%u query groups (kv heads) are neither a multiple nor a divisor of tp %u", m->n_kv_heads, l->tp);
    return m->n_kv_heads % l->tp != 0 && l->tp % m->n_kv_heads != 0;
}

static bool experts_ep(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                       char *why, size_t len)
{
    (void)j;
    WHY("%u experts are not a multiple of ep %u", m->n_experts, l->ep);
    return l->ep > 1 && (m->n_experts == 0 || m->n_experts % l->ep != 0);
}

/* MoELayer.forward raises during training when the attention's TP group is larger than one
   and sequence parallelism is off (moe_layer.py:379); ModelParallelConfig warns the same for
   EP with TP (model_parallel_config.py:422). */
static bool moe_tp_sp(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                      char *why, size_t len)
{
    (void)j;
    WHY("an MoE model with tp %u needs sequence parallelism (sp)", l->tp);
    return m->n_experts > 0 && l->tp > 1 && !l->sp;
}

static bool tp_overlap_sp(const struct tp_model *m, const struct tp_job *j,
                          const struct tp_layout *l, char *why, size_t len)
{
    (void)m;
    WHY("tp_comm_overlap needs sequence parallelism (sp with tp 2 or more; tp %u, sp %s)", l->tp, l->sp ? "on" : "off");
    return j->tp_comm_overlap && !(l->sp && l->tp > 1);
}

static bool layers_pp(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                      char *why, size_t len)
{
    (void)j;
    WHY("%u layers are not divisible by pp %u (give pp_first / pp_last for an uneven split)", m->n_layers, l->pp);
    /* the check binds the even split only (no --decoder-first/last-pipeline-num-layers, no
       per-stage map) */
    return l->vpp <= 1 && !l->pp_first && !l->pp_last && !l->pp_nv && m->n_layers % l->pp != 0;
}

static bool vpp_pp(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                   char *why, size_t len)
{
    (void)m;
    (void)j;
    WHY("vpp %u needs pp 2 or more (pp %u)", l->vpp, l->pp);
    return l->vpp > 1 && l->pp < 2;
}

static bool cp_seq(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                   char *why, size_t len)
{
    (void)m;
    WHY("sequence length %llu is not a multiple of 2 * cp = %u", (unsigned long long)j->seq, 2 * l->cp);
    return l->cp > 1 && j->seq % (2ull * l->cp) != 0;
}

static bool fp8_gather_distopt(const struct tp_model *m, const struct tp_job *j,
                               const struct tp_layout *l, char *why, size_t len)
{
    (void)m;
    WHY("fp8_param_gather needs the distributed optimizer or Megatron-FSDP (zero >= 1, not %u)", l->zero);
    return j->fp8_param_gather && l->zero == 0;
}

static bool fp4_recipe(const struct tp_model *m, const struct tp_job *j,
                       const struct tp_layout *l, char *why, size_t len)
{
    (void)m;
    (void)l;
    WHY("Megatron-Core has no MXFP4 recipe (--fp4-recipe nvfp4 or custom): plan precision nvfp4");
    return j->precision == TP_PREC_MXFP4;
}

static bool a2a_vpp(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                    char *why, size_t len)
{
    (void)m;
    WHY("moe_a2a_overlap (--overlap-moe-expert-parallel-comm) with pp %u needs an interleaved pipeline (vpp 2 or more)", l->pp);
    return j->moe_a2a_overlap && l->pp > 1 && l->vpp <= 1;
}

static bool a2a_ep(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                   char *why, size_t len)
{
    (void)m;
    WHY("moe_a2a_overlap (--overlap-moe-expert-parallel-comm) needs expert parallelism (ep 2 or more, not %u)", l->ep);
    return j->moe_a2a_overlap && l->ep <= 1;
}

static bool a2a_full(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                     char *why, size_t len)
{
    (void)m;
    WHY("moe_a2a_overlap (--overlap-moe-expert-parallel-comm) runs without full recompute");
    return j->moe_a2a_overlap && l->recompute == TP_RECOMPUTE_FULL;
}

static bool a2a_16bit(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                      char *why, size_t len)
{
    (void)m;
    (void)l;
    WHY("moe_a2a_overlap (--overlap-moe-expert-parallel-comm) needs a bf16 or fp16 model, not %s", tp_prec_name(j->precision));
    return j->moe_a2a_overlap && j->precision == TP_PREC_FP32;
}

/* ---- DeepSpeed --------------------------------------------------------------------------- */

static bool pipe_zero(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                      char *why, size_t len)
{
    (void)m;
    (void)j;
    WHY("DeepSpeed's pipeline engine runs ZeRO 0 or 1 only (zero %u with pp %u)", l->zero, l->pp);
    return l->pp > 1 && l->zero >= 2;
}

static bool moe_zero3(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                      char *why, size_t len)
{
    WHY("DeepSpeed-MoE expert parallelism does not run under ZeRO-3 (ep %u with zero 3)", l->ep);
    return m->n_experts > 0 && l->ep > 1 && l->zero == 3 &&
           tp_job_moe_impl(m, j, l) == TP_MOE_DEEPSPEED;
}

/* ---- Axolotl ----------------------------------------------------------------------------- */

static bool cp_flash(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                     char *why, size_t len)
{
    (void)m;
    WHY("cp %u needs flash attention, not %s", l->cp, j->attn_impl == TP_ATTN_EAGER ? "eager" : "flex");
    return l->cp > 1 && (j->attn_impl == TP_ATTN_EAGER || j->attn_impl == TP_ATTN_FLEX);
}

static bool cp_mbs(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                   char *why, size_t len)
{
    (void)m;
    WHY("cp %u with sample packing needs mbs 1, not %u", l->cp, l->mbs);
    /* the export packs samples (sample_packing) except for DPO */
    return l->cp > 1 && l->mbs > 1 && j->task != TP_TASK_DPO;
}

/* ---- torchtitan -------------------------------------------------------------------------- */

static bool titan_ep(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                     char *why, size_t len)
{
    (void)m;
    (void)j;
    /* dp_shard: the FSDP group (dp, or the shard group of HSDP); DDP replicates (dp_shard 1) */
    uint64_t shard = l->zero == 0 ? 1 : (l->shard_group ? l->shard_group / l->cp : l->dp);
    if (shard == 0)
        shard = 1;
    uint64_t region = shard * l->cp * l->tp;
    WHY("ep %u does not divide dp_shard * cp * tp = %llu", l->ep, (unsigned long long)region);
    return l->ep > 1 && region % l->ep != 0;
}

static bool titan_tokens(const struct tp_model *m, const struct tp_job *j,
                         const struct tp_layout *l, char *why, size_t len)
{
    (void)m;
    /* the tokens of a micro-batch over TP (with SP) and 2 * CP (load-balanced halves) */
    uint64_t tokens = (uint64_t)l->mbs * j->seq;
    uint64_t div = (uint64_t)(l->sp && l->tp > 1 ? l->tp : 1) * (l->cp > 1 ? 2u * l->cp : 1);
    WHY("%llu tokens per micro-batch are not divisible by %llu (tp with sp x 2 cp)",
        (unsigned long long)tokens, (unsigned long long)div);
    return tokens % div != 0;
}

static const struct tp_stack_rule RULES[] = {
    {.id = "megatron-heads-tp", .stacks = MEGATRON | MEGATRON_DS, .field = "tp", .broken = heads_tp,
     .message = "num_attention_heads must be a multiple of tp",
     .source = MLM "megatron/core/transformer/transformer_config.py:887"},
    {.id = "megatron-query-groups-tp", .stacks = MEGATRON, .field = "tp", .broken = groups_tp,
     .message = "num_query_groups must be a multiple or divisor of tp",
     .source = MLM "megatron/core/transformer/transformer_config.py:903"},
    {.id = "megatron-experts-ep", .stacks = MEGATRON, .field = "ep", .broken = experts_ep,
     .message = "the number of experts must be a multiple of ep",
     .source = MLM "megatron/training/arguments.py:1028"},
    {.id = "megatron-moe-tp-sp", .stacks = MEGATRON,
     .field = "sp", .broken = moe_tp_sp, .fix = true,
     .message =
         "MoE with tensor parallelism needs sequence parallelism (--sequence-parallel): MoELayer "
         "raises in training without it",
     .source = MLM "megatron/core/transformer/moe/moe_layer.py:379"},
    {.id = "megatron-tp-overlap-sp", .stacks = MEGATRON,
     .field = "tp_comm_overlap", .broken = tp_overlap_sp,
     .message =
         "tp_comm_overlap (--tp-comm-overlap) needs sequence parallelism, which runs only with tp > 1",
     .source = MLM "megatron/training/arguments.py:917"},
    {.id = "megatron-layers-pp", .stacks = MEGATRON, .field = "pp", .broken = layers_pp,
     .message = "the number of layers must be divisible by pp (or give pp_first / pp_last)",
     .source = MLM "megatron/training/arguments.py:571"},
    {.id = "megatron-vpp-pp", .stacks = MEGATRON, .field = "vpp", .broken = vpp_pp,
     .message = "the interleaved schedule (vpp) needs pp 2 or more",
     .source = MLM "megatron/training/arguments.py:576"},
    {.id = "megatron-cp-seq", .stacks = MEGATRON, .field = "cp", .broken = cp_seq,
     .message = "the sequence length must be a multiple of 2 * cp",
     .source = MLM "megatron/training/arguments.py:819"},
    {.id = "megatron-fp8-gather-distopt", .stacks = MEGATRON,
     .field = "fp8_param_gather", .broken = fp8_gather_distopt,
     .message =
         "fp8_param_gather (--fp8-param-gather) needs the distributed optimizer or Megatron-FSDP "
         "(zero >= 1)",
     .source = MLM "megatron/training/arguments.py:657"},
    {.id = "megatron-fp4-recipe", .stacks = MEGATRON, .field = "precision", .broken = fp4_recipe,
     .message = "--fp4-recipe is nvfp4 or custom: no MXFP4",
     .source = MLM "megatron/training/arguments.py:1448"},
    {.id = "megatron-a2a-vpp", .stacks = MEGATRON, .field = "moe_a2a_overlap", .broken = a2a_vpp,
     .message =
         "moe_a2a_overlap (--overlap-moe-expert-parallel-comm) with pp > 1 needs an interleaved "
         "pipeline (vpp 2 or more)",
     .source = MLM "megatron/core/transformer/transformer_config.py:1821"},
    {.id = "megatron-a2a-ep", .stacks = MEGATRON, .field = "moe_a2a_overlap", .broken = a2a_ep,
     .message =
         "moe_a2a_overlap (--overlap-moe-expert-parallel-comm) needs expert parallelism (ep 2 or "
         "more)",
     .source = MLM "megatron/core/transformer/transformer_config.py:1826"},
    {.id = "megatron-a2a-recompute", .stacks = MEGATRON,
     .field = "moe_a2a_overlap", .broken = a2a_full,
     .message = "moe_a2a_overlap (--overlap-moe-expert-parallel-comm) runs without full recompute",
     .source = MLM "megatron/core/transformer/transformer_config.py:1834"},
    {.id = "megatron-a2a-16bit", .stacks = MEGATRON,
     .field = "moe_a2a_overlap", .broken = a2a_16bit,
     .message = "moe_a2a_overlap (--overlap-moe-expert-parallel-comm) needs a bf16 or fp16 model",
     .source = MLM "megatron/core/transformer/transformer_config.py:1845"},
    {.id = "deepspeed-pipe-zero", .stacks = DEEPSPEED | MEGATRON_DS,
     .field = "zero", .broken = pipe_zero,
     .message =
         "DeepSpeed's pipeline engine runs ZeRO 0 or 1 only (\"ZeRO-2 and ZeRO-3 are incompatible "
         "with pipeline parallelism\")",
     .source = DS "deepspeed/runtime/pipe/engine.py:77"},
    {.id = "deepspeed-moe-zero3", .stacks = DEEPSPEED | AXOLOTL | MEGATRON_DS,
     .field = "zero", .broken = moe_zero3,
     .message =
         "DeepSpeed-MoE expert parallelism does not run under ZeRO-3 (\"Native DeepSpeed MoE is not "
         "supported with ZeRO Stage 3\")",
     .source = DS "deepspeed/runtime/engine.py:1890"},
    {.id = "axolotl-cp-flash", .stacks = AXOLOTL, .field = "cp", .broken = cp_flash,
     .message = "context_parallel_size > 1 requires flash attention",
     .source = AX "src/axolotl/utils/schemas/validation.py:1654"},
    {.id = "axolotl-cp-mbs", .stacks = AXOLOTL, .field = "mbs", .broken = cp_mbs,
     .message = "with context_parallel_size > 1 and sample packing, micro_batch_size must be 1 "
                "(ring-flash-attn)",
     .source = AX "src/axolotl/utils/schemas/validation.py:1660"},
    {.id = "torchtitan-seq-divisor", .stacks = TORCHTITAN, .field = "seq", .broken = titan_tokens,
     .message = "the tokens per pipeline micro-batch must be divisible by tp (with SP) x 2 cp",
     .source = TT "torchtitan/trainer.py:303"},
    {.id = "torchtitan-ep-region", .stacks = TORCHTITAN, .field = "ep", .broken = titan_ep,
     .message = "expert_parallel_degree must divide dp_shard * cp * tp",
     .source = TT "torchtitan/distributed/parallel_dims.py:189"},
};
#define N_RULES (sizeof RULES / sizeof RULES[0])

size_t tp_stack_rule_count(void)
{
    return N_RULES;
}

const struct tp_stack_rule *tp_stack_rule_at(size_t i)
{
    return i < N_RULES ? &RULES[i] : NULL;
}

const struct tp_stack_rule *tp_stack_rule_find(const char *id)
{
    for (size_t i = 0; i < N_RULES; i++)
        if (strcmp(RULES[i].id, id) == 0)
            return &RULES[i];
    return NULL;
}

enum tp_status tp_stack_rules_check(const struct tp_model *m, const struct tp_job *j,
                                    const struct tp_layout *l, struct tp_error *err)
{
    unsigned bit = TP_FW_BIT(j->framework);
    for (size_t i = 0; i < N_RULES; i++) {
        const struct tp_stack_rule *r = &RULES[i];
        char why[224];
        if (!(r->stacks & bit) || !r->broken(m, j, l, why, sizeof why))
            continue;
        const char *k = tp_stack_get(j->framework)->key;
        return tp_fail_field(err, TP_EINVAL, r->field, "%s (%s rule %s: %s)", why, k,
                             r->id, r->source);
    }
    return TP_OK;
}

unsigned tp_stack_rules_fix(const struct tp_model *m, const struct tp_job *j,
                            struct tp_layout *l)
{
    unsigned bit = TP_FW_BIT(j->framework), n = 0;
    for (size_t i = 0; i < N_RULES; i++) {
        const struct tp_stack_rule *r = &RULES[i];
        if (!r->fix || !(r->stacks & bit) || !r->broken(m, j, l, NULL, 0))
            continue;
        if (r->broken == moe_tp_sp) {
            l->sp = true;
            n++;
        }
    }
    return n;
}
