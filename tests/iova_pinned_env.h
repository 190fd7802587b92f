/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * tests/iova_pinned_env.h - the hosted environment plus emulated pinned
 * sections (IK_ENV_CPU_PIN/_UNPIN/_FENCE, see "per-CPU exclusion" in
 * <iommukit/env.h>), so that the IOVA range caches' PINNED mode runs in
 * user space.  Used by tests/test_iova_pinned only, through
 * -DIK_ENV_HEADER='"iova_pinned_env.h"' on every unit of that program (the
 * allocator's own sources included: the whole allocator must see the hooks).
 *
 * Emulation: T_NVCPU virtual CPUs, each with a mutex.  A thread runs on the
 * virtual CPU held in a thread-local variable and "migrates" by changing it,
 * only while unpinned (t_vcpu_set()).  IK_ENV_CPU_PIN() locks the mutex of
 * the thread's virtual CPU and returns that CPU, so pinned sections on one
 * virtual CPU never interleave; IK_ENV_CPU_UNPIN() unlocks it;
 * IK_ENV_CPU_FENCE(cpu) locks and unlocks cpu's mutex (every mutex for
 * (unsigned)-1), which waits for the pinned section running there, if any,
 * and makes its stores visible.  The functions live in tests/test_iova_pinned.c,
 * which counts the calls and records contract violations (nested pins, a
 * fence from a pinned section, an unpin without a pin).
 */
#ifndef IK_TEST_IOVA_PINNED_ENV_H
#define IK_TEST_IOVA_PINNED_ENV_H

#ifndef IOMMUKIT_ENV_H
#error "include <iommukit/env.h> with -DIK_ENV_HEADER='\"iova_pinned_env.h\"'"
#endif

/* Everything else is the hosted env's; its rseq hooks are left out (one
 * lockless kind at a time: the env contract allows both, but PINNED wins
 * and the rseq ones would only be dead weight here). */
#ifndef IK_HOSTED_NO_RSEQ
#define IK_HOSTED_NO_RSEQ 1
#endif
#include <iommukit/env-hosted.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Virtual CPUs: a fixed count, so that the test does not depend on the
 * machine (rc_ncpus is IK_ENV_NR_CPUS()). */
#define T_NVCPU 4u
/* The calling thread's virtual CPU (< T_NVCPU), the CPU hint. */
unsigned t_vcpu_id(void);
/* Move the calling thread to virtual CPU cpu (< T_NVCPU); not while pinned. */
void t_vcpu_set(unsigned cpu);
/* The hooks. */
unsigned t_vcpu_pin(void);
void t_vcpu_unpin(void);
void t_vcpu_fence(unsigned cpu);
#ifdef __cplusplus
}
#endif

#undef IK_ENV_NAME
#define IK_ENV_NAME "hosted-pinned"
#undef IK_ENV_NR_CPUS
#define IK_ENV_NR_CPUS() T_NVCPU
#undef IK_ENV_CPU_ID
#define IK_ENV_CPU_ID() t_vcpu_id()

#define IK_ENV_CPU_PIN() t_vcpu_pin()
#define IK_ENV_CPU_UNPIN() t_vcpu_unpin()
#define IK_ENV_CPU_FENCE(cpu) t_vcpu_fence(cpu)

#endif /* IK_TEST_IOVA_PINNED_ENV_H */
