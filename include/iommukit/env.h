/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/env.h - the only door between iommukit and its host.
 *
 * Every iommukit source and header reaches the host (types, memory, CPU
 * identity, time, errors) through this file and nothing else.  The default
 * is the hosted environment, <iommukit/env-hosted.h>, which uses libc and
 * pthreads.  A kernel or firmware build supplies its own header instead, in
 * one of two ways:
 *
 *   1. compile with -DIK_ENV_HEADER='"my_ik_env.h"' (the header is included
 *      here, in place of env-hosted.h); or
 *   2. include its own header first and have it define IK_ENV_PROVIDED
 *      (as Linux and U-Boot do with libfdt_env.h).
 *
 * Contract - what an environment header must define (macros, so that a
 * missing one is a clear #error below, not a failure deep inside a unit):
 *
 *   IK_ENV_NAME              string naming the environment, for diagnostics.
 *   IK_ENV_ALLOC(size, align) -> void *: `size` bytes aligned to `align` (a
 *                            power of two, at most 4096), or NULL.  May sleep
 *                            only where the caller of the iommukit function
 *                            that allocates may sleep.
 *   IK_ENV_FREE(ptr, size)   frees memory from IK_ENV_ALLOC; `size` is the size
 *                            that was asked for.  ptr is never NULL.
 *   IK_ENV_CPU_ID()          -> unsigned: the current CPU, a hint only (the
 *                            caller may migrate at once); < IK_ENV_NR_CPUS().
 *   IK_ENV_NR_CPUS()         -> unsigned: number of possible CPUs, >= 1,
 *                            constant for the life of the program.
 *   IK_ENV_TIME_NS()         -> ik_u64: a monotonic clock in nanoseconds, used
 *                            only to bound waits (timeouts).  A firmware
 *                            without a clock may count polls instead.
 *   IK_ENV_YIELD()           called by a thread that waits on another thread
 *                            once its spin is over (for the command queue,
 *                            IK_ENV_WAIT_SPIN_NS below); hosted:
 *                            sched_yield(); a kernel: cond_resched(), or
 *                            cpu_relax() where the waiter may not sleep.
 *
 * Optional (a generic default is used when the env leaves them undefined):
 *
 *   IK_ENV_U8 .. IK_ENV_U64, IK_ENV_S32, IK_ENV_S64, IK_ENV_UPTR, IK_ENV_SIZE
 *                            the integer types; default: the compiler's
 *                            __UINT8_TYPE__ ... __SIZE_TYPE__.
 *   IK_ENV_HAVE_BOOL         define if the env already provides bool, true
 *                            and false (C++ always does).
 *   IK_ENV_ASSERT(cond)      an internal consistency check; default: trap
 *                            when IK_DEBUG is defined, nothing otherwise.
 *   IK_ENV_MEMSET(p, c, n), IK_ENV_MEMCPY(d, s, n)
 *                            default: __builtin_memset / __builtin_memcpy,
 *                            which a freestanding image must then link.
 *   IK_ENV_CPU_RELAX()       a spin-wait hint; default in <iommukit/atomic.h>.
 *   IK_ENV_WAIT_SPIN_NS      an integer constant: how long (ns) a command-
 *                            queue waiter spins with IK_ENV_CPU_RELAX() before
 *                            it starts calling IK_ENV_YIELD() (the bound of
 *                            an adaptive budget; <iommukit/cmdq.h>, "Waiting",
 *                            and ik_cmdq_set_spin() per queue); default 50000.
 *   IK_ENV_IRQ_FLAGS         the type that holds a saved interrupt state
 *                            (typedef ik_irqflags); default unsigned long.
 *   IK_ENV_IRQ_SAVE(flags), IK_ENV_IRQ_RESTORE(flags)
 *                            both or neither.  SAVE stores the calling CPU's
 *                            interrupt state in the ik_irqflags lvalue
 *                            `flags` and disables local interrupts (and so
 *                            preemption); RESTORE puts back the state SAVE
 *                            stored.  Pairs nest (inner restores first).
 *                            Linux: local_irq_save() / local_irq_restore();
 *                            default: no-ops, for hosts where no interrupt
 *                            handler calls iommukit (hosted user space, a
 *                            polled firmware).  The command queue takes them
 *                            around each insertion (reservation through
 *                            publication: a few stores, no wait) and around
 *                            each hold of its own locks, so that a handler
 *                            that issues on the same CPU never finds that
 *                            CPU's entries reserved but unpublished or a
 *                            queue lock held (<iommukit/cmdq.h>,
 *                            "Interrupts").  Between the two iommukit never
 *                            sleeps, yields or waits for a consumer; it calls
 *                            only the queue's register hooks (and, on a
 *                            consumer error, on_error) and may spin on a
 *                            queue lock that another CPU holds in the same
 *                            kind of section.
 *   atomics                  each operation of <iommukit/atomic.h> may be
 *                            overridden by defining its macro first.
 *   locks                    see <iommukit/lock.h>.
 *   per-CPU exclusion        lets the IOVA range caches (<iommukit/iova.h>)
 *                            run their hit path with no atomic
 *                            read-modify-write.  Two kinds, each all of its
 *                            macros or none; without either, a per-CPU lock
 *                            guards the caches (one atomic exchange per hit).
 *     Restartable sequences (Linux rseq, user space; the hosted env defines
 *     them where the C library registers rseq):
 *       IK_ENV_RSEQ_AREA()   -> void *: the calling thread's registered
 *                            struct rseq (the kernel ABI: __u32 cpu_id_start,
 *                            __u32 cpu_id, __u64 rseq_cs, ...), or NULL when
 *                            this thread has none.  Registered with the
 *                            signature IK_ENV_RSEQ_SIG (glibc's RSEQ_SIG).
 *       IK_ENV_RSEQ_SIG      the abort-handler signature, an integer constant.
 *       IK_ENV_RSEQ_REGISTER() -> int: 0 when IK_ENV_RSEQ_FENCE() can be used
 *                            by this process from now on (for Linux,
 *                            membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_
 *                            EXPEDITED_RSEQ)); a negative errno otherwise.
 *                            Called once per domain, at init.
 *       IK_ENV_RSEQ_FENCE(cpu) -> int: when it returns 0, every restartable
 *                            sequence of this process that was in progress on
 *                            `cpu` has been aborted or has committed, and its
 *                            stores are visible to the caller (membarrier(
 *                            MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ,
 *                            MEMBARRIER_CMD_FLAG_CPU, cpu)).  (unsigned)-1:
 *                            every CPU.  Only slow paths call it.
 *       IK_ENV_RSEQ_TP_OFFSET() -> long, optional: where every thread's
 *                            area lies, as an offset from that thread's
 *                            thread pointer (x86-64: the %fs base), when it
 *                            is one offset for the whole process and
 *                            constant while it runs (glibc:
 *                            __rseq_offset).  Read once per domain at init,
 *                            where IK_ENV_RSEQ_AREA() is not NULL; with it
 *                            the exported hit path of the range caches
 *                            finds the area with no call and no GOT read.
 *     Pinned sections (kernel ports):
 *       IK_ENV_CPU_PIN()     -> unsigned: the current CPU (< IK_ENV_NR_CPUS()),
 *                            and from now until IK_ENV_CPU_UNPIN() the caller
 *                            neither migrates nor is interleaved with any
 *                            other pinned section on that CPU (Linux:
 *                            preempt_disable() or local_irq_save()).
 *                            Pinned sections do not nest, and the caches
 *                            are then not for interrupt context (a miss
 *                            takes a slot lock; see docs/guide-kernel.md).
 *       IK_ENV_CPU_UNPIN()   ends the section.
 *       IK_ENV_CPU_FENCE(cpu) waits until no pinned section that began before
 *                            the call is still running on `cpu`, with its
 *                            stores visible to the caller; (unsigned)-1:
 *                            every CPU.  It must match the pin: after
 *                            local_irq_save(), smp_call_function_single(
 *                            cpu, nop, NULL, 1) (on_each_cpu()); after
 *                            preempt_disable() alone an IPI runs inside
 *                            the section, so wait for the CPU to schedule
 *                            (stop_one_cpu(), synchronize_rcu()).
 *                            Only slow paths call it; it may not be called
 *                            from a pinned section.
 *   errno values             EINVAL, ENOMEM, ... as Linux numbers them, where
 *                            the env does not define them.
 *
 * Synchronization: the env's functions must be safe to call from any thread.
 *
 * Conventions: pointer arguments.  One rule covers NULL pointers in the whole
 * public API; every other public header refers to this paragraph.
 *   - A function that returns an error code checks each pointer argument it
 *     dereferences (the object handle, configs, inputs, outputs).  A NULL one
 *     makes it return -EINVAL having changed nothing: the object, the
 *     caller's memory and the hooks are left alone (only an output that is
 *     documented to receive a value on every failure still receives it).
 *   - A function without an error return (void, or a count, a size, a bool
 *     or a pointer as its result) requires non-NULL pointer arguments; NULL
 *     is a caller bug.  Builds with IK_DEBUG catch it with IK_ASSERT();
 *     other builds do not look.
 *   - Destroy and teardown functions accept NULL and do nothing.
 *   - An argument documented as optional ("may be NULL", "NULL: ...") is
 *     exempt: NULL then means what its documentation says.  An opaque
 *     context pointer that a function only hands back to the caller's
 *     callbacks is never dereferenced by iommukit and is not checked.
 *   - The primitives of <iommukit/atomic.h>, <iommukit/lock.h>,
 *     <iommukit/rbtree.h> and <iommukit/compiler.h> are exempt: as with the
 *     C library, valid pointers are a precondition, and nothing is checked.
 *
 * Conventions: names.  Every name iommukit declares starts with ik_ or IK_
 * (a unit's static helpers aside); none starts with an underscore, which C
 * reserves.  A function, macro or member that a public header must show but
 * that is not API ends with an underscore (ik_rb_set_color_(), the node's
 * parent_color_): public inline code uses it, callers must not.  Types that
 * are not API say so where they are declared.  The shared library exports
 * exactly the IK_API names of the public headers (tests/exports.sh).
 */
#ifndef IOMMUKIT_ENV_H
#define IOMMUKIT_ENV_H

#include <iommukit/compiler.h>

#if defined(IK_ENV_HEADER)
#include IK_ENV_HEADER
#elif !defined(IK_ENV_PROVIDED)
#include <iommukit/env-hosted.h>
#endif

/* ---- the contract, checked at compile time ---- */
#ifndef IK_ENV_NAME
#error "iommukit env: IK_ENV_NAME is not defined (is the env header included?)"
#endif
#ifndef IK_ENV_ALLOC
#error "iommukit env: IK_ENV_ALLOC(size, align) is not defined"
#endif
#ifndef IK_ENV_FREE
#error "iommukit env: IK_ENV_FREE(ptr, size) is not defined"
#endif
#ifndef IK_ENV_CPU_ID
#error "iommukit env: IK_ENV_CPU_ID() is not defined"
#endif
#ifndef IK_ENV_NR_CPUS
#error "iommukit env: IK_ENV_NR_CPUS() is not defined"
#endif
#ifndef IK_ENV_TIME_NS
#error "iommukit env: IK_ENV_TIME_NS() is not defined"
#endif
#ifndef IK_ENV_YIELD
#error "iommukit env: IK_ENV_YIELD() is not defined"
#endif

/* Per-CPU exclusion: each kind is all of its macros or none. */
#if defined(IK_ENV_RSEQ_AREA) || defined(IK_ENV_RSEQ_SIG) || defined(IK_ENV_RSEQ_REGISTER) || \
	defined(IK_ENV_RSEQ_FENCE)
#if !defined(IK_ENV_RSEQ_AREA) || !defined(IK_ENV_RSEQ_SIG) || !defined(IK_ENV_RSEQ_REGISTER) || \
	!defined(IK_ENV_RSEQ_FENCE)
#error "iommukit env (rseq): define all of IK_ENV_RSEQ_AREA, _SIG, _REGISTER and _FENCE, or none"
#endif
#endif
#if defined(IK_ENV_RSEQ_TP_OFFSET) && !defined(IK_ENV_RSEQ_AREA)
#error "iommukit env (rseq): IK_ENV_RSEQ_TP_OFFSET without IK_ENV_RSEQ_AREA"
#endif
#if defined(IK_ENV_IRQ_SAVE) != defined(IK_ENV_IRQ_RESTORE)
#error "iommukit env (interrupts): define both IK_ENV_IRQ_SAVE and IK_ENV_IRQ_RESTORE, or neither"
#endif
#if defined(IK_ENV_CPU_PIN) || defined(IK_ENV_CPU_UNPIN) || defined(IK_ENV_CPU_FENCE)
#if !defined(IK_ENV_CPU_PIN) || !defined(IK_ENV_CPU_UNPIN) || !defined(IK_ENV_CPU_FENCE)
#error "iommukit env (pinned sections): define all of IK_ENV_CPU_PIN, _UNPIN and _FENCE, or none"
#endif
#endif

/* ---- types ---- */
/* The env defines all the integer types or none of them. */
#ifdef IK_ENV_U8
#ifndef IK_ENV_U16
#error "iommukit env (types): IK_ENV_U8 is defined but IK_ENV_U16 is not (define all or none)"
#endif
#ifndef IK_ENV_U32
#error "iommukit env (types): IK_ENV_U8 is defined but IK_ENV_U32 is not (define all or none)"
#endif
#ifndef IK_ENV_U64
#error "iommukit env (types): IK_ENV_U8 is defined but IK_ENV_U64 is not (define all or none)"
#endif
#ifndef IK_ENV_S32
#error "iommukit env (types): IK_ENV_U8 is defined but IK_ENV_S32 is not (define all or none)"
#endif
#ifndef IK_ENV_S64
#error "iommukit env (types): IK_ENV_U8 is defined but IK_ENV_S64 is not (define all or none)"
#endif
#ifndef IK_ENV_UPTR
#error "iommukit env (types): IK_ENV_U8 is defined but IK_ENV_UPTR is not (define all or none)"
#endif
#ifndef IK_ENV_SIZE
#error "iommukit env (types): IK_ENV_U8 is defined but IK_ENV_SIZE is not (define all or none)"
#endif
#elif defined(IK_ENV_U16) || defined(IK_ENV_U32) || defined(IK_ENV_U64) || defined(IK_ENV_S32) || \
	defined(IK_ENV_S64) || defined(IK_ENV_UPTR) || defined(IK_ENV_SIZE)
#error "iommukit env (types): IK_ENV_U8 is not defined but other IK_ENV_ integer types are (define all or none)"
#endif
#ifndef IK_ENV_U8
#define IK_ENV_U8 __UINT8_TYPE__
#define IK_ENV_U16 __UINT16_TYPE__
#define IK_ENV_U32 __UINT32_TYPE__
#define IK_ENV_U64 __UINT64_TYPE__
#define IK_ENV_S32 __INT32_TYPE__
#define IK_ENV_S64 __INT64_TYPE__
#define IK_ENV_UPTR __UINTPTR_TYPE__
#define IK_ENV_SIZE __SIZE_TYPE__
#endif
/* Fixed-width integer types, from the env's IK_ENV_* types. */
typedef IK_ENV_U8 ik_u8;
typedef IK_ENV_U16 ik_u16;
typedef IK_ENV_U32 ik_u32;
typedef IK_ENV_U64 ik_u64;
typedef IK_ENV_S32 ik_s32;
typedef IK_ENV_S64 ik_s64;
typedef IK_ENV_UPTR ik_uptr;
typedef IK_ENV_SIZE ik_size;
IK_STATIC_ASSERT(sizeof(ik_u64) == 8 && sizeof(ik_u32) == 4, "iommukit env: bad integer types");
IK_STATIC_ASSERT(sizeof(ik_uptr) == sizeof(void *), "iommukit env: ik_uptr must hold a pointer");

/* Largest values of ik_u64 and ik_u32. */
#define IK_U64_MAX (~(ik_u64)0)
#define IK_U32_MAX (~(ik_u32)0)

#if !defined(__cplusplus) && !defined(IK_ENV_HAVE_BOOL) && !defined(bool)
/* C11 bool without stdbool.h (freestanding), unless the env provides one. */
#define bool _Bool
#define true 1
#define false 0
#endif
#ifndef NULL
/* The null pointer constant, where the env has none. */
#define NULL ((void *)0)
#endif

/* ---- optional hooks with generic defaults ---- */
#ifndef IK_ENV_ASSERT
#ifdef IK_DEBUG
#define IK_ENV_ASSERT(cond) do { if (IK_UNLIKELY(!(cond))) __builtin_trap(); } while (0)
#else
#define IK_ENV_ASSERT(cond) do { (void)sizeof(!(cond)); } while (0)
#endif
#endif
#define IK_ASSERT(cond) IK_ENV_ASSERT(cond)

/* Local interrupts off and back on around the command queue's insertions
 * (see the contract above); default: no-ops, with `flags` only set. */
#ifndef IK_ENV_IRQ_FLAGS
#define IK_ENV_IRQ_FLAGS unsigned long
#endif
typedef IK_ENV_IRQ_FLAGS ik_irqflags;
#ifndef IK_ENV_IRQ_SAVE
#define IK_ENV_IRQ_SAVE(flags) do { (flags) = 0; } while (0)
#define IK_ENV_IRQ_RESTORE(flags) do { (void)(flags); } while (0)
#endif

/* memset and memcpy as the units use them; default: the compiler's builtins. */
#ifndef IK_ENV_MEMSET
#define IK_ENV_MEMSET(p, c, n) __builtin_memset((p), (c), (n))
#endif
#ifndef IK_ENV_MEMCPY
#define IK_ENV_MEMCPY(d, s, n) __builtin_memcpy((d), (s), (n))
#endif

/* ---- errno values (negated on return), Linux numbering ---- */
#ifndef EPERM
#define EPERM 1
#endif
#ifndef ENOENT
#define ENOENT 2
#endif
#ifndef EIO
#define EIO 5
#endif
#ifndef EAGAIN
#define EAGAIN 11
#endif
#ifndef ENOMEM
#define ENOMEM 12
#endif
#ifndef EFAULT
#define EFAULT 14
#endif
#ifndef EBUSY
#define EBUSY 16
#endif
#ifndef EEXIST
#define EEXIST 17
#endif
#ifndef ENODEV
#define ENODEV 19
#endif
#ifndef EINVAL
#define EINVAL 22
#endif
#ifndef ENOSPC
#define ENOSPC 28
#endif
#ifndef ERANGE
#define ERANGE 34
#endif
#ifndef EOVERFLOW
#define EOVERFLOW 75
#endif
#ifndef EOPNOTSUPP
#define EOPNOTSUPP 95
#endif
#ifndef ETIMEDOUT
#define ETIMEDOUT 110
#endif
#ifndef ECANCELED
#define ECANCELED 125
#endif

IK_BEGIN_DECLS

/*
 * struct ik_allocator - a per-object memory source.
 *
 * Units that allocate (IOVA nodes, rcache magazines, ...) take an optional
 * allocator in their config; NULL means the env's IK_ENV_ALLOC/IK_ENV_FREE.
 * Tests pass a fault-injecting allocator through it.  alloc returns NULL on
 * failure; free receives the size that was asked for.  Both may be called
 * from any thread that calls the owning object, so they must be thread-safe
 * where the object is used from several threads.
 */
struct ik_allocator {
	void *(*alloc)(void *ctx, ik_size size, ik_size align); /* size bytes aligned to align (a
								   power of two), or NULL */
	void (*free)(void *ctx, void *ptr, ik_size size); /* give back ptr; size as asked for */
	void *ctx;	/* passed back to both */
};

/* Allocate through `a`, or through the env when `a` is NULL.  O(1) calls. */
IK_INLINE void *ik_alloc(const struct ik_allocator *a, ik_size size, ik_size align)
{
	if (a)
		return a->alloc(a->ctx, size, align);
	return IK_ENV_ALLOC(size, align);
}

/* Free memory from ik_alloc() with the same allocator and size.  `a` may be
 * NULL as for ik_alloc(); a NULL `ptr` is ignored. */
IK_INLINE void ik_free(const struct ik_allocator *a, void *ptr, ik_size size)
{
	if (!ptr)
		return;
	if (a)
		a->free(a->ctx, ptr, size);
	else
		IK_ENV_FREE(ptr, size);
}

/*
 * ik_strerror - a short English description of a negative errno value that an
 * iommukit function returned ("invalid argument", ...); "unknown error" for
 * anything else.  Never NULL; the string is static.  O(1).
 */
IK_API const char *ik_strerror(int err);

/* ik_version - the library's version string, e.g. "0.1.0". */
IK_API const char *ik_version(void);

IK_END_DECLS

#endif /* IOMMUKIT_ENV_H */
