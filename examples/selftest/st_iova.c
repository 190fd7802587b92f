/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Self-test cases for the IOVA allocator (<iommukit/iova.h>): top-down
 * placement, limits, reservations, errors, the range caches, and rollback on
 * allocation failure.  Compiled to an empty table where the library has no
 * IOVA unit.
 */
#include "st_internal.h"

#if __has_include(<iommukit/iova.h>)
#include <iommukit/iova.h>

#define ST_IOVA_END 0xfffffull	/* 2^20 pfns of 4 KiB, as the W1 workload */

static int st_iova_domain(struct ik_st *t, struct ik_iova_domain *d, ik_u64 end, unsigned flags)
{
	struct ik_iova_config cfg;

	IK_ENV_MEMSET(&cfg, 0, sizeof(cfg));
	cfg.granule = 4096;
	cfg.start_pfn = 1;
	cfg.end_pfn = end;
	cfg.flags = flags;
	cfg.allocator = &t->alloc.a;
	return ik_iova_init(d, &cfg);
}

static struct ik_iova_domain *st_iova_new(struct ik_st *t)
{
	return (struct ik_iova_domain *)ik_alloc(&t->alloc.a, sizeof(struct ik_iova_domain),
						 IK_CACHELINE);
}

static void st_iova_del(struct ik_st *t, struct ik_iova_domain *d)
{
	ik_free(&t->alloc.a, d, sizeof(*d));
}

/* Top-down, size-aligned, under the limit; find/next/free; every error. */
static void iova_alloc_top_down_and_errors(struct ik_st *t)
{
	struct ik_iova_domain *d = st_iova_new(t);
	struct ik_iova_range r;
	struct ik_iova_stats st;
	ik_u64 a, b, c, pages;
	struct ik_iova_config bad;

	ST_CHECK(t, d != NULL);
	IK_ENV_MEMSET(&bad, 0, sizeof(bad));
	bad.granule = 3000;	/* not a power of two */
	bad.start_pfn = 1;
	bad.end_pfn = 10;
	ST_CHECK_GOTO(t, ik_iova_init(d, &bad) == -EINVAL, out_free);
	ST_CHECK_GOTO(t, t->alloc.live == 1, out_free);
	ST_CHECK_GOTO(t, st_iova_domain(t, d, ST_IOVA_END, 0) == 0, out_free);

	ST_CHECK_GOTO(t, ik_iova_alloc(d, 1, ST_IOVA_END, IK_IOVA_SIZE_ALIGNED, &a) == 0, out);
	ST_CHECK_GOTO(t, a == ST_IOVA_END, out);
	ST_CHECK_GOTO(t, ik_iova_alloc(d, 4, ST_IOVA_END, IK_IOVA_SIZE_ALIGNED, &b) == 0, out);
	ST_CHECK_GOTO(t, b == 0xffff8, out);	/* highest 4-aligned start below a */
	ST_CHECK_GOTO(t, ik_iova_alloc(d, 3, 0xffff, 0, &c) == 0, out);
	ST_CHECK_GOTO(t, c == 0xfffd, out);	/* last pfn == the 16-bit limit */

	ST_CHECK_GOTO(t, ik_iova_find(d, 0xffffa, &r) == 0 && r.lo == b && r.hi == b + 3 &&
		      !r.reserved, out);
	ST_CHECK_GOTO(t, ik_iova_find(d, 0xffffc, &r) == -ENOENT, out);
	ST_CHECK_GOTO(t, ik_iova_next(d, 1, &r) == 0 && r.lo == c, out);
	ST_CHECK_GOTO(t, ik_iova_next(d, c + 3, &r) == 0 && r.lo == b, out);
	ST_CHECK_GOTO(t, ik_iova_largest_free(d, ST_IOVA_END, &pages) == 0 &&
		      pages == 0xffff8 - 0x10000, out);
	ik_iova_stats(d, &st);
	ST_CHECK_GOTO(t, st.ranges == 3 && st.pages == 8 && st.node_bytes <= 56, out);
	ST_CHECK_GOTO(t, ik_iova_check(d) == IK_IOVA_CHECK_OK, out);

	/* Errors change nothing. */
	ST_CHECK_GOTO(t, ik_iova_alloc(d, 0, ST_IOVA_END, 0, &a) == -EINVAL, out);
	ST_CHECK_GOTO(t, ik_iova_alloc(d, 1, 0, 0, &a) == -EINVAL, out);	/* limit < start */
	ST_CHECK_GOTO(t, ik_iova_alloc(d, 1ull << 21, ST_IOVA_END, 0, &a) == -EINVAL, out);
	/* 2^19 aligned: the top half is in use and the bottom half starts
	 * below start_pfn; 2^18 aligned fits just below the top quarter. */
	ST_CHECK_GOTO(t, ik_iova_alloc(d, 1ull << 19, ST_IOVA_END, IK_IOVA_SIZE_ALIGNED, &a) ==
		      -ENOSPC, out);
	ST_CHECK_GOTO(t, ik_iova_alloc(d, 1ull << 18, ST_IOVA_END, IK_IOVA_SIZE_ALIGNED, &a) == 0 &&
		      a == 0x80000, out);
	ST_CHECK_GOTO(t, ik_iova_free(d, a) == 0, out);
	ST_CHECK_GOTO(t, ik_iova_free(d, b + 1) == -ENOENT, out);	/* inside a range */
	ST_CHECK_GOTO(t, ik_iova_free(d, 0x1234) == -ENOENT, out);	/* never allocated */
	ST_CHECK_GOTO(t, ik_iova_reserve(d, 9, 8) == -EINVAL, out);
	ST_CHECK_GOTO(t, ik_iova_reserve(d, 0, 8) == -EINVAL, out);	/* below start */
	ST_CHECK_GOTO(t, ik_iova_reserve(d, b, b) == -EBUSY, out);	/* an allocation */
	ik_iova_stats(d, &st);
	ST_CHECK_GOTO(t, st.ranges == 3 && st.pages == 8, out);
	ST_CHECK_GOTO(t, ik_iova_free(d, b) == 0, out);
	ST_CHECK_GOTO(t, ik_iova_free(d, b) == -ENOENT, out);		/* double free */
	ST_CHECK_GOTO(t, ik_iova_free(d, c) == 0 && ik_iova_free(d, ST_IOVA_END) == 0, out);
	ik_iova_stats(d, &st);
	ST_CHECK_GOTO(t, st.ranges == 0 && st.largest_gap == ST_IOVA_END, out);
	ST_CHECK_GOTO(t, ik_iova_check(d) == IK_IOVA_CHECK_OK, out);
out:
	ik_iova_destroy(d);
out_free:
	st_iova_del(t, d);
}

/* Reservations (merged) are never handed out; the space fills around them. */
static void iova_reserve_and_exhaust(struct ik_st *t)
{
	struct ik_iova_domain *d = st_iova_new(t);
	struct ik_iova_range r;
	struct ik_iova_stats st;
	ik_u64 pfn, n = 0, reserved_hits = 0;

	ST_CHECK(t, d != NULL);
	ST_CHECK_GOTO(t, st_iova_domain(t, d, 255, 0) == 0, out_free);	/* pfns 1..255 */
	ST_CHECK_GOTO(t, ik_iova_reserve(d, 0x80, 0x8f) == 0, out);	/* an MSI window */
	ST_CHECK_GOTO(t, ik_iova_reserve(d, 0x90, 0x9f) == 0, out);	/* adjacent: merged */
	ST_CHECK_GOTO(t, ik_iova_find(d, 0x95, &r) == 0 && r.reserved && r.lo == 0x80 &&
		      r.hi == 0x9f, out);
	while (ik_iova_alloc(d, 1, 255, 0, &pfn) == 0) {
		n++;
		if (pfn >= 0x80 && pfn <= 0x9f)
			reserved_hits++;
	}
	ST_CHECK_GOTO(t, n == 255 - 32 && reserved_hits == 0, out);
	ST_CHECK_GOTO(t, ik_iova_alloc(d, 1, 255, 0, &pfn) == -ENOSPC, out);
	ik_iova_stats(d, &st);
	ST_CHECK_GOTO(t, st.largest_gap == 0 && st.reserved_pages == 32, out);
	ST_CHECK_GOTO(t, ik_iova_free(d, 0x40) == 0 && ik_iova_alloc(d, 1, 255, 0, &pfn) == 0 &&
		      pfn == 0x40, out);
	ST_CHECK_GOTO(t, ik_iova_check(d) == IK_IOVA_CHECK_OK, out);
out:
	ik_iova_destroy(d);
out_free:
	st_iova_del(t, d);
}

/* The range caches: reuse, limits respected, flush, allocation from cached
 * ranges when the tree is full, and nothing left after destroy. */
static void iova_rcache_reuse_and_flush(struct ik_st *t)
{
	struct ik_iova_domain *d = st_iova_new(t);
	struct ik_iova_stats st;
	ik_u64 pfn, again, big, i, n;

	ST_CHECK(t, d != NULL);
	ST_CHECK_GOTO(t, st_iova_domain(t, d, 1023, 0) == 0, out_free);
	ST_CHECK_GOTO(t, ik_iova_alloc_fast(d, 3, 1023, &pfn) == 0, out);	/* class 4 */
	ST_CHECK_GOTO(t, (pfn & 3) == 0, out);
	ST_CHECK_GOTO(t, ik_iova_free_fast(d, pfn, 3) == 0, out);
	ik_iova_stats(d, &st);
	ST_CHECK_GOTO(t, st.cached_ranges == 1 && st.ranges == 1, out);	/* still in the tree */
	ST_CHECK_GOTO(t, ik_iova_alloc_fast(d, 4, 1023, &again) == 0 && again == pfn, out);
	ST_CHECK_GOTO(t, ik_iova_free_fast(d, again, 4) == 0, out);
	/* A cached range above the limit is not returned. */
	ST_CHECK_GOTO(t, ik_iova_alloc_fast(d, 4, 511, &again) == 0 && again + 3 <= 511, out);
	ST_CHECK_GOTO(t, ik_iova_free_fast(d, again, 4) == 0, out);
	ST_CHECK_GOTO(t, ik_iova_check(d) == IK_IOVA_CHECK_OK, out);
	/* Fill the space with cached size-1 ranges, then ask the tree for a
	 * large range: it must flush the caches and succeed. */
	n = 0;
	while (ik_iova_alloc_fast(d, 1, 1023, &pfn) == 0)
		n++;
	ST_CHECK_GOTO(t, n > 0, out);
	for (i = 0, pfn = 1; pfn <= 1023; pfn++) {
		struct ik_iova_range r;

		if (ik_iova_find(d, pfn, &r) == 0 && r.lo == pfn && r.hi == pfn &&
		    ik_iova_free_fast(d, pfn, 1) == 0)
			i++;
	}
	ST_CHECK_GOTO(t, i == n, out);
	ST_CHECK_GOTO(t, ik_iova_alloc(d, 256, 1023, IK_IOVA_SIZE_ALIGNED, &big) == 0, out);
	ik_iova_stats(d, &st);
	ST_CHECK_GOTO(t, st.flushes >= 1, out);
	ST_CHECK_GOTO(t, ik_iova_check(d) == IK_IOVA_CHECK_OK, out);
	for (i = 0; i < IK_ENV_NR_CPUS(); i++)
		ST_CHECK_GOTO(t, ik_iova_flush_cpu(d, (unsigned)i) == 0, out);
	ST_CHECK_GOTO(t, ik_iova_flush_cpu(d, IK_ENV_NR_CPUS()) == -EINVAL, out);
	ik_iova_flush_all(d);
	ik_iova_stats(d, &st);
	ST_CHECK_GOTO(t, st.cached_ranges == 0 && st.magazines == 0, out);
	ST_CHECK_GOTO(t, ik_iova_free(d, big) == 0, out);
	ik_iova_stats(d, &st);
	ST_CHECK_GOTO(t, st.ranges == 0 && st.largest_gap == 1023, out);
out:
	ik_iova_destroy(d);
out_free:
	st_iova_del(t, d);
}

/* Every allocation of a sequence fails in turn: -ENOMEM, the domain is
 * unchanged (same ranges, checker passes), nothing leaks. */
static void iova_alloc_failure_rolls_back(struct ik_st *t)
{
	struct ik_iova_domain *d = st_iova_new(t);
	struct ik_iova_stats base, before, after;
	ik_u64 pfn, pfns[48];
	long nth, live0;
	unsigned i, done;
	int rc = 0;

	ST_CHECK(t, d != NULL);
	/* init itself, failed at each of its allocations */
	for (nth = 1; nth < 64; nth++) {
		ik_st_alloc_arm(t, nth);
		rc = st_iova_domain(t, d, ST_IOVA_END, 0);
		ik_st_alloc_arm(t, 0);
		if (rc == 0)
			break;
		ST_CHECK_GOTO(t, rc == -ENOMEM && t->alloc.live == 1, out_free);
	}
	ST_CHECK_GOTO(t, rc == 0, out_free);
	live0 = t->alloc.live;
	ik_iova_stats(d, &base);
	for (nth = 1; nth <= 128; nth++) {
		ik_iova_stats(d, &before);
		ik_st_alloc_arm(t, nth);
		done = 0;
		rc = 0;
		for (i = 0; i < IK_ARRAY_SIZE(pfns); i++) {
			ik_u64 size = 1 + ik_st_below(t, 40);

			rc = (i & 1) ? ik_iova_alloc(d, size, ST_IOVA_END, IK_IOVA_SIZE_ALIGNED, &pfn) :
				       ik_iova_alloc_fast(d, size, ST_IOVA_END, &pfn);
			if (rc)
				break;
			pfns[done++] = pfn | (size << 40);
		}
		ik_st_alloc_arm(t, 0);
		ST_CHECK_GOTO(t, rc == 0 || rc == -ENOMEM, out);
		ST_CHECK_GOTO(t, ik_iova_check(d) == IK_IOVA_CHECK_OK, out);
		ik_iova_stats(d, &after);
		/* Exactly the successful allocations were added. */
		for (i = 0; i < done; i++) {
			ik_u64 size = pfns[i] >> 40;

			ST_CHECK_GOTO(t, (i & 1) ? ik_iova_free(d, pfns[i] & ((1ull << 40) - 1)) == 0 :
				      ik_iova_free_fast(d, pfns[i] & ((1ull << 40) - 1), size) == 0, out);
		}
		ik_iova_flush_all(d);
		ik_iova_stats(d, &after);
		ST_CHECK_GOTO(t, after.ranges == before.ranges && after.pages == before.pages, out);
		/* No leak: what the allocator holds changed by what the domain
		 * says it holds (the spare node it may keep for the next
		 * allocation, counted in bytes). */
		ST_CHECK_GOTO(t, t->alloc.live - live0 == ((long)after.bytes - (long)base.bytes) /
								  (long)after.node_bytes, out);
		if (rc == 0)
			break;
	}
	ST_CHECK_GOTO(t, rc == 0, out);	/* the sequence eventually ran clean */
out:
	ik_st_alloc_arm(t, 0);
	ik_iova_destroy(d);
out_free:
	st_iova_del(t, d);
}

const struct ik_st_case ik_st_iova_cases[] = {
	{ "iova_alloc_top_down_and_errors", iova_alloc_top_down_and_errors },
	{ "iova_reserve_and_exhaust", iova_reserve_and_exhaust },
	{ "iova_rcache_reuse_and_flush", iova_rcache_reuse_and_flush },
	{ "iova_alloc_failure_rolls_back", iova_alloc_failure_rolls_back },
};
const unsigned ik_st_iova_ncases = IK_ARRAY_SIZE(ik_st_iova_cases);
#else
const struct ik_st_case ik_st_iova_cases[1] = { { NULL, NULL } };
const unsigned ik_st_iova_ncases = 0;
#endif
