/*
 * logs_text.c - the text log families with one step line each: Megatron-LM / Megatron-Core /
 * Megatron-DeepSpeed, torchtitan, nanoGPT and llm.c (a cheap line test for detection, a parser
 * for the step records and the run facts the log states).
 */
#include "logs_internal.h"

#include <ctype.h>
#include <string.h>

/* ----------------------------------------------------------------------------------------- */
/* Megatron-LM, Megatron-Core, Megatron-DeepSpeed                                              */
/* ----------------------------------------------------------------------------------------- */

/* " iteration       50/    5000 |": the iteration, and the text after the bar in *rest. */
static bool megatron_head(const char *line, uint64_t *it, const char **rest)
{
    for (const char *p = strstr(line, "iteration"); p; p = strstr(p + 1, "iteration")) {
        double a, b;
        const char *e = p[9] == ' ' ? tp_logs_number(p + 9, false, &a) : NULL;
        if (!e || !tp_logs_whole(a))
            continue;
        while (*e == ' ')
            e++;
        if (*e != '/' || !(e = tp_logs_number(e + 1, false, &b)))
            continue;
        while (*e == ' ')
            e++;
        if (*e != '|')
            continue;
        *it = (uint64_t)a;
        *rest = e + 1;
        return true;
    }
    return false;
}

bool tp_logs_megatron_is_step(const char *line)
{
    uint64_t it;
    const char *rest;
    return megatron_head(line, &it, &rest) && strstr(rest, "elapsed time per iteration");
}

static void megatron_fields(struct parser *p, const char *rest, struct tp_log_step *s)
{
    while (*rest) {
        size_t n = strcspn(rest, "|");
        char seg[256];
        size_t k = n < sizeof seg - 1 ? n : sizeof seg - 1;
        memcpy(seg, rest, k);
        seg[k] = '\0';
        rest += n + (rest[n] == '|');
        char *colon = strchr(seg, ':');
        double v;
        if (!colon || !tp_logs_number(colon + 1, false, &v))
            continue;
        *colon = '\0';
        tp_logs_trim(seg);
        if (strcmp(seg, "elapsed time per iteration (ms)") == 0) {
            s->step_s = v / 1000;
        } else if (strcmp(seg, "throughput per GPU (TFLOP/s/GPU)") == 0) {
            s->tflops_per_gpu = v;
        } else if (strcmp(seg, "TFLOPs") == 0) {
            s->tflops_per_gpu = v;
            p->ds = true;
        } else if (strcmp(seg, "samples per second") == 0) {
            s->samples_per_s = v;
            p->ds = true;
        } else if (strcmp(seg, "tokens per gpu per second (tgs)") == 0 ||
                   strcmp(seg, "TGS") == 0 || strcmp(seg, "tokens per GPU (tokens/s/GPU)") == 0 ||
                   strcmp(seg, "Tokens per second per GPU (Tok/s/GPU)") == 0) {
            s->tokens_per_s_per_gpu = v;
        } else if (strcmp(seg, "global batch size") == 0) {
            tp_logs_set_u64(&p->info->global_batch, v);
        } else if (strcmp(seg, "lm loss") == 0) {
            s->loss = v;
        } else if (strcmp(seg, "actual seqlen") == 0) {
            tp_logs_set_u64(&p->info->seq, v);
        }
    }
}

/* "  global_batch_size ............................... 1024" (Megatron's argument dump) */
static bool dotted(const char *line, const char *key, double *v)
{
    size_t n = strlen(key);
    for (const char *p = strstr(line, key); p; p = strstr(p + 1, key)) {
        if ((p > line && p[-1] != ' ') || p[n] != ' ' || p[n + 1] != '.')
            continue;
        const char *q = p + n + 1;
        while (*q == '.')
            q++;
        const char *e = tp_logs_number(q, false, v);
        return e && (*e == '\0' || isspace((unsigned char)*e));
    }
    return false;
}

void tp_logs_megatron_line(struct parser *p, const char *line)
{
    struct tp_log_info *info = p->info;
    uint64_t it;
    const char *rest;
    double v;
    if (megatron_head(line, &it, &rest)) {
        if (strstr(rest, "elapsed time per iteration"))
            megatron_fields(p, rest, tp_logs_push(p, it));
        return;
    }
    if (strstr(line, "memory (MB)")) { /* report_memory: MiB of torch.cuda.* */
        /* Megatron-LM megatron/training/utils.py report_memory: "max allocated" is
           torch.cuda.max_memory_allocated, "max reserved" torch.cuda.max_memory_reserved (the
           caching allocator's pool: what nvidia-smi sees, what runs out) */
        double alloc;
        bool has_alloc = tp_logs_after(line, "max allocated:", false, &alloc);
        if (tp_logs_after(line, "max reserved:", false, &v)) {
            tp_logs_set_max(&info->mem_gib, v / 1024);
            info->mem_kind = "max reserved (torch.cuda.max_memory_reserved)";
            if (has_alloc)
                tp_logs_set_max(&info->mem_alloc_gib, alloc / 1024);
        } else if (has_alloc) {
            tp_logs_set_max(&info->mem_gib, alloc / 1024);
            info->mem_kind = "max allocated (torch.cuda.max_memory_allocated)";
        }
        return;
    }
    if (strstr(line, "using world size:")) {
        if (tp_logs_after(line, "using world size:", false, &v))
            tp_logs_set_u32(&info->gpus, v);
        if (tp_logs_after(line, "data-parallel size:", false, &v))
            tp_logs_set_u32(&info->dp, v);
        if (tp_logs_after(line, "context-parallel size:", false, &v))
            tp_logs_set_u32(&info->cp, v);
        if (tp_logs_after(line, "tensor-model-parallel size:", false, &v))
            tp_logs_set_u32(&info->tp, v);
        if (tp_logs_after(line, "pipeline-model-parallel size:", false, &v))
            tp_logs_set_u32(&info->pp, v);
        return;
    }
    if (!strstr(line, " ..."))
        return;
    if (dotted(line, "world_size", &v))
        tp_logs_set_u32(&info->gpus, v);
    else if (dotted(line, "tensor_model_parallel_size", &v))
        tp_logs_set_u32(&info->tp, v);
    else if (dotted(line, "pipeline_model_parallel_size", &v))
        tp_logs_set_u32(&info->pp, v);
    else if (dotted(line, "data_parallel_size", &v))
        tp_logs_set_u32(&info->dp, v);
    else if (dotted(line, "context_parallel_size", &v))
        tp_logs_set_u32(&info->cp, v);
    else if (dotted(line, "seq_length", &v))
        tp_logs_set_u64(&info->seq, v);
    else if (dotted(line, "global_batch_size", &v))
        tp_logs_set_u64(&info->global_batch, v);
    else if (dotted(line, "micro_batch_size", &v))
        tp_logs_set_u64(&info->micro_batch, v);
    else if (dotted(line, "train_iters", &v))
        tp_logs_set_u64(&info->total_steps, v);
}

/* ----------------------------------------------------------------------------------------- */
/* torchtitan                                                                                 */
/* ----------------------------------------------------------------------------------------- */

bool tp_logs_titan_is_step(const char *line)
{
    return strstr(line, "step:") && strstr(line, "tps:") && !strstr(line, "validat") &&
           !strstr(line, "micro_step");
}

void tp_logs_titan_line(struct parser *p, const char *line)
{
    struct tp_log_info *info = p->info;
    double v;
    /* torchrun without a rank filter prints every rank's line: keep the first rank seen */
    const char *r = strstr(line, "[rank");
    if (r && tp_logs_number(r + 5, false, &v) && tp_logs_whole(v)) {
        if (p->rank < 0)
            p->rank = (long)v;
        else if ((long)v != p->rank)
            return;
    }
    if (tp_logs_titan_is_step(line)) {
        if (!tp_logs_after(line, "step:", false, &v) || !tp_logs_whole(v))
            return;
        struct tp_log_step *s = tp_logs_push(p, (uint64_t)v);
        if (tp_logs_after(line, "loss:", false, &v))
            s->loss = v;
        const char *m = strstr(line, "memory:");
        const char *e = m ? tp_logs_number(m + 7, false, &v) : NULL;
        if (e && strncmp(e, "GiB", 3) == 0) {
            s->mem_gib = v;
            /* torchtitan/components/metrics.py: the "memory:" figure is max_reserved_gib */
            p->info->mem_kind = "max reserved (torch.cuda.max_memory_reserved)";
        }
        if (tp_logs_after(line, "tps:", true, &v))
            s->tokens_per_s_per_gpu = v; /* tokens per second per device */
        if (tp_logs_after(line, "tflops:", true, &v))
            s->tflops_per_gpu = v;
        const char *f = strstr(line, "mfu:");
        if (f && (e = tp_logs_number(f + 4, false, &v)) && *e == '%')
            s->mfu = v / 100;
        return;
    }
    /* "Training starts at step 1, with local batch size 2, global batch size 16, ...,
       sequence length 8192, total steps 1000 (warmup 200)" (older and newer wordings) */
    if (tp_logs_after(line, "global batch size ", true, &v))
        tp_logs_set_u64(&info->global_batch, v);
    if (tp_logs_after(line, "sequence length ", true, &v))
        tp_logs_set_u64(&info->seq, v);
    if (tp_logs_after(line, "total steps ", true, &v))
        tp_logs_set_u64(&info->total_steps, v);
    if (tp_logs_after(line, "gradient accumulation steps ", true, &v))
        tp_logs_set_u64(&info->grad_accum, v);
    const char *mesh = strstr(line, "device mesh with");
    if (mesh) { /* "Building 2-D device mesh with ['dp_shard', 'tp'], [4, 2]" */
        const char *b = strrchr(mesh, '[');
        double prod = 1, d;
        int dims = 0;
        for (const char *q = b ? b + 1 : NULL; q && (q = tp_logs_number(q, false, &d)); dims++) {
            prod *= d;
            while (*q == ',' || *q == ' ')
                q++;
        }
        if (dims > 0)
            tp_logs_set_u32(&info->gpus, prod);
    }
}

/* ----------------------------------------------------------------------------------------- */
/* nanoGPT                                                                                    */
/* ----------------------------------------------------------------------------------------- */

/* "iter 100: loss 3.2000, time 120.50ms, mfu 38.20%" (an optional "lr X," is allowed). */
static bool nanogpt_head(const char *line, uint64_t *it, const char **rest)
{
    for (const char *p = strstr(line, "iter "); p; p = strstr(p + 1, "iter ")) {
        if (p > line && isalnum((unsigned char)p[-1]))
            continue;
        double v;
        const char *e = tp_logs_number(p + 5, false, &v);
        if (!e || !tp_logs_whole(v) || strncmp(e, ": loss ", 7) != 0)
            continue;
        *it = (uint64_t)v;
        *rest = e;
        return true;
    }
    return false;
}

static bool nanogpt_time(const char *rest, double *ms)
{
    const char *t = strstr(rest, " time ");
    const char *e = t ? tp_logs_number(t + 6, false, ms) : NULL;
    return e && (strncmp(e, "ms", 2) == 0 || strncmp(e, " ms", 3) == 0);
}

bool tp_logs_nanogpt_is_step(const char *line)
{
    uint64_t it;
    const char *rest;
    double ms;
    return nanogpt_head(line, &it, &rest) && nanogpt_time(rest, &ms);
}

void tp_logs_nanogpt_line(struct parser *p, const char *line)
{
    uint64_t it;
    const char *rest;
    double v;
    if (nanogpt_head(line, &it, &rest)) {
        if (!nanogpt_time(rest, &v))
            return;
        struct tp_log_step *s = tp_logs_push(p, it);
        s->step_s = v / 1000;
        if (tp_logs_after(rest, ": loss ", false, &v))
            s->loss = v;
        const char *m = strstr(rest, "mfu ");
        const char *e = m ? tp_logs_number(m + 4, false, &v) : NULL;
        if (e && *e == '%' && v > 0) /* -100.00%: nanoGPT's "not measured yet" */
            s->mfu = v / 100;
        return;
    }
    if (tp_logs_after(line, "tokens per iteration will be:", true, &v) && v > 0)
        p->info->tokens_per_step = v;
    else if (strncmp(line, "block_size = ", 13) == 0 && tp_logs_number(line + 13, false, &v))
        tp_logs_set_u64(&p->info->seq, v); /* the config file train.py echoes */
}

/* ----------------------------------------------------------------------------------------- */
/* llm.c                                                                                      */
/* ----------------------------------------------------------------------------------------- */

/* "step    1/74 | loss 11.009835 (+nanz)| norm ..." and the older "step 1/74: train loss ..." */
static bool llmc_head(const char *line, uint64_t *it, const char **rest)
{
    for (const char *p = strstr(line, "step "); p; p = strstr(p + 1, "step ")) {
        if (p > line && isalnum((unsigned char)p[-1]))
            continue;
        double a, b;
        const char *e = tp_logs_number(p + 5, false, &a);
        if (!e || !tp_logs_whole(a) || *e != '/' || !(e = tp_logs_number(e + 1, false, &b)) || !tp_logs_whole(b))
            continue;
        while (*e == ' ')
            e++;
        if (*e != '|' && *e != ':')
            continue;
        *it = (uint64_t)a;
        *rest = e;
        return true;
    }
    return false;
}

static bool llmc_ms(const char *rest, double *ms)
{
    for (const char *q = strstr(rest, "ms"); q; q = strstr(q + 1, "ms"))
        if (q > rest && q[-1] == ' ' && !isalnum((unsigned char)q[2]) && tp_logs_before(rest, q, ms))
            return true;
    return false;
}

bool tp_logs_llmc_is_step(const char *line)
{
    uint64_t it;
    const char *rest;
    double ms;
    return llmc_head(line, &it, &rest) && llmc_ms(rest, &ms);
}

void tp_logs_llmc_line(struct parser *p, const char *line)
{
    struct tp_log_info *info = p->info;
    uint64_t it;
    const char *rest;
    double v;
    if (llmc_head(line, &it, &rest)) {
        if (!llmc_ms(rest, &v))
            return;
        struct tp_log_step *s = tp_logs_push(p, it);
        s->step_s = v / 1000;
        if (tp_logs_after(rest, "loss ", false, &v))
            s->loss = v;
        const char *t = strstr(rest, "tok/s");
        if (t && tp_logs_before(rest, t, &v))
            s->tokens_per_s = v; /* all processes; a bias-corrected moving average */
        for (const char *q = strchr(rest, '%'); q; q = strchr(q + 1, '%')) {
            size_t seg = strcspn(q, "|");
            const char *mfu = strstr(q, "MFU");
            if (mfu && (size_t)(mfu - q) < seg && tp_logs_before(rest, q, &v)) {
                if (v > 0) /* -100%: llm.c does not know the device's peak */
                    s->mfu = v / 100;
                break;
            }
        }
        return;
    }
    /* "batch_size B=64 * seq_len T=1024 * num_processes=8 and total_batch_size=524288" */
    if (strstr(line, "total_batch_size=")) {
        if (tp_logs_after(line, "B=", false, &v))
            tp_logs_set_u64(&info->micro_batch, v);
        if (tp_logs_after(line, "T=", false, &v))
            tp_logs_set_u64(&info->seq, v);
        if (tp_logs_after(line, "num_processes=", false, &v))
            tp_logs_set_u32(&info->gpus, v);
        if (tp_logs_after(line, "total_batch_size=", false, &v) && v > 0)
            info->tokens_per_step = v;
        return;
    }
    /* the parameter table: "| sequence length T     | 1024    |" */
    if (line[strspn(line, " ")] != '|')
        return;
    char key[64];
    const char *k = strchr(line, '|') + 1;
    size_t n = strcspn(k, "|");
    if (k[n] != '|' || n >= sizeof key)
        return;
    memcpy(key, k, n);
    key[n] = '\0';
    tp_logs_trim(key);
    const char *e = tp_logs_number(k + n + 1, false, &v);
    if (!e)
        return;
    if (strcmp(key, "micro batch size B") == 0)
        tp_logs_set_u64(&info->micro_batch, v);
    else if (strcmp(key, "sequence length T") == 0)
        tp_logs_set_u64(&info->seq, v);
    else if (strcmp(key, "total batch size") == 0 && v > 0)
        info->tokens_per_step = v;
    else if (strcmp(key, "num_processes") == 0)
        tp_logs_set_u32(&info->gpus, v);
    else if (strcmp(key, "train_num_batches") == 0)
        tp_logs_set_u64(&info->total_steps, v);
}

