/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fuzz_iova - IOVA domains (include/iommukit/iova.h).
 *
 * The input chooses a domain's geometry (granule, start and end pfn, also
 * next to 2^63 and 2^64, the rcache bound and depot size, flags including
 * unknown bits) and then runs a program of operations on it: tree and fast
 * (rcache) allocations and frees, reservations, lookups, iteration, cache
 * flushes, stats, and allocation failures injected through struct fz_alloc.
 *
 * Model: the sorted list of ranges in the tree - allocations (some of them
 * held by an rcache) and reservations.  After every operation:
 *   - the cached set reported by ik_iova_for_each_cached() is reconciled
 *     with the model (a cached range that is no longer reported was returned
 *     to the tree by a flush or a depot trim);
 *   - ik_iova_for_each() must list exactly the model's ranges;
 *   - ik_iova_check() must report no broken invariant.
 * Each operation's result is predicted: argument errors (-EINVAL), -ENOENT
 * for frees of what is not an allocation start, -EBUSY for reservations over
 * allocations, merges of touching reservations, and for every allocation
 * that is not an rcache hit the exact pfn: the highest fitting (and, when
 * asked, size-aligned) range below the limit, before or - when the tree is
 * full and ranges are cached - after the flush the library then does.  An
 * injected allocation failure must give -ENOMEM (or succeed where the call
 * needs no memory) and change nothing.
 */
#include <iommukit/iova.h>
#include "fuzzlib.h"

typedef unsigned __int128 u128;

#define MAX_RANGES 700
#define MAX_OPS 300

enum { K_ALLOC = 0, K_RESV = 1 };

struct mrange {
	uint64_t lo, hi;
	uint8_t kind;
	bool cached;	/* held by an rcache (still allocated in the tree) */
	bool fast;	/* from ik_iova_alloc_fast(): free_fast with `req` */
	bool seen;
	uint64_t req;	/* npages asked for */
};

struct model {
	struct mrange r[MAX_RANGES];
	size_t n, ncached;
	uint64_t start, end, rc_max;
};

static struct model M;
static struct ik_iova_domain D;
static struct fz_alloc FA;

/* ---------------------------------------------------------------- model */

/* Index of the first range with lo >= pfn. */
static uint64_t m_lo(size_t i)
{
	return M.r[i].lo;
}

static size_t m_lower(uint64_t pfn)
{
	return fz_lower(M.n, m_lo, pfn);
}

/* The range containing pfn, or -1. */
static long m_find(uint64_t pfn)
{
	size_t i = m_lower(pfn);

	if (i < M.n && M.r[i].lo == pfn)
		return (long)i;
	if (i > 0 && M.r[i - 1].hi >= pfn)
		return (long)(i - 1);
	return -1;
}

static bool m_overlaps(uint64_t lo, uint64_t hi)
{
	size_t i = m_lower(lo);

	return (i < M.n && M.r[i].lo <= hi) || (i > 0 && M.r[i - 1].hi >= lo);
}

static void m_insert(uint64_t lo, uint64_t hi, uint8_t kind, bool fast, uint64_t req)
{
	size_t i = m_lower(lo);

	FZ_CHECK(lo <= hi && lo >= M.start && hi <= M.end, "range [%#llx, %#llx] outside the domain",
		 (unsigned long long)lo, (unsigned long long)hi);
	FZ_CHECK(i == M.n || M.r[i].lo > hi, "range [%#llx, %#llx] overlaps [%#llx, %#llx]",
		 (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)M.r[i].lo,
		 (unsigned long long)M.r[i].hi);
	FZ_CHECK(i == 0 || M.r[i - 1].hi < lo, "range [%#llx, %#llx] overlaps [%#llx, %#llx]",
		 (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)M.r[i - 1].lo,
		 (unsigned long long)M.r[i - 1].hi);
	FZ_CHECK(M.n < MAX_RANGES, "model full");
	memmove(&M.r[i + 1], &M.r[i], (M.n - i) * sizeof(M.r[0]));
	M.r[i].lo = lo;
	M.r[i].hi = hi;
	M.r[i].kind = kind;
	M.r[i].cached = false;
	M.r[i].fast = fast;
	M.r[i].seen = false;
	M.r[i].req = req;
	M.n++;
}

static void m_remove(size_t i)
{
	if (M.r[i].cached)
		M.ncached--;
	memmove(&M.r[i], &M.r[i + 1], (M.n - i - 1) * sizeof(M.r[0]));
	M.n--;
}

static bool m_cached_any(void)
{
	return M.ncached != 0;
}

static uint64_t pow2_up(uint64_t n)
{
	return n <= 1 ? 1 : (uint64_t)1 << (64 - __builtin_clzll(n - 1));
}

/* The highest placement of n pages (aligned: to pow2_up(n)) with the last
 * pfn <= limit, in the model's free space. */
static bool m_fit(uint64_t n, uint64_t limit, bool aligned, uint64_t *out)
{
	u128 L = limit < M.end ? limit : M.end, mask = aligned ? pow2_up(n) - 1 : 0;

	/* Gap i lies between range i - 1 and range i; from the top down, so
	 * the first fit is the highest. */
	for (size_t i = M.n + 1; i-- > 0;) {
		u128 a = i == 0 ? M.start : (u128)M.r[i - 1].hi + 1;
		u128 b = i == M.n ? M.end : (u128)M.r[i].lo - 1;
		u128 s;

		if (i < M.n && M.r[i].lo == M.start)
			continue; /* no gap below a range at the start */
		if (b > L)
			b = L;
		if (b < a || b - a + 1 < n)
			continue;
		s = (b - (n - 1)) & ~mask;
		if (s >= a) {
			*out = (uint64_t)s;
			return true;
		}
	}
	return false;
}

static uint64_t m_largest(uint64_t limit)
{
	u128 L = limit < M.end ? limit : M.end, best = 0;

	for (size_t i = 0; i <= M.n; i++) {
		u128 a = i == 0 ? M.start : (u128)M.r[i - 1].hi + 1;
		u128 b = i == M.n ? M.end : (u128)M.r[i].lo - 1;

		if (i < M.n && M.r[i].lo == M.start)
			continue;
		if (b > L)
			b = L;
		if (b >= a && b - a + 1 > best)
			best = b - a + 1;
	}
	return (uint64_t)best;
}

/* ---------------------------------------------------------------- reconciling */

static int cached_cb(void *ctx, ik_u64 pfn, ik_u64 pages)
{
	size_t i = m_lower(pfn);

	(void)ctx;
	FZ_CHECK(i < M.n && M.r[i].lo == pfn, "cached pfn %#llx is not the start of a range",
		 (unsigned long long)pfn);
	FZ_CHECK(M.r[i].kind == K_ALLOC && M.r[i].cached && !M.r[i].seen,
		 "cached pfn %#llx: kind %u, model cached %d, seen %d", (unsigned long long)pfn,
		 M.r[i].kind, M.r[i].cached, M.r[i].seen);
	FZ_CHECK(M.r[i].hi - M.r[i].lo + 1 == pages, "cached pfn %#llx: %llu pages, range has %llu",
		 (unsigned long long)pfn, (unsigned long long)pages,
		 (unsigned long long)(M.r[i].hi - M.r[i].lo + 1));
	M.r[i].seen = true;
	return 0;
}

/* What the rcaches hold now; cached ranges no longer there went back to the
 * tree (flush, trim, or a free_fast that found no magazine). */
static void sync_cache(void)
{
	size_t i;

	for (i = 0; i < M.n; i++)
		M.r[i].seen = false;
	FZ_CHECK(ik_iova_for_each_cached(&D, cached_cb, NULL) == 0, "for_each_cached failed");
	for (i = M.n; i-- > 0;)
		if (M.r[i].cached && !M.r[i].seen)
			m_remove(i);
}

struct walk_ctx {
	size_t i;
};

static int tree_cb(void *ctx, const struct ik_iova_range *r)
{
	struct walk_ctx *w = (struct walk_ctx *)ctx;
	const struct mrange *m;

	FZ_CHECK(w->i < M.n, "tree has more ranges than the model (%zu): [%#llx, %#llx]", M.n,
		 (unsigned long long)r->lo, (unsigned long long)r->hi);
	m = &M.r[w->i++];
	FZ_CHECK(r->lo == m->lo && r->hi == m->hi && r->reserved == (m->kind == K_RESV),
		 "tree range [%#llx, %#llx]%s, model [%#llx, %#llx]%s", (unsigned long long)r->lo,
		 (unsigned long long)r->hi, r->reserved ? " reserved" : "",
		 (unsigned long long)m->lo, (unsigned long long)m->hi,
		 m->kind == K_RESV ? " reserved" : "");
	return 0;
}

static void check_all(void)
{
	struct walk_ctx w = { 0 };
	int err;

	fz_alloc_arm(&FA, 0);
	sync_cache();
	FZ_CHECK(ik_iova_for_each(&D, tree_cb, &w) == 0, "for_each failed");
	FZ_CHECK(w.i == M.n, "tree has %zu ranges, model %zu", w.i, M.n);
	err = ik_iova_check(&D);
	FZ_CHECK(err == 0, "ik_iova_check: %d (%s)", err, ik_iova_check_str(err));
}

/* ---------------------------------------------------------------- inputs */

static uint64_t gen_npages(struct fz *f)
{
	uint8_t k = fz_u8(f);

	if (k < 160)
		return 1 + (k & 15);
	if (k < 200)
		return 1 + fz_u8(f);
	if (k < 230)
		return 1 + (fz_u16(f) & 0x3ff);
	if (k < 250)
		return (uint64_t)1 << (fz_u8(f) % 64);
	return fz_edgy(f);
}

static uint64_t gen_pfn(struct fz *f)
{
	uint8_t k = fz_u8(f);
	u128 span = (u128)M.end - M.start + 1;

	if (k < 100 && M.n) {
		const struct mrange *r = &M.r[fz_below(f, M.n)];

		switch (k & 3) {
		case 0: return r->lo;
		case 1: return r->hi;
		case 2: return r->hi + 1;
		default: return r->lo + (r->hi - r->lo) / 2;
		}
	}
	if (k < 200)
		return M.start + (uint64_t)(fz_u64(f) % span);
	if (k < 220)
		return M.end - (fz_u8(f) % 4);
	if (k < 240)
		return M.start + (fz_u8(f) % 4);
	return fz_edgy(f);
}

static uint64_t gen_limit(struct fz *f)
{
	uint8_t k = fz_u8(f);

	if (k < 120)
		return ~0ull;
	if (k < 150)
		return M.end;
	return gen_pfn(f);
}

/* ---------------------------------------------------------------- operations */

/* A tree allocation (ik_iova_alloc semantics, also the fast path's miss):
 * check result `err`/`pfn` against the model state before the call;
 * `flushed`: the call flushed the rcaches and tried again (stats). */
static void expect_tree_alloc(int err, uint64_t pfn, uint64_t n, uint64_t limit, bool aligned,
			      bool no_flush, bool fail, bool flushed, const char *what)
{
	uint64_t want;
	bool pre = m_fit(n, limit, aligned, &want), cached = m_cached_any();

	if (flushed) {
		FZ_CHECK(!pre && !no_flush, "%s(%llu pages, limit %#llx): flushed although %s", what,
			 (unsigned long long)n, (unsigned long long)limit,
			 pre ? "it fit" : "asked not to");
		sync_cache();
		FZ_CHECK(!m_cached_any(), "%s: the flush left ranges cached", what);
		pre = m_fit(n, limit, aligned, &want);
	} else {
		FZ_CHECK(pre || no_flush || !cached,
			 "%s(%llu pages, limit %#llx): -ENOSPC in the tree but no flush of the cached ranges",
			 what, (unsigned long long)n, (unsigned long long)limit);
	}
	if (!pre) {
		FZ_CHECK(err == -ENOSPC, "%s(%llu pages, limit %#llx%s): %d, model: no room",
			 what, (unsigned long long)n, (unsigned long long)limit,
			 aligned ? ", aligned" : "", err);
		return;
	}
	if (fail && err == -ENOMEM)
		return;
	FZ_CHECK(err == 0, "%s(%llu pages, limit %#llx%s): %d, model fits at %#llx", what,
		 (unsigned long long)n, (unsigned long long)limit, aligned ? ", aligned" : "", err,
		 (unsigned long long)want);
	FZ_CHECK(pfn == want, "%s(%llu pages, limit %#llx%s): pfn %#llx, highest fit is %#llx",
		 what, (unsigned long long)n, (unsigned long long)limit, aligned ? ", aligned" : "",
		 (unsigned long long)pfn, (unsigned long long)want);
}

/* Whether the call must flush the rcaches and retry: nothing fits in the
 * tree, but ranges are cached. */
static bool expect_flush(uint64_t n, uint64_t limit, bool aligned, bool no_flush)
{
	uint64_t want;

	return !no_flush && m_cached_any() && !m_fit(n, limit, aligned, &want);
}

static bool alloc_args_ok(uint64_t n, uint64_t limit)
{
	return n != 0 && n - 1 <= M.end - M.start && limit >= M.start;
}

static void op_alloc(struct fz *f, bool fail)
{
	uint64_t n = gen_npages(f), limit = gen_limit(f), pfn = 0xdead;
	uint8_t k = fz_u8(f);
	unsigned flags = (k & 1 ? IK_IOVA_SIZE_ALIGNED : 0) | (k & 2 ? IK_IOVA_NO_FLUSH : 0);
	int err;

	if (k >= 250)
		flags |= 4u << (k & 3);
	err = ik_iova_alloc(&D, n, limit, flags, &pfn);
	if (!alloc_args_ok(n, limit) || (flags & ~3u)) {
		FZ_CHECK(err == -EINVAL, "alloc(%llu, %#llx, %#x) = %d, expected -EINVAL",
			 (unsigned long long)n, (unsigned long long)limit, flags, err);
		return;
	}
	expect_tree_alloc(err, pfn, n, limit, flags & 1, flags & 2, fail, expect_flush(n, limit, flags & 1, flags & 2),
			  "alloc");
	if (err == 0)
		m_insert(pfn, pfn + n - 1, K_ALLOC, false, n);
}

static bool alloc_fast_one(uint64_t n, uint64_t limit, bool fail, bool check_tree_fit,
			   uint64_t *got)
{
	uint64_t pfn = 0xdead, size = n - 1 < M.rc_max ? pow2_up(n) : n, want;
	bool flush = check_tree_fit && n && alloc_args_ok(size, limit) &&
		     expect_flush(size, limit, true, false);
	int err = ik_iova_alloc_fast(&D, n, limit, &pfn);
	long i;

	if (n == 0) {
		FZ_CHECK(err == -EINVAL, "alloc_fast(0) = %d", err);
		return false;
	}
	i = err == 0 ? m_find(pfn) : -1;
	if (i >= 0 && M.r[i].cached && M.r[i].lo == pfn && M.r[i].hi - M.r[i].lo + 1 == size) {
		/* An rcache hit: a cached range of the class size, under the
		 * limit, now in use again - or, when nothing fitted in the
		 * tree, the flush freed it and the tree gave it out again. */
		FZ_CHECK(M.r[i].lo == pfn && M.r[i].hi - M.r[i].lo + 1 == size && M.r[i].hi <= limit,
			 "alloc_fast(%llu, %#llx) = %#llx, in cached [%#llx, %#llx]",
			 (unsigned long long)n, (unsigned long long)limit, (unsigned long long)pfn,
			 (unsigned long long)M.r[i].lo, (unsigned long long)M.r[i].hi);
		M.r[i].cached = false;
		M.ncached--;
		M.r[i].req = n;
		M.r[i].fast = true;
		*got = pfn;
		if (flush) {
			sync_cache();
			if (!m_cached_any()) {
				/* flushed (or the only cached range was hit): it is
				 * the highest fit of the flushed space either way */
				i = m_find(pfn);
				m_remove((size_t)i);
				FZ_CHECK(m_fit(size, limit, true, &want) && want == pfn,
					 "alloc_fast(%llu, %#llx) after a flush: %#llx, highest fit %#llx",
					 (unsigned long long)n, (unsigned long long)limit,
					 (unsigned long long)pfn, (unsigned long long)want);
				m_insert(pfn, pfn + size - 1, K_ALLOC, true, n);
			}
		}
		return true;
	}
	if (!alloc_args_ok(size, limit)) {
		FZ_CHECK(err == -EINVAL, "alloc_fast(%llu, %#llx) = %d, expected -EINVAL",
			 (unsigned long long)n, (unsigned long long)limit, err);
		return false;
	}
	if (check_tree_fit)
		expect_tree_alloc(err, pfn, size, limit, true, false, fail, flush, "alloc_fast");
	else if (err || m_overlaps(pfn, pfn + size - 1))
		sync_cache(); /* a flush came first */
	if (err)
		return false;
	FZ_CHECK(!(pfn & (pow2_up(size) - 1)), "alloc_fast: pfn %#llx not aligned to %llu",
		 (unsigned long long)pfn, (unsigned long long)pow2_up(size));
	m_insert(pfn, pfn + size - 1, K_ALLOC, true, n);
	*got = pfn;
	return true;
}

static void op_alloc_fast(struct fz *f, bool fail)
{
	uint64_t n = fz_u8(f) & 1 ? 1 + (fz_u8(f) % (M.rc_max ? M.rc_max : 8)) : gen_npages(f);

	uint64_t pfn;

	alloc_fast_one(n, gen_limit(f), fail, true, &pfn);
}

/* A live tree allocation not held by a cache, preferring fast ones. */
static long pick_alloc(struct fz *f, bool want_fast)
{
	size_t start, i;

	if (!M.n)
		return -1;
	start = fz_below(f, M.n);
	for (i = 0; i < M.n; i++) {
		size_t j = (start + i) % M.n;

		if (M.r[j].kind == K_ALLOC && !M.r[j].cached && (!want_fast || M.r[j].fast))
			return (long)j;
	}
	return -1;
}

static void op_free(struct fz *f)
{
	uint8_t k = fz_u8(f);
	long i = k < 200 ? pick_alloc(f, false) : -1;
	uint64_t pfn = i >= 0 ? M.r[i].lo : gen_pfn(f);
	long j = m_find(pfn);
	int err;

	/* Never free a cached range here: a double free the call cannot see. */
	if (j >= 0 && M.r[j].cached)
		return;
	err = ik_iova_free(&D, pfn);
	if (j >= 0 && M.r[j].kind == K_ALLOC && M.r[j].lo == pfn) {
		FZ_CHECK(err == 0, "free(%#llx) of an allocation = %d", (unsigned long long)pfn, err);
		m_remove((size_t)j);
	} else {
		FZ_CHECK(err == -ENOENT, "free(%#llx), not an allocation start, = %d",
			 (unsigned long long)pfn, err);
	}
}

static void free_fast_one(size_t i)
{
	uint64_t pfn = M.r[i].lo, req = M.r[i].req;
	int err = ik_iova_free_fast(&D, pfn, req);

	FZ_CHECK(err == 0, "free_fast(%#llx, %llu) = %d", (unsigned long long)pfn,
		 (unsigned long long)req, err);
	if (req - 1 < M.rc_max) {
		M.r[i].cached = true; /* or freed to the tree: sync_cache() tells */
		M.ncached++;
	}
	else
		m_remove(i);
}

static void op_free_fast(struct fz *f)
{
	long i = pick_alloc(f, true);

	if (fz_u8(f) >= 240) {
		/* Sizes the caches do not take go to ik_iova_free(). */
		uint64_t pfn = gen_pfn(f), n = M.rc_max + 1 + fz_u8(f);
		long j = m_find(pfn);
		int err;

		if (j >= 0 && M.r[j].cached)
			return;
		err = ik_iova_free_fast(&D, pfn, n);
		if (j >= 0 && M.r[j].kind == K_ALLOC && M.r[j].lo == pfn) {
			FZ_CHECK(err == 0, "free_fast(%#llx, %llu) = %d", (unsigned long long)pfn,
				 (unsigned long long)n, err);
			m_remove((size_t)j);
		} else {
			FZ_CHECK(err == -ENOENT, "free_fast(%#llx, %llu) = %d, expected -ENOENT",
				 (unsigned long long)pfn, (unsigned long long)n, err);
		}
		return;
	}
	if (fz_u8(f) == 0) {
		FZ_CHECK(ik_iova_free_fast(&D, 0, 0) == -EINVAL, "free_fast(npages 0)");
		return;
	}
	if (i >= 0)
		free_fast_one((size_t)i);
}

static void op_reserve(struct fz *f, bool fail)
{
	uint64_t lo = gen_pfn(f), hi, ulo, uhi;
	uint8_t k = fz_u8(f);
	u128 qlo, qhi;
	size_t i, first = M.n, nmerge = 0;
	int err;

	hi = k < 100 ? lo + (k & 31) : k < 200 ? gen_pfn(f) : lo + fz_u16(f);
	err = ik_iova_reserve(&D, lo, hi);
	if (lo > hi || lo < M.start || hi > M.end) {
		FZ_CHECK(err == -EINVAL, "reserve(%#llx, %#llx) = %d, expected -EINVAL",
			 (unsigned long long)lo, (unsigned long long)hi, err);
		return;
	}
	qlo = lo > M.start ? (u128)lo - 1 : lo;
	qhi = hi < M.end ? (u128)hi + 1 : hi;
	ulo = lo;
	uhi = hi;
	for (i = 0; i < M.n; i++) {
		const struct mrange *r = &M.r[i];

		if ((u128)r->hi < qlo || (u128)r->lo > qhi)
			continue;
		if (r->kind == K_ALLOC) {
			if (r->lo <= hi && r->hi >= lo) {
				FZ_CHECK(err == -EBUSY, "reserve(%#llx, %#llx) over an allocation = %d",
					 (unsigned long long)lo, (unsigned long long)hi, err);
				return;
			}
			continue;
		}
		if (first == M.n)
			first = i;
		nmerge++;
		if (r->lo < ulo)
			ulo = r->lo;
		if (r->hi > uhi)
			uhi = r->hi;
	}
	if (fail && nmerge == 0 && err == -ENOMEM)
		return;
	FZ_CHECK(err == 0, "reserve(%#llx, %#llx) = %d", (unsigned long long)lo,
		 (unsigned long long)hi, err);
	for (i = M.n; i-- > 0;) {
		const struct mrange *r = &M.r[i];

		if (r->kind == K_RESV && (u128)r->hi >= qlo && (u128)r->lo <= qhi)
			m_remove(i);
	}
	m_insert(ulo, uhi, K_RESV, false, 0);
}

static void op_find(struct fz *f)
{
	uint64_t pfn = gen_pfn(f);
	struct ik_iova_range r = { 7, 7, true };
	long i = m_find(pfn);
	int err = ik_iova_find(&D, pfn, &r);

	if (i < 0) {
		FZ_CHECK(err == -ENOENT, "find(%#llx) of a free pfn = %d", (unsigned long long)pfn, err);
		return;
	}
	FZ_CHECK(err == 0 && r.lo == M.r[i].lo && r.hi == M.r[i].hi &&
			 r.reserved == (M.r[i].kind == K_RESV),
		 "find(%#llx) = %d [%#llx, %#llx], model [%#llx, %#llx]", (unsigned long long)pfn, err,
		 (unsigned long long)r.lo, (unsigned long long)r.hi, (unsigned long long)M.r[i].lo,
		 (unsigned long long)M.r[i].hi);
}

static void op_next(struct fz *f)
{
	struct ik_iova_range r;
	uint64_t from = fz_u8(f) & 1 ? M.start : gen_pfn(f);
	size_t i = m_lower(from), steps = 0;

	for (;;) {
		int err = ik_iova_next(&D, from, &r);

		if (i == M.n) {
			FZ_CHECK(err == -ENOENT, "next(%#llx) past the last range = %d",
				 (unsigned long long)from, err);
			return;
		}
		FZ_CHECK(err == 0 && r.lo == M.r[i].lo && r.hi == M.r[i].hi &&
				 r.reserved == (M.r[i].kind == K_RESV),
			 "next(%#llx) = %d [%#llx, %#llx], model [%#llx, %#llx]",
			 (unsigned long long)from, err, (unsigned long long)r.lo,
			 (unsigned long long)r.hi, (unsigned long long)M.r[i].lo,
			 (unsigned long long)M.r[i].hi);
		if (r.hi == M.end || ++steps > 64)
			return;
		from = r.hi + 1;
		i++;
	}
}

static void op_largest(struct fz *f)
{
	uint64_t limit = gen_limit(f), pages = 0x77;
	int err = ik_iova_largest_free(&D, limit, &pages);

	if (limit < M.start) {
		FZ_CHECK(err == -EINVAL, "largest_free(limit below start) = %d", err);
		return;
	}
	FZ_CHECK(err == 0 && pages == m_largest(limit), "largest_free(%#llx) = %d, %llu; model %llu",
		 (unsigned long long)limit, err, (unsigned long long)pages,
		 (unsigned long long)m_largest(limit));
}

static void op_stats(void)
{
	struct ik_iova_stats st;
	uint64_t ranges = 0, pages = 0, rr = 0, rp = 0, cr = 0, cp = 0;

	sync_cache();
	for (size_t i = 0; i < M.n; i++) {
		uint64_t p = M.r[i].hi - M.r[i].lo + 1;

		ranges++;
		pages += p;
		if (M.r[i].kind == K_RESV) {
			rr++;
			rp += p;
		}
		if (M.r[i].cached) {
			cr++;
			cp += p;
		}
	}
	ik_iova_stats(&D, &st);
	FZ_CHECK(st.ranges == ranges && st.pages == pages && st.reserved_ranges == rr &&
			 st.reserved_pages == rp && st.cached_ranges == cr && st.cached_pages == cp,
		 "stats: ranges %llu/%llu pages %llu/%llu resv %llu/%llu cached %llu/%llu",
		 (unsigned long long)st.ranges, (unsigned long long)ranges,
		 (unsigned long long)st.pages, (unsigned long long)pages,
		 (unsigned long long)st.reserved_ranges, (unsigned long long)rr,
		 (unsigned long long)st.cached_ranges, (unsigned long long)cr);
	FZ_CHECK(st.largest_gap == m_largest(~0ull), "stats: largest gap %llu, model %llu",
		 (unsigned long long)st.largest_gap, (unsigned long long)m_largest(~0ull));
}

/* Many fast allocations of one class, then their frees: fills magazines, the
 * depot, and trims it. */
static void op_bulk(struct fz *f)
{
	uint64_t n = 1 + fz_u8(f) % (M.rc_max ? M.rc_max : 4), limit = gen_limit(f);
	unsigned count = 1 + fz_u16(f) % 300, done = 0;
	static uint64_t got[300];

	for (unsigned c = 0; c < count && M.n < MAX_RANGES - 2; c++) {
		if (!alloc_fast_one(n, limit, false, false, &got[done]))
			break;
		done++;
	}
	for (unsigned c = 0; c < done; c++) {
		long i = m_find(got[c]);

		FZ_CHECK(i >= 0 && M.r[i].lo == got[c] && !M.r[i].cached && M.r[i].fast,
			 "bulk: range at %#llx lost", (unsigned long long)got[c]);
		/* No reconciling in between: these frees only add to the
		 * caches (a trim returns cached ranges, which the next
		 * sync_cache() notices). */
		free_fast_one((size_t)i);
	}
}

/* ---------------------------------------------------------------- driver */

static int setup(struct fz *f, struct ik_iova_config *cfg)
{
	uint8_t k = fz_u8(f), g = fz_u8(f);
	uint64_t span;

	memset(cfg, 0, sizeof(*cfg));
	cfg->granule = g < 250 ? 1ull << (g % 64) : g; /* not a power of two sometimes */
	switch (k & 7) {
	case 0:
		cfg->start_pfn = fz_u8(f);
		break;
	case 1:
		cfg->start_pfn = (1ull << 63) - fz_u16(f);
		break;
	case 2:
		cfg->start_pfn = ~0ull - fz_u16(f);
		break;
	case 3:
		cfg->start_pfn = fz_edgy(f);
		break;
	default:
		cfg->start_pfn = fz_u32(f);
		break;
	}
	switch ((k >> 3) & 7) {
	case 0:
		span = fz_u16(f);
		break;
	case 1:
		span = (1ull << 63) - 1 - fz_u8(f) % 2; /* the largest domains */
		break;
	case 2:
		span = (1ull << 63) + fz_u8(f) % 2; /* one pfn too many */
		break;
	case 3:
		span = fz_edgy(f);
		break;
	default:
		span = fz_u8(f) + 64ull * fz_u8(f);
		break;
	}
	cfg->end_pfn = cfg->start_pfn + span;
	if (cfg->end_pfn < cfg->start_pfn && !(k & 0x80))
		cfg->end_pfn = ~0ull; /* up to the top of the space */
	g = fz_u8(f);
	cfg->rcache_max_pages = g < 200 ? (g < 20 ? 0 : 1ull << (g % 8)) : g < 250 ? 1ull << (g % 24) : g;
	cfg->depot_max = fz_u8(f) % 4;
	g = fz_u8(f);
	cfg->flags = g < 200 ? 0 : g < 250 ? IK_IOVA_CFG_NO_RCACHE : g;
	cfg->allocator = &FA.a;
	return 0;
}

static bool config_ok(const struct ik_iova_config *c)
{
	uint64_t rc = c->rcache_max_pages ? c->rcache_max_pages : IK_IOVA_RCACHE_MAX_PAGES;

	if (!IK_IS_POW2(c->granule) || c->start_pfn > c->end_pfn ||
	    c->end_pfn - c->start_pfn > IK_IOVA_MAX_PAGES - 1 || (c->flags & ~IK_IOVA_CFG_NO_RCACHE))
		return false;
	if (!(c->flags & IK_IOVA_CFG_NO_RCACHE) && (!IK_IS_POW2(rc) || rc > (1ull << 20)))
		return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ik_iova_config cfg;
	struct fz f;
	long fail_at;
	int err;

	fz_init(&f, data, size);
	fz_alloc_init(&FA);
	setup(&f, &cfg);
	memset(&D, 0, sizeof(D));
	fail_at = fz_u8(&f) % 4; /* init's two allocations, sometimes failing */
	fz_alloc_arm(&FA, fail_at);
	err = ik_iova_init(&D, &cfg);
	if (!config_ok(&cfg)) {
		FZ_CHECK(err == -EINVAL, "init of a bad config (granule %#llx, [%#llx, %#llx], rc %llu, flags %#x) = %d",
			 (unsigned long long)cfg.granule, (unsigned long long)cfg.start_pfn,
			 (unsigned long long)cfg.end_pfn, (unsigned long long)cfg.rcache_max_pages,
			 cfg.flags, err);
		FZ_CHECK(FA.live == 0, "a failed init left %ld blocks", FA.live);
		return 0;
	}
	if (err == -ENOMEM) {
		FZ_CHECK(FA.failures == 1 && FA.live == 0, "init -ENOMEM: %ld failures, %ld blocks live",
			 FA.failures, FA.live);
		fz_alloc_arm(&FA, 0);
		memset(&D, 0, sizeof(D));
		err = ik_iova_init(&D, &cfg);
	}
	FZ_CHECK(err == 0, "init of a good config = %d", err);
	fz_alloc_arm(&FA, 0);
	FZ_CHECK(ik_iova_init(&D, &cfg) == -EBUSY, "re-init of a live domain is not -EBUSY");

	memset(&M, 0, sizeof(M));
	M.start = cfg.start_pfn;
	M.end = cfg.end_pfn;
	M.rc_max = (cfg.flags & IK_IOVA_CFG_NO_RCACHE) ? 0
		   : cfg.rcache_max_pages			  ? cfg.rcache_max_pages
								  : IK_IOVA_RCACHE_MAX_PAGES;
	check_all();

	for (unsigned ops = 0; fz_left(&f) && ops < MAX_OPS; ops++) {
		uint8_t op = fz_u8(&f);
		bool fail = false;

		if (M.n >= MAX_RANGES - 4)
			op = 2; /* make room */
		if ((op & 0xf0) == 0xf0) {
			/* Arm a failure for this operation: the n-th allocation. */
			fail = true;
			fz_alloc_arm(&FA, 1 + (op & 3));
			op = fz_u8(&f);
		}
		switch (op % 14) {
		case 0:
		case 1: op_alloc(&f, fail); break;
		case 2: op_free(&f); break;
		case 3:
		case 4: op_alloc_fast(&f, fail); break;
		case 5: op_free_fast(&f); break;
		case 6: op_reserve(&f, fail); break;
		case 7: op_find(&f); break;
		case 8: op_next(&f); break;
		case 9: {
			unsigned cpu = fz_u8(&f);
			unsigned ncpu = IK_ENV_NR_CPUS();
			int e = ik_iova_flush_cpu(&D, cpu % (ncpu + 1));

			FZ_CHECK(e == (cpu % (ncpu + 1) < ncpu ? 0 : -EINVAL), "flush_cpu = %d", e);
			break;
		}
		case 10: ik_iova_flush_all(&D); break;
		case 11: op_largest(&f); break;
		case 12: op_stats(); break;
		default: op_bulk(&f); break;
		}
		check_all();
	}

	/* Flush and free everything the model knows; then the domain is empty
	 * but for reservations. */
	ik_iova_flush_all(&D);
	check_all();
	for (size_t i = M.n; i-- > 0;) {
		if (M.r[i].kind != K_ALLOC)
			continue;
		FZ_CHECK(ik_iova_free(&D, M.r[i].lo) == 0, "final free of %#llx",
			 (unsigned long long)M.r[i].lo);
		m_remove(i);
	}
	check_all();
	ik_iova_destroy(&D);
	FZ_CHECK(FA.live == 0, "destroy left %ld blocks (%ld bytes)", FA.live, FA.live_bytes);
	return 0;
}
