/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/compiler.h - compiler attributes and small helpers.
 *
 * Included by every public header.  It depends on nothing but the compiler
 * (GCC >= 7 or Clang >= 6); it includes no header at all, so it is safe in a
 * kernel, in firmware and in C++.
 */
#ifndef IOMMUKIT_COMPILER_H
#define IOMMUKIT_COMPILER_H

#if !defined(__GNUC__)
#error "iommukit needs GCC or Clang (GNU C extensions and __atomic builtins)"
#endif

/* IK_API marks a function exported from libiommukit (the library is built with
 * -fvisibility=hidden).  A vendored build may define IK_API to nothing. */
#ifndef IK_API
#define IK_API __attribute__((__visibility__("default")))
#endif

/* extern "C" around the declarations for C++, and a static assertion in either language. */
#ifdef __cplusplus
#define IK_BEGIN_DECLS extern "C" {
#define IK_END_DECLS }
#define IK_STATIC_ASSERT(c, msg) static_assert(c, msg)
#else
#define IK_BEGIN_DECLS
#define IK_END_DECLS
#define IK_STATIC_ASSERT(c, msg) _Static_assert(c, msg)
#endif

#define IK_INLINE static inline	/* a function defined in a header */
#define IK_ALWAYS_INLINE static inline __attribute__((__always_inline__)) /* inlined whatever the
									 optimisation level */
#define IK_NOINLINE __attribute__((__noinline__))	/* never inlined */
#define IK_UNUSED __attribute__((__unused__))	/* may be unused without a warning */
#define IK_MUST_CHECK __attribute__((__warn_unused_result__))	/* the result must be used */
#define IK_LIKELY(x) __builtin_expect(!!(x), 1)	/* branch hint: x is usually true */
#define IK_UNLIKELY(x) __builtin_expect(!!(x), 0)	/* branch hint: x is usually false */
#define IK_ALIGNED(n) __attribute__((__aligned__(n)))	/* align a type or object to n bytes */

/* Size of a cache line, for keeping hot shared fields apart. */
#ifndef IK_CACHELINE
#define IK_CACHELINE 64
#endif

/* The struct that embeds member `m` at address `p`. */
#define IK_CONTAINER_OF(p, type, m) \
	((type *)(void *)((char *)(p) - __builtin_offsetof(type, m)))

#define IK_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))	/* elements in array a (not a pointer) */
#define IK_MIN(a, b) ((a) < (b) ? (a) : (b))	/* the smaller of a and b (evaluates them twice) */
#define IK_MAX(a, b) ((a) > (b) ? (a) : (b))	/* the larger of a and b (evaluates them twice) */

/* Power-of-two helpers; `a` must be a power of two. */
#define IK_IS_POW2(x) ((x) != 0 && ((x) & ((x) - 1)) == 0)
#define IK_ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a) - 1))
#define IK_ALIGN_UP(x, a) IK_ALIGN_DOWN((x) + ((__typeof__(x))(a) - 1), (a))
#define IK_IS_ALIGNED(x, a) (((x) & ((__typeof__(x))(a) - 1)) == 0)

/* log2 of a non-zero 64-bit value, rounded down / up. */
#define IK_ILOG2_64(x) (63 - __builtin_clzll((unsigned long long)(x)))
#define IK_ILOG2_64_UP(x) \
	((x) <= 1 ? 0 : 64 - __builtin_clzll((unsigned long long)(x) - 1))

#endif /* IOMMUKIT_COMPILER_H */
