/*
 * main_web.c - the entry point of the page's WebAssembly build: the CLI's own commands, those
 * the page offers, called by the page with the CLI's arguments (web/app.js: callMain).
 *
 * The page shows what `trainplan VERB ... --format json` prints and the file `--svg` writes,
 * produced by the same cmd_*.c code, so the page's numbers are the CLI's by construction.
 * calibrate (GSL), export (libyaml), checkpoint, validate and logs (files on the user's disk)
 * are not in the page.
 */
#include "cli.h"

#include <string.h>

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } VERBS[] = {{"params", cmd_params}, {"memory", cmd_memory}, {"estimate", cmd_estimate},
                 {"search", cmd_search}, {"size", cmd_size},     {"models", cmd_models},
                 {"gpus", cmd_gpus}};
    if (argc < 2) {
        cli_error("no command given (the page runs params, memory, estimate, search, size, "
                  "models, gpus)");
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < sizeof VERBS / sizeof VERBS[0]; i++)
        if (strcmp(argv[1], VERBS[i].name) == 0)
            return VERBS[i].fn(argc - 2, argv + 2);
    cli_error("%s: not a command the page runs (params, memory, estimate, search, size, models, "
              "gpus)", argv[1]);
    return EXIT_USAGE;
}
