/*
 * nofit.c - the fit in a build without GSL (make NO_GSL=1): GSL is GPL-3, and a build that
 * links only permissively licensed libraries has no fitting backend.  Every fit (tp_calib_fit,
 * tp_calib_cross_validate, tp_calib_fit_validate, which all come here) fails with
 * TP_EUNSUPPORTED and says so; evaluating with a calibration file works as in any build.
 */
#include "fit_internal.h"

#include <string.h>

enum tp_status tp_fit_planned(const struct tp_run *const *runs,
                              const struct tp_time_plan *const *plans, const double *measured,
                              size_t n, const struct tp_calib *base, const struct tp_fit_opts *o,
                              struct tp_calib *out, struct tp_fit_result *res,
                              struct tp_error *err)
{
    (void)runs;
    (void)plans;
    (void)measured;
    (void)n;
    (void)o;
    *out = *base;
    memset(res, 0, sizeof *res);
    return tp_fail(err, TP_EUNSUPPORTED,
                   "calibrate: this trainplan was built without the fitting backend (make "
                   "NO_GSL=1: no GSL); build it with GSL to fit a calibration");
}
