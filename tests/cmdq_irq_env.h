/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * tests/cmdq_irq_env.h - the hosted environment plus emulated local
 * interrupts (IK_ENV_IRQ_SAVE/_RESTORE, see <iommukit/env.h>), so that the
 * command queue's interrupt windows can be checked in user space.  Used by
 * tests/test_cmdq_irq only, through -DIK_ENV_HEADER='"cmdq_irq_env.h"' on
 * the queue's own source (src/cmdq/cmdq.c), compiled into that program: the
 * library's copy, built with the hosted env, has no-op hooks.
 *
 * Emulation (tests/test_cmdq_irq.c, per thread: each thread is a CPU):
 *   t_irq_save()      returns whether interrupts were on, turns them off;
 *   t_irq_restore(f)  puts that back; when it turns them on, a pending
 *                     "interrupt" (t_irq_raise()) runs there, as a CPU takes
 *                     a pending interrupt when it re-enables them;
 *   the waits' env calls (IK_ENV_YIELD, IK_ENV_TIME_NS, IK_ENV_CPU_RELAX)
 *   and IK_ENV_MEMCPY (which fill() uses to copy each command into the
 *   ring) record whether interrupts were off, and are points where a
 *   pending interrupt runs if they were on.
 */
#ifndef IK_TEST_CMDQ_IRQ_ENV_H
#define IK_TEST_CMDQ_IRQ_ENV_H

#ifndef IOMMUKIT_ENV_H
#error "include <iommukit/env.h> with -DIK_ENV_HEADER='\"cmdq_irq_env.h\"'"
#endif

#include <iommukit/env-hosted.h>

#ifdef __cplusplus
extern "C" {
#endif
unsigned long t_irq_save(void);
void t_irq_restore(unsigned long was_on);
void t_env_yield(void);
__UINT64_TYPE__ t_env_time_ns(void);
void t_env_relax(void);
void *t_env_memcpy(void *d, const void *s, __SIZE_TYPE__ n);
#ifdef __cplusplus
}
#endif

#undef IK_ENV_NAME
#define IK_ENV_NAME "hosted-irq"
#undef IK_ENV_YIELD
#define IK_ENV_YIELD() t_env_yield()
#undef IK_ENV_TIME_NS
#define IK_ENV_TIME_NS() t_env_time_ns()
#define IK_ENV_CPU_RELAX() t_env_relax()
#define IK_ENV_MEMCPY(d, s, n) t_env_memcpy((d), (s), (n))

#define IK_ENV_IRQ_FLAGS unsigned long
#define IK_ENV_IRQ_SAVE(flags) ((flags) = t_irq_save())
#define IK_ENV_IRQ_RESTORE(flags) t_irq_restore(flags)

#endif /* IK_TEST_CMDQ_IRQ_ENV_H */
