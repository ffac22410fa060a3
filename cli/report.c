/*
 * report.c - what the run commands (memory, estimate) print alike: the resolved run, the memory
 * breakdown of a stage, and their JSON objects.
 */
#include "cli.h"

#include <csv.h>

#include <jansson.h>
#include <string.h>

const char *attn_label(const struct tp_job *j)
{
    switch (j->attn_impl) {
    case TP_ATTN_FLASH: return tp_attn_native(j) ? "flash (TE/cuDNN)" : "flash (FlashAttention-2)";
    case TP_ATTN_EAGER: return "eager";
    case TP_ATTN_FLASH1: return "FlashAttention 1.x";
    case TP_ATTN_FLASH2: return "FlashAttention-2";
    case TP_ATTN_FLASH3: return "native flash (FA3/cuDNN)";
    case TP_ATTN_FLEX: return "FlexAttention";
    case TP_ATTN_CUDNN919: return "cuDNN fused attention (2025-26 releases)";
    }
    return "flash";
}

static void line(const char *label, double bytes, double total)
{
    printf("  %-44s %9.2f GB %9.2f GiB", label, bytes / 1e9, bytes / 1073741824.0);
    if (total > 0)
        printf("  %5.1f%%", 100.0 * bytes / total);
    putchar('\n');
}

void report_split(const struct tp_model *m, const struct tp_layout *l, char *buf, size_t len)
{
    uint32_t first = tp_stage_blocks(m, l, 0), last = tp_stage_blocks(m, l, l->pp - 1);
    if (l->pp <= 1)
        snprintf(buf, len, "%u", first);
    else if (l->pp == 2)
        snprintf(buf, len, "%u+%u", first, last);
    else
        snprintf(buf, len, "%u+%ux%u+%u", first, l->pp - 2, tp_stage_blocks(m, l, 1), last);
}

void report_recompute(const struct tp_layout *l, char *buf, size_t len)
{
    if (l->recompute == TP_RECOMPUTE_FULL && l->recompute_layers)
        snprintf(buf, len, "full(%u)", l->recompute_layers);
    else
        snprintf(buf, len, "%s", tp_name(TP_NAMES_RECOMPUTE, (int)l->recompute));
}

/* FSDP's name for a sharding stage (--fsdp's values); NULL for ZeRO-1, which FSDP has not. */
static const char *fsdp_strategy(uint32_t zero, bool groups)
{
    static const char *const NAMES[] = {"no_shard", NULL, "shard_grad_op", "full_shard"};
    if (zero > 3)
        return NULL;
    return zero == 3 && groups ? "hybrid_shard" : NAMES[zero];
}

/* Whether the job shards with FSDP, so that its ZeRO stage is an FSDP strategy to the user:
   the fsdp and torchtitan stacks, and the Hugging Face stack on FSDP2. */
static bool runs_fsdp(const struct tp_job *j)
{
    return j->fsdp_backend || j->framework == TP_FW_FSDP || j->framework == TP_FW_TORCHTITAN;
}

/* The expert-parallel load the step and the memory price, and where it comes from: the
   routing the job assumes (by the task unless given), --moe-imbalance, or a capacity factor
   (docs/moe.md "Routing skew"). */
static void report_experts(const struct run *r)
{
    const struct tp_layout *l = &r->l;
    if (r->m.n_experts <= 1 || l->ep <= 1)
        return;
    enum tp_moe_routing routing;
    double load = tp_moe_busiest_load(&r->m, &r->j, l, &routing);
    printf("experts  %u routed, top %u, %u per EP rank; ", r->m.n_experts, r->m.top_k,
           r->m.n_experts / l->ep);
    if (r->j.moe_capacity > 0 && r->j.moe_pad_capacity)
        printf("padded to capacity %.2g", r->j.moe_capacity);
    else if (r->j.moe_imbalance >= 1)
        printf("load given (--moe-imbalance)");
    else
        printf("routing %s%s", tp_name(TP_NAMES_MOE_ROUTING, (int)routing),
               r->j.moe_routing != TP_MOE_ROUTING_AUTO ? ""
               : r->j.task == TP_TASK_PRETRAIN     ? " (pretraining's default)"
                                                   : " (fine-tuning's default)");
    if (r->j.moe_capacity > 0 && !r->j.moe_pad_capacity)
        printf(", capacity %.2g", r->j.moe_capacity);
    printf(": busiest EP rank %.2fx the mean\n", load);
}

void report_header(const struct run *r, const char *what)
{
    const struct tp_layout *l = &r->l;
    struct tp_params p;
    tp_count_params(&r->m, &p);
    char t[16], ac[16];
    fmt_si(t, sizeof t, (double)p.total);
    fmt_si(ac, sizeof ac, (double)p.active);
    printf("trainplan %s - %s\n\n", TP_VERSION, what);
    printf("model    %s [%s], %s parameters (%s active)\n", r->m.name, r->m.family, t, ac);
    if (r->notes[0]) {
        char notes[2 * sizeof r->notes];
        cli_render_settings(r->notes, notes, sizeof notes);
        printf("assumed  %s\n", notes);
    }
    printf("cluster  %u x %s (%u per node), %.1f GiB each%s\n", r->c.n_gpus, r->c.gpu.label,
           r->c.gpus_per_node, r->c.gpu.hbm_bytes / 1073741824.0,
           r->gpu_assumed && r->gpus_assumed ? " (assumed: no --gpu, no --gpus)"
           : r->gpu_assumed                  ? " (assumed: no --gpu)"
           : r->gpus_assumed                 ? " (assumed: no --gpus)"
                                             : "");
    char docs[48] = "";
    if (tp_attn_span(&r->j) < (double)r->j.seq)
        snprintf(docs, sizeof docs, " in documents of %u", r->j.doc_len);
    printf("job      %s, %s, %s, %s conventions%s, seq %llu%s, %s attention%s%s%s%s%s%s%s%s%s\n",
           tp_name(TP_NAMES_TASK, (int)r->j.task), tp_name(TP_NAMES_PRECISION, (int)r->j.precision),
           tp_name(TP_NAMES_OPTIMIZER, (int)r->j.optimizer), tp_stack_get(r->j.framework)->key,
           r->j.fsdp_backend ? " on FSDP2" : "",
           (unsigned long long)r->j.seq, docs, attn_label(&r->j),
           r->j.dropout ? ", dropout" : "", r->j.fused_loss ? ", fused loss" : "",
           r->j.tp_comm_overlap ? ", TP comm overlap" : "",
           r->j.moe_a2a_overlap ? ", EP all-to-all overlap" : "",
           r->j.fp8_param_gather ? ", FP8 params" : "",
           r->j.fp8_attention ? ", FP8 attention" : "",
           r->j.precision == TP_PREC_FP8 && r->j.fp8_recipe == TP_FP8_ROWWISE ? ", FP8 row-wise"
                                                                                : "",
           r->j.log_params_norm ? ", params norm logged" : "",
           r->j.log_num_zeros ? ", grad zeros counted" : "");
    printf("layout   dp %u, tp %u%s, pp %u", l->dp, l->tp, l->sp && l->tp > 1 ? " (sp)" : "", l->pp);
    if (l->pp > 1)
        printf(" (%s%s)", tp_name(TP_NAMES_SCHEDULE, (int)l->schedule), l->vpp > 1 ? ", vpp" : "");
    if (l->pp_first || l->pp_last) {
        char split[48];
        report_split(&r->m, l, split, sizeof split);
        printf(" blocks %s", split);
    }
    if (l->vpp > 1)
        printf(" x %u", l->vpp);
    if (l->pp_nv) {
        char text[1024];
        tp_layout_pp_format(&r->m, l, text, sizeof text);
        printf(" layout %s", text);
    }
    const char *strategy = runs_fsdp(&r->j) ? fsdp_strategy(l->zero, l->shard_group > 0) : NULL;
    if (strategy)
        printf(", cp %u, ep %u, etp %u; FSDP %s", l->cp, l->ep, l->etp, strategy);
    else
        printf(", cp %u, ep %u, etp %u; ZeRO-%u", l->cp, l->ep, l->etp, l->zero);
    if (l->shard_group)
        printf(" in groups of %u", l->shard_group);
    if (l->hpz > 1)
        printf(", hpZ over %u", l->hpz);
    if (r->j.zero_quant_weights || r->j.zero_quant_grads)
        printf(" (ZeRO++ %s%s%s)", r->j.zero_quant_weights ? "int8 weights" : "",
               r->j.zero_quant_weights && r->j.zero_quant_grads ? ", " : "",
               r->j.zero_quant_grads ? "int4 gradients" : "");
    printf("; mbs %u x gas %u = global batch %llu; recompute %s", l->mbs, l->gas,
           (unsigned long long)l->mbs * l->gas * l->dp, tp_name(TP_NAMES_RECOMPUTE, (int)l->recompute));
    if (l->recompute_layers)
        printf(" (%u blocks per stage)", l->recompute_layers);
    if (l->recompute == TP_RECOMPUTE_SELECTIVE && l->recompute_modules) {
        char mods[128];
        tp_recompute_modules_format(l->recompute_modules, mods, sizeof mods);
        printf(" (%s)", mods);
    }
    printf("; offload %s\n", tp_name(TP_NAMES_OFFLOAD, (int)l->offload));
    report_experts(r);
}

void report_logits_note(const struct run *r, const struct tp_memory *mem, const char *lead)
{
    if (!(mem->logits_bytes > mem->activations_bytes) || !(mem->activations_bytes >= 0))
        return;
    printf("%sthe logits are the largest activation: %.2f GB (%u-token vocabulary: bf16 logits",
           lead, mem->logits_bytes / 1e9, r->m.vocab);
    if (r->j.fused_loss) {
        printf(" in chunks, fused loss), more than the blocks' %.2f GB\n",
               mem->activations_bytes / 1e9);
        return;
    }
    /* what a fused / chunked cross-entropy keeps instead: the library's own figure */
    struct tp_job fused = r->j;
    fused.fused_loss = true;
    struct tp_memory f;
    tp_memory_stage(&r->m, &r->c, &fused, &r->l, mem->stage, &f);
    printf(" and the fp32 copy the loss keeps), more than the blocks' %.2f GB; a fused or "
           "chunked loss (--fused-loss) keeps %.2f GB\n",
           mem->activations_bytes / 1e9, f.logits_bytes / 1e9);
}

void report_memory_stage(const struct run *r, const struct tp_memory *mem, bool worst)
{
    char head[96];
    if (r->l.vpp > 1) /* interleaved: the stage's chunks are not contiguous */
        snprintf(head, sizeof head, "%sstage %u of %u: %u blocks from %u", worst ? "worst " : "",
                 mem->stage, r->l.pp, mem->n_layers, mem->first_layer);
    else
        snprintf(head, sizeof head, "%sstage %u of %u: blocks %u-%u", worst ? "worst " : "",
                 mem->stage, r->l.pp, mem->first_layer, mem->first_layer + mem->n_layers - 1);
    printf("\nper GPU, %-38s        GB       GiB   share\n", head);
    double t = mem->total_bytes;
    line(r->j.task == TP_TASK_QLORA ? "weights (NF4 base + adapters)"
         : r->j.task == TP_TASK_LORA ? "weights (frozen base + adapters)"
         : r->j.task == TP_TASK_DPO  ? "weights (policy + frozen reference)"
                                     : "weights",
         mem->weights_bytes, t);
    line("gradients", mem->grads_bytes, t);
    line(r->j.optimizer == TP_OPT_ADAMW_BF16 ? "optimizer states (bf16, no fp32 master)"
                                             : "optimizer states (incl. fp32 master)",
         mem->optimizer_bytes, t);
    if (mem->gather_bytes > 0)
        line("ZeRO-3/FSDP gather buffers", mem->gather_bytes, t);
    char act[64];
    snprintf(act, sizeof act, "activations (%.3g micro-batches in flight)", mem->in_flight);
    line(act, mem->activations_bytes, t);
    if (mem->logits_bytes > 0)
        line("logits and loss", mem->logits_bytes, t);
    if (mem->comm_bytes > 0)
        line("communication buffers", mem->comm_bytes, t);
    line("overhead (context, NCCL, fragmentation)", mem->overhead_bytes, t);
    line("total", mem->total_bytes, 0);
    /* the same peak as PyTorch reports it (docs/memory.md): the total is the device's */
    printf("    %-42s %9.2f GB %9.2f GiB   (%s)\n", "as max_memory_allocated",
           mem->allocated_bytes / 1e9, mem->allocated_bytes / 1073741824.0,
           mem->peak_phase == TP_PHASE_OPTIMIZER ? "peak at the optimizer step"
                                                 : "peak at the start of the backward");
    printf("    %-42s %9.2f GB %9.2f GiB\n", "as max_memory_reserved", mem->reserved_bytes / 1e9,
           mem->reserved_bytes / 1073741824.0);
    line("capacity", mem->capacity_bytes, 0);
    char hint[160];
    report_fit_hint(r, mem, hint, sizeof hint);
    printf("  %-44s %9.2f GB   -> %s%s%s%s\n", "headroom", mem->headroom_bytes / 1e9,
           mem->verdict == TP_MEM_TIGHT ? "fits, but within the model's error: tight"
           : mem->fits                  ? "fits"
                                        : "DOES NOT FIT",
           hint[0] ? " (fits with " : "", hint, hint[0] ? ")" : "");
    report_logits_note(r, mem, "  warning: ");
    if (mem->host_bytes_per_node > 0)
        printf("  host RAM for the offload: %.1f GB per node\n", mem->host_bytes_per_node / 1e9);
}

void report_csv_cell(const char *s)
{
    csv_fwrite(stdout, s, strlen(s)); /* always quoted, quotes doubled (RFC 4180) */
}

/* A change as the flags that make it; a ZeRO stage as the FSDP strategy where the job shards
   with FSDP (runs_fsdp: --fsdp, not --zero, is what the user gives there). */
void report_fix_flags(const struct tp_job *j, const struct tp_fix *f, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < f->n_set; i++) {
        const struct tp_setting *s = &f->set[i];
        char flag[sizeof s->field], value[sizeof s->value + 2] = "", dp[24] = "";
        for (size_t k = 0; k < sizeof flag; k++)
            flag[k] = s->field[k] == '_' ? '-' : s->field[k];
        if (strcmp(s->value, "true") != 0) /* a switch: the flag alone */
            snprintf(value, sizeof value, " %s", s->value);
        const char *strategy = runs_fsdp(j) && strcmp(s->field, "zero") == 0 &&
                                       s->value[0] >= '0' && !s->value[1]
                                   ? fsdp_strategy((uint32_t)(s->value[0] - '0'), false)
                                   : NULL;
        if (strategy) {
            snprintf(flag, sizeof flag, "fsdp");
            snprintf(value, sizeof value, " %s", strategy);
        }
        if (s->dp)
            snprintf(dp, sizeof dp, " (dp %u)", s->dp);
        int n = snprintf(buf + at, len - at, "%s--%s%s%s", i ? " " : "", flag, value, dp);
        if (n < 0 || (size_t)n >= len - at)
            return;
        at += (size_t)n;
    }
}

void report_fit_hint(const struct run *r, const struct tp_memory *mem, char *buf, size_t len)
{
    struct tp_fix hint;
    buf[0] = '\0';
    if (tp_fit_hint(&r->m, &r->c, &r->j, &r->l, mem, &hint))
        report_fix_flags(&r->j, &hint, buf, len);
}

void report_fixes(const struct tp_job *j, const struct tp_fix *fixes, size_t n, double capacity)
{
    char flags[256];
    for (size_t i = 0; i < n; i++) {
        report_fix_flags(j, &fixes[i], flags, sizeof flags);
        /* a change that fits by less than the memory model's error says so */
        double margin = tp_memory_margin(&fixes[i].job, NULL);
        bool tight = tp_memory_verdict(fixes[i].total_bytes, capacity, margin) == TP_MEM_TIGHT;
        if (tight)
            printf("  fits with %-40s (total %.2f GB; tight: within the model's %.0f%% error)\n",
                   flags, fixes[i].total_bytes / 1e9, 100 * margin);
        else
            printf("  fits with %-40s (total %.2f GB)\n", flags, fixes[i].total_bytes / 1e9);
    }
    if (n == 0)
        printf("  none found among single or paired changes; try more GPUs or a GPU with more "
               "memory\n");
}

/* A run that fits by less than the memory model's measured error for its class: says so, and
   the changes after which it fits with that margin to spare (tp_memory_suggest against the
   capacity less the margin). */
void report_tight(const struct run *r, const struct tp_memory *mem)
{
    printf("\ntight: fits by %.2f GB, less than the memory model's error for %s stacks (%.0f%% of "
           "the prediction, %.2f GB: docs/memory.md). Changes that leave that much free:\n",
           mem->headroom_bytes / 1e9, mem->margin_class, 100 * mem->margin,
           mem->total_bytes * mem->margin / 1e9);
    static struct tp_cluster c;
    c = r->c;
    c.gpu.hbm_bytes = r->c.gpu.hbm_bytes / (1 + mem->margin);
    struct tp_fix fixes[TP_MAX_FIXES];
    size_t n = tp_memory_suggest(&r->m, &c, &r->j, &r->l, fixes, TP_MAX_FIXES);
    report_fixes(&r->j, fixes, n, r->c.gpu.hbm_bytes);
}
