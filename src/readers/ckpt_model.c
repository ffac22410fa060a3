/*
 * ckpt_model.c - a checkpoint's tensors against the model's, by Hugging Face name.
 *
 * The params core lists every tensor of a block under its Hugging Face module name
 * ("self_attn.q_proj.weight", "mlp.experts.gate_proj.weight" with a count); a checkpoint of
 * the Llama-style families stores them as "model.layers.{i}.<name>", routed experts one per
 * index ("model.layers.{i}.mlp.experts.{e}.gate_proj.weight"), the embedding and final norm
 * under "model." and the head as "lm_head.weight" (transformers modeling_llama.py,
 * modeling_qwen3_moe.py: LlamaModel.embed_tokens / layers / norm, LlamaForCausalLM.lm_head).
 * Weights are [out_features, in_features] (torch.nn.Linear), so a (rows x cols) tensor of the
 * core is stored with shape [rows, cols] and a vector with shape [rows].  Families whose
 * checkpoints name or fuse tensors otherwise (GPT-2 c_attn, BLOOM query_key_value, Phi-3
 * qkv_proj, Mixtral block_sparse_moe, gpt-oss fused experts, ...) are compared by their total
 * only.
 */
#include "ckpt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Families whose checkpoint names are the core's names as above. */
static bool names_follow_core(const struct tp_model *m)
{
    static const char *const fams[] = {"llama", "mistral", "qwen2", "qwen3", "qwen3_moe",
                                       "custom"};
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++)
        if (strcmp(m->family, fams[i]) == 0)
            return true;
    return false;
}

enum tp_component tp_ckpt_component(const char *n)
{
    if (strstr(n, "e_score_correction_bias"))
        return TP_COMP_COUNT; /* a buffer, not a parameter of the breakdown */
    if (strstr(n, "lm_head") || strcmp(n, "output.weight") == 0)
        return TP_COMP_HEAD;
    if (strstr(n, "embeddings_layernorm") || strstr(n, "embed_layernorm"))
        return TP_COMP_NORMS;
    if (strstr(n, "embed_tokens") || strstr(n, "wte.") || strstr(n, "word_embeddings") ||
        strstr(n, "tok_embeddings") || strstr(n, "backbone.embeddings."))
        return TP_COMP_EMBEDDING;
    if (strstr(n, "embed_positions") || strstr(n, "wpe."))
        return TP_COMP_POSITION;
    /* Nemotron-H keeps every block's module under "mixer.": Mamba-2 and attention count as
       attention (the core's token mixers), its MLP and MoE by their names below */
    bool mlp_mixer = strstr(n, "mixer.up_proj") || strstr(n, "mixer.down_proj") ||
                     strstr(n, "mixer.experts.") || strstr(n, "mixer.shared_experts.") ||
                     strstr(n, "mixer.gate.");
    bool in_attn = strstr(n, "attn.") || strstr(n, "attention.") ||
                   (strstr(n, "mixer.") && !mlp_mixer);
    if ((strstr(n, "norm") || strstr(n, "ln_")) && !in_attn)
        return TP_COMP_NORMS; /* block and final norms; q/k norms belong to attention */
    if (in_attn)
        return TP_COMP_ATTENTION;
    if (strstr(n, "shared_expert"))
        return TP_COMP_SHARED;
    if (strstr(n, ".experts."))
        return TP_COMP_EXPERTS;
    if (strstr(n, "mlp.gate.") || strstr(n, "router") || strstr(n, "block_sparse_moe.gate.") ||
        strstr(n, "mixer.gate."))
        return TP_COMP_ROUTER;
    if (strstr(n, "norm") || strstr(n, "ln_"))
        return TP_COMP_NORMS;
    if (strstr(n, "mlp") || strstr(n, "feed_forward") || strstr(n, "ffn") || mlp_mixer)
        return TP_COMP_MLP;
    return TP_COMP_COUNT;
}

struct want {
    char *name;
    uint32_t ndim;
    uint64_t shape[2];
};

struct wants {
    struct want *v;
    size_t n, cap;
};

static bool want_add(struct wants *w, const char *name, const struct tp_tensor *t)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 1024;
        struct want *v = realloc(w->v, cap * sizeof *v);
        if (!v)
            return false;
        w->v = v;
        w->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return false;
    w->v[w->n++] = (struct want){copy, t->cols == 1 ? 1u : 2u, {t->rows, t->cols}};
    return true;
}

/* The tensors of block `layer` under their checkpoint names. */
static bool want_block(struct wants *w, const struct tp_model *m, uint32_t layer)
{
    struct tp_tensor t[TP_MAX_BLOCK_TENSORS];
    size_t n = tp_block_tensors(m, layer, t);
    char name[256];
    static const char experts[] = "mlp.experts.";
    for (size_t i = 0; i < n; i++) {
        bool stacked = t[i].comp == TP_COMP_EXPERTS &&
                       strncmp(t[i].name, experts, sizeof experts - 1) == 0;
        if (!stacked) {
            tp_snprintf(name, sizeof name, "model.layers.%u.%s", layer, t[i].name);
            if (!want_add(w, name, &t[i]))
                return false;
            continue;
        }
        for (uint32_t e = 0; e < t[i].count; e++) {
            tp_snprintf(name, sizeof name, "model.layers.%u.mlp.experts.%u.%s", layer, e,
                     t[i].name + sizeof experts - 1);
            if (!want_add(w, name, &t[i]))
                return false;
        }
    }
    return true;
}

static bool want_model(struct wants *w, const struct tp_model *m)
{
    for (uint32_t l = 0; l < m->n_layers; l++)
        if (!want_block(w, m, l))
            return false;
    struct tp_tensor t[TP_MAX_BLOCK_TENSORS];
    size_t n = tp_outer_tensors(m, t);
    char name[256];
    for (size_t i = 0; i < n; i++) {
        tp_snprintf(name, sizeof name, "%s%s", t[i].comp == TP_COMP_HEAD ? "" : "model.", t[i].name);
        if (!want_add(w, name, &t[i]))
            return false;
    }
    return true;
}

static int want_cmp(const void *a, const void *b)
{
    return strcmp(((const struct want *)a)->name, ((const struct want *)b)->name);
}

static void shape_text(char *buf, size_t len, uint32_t ndim, const uint64_t *shape)
{
    size_t k = (size_t)tp_snprintf(buf, len, "[");
    for (uint32_t d = 0; d < ndim && k < len; d++)
        k += (size_t)tp_snprintf(buf + k, len - k, "%s%llu", d ? ", " : "",
                              (unsigned long long)shape[d]);
    if (k < len)
        tp_snprintf(buf + k, len - k, "]");
}

static bool shape_equal(const struct want *w, const struct tp_ckpt_tensor *t)
{
    if (w->ndim != t->ndim)
        return false;
    for (uint32_t d = 0; d < w->ndim; d++)
        if (w->shape[d] != t->shape[d])
            return false;
    return true;
}

/* One tensor the model has and the checkpoint has too (shape checked), or not. */
static bool match_one(struct tp_ckpt *c, const struct want *w, const struct tp_ckpt_tensor *t)
{
    if (shape_equal(w, t)) {
        c->matched++;
        return true;
    }
    char have[128], need[128];
    shape_text(have, sizeof have, t->ndim, t->shape);
    shape_text(need, sizeof need, w->ndim, w->shape);
    c->shape_mismatches++;
    return tp_ck_problem(c, TP_CK_SHAPE_MISMATCH, c->files[t->file].path, t->name,
                         "checkpoint %s, model %s", have, need);
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_lost(const struct tp_ckpt *c, const char *name)
{
    return c->n_lost && bsearch(&name, c->lost, c->n_lost, sizeof *c->lost, cmp_name) != NULL;
}

/* Merges the sorted wants with the checkpoint's sorted (unique first) tensors. */
static bool merge(struct tp_ckpt *c, const struct tp_model *m, const struct wants *w)
{
    size_t i = 0, k = 0;
    bool ok = true;
    while (ok && (i < w->n || k < c->n_tensors)) {
        if (k > 0 && k < c->n_tensors && strcmp(c->tensors[k].name, c->tensors[k - 1].name) == 0) {
            k++; /* a duplicate: reported already */
            continue;
        }
        int r = i == w->n ? 1 : k == c->n_tensors ? -1 : strcmp(w->v[i].name, c->tensors[k].name);
        if (r == 0) {
            ok = match_one(c, &w->v[i++], &c->tensors[k++]);
        } else if (r < 0 && is_lost(c, w->v[i].name)) {
            c->missing++; /* its shard's line says it */
            i++;
        } else if (r < 0) {
            c->missing++;
            bool head = strcmp(w->v[i].name, "lm_head.weight") == 0;
            ok = tp_ck_problem(c, TP_CK_MISSING_TENSOR, "", w->v[i].name, "%s",
                               head ? "the model's head is untied; no file holds it"
                                    : "the model has it; no file holds it");
            i++;
        } else {
            const struct tp_ckpt_tensor *t = &c->tensors[k++];
            c->unexpected++;
            bool head = strcmp(t->name, "lm_head.weight") == 0 && m->tied;
            ok = tp_ck_problem(c, TP_CK_UNEXPECTED_TENSOR, c->files[t->file].path, t->name, "%s",
                               head ? "the model ties the head to the embedding; this is a "
                                      "separate head"
                                    : "the model has no such tensor");
        }
    }
    return ok;
}

enum tp_status tp_ck_compare(struct tp_ckpt *c, const struct tp_model *m, struct tp_error *err)
{
    struct tp_params p;
    tp_count_params(m, &p);
    c->compared = true;
    c->expected_params = p.checkpoint;
    c->head_in_checkpoint = false;
    for (size_t i = 0; i < c->n_tensors; i++)
        c->head_in_checkpoint = c->head_in_checkpoint || strcmp(c->tensors[i].name,
                                                                "lm_head.weight") == 0;
    bool ok = true;
    if (names_follow_core(m) && c->n_tensors > 0) { /* no tensors: the total says it all */
        c->names_compared = true;
        struct wants w = {0};
        ok = want_model(&w, m);
        if (ok && w.n > 0) {
            qsort(w.v, w.n, sizeof *w.v, want_cmp);
            ok = merge(c, m, &w);
        }
        for (size_t i = 0; i < w.n; i++)
            free(w.v[i].name);
        free(w.v);
    }
    if (ok && c->total_params != c->expected_params)
        ok = tp_ck_problem(c, TP_CK_PARAM_MISMATCH, "", "",
                           "the checkpoint holds %llu parameters; the model %llu (%+lld)",
                           (unsigned long long)c->total_params,
                           (unsigned long long)c->expected_params,
                           (long long)(c->total_params - c->expected_params));
    if (!ok)
        return tp_fail(err, TP_ENOMEM, "out of memory comparing with the model");
    c->matches_config = c->missing == 0 && c->unexpected == 0 && c->shape_mismatches == 0 &&
                        c->total_params == c->expected_params;
    return TP_OK;
}
