/*
 * layout.c - job and parallel-layout defaults, and the consistency checks between a layout,
 * the model, the job and the cluster.
 *
 * The rules are the ones the frameworks enforce (Megatron-LM arguments.py / parallel_state,
 * DeepSpeed engine.py, PyTorch FSDP): every message says what does not divide what and
 * suggests values that would.
 */
#include "plan_internal.h"
#include "stack_rules.h"

#include <string.h>

void tp_job_init(struct tp_job *j)
{
    memset(j, 0, sizeof *j);
    j->task = TP_TASK_PRETRAIN;
    j->optimizer = TP_OPT_ADAMW;
    j->precision = TP_PREC_BF16;
    j->framework = TP_FW_DEEPSPEED;
    j->attn_impl = TP_ATTN_FLASH;
    j->seq = 4096;
    j->lora_rank = 16;
    j->lora_targets = TP_LORA_ALL;
    j->moe_capacity = 0;
    j->trainable_frac = 1;
    j->moe_imbalance = 0; /* derived from the routing (src/eval/moe_skew.c tp_moe_skew) */
    j->overhead_base_bytes = 1.0e9;        /* §3.8: CUDA context ~0.3-0.5 GB + workspaces */
    j->overhead_comm_bytes = 0.5e9;        /* §3.8: NCCL, per live communicator */
    j->nccl_buffsize = 4194304;            /* NCCL's NCCL_BUFFSIZE default (src/init.cc) */
    j->overhead_frag = 0.08;               /* §3.8: allocator fragmentation [heuristic] */
}

double tp_job_trainable_frac(const struct tp_job *j)
{
    return j->trainable_frac > 0 && j->trainable_frac <= 1 ? j->trainable_frac : 1;
}

bool tp_attn_native(const struct tp_job *j)
{
    return j->attn_impl == TP_ATTN_FLASH3 || j->attn_impl == TP_ATTN_CUDNN919 ||
           (j->attn_impl == TP_ATTN_FLASH && j->framework == TP_FW_MEGATRON);
}

void tp_layout_init(struct tp_layout *l)
{
    memset(l, 0, sizeof *l);
    l->tp = l->pp = l->vpp = l->ep = l->cp = 1;
    l->mbs = l->gas = 1;
    l->etp = 0; /* = tp (Megatron-Core's default for --expert-tensor-parallel-size) */
}

/* "try 1, 2, 4, 8": divisors of n up to `limit`. */
static void divisors(uint32_t n, uint32_t limit, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t d = 1; d <= n && d <= limit; d++) {
        if (n % d)
            continue;
        int k = tp_snprintf(buf + used, len - used, "%s%u", used ? ", " : "", d);
        if (k < 0 || (size_t)k >= len - used)
            break;
        used += (size_t)k;
    }
}

static enum tp_status must_divide(const char *what, uint32_t v, const char *field, uint32_t n,
                                  uint32_t limit, struct tp_error *err)
{
    if (v > 0 && n % v == 0)
        return TP_OK;
    char hint[128];
    divisors(n, limit, hint, sizeof hint);
    return tp_fail_field(err, TP_EINVAL, what, "%s %u must divide %s=%u (try %s)", what, v, field,
                         n, hint);
}

static enum tp_status check_sizes(const struct tp_layout *l, struct tp_error *err)
{
    const struct {
        const char *name;
        uint32_t v;
    } sizes[] = {{"tp", l->tp}, {"pp", l->pp},   {"vpp", l->vpp}, {"ep", l->ep},
                 {"cp", l->cp}, {"mbs", l->mbs}, {"gas", l->gas}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].v == 0 || sizes[i].v > (1u << 20))
            return tp_fail_field(err, TP_EINVAL, sizes[i].name, "%s %u is out of range "
                                 "(1..1048576)", sizes[i].name, sizes[i].v);
    if (l->zero > 3)
        return tp_fail_field(err, TP_EINVAL, "zero", "zero %u is out of range (0..3)", l->zero);
    return TP_OK;
}

static enum tp_status check_world(const struct tp_cluster *c, struct tp_layout *l,
                                  struct tp_error *err)
{
    uint64_t mp = (uint64_t)l->tp * l->pp * l->cp;
    if (c->n_gpus == 0)
        return tp_fail_field(err, TP_EINVAL, "gpus", "gpus must be positive");
    if (mp > c->n_gpus || l->dp > c->n_gpus) /* before mp * dp, which could wrap 64 bits */
        return tp_fail(err, TP_EINVAL, "tp*pp*cp = %llu and dp = %u cannot exceed gpus=%u",
                       (unsigned long long)mp, l->dp, c->n_gpus);
    if (l->dp == 0) {
        if (c->n_gpus % mp != 0)
            return tp_fail(err, TP_EINVAL,
                           "tp*pp*cp = %llu does not divide gpus=%u, so dp cannot be derived",
                           (unsigned long long)mp, c->n_gpus);
        l->dp = (uint32_t)(c->n_gpus / mp);
    }
    if (mp * l->dp != c->n_gpus)
        return tp_fail(err, TP_EINVAL, "tp*pp*cp*dp = %u*%u*%u*%u = %llu but gpus=%u", l->tp,
                       l->pp, l->cp, l->dp, (unsigned long long)(mp * l->dp), c->n_gpus);
    return TP_OK;
}

/* An uneven split (Megatron-Core --decoder-first/last-pipeline-num-layers): the stages not
   given share the rest equally; with vpp > 1 each rank's blocks split into equal chunks
   (tp_layout_pp_uneven). */
enum tp_status tp_layout_check_split(const struct tp_model *m, const struct tp_layout *l,
                                     struct tp_error *err)
{
    if (l->pp_first == 0 && l->pp_last == 0)
        return TP_OK;
    if (l->pp < 2)
        return tp_fail_field(err, TP_EINVAL, "pp_first",
                             "pp_first/pp_last need pipeline parallelism (pp=2 "
                                        "or more)");
    if (l->vpp > 1) /* checked with the map tp_layout_pp_uneven builds */
        return TP_OK;
    uint64_t given = (uint64_t)l->pp_first + l->pp_last;
    uint32_t others = l->pp - (l->pp_first > 0) - (l->pp_last > 0);
    if (others == 0 && given != m->n_layers)
        return tp_fail_field(err, TP_EINVAL, "pp_first",
                             "pp_first=%u and pp_last=%u must add up to num_hidden_layers=%u",
                       l->pp_first, l->pp_last, m->n_layers);
    if (given + others > m->n_layers)
        return tp_fail_field(err, TP_EINVAL, "pp_first",
                             "pp_first=%u and pp_last=%u leave fewer than one block for each of the "
                       "other %u stages (num_hidden_layers=%u)",
                       l->pp_first, l->pp_last, others, m->n_layers);
    uint32_t rest = m->n_layers - (uint32_t)given;
    if (others > 0 && rest % others != 0)
        return tp_fail(err, TP_EINVAL,
                       "the %u blocks left by pp_first=%u and pp_last=%u do not split evenly "
                       "over the other %u stages (num_hidden_layers=%u, pp=%u)",
                       rest, l->pp_first, l->pp_last, others, m->n_layers, l->pp);
    return TP_OK;
}

/* A per-virtual-stage map (pp_layout.c) must list pp * vpp stages and every block once. */
static enum tp_status check_map(const struct tp_model *m, const struct tp_layout *l,
                                struct tp_error *err)
{
    if (!l->pp_nv)
        return TP_OK;
    if (l->pp_nv != l->pp * l->vpp || l->pp_nv > TP_MAX_VSTAGES)
        return tp_fail(err, TP_EINVAL, "the pipeline layout lists %u virtual stages but pp*vpp = "
                       "%u*%u", l->pp_nv, l->pp, l->vpp);
    uint32_t total = 0;
    for (uint32_t v = 0; v < l->pp_nv; v++)
        total += l->pp_map[v];
    if (total != m->n_layers)
        return tp_fail(err, TP_EINVAL, "the pipeline layout places %u blocks but "
                       "num_hidden_layers=%u", total, m->n_layers);
    return TP_OK;
}

static enum tp_status check_model(const struct tp_model *m, const struct tp_job *j,
                                  struct tp_layout *l, struct tp_error *err)
{
    TRY(must_divide("tp", l->tp, "num_attention_heads", m->n_heads, 1024, err));
    TRY(must_divide("tp", l->tp, "num_key_value_heads", m->n_kv_heads, 1024, err));
    struct tp_mixer_split split[4];
    size_t n_split = tp_mixer_tp_splits(m, split);
    for (size_t i = 0; i < n_split; i++)
        TRY(must_divide("tp", l->tp, split[i].field, split[i].count, 1024, err));
    /* 1F1B splits uneven depths (torchtitan, Megatron --decoder-first-pipeline-num-layers);
       interleaving needs equal chunks */
    if (l->pp > m->n_layers)
        return tp_fail_field(err, TP_EINVAL, "pp",
                             "pp %u exceeds num_hidden_layers=%u", l->pp, m->n_layers);
    if (l->vpp > 1 && l->pp == 1)
        return tp_fail_field(err, TP_EINVAL, "vpp",
                             "vpp %u needs pipeline parallelism (pp=2 or more)", l->vpp);
    if (l->vpp > 1 && (l->pp_first || l->pp_last) && !l->pp_nv)
        TRY(tp_layout_pp_uneven(m->n_layers, l, err));
    TRY(check_map(m, l, err));
    if (l->vpp > 1 && !l->pp_nv && (m->n_layers % (l->pp * l->vpp)) != 0) {
        char hint[128];
        divisors(m->n_layers, 1024, hint, sizeof hint);
        return tp_fail_field(err, TP_EINVAL, "vpp",
                             "pp*vpp %u must divide num_hidden_layers=%u (try %s), or give the "
                             "split: pp_layout=embedding,loss or a Megatron layout string, "
                             "pp_first/pp_last", l->pp * l->vpp, m->n_layers, hint);
    }
    if (l->etp == 0)
        l->etp = l->tp;
    if (m->n_experts == 0 && l->ep > 1)
        return tp_fail_field(err, TP_EINVAL, "ep",
                             "ep %u needs an MoE model (this one is dense)", l->ep);
    if (m->n_experts > 0)
        TRY(must_divide("ep", l->ep, "num_experts", m->n_experts, 4096, err));
    uint64_t dense_ranks = (uint64_t)l->tp * l->cp * l->dp;
    if (dense_ranks % ((uint64_t)l->ep * l->etp) != 0)
        return tp_fail(err, TP_EINVAL,
                       "ep*etp = %u*%u must divide tp*cp*dp = %llu (experts are carved out of the "
                       "data- and tensor-parallel ranks)",
                       l->ep, l->etp, (unsigned long long)dense_ranks);
    if (j->seq % l->cp != 0)
        return tp_fail_field(err, TP_EINVAL, "cp",
                             "cp %u must divide the sequence length %llu", l->cp,
                       (unsigned long long)j->seq);
    if (l->sp && j->seq % ((uint64_t)l->tp * l->cp) != 0)
        return tp_fail(err, TP_EINVAL,
                       "sequence parallelism needs tp*cp = %u to divide the sequence length %llu",
                       l->tp * l->cp, (unsigned long long)j->seq);
    TRY(tp_layout_check_split(m, l, err));
    uint32_t most = 0;
    for (uint32_t s = 0; s < l->pp; s++) {
        uint32_t b = tp_stage_blocks(m, l, s);
        most = b > most ? b : most;
    }
    if (l->recompute_layers > most)
        return tp_fail_field(err, TP_EINVAL, "recompute_layers",
                             "recompute_layers %u exceeds the %u blocks of the largest stage",
                       l->recompute_layers, most);
    return TP_OK;
}

static enum tp_status check_sharding(const struct tp_model *m, const struct tp_job *j,
                                     const struct tp_layout *l, struct tp_error *err)
{
    uint32_t data = l->dp * l->cp;
    if (l->shard_group > 0)
        TRY(must_divide("shard_group", l->shard_group, "dp*cp", data, 1 << 20, err));
    if (l->hpz > 1) {
        TRY(must_divide("hpz", l->hpz, "dp*cp", data, 1 << 20, err));
        if (l->shard_group > 0 && l->shard_group < data)
            return tp_fail_field(err, TP_EINVAL, "hpz",
                                 "hpz and shard_group do not combine: ZeRO++ hpZ keeps the states "
                                 "sharded over all ranks, MiCS / HSDP shards them in groups");
    }
    if (l->offload == TP_OFFLOAD_PARAMS && l->zero != 3)
        return tp_fail_field(err, TP_EINVAL, "offload",
                             "offload params needs zero=3 (parameters must be sharded to leave "
                       "the GPU)");
    if (l->offload == TP_OFFLOAD_OPTIMIZER && l->zero == 0)
        return tp_fail_field(err, TP_EINVAL, "offload",
                             "offload optimizer needs zero=1, 2 or 3 (ZeRO-Offload moves the "
                       "partitioned optimizer states)");
    if (j->framework == TP_FW_DEEPSPEED && m->n_experts > 0 && l->ep > 1 && l->zero == 3)
        return tp_fail(err, TP_EINVAL,
                       "DeepSpeed's MoE layer does not run under ZeRO-3 with expert parallelism "
                       "(engine.py: \"Native DeepSpeed MoE is not supported with ZeRO Stage 3\"); "
                       "use zero=2, ep=1, or framework=fsdp");
    if ((j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA) && j->lora_rank == 0)
        return tp_fail_field(err, TP_EINVAL, "lora_rank", "lora_rank must be positive");
    if (j->moe_imbalance != 0 && !(j->moe_imbalance >= 1.0 && j->moe_imbalance <= 64.0))
        return tp_fail(err, TP_EINVAL,
                       "MoE imbalance %.3g is out of range (1..64, or 0 to derive it)",
                       j->moe_imbalance);
    if (j->moe_capacity < 0 || j->moe_capacity > 64)
        return tp_fail(err, TP_EINVAL, "MoE capacity factor %.3g is out of range (0..64)",
                       j->moe_capacity);
    if (!(j->trainable_frac >= 0 && j->trainable_frac <= 1)) /* 0: unset, every slot */
        return tp_fail_field(err, TP_EINVAL, "trainable_frac",
                             "trainable_frac %.3g is out of range (0 < f <= 1)", j->trainable_frac);
    return TP_OK;
}

enum tp_status tp_layout_check(const struct tp_model *m, const struct tp_cluster *c,
                               const struct tp_job *j, struct tp_layout *l, struct tp_error *err)
{
    if (j->seq == 0 || j->seq > (1u << 24))
        return tp_fail(err, TP_EINVAL, "sequence length %llu is out of range (1..16777216)",
                       (unsigned long long)j->seq);
    if (c->gpu.hbm_bytes <= 0)
        return tp_fail(err, TP_EINVAL, "GPU memory capacity must be positive");
    TRY(tp_cluster_check(c, j, err));
    TRY(tp_flash1_check(m, c, j, err));
    /* what the stack needs on (Megatron's SP for MoE with TP: stack_rules.c) */
    if ((unsigned)j->framework < TP_FW_COUNT)
        tp_stack_rules_fix(m, j, l);
    TRY(check_sizes(l, err));
    TRY(check_world(c, l, err));
    TRY(check_model(m, j, l, err));
    TRY(check_sharding(m, j, l, err));
    if (l->vpp > 1 && l->schedule != TP_SCHED_DUALPIPE) /* (DualPipe with vpp: tp_stack_check) */
        l->schedule = TP_SCHED_INTERLEAVED;
    else if (l->schedule == TP_SCHED_INTERLEAVED)
        l->schedule = TP_SCHED_1F1B;
    return TP_OK;
}
