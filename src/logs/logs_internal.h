/*
 * logs_internal.h - what the training-log readers share: the line reader, number scanning and
 * the parser state (logs.c), and each family's line test and parser (logs_text.c: Megatron,
 * torchtitan, nanoGPT, llm.c; logs_hf.c: Hugging Face Trainer text and JSON run logs).
 */
#ifndef TP_LOGS_INTERNAL_H
#define TP_LOGS_INTERNAL_H

#include "search_internal.h"

#include <regex.h>

/* Drops (sets NaN) and counts the physically impossible figures of parsed log steps and of the
   log's run facts; returns how many, also added to info->n_implausible. */
size_t tp_log_drop_implausible(struct tp_log_step *steps, size_t n, struct tp_log_info *info);
/* plausible.c: every measured figure of a mapped run within what its GPU can do (MFU
   and HFU in (0, 1], TFLOP/s up to the dense peak, rates up to peak / 2N per token, memory up
   to twice the HBM); an error naming the column otherwise (runs.c calls it). */
enum tp_status tp_run_plausible(const struct tp_run *run, struct tp_error *err);

enum { LINE_CAP = 8192 };

struct lines {
    const char *p, *end;
};

enum { MAX_BARS = 16 };

struct parser {
    struct tp_log_step *steps;
    size_t cap;
    struct tp_log_info *info;
    struct tp_log_step spare;   /* records beyond cap are built here (and counted) */
    struct tp_log_step *last;   /* the record being filled; NULL before the first */
    bool ds;                    /* Megatron lines carried Megatron-DeepSpeed fields */
    regex_t bar;                /* the tqdm progress bar, compiled on first use */
    int bar_state;              /* 0 not compiled yet, 1 compiled, -1 failed to compile */
    uint64_t bar_total;         /* total of the training bar (the most frequent one) */
    uint64_t bar_step;          /* its last position; 0 = none yet */
    bool last_from_bar;
    long rank;                  /* torchtitan: the "[rankN]:" prefix kept (-1 = none seen) */
};

/* logs.c: text helpers */
/* Copies the next non-empty line into buf (LINE_CAP bytes) without ANSI escapes; false at the
   end of the text. */
bool tp_logs_next_line(struct lines *it, char *buf);
/* A decimal number after optional blanks (with `commas`, thousands separators); the end, or
   NULL when there is none or it is not finite. */
const char *tp_logs_number(const char *s, bool commas, double *out);
/* The number right after the first occurrence of `key`. */
bool tp_logs_after(const char *line, const char *key, bool commas, double *out);
/* The number that ends right before `p`. */
bool tp_logs_before(const char *line, const char *p, double *out);
bool tp_logs_whole(double v);
void tp_logs_set_u64(uint64_t *dst, double v);
void tp_logs_set_u32(uint32_t *dst, double v);
void tp_logs_trim(char *s);
/* logs.c: step records */
void tp_logs_step_init(struct tp_log_step *s);
/* A new record for `step` (built in p->spare beyond the caller's capacity, and counted). */
struct tp_log_step *tp_logs_push(struct parser *p, uint64_t step);
void tp_logs_set_max(double *dst, double v);

/* logs_text.c: one line test (detection) and one line parser per text family */
bool tp_logs_megatron_is_step(const char *line);
void tp_logs_megatron_line(struct parser *p, const char *line);
bool tp_logs_titan_is_step(const char *line);
void tp_logs_titan_line(struct parser *p, const char *line);
bool tp_logs_nanogpt_is_step(const char *line);
void tp_logs_nanogpt_line(struct parser *p, const char *line);
bool tp_logs_llmc_is_step(const char *line);
void tp_logs_llmc_line(struct parser *p, const char *line);

/* logs_hf.c: Hugging Face Trainer text logs and the JSON run logs / trainer_state.json */
bool tp_logs_hf_is_dict(const char *line);
void tp_logs_hf_line(struct parser *p, const char *line);
/* Finds the training progress bar (the most frequent tqdm total) before the parse. */
void tp_logs_hf_find_bar(struct parser *p, const char *text, size_t len, char *buf);
/* A JSON run log or trainer_state.json; TP_ENOTFOUND when the text is not one (and not
   `required`). */
enum tp_status tp_logs_parse_json(struct parser *p, const char *text, size_t len, bool required,
                                  struct tp_error *err);

#endif
