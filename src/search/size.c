/*
 * size.c - concrete model shapes of a family for a compute budget: each counted exactly, costed
 * with its exact FLOPs per token, given the tokens the budget (or a cluster's time) buys and the
 * loss a scaling-law fit predicts; on a cluster, each shape's fastest layout from the search.
 *
 * The family rules (sources in each branch of family_shape) make a shape from (layers, hidden)
 * alone; the grid walks hidden in multiples of 128 and layers such that hidden / layers stays
 * within [aspect_min, aspect_max] (default 20..200: Kaplan et al. 2020 §3.1 / Fig. 5 find the
 * loss depends only weakly on the aspect ratio over this range; released dense models sit in
 * it: Llama 3 8B 128, 70B 102, 405B 130, Qwen3-0.6B 37, GPT-3 175B 128).  Pure: no allocation,
 * no I/O, no threads; the CLI drives the grid.
 */
#include "search_internal.h"

#include <math.h>
#include <string.h>

static const char *const FAMILY_NAMES[TP_FAMILY_COUNT] = {"llama3", "qwen3", "gpt"};

const char *tp_size_family_name(enum tp_size_family f)
{
    return (unsigned)f < TP_FAMILY_COUNT ? FAMILY_NAMES[f] : "?";
}

enum tp_status tp_size_family_find(const char *name, enum tp_size_family *out,
                                   struct tp_error *err)
{
    for (int i = 0; i < TP_FAMILY_COUNT; i++)
        if (tp_streq_ci(name, FAMILY_NAMES[i])) {
            *out = (enum tp_size_family)i;
            return TP_OK;
        }
    return tp_fail(err, TP_ENOTFOUND, "unknown family \"%s\" (families: llama3, qwen3, gpt)",
                   name);
}

void tp_size_grid_init(struct tp_size_grid *g)
{
    memset(g, 0, sizeof *g);
    g->family = TP_FAMILY_LLAMA3;
    g->seq = 4096;
    g->aspect_min = 20;
    g->aspect_max = 200;
    g->hidden_min = 256;
    g->hidden_max = 24576; /* past Llama 3 405B's 16384: Besiroglu's optimum for its 3.8e25
                              FLOPs is 617B parameters */
    g->layers_max = 160;
}

/* Heads of head_dim 128 in a multiple of 8 nearest hidden / 128 (at least 8; below hidden 1024,
   8 heads of hidden / 8): Llama 3 8B 4096 -> 32, 70B 8192 -> 64, 405B 16384 -> 128, Llama 3.2 3B
   3072 -> 24 (meta-llama params.json); Qwen3-14B 5120 -> 40 (its config.json).  A multiple of 8
   heads with 8 key/value heads splits over tensor-parallel sizes 1, 2, 4 and 8. */
static void heads_of(uint32_t h, struct tp_size_shape *s)
{
    if (h < 1024) {
        s->heads = 8;
        s->head_dim = h / 8;
    } else {
        s->heads = 8 * (uint32_t)lround(h / 1024.0);
        s->head_dim = 128;
    }
    s->kv_heads = 8;
}

/* Fills heads, head_dim, kv_heads, ffn, vocab and tied of a shape from its hidden size. */
static void family_shape(const struct tp_size_grid *g, struct tp_size_shape *s)
{
    uint32_t h = s->hidden;
    switch (g->family) {
    case TP_FAMILY_QWEN3:
        /* Qwen3 configs (Qwen/Qwen3-0.6B..32B config.json): head_dim 128, 8 key/value heads,
           SwiGLU 3 x hidden (1.7B: 2048 -> 6144, 8B: 4096 -> 12288), q/k RMSNorm, vocab
           151,936, embeddings tied up to the 4B (hidden 2560). */
        heads_of(h, s);
        s->ffn = 3 * h;
        s->vocab = 151936;
        s->tied = h <= 2560;
        break;
    case TP_FAMILY_GPT:
        /* GPT-2/GPT-3 (Brown et al. 2020 Table 2.1): head_dim 64 up to the 1.3B, 128 above,
           multi-head attention, MLP 4 x hidden GELU, LayerNorm, biases, learned positions,
           tied embedding, vocab 50,257. */
        s->head_dim = h < 2048 ? 64 : 128;
        s->heads = h / s->head_dim;
        s->kv_heads = s->heads;
        s->ffn = 4 * h;
        s->vocab = 50257;
        s->tied = true;
        break;
    default: {
        /* Llama 3 (meta-llama/llama3 model.py FeedForward; params.json of 8B/70B): head_dim
           128, 8 key/value heads, ffn = 1024 * ceil(int(1.3 * int(8 h / 3)) / 1024) (8B: 4096
           -> 14336; 70B: 8192 -> 28672; 002's 2048 -> 7168), vocab 128,256, untied. */
        uint32_t f = (uint32_t)(1.3 * (double)(8 * (uint64_t)h / 3));
        heads_of(h, s);
        s->ffn = 1024 * ((f + 1023) / 1024);
        s->vocab = 128256;
        s->tied = false;
        break;
    }
    }
    if (g->vocab)
        s->vocab = g->vocab;
}

void tp_size_enumerate_one(const struct tp_size_grid *g, struct tp_size_shape *s)
{
    uint32_t layers = s->layers, hidden = s->hidden;
    memset(s, 0, sizeof *s);
    s->layers = layers;
    s->hidden = hidden;
    family_shape(g, s);
    s->loss = NAN;
}

/* The grid's hidden sizes: multiples of 256 up to 4096, of 512 above (the released models':
   Qwen3 1024, 2048, 2560, 4096, 5120; Llama 3 3072, 4096, 8192, 16384; GPT-3 2560, 5120,
   12288).  Returns the first at or above `h`. */
static uint32_t hidden_at_or_above(uint32_t h)
{
    if (h <= 256)
        return 256;
    uint32_t step = h > 4096 ? 512 : 256;
    return (h + step - 1) / step * step;
}

/* The grid's depths: multiples of 4 (pipeline sizes 2 and 4 split them evenly), of 8 from 64
   layers on (pipeline size 8): Llama 3 8B 32, 70B 80; Qwen3 28, 36, 40, 48, 64; GPT-3 24, 32,
   40, 96.  Returns the first at or above `l`. */
static uint32_t layers_at_or_above(uint32_t l)
{
    uint32_t step = l > 64 ? 8 : 4;
    uint32_t r = (l + step - 1) / step * step;
    return r < 4 ? 4 : r;
}

static uint32_t layers_next(uint32_t l)
{
    return l + (l >= 64 ? 8 : 4);
}

size_t tp_size_enumerate(const struct tp_size_grid *g, struct tp_size_shape *out, size_t cap)
{
    size_t n = 0;
    for (uint32_t h = hidden_at_or_above(g->hidden_min); h <= g->hidden_max;
         h = hidden_at_or_above(h + 1)) {
        double lmin = ceil(h / g->aspect_max), lmax = floor(h / g->aspect_min);
        if (lmax > g->layers_max)
            lmax = g->layers_max;
        if (lmin > lmax)
            continue;
        for (uint32_t l = layers_at_or_above((uint32_t)lmin); l <= lmax; l = layers_next(l), n++) {
            if (!out || n >= cap)
                continue;
            out[n].layers = l;
            out[n].hidden = h;
            tp_size_enumerate_one(g, &out[n]);
        }
    }
    return n;
}

enum tp_status tp_size_model(const struct tp_size_grid *g, const struct tp_size_shape *s,
                             struct tp_model *m, struct tp_error *err)
{
    tp_model_init(m);
    tp_snprintf(m->name, sizeof m->name, "%s %uL-%uH-%uD-%uff", tp_size_family_name(g->family),
             s->layers, s->heads, s->hidden, s->ffn);
    tp_snprintf(m->family, sizeof m->family, "%s", g->family == TP_FAMILY_GPT ? "gpt2"
                                                : g->family == TP_FAMILY_QWEN3 ? "qwen3"
                                                                               : "llama");
    tp_snprintf(m->source, sizeof m->source, "trainplan size grid (%s rules)",
             tp_size_family_name(g->family));
    m->n_layers = s->layers;
    m->hidden = s->hidden;
    m->n_heads = s->heads;
    m->n_kv_heads = s->kv_heads;
    m->head_dim = s->head_dim ? s->head_dim : s->hidden / s->heads;
    m->head_dim_explicit = true;
    m->ffn = s->ffn;
    m->vocab = s->vocab;
    m->tied = s->tied;
    m->default_seq = (uint32_t)g->seq;
    if (g->family == TP_FAMILY_QWEN3)
        m->qk_norm = true;
    if (g->family == TP_FAMILY_GPT) {
        m->mlp = TP_MLP_GELU;
        m->norm = TP_NORM_LAYER;
        m->pos = TP_POS_LEARNED;
        m->max_positions = (uint32_t)g->seq;
        m->qkv_bias = m->o_bias = m->mlp_bias = true;
    }
    return tp_model_finalize(m, err);
}

/* Tokens, budget and loss once the FLOPs per token are known. */
static void spend(const struct tp_scaling_fit *f, double flops, double tokens,
                  struct tp_size_shape *s)
{
    s->tokens = flops > 0 ? flops / s->flops_per_token : tokens;
    s->budget_flops = s->tokens * s->flops_per_token;
    s->loss = tp_scaling_loss(f, s->fit_n, s->tokens);
}

enum tp_status tp_size_count(const struct tp_size_grid *g, const struct tp_scaling_fit *f,
                             double flops, struct tp_size_shape *s, struct tp_error *err)
{
    struct tp_model m;
    TRY(tp_size_model(g, s, &m, err));
    struct tp_params p;
    tp_count_params(&m, &p);
    struct tp_flops fl;
    TRY(tp_flops_model(&m, g->seq, TP_RECOMPUTE_NONE, &fl));
    s->params = (double)p.total;
    s->fit_n = tp_scaling_n_of(f, &m, g->seq);
    s->flops_per_token = fl.model;
    s->tokens = s->budget_flops = 0;
    s->loss = NAN;
    if (flops > 0)
        spend(f, flops, 0, s);
    return TP_OK;
}

enum tp_status tp_size_on_cluster(const struct tp_size_grid *g, const struct tp_scaling_fit *f,
                                  const struct tp_cluster *c, const struct tp_job *j,
                                  const struct tp_search_opts *o, const struct tp_calib *cal,
                                  double flops, double seconds, struct tp_size_shape *s,
                                  struct tp_error *err)
{
    TRY(tp_size_count(g, f, 0, s, err));
    struct tp_model m;
    TRY(tp_size_model(g, s, &m, err));
    struct tp_job job = *j;
    job.seq = g->seq;
    size_t n = 0;
    struct tp_search_stats st;
    TRY(tp_search(&m, c, &job, o, cal, &s->best, 1, &n, &st, err));
    s->has_layout = n > 0 && s->best.time.tokens_per_s > 0;
    if (!s->has_layout)
        return TP_OK;
    double rate = s->best.time.tokens_per_s;
    spend(f, flops, rate * seconds, s);
    s->seconds = s->tokens / rate;
    return TP_OK;
}
