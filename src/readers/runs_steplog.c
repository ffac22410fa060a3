/*
 * runs_steplog.c - whether a runs-file row logged the parameters' norm and the gradients'
 * zeros every step (tp_job.log_params_norm, tp_job.log_num_zeros; priced in
 * src/eval/host_log.c), from what its notes quote of the run's arguments: Megatron-LM's flags
 * `--log-params-norm` and `--log-num-zeros-in-grad` (megatron/training/arguments.py), as the
 * Megatron-LM functional tests' model_config.yaml files set them.  Only rows of the stacks that
 * have the flags read them (Megatron-Core, Megatron-DeepSpeed); a row
 * silent on them keeps both off, Megatron's default.
 */
#include "runs_internal.h"

#include <string.h>

void tp_row_step_logging(const struct row *r, struct tp_job *j)
{
    const char *notes = tp_row_cell(r, "notes");
    if (j->framework != TP_FW_MEGATRON && j->framework != TP_FW_MEGATRON_DS)
        return;
    j->log_params_norm = strstr(notes, "--log-params-norm") != NULL;
    j->log_num_zeros = strstr(notes, "--log-num-zeros-in-grad") != NULL;
}
