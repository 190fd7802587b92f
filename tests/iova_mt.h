/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What the IOVA multi-thread tests share (test_iova, test_iova_pinned): an
 * ownership map, one byte per pfn (0 free, else the owning thread's id + 1,
 * changed with compare-and-swap so that two owners of one pfn are caught at
 * once), and a thread that runs ik_iova_check() in a loop while the
 * workers race.
 */
#ifndef IK_TEST_IOVA_MT_H
#define IK_TEST_IOVA_MT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <iommukit/iova.h>

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
