/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/pgtable_formats.h - the formats built into the library.  Not API.
 *
 * One line per format: IK_PT_FORMAT(enum ik_pt_fmt value, ops symbol), where
 * the ops symbol is the IKPT_OPS that the format's src/pgtable_NAME.c
 * instantiates from src/pgtable_tmpl.h (see src/pgtable_internal.h, "How to
 * add a page-table format").  src/pgtable.c includes this list twice: to
 * declare the symbols and to build the enum -> ops table it dispatches on
 * once per request.
 */
IK_PT_FORMAT(IK_PT_LPAE_S1, ik_pt_ops_lpae_s1)
IK_PT_FORMAT(IK_PT_LPAE_S2, ik_pt_ops_lpae_s2)
IK_PT_FORMAT(IK_PT_VTD_SL, ik_pt_ops_vtd_sl)
IK_PT_FORMAT(IK_PT_VTD_FL, ik_pt_ops_vtd_fl)
