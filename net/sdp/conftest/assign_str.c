// SPDX-License-Identifier: GPL-2.0
/* HAVE_ASSIGN_STR_ONE_ARG: a trace event's __assign_str() takes the
 * field only, its source being __string()'s (6.10)
 */
#define CREATE_TRACE_POINTS
#include "assign_str.h"
