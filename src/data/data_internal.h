/*
 * data_internal.h - the data floor (the built-in calibration and calibration files, the model
 * presets): its files share nothing beyond the floors below.  Not installed, not public.
 */
#ifndef TP_DATA_INTERNAL_H
#define TP_DATA_INTERNAL_H

#include "eval_internal.h"


#endif
