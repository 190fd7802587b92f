/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/pgtable/pgtable_vtd_sl.c - the engine instantiated for Intel VT-d
 * second-level tables (3, 4 or 5 levels).  The encoders are in
 * src/pgtable/fmt_vtd.h; the public helpers in src/pgtable/pgtable_vtd.c.
 */
#include "pgtable_internal.h"
#define IKPT_FMT IK_PT_VTD_SL
#define IKPT_SYM vtd_sl
#define IKPT_NAME "vtd-sl"
#define VTD_FL 0
#include "fmt_vtd.h"
#include "pgtable_tmpl.h"
