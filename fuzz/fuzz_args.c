/* fuzz_args.c - command-line parsing (cli/args.c cli_parse) for every command: the first byte
   picks the command, the rest is the argument words, one per line.  Arguments that parse are
   resolved into a run (cli_resolve_run, presets and shape flags only: no files are read), and
   a run that resolves is evaluated: memory and step time must be finite and positive. */
#include "fuzz.h"
#include "../cli/cli.h"

#include <string.h>

enum { MAX_ARGS = 64 };

static void evaluate(const struct run *r)
{
    struct tp_memory mem;
    tp_memory_worst(&r->m, &r->c, &r->j, &r->l, &mem);
    fuzz_sane(mem.total_bytes, 0, "memory per GPU");
    static struct tp_calib cal;
    static int ready;
    if (!ready) {
        tp_calib_init(&cal);
        ready = 1;
    }
    struct tp_time t;
    if (tp_time_step(&r->m, &r->c, &r->j, &r->l, &cal, &t) != TP_OK)
        return;
    fuzz_sane(t.step_s, 0, "step time");
    fuzz_sane(t.tokens_per_s, 0, "tokens/s");
    fuzz_sane(t.mfu, 0, "MFU");
    if (t.mfu > 1) {
        fprintf(stderr, "fuzz: MFU %g above the peak\n", t.mfu);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const unsigned cmds[] = {CMD_PARAMS, CMD_MEMORY,   CMD_ESTIMATE,
                                    CMD_SEARCH, CMD_VALIDATE, CMD_CALIBRATE,
                                    CMD_LOGS,   CMD_MODELS,   CMD_GPUS};
    if (size < 1 || size > 4096)
        return 0;
    unsigned cmd = cmds[data[0] % (sizeof cmds / sizeof cmds[0])];
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    char *argv[MAX_ARGS];
    int argc = 0;
    for (char *p = text; argc < MAX_ARGS && p < text + size - 1;) {
        argv[argc++] = p;
        p += strcspn(p, "\n") ;
        *p++ = '\0';
    }
    static struct cli_args a;
    if (cli_parse(argc, argv, cmd, &a) == EXIT_OK && !a.help &&
        (cmd == CMD_MEMORY || cmd == CMD_ESTIMATE || cmd == CMD_PARAMS) &&
        (!a.model || !strpbrk(a.model, "/."))) {
        static struct run r;
        if (cli_resolve_run(&a, &r) == EXIT_OK && cmd != CMD_PARAMS)
            evaluate(&r);
    }
    free(text);
    return 0;
}
