/*
 * logs.c - training logs as users have them -> per-step records and run facts
 * (docs/design.md "Training logs"): format names, the line reader and number scanning, format
 * detection and the parse.  The families' parsers are in logs_text.c and logs_hf.c, the steady
 * state in logs_steady.c, the runs-file row in logs_row.c.
 *
 * Text logs are read line by line ('\n' and '\r' both end a line, so tqdm's carriage-return
 * updates are lines; ANSI colour codes are stripped).  Each format has a cheap line test used
 * for detection and a parser that fills step records and the run facts the log states.  The
 * users' JSON run logs are read with jansson; Python dict lines (HF Trainer) are Python repr,
 * not JSON, so only their 'key': number pairs are picked out.
 */
#include "logs_internal.h"

#include <ctype.h>
#include <math.h>
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

/* Copies the next non-empty line into buf (at most LINE_CAP - 1 bytes, the rest dropped),
   without ANSI escape sequences and NUL bytes.  False at the end of the text. */
bool tp_logs_next_line(struct lines *it, char *buf)
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
const char *tp_logs_number(const char *s, bool commas, double *out)
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
    double v = tp_strtod(tmp, &end);
    if (end == tmp || *end || !isfinite(v))
        return NULL;
    *out = v;
    return p;
}

/* The number right after the first occurrence of `key`. */
bool tp_logs_after(const char *line, const char *key, bool commas, double *out)
{
    const char *p = strstr(line, key);
    return p && tp_logs_number(p + strlen(key), commas, out) != NULL;
}

/* The number that ends right before `p` (digits, '.', with one blank allowed in between). */
bool tp_logs_before(const char *line, const char *p, double *out)
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
    const char *end = tp_logs_number(tmp, false, out);
    return end && *end == '\0';
}

bool tp_logs_whole(double v)
{
    return v >= 0 && v <= 1e15 && v == floor(v);
}

void tp_logs_set_u64(uint64_t *dst, double v)
{
    if (tp_logs_whole(v) && v > 0)
        *dst = (uint64_t)v;
}

void tp_logs_set_u32(uint32_t *dst, double v)
{
    if (tp_logs_whole(v) && v > 0 && v <= UINT32_MAX)
        *dst = (uint32_t)v;
}

void tp_logs_trim(char *s)
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

void tp_logs_step_init(struct tp_log_step *s)
{
    s->step = 0;
    s->step_s = s->tokens_per_s = s->tokens_per_s_per_gpu = s->samples_per_s = NAN;
    s->tflops_per_gpu = s->mfu = s->mem_gib = s->loss = NAN;
}

struct tp_log_step *tp_logs_push(struct parser *p, uint64_t step)
{
    size_t i = p->info->n_steps++;
    struct tp_log_step *s = i < p->cap ? &p->steps[i] : &p->spare;
    tp_logs_step_init(s);
    s->step = step;
    p->last = s;
    p->last_from_bar = false;
    return s;
}

void tp_logs_set_max(double *dst, double v)
{
    if (isfinite(v) && (!isfinite(*dst) || v > *dst))
        *dst = v;
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
    while (tp_logs_next_line(&it, buf)) {
        if (*sig == TP_LOG_UNKNOWN)
            *sig = signature(buf);
        if (tp_logs_megatron_is_step(buf))
            count[TP_LOG_MEGATRON]++;
        else if (tp_logs_titan_is_step(buf))
            count[TP_LOG_TORCHTITAN]++;
        else if (tp_logs_nanogpt_is_step(buf))
            count[TP_LOG_NANOGPT]++;
        else if (tp_logs_llmc_is_step(buf))
            count[TP_LOG_LLMC]++;
        else if (tp_logs_hf_is_dict(buf))
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
        tp_logs_hf_find_bar(p, text, len, buf);
    while (tp_logs_next_line(&it, buf)) {
        p->info->n_lines++;
        switch (f) {
        case TP_LOG_MEGATRON:
        case TP_LOG_MEGATRON_DS:
            tp_logs_megatron_line(p, buf);
            break;
        case TP_LOG_HF:
            tp_logs_hf_line(p, buf);
            break;
        case TP_LOG_TORCHTITAN:
            tp_logs_titan_line(p, buf);
            break;
        case TP_LOG_NANOGPT:
            tp_logs_nanogpt_line(p, buf);
            break;
        case TP_LOG_LLMC:
            tp_logs_llmc_line(p, buf);
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
    info->mem_alloc_gib = NAN;
    info->mem_kind = NULL;
    info->train_runtime_s = info->train_samples_per_s = info->train_steps_per_s = NAN;
    info->train_loss = info->train_tokens_per_s_per_gpu = NAN;
}

/* Facts that follow from the stated ones. */
static void info_finish(struct tp_log_info *info)
{
    if (info->tokens_per_step <= 0 && info->global_batch && info->seq)
        info->tokens_per_step = (double)info->global_batch * (double)info->seq;
    /* the quotient is range-checked as a double before the conversion: a logged 4e58 tokens
       per step converted to uint64_t is undefined behaviour (found by fuzz_logs) */
    double batch = info->seq ? info->tokens_per_step / (double)info->seq : 0;
    if (!info->global_batch && info->seq && info->tokens_per_step > 0 &&
        fmod(info->tokens_per_step, (double)info->seq) == 0 && batch >= 1 && batch <= 0x1p53)
        info->global_batch = (uint64_t)batch;
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
        enum tp_status st = tp_logs_parse_json(&p, text, len, hint == TP_LOG_JSON, err);
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
    if (p.bar_state == 1)
        regfree(&p.bar);
    free(buf);
    return st;
}

