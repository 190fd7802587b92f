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
#define IK_COLD __attribute__((__cold__))	/* rarely called: optimised for size, placed apart */
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

/*
 * ik_ctz64 / ik_clz64 - trailing / leading zero bits of a non-zero 64-bit
 * value (undefined for 0, as the builtins).  GCC and Clang expand
 * __builtin_ctzll / __builtin_clzll inline where the target has a bit-scan
 * instruction, and otherwise call libgcc's __ctzdi2 / __clzdi2, which a
 * freestanding image linked with -nostdlib does not have.  RISC-V without
 * the Zbb extension is such a target (rv64gc: detected as __riscv without
 * __riscv_zbb); there, and wherever IK_SOFT_BITSCAN is defined (for other
 * such targets: some Arm cores, microcontrollers), these are six compares
 * and shifts inline.  The library uses these, never the builtins.
 */
#if defined(IK_SOFT_BITSCAN) || (defined(__riscv) && !defined(__riscv_zbb))
static inline unsigned ik_ctz64(unsigned long long x)
{
	unsigned n = 0;

	if (!(x & 0xffffffffull)) {
		n += 32;
		x >>= 32;
	}
	if (!(x & 0xffffull)) {
		n += 16;
		x >>= 16;
	}
	if (!(x & 0xffull)) {
		n += 8;
		x >>= 8;
	}
	if (!(x & 0xfull)) {
		n += 4;
		x >>= 4;
	}
	if (!(x & 0x3ull)) {
		n += 2;
		x >>= 2;
	}
	return n + (unsigned)!(x & 1);
}

static inline unsigned ik_clz64(unsigned long long x)
{
	unsigned n = 0;

	if (!(x >> 32)) {
		n += 32;
		x <<= 32;
	}
	if (!(x >> 48)) {
		n += 16;
		x <<= 16;
	}
	if (!(x >> 56)) {
		n += 8;
		x <<= 8;
	}
	if (!(x >> 60)) {
		n += 4;
		x <<= 4;
	}
	if (!(x >> 62)) {
		n += 2;
		x <<= 2;
	}
	return n + (unsigned)!(x >> 63);
}
#define IK_BITSCAN_SOFT 1	/* ik_ctz64 / ik_clz64 are the software forms */
#else
#define ik_ctz64(x) ((unsigned)__builtin_ctzll((unsigned long long)(x)))	/* trailing zeros */
#define ik_clz64(x) ((unsigned)__builtin_clzll((unsigned long long)(x)))	/* leading zeros */
#define IK_BITSCAN_SOFT 0	/* ik_ctz64 / ik_clz64 are the compiler's builtins */
#endif

/* log2 of a non-zero 64-bit value, rounded down / up. */
#define IK_ILOG2_64(x) (63u - ik_clz64((unsigned long long)(x)))
#define IK_ILOG2_64_UP(x) \
	((x) <= 1 ? 0u : 64u - ik_clz64((unsigned long long)(x) - 1))

#endif /* IOMMUKIT_COMPILER_H */
