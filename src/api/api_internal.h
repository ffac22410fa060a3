/*
 * api_internal.h - the binding API floor (the option table, requests, args_run and the verbs
 * call*.c runs for Python and the page): its files share nothing beyond the floors below.  Not
 * installed, not public.
 */
#ifndef TP_API_INTERNAL_H
#define TP_API_INTERNAL_H

#include "reports_internal.h"

#endif
