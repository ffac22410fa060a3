/* fuzz_logs.c - training-log reader (tp_log_parse) for every format: the first byte picks the
   format hint (0 = detect), the rest is the log; then the steady state of what was accepted,
   whose figures must be finite and non-negative. */
#include "fuzz.h"
#include "trainplan.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    enum tp_log_format hint = (enum tp_log_format)(data[0] % TP_LOG_FORMAT_COUNT);
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    /* one buffer for every input: a fresh 300 KiB allocation per input (mmap, page faults)
       took most of the time and capped the target near 2,000 inputs/s */
    enum { CAP = 4096 };
    static struct tp_log_step steps[CAP];
    struct tp_log_info info;
    struct tp_error err;
    if (tp_log_parse(text, len, hint, steps, CAP, &info, &err) == TP_OK) {
        size_t n = info.n_steps < CAP ? info.n_steps : CAP;
        struct tp_log_steady_opts o;
        tp_log_steady_opts_init(&o);
        struct tp_log_steady s;
        if (tp_log_steady_state(steps, n, &info, &o, &s, &err) == TP_OK) {
            fuzz_sane(s.step_s_median, 1, "step time (median)");
            fuzz_sane(s.step_s_mean, 1, "step time (mean)");
            fuzz_sane(s.tokens_per_s, 1, "tokens/s");
            fuzz_sane(s.tokens_per_s_per_gpu, 1, "tokens/s per GPU");
            fuzz_sane(s.samples_per_s, 1, "samples/s");
            fuzz_sane(s.tflops_per_gpu, 1, "TFLOP/s per GPU");
            fuzz_sane(s.mfu, 1, "MFU");
            fuzz_sane(s.mem_gib, 1, "memory");
            fuzz_sane(s.tokens_per_step, 1, "tokens per step");
        }
    }
    return 0;
}
