/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Self-test cases for the foundation: the env contract as this host
 * implements it, atomics, the lock, and the augmented red-black tree.
 */
#include "st_internal.h"
#include <iommukit/atomic.h>
#include <iommukit/lock.h>
#include <iommukit/rbtree.h>

static bool st_streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* ik_strerror names every errno the units return, and nothing else. */
static void env_strerror_names_errors(struct ik_st *t)
{
	static const int errs[] = { EPERM, ENOENT, EIO, EAGAIN, ENOMEM, EFAULT, EBUSY, EEXIST,
				    ENODEV, EINVAL, ENOSPC, ERANGE, EOVERFLOW, EOPNOTSUPP,
				    ETIMEDOUT, ECANCELED };
	unsigned i;

	ST_CHECK(t, st_streq(ik_strerror(0), "success"));
	for (i = 0; i < IK_ARRAY_SIZE(errs); i++) {
		ST_CHECK(t, ik_strerror(-errs[i]) != NULL);
		ST_CHECK(t, !st_streq(ik_strerror(-errs[i]), "unknown error"));
	}
	ST_CHECK(t, st_streq(ik_strerror(-4095), "unknown error"));
	ST_CHECK(t, st_streq(ik_strerror(1), "unknown error"));
	ST_CHECK(t, ik_version()[0] >= '0' && ik_version()[0] <= '9');
	ST_CHECK(t, IK_ENV_NAME[0] != '\0');
}

/* IK_ENV_ALLOC honours every alignment up to 4096, memory is writable. */
static void env_alloc_aligns_and_frees(struct ik_st *t)
{
	static const ik_size sizes[] = { 1, 24, 64, 100, 4096, 5000, 65536 };
	ik_size align, i;

	for (align = 1; align <= 4096; align <<= 1) {
		for (i = 0; i < IK_ARRAY_SIZE(sizes); i++) {
			ik_u8 *p = (ik_u8 *)ik_alloc(&t->alloc.a, sizes[i], align);

			ST_CHECK(t, p != NULL);
			ST_CHECK(t, IK_IS_ALIGNED((ik_uptr)p, align));
			IK_ENV_MEMSET(p, 0xa5, sizes[i]);
			ST_CHECK(t, p[0] == 0xa5 && p[sizes[i] - 1] == 0xa5);
			ik_free(&t->alloc.a, p, sizes[i]);
		}
	}
	/* The fault-injecting allocator refuses exactly the armed call. */
	ik_st_alloc_arm(t, 2);
	{
		void *a = ik_alloc(&t->alloc.a, 32, 8);
		void *b = ik_alloc(&t->alloc.a, 32, 8);

		ik_free(&t->alloc.a, a, 32);
		ST_CHECK(t, a != NULL && b == NULL && t->alloc.failures == 1);
	}
	ik_st_alloc_arm(t, 0);
}

/* CPU id below the CPU count; a monotonic clock; yield returns. */
static void env_cpu_time_yield(struct ik_st *t)
{
	unsigned ncpu = IK_ENV_NR_CPUS(), i;
	ik_u64 prev = IK_ENV_TIME_NS(), now;

	ST_CHECK(t, ncpu >= 1);
	ST_CHECK(t, ncpu == IK_ENV_NR_CPUS());
	for (i = 0; i < 64; i++) {
		ST_CHECK(t, IK_ENV_CPU_ID() < ncpu);
		IK_ENV_YIELD();
		now = IK_ENV_TIME_NS();
		ST_CHECK(t, now >= prev);
		prev = now;
	}
}

/* Loads, stores, exchanges, CASes and fetch-ops on 1..8 byte objects. */
static void atomic_ops_all_widths(struct ik_st *t)
{
	ik_u8 b = 1;
	ik_u16 h = 2;
	ik_u32 w = 3, we;
	ik_u64 d = 4, de;
	void *ptr = NULL, *pe;
	int x = 0;

	ik_store_release(&b, (ik_u8)7);
	ST_CHECK(t, ik_load_acquire(&b) == 7);
	ST_CHECK(t, ik_atomic_fetch_add(&h, (ik_u16)5, IK_MO_RELAXED) == 2 && h == 7);
	ST_CHECK(t, ik_atomic_xchg(&w, 9u, IK_MO_ACQ_REL) == 3 && w == 9);
	we = 8;
	ST_CHECK(t, !ik_atomic_cas(&w, &we, 10u, IK_MO_ACQ_REL, IK_MO_ACQUIRE) && we == 9);
	ST_CHECK(t, ik_atomic_cas(&w, &we, 10u, IK_MO_ACQ_REL, IK_MO_ACQUIRE) && w == 10);
	de = d;
	while (!ik_atomic_cas_weak(&d, &de, de << 40, IK_MO_RELAXED, IK_MO_RELAXED))
		;
	ST_CHECK(t, d == 4ull << 40);
	ST_CHECK(t, ik_atomic_fetch_or(&d, 1ull, IK_MO_SEQ_CST) == 4ull << 40);
	ST_CHECK(t, ik_atomic_fetch_and(&d, ~(4ull << 40), IK_MO_SEQ_CST) == ((4ull << 40) | 1));
	ST_CHECK(t, ik_atomic_fetch_sub(&d, 1ull, IK_MO_RELEASE) == 1 && d == 0);
	pe = NULL;
	ST_CHECK(t, ik_atomic_cas(&ptr, &pe, (void *)&x, IK_MO_RELEASE, IK_MO_RELAXED));
	ST_CHECK(t, ik_load_relaxed(&ptr) == (void *)&x);
	ik_smp_mb();
	ik_smp_rmb();
	ik_smp_wmb();
	ik_dma_wmb();
	ik_dma_rmb();
	ik_cpu_relax();
	ik_barrier();
}

/* ik_lock/ik_trylock/ik_unlock, the env's lock or the default one. */
static void lock_excludes_trylock(struct ik_st *t)
{
	ik_lock_t l;

	ik_lock_init(&l);
	ST_CHECK(t, ik_trylock(&l));
	ST_CHECK(t, !ik_trylock(&l));
	ik_unlock(&l);
	ik_lock(&l);
	ST_CHECK(t, !ik_trylock(&l));
	ik_unlock(&l);
	ST_CHECK(t, ik_trylock(&l));
	ik_unlock(&l);
	ik_lock_destroy(&l);
}

/* ---- augmented red-black tree ---- */

struct st_range {
	struct ik_rb_node rb;
	ik_u64 lo, size;
	ik_u64 largest;	/* augmented: max size in the subtree */
};

static ik_u64 st_range_size(const struct st_range *r)
{
	return r->size;
}

IK_RB_DECLARE_CALLBACKS_MAX(static, st_range_aug, struct st_range, rb, largest, st_range_size);

static int st_range_cmp(const struct ik_rb_node *a, const struct ik_rb_node *b)
{
	ik_u64 x = ik_rb_entry(a, struct st_range, rb)->lo;
	ik_u64 y = ik_rb_entry(b, struct st_range, rb)->lo;

	return x < y ? -1 : x > y;
}

static bool st_range_aug_ok(const struct ik_rb_node *n)
{
	const struct st_range *r = ik_rb_entry(n, struct st_range, rb);

	return r->largest == st_range_aug_compute(r);
}

static void st_range_insert(struct ik_rb_root *root, struct st_range *r)
{
	struct ik_rb_node **link = &root->node, *parent = NULL;

	while (*link) {
		parent = *link;
		if (r->lo < ik_rb_entry(parent, struct st_range, rb)->lo)
			link = &parent->left;
		else
			link = &parent->right;
	}
	ik_rb_link_node(&r->rb, parent, link);
	ik_rb_insert_augmented(&r->rb, root, &st_range_aug);
}

#define ST_RB_N 512

/* Random inserts and erases keep order, colours and subtree maxima right. */
static void rbtree_augmented_random(struct ik_st *t)
{
	struct st_range *r = (struct st_range *)ik_alloc(&t->alloc.a, ST_RB_N * sizeof(*r), 8);
	struct ik_rb_root root = IK_RB_ROOT_INIT;
	struct ik_rb_node *n;
	ik_u64 prev, max;
	ik_size count;
	unsigned i, seen;

	ST_CHECK(t, r != NULL);
	for (i = 0; i < ST_RB_N; i++) {
		r[i].lo = ik_st_below(t, 1ull << 40);
		r[i].size = 1 + ik_st_below(t, 1000);
		st_range_insert(&root, &r[i]);
		if ((i & 63) == 63)
			ST_CHECK_GOTO(t, ik_rb_check(&root, st_range_cmp, st_range_aug_ok, NULL, &count) ==
				      IK_RB_OK && count == i + 1, out);
	}
	/* Erase every other node, checking as we go. */
	for (i = 0; i < ST_RB_N; i += 2) {
		ik_rb_erase_augmented(&r[i].rb, &root, &st_range_aug);
		if ((i & 31) == 30)
			ST_CHECK_GOTO(t, ik_rb_check(&root, st_range_cmp, st_range_aug_ok, NULL, NULL) ==
				      IK_RB_OK, out);
	}
	ST_CHECK_GOTO(t, ik_rb_check(&root, st_range_cmp, st_range_aug_ok, NULL, &count) == IK_RB_OK &&
		      count == ST_RB_N / 2, out);
	/* In-order walk: sorted, and the root's value is the true maximum. */
	max = 0;
	for (i = 1; i < ST_RB_N; i += 2)
		max = IK_MAX(max, r[i].size);
	ST_CHECK_GOTO(t, ik_rb_entry(root.node, struct st_range, rb)->largest == max, out);
	prev = 0;
	seen = 0;
	for (n = ik_rb_first(&root); n; n = ik_rb_next(n)) {
		ST_CHECK_GOTO(t, ik_rb_entry(n, struct st_range, rb)->lo >= prev, out);
		prev = ik_rb_entry(n, struct st_range, rb)->lo;
		seen++;
	}
	ST_CHECK_GOTO(t, seen == ST_RB_N / 2, out);
	seen = 0;
	for (n = ik_rb_last(&root); n; n = ik_rb_prev(n))
		seen++;
	ST_CHECK_GOTO(t, seen == ST_RB_N / 2, out);
	seen = 0;
	for (n = ik_rb_first_postorder(&root); n; n = ik_rb_next_postorder(n))
		seen++;
	ST_CHECK_GOTO(t, seen == ST_RB_N / 2, out);
	/* A corrupted augmented value is caught by the checker. */
	ik_rb_entry(root.node, struct st_range, rb)->largest++;
	ST_CHECK_GOTO(t, ik_rb_check(&root, st_range_cmp, st_range_aug_ok, NULL, NULL) ==
		      IK_RB_BAD_AUGMENT, out);
	ik_rb_entry(root.node, struct st_range, rb)->largest--;
out:
	ik_free(&t->alloc.a, r, ST_RB_N * sizeof(*r));
}

const struct ik_st_case ik_st_core_cases[] = {
	{ "env_strerror_names_errors", env_strerror_names_errors },
	{ "env_alloc_aligns_and_frees", env_alloc_aligns_and_frees },
	{ "env_cpu_time_yield", env_cpu_time_yield },
	{ "atomic_ops_all_widths", atomic_ops_all_widths },
	{ "lock_excludes_trylock", lock_excludes_trylock },
	{ "rbtree_augmented_random", rbtree_augmented_random },
};
const unsigned ik_st_core_ncases = IK_ARRAY_SIZE(ik_st_core_cases);
