/*
 * test_export.c - trainplan export: every file parses back (jansson, libyaml, the bash array
 * and the launch lines), every key and flag is one the target framework's own parser or schema
 * knows (the tables below, each name with the file it comes from), and every batch, parallel
 * and precision value is the plan's, with train_batch_size = micro x accumulation x dp.
 *
 * The framework sources the names were checked against (docs/export.md):
 *   DeepSpeed          deepspeedai/DeepSpeed @ edaa7221 (2026-08-22)
 *   Axolotl            axolotl-ai-cloud/axolotl @ 067b021c (2026-07-24)
 *   Megatron-LM        NVIDIA/Megatron-LM @ 67f3515c (2026-01-29), megatron/training/
 *   Megatron-DeepSpeed deepspeedai/Megatron-DeepSpeed @ 4efb479d (2025-07-16)
 *   torchrun           pytorch torch/distributed/run.py; sbatch(1) for #SBATCH
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"
#include "trainplan_export.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "test_export_names.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static bool known(const struct name *t, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0)
            return true;
    return false;
}

/* ---- a plan ---------------------------------------------------------------------------- */

struct plan {
    struct tp_model m;
    struct tp_cluster c;
    struct tp_job j;
    struct tp_layout l;
};

static void plan_init(struct plan *p, const char *preset, const char *gpu, uint32_t gpus,
                      enum tp_framework fw, uint64_t seq)
{
    struct tp_error err = {{0}, {0}};
    if (tp_model_from_preset(preset, &p->m, &err) != TP_OK)
        fail_msg("%s", err.msg);
    if (tp_cluster_init(&p->c, gpu, gpus, &err) != TP_OK)
        fail_msg("%s", err.msg);
    tp_job_init(&p->j);
    p->j.framework = fw;
    p->j.seq = seq;
    tp_layout_init(&p->l);
    p->l.dp = 0; /* derived from the GPUs */
}

static void plan_check(struct plan *p)
{
    struct tp_error err = {{0}, {0}};
    if (tp_layout_check(&p->m, &p->c, &p->j, &p->l, &err) != TP_OK)
        fail_msg("%s", err.msg);
}

static void build(struct plan *p, enum tp_export_format f, struct tp_export *x)
{
    plan_check(p);
    struct tp_error err = {{0}, {0}};
    if (tp_export_build(f, &p->m, &p->c, &p->j, &p->l, NULL, x, &err) != TP_OK)
        fail_msg("%s", err.msg);
}

static const char *file(const struct tp_export *x, const char *name)
{
    for (size_t i = 0; i < x->n_files; i++)
        if (strcmp(x->files[i].name, name) == 0)
            return x->files[i].text;
    fail_msg("no file %s", name);
    return NULL;
}

static uint64_t global_batch(const struct plan *p)
{
    return (uint64_t)p->l.mbs * p->l.gas * p->l.dp;
}

/* ---- DeepSpeed JSON ---------------------------------------------------------------------- */

static void ds_keys(json_t *o, const char *prefix)
{
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        char path[160];
        snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] ? "." : "", key);
        if (!known(DS_KEYS, N_OF(DS_KEYS), path))
            fail_msg("DeepSpeed key %s is not in DeepSpeed's config", path);
        if (json_is_object(v))
            ds_keys(v, path);
    }
}

/* Parses the DeepSpeed JSON and checks it against the plan; returns the document. */
static json_t *check_ds(const char *text, const struct plan *p)
{
    json_error_t je;
    json_t *d = json_loads(text, 0, &je);
    if (!d)
        fail_msg("DeepSpeed JSON does not parse: %s", je.text);
    ds_keys(d, "");
    json_int_t tbs = json_integer_value(json_object_get(d, "train_batch_size"));
    json_int_t mbs = json_integer_value(json_object_get(d, "train_micro_batch_size_per_gpu"));
    json_int_t gas = json_integer_value(json_object_get(d, "gradient_accumulation_steps"));
    /* DeepSpeed's own check (runtime/config.py _batch_assertion):
       train_batch_size == micro_batch * gradient_acc_step * world_size (data parallel) */
    assert_int_equal(tbs, mbs * gas * (json_int_t)p->l.dp);
    assert_int_equal(tbs, global_batch(p));
    assert_int_equal(mbs, p->l.mbs);
    assert_int_equal(gas, p->l.gas);
    json_t *z = json_object_get(d, "zero_optimization");
    assert_int_equal(json_integer_value(json_object_get(z, "stage")), p->l.zero);
    bool bf16 = json_is_true(json_object_get(json_object_get(d, "bf16"), "enabled"));
    bool fp16 = json_is_true(json_object_get(json_object_get(d, "fp16"), "enabled"));
    assert_int_equal(bf16, p->j.precision == TP_PREC_BF16);
    assert_int_equal(fp16, p->j.precision == TP_PREC_FP16);
    bool off_opt = json_object_get(z, "offload_optimizer") != NULL;
    bool off_par = json_object_get(z, "offload_param") != NULL;
    assert_int_equal(off_opt, p->l.offload != TP_OFFLOAD_NONE);
    assert_int_equal(off_par, p->l.offload == TP_OFFLOAD_PARAMS);
    if (p->l.zero >= 1) /* transformers' "auto": hidden^2 */
        assert_int_equal(json_integer_value(json_object_get(z, "reduce_bucket_size")),
                         (json_int_t)p->m.hidden * p->m.hidden);
    if (p->l.zero == 3)
        assert_int_equal(json_integer_value(json_object_get(z, "stage3_param_persistence_threshold")),
                         10 * (json_int_t)p->m.hidden);
    return d;
}

/* ---- Axolotl YAML (libyaml parser) --------------------------------------------------------- */

static yaml_node_t *ymap_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = yaml_document_get_node(doc, pr->key);
        if (k && strcmp((const char *)k->data.scalar.value, key) == 0)
            return yaml_document_get_node(doc, pr->value);
    }
    return NULL;
}

static const char *yscalar(yaml_document_t *doc, const char *key)
{
    yaml_node_t *n = ymap_get(doc, yaml_document_get_root_node(doc), key);
    if (!n || n->type != YAML_SCALAR_NODE)
        return NULL;
    return (const char *)n->data.scalar.value;
}

static long long yint(yaml_document_t *doc, const char *key)
{
    const char *s = yscalar(doc, key);
    if (!s)
        fail_msg("Axolotl key %s missing", key);
    return strtoll(s, NULL, 10);
}

static void yaml_keys(yaml_document_t *doc, yaml_node_t *map, const char *prefix)
{
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = yaml_document_get_node(doc, pr->key);
        yaml_node_t *v = yaml_document_get_node(doc, pr->value);
        char path[160];
        snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] ? "." : "",
                 (const char *)k->data.scalar.value);
        if (!known(AXOLOTL_KEYS, N_OF(AXOLOTL_KEYS), path))
            fail_msg("Axolotl key %s is not in Axolotl's schema", path);
        if (v->type == YAML_MAPPING_NODE)
            yaml_keys(doc, v, path);
    }
}

static void load_yaml(const char *text, yaml_document_t *doc)
{
    yaml_parser_t parser;
    assert_true(yaml_parser_initialize(&parser));
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
    if (!yaml_parser_load(&parser, doc))
        fail_msg("Axolotl YAML does not parse: %s", parser.problem);
    yaml_parser_delete(&parser);
    yaml_node_t *root = yaml_document_get_root_node(doc);
    assert_non_null(root);
    assert_int_equal(root->type, YAML_MAPPING_NODE);
    yaml_keys(doc, root, "");
}

/* ---- Megatron arguments and launch lines ------------------------------------------------ */

struct flags {
    char flag[128][64];
    char value[128][160];
    size_t n;
};

/* The MEGATRON_ARGS=( ... ) array, one "--flag [value]" a line. */
static void parse_args(const char *text, struct flags *f)
{
    const char *p = strstr(text, "MEGATRON_ARGS=(\n");
    assert_non_null(p);
    p = strchr(p, '\n') + 1;
    f->n = 0;
    while (*p && *p != ')') {
        char line[256];
        size_t n = strcspn(p, "\n");
        assert_true(n < sizeof line && f->n < 128);
        snprintf(line, sizeof line, "%.*s", (int)n, p);
        p += n + (p[n] == '\n');
        char *s = line + strspn(line, " ");
        if (s[0] == '#') /* a comment line inside the array (bash allows them) */
            continue;
        assert_true(strncmp(s, "--", 2) == 0);
        size_t fl = strcspn(s, " ");
        snprintf(f->flag[f->n], sizeof f->flag[0], "%.*s", (int)fl, s);
        snprintf(f->value[f->n], sizeof f->value[0], "%s", s[fl] ? s + fl + 1 : "");
        f->n++;
    }
    assert_int_equal(*p, ')');
}

static const char *flag_value(const struct flags *f, const char *flag)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->flag[i], flag) == 0)
            return f->value[i];
    return NULL;
}

static long long flag_int(const struct flags *f, const char *flag)
{
    const char *v = flag_value(f, flag);
    if (!v)
        fail_msg("flag %s missing", flag);
    return strtoll(v, NULL, 10);
}

static void check_megatron(const char *text, const struct plan *p, bool ds)
{
    static struct flags f;
    parse_args(text, &f);
    for (size_t i = 0; i < f.n; i++)
        if (!(ds ? known(MEGATRON_DS_FLAGS, N_OF(MEGATRON_DS_FLAGS), f.flag[i])
                 : known(MEGATRON_LM_FLAGS, N_OF(MEGATRON_LM_FLAGS), f.flag[i])))
            fail_msg("%s is not a %s flag", f.flag[i], ds ? "Megatron-DeepSpeed" : "Megatron-LM");
    long long tp = flag_int(&f, "--tensor-model-parallel-size");
    long long pp = flag_int(&f, "--pipeline-model-parallel-size");
    long long cp = ds ? 1 : flag_int(&f, "--context-parallel-size");
    long long mbs = flag_int(&f, "--micro-batch-size");
    long long gbs = flag_int(&f, "--global-batch-size");
    assert_int_equal(tp, p->l.tp);
    assert_int_equal(pp, p->l.pp);
    assert_int_equal(cp, p->l.cp);
    assert_int_equal(mbs, p->l.mbs);
    /* Megatron derives dp = world / (tp * pp * cp) and accumulation = gbs / (mbs * dp)
       (megatron/training/arguments.py validate_args; core/num_microbatches_calculator.py) */
    long long dp = p->c.n_gpus / (tp * pp * cp);
    assert_int_equal(gbs % (mbs * dp), 0);
    assert_int_equal(gbs / (mbs * dp), p->l.gas);
    assert_int_equal((unsigned long long)gbs, global_batch(p));
    assert_int_equal(flag_int(&f, "--num-layers"), p->m.n_layers);
    assert_int_equal(flag_int(&f, "--hidden-size"), p->m.hidden);
    assert_int_equal(flag_int(&f, "--seq-length"), p->j.seq);
    assert_int_equal(flag_value(&f, "--bf16") != NULL,
                     p->j.precision == TP_PREC_BF16 || p->j.precision == TP_PREC_FP8);
    if (p->m.n_experts)
        assert_int_equal(flag_int(&f, ds ? "--moe-expert-parallel-size"
                                         : "--expert-model-parallel-size"), p->l.ep);
    if (p->l.vpp > 1)
        assert_int_equal(flag_int(&f, "--num-virtual-stages-per-pipeline-rank"), p->l.vpp);
    if (p->l.sp)
        assert_non_null(flag_value(&f, "--sequence-parallel"));
    if (ds)
        assert_int_equal(flag_int(&f, "--zero-stage"), p->l.zero);
    else
        assert_int_equal(flag_value(&f, "--use-distributed-optimizer") != NULL, p->l.zero == 1);
}

/* "    --flag value \\" lines of the torchrun command and "#SBATCH --flag=value" lines. */
static void check_launch(const char *text, const struct plan *p, bool slurm)
{
    long long nnodes = -1, nproc = -1, sb_nodes = -1, sb_gpus = -1;
    for (const char *s = text; *s;) {
        size_t n = strcspn(s, "\n");
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), s);
        s += n + (s[n] == '\n');
        char *t = line + strspn(line, " ");
        bool sbatch = strncmp(t, "#SBATCH ", 8) == 0;
        if (sbatch)
            t += 8;
        else if (strncmp(t, "--", 2) != 0 && strncmp(t, "-m ", 3) != 0)
            continue;
        char flag[64];
        size_t fl = strcspn(t, " =");
        snprintf(flag, sizeof flag, "%.*s", (int)fl, t);
        if (!known(LAUNCH_FLAGS, N_OF(LAUNCH_FLAGS), flag))
            fail_msg("%s is not a torchrun/sbatch flag", flag);
        long long v = strtoll(t + fl + (t[fl] != '\0'), NULL, 10);
        if (sbatch && strcmp(flag, "--nodes") == 0)
            sb_nodes = v;
        if (sbatch && strcmp(flag, "--gpus-per-node") == 0)
            sb_gpus = v;
        if (!sbatch && strcmp(flag, "--nnodes") == 0)
            nnodes = v;
        if (!sbatch && strcmp(flag, "--nproc-per-node") == 0)
            nproc = v;
    }
    assert_int_equal(nnodes * nproc, p->c.n_gpus);
    if (slurm) {
        assert_int_equal(sb_nodes, nnodes);
        assert_int_equal(sb_gpus, nproc);
    }
}

/* ---- the users' scenarios ----------------------------------------------------------------- */

/* Notes 000: Llama 3.3 70B SFT with Axolotl + ZeRO-3 on 8 x MI300X, mbs 6 x gas 3 = 144,
   AdamW-8bit, gradient checkpointing, Liger's fused cross-entropy. */
static void test_llama70b_axolotl(void **state)
{
    (void)state;
    static struct plan p;
    plan_init(&p, "llama-3.3-70b", "mi300x", 8, TP_FW_AXOLOTL, 8192);
    p.j.task = TP_TASK_SFT;
    p.j.optimizer = TP_OPT_ADAMW_8BIT;
    p.j.fused_loss = true;
    p.l.zero = 3;
    p.l.mbs = 6;
    p.l.gas = 3;
    p.l.recompute = TP_RECOMPUTE_FULL;
    static struct tp_export x;
    build(&p, TP_EXPORT_AXOLOTL, &x);
    assert_int_equal(x.n_files, 3); /* axolotl.yaml, ds_config.json, launch.sh */
    assert_string_equal(x.files[0].name, TP_EXPORT_AXOLOTL_FILE);
    yaml_document_t doc;
    load_yaml(x.files[0].text, &doc);
    assert_string_equal(yscalar(&doc, "base_model"), "meta-llama/Llama-3.3-70B-Instruct");
    assert_int_equal(yint(&doc, "sequence_len"), 8192);
    assert_int_equal(yint(&doc, "micro_batch_size"), 6);
    assert_int_equal(yint(&doc, "gradient_accumulation_steps"), 3);
    assert_string_equal(yscalar(&doc, "optimizer"), "adamw_bnb_8bit");
    assert_string_equal(yscalar(&doc, "gradient_checkpointing"), "true");
    assert_string_equal(yscalar(&doc, "flash_attention"), "true");
    assert_string_equal(yscalar(&doc, "bf16"), "true");
    assert_string_equal(yscalar(&doc, "liger_fused_linear_cross_entropy"), "true");
    assert_string_equal(yscalar(&doc, "deepspeed"), TP_EXPORT_DS_FILE);
    json_t *ds = check_ds(file(&x, TP_EXPORT_DS_FILE), &p);
    /* the batch identity across the two files: 6 x 3 x 8 = 144, the notes' global batch */
    assert_int_equal(json_integer_value(json_object_get(ds, "train_batch_size")),
                     yint(&doc, "micro_batch_size") * yint(&doc, "gradient_accumulation_steps") * 8);
    assert_int_equal(json_integer_value(json_object_get(ds, "train_batch_size")), 144);
    json_decref(ds);
    yaml_document_delete(&doc);
    check_launch(file(&x, TP_EXPORT_TORCHRUN_FILE), &p, false);
    tp_export_free(&x);
}

/* DeepSpeed's ZeRO-3 extensions as planned: a shard group is MiCS (the states sharded in
   groups, replicated across: mics_shard_size), hpZ, qwZ and qgZ are ZeRO++
   (zero_hpz_partition_size, zero_quantized_weights, zero_quantized_gradients). */
static void test_zeropp_mics(void **state)
{
    (void)state;
    static struct plan p;
    plan_init(&p, "llama-3.1-8b", "h100-sxm", 16, TP_FW_DEEPSPEED, 4096);
    p.l.zero = 3;
    p.l.recompute = TP_RECOMPUTE_FULL;
    for (int zpp = 0; zpp <= 1; zpp++) {
        p.l.shard_group = zpp ? 0 : 8;
        p.l.hpz = zpp ? 8 : 0;
        p.j.zero_quant_weights = p.j.zero_quant_grads = zpp;
        static struct tp_export x;
        build(&p, TP_EXPORT_DEEPSPEED, &x);
        json_t *ds = check_ds(file(&x, TP_EXPORT_DS_FILE), &p);
        json_t *z = json_object_get(ds, "zero_optimization");
        assert_int_equal(json_integer_value(json_object_get(z, "mics_shard_size")), zpp ? 0 : 8);
        assert_int_equal(json_is_true(json_object_get(z, "mics_hierarchical_params_gather")), !zpp);
        assert_int_equal(json_integer_value(json_object_get(z, "zero_hpz_partition_size")),
                         zpp ? 8 : 0);
        assert_int_equal(json_is_true(json_object_get(z, "zero_quantized_weights")), zpp);
        assert_int_equal(json_is_true(json_object_get(z, "zero_quantized_gradients")), zpp);
        json_decref(ds);
        tp_export_free(&x);
    }
}

/* Notes 000/001: GLM-4.5-Air (ZeRO-3) and Qwen3-30B-A3B (ZeRO-2, run 095) with Axolotl on
   8 x MI300X; QLoRA and FSDP2 variants of the same. */
static void test_moe_axolotl(void **state)
{
    (void)state;
    static struct plan p;
    static struct tp_export x;
    plan_init(&p, "glm-4.5-air", "mi300x", 8, TP_FW_AXOLOTL, 8192);
    p.j.task = TP_TASK_SFT;
    p.j.optimizer = TP_OPT_ADAMW_8BIT;
    p.l.zero = 3;
    p.l.mbs = 1;
    p.l.gas = 2;
    p.l.recompute = TP_RECOMPUTE_FULL;
    p.l.offload = TP_OFFLOAD_OPTIMIZER;
    build(&p, TP_EXPORT_DEEPSPEED, &x);
    json_decref(check_ds(x.files[0].text, &p));
    assert_non_null(strstr(x.notes, "CPU Adam")); /* bnb 8-bit does not run on the CPU */
    tp_export_free(&x);

    plan_init(&p, "qwen3-30b-a3b", "mi300x", 8, TP_FW_AXOLOTL, 8192);
    p.j.task = TP_TASK_SFT;
    p.j.optimizer = TP_OPT_ADAMW_8BIT;
    p.j.fused_loss = true;
    p.l.zero = 2;
    p.l.mbs = 16;
    p.l.recompute = TP_RECOMPUTE_FULL;
    build(&p, TP_EXPORT_AXOLOTL, &x);
    yaml_document_t doc;
    load_yaml(x.files[0].text, &doc);
    assert_int_equal(yint(&doc, "micro_batch_size"), 16);
    assert_int_equal(yint(&doc, "gradient_accumulation_steps"), 1);
    yaml_document_delete(&doc);
    json_decref(check_ds(file(&x, TP_EXPORT_DS_FILE), &p));
    tp_export_free(&x);

    p.j.task = TP_TASK_QLORA;
    p.j.lora_rank = 64;
    p.j.framework = TP_FW_FSDP;
    p.l.zero = 3;
    build(&p, TP_EXPORT_AXOLOTL, &x);
    load_yaml(x.files[0].text, &doc);
    assert_string_equal(yscalar(&doc, "adapter"), "qlora");
    assert_string_equal(yscalar(&doc, "load_in_4bit"), "true");
    assert_int_equal(yint(&doc, "lora_r"), 64);
    assert_int_equal(yint(&doc, "fsdp_version"), 2);
    yaml_node_t *fsdp = ymap_get(&doc, yaml_document_get_root_node(&doc), "fsdp_config");
    assert_non_null(fsdp);
    yaml_node_t *cls = ymap_get(&doc, fsdp, "transformer_layer_cls_to_wrap");
    assert_string_equal((const char *)cls->data.scalar.value, "Qwen3MoeDecoderLayer");
    assert_null(yscalar(&doc, "deepspeed"));
    yaml_document_delete(&doc);
    assert_int_equal(x.n_files, 2); /* no DeepSpeed JSON under FSDP */
    tp_export_free(&x);
}

/* BLOOM 176B as trained: Megatron-DeepSpeed on 384 A100 80GB, tp 4 x pp 12 x dp 8, mbs 2,
   global batch 2048, seq 2048, ZeRO-1, bf16, full recompute (arXiv:2211.05100 §3.4). */
static void test_bloom_megatron_deepspeed(void **state)
{
    (void)state;
    static struct plan p;
    static struct tp_export x;
    plan_init(&p, "bloom-176b", "a100-80gb", 384, TP_FW_MEGATRON_DS, 2048);
    p.l.tp = 4;
    p.l.pp = 12;
    p.l.mbs = 2;
    p.l.gas = 128;
    p.l.zero = 1;
    p.l.recompute = TP_RECOMPUTE_FULL;
    build(&p, TP_EXPORT_MEGATRON, &x);
    assert_int_equal(p.l.dp, 8);
    check_megatron(x.files[0].text, &p, true);
    json_t *ds = check_ds(file(&x, TP_EXPORT_DS_FILE), &p);
    assert_int_equal(json_integer_value(json_object_get(ds, "train_batch_size")), 2048);
    assert_non_null(json_object_get(ds, "activation_checkpointing"));
    json_decref(ds);
    assert_non_null(strstr(x.notes, "ALiBi")); /* not in deepspeedai's parser: said */
    tp_export_free(&x);

    build(&p, TP_EXPORT_SLURM, &x);
    assert_string_equal(x.files[0].name, TP_EXPORT_SLURM_FILE);
    check_launch(x.files[0].text, &p, true); /* 48 nodes x 8 */
    assert_non_null(strstr(x.files[0].text, "#SBATCH --nodes=48\n"));
    check_megatron(file(&x, TP_EXPORT_MEGATRON_FILE), &p, true);
    tp_export_free(&x);
}

/* A Megatron-Core MoE run: Qwen3-30B-A3B on 64 H100, tp 2 pp 4 vpp 2 ep 4, SP, distributed
   optimizer; and GLM-4.5-Air, whose first block is dense (--moe-layer-freq pattern). */
static void test_megatron_core_moe(void **state)
{
    (void)state;
    static struct plan p;
    static struct tp_export x;
    plan_init(&p, "qwen3-30b-a3b", "h100-sxm", 64, TP_FW_MEGATRON, 4096);
    p.l.tp = 2;
    p.l.pp = 4;
    p.l.vpp = 2;
    p.l.ep = 4;
    p.l.sp = true;
    p.l.zero = 1;
    p.l.mbs = 1;
    p.l.gas = 16;
    p.l.schedule = TP_SCHED_INTERLEAVED;
    p.l.recompute = TP_RECOMPUTE_SELECTIVE;
    p.j.precision = TP_PREC_FP8;
    build(&p, TP_EXPORT_MEGATRON, &x);
    check_megatron(x.files[0].text, &p, false);
    static struct flags f;
    parse_args(x.files[0].text, &f);
    assert_string_equal(flag_value(&f, "--fp8-format"), "hybrid");
    assert_int_equal(flag_int(&f, "--num-experts"), 128);
    assert_int_equal(flag_int(&f, "--moe-router-topk"), 8);
    assert_int_equal(flag_int(&f, "--num-query-groups"), 4);
    assert_null(flag_value(&f, "--moe-layer-freq")); /* every block is MoE */
    const char *launch = file(&x, TP_EXPORT_TORCHRUN_FILE);
    check_launch(launch, &p, false);
    assert_non_null(strstr(launch, "CUDA_DEVICE_MAX_CONNECTIONS=1"));
    assert_null(flag_value(&f, "--overlap-moe-expert-parallel-comm"));
    tp_export_free(&x);

    /* the EP all-to-all overlap: both of Megatron-Bridge's moe_a2a_overlap flags, and the
       larger CUDA_DEVICE_MAX_CONNECTIONS its streams want */
    p.j.moe_a2a_overlap = true;
    build(&p, TP_EXPORT_MEGATRON, &x);
    check_megatron(x.files[0].text, &p, false);
    parse_args(x.files[0].text, &f);
    assert_non_null(strstr(x.files[0].text, "--overlap-moe-expert-parallel-comm"));
    assert_non_null(strstr(x.files[0].text, "--delay-wgrad-compute"));
    assert_non_null(strstr(file(&x, TP_EXPORT_TORCHRUN_FILE), "CUDA_DEVICE_MAX_CONNECTIONS=32"));
    tp_export_free(&x);

    /* per-layer CUDA graphs of a dropless MoE: TE's graphs of the attention and the router
       (docs/user-guide/features/cuda_graph.md's MoE example); a whole iteration once padded */
    p.j.cuda_graphs = TP_CUDA_GRAPHS_LAYER;
    build(&p, TP_EXPORT_MEGATRON, &x);
    check_megatron(x.files[0].text, &p, false);
    assert_non_null(strstr(x.files[0].text, "--cuda-graph-impl transformer_engine\n"));
    assert_non_null(strstr(x.files[0].text, "--cuda-graph-scope attn moe_router moe_preprocess\n"));
    tp_export_free(&x);
    p.j.cuda_graphs = TP_CUDA_GRAPHS_FULL;
    p.j.moe_capacity = 1.0;
    p.j.moe_pad_capacity = true;
    build(&p, TP_EXPORT_MEGATRON, &x);
    check_megatron(x.files[0].text, &p, false);
    assert_non_null(strstr(x.files[0].text, "--cuda-graph-impl local\n"));
    assert_non_null(strstr(x.files[0].text, "--cuda-graph-scope full_iteration\n"));
    assert_non_null(strstr(x.files[0].text, "--no-check-for-nan-in-loss-and-grad\n"));
    tp_export_free(&x);
    p.j.moe_a2a_overlap = false;

    plan_init(&p, "glm-4.5-air", "h100-sxm", 64, TP_FW_MEGATRON, 4096);
    p.l.tp = 1;
    p.l.pp = 4;
    p.l.pp_first = 11;
    p.l.pp_last = 11;
    p.l.ep = 8;
    p.l.zero = 1;
    p.l.mbs = 1;
    p.l.gas = 32;
    p.l.recompute = TP_RECOMPUTE_FULL;
    p.l.recompute_layers = 4;
    build(&p, TP_EXPORT_MEGATRON, &x);
    check_megatron(x.files[0].text, &p, false);
    parse_args(x.files[0].text, &f);
    /* GLM-4.5-Air config.json: first_k_dense_replace 1, 46 layers */
    assert_string_equal(flag_value(&f, "--moe-layer-freq"), "\"([0]*1+[1]*45)\"");
    assert_int_equal(flag_int(&f, "--decoder-first-pipeline-num-layers"), 11);
    assert_string_equal(flag_value(&f, "--recompute-method"), "block");
    assert_int_equal(flag_int(&f, "--recompute-num-layers"), 4);
    tp_export_free(&x);
}

/* What a target cannot run is refused with the reason, never exported wrong. */
static void test_refusals(void **state)
{
    (void)state;
    static struct plan p;
    static struct tp_export x;
    struct tp_error err = {{0}, {0}};
    plan_init(&p, "llama-3.1-8b", "h100-sxm", 16, TP_FW_DEEPSPEED, 4096);
    p.l.tp = 2;
    plan_check(&p);
    assert_int_equal(tp_export_build(TP_EXPORT_DEEPSPEED, &p.m, &p.c, &p.j, &p.l, NULL, &x, &err),
                     TP_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "data parallel"));
    assert_int_equal(x.n_files, 0);
    /* DeepSpeed's pipeline engine: ZeRO-2/3 are incompatible with pipeline parallelism */
    plan_init(&p, "llama-3.1-8b", "h100-sxm", 16, TP_FW_DEEPSPEED, 4096);
    p.l.pp = 2;
    p.l.zero = 2;
    plan_check(&p);
    assert_int_equal(tp_export_build(TP_EXPORT_MEGATRON_DS, &p.m, &p.c, &p.j, &p.l, NULL, &x,
                                     &err), TP_EUNSUPPORTED);
    /* Megatron has no 8-bit AdamW */
    plan_init(&p, "llama-3.1-8b", "h100-sxm", 8, TP_FW_MEGATRON, 4096);
    p.j.optimizer = TP_OPT_ADAMW_8BIT;
    plan_check(&p);
    assert_int_equal(tp_export_build(TP_EXPORT_MEGATRON, &p.m, &p.c, &p.j, &p.l, NULL, &x, &err),
                     TP_EUNSUPPORTED);
    enum tp_export_format f;
    assert_int_equal(tp_export_format_find("nemo", &f, &err), TP_ENOTFOUND);
    assert_int_equal(tp_export_format_find("megatron-deepspeed", &f, &err), TP_OK);
    assert_int_equal(f, TP_EXPORT_MEGATRON_DS);
}

static void test_base_model(void **state)
{
    (void)state;
    static struct tp_model m;
    char buf[256];
    tp_model_init(&m);
    snprintf(m.source, sizeof m.source, "/root/.cache/huggingface/hub/models--zai-org--GLM-4.5-Air/"
                                        "snapshots/a24ceef6/config.json");
    tp_export_base_model(&m, buf, sizeof buf);
    assert_string_equal(buf, "zai-org/GLM-4.5-Air");
    snprintf(m.source, sizeof m.source, "Qwen/Qwen3-30B-A3B config.json");
    tp_export_base_model(&m, buf, sizeof buf);
    assert_string_equal(buf, "Qwen/Qwen3-30B-A3B");
    snprintf(m.source, sizeof m.source, "/data/models/mine/config.json");
    assert_int_equal(tp_export_base_model(&m, buf, sizeof buf), TP_BASE_PATH);
    assert_string_equal(buf, "/data/models/mine");
    /* a preset described rather than named by an id (the users' from-scratch designs): its name,
       never the description, which once became a tokenizer default and broke the script's
       quoting */
    snprintf(m.name, sizeof m.name, "llama2-1.36b");
    snprintf(m.source, sizeof m.source, "users' notes 002 (config/full_llama_1.36b.py: ...)");
    assert_int_equal(tp_export_base_model(&m, buf, sizeof buf), TP_BASE_NONE);
    assert_string_equal(buf, "llama2-1.36b");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llama70b_axolotl), cmocka_unit_test(test_zeropp_mics),
        cmocka_unit_test(test_moe_axolotl),
        cmocka_unit_test(test_bloom_megatron_deepspeed),
        cmocka_unit_test(test_megatron_core_moe),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_base_model),
    };
    return cmocka_run_group_tests_name("export", tests, NULL, NULL);
}
