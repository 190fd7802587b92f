/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The software bit scans of <iommukit/compiler.h> (what RISC-V without Zbb,
 * or any build with IK_SOFT_BITSCAN, uses instead of libgcc's __ctzdi2 /
 * __clzdi2), compared with the compiler's builtins on this host: every
 * single-bit value, every run of low or high ones, and random values.
 */
#define IK_SOFT_BITSCAN 1
#include <iommukit/compiler.h>
#include "testlib.h"

IK_STATIC_ASSERT(IK_BITSCAN_SOFT == 1, "IK_SOFT_BITSCAN selects the software forms");

static void agree(unsigned long long x)
{
	IK_REQUIRE_MSG(ik_ctz64(x) == (unsigned)__builtin_ctzll(x), "ctz %llx", x);
	IK_REQUIRE_MSG(ik_clz64(x) == (unsigned)__builtin_clzll(x), "clz %llx", x);
}

START_TEST(soft_bit_scans_match_the_builtins)
{
	struct ik_rng rng = { 0xb175 };

	for (unsigned b = 0; b < 64; b++) {
		agree(1ull << b);
		agree(~0ull << b);	/* high ones from bit b */
		agree(~0ull >> b);	/* low ones up to bit 63 - b */
		agree((1ull << b) | 1);
		agree((1ull << b) | (1ull << 63));
	}
	for (long i = 0; i < ik_test_iters(100000); i++) {
		unsigned long long x = ik_rng_next(&rng);

		agree(x ? x : 1);
		agree((x >> (x & 63)) | 1ull << (x >> 58)); /* leading zeros of every count */
	}
	ck_assert_uint_eq(IK_ILOG2_64(1), 0);
	ck_assert_uint_eq(IK_ILOG2_64(0x1000), 12);
	ck_assert_uint_eq(IK_ILOG2_64(~0ull), 63);
	ck_assert_uint_eq(IK_ILOG2_64_UP(1), 0);
	ck_assert_uint_eq(IK_ILOG2_64_UP(0x1001), 13);
	ck_assert_uint_eq(IK_ILOG2_64_UP(0x1000), 12);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("bitscan");
	TCase *tc = tcase_create("soft");

	tcase_add_test(tc, soft_bit_scans_match_the_builtins);
	suite_add_tcase(s, tc);
	return s;
}
