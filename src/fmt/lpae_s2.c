/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/fmt/lpae_s2.c - the page-table engine instantiated for ARM LPAE stage
 * 2 (VMSAv8-64 stage-2 tables, concatenated roots). Encoders and decoders:
 * src/fmt/lpae.h; register helpers: src/fmt/src/fmt/lpae_regs.c.
 * See "How to add a page-table format" in src/pgtable/pgtable_internal.h.
 */
#include "../pgtable/pgtable_internal.h"
#define IKPT_FMT IK_PT_LPAE_S2
#define IKPT_SYM lpae_s2
#define IKPT_NAME "lpae-s2"
#define LPAE_STAGE 2
#include "lpae.h"
#include "../pgtable/pgtable_tmpl.h"

const struct ik_pt_ops ik_pt_ops_lpae_s2 = IKPT_OPS;
