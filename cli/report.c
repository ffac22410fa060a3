/*
 * report.c - what the run commands (memory, estimate) print alike: the resolved run, the memory
 * breakdown of a stage, and their JSON objects.
 */
#include "cli.h"

#include <csv.h>

#include <jansson.h>
#include <string.h>

const char *const task_names[] = {"pretrain", "sft", "dpo", "lora", "qlora"};
const char *const optimizer_names[] = {"adamw", "adamw-8bit", "adamw-4bit", "adafactor", "sgd",
                                         "sgd-momentum"};
const char *const precision_names[] = {"bf16", "fp16", "fp8", "fp32"};
const char *const framework_names[] = {"deepspeed", "fsdp",       "megatron",
                                       "axolotl",   "torchtitan", "megatron-deepspeed"};
const char *const attn_names[] = {"flash", "eager", "flash2", "flash3"};
const char *const recompute_names[] = {"none", "selective", "full"};
const char *const offload_names[] = {"none", "optimizer", "params"};
const char *const schedule_names[] = {"1f1b", "interleaved", "gpipe"};

const char *attn_label(const struct tp_job *j)
{
    switch (j->attn_impl) {
    case TP_ATTN_FLASH: return tp_attn_native(j) ? "flash (TE/cuDNN)" : "flash (FlashAttention-2)";
    case TP_ATTN_EAGER: return "eager";
    case TP_ATTN_FLASH2: return "FlashAttention-2";
    case TP_ATTN_FLASH3: return "native flash (FA3/cuDNN)";
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
        snprintf(buf, len, "%s", recompute_names[l->recompute]);
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
    if (r->notes[0])
        printf("assumed  %s\n", r->notes);
    printf("cluster  %u x %s (%u per node), %.1f GiB each\n", r->c.n_gpus, r->c.gpu.label,
           r->c.gpus_per_node, r->c.gpu.hbm_bytes / 1073741824.0);
    printf("job      %s, %s, %s, %s conventions, seq %llu, %s attention%s%s%s\n", task_names[r->j.task],
           precision_names[r->j.precision], optimizer_names[r->j.optimizer], framework_names[r->j.framework],
           (unsigned long long)r->j.seq, attn_label(&r->j),
           r->j.dropout ? ", dropout" : "", r->j.fused_loss ? ", fused loss" : "",
           r->j.tp_comm_overlap ? ", TP comm overlap" : "");
    printf("layout   dp %u, tp %u%s, pp %u", l->dp, l->tp, l->sp && l->tp > 1 ? " (sp)" : "", l->pp);
    if (l->pp > 1)
        printf(" (%s%s)", schedule_names[l->schedule], l->vpp > 1 ? ", vpp" : "");
    if (l->pp_first || l->pp_last) {
        char split[48];
        report_split(&r->m, l, split, sizeof split);
        printf(" blocks %s", split);
    }
    if (l->vpp > 1)
        printf(" x %u", l->vpp);
    printf(", cp %u, ep %u, etp %u; ZeRO-%u", l->cp, l->ep, l->etp, l->zero);
    if (l->shard_group)
        printf(" in groups of %u", l->shard_group);
    printf("; mbs %u x gas %u = global batch %llu; recompute %s", l->mbs, l->gas,
           (unsigned long long)l->mbs * l->gas * l->dp, recompute_names[l->recompute]);
    if (l->recompute_layers)
        printf(" (%u blocks per stage)", l->recompute_layers);
    printf("; offload %s\n", offload_names[l->offload]);
}

void report_fit_hint(const struct run *r, const struct tp_memory *mem, char *buf, size_t len)
{
    buf[0] = '\0';
    if (mem->fits)
        return;
    /* the switches that change no layout size: a fused/chunked loss, another recompute mode */
    static const struct {
        bool fused;
        int recompute; /* -1: as given */
        const char *text;
    } TRY[] = {{true, -1, "--fused-loss"},
               {false, TP_RECOMPUTE_SELECTIVE, "--recompute selective"},
               {false, TP_RECOMPUTE_FULL, "--recompute full"},
               {true, TP_RECOMPUTE_SELECTIVE, "--fused-loss --recompute selective"},
               {true, TP_RECOMPUTE_FULL, "--fused-loss --recompute full"}};
    for (size_t i = 0; i < sizeof TRY / sizeof TRY[0]; i++) {
        struct tp_job j = r->j;
        struct tp_layout l = r->l;
        if ((TRY[i].fused && j.fused_loss) ||
            (TRY[i].recompute >= 0 && (int)l.recompute == TRY[i].recompute &&
             !l.recompute_layers))
            continue;
        j.fused_loss = j.fused_loss || TRY[i].fused;
        if (TRY[i].recompute >= 0) {
            l.recompute = (enum tp_recompute)TRY[i].recompute;
            l.recompute_layers = 0;
        }
        struct tp_memory m;
        if (tp_memory_worst(&r->m, &r->c, &j, &l, &m) == TP_OK && m.fits) {
            snprintf(buf, len, "%s", TRY[i].text);
            return; /* the first, the cheapest in speed */
        }
    }
}

void report_memory_stage(const struct run *r, const struct tp_memory *mem, bool worst)
{
    char head[96];
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
    line("optimizer states (incl. fp32 master)", mem->optimizer_bytes, t);
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
    line("capacity", mem->capacity_bytes, 0);
    char hint[160];
    report_fit_hint(r, mem, hint, sizeof hint);
    printf("  %-44s %9.2f GB   -> %s%s%s%s\n", "headroom", mem->headroom_bytes / 1e9,
           mem->fits ? "fits" : "DOES NOT FIT", hint[0] ? " (fits with " : "", hint,
           hint[0] ? ")" : "");
    if (mem->host_bytes_per_node > 0)
        printf("  host RAM for the offload: %.1f GB per node\n", mem->host_bytes_per_node / 1e9);
}

json_t *report_memory_json(const struct tp_memory *m)
{
    return json_pack("{s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f,"
                     " s:b, s:f, s:f}",
                     "stage", (json_int_t)m->stage, "first_layer", (json_int_t)m->first_layer,
                     "layers", (json_int_t)m->n_layers, "params_per_gpu", m->params,
                     "weights_bytes", m->weights_bytes, "grads_bytes", m->grads_bytes,
                     "optimizer_bytes", m->optimizer_bytes, "gather_bytes", m->gather_bytes,
                     "activations_bytes", m->activations_bytes, "logits_bytes", m->logits_bytes,
                     "comm_bytes", m->comm_bytes, "overhead_bytes", m->overhead_bytes,
                     "total_bytes", m->total_bytes, "capacity_bytes", m->capacity_bytes,
                     "headroom_bytes", m->headroom_bytes, "fits", (int)m->fits,
                     "micro_batches_in_flight", m->in_flight,
                     "host_bytes_per_node", m->host_bytes_per_node);
}

json_t *report_layout_json(const struct tp_layout *l)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:I, s:I, s:I, s:s,"
                     " s:I, s:s, s:s}",
                     "dp", (json_int_t)l->dp, "tp", (json_int_t)l->tp, "pp", (json_int_t)l->pp,
                     "vpp", (json_int_t)l->vpp, "pp_first", (json_int_t)l->pp_first, "pp_last",
                     (json_int_t)l->pp_last, "ep", (json_int_t)l->ep, "etp", (json_int_t)l->etp,
                     "cp", (json_int_t)l->cp, "sp", (int)l->sp, "zero", (json_int_t)l->zero,
                     "shard_group", (json_int_t)l->shard_group, "mbs", (json_int_t)l->mbs,
                     "gas", (json_int_t)l->gas, "recompute", recompute_names[l->recompute],
                     "recompute_layers", (json_int_t)l->recompute_layers,
                     "offload", offload_names[l->offload], "schedule", schedule_names[l->schedule]);
}

void report_csv_cell(const char *s)
{
    csv_fwrite(stdout, s, strlen(s)); /* always quoted, quotes doubled (RFC 4180) */
}
