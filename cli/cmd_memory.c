/*
 * cmd_memory.c - `trainplan memory MODEL ...`: will the run fit, and what takes the memory.
 *
 * Exit status 0 when the worst pipeline stage fits, 1 when it does not (with the smallest
 * changes that make it fit), 2 on bad input.
 */
#include "cli.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *const TASKS[] = {"pretrain", "sft", "dpo", "lora", "qlora"};
static const char *const OPTIMIZERS[] = {"adamw", "adamw-8bit", "adamw-4bit", "adafactor", "sgd",
                                         "sgd-momentum"};
static const char *const PRECISIONS[] = {"bf16", "fp16", "fp8", "fp32"};
static const char *const FRAMEWORKS[] = {"deepspeed", "fsdp", "megatron", "axolotl", "torchtitan"};
static const char *const RECOMPUTE[] = {"none", "selective", "full"};
static const char *const OFFLOAD[] = {"none", "optimizer", "params"};
static const char *const SCHEDULES[] = {"1f1b", "interleaved", "gpipe"};

enum { MAX_FIXES = 6 };

static void help(void)
{
    printf("usage: trainplan memory MODEL --gpu NAME --gpus N [layout and job options]\n\n"
           "Per-GPU memory of a training run at its peak, for the worst pipeline stage (every\n"
           "stage with --per-stage): weights, gradients, optimizer states after ZeRO/FSDP and\n"
           "TP/PP/EP sharding, ZeRO-3 gather buffers, activations of the micro-batches in flight,\n"
           "logits, communication buffers and framework overhead, against the GPU's capacity.\n"
           "When it does not fit, lists the smallest changes that make it fit.\n\n"
           "JSON keys: schema_version, weights_bytes, grads_bytes, optimizer_bytes,\n"
           "activations_bytes, total_bytes, capacity_bytes, fits, ... (bytes, per GPU).\n\n"
           "options:\n");
    cli_print_options(stdout, CMD_MEMORY);
    printf("\nexit status: 0 fits; 1 does not fit; 2 usage or input error.\n");
}

static void line(const char *label, double bytes, double total)
{
    printf("  %-44s %9.2f GB %9.2f GiB", label, bytes / 1e9, bytes / 1073741824.0);
    if (total > 0)
        printf("  %5.1f%%", 100.0 * bytes / total);
    putchar('\n');
}

static void print_header(const struct run *r)
{
    const struct tp_layout *l = &r->l;
    struct tp_params p;
    tp_count_params(&r->m, &p);
    char t[16], ac[16];
    fmt_si(t, sizeof t, (double)p.total);
    fmt_si(ac, sizeof ac, (double)p.active);
    printf("trainplan %s - memory\n\n", TP_VERSION);
    printf("model    %s [%s], %s parameters (%s active)\n", r->m.name, r->m.family, t, ac);
    if (r->notes[0])
        printf("assumed  %s\n", r->notes);
    printf("cluster  %u x %s (%u per node), %.1f GiB each\n", r->c.n_gpus, r->c.gpu.label,
           r->c.gpus_per_node, r->c.gpu.hbm_bytes / 1073741824.0);
    printf("job      %s, %s, %s, %s conventions, seq %llu, %s attention%s%s\n", TASKS[r->j.task],
           PRECISIONS[r->j.precision], OPTIMIZERS[r->j.optimizer], FRAMEWORKS[r->j.framework],
           (unsigned long long)r->j.seq, r->j.attn_impl ? "eager" : "flash",
           r->j.dropout ? ", dropout" : "", r->j.fused_loss ? ", fused loss" : "");
    printf("layout   dp %u, tp %u%s, pp %u", l->dp, l->tp, l->sp && l->tp > 1 ? " (sp)" : "", l->pp);
    if (l->pp > 1)
        printf(" (%s%s)", SCHEDULES[l->schedule], l->vpp > 1 ? ", vpp" : "");
    if (l->vpp > 1)
        printf(" x %u", l->vpp);
    printf(", cp %u, ep %u, etp %u; ZeRO-%u", l->cp, l->ep, l->etp, l->zero);
    if (l->shard_group)
        printf(" in groups of %u", l->shard_group);
    printf("; mbs %u x gas %u = global batch %llu; recompute %s", l->mbs, l->gas,
           (unsigned long long)l->mbs * l->gas * l->dp, RECOMPUTE[l->recompute]);
    if (l->recompute_layers)
        printf(" (%u blocks per stage)", l->recompute_layers);
    printf("; offload %s\n", OFFLOAD[l->offload]);
}

static void print_stage(const struct run *r, const struct tp_memory *mem, bool worst)
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
    printf("  %-44s %9.2f GB   -> %s\n", "headroom", mem->headroom_bytes / 1e9,
           mem->fits ? "fits" : "DOES NOT FIT");
    if (mem->host_bytes_per_node > 0)
        printf("  host RAM for the offload: %.1f GB per node\n", mem->host_bytes_per_node / 1e9);
}

static json_t *mem_json(const struct tp_memory *m)
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

static json_t *layout_json(const struct tp_layout *l)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:I, s:I, s:I, s:s, s:I, s:s,"
                     " s:s}",
                     "dp", (json_int_t)l->dp, "tp", (json_int_t)l->tp, "pp", (json_int_t)l->pp,
                     "vpp", (json_int_t)l->vpp, "ep", (json_int_t)l->ep, "etp", (json_int_t)l->etp,
                     "cp", (json_int_t)l->cp, "sp", (int)l->sp, "zero", (json_int_t)l->zero,
                     "shard_group", (json_int_t)l->shard_group, "mbs", (json_int_t)l->mbs,
                     "gas", (json_int_t)l->gas, "recompute", RECOMPUTE[l->recompute],
                     "recompute_layers", (json_int_t)l->recompute_layers,
                     "offload", OFFLOAD[l->offload], "schedule", SCHEDULES[l->schedule]);
}

static int print_json(const struct run *r, const struct tp_memory *worst, bool per_stage,
                      const struct tp_fix *fixes, size_t n_fixes)
{
    json_t *o = mem_json(worst);
    json_t *head = json_pack(
        "{s:i, s:s, s:{s:s, s:s}, s:{s:s, s:I, s:I, s:f}, s:{s:s, s:s, s:s, s:s, s:I, s:s},"
        " s:o}",
        "schema_version", TP_SCHEMA_VERSION, "command", "memory", "model", "name", r->m.name,
        "family", r->m.family, "cluster", "gpu", r->c.gpu.key, "gpus", (json_int_t)r->c.n_gpus,
        "gpus_per_node", (json_int_t)r->c.gpus_per_node, "capacity_bytes", r->c.gpu.hbm_bytes,
        "job", "task", TASKS[r->j.task], "optimizer", OPTIMIZERS[r->j.optimizer], "precision",
        PRECISIONS[r->j.precision], "framework", FRAMEWORKS[r->j.framework], "seq",
        (json_int_t)r->j.seq, "attention", r->j.attn_impl ? "eager" : "flash", "layout",
        layout_json(&r->l));
    if (!head || !o) {
        json_decref(head);
        json_decref(o);
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    json_object_update(head, o);
    json_decref(o);
    if (per_stage) {
        json_t *stages = json_array();
        for (uint32_t s = 0; s < r->l.pp; s++) {
            struct tp_memory m;
            tp_memory_stage(&r->m, &r->c, &r->j, &r->l, s, &m);
            json_array_append_new(stages, mem_json(&m));
        }
        json_object_set_new(head, "stages", stages);
    }
    json_t *fx = json_array();
    for (size_t i = 0; i < n_fixes; i++)
        json_array_append_new(fx, json_pack("{s:s, s:f}", "change", fixes[i].text, "total_bytes",
                                            fixes[i].total_bytes));
    json_object_set_new(head, "fixes", fx);
    json_object_set_new(head, "notes", json_string(r->notes));
    return cli_print_json(head, 12);
}

static void print_csv(const struct run *r, const struct tp_memory *m)
{
    printf("model,gpu,gpus,dp,tp,pp,cp,ep,zero,mbs,gas,recompute,weights_bytes,grads_bytes,"
           "optimizer_bytes,gather_bytes,activations_bytes,logits_bytes,comm_bytes,"
           "overhead_bytes,total_bytes,capacity_bytes,fits\n");
    printf("\"%s\",%s,%u,%u,%u,%u,%u,%u,%u,%u,%u,%s,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,"
           "%.0f,%d\n",
           r->m.name, r->c.gpu.key, r->c.n_gpus, r->l.dp, r->l.tp, r->l.pp, r->l.cp, r->l.ep,
           r->l.zero, r->l.mbs, r->l.gas, RECOMPUTE[r->l.recompute], m->weights_bytes,
           m->grads_bytes, m->optimizer_bytes, m->gather_bytes, m->activations_bytes,
           m->logits_bytes, m->comm_bytes, m->overhead_bytes, m->total_bytes, m->capacity_bytes,
           m->fits);
}

int cmd_memory(int argc, char **argv)
{
    struct cli_args a;
    int rc = cli_begin(argc, argv, CMD_MEMORY, &a, help);
    if (rc >= 0)
        return rc;
    static struct run r;
    memset(&r, 0, sizeof r);
    if ((rc = cli_resolve_run(&a, &r)) != EXIT_OK)
        return rc;
    struct tp_memory worst;
    tp_memory_worst(&r.m, &r.c, &r.j, &r.l, &worst);
    struct tp_fix fixes[MAX_FIXES];
    size_t n_fixes = worst.fits ? 0 : tp_memory_suggest(&r.m, &r.c, &r.j, &r.l, fixes, MAX_FIXES);
    if (a.format == FMT_JSON) {
        if ((rc = print_json(&r, &worst, a.per_stage != 0, fixes, n_fixes)) != EXIT_OK)
            return rc;
    } else if (a.format == FMT_CSV) {
        print_csv(&r, &worst);
    } else {
        print_header(&r);
        if (a.per_stage) {
            for (uint32_t s = 0; s < r.l.pp; s++) {
                struct tp_memory m;
                tp_memory_stage(&r.m, &r.c, &r.j, &r.l, s, &m);
                print_stage(&r, &m, false);
            }
        } else {
            print_stage(&r, &worst, r.l.pp > 1);
        }
        if (!worst.fits) {
            printf("\ndoes not fit by %.2f GB. Changes that make it fit:\n",
                   -worst.headroom_bytes / 1e9);
            for (size_t i = 0; i < n_fixes; i++)
                printf("  fits with %-40s (total %.2f GB)\n", fixes[i].text,
                       fixes[i].total_bytes / 1e9);
            if (n_fixes == 0)
                printf("  none found among single or paired changes; try more GPUs or a GPU "
                       "with more memory\n");
        }
    }
    return cli_finish(worst.fits ? EXIT_OK : EXIT_NO);
}
