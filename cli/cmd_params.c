/*
 * cmd_params.c - `trainplan params MODEL`: parameter counts and training FLOPs per token.
 *
 * One report struct is computed from the library, then printed as a table, JSON (fixed key
 * order, schema_version) or CSV (one header row, one value row).
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* The library's report, and where its sequence length came from (for the table). */
struct report {
    struct tp_params_report x;
    const char *seq_source;
};

static int build(const struct cli_args *a, struct report *r)
{
    int rc = cli_resolve_model(a, &r->x.m, r->x.notes, sizeof r->x.notes);
    if (rc != EXIT_OK)
        return rc;
    uint64_t seq = 0;
    r->seq_source = "default 4096 (the model states no pre-training context; set --seq)";
    if (a->seq != TP_UNSET) {
        seq = (uint64_t)a->seq;
        r->seq_source = "--seq";
    } else if (r->x.m.default_seq) {
        r->seq_source = "the model's context";
    }
    struct tp_error err = {{0}, {0}};
    if (tp_params_report(&r->x, seq, (enum tp_attn_convention)a->attn_conv,
                         (enum tp_recompute)a->recompute,
                         a->mtp == TP_UNSET ? 0 : (uint32_t)a->mtp, a->per_layer != 0,
                         &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* ---- table ------------------------------------------------------------------------------- */

static void row(const char *label, uint64_t v, uint64_t total, const char *note)
{
    char c[32], s[16];
    fmt_count(c, sizeof c, v);
    fmt_si(s, sizeof s, (double)v);
    printf("  %-34s %19s  %8s", label, c, s);
    if (total)
        printf("  %6.2f%%", 100.0 * (double)v / (double)total);
    printf("%s%s\n", note[0] ? "  " : "", note);
}

static void gflop(const char *label, double v, const char *note)
{
    printf("  %-34s %12.3f GFLOP  %s\n", label, v / 1e9, note);
}

static void print_shape(const struct tp_model *m)
{
    static const char *const mlp[] = {"gated (SwiGLU/GeGLU)", "GELU (2 matrices)"};
    static const char *const norm[] = {"RMSNorm", "LayerNorm"};
    static const char *const pos[] = {"RoPE", "learned positions", "ALiBi"};
    char v[32];
    fmt_count(v, sizeof v, m->vocab);
    printf("model   %s  [%s]\nsource  %s\n", m->name, m->family, m->source);
    if (m->attn == TP_ATTN_MLA)
        printf("shape   %u layers, hidden %u, %u heads, MLA (q rank %u, kv rank %u, qk %u+%u, v %u)",
               m->n_layers, m->hidden, m->n_heads, m->q_lora_rank, m->kv_lora_rank,
               m->qk_nope_dim, m->qk_rope_dim, m->v_head_dim);
    else
        printf("shape   %u layers, hidden %u, %u heads (%u kv, head_dim %u)", m->n_layers,
               m->hidden, m->n_heads, m->n_kv_heads, m->head_dim);
    printf(",\n        ffn %u %s, vocab %s, %s head, %s, %s%s%s%s\n", m->ffn, mlp[m->mlp], v,
           m->tied ? "tied" : "untied", norm[m->norm], pos[m->pos],
           m->qkv_bias || m->o_bias || m->mlp_bias ? ", biases" : "",
           m->qk_norm ? ", q/k norm" : "", m->norms_per_block == 4 ? ", 4 norms per block" : "");
    if (m->n_experts)
        printf("moe     %u experts, top-%u, expert ffn %u, shared ffn %u, first %u block(s) dense\n",
               m->n_experts, m->top_k, m->moe_ffn, m->shared_ffn, m->moe_first_dense);
    if (m->window || m->chunk)
        printf("attn    %s %u on some blocks (see per block)\n",
               m->chunk ? "chunked attention, chunk" : "sliding window", m->chunk ? m->chunk : m->window);
}

static void print_table(const struct tp_params_report *r, const char *seq_source)
{
    const struct tp_params *p = &r->p;
    const struct tp_flops *f = &r->f;
    printf("trainplan %s - params\n\n", TP_VERSION);
    print_shape(&r->m);
    if (r->notes[0]) {
        char notes[2 * sizeof r->notes];
        cli_render_settings(r->notes, notes, sizeof notes);
        printf("assumed %s\n", notes);
    }

    printf("\nparameters                                       count     short\n");
    row("total", p->total, 0, "trainable parameters of the main model");
    row("active per token", p->active, 0, "total minus unused routed experts (embedding, head in)");
    row("non-embedding", p->nonembedding, 0, "total minus token and position embeddings");
    row("active excl. embedding", p->active_excl_embedding, 0, "(gpt-oss, DeepSeek convention)");
    row("active excl. embedding and head", p->active_excl_embedding_head, 0, "(GLM convention)");
    if (p->mtp)
        row("MTP modules (not in total)", p->mtp, 0, "");
    if (p->buffers)
        row("checkpoint incl. router buffers", p->checkpoint, 0, "e_score_correction_bias");

    printf("\nby component                                     count     short   share\n");
    for (int c = 0; c < TP_COMP_COUNT; c++)
        if (p->by_comp[c])
            row(tp_component_name((enum tp_component)c), p->by_comp[c], p->total, "");

    printf("\nper block                                        count     short\n");
    for (size_t i = 0; i < r->n_runs; i++) {
        const struct tp_block_run *b = &r->runs[i];
        char label[64], note[64];
        if (b->first == b->last)
            snprintf(label, sizeof label, "block %u", b->first);
        else
            snprintf(label, sizeof label, "blocks %u-%u (%u, each)", b->first, b->last,
                     b->last - b->first + 1);
        char act[16];
        fmt_si(act, sizeof act, (double)b->active);
        static const char *const mixers[] = {"", "Mamba-2", "gated DeltaNet", ""};
        const char *ffn = b->no_ffn ? "no FFN" : b->moe ? "MoE" : "dense";
        if (b->mixer == TP_MIXER_NONE)
            snprintf(note, sizeof note, "%s only%s%s", b->moe ? "MoE" : "MLP",
                     b->moe ? ", active " : "", b->moe ? act : "");
        else if (b->mixer == TP_MIXER_ATTN)
            snprintf(note, sizeof note, "%s, %s attention%s%s", ffn,
                     tp_name(TP_NAMES_LAYER_ATTN, b->attn), b->moe ? ", active " : "",
                     b->moe ? act : "");
        else
            snprintf(note, sizeof note, "%s, %s%s%s", ffn, mixers[b->mixer & 3],
                     b->moe ? ", active " : "", b->moe ? act : "");
        row(label, b->params, 0, note);
    }

    printf("\ntraining FLOPs per token (seq %llu from %s; attention %s; recompute %s)\n",
           (unsigned long long)f->seq, seq_source, tp_name(TP_NAMES_ATTN_CONVENTION, (int)r->conv), tp_name(TP_NAMES_RECOMPUTE, (int)r->rc));
    gflop("forward", f->fwd, f->fwd_scan > 0 ? "GEMMs + attention core + scans" : "GEMMs + attention core");
    gflop("  dense GEMMs", f->fwd_dense, "2 x matmul weights incl. LM head");
    gflop("  attention core", f->fwd_attn, "QK^T and AV");
    if (f->fwd_scan > 0)
        gflop("  chunked scans", f->fwd_scan, "Mamba-2 SSD / gated DeltaNet chunks");
    gflop("backward", f->bwd, "2 x forward");
    gflop("model FLOPs (MFU basis)", f->model, "exact matmul counting, Megatron-LM 2025");
    gflop("hardware FLOPs (HFU basis)", f->hardware, r->rc ? "model + recomputed forward" : "= model");
    if (r->mtp)
        printf("  (includes %u MTP module(s))\n", r->mtp);
    printf("\nother conventions, for comparison\n");
    gflop("6N (N = active)", f->six_n, "Kaplan 2020; no attention core");
    gflop("6N + 12*L*q_dim*s", f->palm, "PaLM App. B, N = active");
    gflop("torchtitan", f->torchtitan, "6 x non-embedding N + 12*L*q_dim*s");
    gflop("Megatron 2023-11..2025-03", f->megatron_2023, "exact GEMMs, non-causal attention");
    gflop("Narayanan 2021 closed form", f->narayanan_2021, "72LH^2(1+s/6H+V/12LH); GPT shapes only");
}

/* ---- CSV --------------------------------------------------------------------------------- */

static void print_csv(const struct tp_params_report *r)
{
    const struct tp_params *p = &r->p;
    const struct tp_flops *f = &r->f;
    printf("model,family,params_total,params_active,params_embedding,params_nonembedding");
    for (int c = 0; c < TP_COMP_COUNT; c++)
        printf(",component_%s", tp_component_name((enum tp_component)c));
    printf(",seq,attention_convention,recompute,flops_per_token,hw_flops_per_token\n");
    report_csv_cell(r->m.name);
    putchar(',');
    report_csv_cell(r->m.family);
    printf(",%llu,%llu,%llu,%llu", (unsigned long long)p->total, (unsigned long long)p->active,
           (unsigned long long)p->embedding, (unsigned long long)p->nonembedding);
    for (int c = 0; c < TP_COMP_COUNT; c++)
        printf(",%llu", (unsigned long long)p->by_comp[c]);
    printf(",%llu,%s,%s,%.17g,%.17g\n", (unsigned long long)f->seq, tp_name(TP_NAMES_ATTN_CONVENTION, (int)r->conv),
           tp_name(TP_NAMES_RECOMPUTE, (int)r->rc), f->model, f->hardware);
}

static void help(void)
{
    printf("usage: trainplan params MODEL [options]\n"
           "       trainplan params --layers N --hidden N --heads N --vocab N [options]\n"
           "\n"
           "Counts parameters exactly, tensor by tensor, and training FLOPs per token.\n"
           "\n"
           "  total          every trainable parameter of the main model (MTP modules and\n"
           "                 router buffers are shown separately)\n"
           "  active         per token: total minus the routed experts a token does not use;\n"
           "                 the token embedding and the LM head are included\n"
           "  non-embedding  total minus the token (and learned position) embeddings\n"
           "\n"
           "FLOPs are model FLOPs (no recompute; the basis of MFU) by exact matmul counting:\n"
           "6 per weight element per token, the LM head included even when tied, the input\n"
           "embedding excluded, attention core causal-halved (Megatron-LM since 2025-03).\n"
           "Hardware FLOPs add the recomputed forward (--recompute).  JSON keys: schema_version,\n"
           "params_total, params_active, params_embedding, params_nonembedding,\n"
           "flops_per_token (model FLOPs per token, training), hw_flops_per_token, ...\n"
           "\noptions:\n");
    cli_print_options(stdout, CMD_PARAMS);
    printf("\nexit status: 0 success; 2 usage or input error.\n");
}

int cmd_params(int argc, char **argv)
{
    struct cli_args a;
    int rc = cli_begin(argc, argv, CMD_PARAMS, &a, help);
    if (rc >= 0)
        return rc;
    static struct report r; /* ~3 KB of layout plus runs: keep it off the stack */
    memset(&r, 0, sizeof r);
    rc = build(&a, &r);
    if (rc != EXIT_OK)
        return rc;
    if (a.format == FMT_JSON) {
        if ((rc = cli_print_json(tp_json_params(&r.x), 10)) != EXIT_OK)
            return rc;
    } else if (a.format == FMT_CSV) {
        print_csv(&r.x);
    } else {
        print_table(&r.x, r.seq_source);
        cli_warn_misaligned(&r.x.m, 1, TP_PREC_BF16);
    }
    return cli_finish(EXIT_OK);
}
