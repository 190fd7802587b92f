/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What the IOVA multi-thread tests share (test_iova, test_iova_pinned):
 * CHECK_OK(d) (ik_iova_check() finds nothing wrong, else the test fails
 * with the file, line and the check's message), an ownership map, one byte per pfn (0 free, else the owning thread's id + 1,
 * changed with compare-and-swap so that two owners of one pfn are caught at
 * once), the worker thread, and a thread that runs ik_iova_check() in a
 * loop while the workers race.
 */
#ifndef IK_TEST_IOVA_MT_H
#define IK_TEST_IOVA_MT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <iommukit/iova.h>
#include "testlib.h"
#include "iova_inline.h"

#define CHECK_OK(d)                                                                       \
	do {                                                                              \
		int c_ = ik_iova_check(d);                                                \
		IK_REQUIRE_MSG(c_ == 0, "%s:%d: ik_iova_check: %s", __FILE__, __LINE__,   \
			       ik_iova_check_str(c_));                                    \
	} while (0)

/* Claim [p, p + n) for thread id: false if any pfn already has an owner. */
static inline bool iova_owner_claim(uint8_t *owner, unsigned id, uint64_t p, uint64_t n)
{
	for (uint64_t i = p; i < p + n; i++) {
		uint8_t z = 0;

		if (!__atomic_compare_exchange_n(&owner[i], &z, (uint8_t)(id + 1), false,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return false;
	}
	return true;
}

/* Give [p, p + n) back: false if thread id does not own every pfn of it. */
static inline bool iova_owner_release(uint8_t *owner, unsigned id, uint64_t p, uint64_t n)
{
	for (uint64_t i = p; i < p + n; i++) {
		uint8_t me = (uint8_t)(id + 1);

		if (!__atomic_compare_exchange_n(&owner[i], &me, 0, false, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			return false;
	}
	return true;
}

/* The space the workers share: pfns 0 .. IOVA_MT_SPACE - 1. */
#define IOVA_MT_SPACE (1u << 16)

/*
 * A worker: ops random operations on d - fast allocations (1..40 pages,
 * inline and exported forms alternating) and tree allocations, frees of
 * either kind, flush_cpu of a random CPU below ncpus, stats,
 * for_each_cached and full flushes - every range claimed in the ownership
 * map while it is held; at the end it frees what it holds.  `each`, if set,
 * runs before every operation (test_iova_pinned migrates the thread there
 * and counts in `events`), `start` and `stop` once in the thread.  fail:
 * 0, or which step went wrong (1 alloc, 2 two owners, 3 not the owner,
 * 4 free, 5 final free, 6 flush_cpu, 7 for_each_cached).
 */
struct iova_mt {
	struct ik_iova_domain *d;
	uint8_t *owner;
	long ops;
	unsigned id, ncpus;
	uint64_t seed;
	int fail;
	long events; /* for the hooks */
	void (*start)(struct iova_mt *c);
	void (*each)(struct iova_mt *c, struct ik_rng *r);
	void (*stop)(struct iova_mt *c);
};

static inline int iova_mt_count_cached(void *ctx, ik_u64 pfn, ik_u64 pages)
{
	(void)pfn;
	(void)pages;
	++*(unsigned long *)ctx;
	return 0;
}

static inline void *iova_mt_worker(void *arg)
{
	struct iova_mt *c = (struct iova_mt *)arg;
	struct ik_rng r = { c->seed + c->id };
	uint64_t live[64], npg[64];
	bool fast[64];
	size_t n = 0;

	if (c->start)
		c->start(c);
	for (long i = 0; i < c->ops && !c->fail; i++) {
		uint64_t op = ik_rng_below(&r, 100), p, k;
		int rc;

		if (c->each)
			c->each(c, &r);
		if ((op < 55 && n < 64) || n == 0) {
			bool f = op < 45;

			k = f ? 1 + ik_rng_below(&r, ik_rng_below(&r, 8) ? 2 : 40)
			      : 1 + ik_rng_below(&r, 16);
			rc = !f	   ? ik_iova_alloc(c->d, k, IOVA_MT_SPACE - 1, ik_rng_below(&r, 2), &p)
			     : i & 1 ? t_iova_alloc_fast_inline(c->d, k, IOVA_MT_SPACE - 1, &p)
				     : ik_iova_alloc_fast(c->d, k, IOVA_MT_SPACE - 1, &p);
			if (rc == -ENOSPC)
				continue;
			if (rc) {
				c->fail = 1;
				break;
			}
			if (f && k <= IK_IOVA_RCACHE_MAX_PAGES)
				while (k & (k - 1))
					k++; /* rounded up to a power of two */
			if (!iova_owner_claim(c->owner, c->id, p, k)) {
				c->fail = 2; /* two owners for one pfn */
				break;
			}
			live[n] = p;
			npg[n] = k;
			fast[n++] = f;
		} else if (op < 97) {
			size_t j = ik_rng_below(&r, n);

			if (!iova_owner_release(c->owner, c->id, live[j], npg[j])) {
				c->fail = 3;
				break;
			}
			rc = !fast[j] ? ik_iova_free(c->d, live[j])
			     : i & 1  ? t_iova_free_fast_inline(c->d, live[j], npg[j])
				      : ik_iova_free_fast(c->d, live[j], npg[j]);
			if (rc) {
				c->fail = 4;
				break;
			}
			live[j] = live[n - 1];
			npg[j] = npg[n - 1];
			fast[j] = fast[--n];
		} else if (op < 99) {
			if (ik_iova_flush_cpu(c->d, (unsigned)ik_rng_below(&r, c->ncpus)) != 0) {
				c->fail = 6;
				break;
			}
		} else {
			struct ik_iova_stats st;
			unsigned long cached = 0;

			ik_iova_stats(c->d, &st);
			if (ik_rng_below(&r, 4) == 0 &&
			    ik_iova_for_each_cached(c->d, iova_mt_count_cached, &cached) != 0) {
				c->fail = 7;
				break;
			}
			if (ik_rng_below(&r, 16) == 0)
				ik_iova_flush_all(c->d);
		}
	}
	while (n--) {
		if (!iova_owner_release(c->owner, c->id, live[n], npg[n]) ||
		    (fast[n] ? ik_iova_free_fast(c->d, live[n], npg[n]) : ik_iova_free(c->d, live[n])))
			c->fail = 5;
	}
	if (c->stop)
		c->stop(c);
	return NULL;
}

/*
 * The checker thread: ik_iova_check(d) (every rcache lock, so in the
 * lockless modes a fence of every CPU) until `stop` is set or a check
 * fails; `each`, if set, runs before every check (test_iova_pinned moves
 * the thread to another virtual CPU there).
 */
struct iova_checker {
	struct ik_iova_domain *d;
	int stop; /* atomic */
	long runs;
	int err;
	void (*each)(struct iova_checker *k);
	uint64_t state; /* for `each` */
};

static inline void *iova_check_loop(void *arg)
{
	struct iova_checker *k = (struct iova_checker *)arg;

	while (!__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE) && !k->err) {
		/* A pause between runs: the checker holds every lock while it
		 * runs, and back to back it would starve the workers. */
		struct timespec ts = { 0, 100000 };

		if (k->each)
			k->each(k);
		k->err = ik_iova_check(k->d);
		k->runs++;
		nanosleep(&ts, NULL);
	}
	return NULL;
}

#endif
