/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/pgtable/pgtable_amd_v1.c - the engine instantiated for AMD IOMMU v1
 * host page tables (Mode 1..6).  The encoders are in src/pgtable/fmt_amd.h.
 */
#include "pgtable_internal.h"
#define IKPT_FMT IK_PT_AMD_V1
#define IKPT_SYM amd_v1
#define IKPT_NAME "amd-v1"
#include "fmt_amd.h"
#include "pgtable_tmpl.h"
