/*
 * main_web.c - the entry point of the page's WebAssembly build: the CLI's own commands, those
 * the page offers, called by the page with the CLI's arguments (web/app.js: callMain).
 *
 * The page shows what `trainplan VERB ... --format json` prints and the file `--svg` writes,
 * produced by the same cmd_*.c code, so the page's numbers are the CLI's by construction.
 * Its form comes from the library's one option table: `verbs` lists the commands the page
 * runs, `options VERB` prints the verb's options (tp_options_json), so the page sends a verb
 * only the fields it takes.  calibrate (GSL), export (libyaml), checkpoint, validate and logs
 * (files on the user's disk) are not in the page.
 */
#include "cli.h"

#include <string.h>

static const struct {
    const char *name;
    int (*fn)(int, char **);
    bool model; /* takes MODEL (a preset, or the pasted config.json) */
} VERBS[] = {{"params", cmd_params, true},     {"memory", cmd_memory, true},
             {"estimate", cmd_estimate, true}, {"search", cmd_search, true},
             {"size", cmd_size, false},        {"models", cmd_models, false},
             {"gpus", cmd_gpus, false}};
#define N_VERBS (sizeof VERBS / sizeof VERBS[0])

/* `verbs`: the page's commands as JSON, {"verbs": [{"name", "model"}, ...]}. */
static int list_verbs(void)
{
    json_t *list = json_array();
    for (size_t i = 0; i < N_VERBS; i++)
        json_array_append_new(list, json_pack("{s:s, s:b}", "name", VERBS[i].name, "model",
                                              (int)VERBS[i].model));
    return cli_print_json(json_pack("{s:o}", "verbs", list), 0);
}

/* `options VERB`: the verb's options from the library's table (the CLI's, with --format). */
static int list_options(const char *verb)
{
    unsigned bit = tp_verb_find(verb);
    if (!bit) {
        cli_error("options %s: not a command", verb);
        return EXIT_USAGE;
    }
    char *s = tp_options_json(bit, true);
    if (!s) {
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    puts(s);
    tp_free(s);
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_error("no command given (the page runs params, memory, estimate, search, size, "
                  "models, gpus)");
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "verbs") == 0)
        return list_verbs();
    if (strcmp(argv[1], "options") == 0 && argc == 3)
        return list_options(argv[2]);
    for (size_t i = 0; i < N_VERBS; i++)
        if (strcmp(argv[1], VERBS[i].name) == 0)
            return VERBS[i].fn(argc - 2, argv + 2);
    cli_error("%s: not a command the page runs (params, memory, estimate, search, size, models, "
              "gpus)", argv[1]);
    return EXIT_USAGE;
}
