/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* atomic.h and lock.h: operation semantics, and mutual exclusion under threads. */
#include <pthread.h>
#include <iommukit/atomic.h>
#include <iommukit/lock.h>
#include "testlib.h"

START_TEST(cas_succeeds_and_fails_as_documented)
{
	uint64_t v = 5, exp = 5;

	ck_assert(ik_atomic_cas(&v, &exp, 9, IK_MO_ACQ_REL, IK_MO_ACQUIRE));
	ck_assert_uint_eq(v, 9);
	exp = 5;
	ck_assert(!ik_atomic_cas(&v, &exp, 11, IK_MO_ACQ_REL, IK_MO_ACQUIRE));
	ck_assert_uint_eq(exp, 9); /* failure reports the current value */
	ck_assert_uint_eq(v, 9);
}
END_TEST

START_TEST(fetch_ops_return_old_value)
{
	uint32_t v = 0xf0;

	ck_assert_uint_eq(ik_atomic_fetch_add(&v, 0x10, IK_MO_RELAXED), 0xf0);
	ck_assert_uint_eq(ik_atomic_fetch_sub(&v, 0x01, IK_MO_RELAXED), 0x100);
	ck_assert_uint_eq(ik_atomic_fetch_or(&v, 0x1000, IK_MO_RELEASE), 0xff);
	ck_assert_uint_eq(ik_atomic_fetch_and(&v, 0xf00f, IK_MO_ACQ_REL), 0x10ff);
	ck_assert_uint_eq(v, 0x100f);
	ck_assert_uint_eq(ik_atomic_xchg(&v, 3, IK_MO_ACQ_REL), 0x100f);
	ik_store_release(&v, 4);
	ck_assert_uint_eq(ik_load_acquire(&v), 4);
	ik_smp_mb();
	ik_smp_rmb();
	ik_smp_wmb();
	ik_dma_wmb();
	ik_dma_rmb();
	ik_cpu_relax();
}
END_TEST

struct lock_arg {
	ik_lock_t *lock;
	uint64_t *counter;
	long iters;
};

static void *lock_worker(void *p)
{
	struct lock_arg *a = p;

	for (long i = 0; i < a->iters; i++) {
		if ((i & 7) == 0 && ik_trylock(a->lock)) {
			(*a->counter)++;
			ik_unlock(a->lock);
			continue;
		}
		ik_lock(a->lock);
		(*a->counter)++; /* plain access: the lock must order it */
		ik_unlock(a->lock);
	}
	return NULL;
}

START_TEST(lock_excludes_four_threads)
{
	ik_lock_t lock;
	uint64_t counter = 0;
	pthread_t t[4];
	long iters = ik_test_iters(200000);
	struct lock_arg a = { &lock, &counter, iters };

	ik_lock_init(&lock);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, lock_worker, &a), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	ck_assert_uint_eq(counter, 4 * (uint64_t)iters);
	ck_assert(ik_trylock(&lock));
	ck_assert(!ik_trylock(&lock));
	ik_unlock(&lock);
	ik_lock_destroy(&lock);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("atomic");
	TCase *tc = tcase_create("ops");

	tcase_add_test(tc, cas_succeeds_and_fails_as_documented);
	tcase_add_test(tc, fetch_ops_return_old_value);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, lock_excludes_four_threads);
	suite_add_tcase(s, tc);
	return s;
}
