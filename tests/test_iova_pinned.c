/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iova, PINNED mode: the range caches with the env's pinned sections
 * (IK_ENV_CPU_PIN/_UNPIN/_FENCE), which the hosted env never defines.  This
 * program compiles the allocator's sources itself with
 * tests/iova_pinned_env.h, which emulates pinned sections on four virtual
 * CPUs with one mutex each (see there); the hooks are defined here and count
 * their calls.  Checked: the mode a config selects; a hit takes one pin and
 * no fence, both forms, and no lock; a held slot sends a hit to the slow path,
 * which still serves it; which lockers fence which CPUs, and that a fence
 * waits for a pinned section in progress; and a multi-threaded stress with
 * migrating threads, lockers on every CPU and the checker in a loop, with an
 * ownership map proving no pfn is handed out twice.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <iommukit/iova.h>
#include "testlib.h"
#include "iova_inline.h"
#include "iova_mt.h"

#if !defined(IK_ENV_CPU_PIN) || !defined(T_NVCPU)
#error "build with -DIK_ENV_HEADER='\"iova_pinned_env.h\"' (see Makefile.am)"
#endif

#define ALL ((unsigned)-1)

/* ---------------------------------------------------------------- the emulation */

static pthread_mutex_t vcpu_mu[T_NVCPU] = {
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
};

/* What a thread did through the hooks; fence[T_NVCPU] counts fences of
 * every CPU.  Per thread, so that other threads do not disturb the counts
 * the single-threaded tests compare. */
struct tally {
	unsigned long pins, fences;
	unsigned long fence[T_NVCPU + 1];
};

static __thread unsigned cur_vcpu;	/* the thread's virtual CPU */
static __thread int pinned;		/* in a pinned section */
static __thread unsigned pinned_on;	/* ... on this virtual CPU */
static __thread struct tally tl;
static __thread int jitter;		/* yield inside some pinned sections */
static __thread uint64_t jitter_rng;

/* All threads (atomic). */
static unsigned long g_pins, g_fences, g_violations;

static void violation(void)
{
	__atomic_add_fetch(&g_violations, 1, __ATOMIC_RELAXED);
}

unsigned t_vcpu_id(void)
{
	return cur_vcpu;
}

void t_vcpu_set(unsigned cpu)
{
	if (pinned || cpu >= T_NVCPU) {
		violation(); /* a pinned section does not migrate */
		return;
	}
	cur_vcpu = cpu;
}

unsigned t_vcpu_pin(void)
{
	unsigned c = cur_vcpu;

	if (pinned) {
		violation(); /* pinned sections do not nest */
		return c;
	}
	pthread_mutex_lock(&vcpu_mu[c]);
	pinned = 1;
	pinned_on = c;
	tl.pins++;
	__atomic_add_fetch(&g_pins, 1, __ATOMIC_RELAXED);
	if (jitter) {
		/* Let the others run while this CPU is taken: their pins and
		 * fences of it wait, as they would for a real section. */
		struct ik_rng r = { jitter_rng };

		if (ik_rng_below(&r, 16) == 0)
			sched_yield();
		jitter_rng = r.s;
	}
	return c;
}

void t_vcpu_unpin(void)
{
	if (!pinned) {
		violation();
		return;
	}
	pinned = 0;
	pthread_mutex_unlock(&vcpu_mu[pinned_on]);
}

void t_vcpu_fence(unsigned cpu)
{
	if (pinned) {
		violation(); /* never from a pinned section */
		return;
	}
	if (cpu == ALL) {
		for (unsigned i = 0; i < T_NVCPU; i++) {
			pthread_mutex_lock(&vcpu_mu[i]);
			pthread_mutex_unlock(&vcpu_mu[i]);
		}
		tl.fence[T_NVCPU]++;
	} else if (cpu < T_NVCPU) {
		pthread_mutex_lock(&vcpu_mu[cpu]);
		pthread_mutex_unlock(&vcpu_mu[cpu]);
		tl.fence[cpu]++;
	} else {
		violation();
		return;
	}
	tl.fences++;
	__atomic_add_fetch(&g_fences, 1, __ATOMIC_RELAXED);
}

static void tally_reset(void)
{
	memset(&tl, 0, sizeof(tl));
}

#define NO_VIOLATIONS() \
	ck_assert_uint_eq(__atomic_load_n(&g_violations, __ATOMIC_RELAXED), 0)

/* ---------------------------------------------------------------- helpers */

static void dom_init(struct ik_iova_domain *d, uint64_t start, uint64_t end, unsigned flags)
{
	struct ik_iova_config c;

	memset(&c, 0, sizeof(c));
	c.granule = 4096;
	c.start_pfn = start;
	c.end_pfn = end;
	c.flags = flags;
	/* This copy of the allocator is built with IK_DEBUG, whose init reads
	 * the domain to refuse a live one: give it defined memory. */
	memset(d, 0, sizeof(*d));
	ck_assert_int_eq(ik_iova_init(d, &c), 0);
}

/* The slot of (size class, virtual CPU). */
static struct ik_iova_cpu *slot_of(struct ik_iova_domain *d, unsigned cls, unsigned cpu)
{
	return &d->rc_cpu[cls * d->rc_ncpus + cpu];
}

static unsigned loaded_n(struct ik_iova_domain *d, unsigned cls, unsigned cpu)
{
	struct ik_iova_cpu *c = slot_of(d, cls, cpu);

	return c->loaded ? c->loaded->n : 0;
}

static bool cpu_slots_empty(struct ik_iova_domain *d, unsigned cpu)
{
	for (unsigned cls = 0; cls < d->rc_classes; cls++) {
		struct ik_iova_cpu *c = slot_of(d, cls, cpu);

		if (c->loaded || c->prev)
			return false;
	}
	return true;
}

/* ---------------------------------------------------------------- mode */

/*
 * The mode follows the config: PINNED by default (which also proves that
 * this program's copy of the allocator is the one called: the library's is
 * built with the hosted env and never selects it), LOCK and NONE on request.
 * LOCK and NONE never call the hooks, whatever the call.
 */
START_TEST(test_mode_follows_config)
{
	static const struct {
		unsigned flags;
		enum ik_iova_rcache_mode mode;
	} t[] = {
		{ 0, IK_IOVA_RCACHE_PINNED },
		{ IK_IOVA_CFG_LOCKED_RCACHE, IK_IOVA_RCACHE_LOCK },
		{ IK_IOVA_CFG_NO_RCACHE, IK_IOVA_RCACHE_NONE },
		{ IK_IOVA_CFG_NO_RCACHE | IK_IOVA_CFG_LOCKED_RCACHE, IK_IOVA_RCACHE_NONE },
	};
	struct ik_iova_domain d;

	ck_assert_str_eq(IK_ENV_NAME, "hosted-pinned");
	t_vcpu_set(1);
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct ik_iova_stats st;
		unsigned long n = 0;
		uint64_t p;

		dom_init(&d, 0, 4095, t[i].flags);
		ck_assert_int_eq(ik_iova_rcache_mode(&d), t[i].mode);
		if (t[i].mode != IK_IOVA_RCACHE_NONE)
			ck_assert_uint_eq(d.rc_ncpus, T_NVCPU);
		tally_reset();
		for (unsigned k = 0; k < 3; k++) {
			ck_assert_int_eq(ik_iova_alloc_fast(&d, 3, 4095, &p), 0);
			ck_assert_int_eq(ik_iova_free_fast(&d, p, 3), 0);
			ck_assert_int_eq(t_iova_alloc_fast_inline(&d, 3, 4095, &p), 0);
			ck_assert_int_eq(t_iova_free_fast_inline(&d, p, 3), 0);
		}
		ck_assert_int_eq(ik_iova_flush_cpu(&d, 0), 0);
		ck_assert_int_eq(ik_iova_flush_cpu(&d, 1), 0);
		ck_assert_int_eq(ik_iova_for_each_cached(&d, iova_mt_count_cached, &n), 0);
		ik_iova_stats(&d, &st);
		CHECK_OK(&d);
		ik_iova_flush_all(&d);
		if (t[i].mode == IK_IOVA_RCACHE_PINNED) {
			ck_assert_uint_gt(tl.pins, 0);
			ck_assert_uint_gt(tl.fences, 0);
		} else {
			ck_assert_uint_eq(tl.pins, 0);
			ck_assert_uint_eq(tl.fences, 0);
		}
		ik_iova_stats(&d, &st);
		ck_assert_uint_eq(st.ranges, 0);
		ik_iova_destroy(&d);
	}
	ck_assert_int_eq(ik_iova_rcache_mode(NULL), IK_IOVA_RCACHE_NONE);
	NO_VIOLATIONS();
}
END_TEST

/* ---------------------------------------------------------------- one thread */

/*
 * A hit takes one pinned section and no fence, in both forms, for alloc and
 * free, and serves the CPU's own slot (LIFO); a miss on the thread's own CPU
 * fences nothing either.  A hit takes no lock: it succeeds while someone
 * else holds the slot's lock (LOCK mode would hang here).
 */
START_TEST(test_hit_pins_once_and_fences_nothing)
{
	struct ik_iova_domain d;
	struct ik_iova_cpu *c;
	uint64_t p[8], q;

	t_vcpu_set(2);
	dom_init(&d, 0, 4095, 0);
	ck_assert_int_eq(ik_iova_rcache_mode(&d), IK_IOVA_RCACHE_PINNED);
	tally_reset();
	/* misses: empty caches, to the tree */
	for (unsigned i = 0; i < 8; i++)
		ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 4095, &p[i]), 0);
	ck_assert_uint_eq(tl.fences, 0);
	ck_assert_uint_ge(tl.pins, 8);
	/* the first free allocates the magazine (a miss), the others hit */
	ck_assert_int_eq(ik_iova_free_fast(&d, p[0], 1), 0);
	ck_assert_uint_eq(tl.fences, 0);
	for (unsigned i = 1; i < 8; i++) {
		tally_reset();
		if (i & 1)
			ck_assert_int_eq(ik_iova_free_fast(&d, p[i], 1), 0);
		else
			ck_assert_int_eq(t_iova_free_fast_inline(&d, p[i], 1), 0);
		ck_assert_uint_eq(tl.pins, 1);
		ck_assert_uint_eq(tl.fences, 0);
	}
	c = slot_of(&d, 0, 2);
	ck_assert_ptr_nonnull(c->loaded);
	ck_assert_uint_eq(c->loaded->n, 8);
	for (unsigned cpu = 0; cpu < T_NVCPU; cpu++)
		if (cpu != 2)
			ck_assert(cpu_slots_empty(&d, cpu));

	/* alloc hits, exported and inline: the top of the magazine */
	for (unsigned i = 8; i-- > 4;) {
		tally_reset();
		if (i & 1)
			ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 4095, &q), 0);
		else
			ck_assert_int_eq(t_iova_alloc_fast_inline(&d, 1, 4095, &q), 0);
		ck_assert_uint_eq(q, p[i]);
		ck_assert_uint_eq(tl.pins, 1);
		ck_assert_uint_eq(tl.fences, 0);
	}
	ck_assert_uint_eq(c->loaded->n, 4);

	/* no lock: hits go on while the slot's lock is taken */
	ik_lock(&c->lock);
	tally_reset();
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 4095, &q), 0);
	ck_assert_uint_eq(q, p[3]);
	ck_assert_int_eq(t_iova_alloc_fast_inline(&d, 1, 4095, &q), 0);
	ck_assert_uint_eq(q, p[2]);
	ck_assert_int_eq(ik_iova_free_fast(&d, p[2], 1), 0);
	ck_assert_int_eq(t_iova_free_fast_inline(&d, p[3], 1), 0);
	ik_unlock(&c->lock);
	ck_assert_uint_eq(tl.pins, 4);
	ck_assert_uint_eq(tl.fences, 0);
	ck_assert_uint_eq(c->loaded->n, 4);

	/* a larger class (3 pages -> 4) hits the same way */
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 3, 4095, &q), 0);
	ck_assert_int_eq(ik_iova_free_fast(&d, q, 3), 0);
	tally_reset();
	ck_assert_int_eq(t_iova_alloc_fast_inline(&d, 4, 4095, &p[0]), 0);
	ck_assert_uint_eq(p[0], q);
	ck_assert_int_eq(t_iova_free_fast_inline(&d, p[0], 3), 0);
	ck_assert_uint_eq(tl.pins, 2);
	ck_assert_uint_eq(tl.fences, 0);
	ck_assert_uint_eq(loaded_n(&d, 2, 2), 1);

	/* many frees and allocations on the own CPU: misses (magazine swaps,
	 * the depot) but never a fence */
	{
		uint64_t many[400];

		tally_reset();
		for (unsigned i = 0; i < 400; i++)
			ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 4095, &many[i]), 0);
		for (unsigned i = 0; i < 400; i++)
			ck_assert_int_eq(t_iova_free_fast_inline(&d, many[i], 1), 0);
		for (unsigned i = 0; i < 400; i++)
			ck_assert_int_eq(t_iova_alloc_fast_inline(&d, 1, 4095, &many[i]), 0);
		for (unsigned i = 0; i < 400; i++)
			ck_assert_int_eq(ik_iova_free_fast(&d, many[i], 1), 0);
		ck_assert_uint_eq(tl.fences, 0);
		ck_assert_uint_ge(tl.pins, 1600);
	}
	CHECK_OK(&d);
	ik_iova_destroy(&d);
	NO_VIOLATIONS();
}
END_TEST

/*
 * A slot marked held (a locker at work) sends the hit to the slow path:
 * the hit's section, then the slow path's two looks at the CPU (the slot,
 * and the fence it skips because it runs there); the slow path still
 * serves the call from the magazine and leaves the slot unmarked.  A held
 * slot of another CPU or class does not disturb a hit.  A cached range above
 * the limit is a miss for the hit and is found by the slow path's scan.
 */
START_TEST(test_held_slot_sends_hit_to_slow_path)
{
	struct ik_iova_domain d;
	struct ik_iova_cpu *c;
	uint64_t p[4], q;

	t_vcpu_set(1);
	dom_init(&d, 0, 4095, 0);
	for (unsigned i = 0; i < 4; i++)
		ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 4095, &p[i]), 0);
	for (unsigned i = 0; i < 4; i++)
		ck_assert_int_eq(ik_iova_free_fast(&d, p[i], 1), 0);
	c = slot_of(&d, 0, 1);
	ck_assert_uint_eq(c->loaded->n, 4);

	for (unsigned form = 0; form < 2; form++) {
		c->held = 1;
		tally_reset();
		if (form)
			ck_assert_int_eq(t_iova_alloc_fast_inline(&d, 1, 4095, &q), 0);
		else
			ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 4095, &q), 0);
		ck_assert_uint_eq(q, p[3]);
		ck_assert_uint_eq(c->held, 0);
		ck_assert_uint_eq(c->loaded->n, 3);
		ck_assert_uint_eq(tl.pins, 3);
		ck_assert_uint_eq(tl.fences, 0);

		c->held = 1;
		tally_reset();
		if (form)
			ck_assert_int_eq(t_iova_free_fast_inline(&d, q, 1), 0);
		else
			ck_assert_int_eq(ik_iova_free_fast(&d, q, 1), 0);
		ck_assert_uint_eq(c->held, 0);
		ck_assert_uint_eq(c->loaded->n, 4);
		ck_assert_uint_eq(c->loaded->pfn[3], p[3]);
		ck_assert_uint_eq(tl.pins, 3);
		ck_assert_uint_eq(tl.fences, 0);
	}

	/* held elsewhere: the hit is a hit */
	slot_of(&d, 0, 0)->held = 1;
	slot_of(&d, 1, 1)->held = 1;
	tally_reset();
	ck_assert_int_eq(t_iova_alloc_fast_inline(&d, 1, 4095, &q), 0);
	ck_assert_uint_eq(q, p[3]);
	ck_assert_int_eq(ik_iova_free_fast(&d, q, 1), 0);
	ck_assert_uint_eq(tl.pins, 2);
	slot_of(&d, 0, 0)->held = 0;
	slot_of(&d, 1, 1)->held = 0;

	/* the top entry above the limit: a miss for the hit, and the slow
	 * path's scan finds the next one below it */
	for (unsigned i = 0; i < 4; i++)
		ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 4095, &q), 0);
	ck_assert_uint_eq(c->loaded->n, 0);
	ck_assert_uint_gt(p[0], p[1]); /* top-down: the first is the highest */
	for (unsigned i = 4; i-- > 0;)
		ck_assert_int_eq(ik_iova_free_fast(&d, p[i], 1), 0);
	ck_assert_uint_eq(c->loaded->pfn[3], p[0]);
	tally_reset();
	ck_assert_int_eq(t_iova_alloc_fast_inline(&d, 1, p[0] - 1, &q), 0);
	ck_assert_uint_eq(q, p[1]);
	ck_assert_uint_eq(tl.pins, 3); /* a miss, served by the scan */
	ck_assert_uint_eq(tl.fences, 0);
	tally_reset();
	ck_assert_int_eq(ik_iova_alloc_fast(&d, 1, 4095, &q), 0);
	ck_assert_uint_eq(q, p[0]);
	ck_assert_uint_eq(tl.pins, 1); /* a hit */
	ck_assert_int_eq(ik_iova_free_fast(&d, p[1], 1), 0);
	ck_assert_int_eq(ik_iova_free_fast(&d, p[0], 1), 0);
	ck_assert_uint_eq(c->loaded->n, 4);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
	NO_VIOLATIONS();
}
END_TEST

/* Cache `n` one-page ranges in the calling thread's CPU's slot. */
static void cache_some(struct ik_iova_domain *d, unsigned n)
{
	uint64_t p[16];

	ck_assert_uint_le(n, 16);
	for (unsigned i = 0; i < n; i++)
		ck_assert_int_eq(ik_iova_alloc_fast(d, 1 + (i & 1), 4095, &p[i]), 0);
	for (unsigned i = 0; i < n; i++)
		ck_assert_int_eq(ik_iova_free_fast(d, p[i], 1 + (i & 1)), 0);
}

/*
 * Which lockers fence which CPUs: flush_cpu of another CPU fences that CPU
 * once (all its classes at once); of the caller's own CPU, nothing;
 * flush_all every CPU but the caller's, once each; the checker, stats and
 * for_each_cached one fence of every CPU.  Each flush empties the slots it
 * names and leaves the others alone.
 */
START_TEST(test_lockers_fence_the_slot_cpus)
{
	struct ik_iova_domain d;
	struct ik_iova_stats st;
	unsigned long n = 0;

	dom_init(&d, 0, 4095, 0);
	for (unsigned cpu = 0; cpu < T_NVCPU; cpu++) {
		t_vcpu_set(cpu);
		cache_some(&d, 6);
		ck_assert_uint_eq(loaded_n(&d, 0, cpu), 3);
		ck_assert_uint_eq(loaded_n(&d, 1, cpu), 3);
	}

	t_vcpu_set(0);
	tally_reset();
	ck_assert_int_eq(ik_iova_flush_cpu(&d, 1), 0);
	ck_assert_uint_eq(tl.fences, 1);
	ck_assert_uint_eq(tl.fence[1], 1);
	ck_assert(cpu_slots_empty(&d, 1));
	ck_assert(!cpu_slots_empty(&d, 0));
	ck_assert(!cpu_slots_empty(&d, 2));

	tally_reset();
	ck_assert_int_eq(ik_iova_flush_cpu(&d, 0), 0); /* its own: no fence */
	ck_assert_uint_eq(tl.fences, 0);
	ck_assert(cpu_slots_empty(&d, 0));
	ck_assert(!cpu_slots_empty(&d, 2));
	ck_assert_int_eq(ik_iova_flush_cpu(&d, T_NVCPU), -EINVAL);

	tally_reset();
	CHECK_OK(&d);
	ck_assert_uint_eq(tl.fences, 1);
	ck_assert_uint_eq(tl.fence[T_NVCPU], 1);
	tally_reset();
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.cached_ranges, 12);
	ck_assert_uint_eq(tl.fences, 1);
	ck_assert_uint_eq(tl.fence[T_NVCPU], 1);
	tally_reset();
	ck_assert_int_eq(ik_iova_for_each_cached(&d, iova_mt_count_cached, &n), 0);
	ck_assert_uint_eq(n, 12);
	ck_assert_uint_eq(tl.fences, 1);
	ck_assert_uint_eq(tl.fence[T_NVCPU], 1);

	/* flush_all from CPU 2: CPUs 0, 1 and 3, once each */
	t_vcpu_set(0);
	cache_some(&d, 4);
	t_vcpu_set(2);
	tally_reset();
	ik_iova_flush_all(&d);
	ck_assert_uint_eq(tl.fences, T_NVCPU - 1);
	ck_assert_uint_eq(tl.fence[2], 0);
	ck_assert_uint_eq(tl.fence[T_NVCPU], 0);
	for (unsigned cpu = 0; cpu < T_NVCPU; cpu++) {
		if (cpu != 2)
			ck_assert_uint_eq(tl.fence[cpu], 1);
		ck_assert(cpu_slots_empty(&d, cpu));
	}
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.ranges, 0);
	ck_assert_uint_eq(st.cached_ranges, 0);

	/* a thread that migrated: its misses and hits use its new CPU's slots
	 * and fence nothing */
	t_vcpu_set(3);
	tally_reset();
	cache_some(&d, 4);
	ck_assert_uint_eq(tl.fences, 0);
	ck_assert_uint_eq(loaded_n(&d, 0, 3), 2);
	ck_assert(cpu_slots_empty(&d, 2));
	CHECK_OK(&d);
	ik_iova_destroy(&d);
	NO_VIOLATIONS();
}
END_TEST

/* A thread that holds a pinned section on CPU 2 for a while (so that a
 * fence that does not wait returns first), or until released. */
struct holder {
	int inside, done; /* atomic */
	int wait_release; /* hold until release is set, not for a delay */
	int release;	  /* atomic */
};

static void *hold_cpu2(void *arg)
{
	struct holder *h = arg;
	struct timespec ts = { 0, 30 * 1000 * 1000 };

	t_vcpu_set(2);
	(void)t_vcpu_pin();
	__atomic_store_n(&h->inside, 1, __ATOMIC_RELEASE);
	if (h->wait_release)
		while (!__atomic_load_n(&h->release, __ATOMIC_ACQUIRE))
			sched_yield();
	else
		nanosleep(&ts, NULL);
	__atomic_store_n(&h->done, 1, __ATOMIC_RELEASE);
	t_vcpu_unpin();
	return NULL;
}

static void run_while_cpu2_pinned(struct ik_iova_domain *d, int what)
{
	struct holder h = { 0, 0, 0, 0 };
	pthread_t th;

	ck_assert_int_eq(pthread_create(&th, NULL, hold_cpu2, &h), 0);
	while (!__atomic_load_n(&h.inside, __ATOMIC_ACQUIRE))
		sched_yield();
	tally_reset();
	if (what == 0)
		ck_assert_int_eq(ik_iova_flush_cpu(d, 2), 0);
	else if (what == 1)
		CHECK_OK(d);
	else
		ik_iova_flush_all(d);
	ck_assert_msg(__atomic_load_n(&h.done, __ATOMIC_ACQUIRE),
		      "locker %d returned while CPU 2 was pinned", what);
	ck_assert_uint_ge(tl.fences, 1);
	pthread_join(th, NULL);
}

/*
 * A locker waits for a pinned section in progress on the CPU whose slots it
 * takes (flush_cpu of that CPU, the checker, flush_all); a hit on another
 * CPU does not (it neither fences nor waits for CPU 2: the section there
 * only ends after the hits, so waiting would hang).
 */
START_TEST(test_fence_waits_for_a_pinned_section)
{
	struct ik_iova_domain d;
	struct holder h = { 0, 0, 1, 0 };
	pthread_t th;
	uint64_t q;

	dom_init(&d, 0, 4095, 0);
	t_vcpu_set(2);
	cache_some(&d, 4);
	t_vcpu_set(0);
	cache_some(&d, 4);
	for (int what = 0; what < 3; what++)
		run_while_cpu2_pinned(&d, what);
	ck_assert(cpu_slots_empty(&d, 2));

	t_vcpu_set(0);
	cache_some(&d, 4);
	ck_assert_int_eq(pthread_create(&th, NULL, hold_cpu2, &h), 0);
	while (!__atomic_load_n(&h.inside, __ATOMIC_ACQUIRE))
		sched_yield();
	tally_reset();
	ck_assert_int_eq(t_iova_alloc_fast_inline(&d, 1, 4095, &q), 0);
	ck_assert_int_eq(ik_iova_free_fast(&d, q, 1), 0);
	ck_assert_uint_eq(tl.pins, 2);
	ck_assert_uint_eq(tl.fences, 0);
	ck_assert(!__atomic_load_n(&h.done, __ATOMIC_ACQUIRE)); /* did not wait (else: hang) */
	__atomic_store_n(&h.release, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	CHECK_OK(&d);
	ik_iova_destroy(&d);
	NO_VIOLATIONS();
}
END_TEST

/* ---------------------------------------------------------------- threads */

enum { T = 4 };

/* The workers' hooks: each starts on its own virtual CPU with jitter in
 * its pinned sections, and migrates before one operation in eight. */
static void mt_start(struct iova_mt *c)
{
	t_vcpu_set(c->id % T_NVCPU);
	jitter = 1;
	jitter_rng = 0xa5a5ull * (c->id + 1);
}

static void mt_migrate(struct iova_mt *c, struct ik_rng *r)
{
	if (ik_rng_below(r, 8) == 0) { /* between sections */
		t_vcpu_set((unsigned)ik_rng_below(r, T_NVCPU));
		c->events++;
	}
}

static void mt_stop(struct iova_mt *c)
{
	(void)c;
	jitter = 0;
}

/* The checker runs each check from another virtual CPU. */
static void check_migrates(struct iova_checker *k)
{
	struct ik_rng r = { k->state };

	t_vcpu_set((unsigned)ik_rng_below(&r, T_NVCPU));
	k->state = r.s;
}

/*
 * Four threads on the four virtual CPUs, migrating between calls: fast
 * (inline and exported) and tree allocations and frees of 1..40 pages,
 * flushes of random CPUs, stats, for_each_cached and full flushes, while a
 * fifth runs the checker; every pfn has at most one owner.  Pinned sections
 * sometimes yield, so that lockers' fences and other threads' pins of the
 * same CPU really wait.  PINNED (_i == 0) and LOCK (_i == 1).
 */
START_TEST(test_threads_share_a_domain_without_overlap)
{
	const unsigned flags = _i ? IK_IOVA_CFG_LOCKED_RCACHE : 0;
	struct ik_iova_domain d;
	struct ik_iova_config cfg;
	struct ik_iova_stats st;
	struct iova_mt c[T];
	struct iova_checker k = { &d, 0, 0, 0, check_migrates, 0xc4ecull };
	pthread_t th[T], kt;
	uint8_t *owner = calloc(IOVA_MT_SPACE, 1);
	long ops = ik_test_iters(IK_TEST_TSAN ? 20000 : 200000);
	unsigned long pins0 = __atomic_load_n(&g_pins, __ATOMIC_RELAXED);
	unsigned long fences0 = __atomic_load_n(&g_fences, __ATOMIC_RELAXED);
	unsigned long pins, fences;
	long migrations = 0;

	ck_assert_ptr_nonnull(owner);
	memset(&cfg, 0, sizeof(cfg));
	cfg.granule = 4096;
	cfg.end_pfn = IOVA_MT_SPACE - 1;
	cfg.depot_max = 2;
	cfg.flags = flags;
	memset(&d, 0, sizeof(d)); /* see dom_init() */
	ck_assert_int_eq(ik_iova_init(&d, &cfg), 0);
	ck_assert_int_eq(ik_iova_rcache_mode(&d),
			 flags ? IK_IOVA_RCACHE_LOCK : IK_IOVA_RCACHE_PINNED);
	ck_assert_int_eq(ik_iova_reserve(&d, 1000, 1999), 0);
	for (unsigned i = 0; i < T; i++) {
		c[i] = (struct iova_mt){ .d = &d, .owner = owner, .ops = ops, .id = i,
					 .ncpus = T_NVCPU, .seed = 0x9157ull, .start = mt_start,
					 .each = mt_migrate, .stop = mt_stop };
		ck_assert_int_eq(pthread_create(&th[i], NULL, iova_mt_worker, &c[i]), 0);
	}
	ck_assert_int_eq(pthread_create(&kt, NULL, iova_check_loop, &k), 0);
	for (unsigned i = 0; i < T; i++) {
		pthread_join(th[i], NULL);
		ck_assert_msg(c[i].fail == 0, "thread %u failed: %d", i, c[i].fail);
		migrations += c[i].events;
	}
	__atomic_store_n(&k.stop, 1, __ATOMIC_RELEASE);
	pthread_join(kt, NULL);
	ck_assert_msg(k.err == 0, "ik_iova_check() during the run: %s", ik_iova_check_str(k.err));
	ck_assert_int_gt(k.runs, 0);
	ck_assert_int_gt(migrations, 0);
	NO_VIOLATIONS();
	pins = __atomic_load_n(&g_pins, __ATOMIC_RELAXED) - pins0;
	fences = __atomic_load_n(&g_fences, __ATOMIC_RELAXED) - fences0;
	if (flags) {
		ck_assert_uint_eq(pins, 0);
		ck_assert_uint_eq(fences, 0);
	} else {
		ck_assert_uint_ge(pins, (unsigned long)ops); /* at least one per fast call */
		ck_assert_uint_gt(fences, (unsigned long)k.runs - 1);
	}
	CHECK_OK(&d);
	ik_iova_flush_all(&d);
	ik_iova_stats(&d, &st);
	ck_assert_uint_eq(st.ranges, 1); /* the reservation */
	ck_assert_uint_eq(st.pages, 1000);
	ck_assert_uint_eq(st.reserved_ranges, 1);
	ck_assert_uint_eq(st.cached_ranges, 0);
	for (unsigned cpu = 0; cpu < T_NVCPU; cpu++)
		ck_assert(cpu_slots_empty(&d, cpu));
	CHECK_OK(&d);
	ik_iova_destroy(&d);
	free(owner);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("iova_pinned");
	TCase *tc = tcase_create("pinned");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_mode_follows_config);
	tcase_add_test(tc, test_hit_pins_once_and_fences_nothing);
	tcase_add_test(tc, test_held_slot_sends_hit_to_slow_path);
	tcase_add_test(tc, test_lockers_fence_the_slot_cpus);
	tcase_add_test(tc, test_fence_waits_for_a_pinned_section);
	suite_add_tcase(s, tc);
	tc = tcase_create("threads");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_threads_share_a_domain_without_overlap, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
