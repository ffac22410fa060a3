/*
 * test_export_rules.c - one test per row of the frameworks' rules table (src/plan/stack_rules.c):
 * a layout that breaks the rule is refused by tp_stack_check under the rule's stack, with the
 * rule's id and its source file and line in the message, and the nearest layout the framework
 * accepts passes.  Each row cites the assertion it ports, at the commits the table names:
 *   NVIDIA/Megatron-LM @ 67f3515c, deepspeedai/DeepSpeed @ edaa7221,
 *   axolotl-ai-cloud/axolotl @ 067b021c, pytorch/torchtitan @ b5bcd76c.
 * Then: every rule of the table has a row here; the fix rule (Megatron's sequence parallelism
 * for MoE with TP) is applied by tp_layout_check; and export refuses a layout the target's rules
 * refuse even when the plan was made for another stack.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stack_rules.h"
#include "trainplan.h"
#include "trainplan_export.h"

#include <stdio.h>
#include <string.h>

struct plan {
    struct tp_model m;
    struct tp_job j;
    struct tp_layout l;
};

struct row {
    const char *rule;
    const char *source; /* the framework file:line the rule ports (also in the message) */
    enum tp_framework fw;
    const char *preset;
    void (*broken)(struct plan *p); /* breaks the rule */
    void (*fixed)(struct plan *p);  /* the nearest layout the framework accepts */
};

static void init(struct plan *p, const char *preset, enum tp_framework fw)
{
    struct tp_error err = {{0}, {0}};
    if (tp_model_from_preset(preset, &p->m, &err) != TP_OK)
        fail_msg("%s", err.msg);
    tp_job_init(&p->j);
    p->j.framework = fw;
    p->j.seq = 4096;
    tp_layout_init(&p->l);
    p->l.dp = 8;
}

/* transformer_config.py:887: num_attention_heads % tensor_model_parallel_size */
static void heads_bad(struct plan *p) { p->l.tp = 3; }
static void heads_ok(struct plan *p) { p->l.tp = 4; }
/* transformer_config.py:903: num_query_groups a multiple or divisor of tp (48 heads, 8 groups) */
static void groups_bad(struct plan *p) { p->m.n_heads = 48; p->l.tp = 6; }
static void groups_ok(struct plan *p) { p->m.n_heads = 48; p->l.tp = 4; }
/* arguments.py:1028: num_experts % expert_model_parallel_size (Qwen3-30B-A3B: 128 experts) */
static void experts_bad(struct plan *p) { p->l.ep = 3; }
static void experts_ok(struct plan *p) { p->l.ep = 4; }
/* megatron/core/transformer/moe/moe_layer.py:379: MoELayer.forward raises in training with an
   attention TP group > 1 and no sequence parallelism (ep 1 too) */
static void ep_sp_bad(struct plan *p) { p->l.tp = 2; p->l.ep = 1; p->l.sp = false; }
static void ep_sp_ok(struct plan *p) { p->l.tp = 2; p->l.ep = 4; p->l.sp = true; }
/* arguments.py:917: --tp-comm-overlap needs sequence parallelism */
static void overlap_bad(struct plan *p) { p->l.tp = 2; p->j.tp_comm_overlap = true; }
static void overlap_ok(struct plan *p) { overlap_bad(p); p->l.sp = true; }
/* arguments.py:571: num_layers % pipeline size without an uneven split (GLM-4.5-Air: 46) */
static void layers_bad(struct plan *p) { p->l.pp = 4; }
static void layers_ok(struct plan *p) { p->l.pp = 4; p->l.pp_first = 10; p->l.pp_last = 12; }
/* arguments.py:576: the interleaved schedule needs pp > 1 */
static void vpp_bad(struct plan *p) { p->l.vpp = 2; }
static void vpp_ok(struct plan *p) { p->l.vpp = 2; p->l.pp = 2; }
/* arguments.py:819: seq_length % (2 * context_parallel_size) */
static void cp_bad(struct plan *p) { p->l.cp = 2; p->j.seq = 4098; }
static void cp_ok(struct plan *p) { p->l.cp = 2; p->j.seq = 4096; }
/* arguments.py:657: --fp8-param-gather needs the distributed optimizer or Megatron-FSDP */
static void fp8g_bad(struct plan *p) { p->j.precision = TP_PREC_FP8; p->j.fp8_param_gather = true; p->l.zero = 0; }
static void fp8g_ok(struct plan *p) { fp8g_bad(p); p->l.zero = 1; }
/* arguments.py:1448: --fp4-recipe choices nvfp4, custom (no MXFP4) */
static void fp4_bad(struct plan *p) { p->j.precision = TP_PREC_MXFP4; }
static void fp4_ok(struct plan *p) { p->j.precision = TP_PREC_NVFP4; }
/* transformer_config.py:1821: EP A2A overlap with pp > 1 needs a virtual pipeline */
static void a2a_vpp_bad(struct plan *p) { p->j.moe_a2a_overlap = true; p->l.ep = 4; p->l.pp = 2; }
static void a2a_vpp_ok(struct plan *p) { a2a_vpp_bad(p); p->l.vpp = 2; }
/* transformer_config.py:1826: EP A2A overlap needs expert parallelism */
static void a2a_ep_bad(struct plan *p) { p->j.moe_a2a_overlap = true; }
static void a2a_ep_ok(struct plan *p) { p->j.moe_a2a_overlap = true; p->l.ep = 2; }
/* transformer_config.py:1834: EP A2A overlap without full recompute */
static void a2a_rc_bad(struct plan *p) { a2a_ep_ok(p); p->l.recompute = TP_RECOMPUTE_FULL; }
static void a2a_rc_ok(struct plan *p) { a2a_ep_ok(p); p->l.recompute = TP_RECOMPUTE_SELECTIVE; }
/* transformer_config.py:1845: EP A2A overlap with a bf16 or fp16 model */
static void a2a_16_bad(struct plan *p) { a2a_ep_ok(p); p->j.precision = TP_PREC_FP32; }
static void a2a_16_ok(struct plan *p) { a2a_ep_ok(p); p->j.precision = TP_PREC_BF16; }
/* deepspeed/runtime/pipe/engine.py:77: "ZeRO-2 and ZeRO-3 are incompatible with pipeline
   parallelism" */
static void pipe_bad(struct plan *p) { p->l.pp = 2; p->l.zero = 2; }
static void pipe_ok(struct plan *p) { p->l.pp = 2; p->l.zero = 1; }
/* deepspeed/runtime/engine.py:1890: "Native DeepSpeed MoE is not supported with ZeRO Stage 3" */
static void dsmoe_bad(struct plan *p) { p->l.ep = 2; p->l.zero = 3; }
static void dsmoe_ok(struct plan *p) { p->l.ep = 2; p->l.zero = 2; }
/* src/axolotl/utils/schemas/validation.py:1654: context_parallel_size > 1 requires flash
   attention */
static void cpf_bad(struct plan *p) { p->l.cp = 2; p->j.attn_impl = TP_ATTN_EAGER; }
static void cpf_ok(struct plan *p) { p->l.cp = 2; p->j.attn_impl = TP_ATTN_FLASH2; }
/* validation.py:1660: micro_batch_size 1 with sample packing and context parallelism */
static void cpm_bad(struct plan *p) { p->l.cp = 2; p->l.mbs = 2; }
static void cpm_ok(struct plan *p) { p->l.cp = 2; p->l.mbs = 1; }
/* torchtitan/distributed/parallel_dims.py:189: expert_parallel_degree divides
   dp_shard * cp * tp (DDP: dp_shard 1) */
static void titan_bad(struct plan *p) { p->l.ep = 2; p->l.zero = 0; }
static void titan_ok(struct plan *p) { p->l.ep = 2; p->l.zero = 3; }

/* torchtitan/trainer.py:303: tokens per micro-batch divisible by tp (with SP) x 2 cp */
static void titan_seq_bad(struct plan *p) { p->l.tp = 2; p->l.sp = true; p->l.cp = 2; p->j.seq = 4100; p->l.zero = 3; }
static void titan_seq_ok(struct plan *p) { titan_seq_bad(p); p->j.seq = 4096; }

static const struct row ROWS[] = {
    {"megatron-heads-tp", "megatron/core/transformer/transformer_config.py:887", TP_FW_MEGATRON,
     "llama-3.1-8b", heads_bad, heads_ok},
    {"megatron-query-groups-tp", "megatron/core/transformer/transformer_config.py:903",
     TP_FW_MEGATRON, "llama-3.1-8b", groups_bad, groups_ok},
    {"megatron-experts-ep", "megatron/training/arguments.py:1028", TP_FW_MEGATRON,
     "qwen3-30b-a3b", experts_bad, experts_ok},
    {"megatron-moe-tp-sp", "megatron/core/transformer/moe/moe_layer.py:379", TP_FW_MEGATRON,
     "qwen3-30b-a3b", ep_sp_bad, ep_sp_ok},
    {"megatron-tp-overlap-sp", "megatron/training/arguments.py:917", TP_FW_MEGATRON,
     "llama-3.1-8b", overlap_bad, overlap_ok},
    {"megatron-layers-pp", "megatron/training/arguments.py:571", TP_FW_MEGATRON, "glm-4.5-air",
     layers_bad, layers_ok},
    {"megatron-vpp-pp", "megatron/training/arguments.py:576", TP_FW_MEGATRON, "llama-3.1-8b",
     vpp_bad, vpp_ok},
    {"megatron-cp-seq", "megatron/training/arguments.py:819", TP_FW_MEGATRON, "llama-3.1-8b",
     cp_bad, cp_ok},
    {"megatron-fp8-gather-distopt", "megatron/training/arguments.py:657", TP_FW_MEGATRON,
     "llama-3.1-8b", fp8g_bad, fp8g_ok},
    {"megatron-fp4-recipe", "megatron/training/arguments.py:1448", TP_FW_MEGATRON,
     "llama-3.1-8b", fp4_bad, fp4_ok},
    {"megatron-a2a-vpp", "megatron/core/transformer/transformer_config.py:1821", TP_FW_MEGATRON,
     "qwen3-30b-a3b", a2a_vpp_bad, a2a_vpp_ok},
    {"megatron-a2a-ep", "megatron/core/transformer/transformer_config.py:1826", TP_FW_MEGATRON,
     "qwen3-30b-a3b", a2a_ep_bad, a2a_ep_ok},
    {"megatron-a2a-recompute", "megatron/core/transformer/transformer_config.py:1834",
     TP_FW_MEGATRON, "qwen3-30b-a3b", a2a_rc_bad, a2a_rc_ok},
    {"megatron-a2a-16bit", "megatron/core/transformer/transformer_config.py:1845",
     TP_FW_MEGATRON, "qwen3-30b-a3b", a2a_16_bad, a2a_16_ok},
    {"deepspeed-pipe-zero", "deepspeed/runtime/pipe/engine.py:77", TP_FW_DEEPSPEED,
     "llama-3.1-8b", pipe_bad, pipe_ok},
    {"deepspeed-moe-zero3", "deepspeed/runtime/engine.py:1890", TP_FW_AXOLOTL, "qwen3-30b-a3b",
     dsmoe_bad, dsmoe_ok},
    {"axolotl-cp-flash", "src/axolotl/utils/schemas/validation.py:1654", TP_FW_AXOLOTL,
     "llama-3.1-8b", cpf_bad, cpf_ok},
    {"axolotl-cp-mbs", "src/axolotl/utils/schemas/validation.py:1660", TP_FW_AXOLOTL,
     "llama-3.1-8b", cpm_bad, cpm_ok},
    {"torchtitan-seq-divisor", "torchtitan/trainer.py:303", TP_FW_TORCHTITAN, "llama-3.1-8b",
     titan_seq_bad, titan_seq_ok},
    {"torchtitan-ep-region", "torchtitan/distributed/parallel_dims.py:189", TP_FW_TORCHTITAN,
     "qwen3-30b-a3b", titan_bad, titan_ok},
};
#define N_ROWS (sizeof ROWS / sizeof ROWS[0])

static void test_rule(void **state)
{
    const struct row *r = *state;
    const struct tp_stack_rule *rule = tp_stack_rule_find(r->rule);
    assert_non_null(rule);
    assert_non_null(strstr(rule->source, r->source));
    assert_true(rule->stacks & TP_FW_BIT(r->fw));
    static struct plan p;
    struct tp_error err = {{0}, {0}};
    init(&p, r->preset, r->fw);
    r->broken(&p);
    assert_true(rule->broken(&p.m, &p.j, &p.l, NULL, 0));
    /* the stack refuses it, naming the rule and its source */
    assert_int_equal(tp_stack_rules_check(&p.m, &p.j, &p.l, &err), TP_EINVAL);
    if (!strstr(err.msg, r->rule) || !strstr(err.msg, r->source))
        fail_msg("%s: %s", r->rule, err.msg);
    assert_int_equal(tp_stack_check(&p.m, &p.j, &p.l, &err), TP_EINVAL);
    /* the layout the framework accepts passes this rule */
    init(&p, r->preset, r->fw);
    r->fixed(&p);
    assert_false(rule->broken(&p.m, &p.j, &p.l, NULL, 0));
    /* the rule binds its stacks only: under a stack it does not name, it is not checked */
    for (int fw = 0; fw < TP_FW_COUNT; fw++)
        if (!(rule->stacks & TP_FW_BIT(fw))) {
            init(&p, r->preset, (enum tp_framework)fw);
            r->broken(&p);
            if (tp_stack_rules_check(&p.m, &p.j, &p.l, &err) != TP_OK)
                assert_null(strstr(err.msg, r->rule));
        }
}

/* Every rule of the table has its row above, and cites a file and line. */
static void test_every_rule_tested(void **state)
{
    (void)state;
    for (size_t i = 0; i < tp_stack_rule_count(); i++) {
        const struct tp_stack_rule *rule = tp_stack_rule_at(i);
        bool found = false;
        for (size_t k = 0; k < N_ROWS; k++)
            found |= strcmp(ROWS[k].rule, rule->id) == 0;
        if (!found)
            fail_msg("rule %s has no test", rule->id);
        const char *colon = strrchr(rule->source, ':');
        assert_non_null(colon);
        assert_true(colon[1] >= '1' && colon[1] <= '9');
        assert_non_null(strchr(rule->source, '@'));
    }
    assert_int_equal(tp_stack_rule_count(), N_ROWS);
    assert_null(tp_stack_rule_find("no-such-rule"));
}

/* Megatron's SP for MoE with TP: tp_layout_check turns it on, as the planned run must have it;
   under torchtitan (no such rule) it stays as given. */
static void test_sp_fixed(void **state)
{
    (void)state;
    static struct plan p;
    struct tp_cluster c;
    struct tp_error err = {{0}, {0}};
    init(&p, "qwen3-30b-a3b", TP_FW_MEGATRON);
    assert_int_equal(tp_cluster_init(&c, "h100-sxm", 16, &err), TP_OK);
    p.l.dp = 0;
    p.l.tp = 2;
    p.l.pp = 2;
    p.l.ep = 4;
    assert_int_equal(tp_layout_check(&p.m, &c, &p.j, &p.l, &err), TP_OK);
    assert_true(p.l.sp);
    assert_int_equal(tp_stack_check(&p.m, &p.j, &p.l, &err), TP_OK);
    init(&p, "qwen3-30b-a3b", TP_FW_TORCHTITAN);
    p.l.dp = 0;
    p.l.tp = 2;
    p.l.ep = 4;
    p.l.zero = 3;
    assert_int_equal(tp_layout_check(&p.m, &c, &p.j, &p.l, &err), TP_OK);
    assert_false(p.l.sp);
}

/* export --to megatron checks Megatron's rules whatever stack the plan was made for: an FSDP
   plan with ep 4 and tp 2 but no SP is refused naming the rule. */
static void test_export_target_rules(void **state)
{
    (void)state;
    static struct plan p;
    static struct tp_export x;
    struct tp_cluster c;
    struct tp_error err = {{0}, {0}};
    init(&p, "qwen3-30b-a3b", TP_FW_TORCHTITAN);
    assert_int_equal(tp_cluster_init(&c, "h100-sxm", 16, &err), TP_OK);
    p.l.dp = 0;
    p.l.tp = 2;
    p.l.ep = 4;
    p.l.zero = 3;
    assert_int_equal(tp_layout_check(&p.m, &c, &p.j, &p.l, &err), TP_OK);
    assert_int_equal(tp_export_build(TP_EXPORT_MEGATRON, &p.m, &c, &p.j, &p.l, NULL, &x, &err),
                     TP_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "megatron-moe-tp-sp"));
    assert_int_equal(x.n_files, 0);
}

int main(void)
{
    struct CMUnitTest tests[N_ROWS + 3];
    for (size_t i = 0; i < N_ROWS; i++) {
        struct CMUnitTest t = cmocka_unit_test_prestate(test_rule, (void *)(uintptr_t)&ROWS[i]);
        t.name = ROWS[i].rule;
        tests[i] = t;
    }
    tests[N_ROWS] = (struct CMUnitTest)cmocka_unit_test(test_every_rule_tested);
    tests[N_ROWS + 1] = (struct CMUnitTest)cmocka_unit_test(test_sp_fixed);
    tests[N_ROWS + 2] = (struct CMUnitTest)cmocka_unit_test(test_export_target_rules);
    return _cmocka_run_group_tests("test_export_rules", tests, N_ROWS + 3, NULL, NULL);
}
