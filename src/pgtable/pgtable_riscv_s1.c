/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/pgtable/pgtable_riscv_s1.c - the engine instantiated for the RISC-V
 * IOMMU first stage (Sv39, Sv48, Sv57).  The encoders are in
 * src/pgtable/fmt_riscv.h; the public helpers in src/pgtable/pgtable_riscv.c.
 */
#include "pgtable_internal.h"
#define IKPT_FMT IK_PT_RISCV_S1
#define IKPT_SYM riscv_s1
#define IKPT_NAME "riscv-s1"
#define RISCV_G 0
#include "fmt_riscv.h"
#include "pgtable_tmpl.h"
