/*
 * abi.c - what a binding checks before it trusts the library: the version it was built as and
 * the sizes of the public structs (a ctypes mirror, or a C caller built against another header).
 */
#include "base_internal.h"

#include <string.h>

const char *tp_version(void)
{
    return TP_VERSION;
}

#define SIZE(name) {#name, sizeof(struct name)}
static const struct {
    const char *name;
    size_t size;
} SIZES[] = {SIZE(tp_error),    SIZE(tp_model),     SIZE(tp_shape),      SIZE(tp_cluster),
             SIZE(tp_job),      SIZE(tp_layout),    SIZE(tp_calib),      SIZE(tp_memory),
             SIZE(tp_time),     SIZE(tp_range),     SIZE(tp_ckpt_plan),  SIZE(tp_wallclock),
             SIZE(tp_eval_opts), SIZE(tp_evaluation), SIZE(tp_run),      SIZE(tp_run_eval),
             SIZE(tp_params),   SIZE(tp_flops),     SIZE(tp_search_opts), SIZE(tp_search_hit),
             SIZE(tp_stack_hit), SIZE(tp_setting), SIZE(tp_fix),    SIZE(tp_runs),
             SIZE(tp_validation), SIZE(tp_calibration), SIZE(tp_nearest_in)};
#undef SIZE

size_t tp_struct_size(const char *name)
{
    for (size_t i = 0; name && i < sizeof SIZES / sizeof SIZES[0]; i++)
        if (strcmp(SIZES[i].name, name) == 0)
            return SIZES[i].size;
    return 0;
}

enum tp_status tp_abi_check(const char *version, size_t model, size_t cluster, size_t job,
                            size_t layout, size_t calib, size_t evaluation,
                            struct tp_error *err)
{
    if (!version || strcmp(version, TP_VERSION) != 0)
        return tp_fail(err, TP_EUNSUPPORTED, "header version %s, library version %s",
                       version ? version : "(none)", TP_VERSION);
    const struct {
        const char *name;
        size_t given;
    } got[] = {{"tp_model", model}, {"tp_cluster", cluster}, {"tp_job", job},
               {"tp_layout", layout}, {"tp_calib", calib}, {"tp_evaluation", evaluation}};
    for (size_t i = 0; i < sizeof got / sizeof got[0]; i++)
        if (got[i].given != tp_struct_size(got[i].name))
            return tp_fail(err, TP_EUNSUPPORTED, "struct %s is %zu bytes in the caller's header, "
                           "%zu in the library", got[i].name, got[i].given,
                           tp_struct_size(got[i].name));
    return TP_OK;
}
