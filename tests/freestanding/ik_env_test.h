/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A non-default env header for the freestanding check (tests/freestanding.sh):
 * it includes nothing at all and declares the few functions a firmware would
 * provide.  The check compiles every core source against it with -ffreestanding
 * -nostdlib and fails if any libc header is pulled in or any symbol other than
 * these (and memset/memcpy) is left undefined.
 */
#ifndef IK_ENV_TEST_H
#define IK_ENV_TEST_H

#define IK_ENV_NAME "freestanding-test"

void *fw_alloc(__SIZE_TYPE__ size, __SIZE_TYPE__ align);
void fw_free(void *ptr, __SIZE_TYPE__ size);
__UINT64_TYPE__ fw_time_ns(void);

#define IK_ENV_ALLOC(size, align) fw_alloc((size), (align))
#define IK_ENV_FREE(ptr, size) fw_free((ptr), (size))
#define IK_ENV_CPU_ID() 0u
#define IK_ENV_NR_CPUS() 1u
#define IK_ENV_TIME_NS() fw_time_ns()
#define IK_ENV_YIELD() do { } while (0)
#define IK_ENV_ASSERT(cond) do { if (!(cond)) __builtin_trap(); } while (0)

/*
 * Function-like macros that kernels define before any iommukit header is
 * seen (x86 and arm64: nop(), barrier(), mb(), ...; Linux: min(), max(),
 * swap(), ALIGN(), and lockdep's spin_acquire() and spin_release()).  A
 * unit that calls through a member or names a function like one of them
 * would be rewritten by the kernel's macro; here the rewrite names an
 * undeclared identifier, so such a unit fails this check.
 */
#define nop() ik_clash_with_kernel_macro_nop
#define barrier() ik_clash_with_kernel_macro_barrier
#define mb() ik_clash_with_kernel_macro_mb
#define rmb() ik_clash_with_kernel_macro_rmb
#define wmb() ik_clash_with_kernel_macro_wmb
#define min(a, b) ik_clash_with_kernel_macro_min
#define max(a, b) ik_clash_with_kernel_macro_max
#define swap(a, b) ik_clash_with_kernel_macro_swap
#define ALIGN(x, a) ik_clash_with_kernel_macro_ALIGN
#define spin_acquire(l, s, t, i) ik_clash_with_kernel_macro_spin_acquire
#define spin_release(l, i) ik_clash_with_kernel_macro_spin_release

/*
 * Object-like and function-like register-field macros that arm64's
 * <asm/pgtable-hwdef.h> defines (reached from <linux/slab.h>): a unit that
 * defines one of these names itself is a "redefined" error under -Werror in
 * an arm64 kernel build, as lpae_regs.c and smmuv3_desc.c were.  Units use
 * unit-prefixed names for such fields (LPAE_TCR_*, DESC_TCR_*).
 */
#define TCR_T0SZ(x) ik_clash_with_arm64_TCR_T0SZ
#define TCR_T0SZ_MASK ik_clash_with_arm64_TCR_T0SZ_MASK
#define TCR_IRGN0_SHIFT ik_clash_with_arm64_TCR_IRGN0_SHIFT
#define TCR_ORGN0_SHIFT ik_clash_with_arm64_TCR_ORGN0_SHIFT
#define TCR_SH0_SHIFT ik_clash_with_arm64_TCR_SH0_SHIFT
#define TCR_TG0_SHIFT ik_clash_with_arm64_TCR_TG0_SHIFT
#define TCR_IPS_SHIFT ik_clash_with_arm64_TCR_IPS_SHIFT
#define TCR_EPD1_MASK ik_clash_with_arm64_TCR_EPD1_MASK
#define TCR_HA ik_clash_with_arm64_TCR_HA
#define TCR_HD ik_clash_with_arm64_TCR_HD
#define TCR_DS ik_clash_with_arm64_TCR_DS
#define TCR_TG0_4K ik_clash_with_arm64_TCR_TG0_4K
#define VTCR_EL2_T0SZ(x) ik_clash_with_arm64_VTCR_EL2_T0SZ

#endif
