/*
 * logs_hf.c - Hugging Face Trainer / Axolotl / TRL text logs (Python dict lines, whose
 * 'key': number pairs are picked out, and the tqdm bar), and the JSON run logs and
 * trainer_state.json read with jansson.
 */
#include "logs_internal.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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
        const char *e = tp_logs_number(v, false, &x);
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

bool tp_logs_hf_is_dict(const char *line)
{
    return strstr(line, "{'loss':") || strstr(line, "{\"loss\":") ||
           strstr(line, "'train_runtime':") || strstr(line, "\"train_runtime\":");
}

/* tqdm: "  5%|▌         | 60/1188 [06:42<2:06:02,  6.70s/it]" (or "1.52it/s", or "?it/s") */
static bool hf_bar(struct parser *p, const char *line, uint64_t *n, uint64_t *total, double *s)
{
    /* a bar states a rate in s/it or it/s: lines without one are not matched against the
       pattern (regexec allocates per call), and logs without bars never compile it */
    if (!strstr(line, "s/it") && !strstr(line, "it/s"))
        return false;
    if (p->bar_state == 0)
        p->bar_state = regcomp(&p->bar, "([0-9]+)/([0-9]+) \\[([0-9:]+)<[0-9:?]+, *"
                                         "([0-9.]+|\\?)(s/it|it/s)", REG_EXTENDED) == 0 ? 1 : -1;
    regmatch_t m[6];
    if (p->bar_state != 1 || regexec(&p->bar, line, 6, m, 0) != 0)
        return false;
    double a, b, r;
    if (!tp_logs_number(line + m[1].rm_so, false, &a) || !tp_logs_number(line + m[2].rm_so, false, &b) ||
        !tp_logs_whole(a) || !tp_logs_whole(b))
        return false;
    *n = (uint64_t)a;
    *total = (uint64_t)b;
    *s = NAN;
    if (line[m[4].rm_so] != '?' && tp_logs_number(line + m[4].rm_so, false, &r) && r > 0)
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
        s = tp_logs_push(p, step ? step : info->n_steps + 1);
    p->last_from_bar = false;
    if (loss)
        s->loss = loss->v;
    if (tps)
        s->tokens_per_s_per_gpu = tps->v;
    /* Axolotl (utils/callbacks: the "memory/..." keys): max_allocated and max_active from
       torch.cuda.max_memory_allocated / memory_stats, device_reserved torch.cuda.memory_reserved.
       The peak is the largest (the reserved pool where logged); the allocated kept beside it. */
    bool reserved = false, allocated = false;
    for (size_t i = 0; i < n; i++)
        if (strncmp(ps[i].key, "memory/", 7) == 0 && strstr(ps[i].key, "GiB")) {
            tp_logs_set_max(&s->mem_gib, ps[i].v);
            if (strstr(ps[i].key, "reserved"))
                reserved = true;
            if (strstr(ps[i].key, "max_allocated")) {
                allocated = true;
                tp_logs_set_max(&info->mem_alloc_gib, ps[i].v);
            }
        }
    if (reserved)
        info->mem_kind = "device reserved (Axolotl memory/device_reserved)";
    else if (allocated && !info->mem_kind)
        info->mem_kind = "max allocated (Axolotl memory/max_allocated)";
}

static void hf_dict(struct parser *p, const char *line)
{
    struct pair ps[MAX_PAIRS] = {{{0}, 0}};
    hf_pairs(p, ps, dict_pairs(line, ps, MAX_PAIRS), p->bar_step);
}

void tp_logs_hf_line(struct parser *p, const char *line)
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
            tp_logs_push(p, n)->step_s = s;
            p->last_from_bar = true;
        }
        p->bar_step = n;
        return;
    }
    if (tp_logs_hf_is_dict(line)) {
        hf_dict(p, line);
        return;
    }
    /* the Trainer's banner: "  Total train batch size (w. parallel, distributed &
       accumulation) = 128", "  Instantaneous batch size per device = 16", ... */
    if (tp_logs_after(line, "Total train batch size (w. parallel, distributed & accumulation) =", true, &v))
        tp_logs_set_u64(&info->global_batch, v);
    else if (tp_logs_after(line, "Instantaneous batch size per device =", true, &v))
        tp_logs_set_u64(&info->micro_batch, v);
    else if (tp_logs_after(line, "Gradient Accumulation steps =", true, &v))
        tp_logs_set_u64(&info->grad_accum, v);
    else if (tp_logs_after(line, "Total optimization steps =", true, &v))
        tp_logs_set_u64(&info->total_steps, v);
}

/* The training bar is the most frequent bar total (evaluation bars are shorter-lived). */
void tp_logs_hf_find_bar(struct parser *p, const char *text, size_t len, char *buf)
{
    uint64_t totals[MAX_BARS] = {0};
    size_t counts[MAX_BARS] = {0}, used = 0;
    struct lines it = {text, text + len};
    while (tp_logs_next_line(&it, buf)) {
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
            tp_logs_set_u32(&info->gpus, x);
        else if (json_key_in(key, SEQ))
            tp_logs_set_u64(&info->seq, x);
        else if (json_key_in(key, TOKENS) && x > 0)
            info->tokens_per_step = x;
        else if (json_key_in(key, GBS))
            tp_logs_set_u64(&info->global_batch, x);
        else if (json_key_in(key, STEPS))
            tp_logs_set_u64(&info->total_steps, x);
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
        if (json_key_in(key, STEP) && json_num(v, &x) && tp_logs_whole(x)) {
            step = x;
            break;
        }
    }
    struct tp_log_step *s = tp_logs_push(p, (uint64_t)step);
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
            tp_logs_set_max(&s->mem_gib, x);
    }
}

/* Hugging Face trainer_state.json (written with every checkpoint): "train_batch_size" is the
   per-device batch, "max_steps" the planned steps, "log_history" the dicts the Trainer logged
   (steps carry "step"; the last entry is the train_runtime summary). */
static void trainer_state(struct parser *p, json_t *doc, json_t *hist)
{
    double x;
    if (json_num(json_object_get(doc, "train_batch_size"), &x))
        tp_logs_set_u64(&p->info->micro_batch, x);
    if (json_num(json_object_get(doc, "max_steps"), &x))
        tp_logs_set_u64(&p->info->total_steps, x);
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
                tp_snprintf(ps[n].key, sizeof ps[n].key, "%s", key);
                n++;
            }
        }
        const struct pair *st = pair_find(ps, n, "step");
        hf_pairs(p, ps, n, st && tp_logs_whole(st->v) && st->v > 0 ? (uint64_t)st->v : 0);
    }
}

/* TP_OK: a JSON run log, parsed; TP_ENOTFOUND: not one (err says why when `required`). */
enum tp_status tp_logs_parse_json(struct parser *p, const char *text, size_t len, bool required,
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

