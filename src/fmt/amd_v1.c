/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/fmt/amd_v1.c - the page-table engine instantiated for AMD IOMMU v1
 * host page tables (Mode 1..6). Encoders and decoders: src/fmt/amd.h.
 * See "How to add a page-table format" in src/pgtable/pgtable_internal.h.
 */
#include "../pgtable/pgtable_internal.h"
#define IKPT_FMT IK_PT_AMD_V1
#define IKPT_SYM amd_v1
#define IKPT_NAME "amd-v1"
#include "amd.h"
#include "../pgtable/pgtable_tmpl.h"

const struct ik_pt_ops ik_pt_ops_amd_v1 = IKPT_OPS;
