/*
 * export_axolotl.c - the Axolotl YAML of a plan, and the DeepSpeed JSON (or FSDP block) it
 * points at.
 *
 * The document is built as a jansson tree (keys in the order written) and emitted with
 * libyaml's emitter.  Keys are the fields of Axolotl's config schema
 * (src/axolotl/utils/schemas/config.py, training.py, model.py, peft.py, fsdp.py) and of the
 * Liger plugin (src/axolotl/integrations/liger/args.py); optimizer names are the Hugging Face
 * Trainer's (transformers OptimizerNames: adamw_torch_fused, adamw_bnb_8bit,
 * adamw_torch_4bit, adafactor, sgd).
 */
#include "export_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---- a jansson tree as YAML (libyaml emitter) ------------------------------------------- */

static int sbuf_write(void *data, unsigned char *buffer, size_t size)
{
    struct tp_sbuf *b = data;
    tp_sbuf_append(b, (const char *)buffer, size);
    return !b->failed;
}

/* Would a plain scalar `s` be read back as something other than a string (YAML 1.1 core
   resolution: numbers, booleans, null)?  Then it is double-quoted. */
static bool needs_quotes(const char *s)
{
    static const char *const words[] = {"", "~", "null", "true", "false", "yes", "no", "on",
                                        "off", "y", "n"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (tp_streq_ci(s, words[i]))
            return true;
    char *end;
    (void)tp_strtod(s, &end);
    return *end == '\0' || strchr("-+.0123456789", s[0]) != NULL;
}

static int emit_scalar(yaml_emitter_t *e, const char *text, bool quoted)
{
    yaml_event_t ev;
    yaml_scalar_style_t style = quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE;
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)(uintptr_t)text,
                                      (int)strlen(text), !quoted, quoted, style))
        return 0;
    return yaml_emitter_emit(e, &ev);
}

static int emit_node(yaml_emitter_t *e, json_t *v)
{
    yaml_event_t ev;
    char num[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
            !yaml_emitter_emit(e, &ev))
            return 0;
        const char *key;
        json_t *val;
        json_object_foreach(v, key, val)
            if (!emit_scalar(e, key, needs_quotes(key)) || !emit_node(e, val))
                return 0;
        return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
    }
    case JSON_ARRAY: {
        if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
            !yaml_emitter_emit(e, &ev))
            return 0;
        size_t i;
        json_t *val;
        json_array_foreach(v, i, val)
            if (!emit_node(e, val))
                return 0;
        return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
    }
    case JSON_STRING:
        return emit_scalar(e, json_string_value(v), needs_quotes(json_string_value(v)));
    case JSON_INTEGER:
        tp_snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
        return emit_scalar(e, num, false);
    case JSON_REAL:
        /* the shortest of %.15g / %.17g that reads back as the same double */
        tp_snprintf(num, sizeof num, "%.15g", json_real_value(v));
        if (tp_strtod(num, NULL) != json_real_value(v))
            tp_snprintf(num, sizeof num, "%.17g", json_real_value(v));
        /* keep it a float under YAML 1.1 (PyYAML's float needs a '.'): 1 -> 1.0,
           2e-05 -> 2.0e-05 */
        if (!strpbrk(num, ".n")) {
            char *exp = strpbrk(num, "eE");
            size_t at = exp ? (size_t)(exp - num) : strlen(num);
            memmove(num + at + 2, num + at, strlen(num + at) + 1);
            memcpy(num + at, ".0", 2);
        }
        return emit_scalar(e, num, false);
    case JSON_TRUE:
        return emit_scalar(e, "true", false);
    case JSON_FALSE:
        return emit_scalar(e, "false", false);
    case JSON_NULL:
        return emit_scalar(e, "null", false);
    }
    return 0;
}

/* `doc` (a mapping) as one YAML document; NULL on failure. */
static char *yaml_text(json_t *doc)
{
    struct tp_sbuf b = {0};
    yaml_emitter_t e;
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&e))
        return NULL;
    yaml_emitter_set_output(&e, sbuf_write, &b);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_width(&e, 100);
    int ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) &&
             yaml_emitter_emit(&e, &ev) &&
             yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) &&
             yaml_emitter_emit(&e, &ev) && emit_node(&e, doc) &&
             yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&e, &ev) &&
             yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&e, &ev) &&
             yaml_emitter_flush(&e);
    yaml_emitter_delete(&e);
    if (!ok || b.failed) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* ---- the Axolotl document --------------------------------------------------------------- */

static const char *optimizer_name(enum tp_optimizer o)
{
    switch (o) {
    case TP_OPT_ADAMW: return "adamw_torch_fused"; /* Axolotl's default (schemas/training.py) */
    case TP_OPT_ADAMW_8BIT: return "adamw_bnb_8bit";
    case TP_OPT_ADAMW_4BIT: return "adamw_torch_4bit";
    case TP_OPT_ADAFACTOR: return "adafactor";
    case TP_OPT_SGD:
    case TP_OPT_SGD_MOMENTUM: return "sgd";
    case TP_OPT_ADAMW_BF16: return "adamw_torch"; /* on a bf16 model without amp */
    }
    return "adamw_torch_fused";
}

/* The Hugging Face decoder-layer class FSDP wraps, by model_type (transformers modeling_*.py). */
static const char *layer_class(const char *family)
{
    static const struct {
        const char *family, *cls;
    } map[] = {{"llama", "LlamaDecoderLayer"},       {"mistral", "MistralDecoderLayer"},
               {"mixtral", "MixtralDecoderLayer"},   {"qwen2", "Qwen2DecoderLayer"},
               {"qwen2_moe", "Qwen2MoeDecoderLayer"}, {"qwen3", "Qwen3DecoderLayer"},
               {"qwen3_moe", "Qwen3MoeDecoderLayer"}, {"gemma2", "Gemma2DecoderLayer"},
               {"gemma3", "Gemma3DecoderLayer"},     {"gemma3_text", "Gemma3DecoderLayer"},
               {"phi3", "Phi3DecoderLayer"},         {"glm4_moe", "Glm4MoeDecoderLayer"},
               {"deepseek_v2", "DeepseekV2DecoderLayer"},
               {"deepseek_v3", "DeepseekV3DecoderLayer"},
               {"gpt_oss", "GptOssDecoderLayer"},    {"gpt2", "GPT2Block"},
               {"bloom", "BloomBlock"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i].family, family) == 0)
            return map[i].cls;
    return NULL;
}

static json_t *lora_targets(uint32_t mask)
{
    static const char *const names[] = {"q_proj", "k_proj", "v_proj", "o_proj",
                                        "gate_proj", "up_proj", "down_proj"};
    json_t *a = json_array();
    for (unsigned i = 0; i < 7; i++)
        if (mask & (1u << i))
            json_array_append_new(a, json_string(names[i]));
    return a;
}

static void attention_keys(const struct tp_export_plan *p, json_t *d)
{
    switch (p->j->attn_impl) {
    case TP_ATTN_FLASH:
    case TP_ATTN_FLASH2:
        json_object_set_new(d, "flash_attention", json_true());
        break;
    case TP_ATTN_FLASH1:
        /* Axolotl's flash_attention patches call flash-attn 2's varlen kernels; PyTorch 2.0-2.1's
           SDPA flash backend is FlashAttention 1.x */
        json_object_set_new(d, "sdp_attention", json_true());
        tp_export_note(p->out, "attention flash1: sdp_attention on PyTorch 2.0-2.1 runs "
                               "FlashAttention 1.x (flash_attention: true needs flash-attn 2)");
        break;
    case TP_ATTN_CUDNN919: /* PyTorch SDPA's cuDNN backend: no Axolotl key picks it */
    case TP_ATTN_FLASH3:
        /* Axolotl's flash_attention loads flash-attn; FA3 is picked by the package installed */
        json_object_set_new(d, "flash_attention", json_true());
        tp_export_note(p->out, "attention flash3: install FlashAttention-3 (hopper); "
                               "flash_attention: true uses the flash-attn package found");
        break;
    case TP_ATTN_EAGER:
        json_object_set_new(d, "eager_attention", json_true());
        break;
    case TP_ATTN_FLEX:
        json_object_set_new(d, "flex_attention", json_true());
        break;
    }
}

static void precision_keys(const struct tp_export_plan *p, json_t *d)
{
    enum tp_precision pr = p->j->precision;
    json_object_set_new(d, "bf16", json_boolean(pr == TP_PREC_BF16));
    if (pr == TP_PREC_FP16)
        json_object_set_new(d, "fp16", json_true());
}

static void recompute_keys(const struct tp_export_plan *p, json_t *d, bool fsdp)
{
    const struct tp_layout *l = p->l;
    bool full = l->recompute == TP_RECOMPUTE_FULL;
    if (l->recompute == TP_RECOMPUTE_SELECTIVE)
        tp_export_note(p->out, "selective recompute (attention core) has no Hugging Face "
                               "switch; with flash attention nothing quadratic is stored, so "
                               "gradient checkpointing stays off");
    if (full && l->recompute_layers)
        tp_export_note(p->out, "full recompute of %u blocks per stage: Hugging Face "
                               "checkpoints every block (more recompute than planned)",
                       l->recompute_layers);
    if (fsdp && full)
        return; /* FSDP2 checkpoints through fsdp_config.activation_checkpointing */
    json_object_set_new(d, "gradient_checkpointing", json_boolean(full));
    if (full)
        json_object_set_new(d, "gradient_checkpointing_kwargs",
                            json_pack("{s:b}", "use_reentrant", 0));
}

static void task_keys(const struct tp_export_plan *p, json_t *d)
{
    const struct tp_job *j = p->j;
    if (j->task == TP_TASK_DPO)
        json_object_set_new(d, "rl", json_string("dpo"));
    if (j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA) {
        json_object_set_new(d, "adapter", json_string(j->task == TP_TASK_QLORA ? "qlora" : "lora"));
        if (j->task == TP_TASK_QLORA)
            json_object_set_new(d, "load_in_4bit", json_true());
        json_object_set_new(d, "lora_r", json_integer(j->lora_rank));
        json_object_set_new(d, "lora_dropout", json_real(0.0));
        json_object_set_new(d, "lora_target_modules", lora_targets(j->lora_targets));
    }
}

static json_t *fsdp_block(const struct tp_export_plan *p)
{
    const struct tp_layout *l = p->l;
    json_t *f = json_object();
    json_object_set_new(f, "offload_params", json_boolean(l->offload != TP_OFFLOAD_NONE));
    json_object_set_new(f, "reshard_after_forward", json_boolean(l->zero >= 3));
    json_object_set_new(f, "state_dict_type", json_string("FULL_STATE_DICT"));
    const char *cls = layer_class(p->m->family);
    json_object_set_new(f, "auto_wrap_policy", json_string("TRANSFORMER_BASED_WRAP"));
    if (cls)
        json_object_set_new(f, "transformer_layer_cls_to_wrap", json_string(cls));
    else
        tp_export_note(p->out, "model_type %s: set fsdp_config.transformer_layer_cls_to_wrap "
                               "to its decoder-layer class", p->m->family);
    json_object_set_new(f, "activation_checkpointing",
                        json_boolean(l->recompute == TP_RECOMPUTE_FULL));
    return f;
}

enum tp_status tp_export_axolotl(const struct tp_export_plan *p, struct tp_error *err)
{
    const struct tp_layout *l = p->l;
    bool fsdp = p->j->framework == TP_FW_FSDP || p->j->framework == TP_FW_TORCHTITAN ||
                p->j->fsdp_backend;
    json_t *ds = NULL;
    if (l->zero > 0 && !fsdp) {
        enum tp_status st;
        ds = tp_export_deepspeed_doc(p, true, false, &st, err);
        if (!ds)
            return st != TP_OK ? st : tp_fail(err, TP_ENOMEM, "out of memory");
    } else if (l->tp > 1 || l->pp > 1 || l->cp > 1 || l->ep > 1) {
        return tp_fail(err, TP_EUNSUPPORTED,
                       "tp %u pp %u cp %u ep %u: the Axolotl export runs data parallel (DDP, "
                       "ZeRO or FSDP) only; export a layout with tp = pp = cp = ep = 1",
                       l->tp, l->pp, l->cp, l->ep);
    }
    if (fsdp && l->zero == 1)
        return tp_fail(err, TP_EUNSUPPORTED, "ZeRO-1 has no FSDP strategy (FSDP shards "
                                             "gradients too): plan zero=2 or 3");
    if ((tp_prec_gemm_dtype(p->j->precision) == TP_FP8 ||
         tp_prec_gemm_dtype(p->j->precision) == TP_FP4) && !ds)
        return tp_fail(err, TP_EUNSUPPORTED, "the Axolotl export writes bf16, fp16 or fp32");
    char base[256];
    bool no_id = false; /* the model's name stands in: the note below asks for the id */
    if (p->o->base_model)
        tp_snprintf(base, sizeof base, "%s", p->o->base_model);
    else
        no_id = tp_export_base_model(p->m, base, sizeof base) == TP_BASE_NONE;
    json_t *d = json_object();
    json_object_set_new(d, "base_model", json_string(base));
    json_object_set_new(d, "sequence_len", json_integer((json_int_t)p->j->seq));
    if (p->j->task != TP_TASK_DPO) { /* the plan counts every sample a full sequence */
        json_object_set_new(d, "sample_packing", json_true());
        json_object_set_new(d, "pad_to_sequence_len", json_true());
    }
    json_object_set_new(d, "micro_batch_size", json_integer(l->mbs));
    json_object_set_new(d, "gradient_accumulation_steps", json_integer(l->gas));
    task_keys(p, d);
    json_object_set_new(d, "optimizer", json_string(optimizer_name(p->j->optimizer)));
    if (p->j->optimizer == TP_OPT_SGD_MOMENTUM)
        json_object_set_new(d, "optim_args", json_pack("{s:f}", "momentum", 0.9));
    json_object_set_new(d, "max_grad_norm", json_real(1.0));
    precision_keys(p, d);
    attention_keys(p, d);
    recompute_keys(p, d, fsdp);
    if (p->j->fused_loss) {
        json_object_set_new(d, "plugins",
                            json_pack("[s]", "axolotl.integrations.liger.LigerPlugin"));
        json_object_set_new(d, "liger_fused_linear_cross_entropy", json_true());
    }
    if (ds) {
        json_object_set_new(d, "deepspeed", json_string(TP_EXPORT_DS_FILE));
    } else if (fsdp && l->zero >= 2) {
        json_object_set_new(d, "fsdp_version", json_integer(2));
        json_object_set_new(d, "fsdp_config", fsdp_block(p));
    }
    if (no_id)
        tp_export_note(p->out, "base_model: set the model's Hugging Face id or path");
    tp_export_note(p->out, "add datasets (and output_dir) to %s: the launch script stops "
                           "until it has them", TP_EXPORT_AXOLOTL_FILE);
    tp_export_train_axolotl(p, d);
    char *text = yaml_text(d);
    json_decref(d);
    enum tp_status st = tp_export_add(p->out, TP_EXPORT_AXOLOTL_FILE, text, err);
    if (st != TP_OK) {
        json_decref(ds);
        return st;
    }
    return ds ? tp_export_add_json(p->out, ds, err) : TP_OK;
}
