/*
 * cmd_models.c - `trainplan models`: the built-in presets, their counts and sources.
 */
#include "cli.h"

#include <jansson.h>
#include <stdlib.h>

static void help(void)
{
    printf("usage: trainplan models [--format table|json|csv]\n\n"
           "Lists the built-in model presets with total and active parameters and the source\n"
           "of each shape.  Any key or alias works as MODEL in the other commands.\n\noptions:\n");
    cli_print_options(stdout, CMD_MODELS);
}

int cmd_models(int argc, char **argv)
{
    struct cli_args a;
    int rc = cli_begin_listing(argc, argv, CMD_MODELS, &a, help, "models");
    if (rc >= 0)
        return rc;
    json_t *list = json_array();
    if (a.format == FMT_TABLE)
        printf("%-16s %9s %9s  %-38s %s\n", "key", "total", "active", "model", "source");
    for (size_t i = 0; i < tp_preset_count(); i++) {
        const struct tp_preset_info *info = tp_preset_get(i);
        static struct tp_model m;
        struct tp_error err;
        struct tp_params p;
        if (tp_model_from_preset(info->key, &m, &err) != TP_OK) {
            cli_error("preset %s: %s", info->key, err.msg); /* a broken table row is a bug */
            json_decref(list);
            return EXIT_USAGE;
        }
        tp_count_params(&m, &p);
        if (a.format == FMT_TABLE) {
            char t[16], ac[16];
            fmt_si(t, sizeof t, (double)p.total);
            fmt_si(ac, sizeof ac, (double)p.active);
            printf("%-16s %9s %9s  %-38s %s\n", info->key, t, ac, info->label, info->source);
        } else { /* JSON, and the CSV rows (format.c) */
            json_t *o = json_object();
            json_object_set_new(o, "key", json_string(info->key));
            json_object_set_new(o, "aliases", json_string(info->aliases));
            json_object_set_new(o, "label", json_string(info->label));
            json_object_set_new(o, "family", json_string(m.family));
            json_object_set_new(o, "params_total", json_integer((json_int_t)p.total));
            json_object_set_new(o, "params_active", json_integer((json_int_t)p.active));
            json_object_set_new(o, "source", json_string(info->source));
            json_array_append_new(list, o);
        }
    }
    if (a.format == FMT_CSV)
        return (rc = out_csv_rows(list)) == EXIT_OK ? cli_finish(EXIT_OK) : rc;
    if (a.format != FMT_JSON) {
        json_decref(list);
        return cli_finish(EXIT_OK);
    }
    rc = cli_print_json(json_pack("{s:i, s:o}", "schema_version", TP_SCHEMA_VERSION, "models", list),
                        0);
    return rc == EXIT_OK ? cli_finish(EXIT_OK) : rc;
}
