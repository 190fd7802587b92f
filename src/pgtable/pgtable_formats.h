/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/pgtable/pgtable_formats.h - the formats built into the library.  Not
 * API.
 *
 * One line per format: IK_PT_FORMAT(ops), where ops is the struct ik_pt_ops
 * that the format's instantiation, src/fmt/<family>_<variant>.c, defines
 * (see pgtable_internal.h, "How to add a page-table format").
 * src/pgtable/pgtable.c includes this list twice: to declare the objects and
 * to build the table it dispatches on once per request.
 */
IK_PT_FORMAT(ik_pt_ops_lpae_s1)
IK_PT_FORMAT(ik_pt_ops_lpae_s2)
IK_PT_FORMAT(ik_pt_ops_vtd_sl)
IK_PT_FORMAT(ik_pt_ops_vtd_fl)
IK_PT_FORMAT(ik_pt_ops_riscv_s1)
IK_PT_FORMAT(ik_pt_ops_riscv_s2)
IK_PT_FORMAT(ik_pt_ops_amd_v1)
IK_PT_FORMAT(ik_pt_ops_amd_v2)
