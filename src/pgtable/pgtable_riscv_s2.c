/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/pgtable/pgtable_riscv_s2.c - the engine instantiated for the RISC-V
 * IOMMU G-stage (Sv39x4, Sv48x4, Sv57x4: 16 KiB root).  The encoders are in
 * src/pgtable/fmt_riscv.h; the public helpers in src/pgtable/pgtable_riscv.c.
 */
#include "pgtable_internal.h"
#define IKPT_FMT IK_PT_RISCV_S2
#define IKPT_SYM riscv_s2
#define IKPT_NAME "riscv-s2"
#define RISCV_G 1
#include "fmt_riscv.h"
#include "pgtable_tmpl.h"
