/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/fmt/vtd_sl.c - the page-table engine instantiated for Intel VT-d
 * second-level tables (3, 4 or 5 levels). Encoders and decoders:
 * src/fmt/vtd.h; register helpers: src/fmt/vtd_regs.c.
 * See "How to add a page-table format" in src/pgtable/pgtable_internal.h.
 */
#include "../pgtable/pgtable_internal.h"
#define IKPT_FMT IK_PT_VTD_SL
#define IKPT_SYM vtd_sl
#define IKPT_NAME "vtd-sl"
#define VTD_FL 0
#include "vtd.h"
#include "../pgtable/pgtable_tmpl.h"

const struct ik_pt_ops ik_pt_ops_vtd_sl = IKPT_OPS;
