/*
 * cli.h - the trainplan command-line tool's internal interface.
 *
 * The CLI owns all I/O: argument parsing (one option table drives parsing and --help), model
 * resolution (preset, config.json path, shape flags), output formats and exit codes.
 */
#ifndef TP_CLI_H
#define TP_CLI_H

#include "trainplan.h"

#include <jansson.h>
#include <stdio.h>

/* Exit codes (documented in --help and the README). */
enum { EXIT_OK = 0, EXIT_NO = 1, EXIT_USAGE = 2 };

enum out_format { FMT_TABLE = 0, FMT_JSON, FMT_CSV };

/* Which commands accept an option (bit mask): the library's verbs (enum tp_verb). */
enum {
    CMD_PARAMS = TP_VERB_PARAMS,
    CMD_MODELS = TP_VERB_MODELS,
    CMD_MEMORY = TP_VERB_MEMORY,
    CMD_GPUS = TP_VERB_GPUS,
    CMD_ESTIMATE = TP_VERB_ESTIMATE,
    CMD_SEARCH = TP_VERB_SEARCH,
    CMD_VALIDATE = TP_VERB_VALIDATE,
    CMD_CALIBRATE = TP_VERB_CALIBRATE,
    CMD_LOGS = TP_VERB_LOGS,
    CMD_EXPORT = TP_VERB_EXPORT,
    CMD_SIZE = TP_VERB_SIZE,
    CMD_CHECKPOINT = TP_VERB_CHECKPOINT,
};
/* Commands whose positional arguments are files (cli_args.files), not MODEL. */
#define FILES_CMDS (CMD_VALIDATE | CMD_CALIBRATE | CMD_LOGS | CMD_CHECKPOINT)
#define CLI_MAX_FILES TP_ARGS_MAX_FILES
#define CLI_MAX_SWEEPS TP_ARGS_MAX_SWEEPS
#define CLI_MAX_SWEEP_VALUES TP_ARGS_MAX_SWEEP_VALUES

/* The parsed arguments are the library's options (struct tp_args, include/trainplan/io.h),
   filled through its one option table (src/api/option_table.c): the commands keep calling them
   struct cli_args, a list option struct cli_sweep. */
#define cli_args tp_args
#define cli_sweep tp_sweep

struct run;
/* The advice of a resolved run (advice.c): the defaults that move the answer and, for estimate
   and export, the changes that make it faster. */
struct cli_advice {
    struct tp_default_effect dflt[8];
    size_t n_dflt;
    struct tp_speedup fast[3];
    size_t n_fast;
    struct tp_range range;   /* the run's 80% range; its relative band (tp_range_relative)
                                is the bar a default must clear */
    double base_bytes;       /* the run's worst stage */
};
/* Fills `out` for run `r`; `given` adds TP_GIVEN_* bits to what the arguments gave (search:
   what it searched). */
void cli_advice(const struct cli_args *a, const struct run *r, const struct tp_calib *cal,
                unsigned given, bool speedups, struct cli_advice *out);
/* The table sections: the defaults that move tokens/s (or, for memory, the memory) and the
   changes that make it faster. */
void cli_advice_print(const struct run *r, const struct cli_advice *adv, bool memory);
/* The defaults that move tokens/s as "trainplan: note:" lines on stderr (export). */
void cli_advice_notes(const struct run *r, const struct cli_advice *adv);
/* The arrays "defaults_that_matter" (and "speedups") into a JSON document. */
void cli_advice_json(json_t *doc, const struct cli_advice *adv, bool speedups);
/* The same as one text cell each, for a CSV row. */
void cli_advice_cell(json_t *row, const struct cli_advice *adv, bool speedups);


/* Everything a run needs, resolved and checked. */
struct run {
    struct tp_model m;
    struct tp_cluster c;
    struct tp_job j;
    struct tp_layout l;
    char notes[512];
    bool gpu_assumed, gpus_assumed; /* --gpu / --gpus not given: the defaults taken */
};

/* Resolves model, cluster, job and layout from the arguments; prints the error and returns
   EXIT_USAGE on failure. */
/* One warning line when a GEMM width of the model is off the tensor cores' 128-byte grid
   (tp_model_misaligned) at TP size `tp`. */
void cli_warn_misaligned(const struct tp_model *m, uint32_t tp, enum tp_precision p);
int cli_resolve_run(const struct cli_args *a, struct run *r);
/* The cluster, job and layout part of cli_resolve_run, for a model already in r->m (zeroed:
   the sequence defaults to 4096). */
int cli_resolve_cluster_job(const struct cli_args *a, struct run *r);

/* Parses argv (after the command name) for command `cmd`.  On error prints one line to stderr
   and returns EXIT_USAGE; otherwise EXIT_OK. */
int cli_parse(int argc, char **argv, unsigned cmd, struct cli_args *a);
/* Parses the arguments of command `cmd` and handles --help with `help`.  Returns -1 when the
   command should go on, else the exit code to return (help printed, or a usage error). */
int cli_begin(int argc, char **argv, unsigned cmd, struct cli_args *a, void (*help)(void));
/* cli_begin followed by cli_resolve_run, for the commands that evaluate one run. */
int cli_begin_run(int argc, char **argv, unsigned cmd, struct cli_args *a, void (*help)(void),
                  struct run *r);
/* cli_begin for commands that take no positional argument (models, gpus). */
int cli_begin_listing(int argc, char **argv, unsigned cmd, struct cli_args *a,
                      void (*help)(void), const char *name);
/* Prints the options command `cmd` accepts. */
void cli_print_options(FILE *out, unsigned cmd);

/* Resolves MODEL and shape flags into a finalized model.  `notes` receives assumptions.
   Prints the error and returns EXIT_USAGE on failure. */
int cli_resolve_model(const struct cli_args *a, struct tp_model *m, char *notes, size_t len);

/* "8,16,32" or "8..512" (doubling from LOW, HIGH included) into at most `cap` values in
   [lo, hi]; prints the error naming --name and returns EXIT_USAGE when it is not one. */
int cli_parse_list(const char *name, const char *text, int64_t lo, int64_t hi, int64_t *out,
                   size_t cap, size_t *n);
/* One combination of a sweep: fills `row` (which holds the swept values) for the resolved run
   `r`; *ok false when it does not fit.  Returns EXIT_OK or EXIT_USAGE after an error line. */
typedef int (*cli_sweep_row)(const struct cli_args *a, struct run *r, void *ctx, json_t *row,
                             bool *ok);
/* Runs `one` for every combination of a->sweeps (the first option varying slowest), appending
   a row each to `rows`; a combination that does not resolve gets its error in an "error" key
   and clears *all_ok (so does one that does not fit). */
int cli_sweep(const struct cli_args *a, cli_sweep_row one, void *ctx, json_t *rows,
              bool *all_ok);
/* A column of a sweep's table: the row key, its header (also its width), and for reals the
   digits after the point and a scale (bytes to GiB). */
struct cli_col {
    const char *key, *head;
    int digits;
    double scale;
};
void cli_sweep_table(const json_t *rows, const struct cli_col *cols, size_t n_cols);
/* Adds the keys of `figures` (consumed; NULL: out of memory) that `row` lacks; EXIT_OK or
   EXIT_USAGE after an error line.  For a cli_sweep_row. */
int cli_sweep_merge(json_t *row, json_t *figures);
/* cli_sweep, then the rows in a->format: CSV, JSON {schema_version, command, sweep: rows} with
   `digits` significant digits, or the table of `cols` under a title line ending in `title`.
   Exit status 0 when every combination fits, 1 when one does not or cannot be run. */
int cli_sweep_print(const struct cli_args *a, cli_sweep_row one, void *ctx, const char *command,
                    const char *title, const struct cli_col *cols, size_t n_cols, int digits);
/* Sends cli_error's messages into `buf` (the last one) instead of stderr; NULL restores. */
void cli_error_capture(char *buf, size_t len);
/* Input echoed back (row ids, names, paths, messages) with its control characters and bytes
   that are not UTF-8 written as \xNN (tp_text_escape): the one helper for every echo.  Returns
   one of four rotating static buffers (up to 4 KiB), so a printf may take up to four. */
const char *cli_escape(const char *text);
/* Prints "trainplan: error: <msg>" to stderr, escaped (cli_escape). */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Prints a library error, its field (struct tp_error.field) rendered as the option "--field"
   and every setting it names as key=value (the request's keys, python's keywords) as the flag
   "--key value" ("--key" alone for key=true). */
void cli_error_field(const struct tp_error *err);
/* A library error's message with its settings rendered as flags (a buffer of the CLI's, valid
   until the next call), for errors printed after a prefix of the CLI's own. */
const char *cli_lib_msg(const struct tp_error *err);
/* `text` with its key=value settings rendered as flags, as cli_error_field does. */
void cli_render_settings(const char *text, char *out, size_t len);
/* A long option's name ("recompute", "pp-first"), not an alias. */
bool cli_is_option(const char *name);

/* Number formatting for human tables. */
void fmt_count(char *buf, size_t len, uint64_t v);  /* 8,030,261,248 */
void fmt_si(char *buf, size_t len, double v);        /* 8.03B, 124.4M, 51.47G */
void fmt_duration(char *buf, size_t len, double s);  /* 42.0 s, 3.5 min, 37.6 h, 4.3 days */

/* The attention kernel a job runs, for tables ("flash (TE/cuDNN)", "FlashAttention-2", ...). */
const char *attn_label(const struct tp_job *j);
/* Prints the resolved model, cluster, job and layout under "trainplan VERSION - what". */
void report_header(const struct run *r, const char *what);
/* Prints the memory breakdown of one stage (`worst`: it is the stage that decides the fit). */
void report_memory_stage(const struct run *r, const struct tp_memory *mem, bool worst);
/* A warning line after `lead` when the logits (bf16 and the loss's fp32 copy) outweigh the
   blocks' stored activations on this stage, with the figure a fused loss keeps; else nothing. */
void report_logits_note(const struct run *r, const struct tp_memory *mem, const char *lead);
/* A change that makes a run fit rendered as the flags that make it: "--recompute full",
   "--fused-loss", "--pp 8 (dp 1)" (a parallel size with the data-parallel size it leaves). */
void report_fix_flags(const struct tp_job *j, const struct tp_fix *f, char *buf, size_t len);
/* The "fits with FLAGS (total N GB)" lines of a run that does not fit, or that none was found;
   a change that fits `capacity` bytes by less than the memory model's error says "tight". */
void report_fixes(const struct tp_job *j, const struct tp_fix *fixes, size_t n, double capacity);
/* A run that fits within the memory model's error: says so, with the changes that leave its margin free. */
void report_tight(const struct run *r, const struct tp_memory *mem);
/* The fit hint (tp_fit_hint) as flags; "" when there is none. */
void report_fit_hint(const struct run *r, const struct tp_memory *mem, char *buf, size_t len);
/* One CSV cell on stdout through libcsv's writer: quoted, quotes doubled (RFC 4180). */
void report_csv_cell(const char *s);
/* The output layer (format.c): a number for a JSON/CSV row, null when not finite (jansson
   holds no NaN); rows of flat objects (consumed) written as CSV through libcsv, the header the
   keys in order of first appearance, nested values as compact JSON cells.  Return EXIT_OK, or
   EXIT_USAGE after an error line. */
json_t *out_num(double v);
int out_csv_rows(json_t *rows);
int out_csv_row(json_t *row);
/* Blocks per pipeline stage: "20+2x21+19" (first, middle stages, last), "48+46" with pp 2. */
void report_split(const struct tp_model *m, const struct tp_layout *l, char *buf, size_t len);
/* The recompute mode: "none", "selective", "full", or "full(N)" for N blocks per stage. */
void report_recompute(const struct tp_layout *l, char *buf, size_t len);

/* The search over software stacks (search_stacks.c). */
enum { SEARCH_MAX_TOP = 1000 };
struct search_ctl {
    enum tp_framework fw[TP_FW_COUNT]; /* the stacks searched */
    size_t n_fw;
    unsigned threads;
    bool progress;           /* the progress line on stderr */
};
/* The enumeration's options from the flags (--max-*, --mem-headroom, --no-offload, --even-pp,
   --recompute-modes, --zero-stages) for the global batch `gbs`.  EXIT_OK, or EXIT_USAGE after
   an error line. */
int cli_search_opts(const struct cli_args *a, uint64_t gbs, struct tp_search_opts *o);
/* The `cap` fastest layouts over the stacks of `ctl` (r->j.framework is left at the best's);
   the stats add up over the stacks.  EXIT_OK, or EXIT_USAGE after an error line. */
int search_stacks(struct run *r, const struct tp_search_opts *o, const struct tp_calib *cal,
                  const struct search_ctl *ctl, struct tp_stack_hit *out, size_t cap, size_t *n,
                  struct tp_search_stats *st);
/* Nothing feasible: the nearest changes that work (tp_search_nearest over the CLI's threaded
   search: another stack when one was named, the nearest global batch, more GPUs); and printed
   with the constraint that binds. */
size_t search_nearest(const struct run *r, const struct tp_search_opts *o,
                      const struct tp_calib *cal, const struct search_ctl *ctl,
                      const struct tp_search_stats *st, bool framework_given, struct tp_fix *out,
                      size_t cap);
void search_nothing(const struct search_ctl *ctl, const struct tp_search_opts *o,
                    const struct tp_search_stats *st, const struct tp_fix *near, size_t n);

int cmd_params(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_memory(int argc, char **argv);
int cmd_gpus(int argc, char **argv);
int cmd_estimate(int argc, char **argv);
int cmd_search(int argc, char **argv);
int cmd_validate(int argc, char **argv);

int cmd_calibrate(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_size(int argc, char **argv);
int cmd_checkpoint(int argc, char **argv);
/* The checkpoint plan of a run (cmd_checkpoint.c) as a table section. */
void report_checkpoint_plan(const struct tp_ckpt_plan *p, double storage_gbps);

/* Prints `doc` (consumed; NULL means a failed build) as indented JSON with its key order kept,
   reals with `digits` significant digits (0 = jansson's shortest round-trip form).  Returns
   EXIT_OK, or EXIT_USAGE after an error line. */
int cli_print_json(json_t *doc, int digits);

/* Flushes stdout and reports a failed write; returns `code` or EXIT_USAGE. */
int cli_finish(int code);

#endif
