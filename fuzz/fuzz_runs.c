/* fuzz_runs.c - runs-file reader (tp_runs_read: libcsv in strict mode + tp_run_from_row); every
   row it maps is predicted (tp_run_evaluate), the prediction must be finite and positive, and
   its measured figures within the bounds the reader promises (MFU/HFU in (0, 1]); every row,
   mapped or refused, must come with an identity and a reason safe to echo (no control
   character, valid UTF-8: tp_text_escape leaves it unchanged); the evaluated rows feed
   validate's streaming summary. */
#include "fuzz.h"
#include "trainplan.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

struct ctx {
    struct tp_calib cal;
    struct tp_validate_stream *acc;
};

/* Text a report echoes must already be escaped: escaping it again changes nothing. */
static void echo_safe(const char *text, const char *what)
{
    static char out[4 * 1024];
    size_t n = tp_text_escape(text, out, sizeof out);
    if (n < sizeof out && strcmp(out, text) != 0) {
        fprintf(stderr, "fuzz: %s holds text that is not escaped\n", what);
        abort();
    }
}

static bool check_row(void *ctx, const char *path, size_t line, const struct tp_run *run,
                      const struct tp_error *why)
{
    (void)path;
    struct ctx *c = ctx;
    if (line == 0) {
        fprintf(stderr, "fuzz: a row without its line\n");
        abort();
    }
    echo_safe(run->row_id, "a row id");
    if (why)
        return true;
    static struct tp_run_eval ev;
    /* a row tp_run_from_row accepts is one the evaluation takes: a refusal here would be a
       row dropped without its reason */
    if (tp_run_evaluate(run, &c->cal, &ev) != TP_OK) {
        fprintf(stderr, "fuzz: a mapped row is refused by tp_run_evaluate\n");
        abort();
    }
    fuzz_sane(ev.predicted_step_s, 0, "predicted step time");
    fuzz_sane(ev.predicted_tokens_per_s_per_gpu, 0, "predicted tokens/s per GPU");
    fuzz_sane(ev.predicted_mem_gib, 0, "predicted memory");
    fuzz_sane(ev.time.mfu, 0, "predicted MFU");
    if ((!isnan(run->mfu) && !(run->mfu >= 0 && run->mfu <= 1)) ||
        (!isnan(run->hfu) && !(run->hfu >= 0 && run->hfu <= 1))) {
        fprintf(stderr, "fuzz: a mapped row's MFU/HFU lies outside [0, 1]\n");
        abort();
    }
    struct tp_error err;
    if (c->acc && tp_validate_stream_add(c->acc, run, &ev, &err) != TP_OK)
        return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct ctx c;
    static char path[64];
    if (!path[0]) {
        tp_calib_init(&c.cal);
        snprintf(path, sizeof path, "/tmp/trainplan-fuzz-runs.%ld.csv", (long)getpid());
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    c.acc = tp_validate_stream_new();
    struct tp_error err;
    tp_runs_read(path, check_row, &c, &err); /* an error is one line the CLI escapes */
    if (c.acc) {
        struct tp_validation_summary s;
        tp_validate_stream_summarize(c.acc, &s);
        if (s.in_range > s.measured || s.throughput.n != s.measured) {
            fprintf(stderr, "fuzz: the streaming summary's counts disagree\n");
            abort();
        }
        tp_validate_stream_free(c.acc);
    }
    unlink(path);
    return 0;
}
