/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/pgtable/pgtable_formats.h - the formats built into the library.  Not
 * API.
 *
 * One line per format: IK_PT_FORMAT(sym), where sym is the IKPT_SYM that the
 * format's src/pgtable/pgtable_NAME.c defines: the template instantiated
 * there defines `ik_pt_ops_<sym>` (see pgtable_internal.h, "How to add a
 * page-table format").  src/pgtable/pgtable.c includes this list twice: to
 * declare the symbols and to build the table it dispatches on once per
 * request.
 */
IK_PT_FORMAT(lpae_s1)
IK_PT_FORMAT(lpae_s2)
IK_PT_FORMAT(vtd_sl)
IK_PT_FORMAT(vtd_fl)
IK_PT_FORMAT(riscv_s1)
IK_PT_FORMAT(riscv_s2)
