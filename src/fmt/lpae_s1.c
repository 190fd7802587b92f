/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/fmt/lpae_s1.c - the page-table engine instantiated for ARM LPAE stage
 * 1 (VMSAv8-64 translation tables: 4K, 16K and 64K granules, LPA2). Encoders
 * and decoders: src/fmt/lpae.h; register helpers: src/fmt/src/fmt/lpae_regs.c.
 * See "How to add a page-table format" in src/pgtable/pgtable_internal.h.
 */
#include "../pgtable/pgtable_internal.h"
#define IKPT_FMT IK_PT_LPAE_S1
#define IKPT_SYM lpae_s1
#define IKPT_NAME "lpae-s1"
#define LPAE_STAGE 1
#include "lpae.h"
#include "../pgtable/pgtable_tmpl.h"

const struct ik_pt_ops ik_pt_ops_lpae_s1 = IKPT_OPS;
