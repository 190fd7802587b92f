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

#if IK_HAVE_U128
START_TEST(cas128_native_or_fallback)
{
	static ik_u128 v IK_ALIGNED(16);
	ik_u128 exp = 0, hi = (ik_u128)1 << 100;

	v = 0;
	ck_assert(ik_atomic_cas128(&v, &exp, hi | 7));
	ck_assert(ik_atomic_load128(&v) == (hi | 7));
	exp = 1;
	ck_assert(!ik_atomic_cas128(&v, &exp, 0));
	ck_assert(exp == (hi | 7));
}
END_TEST

START_TEST(cas128_locked_fallback)
{
	static ik_u128 v IK_ALIGNED(16);
	ik_u128 exp = 0, hi = (ik_u128)3 << 90;

	v = 0;
	ck_assert(_ik_cas128_locked(&v, &exp, hi));
	ck_assert(_ik_load128_locked(&v) == hi);
	exp = 0;
	ck_assert(!_ik_cas128_locked(&v, &exp, 1));
	ck_assert(exp == hi);
}
END_TEST

/* Two 64-bit halves that must move together: low counts, high = ~low. */
static ik_u128 cas128_shared IK_ALIGNED(16);

static void *cas128_worker(void *p)
{
	long iters = *(const long *)p;

	for (long i = 0; i < iters; i++) {
		ik_u128 old = _ik_load128_locked(&cas128_shared), want;

		for (;;) {
			ik_u64 lo = (ik_u64)old;

			if ((ik_u64)(old >> 64) != ~lo)
				return (void *)1; /* a torn value */
			want = ((ik_u128)~(lo + 1) << 64) | (lo + 1);
			if (_ik_cas128_locked(&cas128_shared, &old, want))
				break;
		}
	}
	return NULL;
}

/* The fallback's spin words start unlocked without any init call and
 * exclude each other's updates: four threads, no lost or torn update. */
START_TEST(cas128_locked_fallback_threads)
{
	long iters = ik_test_iters(100000);
	pthread_t t[4];
	void *ret;
	ik_u128 end;

	cas128_shared = (ik_u128)~(ik_u64)0 << 64;
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, cas128_worker, &iters), 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], &ret);
		ck_assert_ptr_null(ret);
	}
	end = _ik_load128_locked(&cas128_shared);
	ck_assert_uint_eq((ik_u64)end, 4 * (ik_u64)iters);
	ck_assert_uint_eq((ik_u64)(end >> 64), ~(4 * (ik_u64)iters));
}
END_TEST
#endif

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
#if IK_HAVE_U128
	tcase_add_test(tc, cas128_native_or_fallback);
	tcase_add_test(tc, cas128_locked_fallback);
#endif
	tcase_set_timeout(tc, 120);
#if IK_HAVE_U128
	tcase_add_test(tc, cas128_locked_fallback_threads);
#endif
	tcase_add_test(tc, lock_excludes_four_threads);
	suite_add_tcase(s, tc);
	return s;
}
