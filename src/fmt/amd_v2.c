/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/fmt/amd_v2.c - the page-table engine instantiated for AMD IOMMU v2
 * (guest) page tables: x86-64 long-mode paging, 4 or 5 levels. The layout is
 * VT-d first-level's, so the encoders are src/fmt/vtd.h's with the AMD
 * switch (1G pages need no capability flag).
 * See "How to add a page-table format" in src/pgtable/pgtable_internal.h.
 */
#include "../pgtable/pgtable_internal.h"
#define IKPT_FMT IK_PT_AMD_V2
#define IKPT_SYM amd_v2
#define IKPT_NAME "amd-v2"
#define VTD_FL 1
#define VTD_AMD_V2 1
#include "vtd.h"
#include "../pgtable/pgtable_tmpl.h"

const struct ik_pt_ops ik_pt_ops_amd_v2 = IKPT_OPS;
