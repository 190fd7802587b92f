/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* batch: pfn runs, segments from runs, coalescing (<iommukit/batch.h>). */
#include <stdlib.h>
#include <string.h>
#include <iommukit/batch.h>
#include "testlib.h"

START_TEST(pfn_runs_split_the_example)
{
	static const ik_u64 pfns[] = { 1, 5, 6, 7, 9 };
	struct ik_pfn_run r[5];

	ck_assert_uint_eq(ik_pfn_runs(pfns, 5, r, 5), 3);
	ck_assert_uint_eq(r[0].pfn, 1);
	ck_assert_uint_eq(r[0].count, 1);
	ck_assert_uint_eq(r[0].first, 0);
	ck_assert_uint_eq(r[1].pfn, 5);
	ck_assert_uint_eq(r[1].count, 3);
	ck_assert_uint_eq(r[1].first, 1);
	ck_assert_uint_eq(r[2].pfn, 9);
	ck_assert_uint_eq(r[2].count, 1);
	ck_assert_uint_eq(r[2].first, 4);
	/* too little room: the count is still right, only the first written */
	r[1].pfn = 77;
	ck_assert_uint_eq(ik_pfn_runs(pfns, 5, r, 1), 3);
	ck_assert_uint_eq(r[0].pfn, 1);
	ck_assert_uint_eq(r[1].pfn, 77);
	ck_assert_uint_eq(ik_pfn_runs(pfns, 0, r, 5), 0);
}
END_TEST

START_TEST(pfn_runs_edge_cases)
{
	static const ik_u64 rep[] = { 4, 4, 5, 3, 4, UINT64_MAX, 0 };
	struct ik_pfn_run r[8];

	/* repeats and decreases start runs; no wrap from the top */
	ck_assert_uint_eq(ik_pfn_runs(rep, 7, r, 8), 5);
	ck_assert_uint_eq(r[0].count, 1);
	ck_assert_uint_eq(r[1].pfn, 4);
	ck_assert_uint_eq(r[1].count, 2);
	ck_assert_uint_eq(r[2].pfn, 3);
	ck_assert_uint_eq(r[2].count, 2);
	ck_assert_uint_eq(r[3].pfn, UINT64_MAX);
	ck_assert_uint_eq(r[4].pfn, 0);
}
END_TEST

START_TEST(random_runs_match_brute_force)
{
	struct ik_rng rng = { 42 };
	long it, iters = ik_test_iters(2000);

	for (it = 0; it < iters; it++) {
		ik_u64 pfns[64];
		struct ik_pfn_run r[64];
		struct ik_seg s[64];
		ik_size n = 1 + ik_rng_below(&rng, 64), i, nr, k, idx = 0;

		pfns[0] = ik_rng_below(&rng, 1000);
		for (i = 1; i < n; i++)
			pfns[i] = ik_rng_below(&rng, 3) ? pfns[i - 1] + 1 : ik_rng_below(&rng, 1000);
		nr = ik_pfn_runs(pfns, n, r, 64);
		for (k = 0; k < nr; k++) {
			ik_size j;

			IK_REQUIRE(r[k].first == idx);
			for (j = 0; j < r[k].count; j++)
				IK_REQUIRE(pfns[idx + j] == r[k].pfn + j);
			idx += r[k].count;
			if (idx < n)
				IK_REQUIRE(pfns[idx] != pfns[idx - 1] + 1);
		}
		IK_REQUIRE(idx == n);
		IK_REQUIRE(ik_segs_from_runs(r, nr, 12, s) == (ik_s64)nr);
		for (k = 0; k < nr; k++)
			IK_REQUIRE(s[k].paddr == r[k].pfn << 12 && s[k].len == r[k].count << 12);
		/* runs are maximal: coalescing finds nothing more */
		IK_REQUIRE(ik_segs_coalesce(s, nr) == nr);
	}
}
END_TEST

START_TEST(segments_coalesce_and_reject_overflow)
{
	struct ik_seg s[5] = { { 0x1000, 0x1000 }, { 0x2000, 0x2000 }, { 0x9000, 0 },
			       { 0x4000, 0x1000 }, { 0x8000, 0x1000 } };
	struct ik_pfn_run r[2] = { { 1, 0, 1 }, { (1ull << 52), 1, 1 } };
	struct ik_seg out[2];

	ck_assert_uint_eq(ik_segs_coalesce(s, 5), 2);
	ck_assert_uint_eq(s[0].paddr, 0x1000);
	ck_assert_uint_eq(s[0].len, 0x4000);
	ck_assert_uint_eq(s[1].paddr, 0x8000);
	ck_assert_int_eq(ik_segs_from_runs(r, 2, 12, out), -EINVAL);
	ck_assert_int_eq(ik_segs_from_runs(r, 1, 64, out), -EINVAL);
	r[1].pfn = (1ull << 52) - 1;
	ck_assert_int_eq(ik_segs_from_runs(r, 2, 12, out), -EINVAL); /* ends at 2^64 */
	r[1].count = 0;
	ck_assert_int_eq(ik_segs_from_runs(r, 2, 12, out), -EINVAL);
	ck_assert_int_eq(ik_segs_from_runs(r, 1, 0, out), 1);
	ck_assert_uint_eq(out[0].paddr, 1);

	/* Issue #13 item 5: a segment ending at 2^64 is not "contiguous" with
	 * one at 0 (the end wrapped), nor may a merge produce a wrapping one. */
	struct ik_seg w[4] = { { 0xfffffffffffff000ull, 0x1000 }, { 0, 0x1000 },
			       { 0x1000, 0x1000 }, { 0x3000, 0x1000 } };

	ck_assert_uint_eq(ik_segs_coalesce(w, 4), 3);
	ck_assert(w[0].paddr == 0xfffffffffffff000ull && w[0].len == 0x1000);
	ck_assert(w[1].paddr == 0 && w[1].len == 0x2000);
	ck_assert(w[2].paddr == 0x3000 && w[2].len == 0x1000);
	struct ik_seg v[2] = { { 0xffffffffffffe000ull, 0x1000 }, { 0xfffffffffffff000ull, 0x2000 } };

	ck_assert_uint_eq(ik_segs_coalesce(v, 2), 2);	/* the second wraps itself */
	ck_assert(v[0].len == 0x1000 && v[1].len == 0x2000);
	v[1].len = 0xfff;	/* up to 2^64 - 1: mergeable */
	ck_assert_uint_eq(ik_segs_coalesce(v, 2), 1);
	ck_assert(v[0].paddr == 0xffffffffffffe000ull && v[0].len == 0x1fff);
}
END_TEST

/*
 * The pointer-argument rule of <iommukit/env.h>: ik_segs_from_runs, the one
 * error-returning helper here, refuses a NULL runs or segs with -EINVAL and
 * writes nothing.  (ik_pfn_runs and ik_segs_coalesce return counts: NULL is
 * a precondition violation there, caught by IK_ASSERT in debug builds.)
 */
START_TEST(null_pointer_arguments_are_einval)
{
	struct ik_pfn_run r[2] = { { 1, 0, 2 }, { 9, 2, 1 } }, r0[2];
	struct ik_seg out[2] = { { 0x77, 0x88 }, { 0x99, 0xaa } }, out0[2];

	memcpy(r0, r, sizeof(r));
	memcpy(out0, out, sizeof(out));
	ck_assert_int_eq(ik_segs_from_runs(NULL, 2, 12, out), -EINVAL);
	ck_assert_int_eq(ik_segs_from_runs(r, 2, 12, NULL), -EINVAL);
	ck_assert(memcmp(r, r0, sizeof(r)) == 0);
	ck_assert(memcmp(out, out0, sizeof(out)) == 0);
	ck_assert_int_eq(ik_segs_from_runs(r, 2, 12, out), 2);
	ck_assert(out[0].paddr == 0x1000 && out[0].len == 0x2000);
	ck_assert(out[1].paddr == 0x9000 && out[1].len == 0x1000);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("batch");
	TCase *tc = tcase_create("batch");

	tcase_add_test(tc, pfn_runs_split_the_example);
	tcase_add_test(tc, pfn_runs_edge_cases);
	tcase_add_test(tc, random_runs_match_brute_force);
	tcase_add_test(tc, segments_coalesce_and_reject_overflow);
	tcase_add_test(tc, null_pointer_arguments_are_einval);
	suite_add_tcase(s, tc);
	return s;
}
