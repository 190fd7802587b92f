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

/* Brute force for ik_iovec_segs on small addresses: a page bitmap per segment. */
START_TEST(iovec_segs_example_and_offsets)
{
	/* two buffers sharing page 1, one on the next page, a gap, one
	 * unaligned buffer crossing a page boundary, an empty one, and one
	 * below the current segment (a new segment, not merged backwards) */
	static const struct ik_iovec iov[] = {
		{ 0x1010, 0x100 }, { 0x1800, 0x10 }, { 0x2000, 0x1000 }, { 0x5ff0, 0x20 },
		{ 0x9999, 0 }, { 0x1000, 0x1 },
	};
	struct ik_iovec segs[8];
	ik_size seg_of[6];

	ck_assert_int_eq(ik_iovec_segs(iov, 6, 0x1000, segs, 8, seg_of), 3);
	ck_assert(segs[0].base == 0x1000 && segs[0].len == 0x2000);
	ck_assert(segs[1].base == 0x5000 && segs[1].len == 0x2000);
	ck_assert(segs[2].base == 0x1000 && segs[2].len == 0x1000);
	ck_assert_uint_eq(seg_of[0], 0);
	ck_assert_uint_eq(seg_of[1], 0);
	ck_assert_uint_eq(seg_of[2], 0);
	ck_assert_uint_eq(seg_of[3], 1);
	ck_assert_uint_eq(seg_of[4], (ik_size)-1);
	ck_assert_uint_eq(seg_of[5], 2);
	/* counting only, and too little room: the count, and only what fits */
	ck_assert_int_eq(ik_iovec_segs(iov, 6, 0x1000, NULL, 0, NULL), 3);
	segs[1].base = 77;
	ck_assert_int_eq(ik_iovec_segs(iov, 6, 0x1000, segs, 1, NULL), 3);
	ck_assert(segs[0].base == 0x1000 && segs[0].len == 0x2000);
	ck_assert_uint_eq(segs[1].base, 77);
	ck_assert_int_eq(ik_iovec_segs(iov, 0, 0x1000, segs, 8, seg_of), 0);
	ck_assert_int_eq(ik_iovec_segs(NULL, 0, 0x1000, NULL, 0, NULL), 0);
	/* a larger page merges more */
	ck_assert_int_eq(ik_iovec_segs(iov, 4, 0x10000, segs, 8, NULL), 1);
	ck_assert(segs[0].base == 0 && segs[0].len == 0x10000);
}
END_TEST

START_TEST(iovec_segs_reject_bad_input_and_write_nothing)
{
	struct ik_iovec iov[3] = { { 0x1000, 0x10 }, { 0x3000, 0x10 }, { 0, 0 } };
	struct ik_iovec segs[4], segs0[4];
	ik_size seg_of[3], seg_of0[3];

	memset(segs, 0x5a, sizeof(segs));
	memset(seg_of, 0x5a, sizeof(seg_of));
	memcpy(segs0, segs, sizeof(segs));
	memcpy(seg_of0, seg_of, sizeof(seg_of));
	/* page size not a power of two */
	ck_assert_int_eq(ik_iovec_segs(iov, 2, 0, segs, 4, seg_of), -EINVAL);
	ck_assert_int_eq(ik_iovec_segs(iov, 2, 0x1800, segs, 4, seg_of), -EINVAL);
	/* NULL arrays */
	ck_assert_int_eq(ik_iovec_segs(NULL, 2, 0x1000, segs, 4, seg_of), -EINVAL);
	ck_assert_int_eq(ik_iovec_segs(iov, 2, 0x1000, NULL, 4, seg_of), -EINVAL);
	/* the last buffer wraps past 2^64: the good ones before it are not written */
	iov[2].base = 0xfffffffffffff000ull;
	iov[2].len = 0x1001;
	ck_assert_int_eq(ik_iovec_segs(iov, 3, 0x1000, segs, 4, seg_of), -EINVAL);
	ck_assert(memcmp(segs, segs0, sizeof(segs)) == 0);
	ck_assert(memcmp(seg_of, seg_of0, sizeof(seg_of)) == 0);
	/* ending exactly at 2^64 is fine */
	iov[2].len = 0x1000;
	ck_assert_int_eq(ik_iovec_segs(iov, 3, 0x1000, segs, 4, seg_of), 3);
	ck_assert(segs[2].base == 0xfffffffffffff000ull && segs[2].len == 0x1000);
	/* a segment of all 2^64 bytes has no length */
	iov[0].base = 0;
	iov[0].len = 0x10;
	iov[1].base = 0x10;
	iov[1].len = 0xfffffffffffffff0ull;
	memcpy(segs0, segs, sizeof(segs));
	memcpy(seg_of0, seg_of, sizeof(seg_of));
	ck_assert_int_eq(ik_iovec_segs(iov, 2, 0x1000, segs, 4, seg_of), -EINVAL);
	ck_assert(memcmp(segs, segs0, sizeof(segs)) == 0);
	ck_assert(memcmp(seg_of, seg_of0, sizeof(seg_of)) == 0);
	/* ...but one byte less is one segment */
	iov[1].len--;
	ck_assert_int_eq(ik_iovec_segs(iov, 2, 1, segs, 4, seg_of), 1);
	ck_assert(segs[0].base == 0 && segs[0].len == IK_U64_MAX);
}
END_TEST

/*
 * Random buffers on a small address space against a page bitmap: every
 * buffer lies inside its segment, segments are page-aligned, and in-order
 * neighbours that touch or overlap were merged.
 */
START_TEST(iovec_segs_random_match_brute_force)
{
	struct ik_rng rng = { 7 };
	long it, iters = ik_test_iters(2000);

	for (it = 0; it < iters; it++) {
		struct ik_iovec iov[16], segs[16];
		ik_size seg_of[16], n = 1 + ik_rng_below(&rng, 16), i;
		ik_u64 page = (ik_u64)1 << ik_rng_below(&rng, 5), addr = ik_rng_below(&rng, 64);
		ik_s64 nr;

		for (i = 0; i < n; i++) {
			/* mostly ascending, sometimes jumping back */
			if (ik_rng_below(&rng, 5) == 0)
				addr = ik_rng_below(&rng, 64);
			iov[i].base = addr;
			iov[i].len = ik_rng_below(&rng, 4) ? ik_rng_below(&rng, 40) : 0;
			addr += iov[i].len + ik_rng_below(&rng, 20);
		}
		nr = ik_iovec_segs(iov, n, page, segs, 16, seg_of);
		IK_REQUIRE(nr >= 0 && nr <= (ik_s64)n);
		for (ik_s64 k = 0; k < nr; k++)
			IK_REQUIRE(segs[k].base % page == 0 && segs[k].len % page == 0 && segs[k].len);
		for (i = 0; i < n; i++) {
			const struct ik_iovec *s;

			if (iov[i].len == 0) {
				IK_REQUIRE(seg_of[i] == (ik_size)-1);
				continue;
			}
			IK_REQUIRE(seg_of[i] < (ik_size)nr);
			s = &segs[seg_of[i]];
			IK_REQUIRE(iov[i].base >= s->base && iov[i].base + iov[i].len <= s->base + s->len);
		}
		/* merging is exactly the rule: the next non-empty buffer goes to
		 * the same segment iff its aligned start is in [seg start, seg end] */
		{
			ik_size prev = (ik_size)-1;

			for (i = 0; i < n; i++) {
				ik_u64 lo;

				if (iov[i].len == 0)
					continue;
				lo = iov[i].base / page * page;
				if (prev == (ik_size)-1)
					IK_REQUIRE(seg_of[i] == 0);
				else if (lo >= segs[seg_of[prev]].base &&
					 lo <= segs[seg_of[prev]].base + segs[seg_of[prev]].len)
					IK_REQUIRE(seg_of[i] == seg_of[prev]);
				else
					IK_REQUIRE(seg_of[i] == seg_of[prev] + 1);
				prev = i;
			}
		}
	}
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
	tcase_add_test(tc, iovec_segs_example_and_offsets);
	tcase_add_test(tc, iovec_segs_reject_bad_input_and_write_nothing);
	tcase_add_test(tc, iovec_segs_random_match_brute_force);
	suite_add_tcase(s, tc);
	return s;
}
