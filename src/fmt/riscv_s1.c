/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/fmt/riscv_s1.c - the page-table engine instantiated for the RISC-V
 * IOMMU first stage (Sv39, Sv48, Sv57). Encoders and decoders:
 * src/fmt/riscv.h; register helpers: src/fmt/riscv_regs.c.
 * See "How to add a page-table format" in src/pgtable/pgtable_internal.h.
 */
#include "../pgtable/pgtable_internal.h"
#define IKPT_FMT IK_PT_RISCV_S1
#define IKPT_SYM riscv_s1
#define IKPT_NAME "riscv-s1"
#define RISCV_G 0
#include "riscv.h"
#include "../pgtable/pgtable_tmpl.h"

const struct ik_pt_ops ik_pt_ops_riscv_s1 = IKPT_OPS;
