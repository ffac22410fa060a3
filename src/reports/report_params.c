/*
 * report_params.c - `trainplan params`: the counts, the FLOPs per token and the blocks in runs
 * of equal counts, and its JSON document (the CLI prints the table and CSV from the same
 * report; bindings get the document from tp_call_json).
 */
#include "reports_internal.h"

#include <jansson.h>
#include <string.h>

static void build_runs(struct tp_params_report *r, bool per_layer)
{
    const struct tp_model *m = &r->m;
    r->n_runs = 0;
    for (uint32_t l = 0; l < m->n_layers; l++) {
        uint64_t p = tp_block_params(m, l, false), a = tp_block_params(m, l, true);
        struct tp_block_run *last = r->n_runs ? &r->runs[r->n_runs - 1] : NULL;
        if (!per_layer && last && last->params == p && last->active == a &&
            last->moe == (m->layer_moe[l] != 0) && last->attn == m->layer_attn[l] &&
            last->mixer == m->layer_mixer[l] && last->no_ffn == (m->layer_no_ffn[l] != 0)) {
            last->last = l;
            continue;
        }
        r->runs[r->n_runs++] = (struct tp_block_run){l, l, m->layer_moe[l] != 0, m->layer_attn[l],
                                                     p, a, m->layer_mixer[l],
                                                     m->layer_no_ffn[l] != 0};
    }
}

enum tp_status tp_params_report(struct tp_params_report *r, uint64_t seq,
                                enum tp_attn_convention conv, enum tp_recompute rc, uint32_t mtp,
                                bool per_layer, struct tp_error *err)
{
    if (!seq)
        seq = r->m.default_seq ? r->m.default_seq : 4096;
    r->conv = conv;
    r->rc = rc;
    r->mtp = mtp;
    tp_count_params(&r->m, &r->p);
    TRY(tp_flops_per_token(&r->m, seq, conv, rc, mtp, &r->f, err));
    build_runs(r, per_layer);
    return TP_OK;
}

#define I(v) ((json_int_t)(v))

static json_t *model_json(const struct tp_model *m)
{
    static const char *const mlp[] = {"glu", "gelu"};
    static const char *const norm[] = {"rmsnorm", "layernorm"};
    static const char *const pos[] = {"rope", "learned", "alibi"};
    return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:s, s:I, s:I, s:b, s:s, s:s, s:s,"
                     " s:I, s:I, s:I, s:I, s:I}",
                     "name", m->name, "family", m->family, "source", m->source,
                     "layers", I(m->n_layers), "hidden", I(m->hidden), "heads", I(m->n_heads),
                     "kv_heads", I(m->n_kv_heads), "head_dim", I(m->head_dim),
                     "attention", m->attn == TP_ATTN_MLA ? "mla" : "standard",
                     "ffn", I(m->ffn), "vocab", I(m->vocab), "tied", (int)m->tied,
                     "mlp", mlp[m->mlp], "norm", norm[m->norm], "pos", pos[m->pos],
                     "experts", I(m->n_experts), "topk", I(m->top_k), "moe_ffn", I(m->moe_ffn),
                     "shared_ffn", I(m->shared_ffn), "mtp_layers", I(m->mtp_layers));
}

json_t *tp_json_params(const struct tp_params_report *r)
{
    const struct tp_params *p = &r->p;
    const struct tp_flops *f = &r->f;
    json_t *bc = json_object();
    for (int c = 0; c < TP_COMP_COUNT; c++)
        json_object_set_new(bc, tp_component_name((enum tp_component)c),
                            json_integer(I(p->by_comp[c])));
    json_t *blocks = json_array();
    for (size_t i = 0; i < r->n_runs; i++) {
        const struct tp_block_run *b = &r->runs[i];
        json_array_append_new(blocks,
                              json_pack("{s:I, s:I, s:s, s:s, s:s, s:I, s:I}", "first",
                                        I(b->first), "last", I(b->last), "ffn",
                                        b->no_ffn ? "none" : b->moe ? "moe" : "dense", "mixer",
                                        tp_name(TP_NAMES_MIXER, b->mixer), "attention",
                                        tp_name(TP_NAMES_LAYER_ATTN, b->attn), "params",
                                        I(b->params), "params_active", I(b->active)));
    }
    json_t *conv = json_pack("{s:f, s:f, s:f, s:f, s:f}", "six_n", f->six_n, "palm", f->palm,
                             "torchtitan", f->torchtitan, "megatron_2023", f->megatron_2023,
                             "narayanan_2021", f->narayanan_2021);
    return json_pack(
        "{s:i, s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o,"
        " s:I, s:s, s:s, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:o, s:s}",
        "schema_version", TP_SCHEMA_VERSION, "command", "params", "model", model_json(&r->m),
        "params_total", I(p->total), "params_active", I(p->active),
        "params_embedding", I(p->embedding), "params_nonembedding", I(p->nonembedding),
        "params_active_excl_embedding", I(p->active_excl_embedding),
        "params_active_excl_embedding_head", I(p->active_excl_embedding_head),
        "params_mtp", I(p->mtp), "params_buffers", I(p->buffers),
        "params_checkpoint", I(p->checkpoint), "params_by_component", bc, "blocks", blocks,
        "seq", I(f->seq), "attention_convention", tp_name(TP_NAMES_ATTN_CONVENTION, (int)r->conv),
        "recompute", tp_name(TP_NAMES_RECOMPUTE, (int)r->rc), "mtp_trained", I(r->mtp),
        "flops_per_token", f->model, "flops_per_token_forward", f->fwd,
        "flops_per_token_backward", f->bwd, "flops_per_token_attention_forward", f->fwd_attn,
        "flops_per_token_scan_forward", f->fwd_scan,
        "hw_flops_per_token", f->hardware, "flops_conventions", conv, "notes", r->notes);
}
