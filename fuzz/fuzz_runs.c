/* fuzz_runs.c - runs-file reader (tp_runs_read, libcsv + tp_run_from_row); every row it maps
   is predicted (tp_run_evaluate), and the prediction must be finite and positive. */
#include "fuzz.h"
#include "trainplan.h"

#include <stdbool.h>
#include <unistd.h>

static bool check_row(void *ctx, const char *path, size_t line, const struct tp_run *run,
                      const struct tp_error *why)
{
    (void)path;
    (void)line;
    if (why)
        return true;
    static struct tp_run_eval ev;
    /* a row tp_run_from_row accepts is one the evaluation takes: a refusal here would be a
       row dropped without its reason */
    if (tp_run_evaluate(run, ctx, &ev) != TP_OK) {
        fprintf(stderr, "fuzz: a mapped row is refused by tp_run_evaluate\n");
        abort();
    }
    fuzz_sane(ev.predicted_step_s, 0, "predicted step time");
    fuzz_sane(ev.predicted_tokens_per_s_per_gpu, 0, "predicted tokens/s per GPU");
    fuzz_sane(ev.predicted_mem_gib, 0, "predicted memory");
    fuzz_sane(ev.time.mfu, 0, "predicted MFU");
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tp_calib cal;
    static char path[64];
    if (!path[0]) {
        tp_calib_init(&cal);
        snprintf(path, sizeof path, "/tmp/trainplan-fuzz-runs.%ld.csv", (long)getpid());
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    struct tp_error err;
    tp_runs_read(path, check_row, &cal, &err);
    unlink(path);
    return 0;
}
