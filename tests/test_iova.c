/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iova: the tree against a bitmap model (exact top-down placement), tiny
 * spaces exhaustively, limit and alignment edges up to the top of a 64-bit
 * space, every error with the domain unchanged, allocation failure at every
 * allocation point of a long sequence, the range caches, and a multi-threaded
 * stress with the checker at the end.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <iommukit/iova.h>
#include "testlib.h"
#include "iova_inline.h"
#include "iova_mt.h"

/* Single-threaded model runs: ThreadSanitizer slows every access down and
 * finds nothing in them that the threaded test does not cover, so they run
 * at 1/8 of their size there. */
static long model_iters(long n)
{
	return ik_test_iters(IK_TEST_TSAN ? n / 8 : n);
}

static void cfg_init(struct ik_iova_config *c, uint64_t start, uint64_t end)
{
	memset(c, 0, sizeof(*c));
	c->granule = 4096;
	c->start_pfn = start;
	c->end_pfn = end;
}

static void dom_init(struct ik_iova_domain *d, uint64_t start, uint64_t end, unsigned flags,
		     const struct ik_allocator *a)
{
	struct ik_iova_config c;

	cfg_init(&c, start, end);
	c.flags = flags;
	c.allocator = a;
	ck_assert_int_eq(ik_iova_init(d, &c), 0);
}

/* Keep the test thread on one CPU (the first it may use) so that the rcache
 * slot it uses is fixed; returns that CPU. */
static unsigned pin_cpu0(void)
{
	cpu_set_t set;
	unsigned cpu = 0;

	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set))
			cpu++;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) == 0)
			return cpu % IK_ENV_NR_CPUS();
	}
	return 0;
}

/* ---------------------------------------------------------------- snapshot */

/* A hash of everything observable: every range, every cached range, stats. */
struct snap {
	uint64_t h;
	uint64_t n;
};

static void mixin(struct snap *s, uint64_t v)
{
	s->h = (s->h ^ v) * 0x100000001b3ull;
	s->h ^= s->h >> 29;
	s->n++;
}

static int snap_range(void *ctx, const struct ik_iova_range *r)
{
	mixin(ctx, r->lo);
	mixin(ctx, r->hi);
	mixin(ctx, r->reserved);
	return 0;
}

struct cached_list {
	uint64_t *pfn, *pages;
	size_t n, cap;
};

static int collect_cached(void *ctx, ik_u64 pfn, ik_u64 pages)
{
	struct cached_list *l = ctx;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->pfn = realloc(l->pfn, l->cap * sizeof(*l->pfn));
		l->pages = realloc(l->pages, l->cap * sizeof(*l->pages));
	}
	l->pfn[l->n] = pfn;
	l->pages[l->n++] = pages;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static struct snap snapshot(struct ik_iova_domain *d)
{
	struct snap s = { 0xcbf29ce484222325ull, 0 };
	struct cached_list cl = { NULL, NULL, 0, 0 };
	struct ik_iova_stats st;

	ik_iova_for_each(d, snap_range, &s);
	ik_iova_for_each_cached(d, collect_cached, &cl);
	if (cl.n)
		qsort(cl.pfn, cl.n, sizeof(uint64_t), cmp_u64);
	for (size_t i = 0; i < cl.n; i++)
		mixin(&s, cl.pfn[i]);
	free(cl.pfn);
	free(cl.pages);
	ik_iova_stats(d, &st);
	mixin(&s, st.ranges);
	mixin(&s, st.pages);
	mixin(&s, st.reserved_ranges);
	mixin(&s, st.reserved_pages);
	mixin(&s, st.largest_gap);
	mixin(&s, st.cached_ranges);
	mixin(&s, st.cached_pages);
	return s;
}

#define SNAP_EQ(a, b) IK_REQUIRE((a).h == (b).h && (a).n == (b).n)

/* ---------------------------------------------------------------- bitmap model */

enum { FREE = 0, ALLOC = 1, RESV = 2 };

struct model {
	uint64_t start, end, size;
	uint8_t *st;	   /* per pfn: FREE/ALLOC/RESV */
	uint64_t *bits;	   /* 1 = occupied */
	uint64_t *astart;  /* per pfn of an allocation: its first pfn */
	uint64_t *alen;	   /* per first pfn (index): length */
	uint64_t *live;	   /* allocation starts */
	size_t nlive;
	uint64_t ranges, pages, rranges, rpages;
};

static void model_init(struct model *m, uint64_t start, uint64_t end)
{
	m->start = start;
	m->end = end;
	m->size = end - start + 1;
	m->st = calloc(m->size, 1);
	m->bits = calloc((m->size + 63) / 64, 8);
	m->astart = calloc(m->size, 8);
	m->alen = calloc(m->size, 8);
	m->live = calloc(m->size, 8);
	m->nlive = 0;
	m->ranges = m->pages = m->rranges = m->rpages = 0;
}

static void model_free(struct model *m)
{
	free(m->st);
	free(m->bits);
	free(m->astart);
	free(m->alen);
	free(m->live);
}

static void mset(struct model *m, uint64_t pfn, int v)
{
	uint64_t i = pfn - m->start;

	m->st[i] = (uint8_t)v;
	if (v)
		m->bits[i / 64] |= 1ull << (i % 64);
	else
		m->bits[i / 64] &= ~(1ull << (i % 64));
}

/* Highest index <= i whose bit equals `occ`, or -1. */
static int64_t mscan(const struct model *m, int64_t i, bool occ)
{
	while (i >= 0) {
		uint64_t w = m->bits[i / 64];
		unsigned b = (unsigned)(i % 64);

		if (!occ)
			w = ~w;
		w &= (b == 63) ? ~0ull : ((1ull << (b + 1)) - 1);
		if (w)
			return (i / 64) * 64 + 63 - __builtin_clzll(w);
		i = (i / 64) * 64 - 1;
	}
	return -1;
}

/* Where a top-down allocation must land, per the spec; false: -ENOSPC. */
static bool model_place(const struct model *m, uint64_t n, bool aligned, uint64_t limit,
			uint64_t *out)
{
	uint64_t align = 1;
	int64_t pos;

	if (aligned)
		while (align < n)
			align <<= 1;
	if (limit > m->end)
		limit = m->end;
	pos = (int64_t)(limit - m->start);
	while (pos >= 0) {
		int64_t b = mscan(m, pos, false), a;
		uint64_t ga, gb, s;

		if (b < 0)
			return false;
		a = mscan(m, b, true) + 1;
		ga = m->start + (uint64_t)a;
		gb = m->start + (uint64_t)b;
		if (gb - ga + 1 >= n) {
			s = (gb - n + 1) & ~(align - 1);
			if (s >= ga) {
				*out = s;
				return true;
			}
		}
		pos = a - 1;
	}
	return false;
}

static void model_alloc(struct model *m, uint64_t s, uint64_t n)
{
	for (uint64_t k = 0; k < n; k++) {
		uint64_t p = s + k;

		IK_REQUIRE(m->st[p - m->start] == FREE);
		mset(m, p, ALLOC);
		m->astart[p - m->start] = s;
	}
	m->alen[s - m->start] = n;
	m->live[m->nlive++] = s;
	m->ranges++;
	m->pages += n;
}

static void model_free_at(struct model *m, size_t li)
{
	uint64_t s = m->live[li], n = m->alen[s - m->start];

	for (uint64_t k = 0; k < n; k++)
		mset(m, s + k, FREE);
	m->alen[s - m->start] = 0;
	m->live[li] = m->live[--m->nlive];
	m->ranges--;
	m->pages -= n;
}

/* Expected result of reserve(lo, hi) on the model; applies it. */
static int model_reserve(struct model *m, uint64_t lo, uint64_t hi)
{
	uint64_t p;

	if (lo > hi || lo < m->start || hi > m->end)
		return -EINVAL;
	for (p = lo - m->start; p <= hi - m->start; p++)
		if (m->st[p] == ALLOC)
			return -EBUSY;
	for (p = lo - m->start; p <= hi - m->start; p++)
		mset(m, m->start + p, RESV);
	return 0;
}

/* Recount reserved runs (adjacent reservations are one range). */
static void model_count_resv(struct model *m)
{
	m->rranges = m->rpages = 0;
	for (uint64_t i = 0; i < m->size; i++) {
		if (m->st[i] != RESV)
			continue;
		m->rpages++;
		if (i == 0 || m->st[i - 1] != RESV)
			m->rranges++;
	}
}

/* Expected ik_iova_find(). */
static int model_find(const struct model *m, uint64_t pfn, struct ik_iova_range *r)
{
	uint64_t i;

	if (pfn < m->start || pfn > m->end)
		return -ENOENT;
	i = pfn - m->start;
	if (m->st[i] == FREE)
		return -ENOENT;
	if (m->st[i] == ALLOC) {
		r->lo = m->astart[i];
		r->hi = r->lo + m->alen[r->lo - m->start] - 1;
		r->reserved = false;
		return 0;
	}
	uint64_t a = i, b = i;

	while (a > 0 && m->st[a - 1] == RESV)
		a--;
	while (b + 1 < m->size && m->st[b + 1] == RESV)
		b++;
	r->lo = m->start + a;
	r->hi = m->start + b;
	r->reserved = true;
	return 0;
}

static uint64_t model_largest(const struct model *m, uint64_t limit)
{
	uint64_t best = 0, run = 0;

	if (limit > m->end)
		limit = m->end;
	for (uint64_t i = 0; i <= limit - m->start; i++) {
		run = m->st[i] == FREE ? run + 1 : 0;
		if (run > best)
			best = run;
	}
	return best;
}

/* Every range of the domain equals the model's (allocations as allocated,
 * reservations merged). */
struct cmp_ctx {
	const struct model *m;
	uint64_t next; /* lowest pfn not yet covered */
	int bad;
};

static int cmp_range(void *ctx, const struct ik_iova_range *r)
{
	struct cmp_ctx *c = ctx;
	struct ik_iova_range e;

	/* Everything between the previous range and this one is free. */
	for (uint64_t p = c->next - c->m->start; p < r->lo - c->m->start; p++)
		if (c->m->st[p] != FREE)
			return c->bad = 1;
	if (model_find(c->m, r->lo, &e) || e.lo != r->lo || e.hi != r->hi ||
	    e.reserved != r->reserved)
		return c->bad = 2;
	c->next = r->hi + 1;
	return 0;
}

static void compare_all(struct ik_iova_domain *d, const struct model *m)
{
	struct cmp_ctx c = { m, m->start, 0 };

	ik_iova_for_each(d, cmp_range, &c);
	IK_REQUIRE_MSG(c.bad == 0, "domain and model differ (%d)", c.bad);
	if (c.next - 1 != m->end)
		for (uint64_t p = c.next - m->start; p < m->size; p++)
			IK_REQUIRE(m->st[p] == FREE);
}

/* ---------------------------------------------------------------- randomized */

static uint64_t rand_size(struct ik_rng *r, uint64_t space)
{
	uint64_t n;

	switch (ik_rng_below(r, 8)) {
	case 0: case 1: case 2: n = 1; break;
	case 3: case 4: n = 1 + ik_rng_below(r, 4); break;
	case 5: case 6: n = 1 + ik_rng_below(r, 64); break;
	default: n = 1 + ik_rng_below(r, space / 4 + 1); break;
	}
	return n > space ? space : n;
}

static uint64_t rand_limit(struct ik_rng *r, const struct model *m)
{
	switch (ik_rng_below(r, 10)) {
	case 0: return m->start;
	case 1: {
		uint64_t l = m->end + ik_rng_below(r, 3);

		return l < m->end ? ~0ull : l; /* above the end */
	}
	case 2: case 3: case 4: return m->start + ik_rng_below(r, m->size);
	default: return m->end;
	}
}

static unsigned log2_up(uint64_t x)
{
	unsigned k = 0;

	while ((1ull << k) < x)
		k++;
	return k;
}

static void random_run(uint64_t seed, uint64_t start, uint64_t size, long ops)
{
	struct ik_iova_domain d;
	struct model m;
	struct ik_rng r = { seed };
	uint64_t end = start + size - 1;

	dom_init(&d, start, end, IK_IOVA_CFG_NO_RCACHE, NULL);
	model_init(&m, start, end);
	for (long i = 0; i < ops; i++) {
		uint64_t op = ik_rng_below(&r, 100);

		if (op < 48) { /* alloc */
			uint64_t n = rand_size(&r, size), lim = rand_limit(&r, &m), want = 0, got = 7;
			bool al = ik_rng_below(&r, 2);
			bool fit = model_place(&m, n, al, lim, &want);
			int rc = ik_iova_alloc(&d, n, lim, al ? IK_IOVA_SIZE_ALIGNED : 0, &got);

			IK_REQUIRE_MSG(rc == (fit ? 0 : -ENOSPC),
				       "seed %llu op %ld: alloc(%llu, lim %llu, al %d) rc %d, want %d",
				       (unsigned long long)seed, i, (unsigned long long)n,
				       (unsigned long long)lim, al, rc, fit ? 0 : -ENOSPC);
			if (fit) {
				IK_REQUIRE_MSG(got == want,
					       "seed %llu op %ld: alloc(%llu, lim %llu, al %d) at %llu, "
					       "model %llu", (unsigned long long)seed, i,
					       (unsigned long long)n, (unsigned long long)lim, al,
					       (unsigned long long)got, (unsigned long long)want);
				model_alloc(&m, got, n);
			}
			{
				struct ik_iova_stats st;

				ik_iova_stats(&d, &st);
				/* Two descents of a red-black tree of height <= 2 log2(n + 1). */
				IK_REQUIRE(st.last_visits <= 4 * (log2_up(st.ranges + 2) + 1));
			}
		} else if (op < 88) { /* free */
			if (m.nlive) {
				size_t li = ik_rng_below(&r, m.nlive);
				uint64_t s = m.live[li];

				IK_REQUIRE(ik_iova_free(&d, s) == 0);
				model_free_at(&m, li);
				if (ik_rng_below(&r, 8) == 0) /* double free */
					IK_REQUIRE(ik_iova_free(&d, s) == -ENOENT);
			} else {
				IK_REQUIRE(ik_iova_free(&d, start) == -ENOENT);
			}
		} else if (op < 91) { /* reserve */
			uint64_t lo = start + ik_rng_below(&r, size), hi;
			int want, rc;

			if (start > 0 && ik_rng_below(&r, 20) == 0)
				lo = start - 1; /* below the domain */
			hi = lo + ik_rng_below(&r, 1 + size / 64);
			if (ik_rng_below(&r, 20) == 0)
				hi = hi + size < hi ? ~0ull : hi + size; /* past the end */
			if (ik_rng_below(&r, 10) == 0 && lo > 0)
				hi = lo - 1; /* lo > hi */
			want = model_reserve(&m, lo, hi);
			rc = ik_iova_reserve(&d, lo, hi);
			IK_REQUIRE_MSG(rc == want, "reserve(%llu, %llu) %d want %d",
				       (unsigned long long)lo, (unsigned long long)hi, rc, want);
			model_count_resv(&m);
		} else if (op < 97) { /* find, and free of something that is not a start */
			uint64_t p = start + ik_rng_below(&r, size + 1);
			struct ik_iova_range a, b;
			int ra = ik_iova_find(&d, p, &a), rb = model_find(&m, p, &b);

			IK_REQUIRE(ra == rb);
			if (!ra)
				IK_REQUIRE(a.lo == b.lo && a.hi == b.hi && a.reserved == b.reserved);
			if (p >= start && p <= end && (m.st[p - start] == FREE || m.st[p - start] == RESV ||
					 m.astart[p - start] != p))
				IK_REQUIRE(ik_iova_free(&d, p) == -ENOENT);
		} else { /* largest free */
			uint64_t lim = rand_limit(&r, &m), got;

			IK_REQUIRE(ik_iova_largest_free(&d, lim, &got) == 0);
			IK_REQUIRE(got == model_largest(&m, lim));
		}
		if ((i & 1023) == 0 || i == ops - 1) {
			struct ik_iova_stats st;

			CHECK_OK(&d);
			ik_iova_stats(&d, &st);
			IK_REQUIRE(st.ranges == m.ranges + m.rranges);
			IK_REQUIRE(st.pages == m.pages + m.rpages);
			IK_REQUIRE(st.reserved_ranges == m.rranges && st.reserved_pages == m.rpages);
			IK_REQUIRE(st.largest_gap == model_largest(&m, end));
			if ((i & 8191) == 0 || i == ops - 1)
				compare_all(&d, &m);
		}
	}
	ik_iova_destroy(&d);
	model_free(&m);
}

/* n one-page IOVAs below limit from the fast path into p[0..n); each
 * allocation must succeed. */
static void fast_alloc_n(struct ik_iova_domain *d, uint64_t *p, int n, uint64_t limit)
{
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(ik_iova_alloc_fast(d, 1, limit, &p[i]), 0);
}

/* p[0..n) freed through the fast path, one page each; each free must
 * succeed. */
static void fast_free_n(struct ik_iova_domain *d, const uint64_t *p, int n)
{
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(ik_iova_free_fast(d, p[i], 1), 0);
}

START_TEST(test_random_tree_matches_bitmap_model)
{
	/* (start, size) pairs: at 0, at 1, high in a 64-bit space, at the very top. */
	static const struct {
		uint64_t start, size;
	} spaces[] = {
		{ 0, 64 },
		{ 1, 1000 },
		{ 0, 4096 },
		{ 1ull << 40, 4096 },
		{ 12345, 3000 },
		{ 0ull - 4096, 4096 },
		{ 0, 65536 },
		{ 0ull - 2048, 2048 },
	};
	long per = model_iters(140000);

	for (size_t s = 0; s < IK_ARRAY_SIZE(spaces); s++)
		random_run(0x5eed0000u + s, spaces[s].start, spaces[s].size, per);
}
END_TEST

/* ---- the fast path in the same model: cached ranges stay allocated ---- */

struct fast_model {
	struct model m;
	/* cached ranges as the domain reports them */
	struct cached_list cached;
};

static void resync_cached(struct ik_iova_domain *d, struct fast_model *f)
{
	f->cached.n = 0;
	ik_iova_for_each_cached(d, collect_cached, &f->cached);
}

static bool in_cached(const struct fast_model *f, uint64_t pfn, uint64_t pages)
{
	for (size_t i = 0; i < f->cached.n; i++)
		if (f->cached.pfn[i] == pfn && f->cached.pages[i] == pages)
			return true;
	return false;
}

/* The model's occupancy is "user allocations"; cached ranges are added to it
 * temporarily to compute where a tree allocation must land. */
static bool fast_place(struct fast_model *f, uint64_t n, uint64_t limit, uint64_t *out)
{
	bool ok;

	for (size_t i = 0; i < f->cached.n; i++)
		for (uint64_t k = 0; k < f->cached.pages[i]; k++)
			mset(&f->m, f->cached.pfn[i] + k, ALLOC);
	ok = model_place(&f->m, n, true, limit, out);
	for (size_t i = 0; i < f->cached.n; i++)
		for (uint64_t k = 0; k < f->cached.pages[i]; k++)
			mset(&f->m, f->cached.pfn[i] + k, FREE);
	return ok;
}

static unsigned fast_run_flags; /* config flags of fast_run's domains */

static void fast_run(uint64_t seed, uint64_t start, uint64_t size, long ops, unsigned depot)
{
	struct ik_iova_domain d;
	struct ik_iova_config c;
	struct fast_model f;
	struct ik_rng r = { seed };
	uint64_t end = start + size - 1;

	cfg_init(&c, start, end);
	c.depot_max = depot;
	c.flags = fast_run_flags;
	ck_assert_int_eq(ik_iova_init(&d, &c), 0);
	model_init(&f.m, start, end);
	memset(&f.cached, 0, sizeof(f.cached));
	for (long i = 0; i < ops; i++) {
		/* Phases of mostly allocating and mostly freeing, so that magazines
		 * fill, rotate through prev and the depot, and drain again. */
		uint64_t phase = (uint64_t)(i / 1500) % 3, op = ik_rng_below(&r, 100);
		struct ik_iova_stats before, after;

		if (op < 95)
			op = phase == 0 ? (op < 80 ? op / 2 : op) : phase == 1 ? (op < 80 ? 50 + op / 2 : op) : op;
		ik_iova_stats(&d, &before);
		if (op < 50) {
			uint64_t n = 1 + ik_rng_below(&r, ik_rng_below(&r, 4) ? (phase ? 2 : 4) : 48), pages = 1,
				 lim = rand_limit(&r, &f.m), got = 0, want = 0;
			bool fit;
			int rc;

			while (pages < n)
				pages <<= 1;
			if (n > 32)
				pages = n; /* above the bound: plain size-aligned */
			fit = fast_place(&f, pages, lim, &want);
			rc = ik_iova_alloc_fast(&d, n, lim, &got);
			ik_iova_stats(&d, &after);
			if (rc == 0 && after.ranges == before.ranges && in_cached(&f, got, pages)) {
				/* a cache hit: a range that was cached, under the limit */
				IK_REQUIRE_MSG(got + pages - 1 <= lim, "cache hit [%llu, %llu] above limit %llu",
					       (unsigned long long)got, (unsigned long long)(got + pages - 1),
					       (unsigned long long)lim);
			} else if (after.flushes == before.flushes) {
				IK_REQUIRE_MSG(rc == (fit ? 0 : -ENOSPC), "fast alloc rc %d fit %d", rc, fit);
				if (fit)
					IK_REQUIRE_MSG(got == want, "fast tree alloc at %llu, model %llu",
						       (unsigned long long)got, (unsigned long long)want);
			} else {
				/* flushed and retried: exact against the flushed state */
				resync_cached(&d, &f);
				fit = fast_place(&f, pages, lim, &want);
				IK_REQUIRE(rc == (fit ? 0 : -ENOSPC));
				if (fit)
					IK_REQUIRE(got == want);
			}
			if (rc == 0)
				model_alloc(&f.m, got, pages);
			resync_cached(&d, &f);
		} else if (op < 95) {
			if (f.m.nlive) {
				size_t li = ik_rng_below(&r, f.m.nlive);
				uint64_t s = f.m.live[li], n = f.m.alen[s - start];

				if (ik_rng_below(&r, 8) == 0 || (n & (n - 1)))
					IK_REQUIRE(ik_iova_free(&d, s) == 0);
				else
					IK_REQUIRE(ik_iova_free_fast(&d, s, n) == 0);
				model_free_at(&f.m, li);
				resync_cached(&d, &f);
			}
		} else if (op < 97) {
			ik_iova_flush_cpu(&d, (unsigned)ik_rng_below(&r, IK_ENV_NR_CPUS()));
			resync_cached(&d, &f);
		} else if (op < 98) {
			ik_iova_flush_all(&d);
			resync_cached(&d, &f);
			IK_REQUIRE(f.cached.n == 0);
		} else {
			/* a plain allocation sees cached ranges as allocated */
			uint64_t n = 1 + ik_rng_below(&r, 8), lim = rand_limit(&r, &f.m), got = 0, want;
			bool fit = fast_place(&f, n, lim, &want);
			int rc = ik_iova_alloc(&d, n, lim, IK_IOVA_SIZE_ALIGNED | IK_IOVA_NO_FLUSH, &got);

			IK_REQUIRE(rc == (fit ? 0 : -ENOSPC));
			if (fit) {
				IK_REQUIRE(got == want);
				model_alloc(&f.m, got, n);
			}
		}
		if ((i & 511) == 0 || i == ops - 1) {
			struct ik_iova_stats st;
			uint64_t cp = 0;

			CHECK_OK(&d);
			ik_iova_stats(&d, &st);
			for (size_t k = 0; k < f.cached.n; k++)
				cp += f.cached.pages[k];
			IK_REQUIRE(st.cached_ranges == f.cached.n && st.cached_pages == cp);
			IK_REQUIRE(st.ranges == f.m.ranges + f.cached.n);
			IK_REQUIRE(st.pages == f.m.pages + cp);
		}
	}
	ik_iova_destroy(&d);
	model_free(&f.m);
	free(f.cached.pfn);
	free(f.cached.pages);
}

/* ---------------------------------------------------------------- rcache modes */

/* What ik_iova_init() should pick with no mode flag, in this build and on
 * this machine (valgrind, for one, has no rseq). */
static enum ik_iova_rcache_mode expected_default_mode(void)
{
#if defined(IK_HOSTED_HAVE_RSEQ) && defined(__x86_64__)
	if (ik_hosted_rseq_area() && ik_hosted_rseq_register() == 0)
		return IK_IOVA_RCACHE_RSEQ;
#endif
	return IK_IOVA_RCACHE_LOCK;
}

START_TEST(test_rcache_mode_follows_config_and_env)
{
	static const struct {
		unsigned flags;
		int mode; /* -1: the default for this platform */
	} t[] = {
		{ 0, -1 },
		{ IK_IOVA_CFG_LOCKED_RCACHE, IK_IOVA_RCACHE_LOCK },
		{ IK_IOVA_CFG_NO_RCACHE, IK_IOVA_RCACHE_NONE },
		{ IK_IOVA_CFG_NO_RCACHE | IK_IOVA_CFG_LOCKED_RCACHE, IK_IOVA_RCACHE_NONE },
	};
	struct ik_iova_domain d;

	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int want = t[i].mode < 0 ? (int)expected_default_mode() : t[i].mode;
		uint64_t p;

		dom_init(&d, 0, 4095, t[i].flags, NULL);
		ck_assert_int_eq(ik_iova_rcache_mode(&d), want);
		/* every mode serves the fast calls */
		ck_assert_int_eq(ik_iova_alloc_fast(&d, 3, 4095, &p), 0);
		ck_assert_int_eq(ik_iova_free_fast(&d, p, 3), 0);
		ck_assert_int_eq(t_iova_alloc_fast_inline(&d, 3, 4095, &p), 0);
		ck_assert_int_eq(t_iova_free_fast_inline(&d, p, 3), 0);
		CHECK_OK(&d);
		ik_iova_destroy(&d);
	}
	ck_assert_int_eq(ik_iova_rcache_mode(NULL), IK_IOVA_RCACHE_NONE);
}
END_TEST

/*
 * Lockless modes: a hit takes no lock (it succeeds while another holder has
 * the slot's lock, which would hang LOCK mode), both forms; a slot marked
 * held sends the hit to the slow path, which takes the lock, still serves
 * the call, and leaves the slot unmarked.
 */
START_TEST(test_lockless_hit_takes_no_lock)
{
	struct ik_iova_domain d;
	struct ik_iova_cpu *c;
	uint64_t p[4], q;

	if (expected_default_mode() == IK_IOVA_RCACHE_LOCK)
		return; /* no lockless mode here: nothing to test */
	pin_cpu0();
	dom_init(&d, 0, 4095, 0, NULL);
	fast_alloc_n(&d, p, 4, 4095);
	fast_free_n(&d, p, 4);
	c = &d.rc_cpu[0]; /* class 0, CPU 0 */
	ck_assert_ptr_nonnull(c->loaded);
	ck_assert_uint_eq(c->loaded->n, 4);

	ik_lock(&c->lock); /* "another holder" */
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 4095, &q), 0);
	ck_assert_uint_eq(q, p[3]);
	ck_assert_int_eq(t_iova_alloc_fast_inline(&d, 1, 4095, &q), 0);
	ck_assert_uint_eq(q, p[2]);
	ck_assert_uint_eq(c->loaded->n, 2);
	ck_assert_int_eq(ik_iova_free_fast(&d, p[2], 1), 0);
	ck_assert_int_eq(t_iova_free_fast_inline(&d, p[3], 1), 0);
	ck_assert_uint_eq(c->loaded->n, 4);
	ik_unlock(&c->lock);

	c->held = 1;
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 4095, &q), 0);
	ck_assert_uint_eq(q, p[3]);
	ck_assert_uint_eq(c->held, 0);
	ck_assert_uint_eq(c->loaded->n, 3);
	c->held = 1;
	ck_assert_int_eq(t_iova_free_fast_inline(&d, q, 1), 0);
	ck_assert_uint_eq(c->held, 0);
	ck_assert_uint_eq(c->loaded->n, 4);
	/* a locker on another CPU's slots: flush_cpu fences CPU 1, then the
	 * CPU 0 hits go on */
	if (d.rc_ncpus > 1)
		ck_assert_int_eq(ik_iova_flush_cpu(&d, 1), 0);
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 4095, &q), 0);
	ck_assert_int_eq(ik_iova_free_fast(&d, q, 1), 0);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
}
END_TEST

/*
 * A child of fork() goes on with its copy of a domain: in the lockless
 * modes its lockers still fence (the membarrier registration is the
 * process's and fork keeps it), hits and misses still work, the checker
 * passes.
 */
START_TEST(test_fast_path_after_fork)
{
	struct ik_iova_domain d;
	uint64_t p[300];
	int st = 0;
	pid_t pid;

	dom_init(&d, 0, (1u << 16) - 1, 0, NULL);
	fast_alloc_n(&d, p, 8, ~0ull);
	fast_free_n(&d, p, 8);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int bad = ik_iova_rcache_mode(&d) != expected_default_mode();

		/* 300 > a magazine: misses (slot locks, depot) as well as hits */
		for (unsigned i = 0; i < 300 && !bad; i++)
			bad |= ik_iova_alloc_fast(&d, 1, ~0ull, &p[i]) != 0;
		for (unsigned i = 0; i < 300 && !bad; i++)
			bad |= ik_iova_free_fast(&d, p[i], 1) != 0;
		for (unsigned c = 0; c < d.rc_ncpus && !bad; c++)
			bad |= ik_iova_flush_cpu(&d, c) != 0; /* other CPUs: fences */
		bad |= ik_iova_check(&d) != 0;
		_exit(bad ? 3 : 0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
}
END_TEST

START_TEST(test_random_fast_path_matches_model)
{
	long per = model_iters(60000);

	pin_cpu0();
	fast_run(0xfa570001u, 0, 2048, per, 2);
	fast_run(0xfa570002u, 1, 4096, per, 1);
	fast_run(0xfa570003u, 0ull - 8192, 8192, per, 4);
	fast_run(0xfa570004u, 5, 600, per, 1);
}
END_TEST

/* The same model with the per-CPU locks (the fallback where the env offers
 * no lockless exclusion, and the only mode under valgrind). */
START_TEST(test_random_fast_path_matches_model_locked)
{
	long per = model_iters(30000);

	pin_cpu0();
	fast_run_flags = IK_IOVA_CFG_LOCKED_RCACHE;
	fast_run(0xfa570011u, 0, 2048, per, 2);
	fast_run(0xfa570013u, 0ull - 8192, 8192, per, 4);
	fast_run_flags = 0;
}
END_TEST

/* ---------------------------------------------------------------- exhaustive tiny spaces */

static void tiny_case(uint64_t start, unsigned size, unsigned mask, bool singles)
{
	struct ik_iova_domain d;
	struct model m;
	uint64_t end = start + size - 1;

	dom_init(&d, start, end, IK_IOVA_CFG_NO_RCACHE, NULL);
	model_init(&m, start, end);
	if (singles) {
		/* every pfn its own allocation, then free the free ones */
		for (unsigned i = 0; i < size; i++) {
			uint64_t p;

			IK_REQUIRE(ik_iova_alloc(&d, 1, end, 0, &p) == 0 && p == end - i);
		}
		for (unsigned i = 0; i < size; i++)
			if (!(mask & (1u << i)))
				IK_REQUIRE(ik_iova_free(&d, start + i) == 0);
			else
				model_alloc(&m, start + i, 1);
	} else {
		for (unsigned i = 0; i < size; i++)
			if (mask & (1u << i)) {
				IK_REQUIRE(ik_iova_reserve(&d, start + i, start + i) == 0);
				{ int mr_ = model_reserve(&m, start + i, start + i); IK_REQUIRE_MSG(mr_ == 0, "model_reserve %d start %llu size %u i %u", mr_, (unsigned long long)start, size, i); }
			}
	}
	CHECK_OK(&d);
	struct snap s0 = snapshot(&d);

	for (unsigned n = 1; n <= size + 1; n++)
		for (int al = 0; al < 2; al++)
			for (unsigned j = 0; j <= size; j++) {
				uint64_t lim = j == size ? ~0ull : start + j, want = 0, got = 0;
				bool fit = n <= size && model_place(&m, n, al, lim, &want);
				int rc = ik_iova_alloc(&d, n, lim, al ? IK_IOVA_SIZE_ALIGNED : 0, &got);

				IK_REQUIRE_MSG(rc == (n > size ? -EINVAL : fit ? 0 : -ENOSPC),
					       "tiny start %llu size %u mask %x n %u al %d lim %llu: rc %d",
					       (unsigned long long)start, size, mask, n, al,
					       (unsigned long long)lim, rc);
				if (fit) {
					IK_REQUIRE(got == want);
					IK_REQUIRE(ik_iova_free(&d, got) == 0);
				}
				SNAP_EQ(snapshot(&d), s0);
			}
	CHECK_OK(&d);
	ik_iova_destroy(&d);
	model_free(&m);
}

START_TEST(test_exhaustive_tiny_spaces)
{
	static const uint64_t starts[] = { 0, 1, 5, 8, 0ull - 8 };

	for (size_t s = 0; s < IK_ARRAY_SIZE(starts); s++)
		for (unsigned size = 1; size <= (IK_TEST_TSAN || ik_test_scale() < 1 ? 6u : 8u);
		     size++) {
			if (starts[s] + size - 1 < starts[s])
				continue;
			for (unsigned mask = 0; mask < (1u << size); mask++) {
				tiny_case(starts[s], size, mask, false);
				tiny_case(starts[s], size, mask, true);
			}
		}
}
END_TEST

/* ---------------------------------------------------------------- edges */

START_TEST(test_limit_at_start_and_end)
{
	struct ik_iova_domain d;
	uint64_t p;

	dom_init(&d, 100, 199, IK_IOVA_CFG_NO_RCACHE, NULL);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 100, 0, &p), 0);
	ck_assert_uint_eq(p, 100);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 100, 0, &p), -ENOSPC);
	ck_assert_int_eq(ik_iova_alloc(&d, 2, 101, 0, &p), -ENOSPC);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 199, 0, &p), 0);
	ck_assert_uint_eq(p, 199);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, ~0ull, 0, &p), 0); /* limit above end: end */
	ck_assert_uint_eq(p, 198);
	ck_assert_int_eq(ik_iova_alloc(&d, 4, 199, IK_IOVA_SIZE_ALIGNED, &p), 0);
	ck_assert_uint_eq(p, 192);
	ck_assert_int_eq(ik_iova_alloc(&d, 3, 199, IK_IOVA_SIZE_ALIGNED, &p), 0);
	ck_assert_uint_eq(p, 188); /* aligned to 4, length 3 */
	ck_assert_int_eq(ik_iova_alloc(&d, 3, 199, 0, &p), 0);
	ck_assert_uint_eq(p, 185); /* unaligned fills 185..187 */
	ck_assert_int_eq(ik_iova_alloc(&d, 100, 199, 0, &p), -ENOSPC);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
}
END_TEST

START_TEST(test_limit_at_4g_in_a_64bit_space)
{
	struct ik_iova_domain d;
	uint64_t p, top = (1ull << 52) - 1, lim32 = (1ull << 32) - 1;
	struct ik_iova_range r;

	dom_init(&d, 1, top, 0, NULL);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, lim32, IK_IOVA_SIZE_ALIGNED, &p), 0);
	ck_assert_uint_eq(p, lim32);
	ck_assert_int_eq(ik_iova_alloc(&d, 16, lim32, IK_IOVA_SIZE_ALIGNED, &p), 0);
	ck_assert_uint_eq(p, lim32 + 1 - 32);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, top, 0, &p), 0);
	ck_assert_uint_eq(p, top);
	ck_assert_int_eq(ik_iova_reserve(&d, lim32 + 1, top - 1), 0);
	ck_assert_int_eq(ik_iova_alloc(&d, 1ull << 20, ~0ull, IK_IOVA_SIZE_ALIGNED, &p), 0);
	ck_assert_uint_eq(p, (1ull << 32) - (1ull << 21)); /* below the 2 entries at the top of 4G */
	ck_assert_int_eq(ik_iova_find(&d, lim32 + 12345, &r), 0);
	ck_assert(r.reserved && r.lo == lim32 + 1 && r.hi == top - 1);
	ck_assert_int_eq(ik_iova_largest_free(&d, ~0ull, &p), 0);
	ck_assert_uint_eq(p, (1ull << 32) - (1ull << 21) - 1); /* [1, 2^32 - 2^21 - 1] */
	CHECK_OK(&d);
	ik_iova_destroy(&d);
}
END_TEST

START_TEST(test_top_of_a_64bit_space)
{
	struct ik_iova_domain d;
	struct ik_iova_config c;
	uint64_t p, max = ~0ull, start = 1ull << 63;
	struct ik_iova_range r;

	/* 2^63 pfns is the most a domain may cover. */
	cfg_init(&c, start - 1, max);
	ck_assert_int_eq(ik_iova_init(&d, &c), -EINVAL);
	cfg_init(&c, 0, max);
	ck_assert_int_eq(ik_iova_init(&d, &c), -EINVAL);
	dom_init(&d, start, max, 0, NULL);
	ck_assert_int_eq(ik_iova_largest_free(&d, max, &p), 0);
	ck_assert_uint_eq(p, 1ull << 63);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, max, 0, &p), 0);
	ck_assert_uint_eq(p, max);
	ck_assert_int_eq(ik_iova_find(&d, max, &r), 0);
	ck_assert(r.lo == max && r.hi == max && !r.reserved);
	ck_assert_int_eq(ik_iova_alloc(&d, 1ull << 20, max, IK_IOVA_SIZE_ALIGNED, &p), 0);
	ck_assert_uint_eq(p, max - (1ull << 21) + 1);
	ck_assert_int_eq(ik_iova_alloc(&d, 1ull << 62, max, IK_IOVA_SIZE_ALIGNED, &p), 0);
	ck_assert_uint_eq(p, start);
	ck_assert_int_eq(ik_iova_alloc(&d, 1ull << 62, max, IK_IOVA_SIZE_ALIGNED, &p), -ENOSPC);
	ck_assert_int_eq(ik_iova_alloc(&d, (1ull << 62) - (1ull << 21), max, 0, &p), 0);
	ck_assert_uint_eq(p, start + (1ull << 62));
	ck_assert_int_eq(ik_iova_alloc(&d, 1, max, 0, &p), 0);
	ck_assert_uint_eq(p, max - 1);
	ck_assert_int_eq(ik_iova_free(&d, max), 0);
	ck_assert_int_eq(ik_iova_free(&d, max), -ENOENT);
	ck_assert_int_eq(ik_iova_reserve(&d, max, max), 0);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, max, 0, &p), 0);
	ck_assert_uint_eq(p, max - 2);
	CHECK_OK(&d);
	ik_iova_destroy(&d);

	/* The whole 2^63 at the bottom, from pfn 0. */
	dom_init(&d, 0, (1ull << 63) - 1, 0, NULL);
	ck_assert_int_eq(ik_iova_alloc(&d, 1ull << 63, ~0ull, IK_IOVA_SIZE_ALIGNED, &p), 0);
	ck_assert_uint_eq(p, 0);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, ~0ull, 0, &p), -ENOSPC);
	ck_assert_int_eq(ik_iova_free(&d, 0), 0);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 0, 0, &p), 0);
	ck_assert_uint_eq(p, 0);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
}
END_TEST

START_TEST(test_reserve_merges_and_blocks)
{
	struct ik_iova_domain d;
	struct ik_iova_range r;
	struct ik_iova_stats st;
	uint64_t p;

	dom_init(&d, 0, 999, 0, NULL);
	ck_assert_int_eq(ik_iova_reserve(&d, 100, 199), 0);
	ck_assert_int_eq(ik_iova_reserve(&d, 300, 399), 0);
	ck_assert_int_eq(ik_iova_reserve(&d, 200, 200), 0); /* touches the first */
	ck_assert_int_eq(ik_iova_find(&d, 150, &r), 0);
	ck_assert(r.lo == 100 && r.hi == 200 && r.reserved);
	ck_assert_int_eq(ik_iova_reserve(&d, 150, 350), 0); /* bridges both */
	ck_assert_int_eq(ik_iova_find(&d, 250, &r), 0);
	ck_assert(r.lo == 100 && r.hi == 399 && r.reserved);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.ranges, 1);
	ck_assert_uint_eq(st.reserved_pages, 300);
	ck_assert_int_eq(ik_iova_free(&d, 100), -ENOENT); /* a reservation is not freed */
	ck_assert_int_eq(ik_iova_alloc(&d, 500, 450, 0, &p), -ENOSPC);
	ck_assert_int_eq(ik_iova_alloc(&d, 100, 450, 0, &p), 0);
	ck_assert_uint_eq(p, 0);
	ck_assert_int_eq(ik_iova_alloc(&d, 50, 450, 0, &p), 0);
	ck_assert_uint_eq(p, 401);
	ck_assert_int_eq(ik_iova_reserve(&d, 449, 460), -EBUSY);
	ck_assert_int_eq(ik_iova_reserve(&d, 450, 460), -EBUSY);
	ck_assert_int_eq(ik_iova_reserve(&d, 451, 460), 0); /* touches an allocation: fine */
	ck_assert_int_eq(ik_iova_find(&d, 449, &r), 0);
	ck_assert(r.lo == 401 && r.hi == 450 && !r.reserved);
	ck_assert_int_eq(ik_iova_reserve(&d, 0, 999), -EBUSY);
	ck_assert_int_eq(ik_iova_reserve(&d, 990, 999), 0);
	ck_assert_int_eq(ik_iova_reserve(&d, 461, 989), 0); /* touches two: one range */
	ck_assert_int_eq(ik_iova_find(&d, 700, &r), 0);
	ck_assert(r.lo == 451 && r.hi == 999 && r.reserved);
	ck_assert_int_eq(ik_iova_alloc(&d, 2, 999, 0, &p), -ENOSPC);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 999, 0, &p), 0);
	ck_assert_uint_eq(p, 400);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
}
END_TEST

START_TEST(test_iteration_visits_every_range_in_order)
{
	struct ik_iova_domain d;
	struct ik_iova_range r;
	uint64_t p, from = 10, n = 0, last = 0;

	dom_init(&d, 10, 10000, 0, NULL);
	for (int i = 1; i <= 100; i++)
		ck_assert_int_eq(ik_iova_alloc(&d, (uint64_t)i, 10000, 0, &p), 0);
	ck_assert_int_eq(ik_iova_reserve(&d, 10, 20), 0);
	for (int i = 1; i <= 100; i += 3)
		ck_assert_int_eq(ik_iova_free(&d, 10000 - (uint64_t)(i * (i + 1) / 2) + 1), 0);
	while (ik_iova_next(&d, from, &r) == 0) {
		ck_assert(r.lo >= from && r.hi >= r.lo && (n == 0 || r.lo > last));
		last = r.hi;
		n++;
		if (r.hi == 10000)
			break;
		from = r.hi + 1;
	}
	ck_assert_uint_eq(n, 1 + 100 - 34);
	ck_assert_int_eq(ik_iova_next(&d, 10001, &r), -ENOENT);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
}
END_TEST

/* Count the ranges for_each reports. */
static int count_range(void *ctx, const struct ik_iova_range *r)
{
	(void)r;
	(*(int *)ctx)++;
	return 0;
}

/*
 * A free next to its successor keeps the node (empty) instead of erasing it,
 * and the next allocation at that place takes it back: no allocator call
 * either way, nothing visible in find/next/for_each/stats, and everything
 * that would see it (a free of its successor, a reservation) erases it first.
 */
/*
 * The search from the root under a limit L keeps its turns to the right in
 * a bounded ring and finds older ones again by parent pointers
 * (src/iova/iova.c; tests/test_iova_shallow keeps one).  Here the only place
 * under L is the lowest pfn, so every turn of the walk is tried, the
 * shallowest last: 65536 one-page ranges, every other pfn above L free (so
 * the walk goes deep: the right subtrees fit, above L), pfn 5 free.
 */
START_TEST(test_limited_search_tries_every_turn)
{
	struct ik_iova_domain d;
	struct ik_iova_stats st;
	const uint64_t end = 0xffff, L = 40000;
	uint64_t p;

	dom_init(&d, 0, end, IK_IOVA_CFG_NO_RCACHE, NULL);
	for (uint64_t i = 0; i <= end; i++) {
		ck_assert_int_eq(ik_iova_alloc(&d, 1, end, 0, &p), 0);
		ck_assert_uint_eq(p, end - i);
	}
	for (uint64_t i = L + 1; i < end; i += 2)
		ck_assert_int_eq(ik_iova_free(&d, i), 0);
	ck_assert_int_eq(ik_iova_free(&d, 5), 0);
	CHECK_OK(&d);
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(ik_iova_alloc(&d, 1, L, 0, &p), 0);
		ck_assert_uint_eq(p, 5);
		ik_iova_stats(&d, &st);
		/* 65536 - 12000 ranges: a height of at most 2 log2(n + 1) < 32 */
		ck_assert_uint_le(st.last_visits, 3 * 32);
		CHECK_OK(&d);
		/* Nothing else under L; above it, the highest hole. */
		ck_assert_int_eq(ik_iova_alloc(&d, 1, L, 0, &p), -ENOSPC);
		ck_assert_int_eq(ik_iova_alloc(&d, 1, L + 2, 0, &p), 0);
		ck_assert_uint_eq(p, L + 1);
		ck_assert_int_eq(ik_iova_free(&d, L + 1), 0);
		ck_assert_int_eq(ik_iova_free(&d, 5), 0);
	}
	ik_iova_destroy(&d);
}
END_TEST

/*
 * summary_updates counts the nodes whose summaries an update computed, the
 * one where an early stop ends included, and one per rotation.  Worked by
 * hand on [0, 15] with one-page allocations (15, then 14, then 13):
 *   15: a new root, its summary its own gap's: nothing updated (0).
 *   14: under 15 (the owner of [0, 14]); 15 recomputed (1).
 *   13: under 14, the owner of [0, 13]: 14 and then 15 recomputed, both
 *       changed (2); 13 and 14 are red, so 15 rotates right (1).  Total 4.
 */
START_TEST(test_summary_updates_count_the_levels)
{
	struct ik_iova_domain d;
	struct ik_iova_stats st;
	/* the total after allocating 15, 14, 13 (see above) */
	static const uint64_t want[3] = { 0, 1, 4 };
	uint64_t p, before;

	dom_init(&d, 0, 15, IK_IOVA_CFG_NO_RCACHE, NULL);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.summary_updates, 0);
	for (uint64_t i = 0; i < 3; i++) {
		ck_assert_int_eq(ik_iova_alloc(&d, 1, 15, 0, &p), 0);
		ck_assert_uint_eq(p, 15 - i);
		ik_iova_stats(&d, &st);
		ck_assert_uint_eq(st.summary_updates, want[i]);
	}
	CHECK_OK(&d);
	/* Failing calls compute nothing. */
	ck_assert_int_eq(ik_iova_free(&d, 3), -ENOENT);
	ck_assert_int_eq(ik_iova_alloc(&d, 17, 15, 0, &p), -EINVAL);
	ck_assert_int_eq(ik_iova_alloc(&d, 14, 15, 0, &p), -ENOSPC);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.summary_updates, 4);
	/* A free recomputes at least the node whose gap grew; the count only
	 * grows, and over churn it stays within a few tree heights per call. */
	before = st.summary_updates;
	ck_assert_int_eq(ik_iova_free(&d, 14), 0);
	ik_iova_stats(&d, &st);
	ck_assert_uint_gt(st.summary_updates, before);
	ik_iova_destroy(&d);

	dom_init(&d, 0, (1u << 20) - 1, IK_IOVA_CFG_NO_RCACHE, NULL);
	{
		uint64_t live[512], x = 12345;
		int n = 0;

		for (int i = 0; i < 4096; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			if (n < 512 && (n == 0 || (x >> 60) < 9)) {
				ck_assert_int_eq(ik_iova_alloc(&d, 1 + (x >> 58), (1u << 20) - 1,
							       IK_IOVA_SIZE_ALIGNED, &live[n]),
						 0);
				n++;
			} else {
				int j = (int)((x >> 33) % (uint64_t)n);

				ck_assert_int_eq(ik_iova_free(&d, live[j]), 0);
				live[j] = live[--n];
			}
		}
		ik_iova_stats(&d, &st);
		/* 512 ranges: a height of at most 2 log2(513) < 19 */
		ck_assert_uint_gt(st.summary_updates, 4096);
		ck_assert_uint_lt(st.summary_updates, 4096ull * 3 * 19);
		CHECK_OK(&d);
	}
	ik_iova_destroy(&d);
}
END_TEST

/* A domain over [0, 15] on a fault-injecting allocator, holding the
 * one-page ranges 15, 14 and 13. */
static void three_pages(struct ik_iova_domain *d, struct ik_fault_alloc *fa)
{
	uint64_t p;

	ik_fault_alloc_init(fa);
	dom_init(d, 0, 15, IK_IOVA_CFG_NO_RCACHE, &fa->a);
	for (uint64_t i = 0; i < 3; i++) {
		ck_assert_int_eq(ik_iova_alloc(d, 1, 15, 0, &p), 0);
		ck_assert_uint_eq(p, 15 - i);
	}
}

/*
 * The spare: a free that erases its node keeps it for the next allocation,
 * which then makes no allocator call (and cannot fail for memory).  One
 * node at most; destroy frees it; stats count it in bytes.
 */
START_TEST(test_spare_node_serves_the_next_allocation)
{
	struct ik_fault_alloc fa;
	struct ik_iova_domain d;
	struct ik_iova_stats a, b;
	uint64_t p;

	three_pages(&d, &fa);
	ck_assert_ptr_null(d.spare);
	/* 15 has no successor: erased, its node becomes the spare */
	ck_assert_int_eq(ik_iova_free(&d, 15), 0);
	ck_assert_ptr_null(d.tomb);
	ck_assert_ptr_nonnull(d.spare);
	ck_assert_int_eq(fa.live, 3);
	ik_iova_stats(&d, &a);
	ck_assert_uint_eq(a.ranges, 2);
	ck_assert_uint_eq(a.bytes, 3 * a.node_bytes);
	CHECK_OK(&d);

	/* with the allocator failing, the next allocation still succeeds */
	ik_fault_alloc_fail_nth(&fa, 1);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 15, 0, &p), 0);
	ck_assert_uint_eq(p, 15);
	ck_assert_int_eq(fa.calls, 0);
	ck_assert_ptr_null(d.spare);
	CHECK_OK(&d);
	/* the one after it needs the allocator: -ENOMEM, nothing changed */
	ik_iova_stats(&d, &a);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 15, 0, &p), -ENOMEM);
	ck_assert_int_eq(fa.failures, 1);
	ik_iova_stats(&d, &b);
	ck_assert_uint_eq(b.ranges, a.ranges);
	ck_assert_uint_eq(b.pages, a.pages);
	ck_assert_uint_eq(b.bytes, a.bytes);
	ck_assert_int_eq(fa.live, 3);
	CHECK_OK(&d);
	ik_fault_alloc_disarm(&fa);

	/* two erasing frees: the first node becomes the spare, the second
	 * goes back to the allocator */
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 15, 0, &p), 0); /* 12 */
	ck_assert_int_eq(fa.live, 4);
	ck_assert_int_eq(ik_iova_free(&d, 15), 0);
	ck_assert_int_eq(ik_iova_free(&d, 14), 0);
	ck_assert_ptr_nonnull(d.spare);
	ck_assert_int_eq(fa.live, 3);
	CHECK_OK(&d);
	/* destroy frees the spare with the rest */
	ik_iova_destroy(&d);
	ck_assert_int_eq(fa.live, 0);
}
END_TEST

START_TEST(test_free_then_alloc_in_place_reuses_the_node)
{
	struct ik_fault_alloc fa;
	struct ik_iova_domain d;
	struct ik_iova_range r;
	struct ik_iova_stats st;
	uint64_t p, base;
	long calls;
	int n = 0;

	ik_fault_alloc_init(&fa);
	dom_init(&d, 0, 1023, IK_IOVA_CFG_NO_RCACHE, &fa.a);
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(ik_iova_alloc(&d, 1, 1023, 0, &p), 0);
	base = p; /* 924: the ranges are 924..1023, one page each */
	ck_assert_uint_eq(base, 924);
	ck_assert_int_eq(fa.live, 100);

	/* free 950: its node stays, empty */
	calls = fa.calls;
	ck_assert_int_eq(ik_iova_free(&d, 950), 0);
	ck_assert_int_eq(fa.live, 100);
	CHECK_OK(&d);
	ck_assert_int_eq(ik_iova_free(&d, 950), -ENOENT);
	ck_assert_int_eq(ik_iova_find(&d, 950, &r), -ENOENT);
	ck_assert_int_eq(ik_iova_next(&d, 950, &r), 0);
	ck_assert_uint_eq(r.lo, 951);
	ck_assert_uint_eq(r.hi, 951);
	ck_assert_int_eq(ik_iova_next(&d, 940, &r), 0);
	ck_assert_uint_eq(r.lo, 940);
	ck_assert_int_eq(ik_iova_for_each(&d, count_range, &n), 0);
	ck_assert_int_eq(n, 99);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.ranges, 99);
	ck_assert_uint_eq(st.pages, 99);
	ck_assert_uint_eq(st.largest_gap, 924);
	ck_assert_uint_eq(st.bytes, 100 * st.node_bytes);
	ck_assert_int_eq(ik_iova_largest_free(&d, 1023, &p), 0);
	ck_assert_uint_eq(p, 924);
	ck_assert_int_eq(ik_iova_largest_free(&d, 950, &p), 0);
	ck_assert_uint_eq(p, 924);

	/* the next allocation goes there (the highest hole) with no new node */
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 1023, IK_IOVA_SIZE_ALIGNED, &p), 0);
	ck_assert_uint_eq(p, 950);
	ck_assert_int_eq(fa.calls, calls);
	ck_assert_int_eq(fa.live, 100);
	ck_assert_int_eq(ik_iova_find(&d, 950, &r), 0);
	ck_assert(r.lo == 950 && r.hi == 950 && !r.reserved);
	CHECK_OK(&d);

	/* free 960, then its successor 961: the kept node goes (erased), 961's
	 * node is kept instead, and the two pages form one gap of 2 */
	ck_assert_int_eq(ik_iova_free(&d, 960), 0);
	ck_assert_int_eq(ik_iova_free(&d, 961), 0);
	/* the erased node is the domain's spare now: 98 ranges, kept, spare */
	ck_assert_ptr_nonnull(d.spare);
	ck_assert_int_eq(fa.live, 100);
	CHECK_OK(&d);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.ranges, 98);
	ck_assert_uint_eq(st.bytes, 100 * st.node_bytes);
	ck_assert_int_eq(ik_iova_alloc(&d, 2, 1023, IK_IOVA_SIZE_ALIGNED, &p), 0);
	ck_assert_uint_eq(p, 960);
	ck_assert_int_eq(fa.live, 100);
	CHECK_OK(&d);

	/* an aligned request below the top of the kept node's gap: a new node
	 * goes in under it and it stays kept */
	ck_assert_int_eq(ik_iova_free(&d, 960), 0); /* 960..961 */
	ck_assert_int_eq(ik_iova_free(&d, 959), 0); /* 959 erased: gap 959..961 */
	CHECK_OK(&d);
	ck_assert_int_eq(ik_iova_alloc(&d, 2, 1023, IK_IOVA_SIZE_ALIGNED, &p), 0);
	ck_assert_uint_eq(p, 960);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 1023, 0, &p), 0);
	ck_assert_uint_eq(p, 959);
	CHECK_OK(&d);

	/* a reservation erases the kept node first, and lands where it was */
	ck_assert_int_eq(ik_iova_free(&d, 970), 0);
	ck_assert_int_eq(ik_iova_reserve(&d, 970, 970), 0);
	ck_assert_int_eq(ik_iova_find(&d, 970, &r), 0);
	ck_assert(r.lo == 970 && r.hi == 970 && r.reserved);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
	ck_assert_int_eq(fa.live, 0);
}
END_TEST

/* ---------------------------------------------------------------- errors */

START_TEST(test_init_rejects_bad_config)
{
	struct ik_iova_domain d;
	struct ik_iova_config c;
	struct ik_fault_alloc fa;

	cfg_init(&c, 0, 100);
	c.granule = 0;
	ck_assert_int_eq(ik_iova_init(&d, &c), -EINVAL);
	c.granule = 4096 + 512;
	ck_assert_int_eq(ik_iova_init(&d, &c), -EINVAL);
	cfg_init(&c, 10, 9);
	ck_assert_int_eq(ik_iova_init(&d, &c), -EINVAL);
	cfg_init(&c, 0, 100);
	c.rcache_max_pages = 24;
	ck_assert_int_eq(ik_iova_init(&d, &c), -EINVAL);
	c.rcache_max_pages = 1ull << 21;
	ck_assert_int_eq(ik_iova_init(&d, &c), -EINVAL);
	/* allocation failure at each allocation of init: nothing leaks */
	ik_fault_alloc_init(&fa);
	cfg_init(&c, 0, 100);
	c.allocator = &fa.a;
	for (long k = 1; k <= 2; k++) {
		ik_fault_alloc_fail_nth(&fa, k);
		ck_assert_int_eq(ik_iova_init(&d, &c), -ENOMEM);
		ck_assert_int_eq(fa.live, 0);
	}
	ik_fault_alloc_disarm(&fa);
	ck_assert_int_eq(ik_iova_init(&d, &c), 0);
	ik_iova_destroy(&d);
	ck_assert_int_eq(fa.live, 0);
	/* Issue #13 item 6: unknown flag bits and NULL are refused. */
	c.flags = 0x4;
	ck_assert_int_eq(ik_iova_init(&d, &c), -EINVAL);
	c.flags = 0x80000000u;
	ck_assert_int_eq(ik_iova_init(&d, &c), -EINVAL);
	c.flags = 0;
	ck_assert_int_eq(ik_iova_init(NULL, &c), -EINVAL);
	ck_assert_int_eq(ik_iova_init(&d, NULL), -EINVAL);
	ck_assert_int_eq(fa.live, 0);
	/* Destroy is idempotent and takes NULL; a destroyed domain can be
	 * initialised again. */
	ck_assert_int_eq(ik_iova_init(&d, &c), 0);
	ik_iova_destroy(&d);
	ik_iova_destroy(&d);
	ik_iova_destroy(NULL);
	ck_assert_int_eq(ik_iova_init(&d, &c), 0);
#ifdef IK_TEST_LIB_DEBUG
	/* A debug library refuses to re-initialise a live domain (which would
	 * leak its arrays and ranges) and changes nothing. */
	uint64_t p;

	ck_assert_int_eq(ik_iova_alloc(&d, 4, 100, 0, &p), 0);
	ck_assert_int_eq(ik_iova_init(&d, &c), -EBUSY);
	ck_assert_int_eq(ik_iova_free(&d, p), 0);
	CHECK_OK(&d);
#endif
	ik_iova_destroy(&d);
	ck_assert_int_eq(fa.live, 0);
}
END_TEST

/* A domain with some of everything in it, for the error tests. */
static void busy_domain(struct ik_iova_domain *d, const struct ik_allocator *a)
{
	uint64_t p;

	dom_init(d, 16, 1023, 0, a);
	for (int i = 0; i < 20; i++)
		ck_assert_int_eq(ik_iova_alloc(d, 1 + (uint64_t)i % 5, 1023, IK_IOVA_SIZE_ALIGNED, &p), 0);
	ck_assert_int_eq(ik_iova_reserve(d, 100, 131), 0);
	for (int i = 0; i < 10; i++) {
		ck_assert_int_eq(ik_iova_alloc_fast(d, 1, 1023, &p), 0);
		if (i & 1)
			ck_assert_int_eq(ik_iova_free_fast(d, p, 1), 0);
	}
}

START_TEST(test_alloc_errors_leave_domain_unchanged)
{
	struct ik_iova_domain d;
	struct ik_fault_alloc fa;
	uint64_t p = 77;
	struct snap s0;

	pin_cpu0();
	ik_fault_alloc_init(&fa);
	busy_domain(&d, &fa.a);
	s0 = snapshot(&d);
	ck_assert_int_eq(ik_iova_alloc(&d, 0, 1023, 0, &p), -EINVAL);
	ck_assert_int_eq(ik_iova_alloc(&d, 1009, 1023, 0, &p), -EINVAL); /* > space */
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 15, 0, &p), -EINVAL);	  /* limit < start */
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 0, 1023, &p), -EINVAL);
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 15, &p), -EINVAL);
	/* Issue #13 item 6: unknown flags, and NULL pfn also on a cache hit
	 * (the cache holds 1-page ranges here; it crashed before). */
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 1023, 0x4, &p), -EINVAL);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 1023, 0, NULL), -EINVAL);
	ck_assert_int_eq(ik_iova_alloc(NULL, 1, 1023, 0, &p), -EINVAL);
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 1023, NULL), -EINVAL);
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 64, 1023, NULL), -EINVAL);
	ck_assert_int_eq(ik_iova_alloc_fast(NULL, 1, 1023, &p), -EINVAL);
	ck_assert_int_eq(ik_iova_free_fast(NULL, 20, 1), -EINVAL);
	/* fits the space, not the gaps */
	ck_assert_int_eq(ik_iova_alloc(&d, 1008, 1023, IK_IOVA_NO_FLUSH, &p), -ENOSPC);
	ck_assert_int_eq(ik_iova_alloc(&d, 600, 1023, IK_IOVA_NO_FLUSH | IK_IOVA_SIZE_ALIGNED, &p),
			 -ENOSPC);
	ck_assert_uint_eq(p, 77);
	SNAP_EQ(snapshot(&d), s0);
	ik_fault_alloc_fail_nth(&fa, 1);
	ck_assert_int_eq(ik_iova_alloc(&d, 3, 1023, 0, &p), -ENOMEM);
	ik_fault_alloc_fail_nth(&fa, 1);
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 64, 1023, &p), -ENOMEM); /* above the bound */
	ik_fault_alloc_disarm(&fa);
	SNAP_EQ(snapshot(&d), s0);
	/* With the flush allowed, a failing request returns the cached ranges to
	 * the tree first; the allocations themselves are unchanged. */
	{
		struct ik_iova_stats a, b;

		ik_iova_stats(&d, &a);
		ck_assert_uint_gt(a.cached_ranges, 0);
		ck_assert_int_eq(ik_iova_alloc(&d, 1008, 1023, 0, &p), -ENOSPC);
		ik_iova_stats(&d, &b);
		ck_assert_uint_eq(b.cached_ranges, 0);
		ck_assert_uint_eq(b.flushes, a.flushes + 1);
		ck_assert_uint_eq(b.ranges, a.ranges - a.cached_ranges);
	}
	CHECK_OK(&d);
	ik_iova_destroy(&d);
	ck_assert_int_eq(fa.live, 0);
}
END_TEST

START_TEST(test_free_and_find_errors_leave_domain_unchanged)
{
	struct ik_iova_domain d;
	struct ik_iova_range r;
	uint64_t p, q;
	struct snap s0;

	pin_cpu0();
	busy_domain(&d, NULL);
	ck_assert_int_eq(ik_iova_alloc(&d, 4, 1023, IK_IOVA_SIZE_ALIGNED, &p), 0);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 1023, 0, &q), 0);
	ck_assert_int_eq(ik_iova_free(&d, q), 0);
	s0 = snapshot(&d);
	ck_assert_int_eq(ik_iova_free(&d, q), -ENOENT);	/* double free */
	ck_assert_int_eq(ik_iova_free(&d, p + 1), -ENOENT); /* inside a range */
	ck_assert_int_eq(ik_iova_free(&d, 100), -ENOENT);	/* a reservation */
	ck_assert_int_eq(ik_iova_free(&d, 20), -ENOENT);	/* never allocated */
	ck_assert_int_eq(ik_iova_free(&d, 5), -ENOENT);	/* outside */
	ck_assert_int_eq(ik_iova_free(&d, ~0ull), -ENOENT);
	ck_assert_int_eq(ik_iova_find(&d, q, &r), -ENOENT);
	ck_assert_int_eq(ik_iova_find(&d, 5, &r), -ENOENT);
	ck_assert_int_eq(ik_iova_find(&d, 5000, &r), -ENOENT);
	ck_assert_int_eq(ik_iova_free_fast(&d, q, 64), -ENOENT); /* above the bound: the tree */
	ck_assert_int_eq(ik_iova_free_fast(&d, q, 0), -EINVAL);
	ck_assert_int_eq(ik_iova_largest_free(&d, 15, &q), -EINVAL);
	ck_assert_int_eq(ik_iova_flush_cpu(&d, IK_ENV_NR_CPUS()), -EINVAL);
	SNAP_EQ(snapshot(&d), s0);
	ck_assert_int_eq(ik_iova_find(&d, p + 3, &r), 0);
	ck_assert(r.lo == p && r.hi == p + 3 && !r.reserved);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
}
END_TEST

START_TEST(test_reserve_errors_leave_domain_unchanged)
{
	struct ik_iova_domain d;
	struct ik_fault_alloc fa;
	struct snap s0;
	uint64_t p;

	pin_cpu0();
	ik_fault_alloc_init(&fa);
	busy_domain(&d, &fa.a);
	ck_assert_int_eq(ik_iova_alloc(&d, 8, 1023, IK_IOVA_SIZE_ALIGNED, &p), 0);
	s0 = snapshot(&d);
	ck_assert_int_eq(ik_iova_reserve(&d, 300, 299), -EINVAL);
	ck_assert_int_eq(ik_iova_reserve(&d, 15, 20), -EINVAL);
	ck_assert_int_eq(ik_iova_reserve(&d, 1000, 1024), -EINVAL);
	ck_assert_int_eq(ik_iova_reserve(&d, 0, ~0ull), -EINVAL);
	ck_assert_int_eq(ik_iova_reserve(&d, p + 7, p + 20), -EBUSY);
	ck_assert_int_eq(ik_iova_reserve(&d, 50, 1023), -EBUSY);
	SNAP_EQ(snapshot(&d), s0);
	ik_fault_alloc_fail_nth(&fa, 1);
	ck_assert_int_eq(ik_iova_reserve(&d, 40, 41), -ENOMEM);
	ik_fault_alloc_disarm(&fa);
	SNAP_EQ(snapshot(&d), s0);
	/* merging allocates nothing: it succeeds even when allocation fails */
	ik_fault_alloc_fail_nth(&fa, 1);
	ck_assert_int_eq(ik_iova_reserve(&d, 120, 140), 0);
	ik_fault_alloc_disarm(&fa);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
	ck_assert_int_eq(fa.live, 0);
}
END_TEST

/* A deterministic sequence, replayed with the k-th allocation failing. */
enum { SEQ_LEN = 700 };

struct seq_state {
	uint64_t live[SEQ_LEN];
	uint64_t npg[SEQ_LEN];
	bool fast[SEQ_LEN];
	size_t n;
	uint64_t freed; /* pfn of the last free */
};

/* Run op i; returns its result. */
static int seq_op(struct ik_iova_domain *d, struct ik_rng *r, struct seq_state *s)
{
	uint64_t op = ik_rng_below(r, 100), p;
	int rc;

	if (op < 30 || s->n == 0) {
		uint64_t n = 1 + ik_rng_below(r, 6);

		rc = ik_iova_alloc(d, n, 200 + ik_rng_below(r, 4000), ik_rng_below(r, 2), &p);
		if (rc == 0) {
			s->live[s->n] = p;
			s->npg[s->n] = n;
			s->fast[s->n++] = false;
		}
		return rc;
	}
	if (op < 55) {
		uint64_t n = 1 + ik_rng_below(r, 40);

		rc = ik_iova_alloc_fast(d, n, 4095, &p);
		if (rc == 0) {
			s->live[s->n] = p;
			s->npg[s->n] = n;
			s->fast[s->n++] = true;
		}
		return rc;
	}
	if (op < 60)
	{
		uint64_t lo = 1 + ik_rng_below(r, 4000);

		return ik_iova_reserve(d, lo, lo + ik_rng_below(r, 8));
	}
	{
		size_t i = ik_rng_below(r, s->n);
		uint64_t pfn = s->live[i], n = s->npg[i];
		bool f = s->fast[i];

		s->live[i] = s->live[s->n - 1];
		s->npg[i] = s->npg[s->n - 1];
		s->fast[i] = s->fast[--s->n];
		s->freed = pfn;
		return f ? ik_iova_free_fast(d, pfn, n) : ik_iova_free(d, pfn);
	}
}

START_TEST(test_allocation_failure_at_every_point_of_a_sequence)
{
	struct ik_fault_alloc fa;
	struct ik_iova_domain d;
	struct ik_iova_config c;
	static struct snap ref[SEQ_LEN + 1];
	static long calls_before[SEQ_LEN + 1];
	static struct seq_state st;
	int len = (int)IK_MAX(200L, IK_MIN((long)SEQ_LEN, model_iters(SEQ_LEN * 8) / 8));
	long total, enomem = 0, fallback = 0;

	pin_cpu0();
	ik_fault_alloc_init(&fa);
	cfg_init(&c, 1, 4095);
	c.allocator = &fa.a;
	c.depot_max = 1;
	/* Reference run: the state before each op, and the allocations so far. */
	ck_assert_int_eq(ik_iova_init(&d, &c), 0);
	{
		struct ik_rng r = { 0xfa117u };

		st.n = 0;
		fa.calls = 0;
		for (int i = 0; i < len; i++) {
			ref[i] = snapshot(&d);
			calls_before[i] = fa.calls;
			(void)seq_op(&d, &r, &st);
		}
		calls_before[len] = total = fa.calls;
		CHECK_OK(&d);
	}
	ik_iova_destroy(&d);
	ck_assert_int_eq(fa.live, 0);
	ck_assert(total > 50);
	/* Replay with allocation k (counted from after init) failing. */
	for (long k = 1; k <= total; k++) {
		struct ik_rng r = { 0xfa117u };
		int i, rc;

		ck_assert_int_eq(ik_iova_init(&d, &c), 0);
		st.n = 0;
		fa.calls = 0;
		for (i = 0; calls_before[i + 1] < k; i++)
			(void)seq_op(&d, &r, &st);
		IK_REQUIRE(fa.calls == calls_before[i]);
		SNAP_EQ(snapshot(&d), ref[i]);
		ik_fault_alloc_fail_nth(&fa, k - calls_before[i]);
		rc = seq_op(&d, &r, &st);
		ik_fault_alloc_disarm(&fa);
		IK_REQUIRE(fa.failures == enomem + fallback + 1);
		if (rc == -ENOMEM) {
			/* the failed operation changed nothing */
			SNAP_EQ(snapshot(&d), ref[i]);
			enomem++;
		} else {
			/* a free_fast that could not get a magazine: the range went
			 * back to the tree instead of a cache */
			struct ik_iova_range rr;

			IK_REQUIRE_MSG(rc == 0, "op %d with allocation %ld failing: rc %d", i, k, rc);
			IK_REQUIRE(ik_iova_find(&d, st.freed, &rr) == -ENOENT);
			fallback++;
		}
		CHECK_OK(&d);
		ik_iova_destroy(&d);
		IK_REQUIRE_MSG(fa.live == 0, "leak after failing allocation %ld", k);
	}
	ck_assert(enomem > 0 && fallback > 0);
}
END_TEST

/* ---------------------------------------------------------------- rcache */

/* The exported ik_iova_alloc_fast()/ik_iova_free_fast() and their inline
 * forms (IK_INLINE_FAST, tests/iova_inline.c) are one contract: the same
 * random sequence on two identical domains gives the same pfns and errors,
 * the forms may be mixed on one domain, and both refuse bad arguments. */
START_TEST(test_inline_and_exported_fast_paths_agree)
{
	struct ik_iova_domain a, b;
	struct ik_rng r = { 0x1f00d };
	uint64_t live[64], sz[64], pa, pb;
	unsigned n = 0;

	pin_cpu0();
	dom_init(&a, 1, 4095, 0, NULL);
	dom_init(&b, 1, 4095, 0, NULL);
	for (int i = 0; i < 20000; i++) {
		if (n < 64 && (n == 0 || ik_rng_below(&r, 2))) {
			uint64_t np = 1 + ik_rng_below(&r, 40), lim = 64 + ik_rng_below(&r, 4032);
			int ea = ik_iova_alloc_fast(&a, np, lim, &pa);
			int eb = t_iova_alloc_fast_inline(&b, np, lim, &pb);

			ck_assert_int_eq(ea, eb);
			if (ea == 0) {
				ck_assert_uint_eq(pa, pb);
				live[n] = pa;
				sz[n++] = np;
			}
		} else {
			unsigned k = (unsigned)ik_rng_below(&r, n);

			ck_assert_int_eq(ik_iova_free_fast(&a, live[k], sz[k]),
					 t_iova_free_fast_inline(&b, live[k], sz[k]));
			live[k] = live[--n];
			sz[k] = sz[n];
		}
	}
	CHECK_OK(&a);
	CHECK_OK(&b);
	/* mixed on one domain: an inline allocation freed through the export */
	ck_assert_int_eq(t_iova_alloc_fast_inline(&a, 3, 4095, &pa), 0);
	ck_assert_int_eq(ik_iova_free_fast(&a, pa, 3), 0);
	ck_assert_int_eq(ik_iova_alloc_fast(&a, 3, 4095, &pb), 0);
	ck_assert_uint_eq(pa, pb); /* the same magazine */
	ck_assert_int_eq(t_iova_free_fast_inline(&a, pb, 3), 0);
	CHECK_OK(&a);
	ck_assert_int_eq(t_iova_alloc_fast_inline(NULL, 1, 4095, &pa), -EINVAL);
	ck_assert_int_eq(t_iova_alloc_fast_inline(&a, 1, 4095, NULL), -EINVAL);
	ck_assert_int_eq(t_iova_alloc_fast_inline(&a, 0, 4095, &pa), -EINVAL);
	ck_assert_int_eq(t_iova_free_fast_inline(NULL, 1, 1), -EINVAL);
	ck_assert_int_eq(t_iova_free_fast_inline(&a, 1, 0), -EINVAL);
	ik_iova_destroy(&a);
	ik_iova_destroy(&b);
}
END_TEST

START_TEST(test_rcache_reuses_freed_ranges)
{
	struct ik_iova_domain d;
	struct ik_iova_stats st;
	uint64_t p, q;

	pin_cpu0();
	dom_init(&d, 1, 1 << 20, 0, NULL);
	for (uint64_t n = 1; n <= 32; n++) {
		ck_assert_int_eq(ik_iova_alloc_fast(&d, n, 1 << 20, &p), 0);
		uint64_t pages = 1;

		while (pages < n)
			pages <<= 1;
		ck_assert_uint_eq(p & (pages - 1), 0);
		ck_assert_int_eq(ik_iova_free_fast(&d, p, n), 0);
		ck_assert_int_eq(ik_iova_alloc_fast(&d, n, 1 << 20, &q), 0);
		ck_assert_uint_eq(p, q);
		ck_assert_int_eq(ik_iova_free_fast(&d, q, n), 0);
	}
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.cached_ranges, 6); /* one per class 1..32 */
	ck_assert_uint_eq(st.cached_pages, 1 + 2 + 4 + 8 + 16 + 32);
	ck_assert_uint_eq(st.ranges, 6);
	/* a cached range above the limit is not returned */
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 1000, &p), 0);
	ck_assert_uint_le(p, 1000);
	ck_assert_int_eq(ik_iova_free_fast(&d, p, 1), 0);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
}
END_TEST

START_TEST(test_rcache_flush_returns_ranges_to_the_tree)
{
	struct ik_iova_domain d;
	struct ik_iova_stats st;
	uint64_t p[300];
	unsigned cpu = pin_cpu0();

	dom_init(&d, 0, 4095, 0, NULL);
	for (int i = 0; i < 300; i++)
		ck_assert_int_eq(ik_iova_alloc_fast(&d, 2, 4095, &p[i]), 0);
	for (int i = 0; i < 300; i++)
		ck_assert_int_eq(ik_iova_free_fast(&d, p[i], 2), 0);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.cached_ranges, 300);
	ck_assert_uint_eq(st.ranges, 300);
	ck_assert_uint_ge(st.magazines, 3);
	CHECK_OK(&d);
	ck_assert_int_eq(ik_iova_flush_cpu(&d, cpu), 0);
	ik_iova_stats(&d, &st);
	ck_assert_uint_lt(st.cached_ranges, 300); /* the CPU's magazines went back */
	ck_assert_uint_eq(st.ranges, st.cached_ranges);
	ik_iova_flush_all(&d);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.cached_ranges, 0);
	ck_assert_uint_eq(st.ranges, 0);
	ck_assert_uint_eq(st.magazines, 0);
	ck_assert_uint_eq(st.largest_gap, 4096);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
}
END_TEST

START_TEST(test_alloc_succeeds_when_only_cached_ranges_are_free)
{
	struct ik_iova_domain d;
	struct ik_iova_stats st;
	uint64_t p;
	struct snap s0;

	pin_cpu0();
	dom_init(&d, 0, 255, 0, NULL);
	for (int i = 0; i < 256; i++)
		ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 255, &p), 0);
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 255, &p), -ENOSPC);
	for (uint64_t i = 0; i < 256; i++)
		ck_assert_int_eq(ik_iova_free_fast(&d, i, 1), 0);
	s0 = snapshot(&d);
	ck_assert_int_eq(ik_iova_alloc(&d, 256, 255, IK_IOVA_NO_FLUSH, &p), -ENOSPC);
	SNAP_EQ(snapshot(&d), s0);
	ck_assert_int_eq(ik_iova_alloc(&d, 256, 255, 0, &p), 0); /* flush, retry */
	ck_assert_uint_eq(p, 0);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.flushes, 1);
	ck_assert_uint_eq(st.cached_ranges, 0);
	ck_assert_uint_eq(st.ranges, 1);
	ck_assert_int_eq(ik_iova_free(&d, 0), 0);
	/* the same through the fast path's miss */
	for (uint64_t i = 0; i < 8; i++)
		ck_assert_int_eq(ik_iova_alloc_fast(&d, 32, 255, &p), 0);
	for (uint64_t i = 0; i < 8; i++)
		ck_assert_int_eq(ik_iova_free_fast(&d, i * 32, 32), 0);
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 16, 255, &p), 0);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.flushes, 2);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
}
END_TEST

START_TEST(test_depot_is_trimmed_to_its_bound)
{
	struct ik_iova_domain d;
	struct ik_iova_config c;
	struct ik_iova_stats st;
	enum { N = 126 * 12 };
	static uint64_t p[N];

	pin_cpu0();
	cfg_init(&c, 0, (1 << 16) - 1);
	c.depot_max = 2;
	ck_assert_int_eq(ik_iova_init(&d, &c), 0);
	fast_alloc_n(&d, p, N, ~0ull);
	fast_free_n(&d, p, N);
	ik_iova_stats(&d, &st);
	/* at most: 2 magazines per CPU slot in use + 2 in the depot */
	ck_assert_uint_le(st.cached_ranges, (2 * IK_ENV_NR_CPUS() + 2) * IK_IOVA_MAG_SIZE);
	ck_assert_uint_ge(st.trims, 1);
	ck_assert_uint_le(st.magazines, 2 * IK_ENV_NR_CPUS() + 2);
	ck_assert_uint_eq(st.ranges, st.cached_ranges);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
}
END_TEST

START_TEST(test_rcache_magazines_rotate_through_prev_and_depot)
{
	struct ik_iova_domain d;
	struct ik_iova_config c;
	struct ik_iova_stats st;
	struct ik_iova_range rr;
	struct ik_fault_alloc fa;
	enum { N = 400 };
	static uint64_t p[N], q[N];

	pin_cpu0();
	ik_fault_alloc_init(&fa);
	cfg_init(&c, 0, 65535);
	c.depot_max = 4;
	c.allocator = &fa.a;
	ck_assert_int_eq(ik_iova_init(&d, &c), 0);
	fast_alloc_n(&d, p, N, ~0ull);
	/* 126 fill the loaded magazine, 126 a second one (the first becomes
	 * prev), then full ones go to the depot. */
	fast_free_n(&d, p, N);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.cached_ranges, N);
	ck_assert_uint_eq(st.magazines, 4);
	CHECK_OK(&d);
	/* Every allocation is now a hit: loaded, then prev (swapped in), then
	 * full magazines from the depot.  The tree is not touched. */
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, ~0ull, &q[i]), 0);
		ik_iova_stats(&d, &st);
		IK_REQUIRE(st.ranges == N && st.cached_ranges == (uint64_t)(N - 1 - i));
	}
	qsort(p, N, sizeof(p[0]), cmp_u64);
	qsort(q, N, sizeof(q[0]), cmp_u64);
	ck_assert(memcmp(p, q, sizeof(p)) == 0);
	CHECK_OK(&d);
	/* Freeing into a full loaded magazine swaps in the empty prev. */
	for (int i = 0; i < 127; i++)
		ck_assert_int_eq(ik_iova_free_fast(&d, q[i], 1), 0);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.cached_ranges, 127);
	ck_assert_uint_le(st.magazines, 2);
	CHECK_OK(&d);
	/* A cached range above the limit is skipped, one below it is found
	 * deeper in the magazine (a hit: no new tree range). */
	{
		uint64_t lim = q[0], got;

		ik_iova_stats(&d, &st);
		ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, lim, &got), 0);
		ck_assert_uint_le(got, lim);
		{
			struct ik_iova_stats st2;

			ik_iova_stats(&d, &st2);
			ck_assert_uint_eq(st2.ranges, st.ranges);
			ck_assert_uint_eq(st2.cached_ranges, st.cached_ranges - 1);
		}
		ck_assert_int_eq(ik_iova_free_fast(&d, got, 1), 0);
	}
	/* Fill both magazines, then make the magazine that replaces the one
	 * going to the depot fail: the range goes back to the tree. */
	for (int i = 127; i < 252; i++)
		ck_assert_int_eq(ik_iova_free_fast(&d, q[i], 1), 0);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.cached_ranges, 252);
	ik_fault_alloc_fail_nth(&fa, 1);
	ck_assert_int_eq(ik_iova_free_fast(&d, q[252], 1), 0);
	ik_fault_alloc_disarm(&fa);
	ck_assert_int_eq(ik_iova_find(&d, q[252], &rr), -ENOENT);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.cached_ranges, 252);
	CHECK_OK(&d);
	for (int i = 253; i < N; i++)
		ck_assert_int_eq(ik_iova_free_fast(&d, q[i], 1), 0);
	CHECK_OK(&d);
	ik_iova_flush_all(&d);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.ranges, 0);
	ck_assert_uint_eq(st.magazines, 0);
	ik_iova_destroy(&d);
	ck_assert_int_eq(fa.live, 0);
}
END_TEST

static int stop_at_second(void *ctx, const struct ik_iova_range *r)
{
	(void)r;
	return ++*(int *)ctx == 2 ? 42 : 0;
}

static int stop_cached(void *ctx, ik_u64 pfn, ik_u64 pages)
{
	(void)pfn;
	(void)pages;
	++*(int *)ctx;
	return 7;
}

START_TEST(test_checker_detects_corruption)
{
	struct ik_iova_domain d;
	struct ik_iova_node *n;
	uint64_t p, q, saved;
	int calls = 0;

	pin_cpu0();
	dom_init(&d, 0, 1023, 0, NULL);
	for (int i = 0; i < 50; i++)
		ck_assert_int_eq(ik_iova_alloc(&d, 1 + (uint64_t)i % 3, 1023, 0, &p), 0);
	ck_assert_int_eq(ik_iova_free(&d, 1023), 0); /* the first one: a hole at the top */
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 4, 1023, &q), 0);
	ck_assert_int_eq(ik_iova_free_fast(&d, q, 4), 0);
	CHECK_OK(&d);
	ck_assert_int_eq(ik_iova_for_each(&d, stop_at_second, &calls), 42);
	ck_assert_int_eq(calls, 2);
	calls = 0;
	ck_assert_int_eq(ik_iova_for_each_cached(&d, stop_cached, &calls), 7);
	ck_assert_int_eq(calls, 1);
	n = ik_rb_entry(d.root.node, struct ik_iova_node, rb);
	saved = n->max_gap;
	n->max_gap = saved + 1;
	ck_assert_int_eq(ik_iova_check(&d), IK_IOVA_CHECK_AUGMENT);
	n->max_gap = saved;
	d.nr_pages++;
	ck_assert_int_eq(ik_iova_check(&d), IK_IOVA_CHECK_COUNTERS);
	d.nr_pages--;
	n = ik_rb_entry(ik_rb_first(&d.root), struct ik_iova_node, rb);
	saved = n->gap_lo;
	n->gap_lo = saved + 1; /* also changes its own gap: recompute */
	ck_assert_int_ne(ik_iova_check(&d), 0);
	n->gap_lo = saved;
	CHECK_OK(&d);
	/* a hint or a kept node that is not in the tree */
	{
		struct ik_iova_node stray = *n, *h = d.hint, *k = d.tomb;

		d.hint = &stray;
		ck_assert_int_eq(ik_iova_check(&d), IK_IOVA_CHECK_HINT);
		d.hint = h;
		d.tomb = n; /* a node with a range */
		ck_assert_int_eq(ik_iova_check(&d), IK_IOVA_CHECK_HINT);
		d.tomb = k;
		k = d.spare;
		d.spare = n; /* a spare that is still in the tree */
		ck_assert_int_eq(ik_iova_check(&d), IK_IOVA_CHECK_HINT);
		d.spare = k;
		ck_assert_str_ne(ik_iova_check_str(IK_IOVA_CHECK_HINT), "unknown check result");
	}
	CHECK_OK(&d);
	/* a pfn freed to the cache twice */
	ck_assert_int_eq(ik_iova_free_fast(&d, q, 4), 0);
	ck_assert_int_eq(ik_iova_check(&d), IK_IOVA_CHECK_CACHE_DUP);
	ck_assert_str_ne(ik_iova_check_str(IK_IOVA_CHECK_CACHE_DUP), "unknown check result");
	/* destroy frees magazines without returning their ranges: safe here */
	ik_iova_destroy(&d);
}
END_TEST

START_TEST(test_no_rcache_and_large_sizes_go_to_the_tree)
{
	struct ik_iova_domain d;
	struct ik_iova_stats st;
	uint64_t p;

	dom_init(&d, 0, 4095, IK_IOVA_CFG_NO_RCACHE, NULL);
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 3, 4095, &p), 0);
	ck_assert_uint_eq(p, 4092); /* not rounded: no caches, size-aligned 3 */
	ck_assert_int_eq(ik_iova_free_fast(&d, p, 3), 0);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.ranges, 0);
	ik_iova_destroy(&d);
	dom_init(&d, 0, 4095, 0, NULL);
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 33, 4095, &p), 0);
	ck_assert_uint_eq(p, 4096 - 64);
	ck_assert_int_eq(ik_iova_free_fast(&d, p, 33), 0);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.ranges, 0);
	ck_assert_uint_eq(st.cached_ranges, 0);
	ik_iova_destroy(&d);
}
END_TEST

/* ---------------------------------------------------------------- threads */


/*
 * Four threads share a domain: fast and tree allocations and frees (inline
 * and exported), flushes of random CPUs, stats and full flushes, while a
 * fifth runs the checker in a loop; every pfn has at most one owner.  In
 * the default mode (RSEQ where the platform has it, so hits race with
 * lockers on other CPUs and with migrations) and with the per-CPU locks.
 */
START_TEST(test_threads_share_a_domain_without_overlap)
{
	const unsigned flags = _i ? IK_IOVA_CFG_LOCKED_RCACHE : 0;
	enum { T = 4 };
	struct ik_iova_domain d;
	struct ik_iova_config cfg;
	struct ik_iova_stats st;
	struct iova_mt c[T];
	struct iova_checker k = { &d, 0, 0, 0, NULL, 0 };
	pthread_t th[T], kt;
	uint8_t *owner = calloc(IOVA_MT_SPACE, 1);
	long ops = ik_test_iters(IK_TEST_TSAN ? 20000 : 200000);

	cfg_init(&cfg, 0, IOVA_MT_SPACE - 1);
	cfg.depot_max = 2;
	cfg.flags = flags;
	ck_assert_int_eq(ik_iova_init(&d, &cfg), 0);
	if (flags)
		ck_assert_int_eq(ik_iova_rcache_mode(&d), IK_IOVA_RCACHE_LOCK);
	else
		ck_assert_int_eq(ik_iova_rcache_mode(&d), expected_default_mode());
	ck_assert_int_eq(ik_iova_reserve(&d, 1000, 1999), 0);
	for (unsigned i = 0; i < T; i++) {
		c[i] = (struct iova_mt){ .d = &d, .owner = owner, .ops = ops, .id = i,
					 .ncpus = IK_ENV_NR_CPUS(), .seed = 0x7e57u };
		ck_assert_int_eq(pthread_create(&th[i], NULL, iova_mt_worker, &c[i]), 0);
	}
	ck_assert_int_eq(pthread_create(&kt, NULL, iova_check_loop, &k), 0);
	for (unsigned i = 0; i < T; i++) {
		pthread_join(th[i], NULL);
		ck_assert_msg(c[i].fail == 0, "thread %u failed: %d", i, c[i].fail);
	}
	__atomic_store_n(&k.stop, 1, __ATOMIC_RELEASE);
	pthread_join(kt, NULL);
	ck_assert_msg(k.err == 0, "ik_iova_check() during the run: %d", k.err);
	ck_assert_int_gt(k.runs, 0);
	CHECK_OK(&d);
	ik_iova_flush_all(&d);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.ranges, 1);
	ck_assert_uint_eq(st.pages, 1000);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
	free(owner);
}
END_TEST

/*
 * A free updates its successor's summary inside the erase's own pass when
 * that pass starts at the successor (two children, or a left child with no
 * right child): random frees of every shape, under random limits, sizes
 * and alignment, with the checker (augmented values included) after each.
 */
START_TEST(test_free_summary_update_shares_the_erase_pass)
{
	struct ik_iova_domain d;
	uint64_t live[1024], s = 99, p;
	unsigned n = 0;
	long i, iters = model_iters(20000);

	dom_init(&d, 3, 3000, IK_IOVA_CFG_NO_RCACHE, NULL);
	for (i = 0; i < iters; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		if (((s >> 33) % 10) < 5 && n < 1024) {
			uint64_t k = 1 + (s >> 40) % (i & 1 ? 32 : 3);
			uint64_t lim = (s >> 20) % 3 ? 3000 : 3 + (s >> 24) % 2998;
			unsigned fl = (s >> 50) & 1 ? IK_IOVA_SIZE_ALIGNED : 0;

			if (ik_iova_alloc(&d, k, lim, fl, &p) == 0)
				live[n++] = p;
		} else if (n) {
			unsigned j = (unsigned)((s >> 36) % n);

			ck_assert_int_eq(ik_iova_free(&d, live[j]), 0);
			live[j] = live[--n];
		}
		CHECK_OK(&d);
	}
	ik_iova_destroy(&d);
}
END_TEST

/*
 * The hint's probe tried on every allocation (its credit forced on), in a
 * W3-like churn of mixed sizes (aligned or not), with frees and a few
 * reservations that erase or keep the hint's node: every result is the model's (the
 * highest fit under the limit, aligned as asked: a probe that answered with
 * a lower gap, or an overlapping range, would differ), the checker passes
 * after every call (a hint left on a node that is no longer in the tree,
 * the spare included, is IK_IOVA_CHECK_HINT; summaries that the update
 * after an allocation left wrong are IK_IOVA_CHECK_AUGMENT), and both
 * outcomes of the probe occur and are counted.
 */
START_TEST(test_probe_on_every_allocation_matches_model)
{
	const uint64_t start = 1, end = 4095;
	struct ik_iova_domain d;
	ik_u32 h0, m0, h1, m1;
	struct model m;
	struct ik_rng r = { 0x9e0be5u };
	long ops = model_iters(30000), allocs = 0, resv = 0;

	dom_init(&d, start, end, IK_IOVA_CFG_NO_RCACHE, NULL);
	model_init(&m, start, end);
	/* fill about a quarter, from the top */
	while (m.pages < (end - start + 1) / 4) {
		uint64_t n = 1 + ik_rng_below(&r, 16), got, want;

		ck_assert(model_place(&m, n, true, end, &want));
		ck_assert_int_eq(ik_iova_alloc(&d, n, end, IK_IOVA_SIZE_ALIGNED, &got), 0);
		ck_assert_uint_eq(got, want);
		model_alloc(&m, got, n);
	}
	ck_assert_int_eq(ik_iova_probe_stats(&d, &h0, &m0), 0);
	for (long i = 0; i < ops; i++) {
		uint64_t n = 1 + ik_rng_below(&r, 16), lim = end, got = 0, want = 0;
		bool al = ik_rng_below(&r, 4) != 0, fit;
		size_t li;
		int rc;

		if (m.nlive && ik_rng_below(&r, 8) != 0) {
			li = ik_rng_below(&r, m.nlive);
			ck_assert_int_eq(ik_iova_free(&d, m.live[li]), 0);
			model_free_at(&m, li);
			CHECK_OK(&d);
		}
		if (d.tomb && d.hint == d.tomb && resv < 200 && ik_rng_below(&r, 4) == 0) {
			/* a reservation of a free page: drops the kept node, here
			 * the hint too */
			uint64_t lo = start + ik_rng_below(&r, end - start + 1);

			while (m.st[lo - start] != FREE)
				lo = lo == end ? start : lo + 1;
			ck_assert_int_eq(model_reserve(&m, lo, lo), 0);
			ck_assert_int_eq(ik_iova_reserve(&d, lo, lo), 0);
			model_count_resv(&m);
			resv++;
			CHECK_OK(&d);
		}
		if (ik_rng_below(&r, 16) == 0)
			lim = start + ik_rng_below(&r, end - start + 1);
		d.hint_credit = 1;
		fit = model_place(&m, n, al, lim, &want);
		rc = ik_iova_alloc(&d, n, lim, al ? IK_IOVA_SIZE_ALIGNED : 0, &got);
		allocs++;
		IK_REQUIRE_MSG(rc == (fit ? 0 : -ENOSPC), "op %ld: alloc(%llu, lim %llu, al %d) rc %d",
			       i, (unsigned long long)n, (unsigned long long)lim, al, rc);
		if (fit) {
			IK_REQUIRE_MSG(got == want, "op %ld: alloc(%llu, lim %llu, al %d) at %llu, "
				       "model %llu", i, (unsigned long long)n, (unsigned long long)lim,
				       al, (unsigned long long)got, (unsigned long long)want);
			IK_REQUIRE(got + n - 1 <= lim);
			IK_REQUIRE(!al || (got & (((uint64_t)1 << log2_up(n)) - 1)) == 0);
			model_alloc(&m, got, n);
		}
		CHECK_OK(&d);
	}
	ck_assert_int_eq(ik_iova_probe_stats(&d, &h1, &m1), 0);
	ck_assert_uint_gt(h1, h0);
	ck_assert_uint_gt(m1, m0);
	ck_assert_uint_le((uint64_t)(h1 - h0) + (m1 - m0), (uint64_t)allocs);
	ck_assert_int_eq(ik_iova_probe_stats(NULL, &h1, &m1), -EINVAL);
	ck_assert_int_eq(ik_iova_probe_stats(&d, NULL, &m1), -EINVAL);
	ck_assert_int_eq(ik_iova_probe_stats(&d, &h1, NULL), -EINVAL);
	ck_assert_int_gt(resv, 0);
	ik_iova_destroy(&d);
	model_free(&m);
}
END_TEST

START_TEST(test_node_is_at_most_56_bytes)
{
	struct ik_iova_domain d;
	struct ik_iova_stats st;

	dom_init(&d, 0, 10, 0, NULL);
	ik_iova_stats(&d, &st);
	if (sizeof(void *) == 8)
		ck_assert_uint_le(st.node_bytes, 56);
	ck_assert_uint_eq(st.node_bytes, sizeof(struct ik_iova_node));
	ik_iova_destroy(&d);
}
END_TEST

/*
 * A reservation that fails (-EBUSY, -ENOMEM) keeps the kept node: nothing
 * observable changes, the memory held included; one that succeeds drops it.
 */
START_TEST(test_failed_reserve_keeps_the_kept_node)
{
	struct ik_fault_alloc fa;
	struct ik_iova_domain d;
	struct ik_iova_stats a, b;
	uint64_t p;

	three_pages(&d, &fa);
	ck_assert_int_eq(ik_iova_free(&d, 14), 0);		      /* kept: 15 is adjacent */
	ck_assert_ptr_nonnull(d.tomb);
	ik_iova_stats(&d, &a);
	ck_assert_int_eq(fa.live, 3);
	ck_assert_int_eq(ik_iova_reserve(&d, 13, 14), -EBUSY);
	ik_fault_alloc_fail_nth(&fa, 1);
	ck_assert_int_eq(ik_iova_reserve(&d, 0, 1), -ENOMEM);
	ik_fault_alloc_disarm(&fa);
	ik_iova_stats(&d, &b);
	ck_assert_int_eq(fa.live, 3);
	ck_assert_uint_eq(b.bytes, a.bytes);
	ck_assert_ptr_nonnull(d.tomb);
	CHECK_OK(&d);
	/* the free page still goes back to its node with no allocation */
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 15, 0, &p), 0);
	ck_assert_uint_eq(p, 14);
	ck_assert_int_eq(fa.live, 3);
	ck_assert_int_eq(ik_iova_free(&d, 14), 0);
	ck_assert_int_eq(ik_iova_reserve(&d, 0, 1), 0); /* succeeds: the kept node goes */
	ck_assert_ptr_null(d.tomb);
	ck_assert_ptr_nonnull(d.spare); /* ... to be the spare: 13, 15, [0, 1] and it */
	ck_assert_int_eq(fa.live, 4);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
	ck_assert_int_eq(fa.live, 0);
}
END_TEST

/* ---------------------------------------------------------------- the kept node, op by op */

/*
 * Tiny domains, every operation checked at once: tree and fast allocations
 * (aligned or not, limits anywhere, below every range too), frees that keep
 * a node (the successor adjacent) and frees of that successor, fast frees
 * and flushes (the rcache returns ranges through the tree's free), small
 * reservations, find/next at every pfn (the kept node's lo included),
 * for_each, largest_free and the stats; after each, ik_iova_check().  The
 * model holds the tree's occupancy, cached ranges included (they are still
 * allocated there).  Allocations and reservations first run with the next
 * node allocation failing: -ENOMEM must change nothing observable, memory
 * included; a success there is one that needed no node.
 */
struct kmodel {
	struct model m;
	uint8_t *cached;	/* per start pfn: the range is held by an rcache */
	struct cached_list dc;	/* the domain's cached ranges */
	uint64_t bound;		/* rcache_max_pages (0: no rcache) */
};

static bool km_is_start(const struct model *m, uint64_t i)
{
	if (m->st[i] == ALLOC)
		return m->astart[i] == m->start + i;
	return m->st[i] == RESV && (i == 0 || m->st[i - 1] != RESV);
}

/* Expected ik_iova_next(). */
static int km_next(const struct model *m, uint64_t from, struct ik_iova_range *r)
{
	uint64_t i = from < m->start ? 0 : from - m->start;

	if (from > m->end)
		return -ENOENT;
	for (; i < m->size; i++)
		if (km_is_start(m, i))
			return model_find(m, m->start + i, r);
	return -ENOENT;
}

static size_t km_live_index(const struct model *m, uint64_t s)
{
	for (size_t i = 0; i < m->nlive; i++)
		if (m->live[i] == s)
			return i;
	IK_REQUIRE_MSG(0, "pfn %llu not live in the model", (unsigned long long)s);
	return 0;
}

/* Ranges the rcaches gave back to the tree (flush, trim) are free now. */
static void km_resync(struct ik_iova_domain *d, struct kmodel *k)
{
	k->dc.n = 0;
	ik_iova_for_each_cached(d, collect_cached, &k->dc);
	for (size_t i = 0; i < k->dc.n; i++) {
		uint64_t p = k->dc.pfn[i];

		IK_REQUIRE(p >= k->m.start && p <= k->m.end && k->cached[p - k->m.start] &&
			   k->m.alen[p - k->m.start] == k->dc.pages[i]);
		k->cached[p - k->m.start] = 2; /* still cached */
	}
	for (size_t i = 0; i < k->m.nlive;) {
		uint64_t s = k->m.live[i] - k->m.start;

		if (k->cached[s] == 1) {
			k->cached[s] = 0;
			model_free_at(&k->m, i); /* moves the last entry to i */
			continue;
		}
		if (k->cached[s] == 2)
			k->cached[s] = 1;
		i++;
	}
}

static void km_verify(struct ik_iova_domain *d, const struct kmodel *k)
{
	const struct model *m = &k->m;
	struct ik_iova_stats st;
	struct ik_iova_range a, b;
	uint64_t got;

	CHECK_OK(d);
	ik_iova_stats(d, &st);
	IK_REQUIRE(st.ranges == m->ranges + m->rranges && st.pages == m->pages + m->rpages);
	IK_REQUIRE(st.reserved_ranges == m->rranges && st.reserved_pages == m->rpages);
	IK_REQUIRE(st.largest_gap == model_largest(m, m->end));
	IK_REQUIRE(st.bytes - (st.ranges + (d->tomb ? 1 : 0) + (d->spare ? 1 : 0)) * st.node_bytes ==
		   st.magazines * sizeof(struct ik_iova_mag) +
			   (uint64_t)d->rc_classes * d->rc_ncpus * sizeof(struct ik_iova_cpu) +
			   (uint64_t)d->rc_classes * sizeof(struct ik_iova_depot));
	compare_all(d, m);
	for (uint64_t p = m->start - (m->start > 0); ; p++) {
		int ra = ik_iova_next(d, p, &a), rb = km_next(m, p, &b);

		IK_REQUIRE_MSG(ra == rb, "next(%llu): %d, model %d", (unsigned long long)p, ra, rb);
		if (!ra)
			IK_REQUIRE_MSG(a.lo == b.lo && a.hi == b.hi && a.reserved == b.reserved,
				       "next(%llu): [%llu, %llu], model [%llu, %llu]",
				       (unsigned long long)p, (unsigned long long)a.lo,
				       (unsigned long long)a.hi, (unsigned long long)b.lo,
				       (unsigned long long)b.hi);
		ra = ik_iova_find(d, p, &a);
		rb = model_find(m, p, &b);
		IK_REQUIRE(ra == rb);
		if (!ra)
			IK_REQUIRE(a.lo == b.lo && a.hi == b.hi && a.reserved == b.reserved);
		if (p == m->end)
			break;
	}
	if (d->tomb) {
		/* The kept node's lo is its successor's: find, next, free see only that. */
		uint64_t t = d->tomb->lo;

		IK_REQUIRE(ik_iova_find(d, t, &a) == 0 && a.lo == t);
		IK_REQUIRE(ik_iova_next(d, t, &a) == 0 && a.lo == t);
		IK_REQUIRE(ik_iova_find(d, d->tomb->gap_lo, &a) == -ENOENT);
	}
	for (uint64_t lim = m->start; ; lim++) {
		IK_REQUIRE(ik_iova_largest_free(d, lim, &got) == 0);
		IK_REQUIRE(got == model_largest(m, lim));
		if (lim == m->end)
			break;
	}
}

/* A user range (not cached) to free; mostly one whose successor is adjacent. */
static bool km_pick(struct ik_rng *r, const struct kmodel *k, size_t *li)
{
	const struct model *m = &k->m;
	size_t users = 0, adj = 0, want;
	bool pick_adj = ik_rng_below(r, 4) != 0;

	for (size_t i = 0; i < m->nlive; i++) {
		uint64_t s = m->live[i] - m->start, e = s + m->alen[s];

		if (k->cached[s])
			continue;
		users++;
		if (e < m->size && m->st[e] != FREE)
			adj++;
	}
	if (!users)
		return false;
	if (!adj)
		pick_adj = false;
	want = ik_rng_below(r, pick_adj ? adj : users);
	for (size_t i = 0; i < m->nlive; i++) {
		uint64_t s = m->live[i] - m->start, e = s + m->alen[s];

		if (k->cached[s] || (pick_adj && !(e < m->size && m->st[e] != FREE)))
			continue;
		if (want-- == 0) {
			*li = i;
			return true;
		}
	}
	return false;
}

static uint64_t km_limit(struct ik_rng *r, const struct model *m)
{
	switch (ik_rng_below(r, 6)) {
	case 0: return ~0ull;
	case 1: case 2: return m->end;
	default: return m->start + ik_rng_below(r, m->size);
	}
}

/* An allocation (n, limit, flags, out) or a reservation (lo, hi). */
struct km_call {
	bool reserve;
	uint64_t a, b;
	unsigned flags;
	uint64_t *out;
};

static int km_do(struct ik_iova_domain *d, const struct km_call *c)
{
	return c->reserve ? ik_iova_reserve(d, c->a, c->b) : ik_iova_alloc(d, c->a, c->b, c->flags, c->out);
}

/* Run c with the next node allocation failing: -ENOMEM must change nothing
 * observable, the memory held included. */
static int km_try_enomem(struct ik_fault_alloc *fa, struct ik_iova_domain *d, const struct km_call *c)
{
	struct snap s0 = snapshot(d);
	long live0 = fa->live;
	struct ik_iova_stats a, b;
	int rc;

	ik_iova_stats(d, &a);
	ik_fault_alloc_fail_nth(fa, 1);
	rc = km_do(d, c);
	ik_fault_alloc_disarm(fa);
	if (rc == -ENOMEM) {
		ik_iova_stats(d, &b);
		SNAP_EQ(snapshot(d), s0);
		IK_REQUIRE_MSG(fa->live == live0, "-ENOMEM: live %ld, was %ld", fa->live, live0);
		IK_REQUIRE(b.bytes == a.bytes);
		CHECK_OK(d);
	}
	return rc;
}

static void kept_run(uint64_t seed, uint64_t start, uint64_t size, bool rcache, long ops)
{
	struct ik_fault_alloc fa;
	struct ik_iova_domain d;
	struct ik_iova_config c;
	struct kmodel k;
	struct ik_rng r = { seed };
	uint64_t end = start + size - 1;

	ik_fault_alloc_init(&fa);
	cfg_init(&c, start, end);
	c.allocator = &fa.a;
	c.flags = rcache ? 0 : IK_IOVA_CFG_NO_RCACHE;
	c.depot_max = 1;
	ck_assert_int_eq(ik_iova_init(&d, &c), 0);
	model_init(&k.m, start, end);
	k.cached = calloc(size, 1);
	memset(&k.dc, 0, sizeof(k.dc));
	k.bound = rcache ? d.rc_max_pages : 0;
	for (long i = 0; i < ops; i++) {
		uint64_t op = ik_rng_below(&r, 100);
		struct ik_iova_stats before, after;

		ik_iova_stats(&d, &before);
		if (op < 30) { /* tree alloc */
			uint64_t n = 1 + ik_rng_below(&r, ik_rng_below(&r, 3) ? 4 : size);
			uint64_t lim = km_limit(&r, &k.m), want = 0, got = 0;
			bool al = ik_rng_below(&r, 2), noflush = ik_rng_below(&r, 4) != 0, fit;
			unsigned fl = (al ? IK_IOVA_SIZE_ALIGNED : 0) | (noflush ? IK_IOVA_NO_FLUSH : 0);
			int rc = -ENOMEM;

			if (d.hint && d.hint->lo > d.hint->gap_lo && ik_rng_below(&r, 2)) {
				/* the hint's gap (the kept node's too): filled, or its top */
				uint64_t g = d.hint->lo - d.hint->gap_lo;

				n = ik_rng_below(&r, 2) ? g : 1 + ik_rng_below(&r, g);
				lim = ik_rng_below(&r, 4) ? ~0ull : end;
			}
			if (ik_rng_below(&r, 3) == 0) {
				struct km_call kc = { false, n, lim, fl | IK_IOVA_NO_FLUSH, &got };

				rc = km_try_enomem(&fa, &d, &kc);
			}
			if (rc == -ENOMEM)
				rc = ik_iova_alloc(&d, n, lim, fl, &got);
			ik_iova_stats(&d, &after);
			if (after.flushes != before.flushes)
				km_resync(&d, &k);
			fit = model_place(&k.m, n, al, lim, &want);
			IK_REQUIRE_MSG(rc == (fit ? 0 : -ENOSPC),
				       "seed %llx op %ld: alloc(%llu, lim %llu, al %d) rc %d",
				       (unsigned long long)seed, i, (unsigned long long)n,
				       (unsigned long long)lim, al, rc);
			if (fit) {
				IK_REQUIRE_MSG(got == want, "seed %llx op %ld: alloc(%llu, lim %llu, al %d) "
					       "at %llu, model %llu", (unsigned long long)seed, i,
					       (unsigned long long)n, (unsigned long long)lim, al,
					       (unsigned long long)got, (unsigned long long)want);
				model_alloc(&k.m, got, n);
			}
		} else if (op < 40 && rcache) { /* fast alloc */
			uint64_t n = 1 + ik_rng_below(&r, 4), pages = 1, lim = km_limit(&r, &k.m);
			uint64_t want = 0, got = 0;
			int rc;

			while (pages < n)
				pages <<= 1;
			rc = ik_iova_alloc_fast(&d, n, lim, &got);
			ik_iova_stats(&d, &after);
			if (rc == 0 && after.flushes == before.flushes && got >= start && got <= end &&
			    k.cached[got - start] && k.m.alen[got - start] == pages) {
				k.cached[got - start] = 0; /* a hit */
				IK_REQUIRE_MSG(got + pages - 1 <= lim, "cache hit [%llu, %llu] above limit %llu",
					       (unsigned long long)got, (unsigned long long)(got + pages - 1),
					       (unsigned long long)lim);
			} else {
				bool fit;

				if (after.flushes != before.flushes) {
					for (size_t j = 0; j < k.m.nlive; j++)
						if (k.cached[k.m.live[j] - start] == 1)
							k.cached[k.m.live[j] - start] = 3;
					for (size_t j = 0; j < k.m.nlive;)
						if (k.cached[k.m.live[j] - start] == 3) {
							k.cached[k.m.live[j] - start] = 0;
							model_free_at(&k.m, j);
						} else {
							j++;
						}
				}
				fit = pages <= size && model_place(&k.m, pages, true, lim, &want);
				IK_REQUIRE_MSG(rc == (pages > size ? -EINVAL : fit ? 0 : -ENOSPC),
					       "fast alloc rc %d", rc);
				if (fit) {
					IK_REQUIRE(got == want);
					model_alloc(&k.m, got, pages);
				}
			}
			km_resync(&d, &k);
		} else if (op < 72) { /* free */
			size_t li;

			if (km_pick(&r, &k, &li)) {
				uint64_t s = k.m.live[li], n = k.m.alen[s - start];

				if (rcache && !(n & (n - 1)) && !(s & (n - 1)) && ik_rng_below(&r, 2)) {
					k.cached[s - start] = 1;
					IK_REQUIRE(ik_iova_free_fast(&d, s, n) == 0);
					km_resync(&d, &k);
				} else {
					IK_REQUIRE_MSG(ik_iova_free(&d, s) == 0, "free(%llu)",
						       (unsigned long long)s);
					model_free_at(&k.m, li);
					IK_REQUIRE(ik_iova_free(&d, s) == -ENOENT);
				}
			}
		} else if (op < 76) { /* free of the kept node's successor, or its lo */
			if (d.tomb) {
				uint64_t t = d.tomb->lo, ti = t - start;

				if (k.m.st[ti] == ALLOC && k.m.astart[ti] == t && !k.cached[ti]) {
					IK_REQUIRE(ik_iova_free(&d, t) == 0);
					model_free_at(&k.m, km_live_index(&k.m, t));
				} else if (!k.cached[ti]) { /* a cached range is not freed twice */
					IK_REQUIRE(ik_iova_free(&d, t) == -ENOENT);
				}
			}
		} else if (op < 80 && rcache) { /* flush */
			if (ik_rng_below(&r, 2))
				ik_iova_flush_all(&d);
			else
				ik_iova_flush_cpu(&d, (unsigned)ik_rng_below(&r, IK_ENV_NR_CPUS()));
			km_resync(&d, &k);
		} else if (op < 88) { /* reserve */
			uint64_t lo = start + ik_rng_below(&r, size), hi, len = ik_rng_below(&r, 3);
			int want, rc = -ENOMEM;

			if (d.tomb && ik_rng_below(&r, 2)) /* around the kept node */
				lo = d.tomb->gap_lo + ik_rng_below(&r, d.tomb->lo - d.tomb->gap_lo + 1);
			hi = lo + len > end || lo + len < lo ? end : lo + len;
			if (ik_rng_below(&r, 2)) {
				struct km_call kc = { true, lo, hi, 0, NULL };

				rc = km_try_enomem(&fa, &d, &kc);
			}
			if (rc == -ENOMEM) {
				struct snap s0 = snapshot(&d);
				long live0 = fa.live;

				rc = ik_iova_reserve(&d, lo, hi);
				ik_iova_stats(&d, &after);
				if (rc) { /* -EBUSY changes nothing, memory included */
					SNAP_EQ(snapshot(&d), s0);
					IK_REQUIRE(fa.live == live0 && after.bytes == before.bytes);
				}
			}
			want = model_reserve(&k.m, lo, hi);
			IK_REQUIRE_MSG(rc == want, "seed %llx op %ld: reserve(%llu, %llu) %d want %d",
				       (unsigned long long)seed, i, (unsigned long long)lo,
				       (unsigned long long)hi, rc, want);
			model_count_resv(&k.m);
		} else { /* errors: free inside a range, or a free pfn */
			uint64_t p = start + ik_rng_below(&r, size), pi = p - start;

			if (k.m.st[pi] == FREE || k.m.st[pi] == RESV || k.m.astart[pi] != p)
				IK_REQUIRE(ik_iova_free(&d, p) == -ENOENT);
		}
		km_verify(&d, &k);
	}
	ik_iova_destroy(&d);
	IK_REQUIRE(fa.live == 0);
	model_free(&k.m);
	free(k.cached);
	free(k.dc.pfn);
	free(k.dc.pages);
}

START_TEST(test_kept_node_op_by_op_matches_model)
{
	static const struct {
		uint64_t start, size;
	} spaces[] = {
		{ 0, 8 }, { 1, 13 }, { 0, 32 }, { 5, 40 }, { 0, 200 }, { 0ull - 16, 16 }, { 0ull - 33, 33 },
	};
	long per = model_iters(2500);

	pin_cpu0();
	for (size_t s = 0; s < IK_ARRAY_SIZE(spaces); s++)
		for (int rc = 0; rc < 2; rc++)
			kept_run(0xcee90000u + s * 2 + (unsigned)rc, spaces[s].start, spaces[s].size,
				 rc, per);
}
END_TEST

/*
 * The pointer-argument rule of <iommukit/env.h>: each error-returning call,
 * given NULL in one pointer position at a time (everything else valid),
 * answers -EINVAL and leaves the domain, its caches and the caller's other
 * arguments as they were; callbacks are not called.
 */
static int count_range_calls(void *ctx, const struct ik_iova_range *r)
{
	(void)r;
	++*(int *)ctx;
	return 0;
}

static int count_cached_calls(void *ctx, ik_u64 pfn, ik_u64 pages)
{
	(void)pfn;
	(void)pages;
	++*(int *)ctx;
	return 0;
}

START_TEST(null_pointer_arguments_are_einval)
{
	struct ik_iova_domain d, raw, raw0;
	struct ik_iova_config c;
	struct ik_iova_range r = { 11, 22, true };
	uint64_t p = 77, pages = 88, q;
	int calls = 0;
	struct snap s0;

	pin_cpu0();
	/* init: `d` is not written when cfg is NULL */
	cfg_init(&c, 0, 100);
	memset(&raw, 0x5a, sizeof(raw));
	memcpy(&raw0, &raw, sizeof(raw));
	ck_assert_int_eq(ik_iova_init(NULL, &c), -EINVAL);
	ck_assert_int_eq(ik_iova_init(&raw, NULL), -EINVAL);
	ck_assert(memcmp(&raw, &raw0, sizeof(raw)) == 0);
	ik_iova_destroy(NULL);

	busy_domain(&d, NULL);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 1023, 0, &q), 0);
	s0 = snapshot(&d);
	ck_assert_int_eq(ik_iova_alloc(NULL, 1, 1023, 0, &p), -EINVAL);
	ck_assert_int_eq(ik_iova_alloc(&d, 1, 1023, 0, NULL), -EINVAL);
	ck_assert_int_eq(ik_iova_alloc_fast(NULL, 1, 1023, &p), -EINVAL);
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 1023, NULL), -EINVAL);
	ck_assert_int_eq(ik_iova_free(NULL, q), -EINVAL);
	ck_assert_int_eq(ik_iova_free_fast(NULL, q, 1), -EINVAL);
	ck_assert_int_eq(ik_iova_reserve(NULL, 40, 41), -EINVAL);
	ck_assert_int_eq(ik_iova_find(NULL, q, &r), -EINVAL);
	ck_assert_int_eq(ik_iova_find(&d, q, NULL), -EINVAL);
	ck_assert_int_eq(ik_iova_next(NULL, 16, &r), -EINVAL);
	ck_assert_int_eq(ik_iova_next(&d, 16, NULL), -EINVAL);
	ck_assert_int_eq(ik_iova_for_each(NULL, count_range_calls, &calls), -EINVAL);
	ck_assert_int_eq(ik_iova_for_each(&d, NULL, &calls), -EINVAL);
	ck_assert_int_eq(ik_iova_largest_free(NULL, 1023, &pages), -EINVAL);
	ck_assert_int_eq(ik_iova_largest_free(&d, 1023, NULL), -EINVAL);
	ck_assert_int_eq(ik_iova_check(NULL), -EINVAL);
	ck_assert_int_eq(ik_iova_flush_cpu(NULL, 0), -EINVAL);
	ck_assert_int_eq(ik_iova_for_each_cached(NULL, count_cached_calls, &calls), -EINVAL);
	ck_assert_int_eq(ik_iova_for_each_cached(&d, NULL, &calls), -EINVAL);
	/* nothing written, nothing called, nothing changed */
	ck_assert_uint_eq(p, 77);
	ck_assert_uint_eq(pages, 88);
	ck_assert(r.lo == 11 && r.hi == 22 && r.reserved);
	ck_assert_int_eq(calls, 0);
	SNAP_EQ(snapshot(&d), s0);
	ck_assert_int_eq(ik_iova_find(&d, q, &r), 0);
	ck_assert(r.lo == q && r.hi == q && !r.reserved);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("iova");
	TCase *tc = tcase_create("tree");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_random_tree_matches_bitmap_model);
	tcase_add_test(tc, test_exhaustive_tiny_spaces);
	tcase_add_test(tc, test_limit_at_start_and_end);
	tcase_add_test(tc, test_limit_at_4g_in_a_64bit_space);
	tcase_add_test(tc, test_top_of_a_64bit_space);
	tcase_add_test(tc, test_reserve_merges_and_blocks);
	tcase_add_test(tc, test_iteration_visits_every_range_in_order);
	tcase_add_test(tc, test_free_then_alloc_in_place_reuses_the_node);
	tcase_add_test(tc, test_spare_node_serves_the_next_allocation);
	tcase_add_test(tc, test_summary_updates_count_the_levels);
	tcase_add_test(tc, test_limited_search_tries_every_turn);
	tcase_add_test(tc, test_kept_node_op_by_op_matches_model);
	tcase_add_test(tc, test_node_is_at_most_56_bytes);
	tcase_add_test(tc, test_probe_on_every_allocation_matches_model);
	tcase_add_test(tc, test_free_summary_update_shares_the_erase_pass);
	suite_add_tcase(s, tc);
	tc = tcase_create("errors");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_init_rejects_bad_config);
	tcase_add_test(tc, test_alloc_errors_leave_domain_unchanged);
	tcase_add_test(tc, test_free_and_find_errors_leave_domain_unchanged);
	tcase_add_test(tc, test_reserve_errors_leave_domain_unchanged);
	tcase_add_test(tc, test_failed_reserve_keeps_the_kept_node);
	tcase_add_test(tc, test_allocation_failure_at_every_point_of_a_sequence);
	tcase_add_test(tc, null_pointer_arguments_are_einval);
	suite_add_tcase(s, tc);
	tc = tcase_create("rcache");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_random_fast_path_matches_model);
	tcase_add_test(tc, test_random_fast_path_matches_model_locked);
	tcase_add_test(tc, test_rcache_mode_follows_config_and_env);
	tcase_add_test(tc, test_lockless_hit_takes_no_lock);
	tcase_add_test(tc, test_fast_path_after_fork);
	tcase_add_test(tc, test_inline_and_exported_fast_paths_agree);
	tcase_add_test(tc, test_rcache_reuses_freed_ranges);
	tcase_add_test(tc, test_rcache_flush_returns_ranges_to_the_tree);
	tcase_add_test(tc, test_alloc_succeeds_when_only_cached_ranges_are_free);
	tcase_add_test(tc, test_depot_is_trimmed_to_its_bound);
	tcase_add_test(tc, test_no_rcache_and_large_sizes_go_to_the_tree);
	tcase_add_test(tc, test_rcache_magazines_rotate_through_prev_and_depot);
	tcase_add_test(tc, test_checker_detects_corruption);
	tcase_add_loop_test(tc, test_threads_share_a_domain_without_overlap, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
