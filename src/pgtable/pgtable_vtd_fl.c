/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/pgtable/pgtable_vtd_fl.c - the engine instantiated for Intel VT-d
 * first-level tables (x86-64 paging, 4 or 5 levels).  The encoders are in
 * src/pgtable/fmt_vtd.h; the public helpers in src/pgtable/pgtable_vtd.c.
 */
#include "pgtable_internal.h"
#define IKPT_FMT IK_PT_VTD_FL
#define IKPT_SYM vtd_fl
#define IKPT_NAME "vtd-fl"
#define VTD_FL 1
#include "fmt_vtd.h"
#include "pgtable_tmpl.h"
