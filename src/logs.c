/*
 * logs.c - training logs as users have them -> per-step records, run facts, the steady state,
 * and a runs-file row (docs/design.md "Training logs").
 *
 * Text logs are read line by line ('\n' and '\r' both end a line, so tqdm's carriage-return
 * updates are lines; ANSI colour codes are stripped).  Each format has a cheap line test used
 * for detection and a parser that fills step records and the run facts the log states.  The
 * users' JSON run logs are read with jansson; Python dict lines (HF Trainer) are Python repr,
 * not JSON, so only their 'key': number pairs are picked out.
 */
#include "internal.h"

#include <csv.h>
#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------------------------------------- */
/* Names                                                                                      */
/* ----------------------------------------------------------------------------------------- */

static const struct {
    const char *name, *label;
} FORMATS[TP_LOG_FORMAT_COUNT] = {
    {"unknown", "not a known training-log format"},
    {"megatron", "Megatron-LM / Megatron-Core iteration lines"},
    {"megatron-deepspeed", "Megatron-DeepSpeed iteration lines"},
    {"hf", "Hugging Face Trainer / Axolotl / TRL logs or trainer_state.json"},
    {"torchtitan", "torchtitan step lines"},
    {"nanogpt", "nanoGPT iter lines"},
    {"llm.c", "llm.c step lines"},
    {"json", "JSON run log (training_iterations / training_progress)"},
};

const char *tp_log_format_name(enum tp_log_format f)
{
    return (unsigned)f < TP_LOG_FORMAT_COUNT ? FORMATS[f].name : "unknown";
}

const char *tp_log_format_label(enum tp_log_format f)
{
    return (unsigned)f < TP_LOG_FORMAT_COUNT ? FORMATS[f].label : FORMATS[0].label;
}

const char *tp_log_formats_understood(void)
{
    return "megatron, megatron-deepspeed, hf-trainer/axolotl/trl (stdout or trainer_state.json), "
           "torchtitan, nanogpt, llm.c, json run log";
}

enum tp_status tp_log_format_find(const char *name, enum tp_log_format *out, struct tp_error *err)
{
    static const struct {
        const char *name;
        enum tp_log_format f;
    } names[] = {{"megatron", TP_LOG_MEGATRON},         {"megatron-lm", TP_LOG_MEGATRON},
                 {"megatron-core", TP_LOG_MEGATRON},    {"nemo", TP_LOG_MEGATRON},
                 {"megatron-deepspeed", TP_LOG_MEGATRON_DS}, {"hf", TP_LOG_HF},
                 {"hf-trainer", TP_LOG_HF},             {"axolotl", TP_LOG_HF},
                 {"trl", TP_LOG_HF},                    {"torchtitan", TP_LOG_TORCHTITAN},
                 {"nanogpt", TP_LOG_NANOGPT},           {"llm.c", TP_LOG_LLMC},
                 {"llmc", TP_LOG_LLMC},                 {"json", TP_LOG_JSON}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (tp_streq_ci(name, names[i].name)) {
            *out = names[i].f;
            return TP_OK;
        }
    return tp_fail(err, TP_ENOTFOUND, "unknown log format \"%s\" (formats: megatron, "
                   "megatron-deepspeed, hf, torchtitan, nanogpt, llm.c, json)", name);
}

/* ----------------------------------------------------------------------------------------- */
/* Text helpers                                                                               */
/* ----------------------------------------------------------------------------------------- */

enum { LINE_CAP = 8192 };

struct lines {
    const char *p, *end;
};

/* Copies the next non-empty line into buf (at most LINE_CAP - 1 bytes, the rest dropped),
   without ANSI escape sequences and NUL bytes.  False at the end of the text. */
static bool next_line(struct lines *it, char *buf)
{
    while (it->p < it->end) {
        const char *p = it->p;
        size_t o = 0;
        while (p < it->end && *p != '\n' && *p != '\r') {
            unsigned char c = (unsigned char)*p++;
            if (c == 0x1b) { /* CSI: ESC [ parameters intermediates final (0x40-0x7e) */
                if (p < it->end && *p == '[') {
                    p++;
                    while (p < it->end && *p != '\n' && *p != '\r' &&
                           !((unsigned char)*p >= 0x40 && (unsigned char)*p <= 0x7e))
                        p++;
                    if (p < it->end && *p != '\n' && *p != '\r')
                        p++;
                }
                continue;
            }
            if (c != 0 && o + 1 < LINE_CAP)
                buf[o++] = (char)c;
        }
        buf[o] = '\0';
        it->p = p < it->end ? p + 1 : p;
        if (strspn(buf, " \t") < o)
            return true;
    }
    return false;
}

/* A decimal number after optional blanks: sign, digits, fraction, exponent; with `commas`,
   thousands separators ("6,543").  Returns the end, or NULL when there is none or it is not
   finite (nan, inf and hex are not numbers here). */
static const char *number(const char *s, bool commas, double *out)
{
    while (*s == ' ' || *s == '\t')
        s++;
    char tmp[64];
    size_t o = 0;
    const char *p = s;
    if (*p == '+' || *p == '-')
        tmp[o++] = *p++;
    if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
        return NULL;
    bool dot = false, exp = false;
    while (o + 2 < sizeof tmp) {
        unsigned char c = (unsigned char)*p;
        if (isdigit(c)) {
            tmp[o++] = *p++;
        } else if (c == '.' && !dot && !exp) {
            dot = true;
            tmp[o++] = *p++;
        } else if (commas && c == ',' && !dot && !exp && isdigit((unsigned char)p[1]) &&
                   isdigit((unsigned char)p[2]) && isdigit((unsigned char)p[3]) &&
                   !isdigit((unsigned char)p[4])) {
            p++;
        } else if ((c == 'e' || c == 'E') && !exp &&
                   (isdigit((unsigned char)p[1]) ||
                    ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
            exp = true;
            tmp[o++] = *p++;
            if (*p == '+' || *p == '-')
                tmp[o++] = *p++;
        } else {
            break;
        }
    }
    tmp[o] = '\0';
    char *end;
    double v = strtod(tmp, &end);
    if (end == tmp || *end || !isfinite(v))
        return NULL;
    *out = v;
    return p;
}

/* The number right after the first occurrence of `key`. */
static bool after(const char *line, const char *key, bool commas, double *out)
{
    const char *p = strstr(line, key);
    return p && number(p + strlen(key), commas, out) != NULL;
}

/* The number that ends right before `p` (digits, '.', with one blank allowed in between). */
static bool before(const char *line, const char *p, double *out)
{
    const char *e = p;
    if (e > line && e[-1] == ' ')
        e--;
    const char *b = e;
    while (b > line && (isdigit((unsigned char)b[-1]) || b[-1] == '.'))
        b--;
    if (b > line && b[-1] == '-')
        b--;
    if (b == e)
        return false;
    char tmp[64];
    size_t n = (size_t)(e - b);
    if (n >= sizeof tmp)
        return false;
    memcpy(tmp, b, n);
    tmp[n] = '\0';
    const char *end = number(tmp, false, out);
    return end && *end == '\0';
}

static bool whole(double v)
{
    return v >= 0 && v <= 1e15 && v == floor(v);
}

static void set_u64(uint64_t *dst, double v)
{
    if (whole(v) && v > 0)
        *dst = (uint64_t)v;
}

static void set_u32(uint32_t *dst, double v)
{
    if (whole(v) && v > 0 && v <= UINT32_MAX)
        *dst = (uint32_t)v;
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    size_t k = strspn(s, " \t");
    memmove(s, s + k, n - k + 1);
}

/* ----------------------------------------------------------------------------------------- */
/* Parser state                                                                               */
/* ----------------------------------------------------------------------------------------- */

enum { MAX_BARS = 16 };

struct parser {
    struct tp_log_step *steps;
    size_t cap;
    struct tp_log_info *info;
    struct tp_log_step spare;   /* records beyond cap are built here (and counted) */
    struct tp_log_step *last;   /* the record being filled; NULL before the first */
    bool ds;                    /* Megatron lines carried Megatron-DeepSpeed fields */
    regex_t bar;                /* the tqdm progress bar */
    bool bar_ok;
    uint64_t bar_total;         /* total of the training bar (the most frequent one) */
    uint64_t bar_step;          /* its last position; 0 = none yet */
    bool last_from_bar;
    long rank;                  /* torchtitan: the "[rankN]:" prefix kept (-1 = none seen) */
};

static void step_init(struct tp_log_step *s)
{
    s->step = 0;
    s->step_s = s->tokens_per_s = s->tokens_per_s_per_gpu = s->samples_per_s = NAN;
    s->tflops_per_gpu = s->mfu = s->mem_gib = s->loss = NAN;
}

static struct tp_log_step *push(struct parser *p, uint64_t step)
{
    size_t i = p->info->n_steps++;
    struct tp_log_step *s = i < p->cap ? &p->steps[i] : &p->spare;
    step_init(s);
    s->step = step;
    p->last = s;
    p->last_from_bar = false;
    return s;
}

static void set_max(double *dst, double v)
{
    if (isfinite(v) && (!isfinite(*dst) || v > *dst))
        *dst = v;
}

/* ----------------------------------------------------------------------------------------- */
/* Megatron-LM, Megatron-Core, Megatron-DeepSpeed                                              */
/* ----------------------------------------------------------------------------------------- */

/* " iteration       50/    5000 |": the iteration, and the text after the bar in *rest. */
static bool megatron_head(const char *line, uint64_t *it, const char **rest)
{
    for (const char *p = strstr(line, "iteration"); p; p = strstr(p + 1, "iteration")) {
        double a, b;
        const char *e = p[9] == ' ' ? number(p + 9, false, &a) : NULL;
        if (!e || !whole(a))
            continue;
        while (*e == ' ')
            e++;
        if (*e != '/' || !(e = number(e + 1, false, &b)))
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

static bool megatron_is_step(const char *line)
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
        if (!colon || !number(colon + 1, false, &v))
            continue;
        *colon = '\0';
        trim(seg);
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
            set_u64(&p->info->global_batch, v);
        } else if (strcmp(seg, "lm loss") == 0) {
            s->loss = v;
        } else if (strcmp(seg, "actual seqlen") == 0) {
            set_u64(&p->info->seq, v);
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
        const char *e = number(q, false, v);
        return e && (*e == '\0' || isspace((unsigned char)*e));
    }
    return false;
}

static void megatron_line(struct parser *p, const char *line)
{
    struct tp_log_info *info = p->info;
    uint64_t it;
    const char *rest;
    double v;
    if (megatron_head(line, &it, &rest)) {
        if (strstr(rest, "elapsed time per iteration"))
            megatron_fields(p, rest, push(p, it));
        return;
    }
    if (strstr(line, "memory (MB)")) { /* report_memory: MiB of torch.cuda.* */
        if (after(line, "max reserved:", false, &v) || after(line, "max allocated:", false, &v))
            set_max(&info->mem_gib, v / 1024);
        return;
    }
    if (strstr(line, "using world size:")) {
        if (after(line, "using world size:", false, &v))
            set_u32(&info->gpus, v);
        if (after(line, "data-parallel size:", false, &v))
            set_u32(&info->dp, v);
        if (after(line, "context-parallel size:", false, &v))
            set_u32(&info->cp, v);
        if (after(line, "tensor-model-parallel size:", false, &v))
            set_u32(&info->tp, v);
        if (after(line, "pipeline-model-parallel size:", false, &v))
            set_u32(&info->pp, v);
        return;
    }
    if (!strstr(line, " ..."))
        return;
    if (dotted(line, "world_size", &v))
        set_u32(&info->gpus, v);
    else if (dotted(line, "tensor_model_parallel_size", &v))
        set_u32(&info->tp, v);
    else if (dotted(line, "pipeline_model_parallel_size", &v))
        set_u32(&info->pp, v);
    else if (dotted(line, "data_parallel_size", &v))
        set_u32(&info->dp, v);
    else if (dotted(line, "context_parallel_size", &v))
        set_u32(&info->cp, v);
    else if (dotted(line, "seq_length", &v))
        set_u64(&info->seq, v);
    else if (dotted(line, "global_batch_size", &v))
        set_u64(&info->global_batch, v);
    else if (dotted(line, "micro_batch_size", &v))
        set_u64(&info->micro_batch, v);
    else if (dotted(line, "train_iters", &v))
        set_u64(&info->total_steps, v);
}

/* ----------------------------------------------------------------------------------------- */
/* torchtitan                                                                                 */
/* ----------------------------------------------------------------------------------------- */

static bool titan_is_step(const char *line)
{
    return strstr(line, "step:") && strstr(line, "tps:") && !strstr(line, "validat") &&
           !strstr(line, "micro_step");
}

static void titan_line(struct parser *p, const char *line)
{
    struct tp_log_info *info = p->info;
    double v;
    /* torchrun without a rank filter prints every rank's line: keep the first rank seen */
    const char *r = strstr(line, "[rank");
    if (r && number(r + 5, false, &v) && whole(v)) {
        if (p->rank < 0)
            p->rank = (long)v;
        else if ((long)v != p->rank)
            return;
    }
    if (titan_is_step(line)) {
        if (!after(line, "step:", false, &v) || !whole(v))
            return;
        struct tp_log_step *s = push(p, (uint64_t)v);
        if (after(line, "loss:", false, &v))
            s->loss = v;
        const char *m = strstr(line, "memory:");
        const char *e = m ? number(m + 7, false, &v) : NULL;
        if (e && strncmp(e, "GiB", 3) == 0)
            s->mem_gib = v;
        if (after(line, "tps:", true, &v))
            s->tokens_per_s_per_gpu = v; /* tokens per second per device */
        if (after(line, "tflops:", true, &v))
            s->tflops_per_gpu = v;
        const char *f = strstr(line, "mfu:");
        if (f && (e = number(f + 4, false, &v)) && *e == '%')
            s->mfu = v / 100;
        return;
    }
    /* "Training starts at step 1, with local batch size 2, global batch size 16, ...,
       sequence length 8192, total steps 1000 (warmup 200)" (older and newer wordings) */
    if (after(line, "global batch size ", true, &v))
        set_u64(&info->global_batch, v);
    if (after(line, "sequence length ", true, &v))
        set_u64(&info->seq, v);
    if (after(line, "total steps ", true, &v))
        set_u64(&info->total_steps, v);
    if (after(line, "gradient accumulation steps ", true, &v))
        set_u64(&info->grad_accum, v);
    const char *mesh = strstr(line, "device mesh with");
    if (mesh) { /* "Building 2-D device mesh with ['dp_shard', 'tp'], [4, 2]" */
        const char *b = strrchr(mesh, '[');
        double prod = 1, d;
        int dims = 0;
        for (const char *q = b ? b + 1 : NULL; q && (q = number(q, false, &d)); dims++) {
            prod *= d;
            while (*q == ',' || *q == ' ')
                q++;
        }
        if (dims > 0)
            set_u32(&info->gpus, prod);
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
        const char *e = number(p + 5, false, &v);
        if (!e || !whole(v) || strncmp(e, ": loss ", 7) != 0)
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
    const char *e = t ? number(t + 6, false, ms) : NULL;
    return e && (strncmp(e, "ms", 2) == 0 || strncmp(e, " ms", 3) == 0);
}

static bool nanogpt_is_step(const char *line)
{
    uint64_t it;
    const char *rest;
    double ms;
    return nanogpt_head(line, &it, &rest) && nanogpt_time(rest, &ms);
}

static void nanogpt_line(struct parser *p, const char *line)
{
    uint64_t it;
    const char *rest;
    double v;
    if (nanogpt_head(line, &it, &rest)) {
        if (!nanogpt_time(rest, &v))
            return;
        struct tp_log_step *s = push(p, it);
        s->step_s = v / 1000;
        if (after(rest, ": loss ", false, &v))
            s->loss = v;
        const char *m = strstr(rest, "mfu ");
        const char *e = m ? number(m + 4, false, &v) : NULL;
        if (e && *e == '%' && v > 0) /* -100.00%: nanoGPT's "not measured yet" */
            s->mfu = v / 100;
        return;
    }
    if (after(line, "tokens per iteration will be:", true, &v) && v > 0)
        p->info->tokens_per_step = v;
    else if (strncmp(line, "block_size = ", 13) == 0 && number(line + 13, false, &v))
        set_u64(&p->info->seq, v); /* the config file train.py echoes */
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
        const char *e = number(p + 5, false, &a);
        if (!e || !whole(a) || *e != '/' || !(e = number(e + 1, false, &b)) || !whole(b))
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
        if (q > rest && q[-1] == ' ' && !isalnum((unsigned char)q[2]) && before(rest, q, ms))
            return true;
    return false;
}

static bool llmc_is_step(const char *line)
{
    uint64_t it;
    const char *rest;
    double ms;
    return llmc_head(line, &it, &rest) && llmc_ms(rest, &ms);
}

static void llmc_line(struct parser *p, const char *line)
{
    struct tp_log_info *info = p->info;
    uint64_t it;
    const char *rest;
    double v;
    if (llmc_head(line, &it, &rest)) {
        if (!llmc_ms(rest, &v))
            return;
        struct tp_log_step *s = push(p, it);
        s->step_s = v / 1000;
        if (after(rest, "loss ", false, &v))
            s->loss = v;
        const char *t = strstr(rest, "tok/s");
        if (t && before(rest, t, &v))
            s->tokens_per_s = v; /* all processes; a bias-corrected moving average */
        for (const char *q = strchr(rest, '%'); q; q = strchr(q + 1, '%')) {
            size_t seg = strcspn(q, "|");
            const char *mfu = strstr(q, "MFU");
            if (mfu && (size_t)(mfu - q) < seg && before(rest, q, &v)) {
                if (v > 0) /* -100%: llm.c does not know the device's peak */
                    s->mfu = v / 100;
                break;
            }
        }
        return;
    }
    /* "batch_size B=64 * seq_len T=1024 * num_processes=8 and total_batch_size=524288" */
    if (strstr(line, "total_batch_size=")) {
        if (after(line, "B=", false, &v))
            set_u64(&info->micro_batch, v);
        if (after(line, "T=", false, &v))
            set_u64(&info->seq, v);
        if (after(line, "num_processes=", false, &v))
            set_u32(&info->gpus, v);
        if (after(line, "total_batch_size=", false, &v) && v > 0)
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
    trim(key);
    const char *e = number(k + n + 1, false, &v);
    if (!e)
        return;
    if (strcmp(key, "micro batch size B") == 0)
        set_u64(&info->micro_batch, v);
    else if (strcmp(key, "sequence length T") == 0)
        set_u64(&info->seq, v);
    else if (strcmp(key, "total batch size") == 0 && v > 0)
        info->tokens_per_step = v;
    else if (strcmp(key, "num_processes") == 0)
        set_u32(&info->gpus, v);
    else if (strcmp(key, "train_num_batches") == 0)
        set_u64(&info->total_steps, v);
}

/* ----------------------------------------------------------------------------------------- */
/* Hugging Face Trainer, Axolotl, TRL                                                         */
/* ----------------------------------------------------------------------------------------- */

enum { MAX_PAIRS = 64 };

struct pair {
    char key[64];
    double v;
};

/* The 'key': number pairs of a Python dict repr (or a JSON object) on the line: numbers may be
   quoted ('0.81') or wrapped (np.float64(0.81), tensor(0.81, ...)); other values are skipped. */
static size_t dict_pairs(const char *line, struct pair *out, size_t cap)
{
    const char *p = strchr(line, '{');
    size_t n = 0;
    if (!p)
        return 0;
    p++;
    while (*p && n < cap) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p != '\'' && *p != '"')
            break;
        char q = *p++;
        const char *k = p;
        while (*p && *p != q)
            p++;
        if (!*p)
            break;
        size_t kl = (size_t)(p - k);
        p++;
        while (*p == ' ')
            p++;
        if (*p != ':')
            break;
        p++;
        while (*p == ' ')
            p++;
        const char *v = p;
        if (*v == '\'' || *v == '"') {
            v++;
        } else {
            const char *b = v;
            while (isalnum((unsigned char)*b) || *b == '_' || *b == '.')
                b++;
            if (*b == '(' && b > v)
                v = b + 1;
        }
        double x;
        const char *e = number(v, false, &x);
        if (e && *e && strchr(",}'\") ", *e) && kl < sizeof out[0].key) {
            memcpy(out[n].key, k, kl);
            out[n].key[kl] = '\0';
            out[n].v = x;
            n++;
        }
        /* skip the value up to the next ',' or '}' at this level */
        int depth = 0;
        while (*p) {
            if (*p == '\'' || *p == '"') {
                char c = *p++;
                while (*p && *p != c)
                    p++;
                if (*p)
                    p++;
                continue;
            }
            if (*p == '(' || *p == '[' || *p == '{')
                depth++;
            else if ((*p == ')' || *p == ']' || *p == '}') && depth-- == 0)
                break;
            else if (*p == ',' && depth == 0)
                break;
            p++;
        }
        if (*p != ',')
            break;
    }
    return n;
}

static const struct pair *pair_find(const struct pair *ps, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(ps[i].key, key) == 0)
            return &ps[i];
    return NULL;
}

static bool hf_is_dict(const char *line)
{
    return strstr(line, "{'loss':") || strstr(line, "{\"loss\":") ||
           strstr(line, "'train_runtime':") || strstr(line, "\"train_runtime\":");
}

/* tqdm: "  5%|▌         | 60/1188 [06:42<2:06:02,  6.70s/it]" (or "1.52it/s", or "?it/s") */
static bool hf_bar(struct parser *p, const char *line, uint64_t *n, uint64_t *total, double *s)
{
    regmatch_t m[6];
    if (!p->bar_ok || regexec(&p->bar, line, 6, m, 0) != 0)
        return false;
    double a, b, r;
    if (!number(line + m[1].rm_so, false, &a) || !number(line + m[2].rm_so, false, &b) ||
        !whole(a) || !whole(b))
        return false;
    *n = (uint64_t)a;
    *total = (uint64_t)b;
    *s = NAN;
    if (line[m[4].rm_so] != '?' && number(line + m[4].rm_so, false, &r) && r > 0)
        *s = line[m[5].rm_so] == 's' ? r : 1 / r;
    return true;
}

/* One logged dict of the Trainer (a stdout line, or an entry of trainer_state.json's
   log_history): the final summary, an evaluation (skipped) or a training step, at `step`
   (0 = unknown: the next one). */
static void hf_pairs(struct parser *p, const struct pair *ps, size_t n, uint64_t step)
{
    struct tp_log_info *info = p->info;
    const struct pair *x;
    if ((x = pair_find(ps, n, "train_runtime"))) {
        info->train_runtime_s = x->v;
        if ((x = pair_find(ps, n, "train_samples_per_second")))
            info->train_samples_per_s = x->v;
        if ((x = pair_find(ps, n, "train_steps_per_second")))
            info->train_steps_per_s = x->v;
        if ((x = pair_find(ps, n, "train_tokens_per_second")))
            info->train_tokens_per_s_per_gpu = x->v;
        if ((x = pair_find(ps, n, "train_loss")))
            info->train_loss = x->v;
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (strncmp(ps[i].key, "eval_", 5) == 0)
            return; /* an evaluation, not a training step */
    const struct pair *loss = pair_find(ps, n, "loss");
    const struct pair *tps = pair_find(ps, n, "tokens_per_second_per_gpu");
    if (!loss && !tps)
        return;
    struct tp_log_step *s;
    if (p->last && step && p->last->step == step)
        s = p->last; /* the Trainer logs after the bar reached this step */
    else
        s = push(p, step ? step : info->n_steps + 1);
    p->last_from_bar = false;
    if (loss)
        s->loss = loss->v;
    if (tps)
        s->tokens_per_s_per_gpu = tps->v;
    for (size_t i = 0; i < n; i++) /* Axolotl: memory/max_allocated (GiB), memory/device_reserved (GiB) */
        if (strncmp(ps[i].key, "memory/", 7) == 0 && strstr(ps[i].key, "GiB"))
            set_max(&s->mem_gib, ps[i].v);
}

static void hf_dict(struct parser *p, const char *line)
{
    struct pair ps[MAX_PAIRS] = {{{0}, 0}};
    hf_pairs(p, ps, dict_pairs(line, ps, MAX_PAIRS), p->bar_step);
}

static void hf_line(struct parser *p, const char *line)
{
    struct tp_log_info *info = p->info;
    uint64_t n, total;
    double s, v;
    if (hf_bar(p, line, &n, &total, &s)) {
        if (total != p->bar_total || n == 0)
            return; /* an evaluation bar, or the bar before the first step */
        if (p->last && p->last->step == n && p->bar_step == n) {
            if (isfinite(s))
                p->last->step_s = s; /* the latest refresh of this step */
        } else {
            push(p, n)->step_s = s;
            p->last_from_bar = true;
        }
        p->bar_step = n;
        return;
    }
    if (hf_is_dict(line)) {
        hf_dict(p, line);
        return;
    }
    /* the Trainer's banner: "  Total train batch size (w. parallel, distributed &
       accumulation) = 128", "  Instantaneous batch size per device = 16", ... */
    if (after(line, "Total train batch size (w. parallel, distributed & accumulation) =", true, &v))
        set_u64(&info->global_batch, v);
    else if (after(line, "Instantaneous batch size per device =", true, &v))
        set_u64(&info->micro_batch, v);
    else if (after(line, "Gradient Accumulation steps =", true, &v))
        set_u64(&info->grad_accum, v);
    else if (after(line, "Total optimization steps =", true, &v))
        set_u64(&info->total_steps, v);
}

/* The training bar is the most frequent bar total (evaluation bars are shorter-lived). */
static void hf_find_bar(struct parser *p, const char *text, size_t len, char *buf)
{
    uint64_t totals[MAX_BARS] = {0};
    size_t counts[MAX_BARS] = {0}, used = 0;
    struct lines it = {text, text + len};
    while (next_line(&it, buf)) {
        uint64_t n, total;
        double s;
        if (!hf_bar(p, buf, &n, &total, &s))
            continue;
        size_t i = 0;
        while (i < used && totals[i] != total)
            i++;
        if (i == used) {
            if (used == MAX_BARS)
                continue;
            totals[used++] = total;
        }
        counts[i]++;
    }
    size_t best = 0;
    for (size_t i = 1; i < used; i++)
        if (counts[i] > counts[best] || (counts[i] == counts[best] && totals[i] > totals[best]))
            best = i;
    p->bar_total = used ? totals[best] : 0;
}

/* ----------------------------------------------------------------------------------------- */
/* The users' JSON run logs                                                                   */
/* ----------------------------------------------------------------------------------------- */

static bool json_num(json_t *v, double *out)
{
    if (!json_is_number(v))
        return false;
    *out = json_number_value(v);
    return isfinite(*out);
}

static bool json_key_in(const char *key, const char *const *names)
{
    for (; *names; names++)
        if (strcmp(key, *names) == 0)
            return true;
    return false;
}

/* Run facts from the top-level object and its direct child objects ("config", ...). */
static void json_facts(json_t *obj, struct tp_log_info *info, int depth)
{
    static const char *const GPUS[] = {"world_size", "ddp_world_size", "num_gpus", "n_gpus",
                                       "gpus", NULL};
    static const char *const SEQ[] = {"block_size", "seq_len", "seq_length", "sequence_length",
                                      "max_seq_len", NULL};
    static const char *const TOKENS[] = {"tokens_per_iter", "tokens_per_iteration",
                                         "tokens_per_step", NULL};
    static const char *const GBS[] = {"global_batch_size", NULL};
    static const char *const STEPS[] = {"max_iters", "max_steps", "train_iters", NULL};
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        double x;
        if (json_is_object(v) && depth == 0) {
            json_facts(v, info, 1);
            continue;
        }
        if (!json_num(v, &x))
            continue;
        if (json_key_in(key, GPUS))
            set_u32(&info->gpus, x);
        else if (json_key_in(key, SEQ))
            set_u64(&info->seq, x);
        else if (json_key_in(key, TOKENS) && x > 0)
            info->tokens_per_step = x;
        else if (json_key_in(key, GBS))
            set_u64(&info->global_batch, x);
        else if (json_key_in(key, STEPS))
            set_u64(&info->total_steps, x);
    }
}

static size_t json_timed(json_t *list)
{
    size_t i, n = 0;
    json_t *e;
    json_array_foreach(list, i, e) {
        if (json_object_get(e, "dt_ms") || json_object_get(e, "tokens_per_sec") ||
            json_object_get(e, "mfu"))
            n++;
    }
    return n;
}

static void json_entry(struct parser *p, json_t *e, size_t index)
{
    static const char *const STEP[] = {"iter", "iteration", "step", NULL};
    static const char *const TOKS[] = {"tokens_per_sec", "tokens_per_second", NULL};
    static const char *const LOSS[] = {"loss", "train_loss", NULL};
    double step = (double)index + 1, x;
    const char *key;
    json_t *v;
    json_object_foreach(e, key, v) {
        if (json_key_in(key, STEP) && json_num(v, &x) && whole(x)) {
            step = x;
            break;
        }
    }
    struct tp_log_step *s = push(p, (uint64_t)step);
    json_object_foreach(e, key, v) {
        if (!json_num(v, &x))
            continue;
        if (strcmp(key, "dt_ms") == 0 && x > 0)
            s->step_s = x / 1000;
        else if (json_key_in(key, TOKS) && x > 0)
            s->tokens_per_s = x; /* all GPUs: the notes multiply it by dt for tokens/iter */
        else if (strcmp(key, "tokens_per_sec_per_gpu") == 0 && x > 0)
            s->tokens_per_s_per_gpu = x;
        else if (strcmp(key, "mfu") == 0 && x > 0)
            s->mfu = x > 1 ? x / 100 : x; /* a fraction (the notes print it with :.2%) */
        else if (json_key_in(key, LOSS))
            s->loss = x;
        else if ((strncmp(key, "memory", 6) == 0 || strncmp(key, "max_memory", 10) == 0) &&
                 strlen(key) > 3 && strcmp(key + strlen(key) - 3, "_gb") == 0)
            set_max(&s->mem_gib, x);
    }
}

/* Hugging Face trainer_state.json (written with every checkpoint): "train_batch_size" is the
   per-device batch, "max_steps" the planned steps, "log_history" the dicts the Trainer logged
   (steps carry "step"; the last entry is the train_runtime summary). */
static void trainer_state(struct parser *p, json_t *doc, json_t *hist)
{
    double x;
    if (json_num(json_object_get(doc, "train_batch_size"), &x))
        set_u64(&p->info->micro_batch, x);
    if (json_num(json_object_get(doc, "max_steps"), &x))
        set_u64(&p->info->total_steps, x);
    size_t i;
    json_t *e;
    json_array_foreach(hist, i, e) {
        if (!json_is_object(e))
            continue;
        struct pair ps[MAX_PAIRS];
        size_t n = 0;
        const char *key;
        json_t *v;
        json_object_foreach(e, key, v) {
            if (n < MAX_PAIRS && json_num(v, &ps[n].v)) {
                snprintf(ps[n].key, sizeof ps[n].key, "%s", key);
                n++;
            }
        }
        const struct pair *st = pair_find(ps, n, "step");
        hf_pairs(p, ps, n, st && whole(st->v) && st->v > 0 ? (uint64_t)st->v : 0);
    }
}

/* TP_OK: a JSON run log, parsed; TP_ENOTFOUND: not one (err says why when `required`). */
static enum tp_status parse_json(struct parser *p, const char *text, size_t len, bool required,
                                 struct tp_error *err)
{
    json_error_t je;
    json_t *doc = json_loadb(text, len, 0, &je);
    if (!doc) {
        if (required)
            tp_fail(err, TP_EINVAL, "not a JSON document (line %d: %s)", je.line, je.text);
        return required ? TP_EINVAL : TP_ENOTFOUND;
    }
    json_t *hist = json_object_get(doc, "log_history");
    if (json_is_array(hist)) { /* Hugging Face trainer_state.json */
        p->info->format = TP_LOG_HF;
        trainer_state(p, doc, hist);
        json_decref(doc);
        return TP_OK;
    }
    json_t *it = json_object_get(doc, "training_iterations");
    json_t *pr = json_object_get(doc, "training_progress");
    if (!json_is_array(it))
        it = NULL;
    if (!json_is_array(pr))
        pr = NULL;
    json_t *list = pr ? pr : it;
    if (pr && it && json_timed(it) > json_timed(pr))
        list = it;
    if (!list) {
        json_decref(doc);
        if (required)
            return tp_fail(err, TP_EINVAL, "JSON document without a training_iterations or "
                           "training_progress list (or a log_history: trainer_state.json)");
        return TP_ENOTFOUND;
    }
    p->info->format = TP_LOG_JSON;
    json_facts(doc, p->info, 0);
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        if (json_is_object(e))
            json_entry(p, e, i);
    }
    json_decref(doc);
    return TP_OK;
}

/* ----------------------------------------------------------------------------------------- */
/* Detection and the parse                                                                    */
/* ----------------------------------------------------------------------------------------- */

/* A line only one framework prints before its first step (for "no step lines" messages). */
static enum tp_log_format signature(const char *line)
{
    if (strstr(line, "using world size:") || strstr(line, "---------- arguments ----------"))
        return TP_LOG_MEGATRON;
    if (strstr(line, "[titan]"))
        return TP_LOG_TORCHTITAN;
    if (strstr(line, "***** Running training *****"))
        return TP_LOG_HF;
    if (strstr(line, "tokens per iteration will be:"))
        return TP_LOG_NANOGPT;
    if (strstr(line, "total_batch_size=") && strstr(line, "num_processes="))
        return TP_LOG_LLMC;
    return TP_LOG_UNKNOWN;
}

/* The format with the most step lines; *sig: a framework whose banner the log has. */
static enum tp_log_format detect(const char *text, size_t len, char *buf,
                                 enum tp_log_format *sig)
{
    size_t count[TP_LOG_FORMAT_COUNT] = {0};
    struct lines it = {text, text + len};
    *sig = TP_LOG_UNKNOWN;
    while (next_line(&it, buf)) {
        if (*sig == TP_LOG_UNKNOWN)
            *sig = signature(buf);
        if (megatron_is_step(buf))
            count[TP_LOG_MEGATRON]++;
        else if (titan_is_step(buf))
            count[TP_LOG_TORCHTITAN]++;
        else if (nanogpt_is_step(buf))
            count[TP_LOG_NANOGPT]++;
        else if (llmc_is_step(buf))
            count[TP_LOG_LLMC]++;
        else if (hf_is_dict(buf))
            count[TP_LOG_HF]++;
    }
    enum tp_log_format best = TP_LOG_UNKNOWN;
    for (int f = 1; f < TP_LOG_FORMAT_COUNT; f++)
        if (count[f] > count[best])
            best = (enum tp_log_format)f;
    return best;
}

static void parse_text(struct parser *p, enum tp_log_format f, const char *text, size_t len,
                       char *buf)
{
    struct lines it = {text, text + len};
    if (f == TP_LOG_HF)
        hf_find_bar(p, text, len, buf);
    while (next_line(&it, buf)) {
        p->info->n_lines++;
        switch (f) {
        case TP_LOG_MEGATRON:
        case TP_LOG_MEGATRON_DS:
            megatron_line(p, buf);
            break;
        case TP_LOG_HF:
            hf_line(p, buf);
            break;
        case TP_LOG_TORCHTITAN:
            titan_line(p, buf);
            break;
        case TP_LOG_NANOGPT:
            nanogpt_line(p, buf);
            break;
        case TP_LOG_LLMC:
            llmc_line(p, buf);
            break;
        default:
            break;
        }
    }
}

static void info_init(struct tp_log_info *info)
{
    memset(info, 0, sizeof *info);
    info->mem_gib = NAN;
    info->train_runtime_s = info->train_samples_per_s = info->train_steps_per_s = NAN;
    info->train_loss = info->train_tokens_per_s_per_gpu = NAN;
}

/* Facts that follow from the stated ones. */
static void info_finish(struct tp_log_info *info)
{
    if (info->tokens_per_step <= 0 && info->global_batch && info->seq)
        info->tokens_per_step = (double)info->global_batch * (double)info->seq;
    if (!info->global_batch && info->seq && info->tokens_per_step > 0 &&
        fmod(info->tokens_per_step, (double)info->seq) == 0)
        info->global_batch = (uint64_t)(info->tokens_per_step / (double)info->seq);
    uint64_t world = 0, per = 0;
    if (!info->gpus && info->tp && info->pp && info->dp &&
        tp_mul_u64((uint64_t)info->tp * info->pp, info->dp, &world) &&
        tp_mul_u64(world, info->cp ? info->cp : 1, &world) && world <= UINT32_MAX)
        info->gpus = (uint32_t)world;
    /* micro-batch x accumulation in 64 bits without wrapping (a wrap to 0 divided by zero) */
    if (!info->gpus && info->format == TP_LOG_HF && info->global_batch && info->micro_batch &&
        tp_mul_u64(info->micro_batch, info->grad_accum ? info->grad_accum : 1, &per) && per &&
        info->global_batch % per == 0 && info->global_batch / per <= UINT32_MAX)
        info->gpus = (uint32_t)(info->global_batch / per);
}

/* info_finish, then the physically impossible figures dropped (plausible.c). */
static void finish(struct parser *p)
{
    info_finish(p->info);
    size_t n = p->info->n_steps < p->cap ? p->info->n_steps : p->cap;
    tp_log_drop_implausible(p->steps, n, p->info);
}

enum tp_status tp_log_parse(const char *text, size_t len, enum tp_log_format hint,
                            struct tp_log_step *steps, size_t cap, struct tp_log_info *info,
                            struct tp_error *err)
{
    info_init(info);
    if (!steps)
        cap = 0;
    size_t blank = 0;
    while (blank < len && isspace((unsigned char)text[blank]))
        blank++;
    if (blank == len)
        return tp_fail(err, TP_EINVAL, "empty file (no log lines)");
    struct parser p;
    memset(&p, 0, sizeof p);
    p.steps = steps;
    p.cap = cap;
    p.info = info;
    p.rank = -1;
    bool braced = text[blank] == '{' || text[blank] == '[';
    if (hint == TP_LOG_JSON || ((hint == TP_LOG_UNKNOWN || hint == TP_LOG_HF) && braced)) {
        enum tp_status st = parse_json(&p, text, len, hint == TP_LOG_JSON, err);
        if (st == TP_OK) {
            finish(&p);
            if (info->format == TP_LOG_HF && info->n_steps == 0 &&
                !isfinite(info->train_runtime_s))
                return tp_fail(err, TP_EINVAL, "the trainer_state.json has no training steps "
                               "and no train_runtime summary in its log_history");
            if (info->n_steps == 0 && info->format != TP_LOG_HF)
                return tp_fail(err, TP_EINVAL, "the JSON run log has no entries in its "
                               "training_iterations / training_progress list");
            return TP_OK;
        }
        if (st != TP_ENOTFOUND)
            return st;
        info_init(info);
    }
    char *buf = malloc(LINE_CAP);
    if (!buf)
        return tp_fail(err, TP_ENOMEM, "out of memory");
    p.bar_ok = regcomp(&p.bar, "([0-9]+)/([0-9]+) \\[([0-9:]+)<[0-9:?]+, *([0-9.]+|\\?)(s/it|it/s)",
                       REG_EXTENDED) == 0;
    enum tp_log_format f = hint, sig = TP_LOG_UNKNOWN;
    if (f == TP_LOG_UNKNOWN)
        f = detect(text, len, buf, &sig);
    enum tp_status st = TP_OK;
    if (f == TP_LOG_UNKNOWN && sig != TP_LOG_UNKNOWN) {
        st = tp_fail(err, TP_EINVAL, "a %s log without step lines (%s): the run logged no "
                     "training step", tp_log_format_name(sig), tp_log_format_label(sig));
    } else if (f == TP_LOG_UNKNOWN) {
        st = tp_fail(err, TP_EINVAL, "no known training-log format found (understood: %s)",
                     tp_log_formats_understood());
    } else {
        info->format = f;
        parse_text(&p, f, text, len, buf);
        if (f == TP_LOG_MEGATRON || f == TP_LOG_MEGATRON_DS)
            info->format = p.ds ? TP_LOG_MEGATRON_DS : TP_LOG_MEGATRON;
        finish(&p);
        if (info->n_steps == 0 && !isfinite(info->train_runtime_s))
            st = tp_fail(err, TP_EINVAL, "no %s step lines found (%s)", tp_log_format_name(f),
                         tp_log_format_label(f));
    }
    if (p.bar_ok)
        regfree(&p.bar);
    free(buf);
    return st;
}

/* ----------------------------------------------------------------------------------------- */
/* Steady state                                                                               */
/* ----------------------------------------------------------------------------------------- */

void tp_log_steady_opts_init(struct tp_log_steady_opts *o)
{
    memset(o, 0, sizeof *o);
    o->skip_warmup = -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v); NaN when n == 0. */
static double median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { N_SERIES = 6 };
static const char *const SERIES[N_SERIES] = {"step time", "tokens/s per GPU", "tokens/s",
                                             "samples/s", "TFLOP/s per GPU", "MFU"};

static double series(const struct tp_log_step *s, int k)
{
    switch (k) {
    case 0: return s->step_s;
    case 1: return s->tokens_per_s_per_gpu;
    case 2: return s->tokens_per_s;
    case 3: return s->samples_per_s;
    case 4: return s->tflops_per_gpu;
    default: return s->mfu;
    }
}

/* Mean of one field over the kept steps; NaN when none has it. */
static double mean_of(const struct tp_log_step *steps, const bool *keep, size_t n,
                      double (*get)(const struct tp_log_step *))
{
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (keep[i] && isfinite(get(&steps[i]))) {
            sum += get(&steps[i]);
            k++;
        }
    return k ? sum / (double)k : NAN;
}

static double get_step(const struct tp_log_step *s) { return s->step_s; }
static double get_tok(const struct tp_log_step *s) { return s->tokens_per_s; }
static double get_tokg(const struct tp_log_step *s) { return s->tokens_per_s_per_gpu; }
static double get_smp(const struct tp_log_step *s) { return s->samples_per_s; }
static double get_tfl(const struct tp_log_step *s) { return s->tflops_per_gpu; }
static double get_mfu(const struct tp_log_step *s) { return s->mfu; }

/* Tokens/s, per GPU, samples/s and step time from what is known (logged or derived). */
static void derive(struct tp_log_steady *o)
{
    double tps = o->tokens_per_step;
    if (tps > 0 && isfinite(o->step_s_mean)) {
        o->tokens_per_s = tps / o->step_s_mean;
        if (o->gpus)
            o->tokens_per_s_per_gpu = o->tokens_per_s / o->gpus;
        snprintf(o->how, sizeof o->how, "tokens/s = tokens per step / mean step time");
    }
    if (!isfinite(o->tokens_per_s) && isfinite(o->tokens_per_s_per_gpu) && o->gpus)
        o->tokens_per_s = o->tokens_per_s_per_gpu * o->gpus;
    if (!isfinite(o->tokens_per_s) && isfinite(o->samples_per_s) && o->seq)
        o->tokens_per_s = o->samples_per_s * (double)o->seq;
    if (!isfinite(o->tokens_per_s_per_gpu) && isfinite(o->tokens_per_s) && o->gpus)
        o->tokens_per_s_per_gpu = o->tokens_per_s / o->gpus;
    if (!isfinite(o->step_s_mean) && tps > 0 && isfinite(o->tokens_per_s)) {
        o->step_s_mean = tps / o->tokens_per_s;
        o->step_time_derived = true;
    }
    if (o->global_batch && isfinite(o->step_s_mean) && !o->from_summary)
        o->samples_per_s = (double)o->global_batch / o->step_s_mean;
    else if (!isfinite(o->samples_per_s) && isfinite(o->tokens_per_s) && o->seq)
        o->samples_per_s = o->tokens_per_s / (double)o->seq;
    if (!o->how[0])
        snprintf(o->how, sizeof o->how, "%s", o->step_time_derived
                     ? "the logged rates; step time = tokens per step / tokens/s"
                     : "means of the logged figures");
}

static enum tp_status from_summary(const struct tp_log_info *info, struct tp_log_steady *o,
                                   struct tp_error *err)
{
    if (!isfinite(info->train_runtime_s))
        return tp_fail(err, TP_EINVAL, "the log has %zu step lines but no step time or "
                       "throughput figure", o->n_steps);
    o->from_summary = true;
    if (isfinite(info->train_steps_per_s) && info->train_steps_per_s > 0)
        o->step_s_mean = 1 / info->train_steps_per_s;
    else if (info->total_steps)
        o->step_s_mean = info->train_runtime_s / (double)info->total_steps;
    o->samples_per_s = info->train_samples_per_s;
    o->tokens_per_s_per_gpu = info->train_tokens_per_s_per_gpu;
    if (isfinite(o->tokens_per_s_per_gpu) && o->gpus)
        o->tokens_per_s = o->tokens_per_s_per_gpu * o->gpus;
    o->n_used = o->n_steps;
    snprintf(o->rule, sizeof o->rule, "no per-step timing in the log: the Trainer's "
             "end-of-training summary (train_runtime %.1f s, warm-up included)",
             info->train_runtime_s);
    snprintf(o->how, sizeof o->how, "the Trainer's summary (whole-run averages)");
    derive(o);
    return TP_OK;
}

enum tp_status tp_log_steady_state(const struct tp_log_step *steps, size_t n,
                                   const struct tp_log_info *info,
                                   const struct tp_log_steady_opts *opts,
                                   struct tp_log_steady *out, struct tp_error *err)
{
    struct tp_log_steady_opts dflt;
    if (!opts) {
        tp_log_steady_opts_init(&dflt);
        opts = &dflt;
    }
    memset(out, 0, sizeof *out);
    struct tp_log_steady *o = out;
    o->n_steps = n;
    o->basis = "";
    o->basis_median = o->basis_threshold = NAN;
    o->step_s_median = o->step_s_mean = o->tokens_per_s = o->tokens_per_s_per_gpu = NAN;
    o->samples_per_s = o->tflops_per_gpu = o->mfu = o->mem_gib = o->loss_last = NAN;
    o->gpus = opts->gpus ? opts->gpus : info->gpus;
    o->global_batch = opts->global_batch ? opts->global_batch : info->global_batch;
    o->seq = opts->seq ? opts->seq : info->seq;
    if (opts->global_batch || opts->seq)
        o->tokens_per_step = o->global_batch && o->seq
                                 ? (double)o->global_batch * (double)o->seq
                                 : info->tokens_per_step;
    else
        o->tokens_per_step = info->tokens_per_step;
    set_max(&o->mem_gib, info->mem_gib);
    for (size_t i = 0; i < n; i++)
        set_max(&o->mem_gib, steps[i].mem_gib);
    if (n == 0)
        return from_summary(info, o, err);

    size_t w;
    if (opts->skip_warmup >= 0) {
        if ((uint64_t)opts->skip_warmup >= n)
            return tp_fail(err, TP_EINVAL, "skipping %lld warm-up steps leaves none of the %zu "
                           "logged", (long long)opts->skip_warmup, n);
        w = (size_t)opts->skip_warmup;
    } else {
        o->warmup_default = true;
        w = n >= 5 ? (n + 9) / 10 : 0;
    }
    o->n_warmup = w;

    int k = 0;
    for (; k < N_SERIES; k++) {
        size_t have = 0;
        for (size_t i = w; i < n; i++)
            have += isfinite(series(&steps[i], k));
        if (have)
            break;
    }
    if (k == N_SERIES)
        return from_summary(info, o, err);
    o->basis = SERIES[k];

    double *v = malloc(sizeof(double) * (n - w));
    bool *keep = calloc(n, sizeof *keep);
    if (!v || !keep) {
        free(v);
        free(keep);
        return tp_fail(err, TP_ENOMEM, "out of memory");
    }
    size_t m = 0;
    for (size_t i = w; i < n; i++)
        if (isfinite(series(&steps[i], k)))
            v[m++] = series(&steps[i], k);
    double med = median(v, m);
    for (size_t i = 0; i < m; i++)
        v[i] = fabs(v[i] - med);
    double mad = median(v, m);
    double sd = fmax(1.4826 * mad, 0.01 * fabs(med));
    o->basis_median = med;
    o->basis_threshold = 3 * sd;
    m = 0;
    for (size_t i = w; i < n; i++) {
        double x = series(&steps[i], k);
        keep[i] = !(isfinite(x) && fabs(x - med) > o->basis_threshold);
        if (!keep[i])
            o->n_outliers++;
        else if (m++ == 0)
            o->first_step = steps[i].step;
        if (keep[i]) {
            o->last_step = steps[i].step;
            if (isfinite(steps[i].loss))
                o->loss_last = steps[i].loss;
        }
    }
    o->n_used = m;
    size_t ms = 0;
    for (size_t i = w; i < n; i++)
        if (keep[i] && isfinite(steps[i].step_s))
            v[ms++] = steps[i].step_s;
    o->step_s_median = median(v, ms);
    o->step_s_mean = mean_of(steps, keep, n, get_step);
    o->tokens_per_s = mean_of(steps, keep, n, get_tok);
    o->tokens_per_s_per_gpu = mean_of(steps, keep, n, get_tokg);
    o->samples_per_s = mean_of(steps, keep, n, get_smp);
    o->tflops_per_gpu = mean_of(steps, keep, n, get_tfl);
    o->mfu = mean_of(steps, keep, n, get_mfu);
    free(v);
    free(keep);

    const char *unit = k == 0 ? " s" : k == 5 ? "%" : "";
    double scale = k == 5 ? 100 : 1;
    char warm[128];
    if (o->warmup_default)
        snprintf(warm, sizeof warm, "the first 10%% of the logged steps (at least 1; none under 5 "
                 "steps): %zu skipped", w);
    else
        snprintf(warm, sizeof warm, "%zu skipped, as asked", w);
    snprintf(o->rule, sizeof o->rule, "warm-up: %s; outliers: %s more than 3 x max(1.4826 x "
             "MAD, 1%% of the median) = %.4g%s from the median %.4g%s: %zu dropped", warm,
             o->basis, o->basis_threshold * scale, unit, med * scale, unit, o->n_outliers);
    derive(o);
    return TP_OK;
}

/* ----------------------------------------------------------------------------------------- */
/* Runs-file row                                                                              */
/* ----------------------------------------------------------------------------------------- */

/* The canonical columns of the runs files, in their order (validation/runs/README.md). */
static const char *const RUNS_COLUMNS[] = {
    "row_id", "source", "source_ref", "source_table", "source_version_or_date", "model",
    "n_layers", "hidden", "n_heads", "kv_heads", "ffn_hidden", "vocab", "seq_len",
    "total_params", "moe_num_experts", "moe_topk", "moe_ffn_hidden", "moe_shared_experts",
    "active_params", "gpu_type", "gpu_mem_gb", "num_gpus", "gpus_per_node", "interconnect",
    "tp", "pp", "dp", "cp", "sp", "ep", "vpp", "zero_or_fsdp", "micro_batch", "global_batch",
    "grad_accum", "recompute", "precision", "framework", "tflops_per_gpu", "tflops_convention",
    "mfu", "hfu", "tokens_per_s_per_gpu", "tokens_per_s_total", "samples_per_s", "step_time_s",
    "mem_per_gpu_gib", "derived_fields", "notes", "arch", "tied", "dense_layers", "head_dim",
    "framework_key", "task", "fp8_recipe", "recompute_detail", "shard_group_size", "oom",
    "dup_of", "wall_clock_h", "total_tokens", "original_values"};
enum { N_RUNS_COLUMNS = sizeof RUNS_COLUMNS / sizeof RUNS_COLUMNS[0] };

struct out {
    char *buf;
    size_t len, used; /* used counts what would have been written */
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->used < o->len) {
        size_t room = o->len - o->used - 1;
        memcpy(o->buf + o->used, s, n < room ? n : room);
        o->buf[o->used + (n < room ? n : room)] = '\0';
    }
    o->used += n;
}

/* One cell, quoted by libcsv when it holds a comma, a quote or a line break. */
static void cell(struct out *o, const char *s, bool first)
{
    if (!first)
        put(o, ",", 1);
    size_t n = strlen(s);
    if (strpbrk(s, ",\"\r\n") == NULL) {
        put(o, s, n);
        return;
    }
    size_t need = csv_write(NULL, 0, s, n);
    char *q = malloc(need + 1);
    if (!q) {
        put(o, "\"\"", 2);
        return;
    }
    csv_write(q, need, s, n);
    put(o, q, need);
    free(q);
}

/* The runs file's `arch` key for a model, and what of the model it cannot carry. */
static const char *runs_arch(const struct tp_model *m, char *lost, size_t len)
{
    const char *arch;
    lost[0] = '\0';
    if (m->attn == TP_ATTN_MLA)
        arch = m->router_score_bias ? "deepseek_v3" : "deepseek_v2";
    else if (m->attn_sinks || m->expert_bias)
        arch = "gpt_oss";
    else if (m->norm == TP_NORM_LAYER && m->mlp == TP_MLP_GELU && m->pos != TP_POS_ROPE)
        arch = "gpt";
    else if (m->norm == TP_NORM_LAYER && m->mlp == TP_MLP_GELU)
        arch = "nemotron";
    else if (m->n_experts)
        arch = m->qk_norm ? "qwen3_moe" : "mixtral";
    else
        arch = "llama";
    size_t u = 0;
    if (m->qkv_bias && strcmp(arch, "gpt") != 0 && strcmp(arch, "gpt_oss") != 0)
        u += (size_t)snprintf(lost + u, len - u, "%sq/k/v biases", u ? ", " : "");
    if (m->qk_norm && strcmp(arch, "qwen3_moe") != 0 && u < len)
        u += (size_t)snprintf(lost + u, len - u, "%sq/k norms", u ? ", " : "");
    if ((m->window || m->chunk) && u < len)
        u += (size_t)snprintf(lost + u, len - u, "%ssliding/chunked attention", u ? ", " : "");
    if (m->n_experts && (m->moe_step > 1 || m->layers_explicit) && u < len)
        u += (size_t)snprintf(lost + u, len - u, "%sinterleaved MoE layout", u ? ", " : "");
    if (m->norms_per_block == 4 && u < len)
        snprintf(lost + u, len - u, "%ssandwich norms", u ? ", " : "");
    return arch;
}

static const char *zero_key(const struct tp_job *j, const struct tp_layout *l, char *buf)
{
    bool fsdp = j->framework == TP_FW_FSDP || j->framework == TP_FW_TORCHTITAN;
    if (fsdp && l->zero == 3)
        return "fsdp-full";
    if (fsdp && l->zero == 2)
        return "fsdp-grad-op";
    if (j->framework == TP_FW_MEGATRON && l->zero == 1)
        return "megatron-distopt";
    snprintf(buf, 8, "%u", l->zero);
    return buf;
}

static void fmt_num(char *buf, size_t len, double v)
{
    if (isfinite(v))
        snprintf(buf, len, "%.10g", v);
    else
        buf[0] = '\0';
}

size_t tp_log_runs_csv(const struct tp_log_row *r, bool header, char *buf, size_t len)
{
    static const char *const TASK[] = {"pretrain", "sft", "dpo", "lora", "qlora"};
    static const char *const PREC[] = {"bf16", "fp16", "fp8", "fp32"};
    static const char *const RC[] = {"none", "selective", "full"};
    struct out o = {buf, len, 0};
    if (buf && len)
        buf[0] = '\0';
    if (header) {
        for (size_t i = 0; i < N_RUNS_COLUMNS; i++)
            cell(&o, RUNS_COLUMNS[i], i == 0);
        put(&o, "\n", 1);
    }
    const struct tp_model *m = r->model;
    const struct tp_cluster *c = r->cluster;
    const struct tp_job *j = r->job;
    const struct tp_layout *l = r->layout;
    const struct tp_log_steady *st = r->steady;
    enum tp_log_format f = r->info->format;
    struct tp_params pc;
    tp_count_params(m, &pc);
    char lost[160];
    const char *arch = runs_arch(m, lost, sizeof lost);

    /* the FLOP convention of the logged TFLOP/s and MFU (runs README tflops_convention) */
    const char *conv = "other";
    if (f == TP_LOG_TORCHTITAN)
        conv = "torchtitan";
    else if (f == TP_LOG_MEGATRON_DS && l->recompute == TP_RECOMPUTE_FULL)
        conv = "megatron-hfu-2021"; /* 24*4*B*s*L*h^2*(1+s/6h+V/16Lh): counts the recompute */
    bool flops = isfinite(st->tflops_per_gpu) || isfinite(st->mfu);

    char framework[96], derived[256], notes[1024], zbuf[8];
    snprintf(framework, sizeof framework, "%s (from a %s log)%s%s", tp_stack_get(j->framework)->key,
             tp_log_format_name(f),
             j->optimizer == TP_OPT_ADAMW_8BIT ? "; optimizer=adamw-8bit" : "",
             j->fused_loss ? "; fused loss (as Liger)" : "");
    snprintf(derived, sizeof derived, "tokens_per_s_per_gpu, tokens_per_s_total, samples_per_s, "
             "step_time_s, mem_per_gpu_gib: steady state of the log (trainplan logs); model "
             "shape, GPU and layout from the command line and the log");
    int nn = snprintf(notes, sizeof notes, "trainplan logs, %s log: %zu steps logged, %zu used "
                      "(%s); throughput: %s", tp_log_format_name(f), st->n_steps, st->n_used,
                      st->rule, st->how);
    if (flops && nn > 0 && (size_t)nn < sizeof notes)
        nn += snprintf(notes + nn, sizeof notes - (size_t)nn, "; TFLOP/s and MFU as the %s log "
                       "counts them", tp_log_format_name(f));
    if (lost[0] && nn > 0 && (size_t)nn < sizeof notes)
        nn += snprintf(notes + nn, sizeof notes - (size_t)nn, "; the runs format does not "
                       "carry the model's %s", lost);
    if (l->tp > 1 && nn > 0 && (size_t)nn < sizeof notes) /* the runs mapper reads it back */
        nn += snprintf(notes + nn, sizeof notes - (size_t)nn, "; %s",
                       j->tp_comm_overlap ? "--tp-comm-overlap" : "--no-tp-comm-overlap");
    if (r->note && r->note[0] && nn > 0 && (size_t)nn < sizeof notes)
        snprintf(notes + nn, sizeof notes - (size_t)nn, "; %s", r->note);

    char v[N_RUNS_COLUMNS][48];
    const char *cells[N_RUNS_COLUMNS];
    for (size_t i = 0; i < N_RUNS_COLUMNS; i++) {
        v[i][0] = '\0';
        cells[i] = v[i];
    }
#define SETS(i, s) (cells[i] = (s))
#define SETU(i, x) snprintf(v[i], sizeof v[i], "%llu", (unsigned long long)(x))
#define SETD(i, x) fmt_num(v[i], sizeof v[i], (x))
    SETS(0, r->row_id);
    SETS(1, "logs");
    SETS(2, r->source_ref);
    SETS(5, m->name);
    SETU(6, m->n_layers);
    SETU(7, m->hidden);
    SETU(8, m->n_heads);
    SETU(9, m->attn == TP_ATTN_MLA ? m->n_heads : m->n_kv_heads);
    if (m->ffn)
        SETU(10, m->ffn);
    SETU(11, m->vocab);
    SETU(12, j->seq);
    SETU(13, pc.total);
    if (m->n_experts) {
        SETU(14, m->n_experts);
        SETU(15, m->top_k);
        SETU(16, m->moe_ffn);
        SETU(17, m->n_shared_experts);
    }
    SETU(18, pc.active);
    SETS(19, c->gpu.key);
    SETD(20, c->gpu.hbm_bytes / 1073741824.0);
    SETU(21, c->n_gpus);
    SETU(22, c->gpus_per_node);
    SETU(24, l->tp);
    SETU(25, l->pp);
    SETU(26, l->dp);
    SETU(27, l->cp);
    SETU(28, l->sp ? 1 : 0);
    SETU(29, l->ep);
    SETU(30, l->vpp);
    SETS(31, zero_key(j, l, zbuf));
    SETU(32, l->mbs);
    SETU(33, (uint64_t)l->mbs * l->gas * l->dp);
    SETU(34, l->gas);
    SETS(35, RC[l->recompute]);
    SETS(36, PREC[j->precision]);
    SETS(37, framework);
    if (flops) {
        SETD(38, st->tflops_per_gpu);
        SETS(39, conv);
        SETD(40, st->mfu);
    }
    SETD(42, st->tokens_per_s_per_gpu);
    SETD(43, st->tokens_per_s);
    SETD(44, st->samples_per_s);
    SETD(45, st->step_s_mean);
    SETD(46, st->mem_gib);
    SETS(47, derived);
    SETS(48, notes);
    SETS(49, arch);
    SETU(50, m->tied ? 1 : 0);
    SETU(51, m->n_experts ? m->moe_first_dense : m->n_layers);
    if (m->attn != TP_ATTN_MLA)
        SETU(52, m->head_dim);
    SETS(53, tp_stack_get(j->framework)->key);
    SETS(54, TASK[j->task]);
    if (l->shard_group)
        SETU(57, l->shard_group);
    SETS(58, "0");
#undef SETS
#undef SETU
#undef SETD
    for (size_t i = 0; i < N_RUNS_COLUMNS; i++)
        cell(&o, cells[i], i == 0);
    put(&o, "\n", 1);
    return o.used;
}
