/*
 * ckpt_plan.c - the size of the checkpoints a run saves (the evaluation's arithmetic, moved
 * here from readers/ckpt_zero.c, which reads DeepSpeed ZeRO checkpoint folders and describes their
 * layout; its comment cites DeepSpeed's engine for the files counted below).
 */
#include "eval_internal.h"

#include <string.h>

/* Trainable parameters of a LoRA / QLoRA job: r x (rows + cols) per adapted weight. */
static double lora_params(const struct tp_model *m, const struct tp_job *j)
{
    struct tp_tensor t[TP_MAX_BLOCK_TENSORS];
    double s = 0;
    for (uint32_t l = 0; l < m->n_layers; l++) {
        size_t n = tp_block_tensors(m, l, t);
        for (size_t i = 0; i < n; i++)
            if (t[i].lora & j->lora_targets)
                s += (double)j->lora_rank * (double)(t[i].rows + t[i].cols) * t[i].count;
    }
    return s;
}

/* The plan for `world` ranks, `mp` model-parallel ranks (tp x pp), ZeRO stage `zero`. */
void tp_ckpt_plan_core(const struct tp_model *m, const struct tp_job *j, uint32_t world,
                       uint32_t mp, uint32_t zero, double storage_bps, struct tp_ckpt_plan *o)
{
    memset(o, 0, sizeof *o);
    struct tp_params p;
    tp_count_params(m, &p);
    bool lora = j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA;
    double n = lora ? lora_params(m, j) : (double)p.checkpoint;
    bool fp32 = j->precision == TP_PREC_FP32;
    world = world ? world : 1;
    mp = mp ? mp : 1;
    o->params = n;
    o->weights_bytes = n * (fp32 ? 4 : 2);
    o->master_bytes = fp32 ? 0 : 4 * n;
    o->moments_bytes = n * tp_optimizer_state_bytes(m, j->optimizer);
    double opt = o->master_bytes + o->moments_bytes;
    if (zero >= 3) {
        /* stage 3 saves no 16-bit weights: every rank's module file holds shapes only */
        o->weights_bytes = 0;
        o->model_files = world;
    } else {
        o->model_files = mp;
        o->model_file_bytes = o->weights_bytes / mp;
    }
    o->optim_files = zero >= 1 ? world : mp;
    o->optim_file_bytes = opt / o->optim_files;
    o->save_bytes = o->weights_bytes + opt;
    o->consolidated_fp32_bytes = 4.0 * (double)p.checkpoint;
    o->consolidated_bf16_bytes = 2.0 * (double)p.checkpoint;
    /* fp32 partitions of every rank + the consolidated dict + the file being loaded */
    o->zero_to_fp32_ram_bytes = 8.0 * n + o->optim_file_bytes;
    o->zero_to_fp32_disk_bytes = 4.0 * n;
    o->save_s = storage_bps > 0 ? o->save_bytes / storage_bps : 0;
}

void tp_ckpt_plan(const struct tp_model *m, const struct tp_cluster *c, const struct tp_job *j,
                  const struct tp_layout *l, double storage_bps, struct tp_ckpt_plan *out)
{
    tp_ckpt_plan_core(m, j, c->n_gpus, l->tp * l->pp, l->zero, storage_bps, out);
}
