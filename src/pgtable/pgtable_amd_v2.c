/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/pgtable/pgtable_amd_v2.c - the engine instantiated for AMD IOMMU v2
 * (guest) page tables: x86-64 long-mode paging, 4 or 5 levels.  The layout
 * is VT-d first-level's, so the encoders are src/pgtable/fmt_vtd.h's with
 * the AMD switch (1G pages need no capability flag).
 */
#include "pgtable_internal.h"
#define IKPT_FMT IK_PT_AMD_V2
#define IKPT_SYM amd_v2
#define IKPT_NAME "amd-v2"
#define VTD_FL 1
#define VTD_AMD_V2 1
#include "fmt_vtd.h"
#include "pgtable_tmpl.h"
