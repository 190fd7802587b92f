/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/fmt/riscv_s2.c - the page-table engine instantiated for the RISC-V
 * IOMMU G-stage (Sv39x4, Sv48x4, Sv57x4: 16 KiB root). Encoders and
 * decoders: src/fmt/riscv.h; register helpers: src/fmt/riscv_regs.c.
 * See "How to add a page-table format" in src/pgtable/pgtable_internal.h.
 */
#include "../pgtable/pgtable_internal.h"
#define IKPT_FMT IK_PT_RISCV_S2
#define IKPT_SYM riscv_s2
#define IKPT_NAME "riscv-s2"
#define RISCV_G 1
#include "riscv.h"
#include "../pgtable/pgtable_tmpl.h"

const struct ik_pt_ops ik_pt_ops_riscv_s2 = IKPT_OPS;
