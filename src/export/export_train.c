/*
 * export_train.c - what a run needs to start besides its layout: the stopping point (from
 * --tokens or --steps), the learning rate and its schedule, and the data and tokenizer
 * placeholders that fail loudly when left unset.
 *
 * Megatron-LM: --train-iters / --train-samples (training_config.py TrainingConfig), --lr
 * (arguments.py:2338), --min-lr, --lr-decay-style, --lr-warmup-iters|samples,
 * --lr-decay-iters|samples (training_config.py SchedulerConfig; validate_args asserts the
 * warm-up and decay are counted in the unit of the stopping point, arguments.py:758-784), --weight-decay, --adam-beta1/2, --tokenizer-type HuggingFaceTokenizer,
 * --tokenizer-model, --data-path, --split; Megatron-DeepSpeed megatron/arguments.py: the same
 * names, HFTokenizer.  Axolotl: learning_rate (required: schemas/training.py:116),
 * lr_scheduler, cosine_min_lr_ratio, warmup_steps, max_steps (schemas/config.py:1178).
 */
#include "export_internal.h"

#include <math.h>
#include <string.h>

double tp_export_default_lr(const struct tp_model *m, const struct tp_job *j, bool pretraining,
                            const char **source)
{
    struct tp_params pc;
    tp_count_params(m, &pc);
    bool large = pc.total > 20e9; /* the papers' sizes: 7B/13B against 34B/65B/70B */
    const char *src;
    double lr;
    if (j->task == TP_TASK_DPO) {
        lr = 5e-7;
        src = "DPO, Tunstall et al. 2023 (Zephyr) §4";
    } else if (j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA) {
        lr = large ? 1e-4 : 2e-4;
        src = "LoRA/QLoRA, Dettmers et al. 2023 (QLoRA) Appendix B.2";
    } else if (j->task == TP_TASK_SFT || !pretraining) {
        lr = 2e-5;
        src = "full fine-tuning, Llama 2 (Touvron et al. 2023) §3.1";
    } else {
        lr = large ? 1.5e-4 : 3e-4;
        src = "pre-training, Llama 2 (Touvron et al. 2023) §2.2 Table 1";
    }
    if (source)
        *source = src;
    return lr;
}

/* Optimizer steps of the run: --steps, or --tokens over global batch x sequence (rounded up);
   0 when neither is given. */
static uint64_t run_steps(const struct tp_export_plan *p)
{
    if (p->o->steps)
        return p->o->steps;
    if (p->o->tokens > 0)
        return (uint64_t)ceil(p->o->tokens / ((double)p->gbs * (double)p->j->seq));
    return 0;
}

/* Llama 2's 2000 warm-up steps (§2.2), at most a tenth of a shorter run. */
static uint64_t warmup_steps(uint64_t steps)
{
    uint64_t w = steps / 10;
    if (w > 2000)
        w = 2000;
    return w ? w : 1;
}

void tp_export_train_lm(const struct tp_export_plan *p, struct tp_flags *a, bool deepspeed)
{
    const char *src;
    double lr = p->o->lr > 0 ? p->o->lr : tp_export_default_lr(p->m, p->j, true, &src);
    tp_arg(a, "#", "stopping point, learning rate and schedule: yours to choose%s",
           p->o->lr > 0 ? "" : " (defaults below)");
    if (p->o->tokens > 0) {
        /* samples of seq tokens: the stopping point in tokens, rounded up to a whole sample */
        uint64_t samples = (uint64_t)ceil(p->o->tokens / (double)p->j->seq);
        uint64_t warm = warmup_steps(run_steps(p)) * p->gbs;
        tp_arg(a, "#", "%llu samples x %llu tokens = %.0f tokens (--tokens %.0f, rounded up to "
                       "a whole sample)", (unsigned long long)samples, (unsigned long long)p->j->seq,
               (double)samples * (double)p->j->seq, p->o->tokens);
        tp_arg(a, "--train-samples", "%llu", (unsigned long long)samples);
        tp_arg(a, "--lr-warmup-samples", "%llu", (unsigned long long)(warm < samples ? warm : 1));
        tp_arg(a, "--lr-decay-samples", "%llu", (unsigned long long)samples);
    } else if (p->o->steps) {
        tp_arg(a, "--train-iters", "%llu", (unsigned long long)p->o->steps);
        tp_arg(a, "--lr-warmup-iters", "%llu", (unsigned long long)warmup_steps(p->o->steps));
        tp_arg(a, "--lr-decay-iters", "%llu", (unsigned long long)p->o->steps);
    } else {
        tp_arg(a, "--train-iters", "\"${TRAIN_ITERS:?set TRAIN_ITERS (or export with --tokens "
                                   "or --steps)}\"");
        tp_arg(a, "--lr-warmup-fraction", "0.01");
        tp_export_note(p->out, "no stopping point given (--tokens or --steps): "
                               "megatron_args.sh reads TRAIN_ITERS");
    }
    if (p->o->lr <= 0)
        tp_arg(a, "#", "peak learning rate: the default of %s", src);
    tp_arg(a, "--lr", "%g", lr);
    tp_arg(a, "--min-lr", "%g", lr / 10); /* decay to 10% of the peak (Llama 2 §2.2) */
    tp_arg(a, "--lr-decay-style", "cosine");
    tp_arg(a, "--weight-decay", "0.1");
    tp_arg(a, "--adam-beta1", "0.9");
    tp_arg(a, "--adam-beta2", "0.95");
    if (p->o->lr <= 0)
        tp_export_note(p->out, "learning rate %g: the default of %s; choose yours (--lr)", lr,
                       src);
    /* data and tokenizer: the tokenizer is the model's own where its Hugging Face id is known */
    char id[256];
    bool hub = tp_export_base_model(p->m, id, sizeof id) == TP_BASE_HUB;
    tp_arg(a, "#", "data and tokenizer: set DATA_PATH (a preprocessed prefix, or weighted "
                   "prefixes) and TOKENIZER_MODEL");
    tp_arg(a, "--tokenizer-type", "%s", deepspeed ? "HFTokenizer" : "HuggingFaceTokenizer");
    if (hub)
        tp_arg(a, "--tokenizer-model", "\"${TOKENIZER_MODEL:-%s}\"", id);
    else
        tp_arg(a, "--tokenizer-model", "\"${TOKENIZER_MODEL:?set TOKENIZER_MODEL to the "
                                       "tokenizer of the model (Hugging Face id or path)}\"");
    tp_arg(a, "--data-path", "${DATA_PATH:?set DATA_PATH to the preprocessed data prefix}");
    tp_arg(a, "--split", "99,1,0");
}

void tp_export_train_axolotl(const struct tp_export_plan *p, json_t *d)
{
    const char *src;
    double lr = p->o->lr > 0 ? p->o->lr : tp_export_default_lr(p->m, p->j, false, &src);
    json_object_set_new(d, "learning_rate", json_real(lr));
    json_object_set_new(d, "lr_scheduler", json_string("cosine"));
    json_object_set_new(d, "cosine_min_lr_ratio", json_real(0.1));
    uint64_t steps = run_steps(p);
    if (steps) {
        json_object_set_new(d, "max_steps", json_integer((json_int_t)steps));
        json_object_set_new(d, "warmup_steps", json_integer((json_int_t)warmup_steps(steps)));
        if (p->o->tokens > 0)
            tp_export_note(p->out, "max_steps %llu = --tokens %.6g / (global batch %llu x seq "
                                   "%llu), rounded up (every sample packed to the full "
                                   "sequence)", (unsigned long long)steps, p->o->tokens,
                           (unsigned long long)p->gbs, (unsigned long long)p->j->seq);
    } else {
        tp_export_note(p->out, "no stopping point given (--tokens or --steps): Axolotl trains "
                               "num_epochs (default 1) over the datasets");
    }
    if (p->o->lr <= 0)
        tp_export_note(p->out, "learning_rate %g: the default of %s; choose yours (--lr)", lr,
                       src);
}
