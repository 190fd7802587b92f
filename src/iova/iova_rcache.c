/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * IOVA allocator: range caches (rcaches).  See <iommukit/iova.h>.
 *
 * For each size class 2^k pages (k = 0 .. rc_classes - 1) every CPU has a
 * slot {lock, loaded, prev} in its own cache line, and the class has a depot
 * of full magazines.  Cached ranges stay allocated in the tree; a flush frees
 * them there.  The hits are inline in iova.h (and written out again at the
 * end of this file for the exported forms); here are the misses:
 *
 *   alloc miss: loaded empty (or its top above the limit) -> scan it for a
 *     pfn under the limit; else swap with prev and try again; else, when
 *     loaded is empty, replace it with a full magazine from the depot; else
 *     allocate from the tree (size-aligned, 2^k pages).
 *   free miss: loaded full -> swap with prev if prev has room; else move the
 *     full loaded magazine to the depot and start an empty one; when the
 *     depot already holds depot_max magazines, trim instead: the magazine's
 *     ranges go back to the tree and it is reused empty.  If no magazine can
 *     be allocated, the range goes back to the tree.
 *
 * The "maybe cached" hint (d->rc_maybe_cached) lets a failing allocation skip
 * the flush when nothing can be cached.  Protocol: flush_all clears it, then
 * takes every slot lock in turn; anything that puts ranges into a slot (a
 * free, a magazine from the depot) sets it while holding that slot's lock.  A
 * range cached after flush_all passed a slot was put there under the slot
 * lock after flush_all released it, so its setter ran after the clear: the
 * lock's release/acquire pair orders the clear before the set, and the hint
 * ends up set.  The hint is relaxed: it only ever saves work.  In the
 * lockless modes a hit's free sets the hint after its commit, outside the
 * slot lock: a commit that precedes flush_all's fence of the slot (below) is
 * flushed with the slot, and one that follows the slot's unlock also
 * follows the clear.
 *
 * Lockless modes (RSEQ, PINNED; see ik_iova_rcache_mode()).  A hit runs on
 * the slot's own CPU, inside a restartable sequence (RSEQ) or a pinned
 * section (PINNED), reads `held` first and leaves the slot alone if it is
 * set.  Everyone else who touches a slot - the misses of its own CPU, other
 * CPUs, flushes, stats, the checker - is a locker: it takes the slot lock,
 * sets `held`, and then fences the slot's CPU (slot_lock()).  After the
 * fence no hit that began before `held` was set is still running there
 * (RSEQ: membarrier aborted it or it committed; PINNED: IK_ENV_CPU_FENCE
 * waited for it), and every later hit sees `held` and goes to the slow
 * path, which waits for the lock.  The fence is skipped when the locker is
 * itself seen running on the slot's CPU after setting `held`: a hit there
 * that began earlier has committed (its stores precede the switch to the
 * locker) or was preempted, which restarts a restartable sequence, and a
 * pinned section cannot be preempted.  So a miss on its own CPU costs no
 * system call, and a locker that migrates afterwards is still safe.
 */
/* The inline forms, and ik_iova_cpu_slot_(), for the exported wrappers below. */
#define IK_INLINE_FAST 1
#include <iommukit/iova.h>
#include "iova_int.h"

typedef struct ik_iova_mag mag_t;

#if defined(IK_IOVA_HAVE_RSEQ_) && defined(IK_ENV_RSEQ_TP_OFFSET)
/*
 * Every thread's rseq area as an offset from its thread pointer (the %fs
 * base).  ik_iova_rcache_init() sets it before it selects RSEQ mode, always
 * to the env's value (one for the whole process), so a domain in RSEQ mode
 * finds it set.  Library-local: the exported hits read it with one
 * RIP-relative load and reach the area through %fs - no GOT read of the
 * env's facts (glibc's __rseq_size and __rseq_offset) and no read of the
 * thread pointer.
 */
#define RSEQ_TP 1
static long rseq_tp_off;
#endif

static mag_t *mag_alloc(struct ik_iova_domain *d)
{
	mag_t *m = (mag_t *)ik_alloc(d->alloc, sizeof(mag_t), sizeof(void *));

	if (m) {
		m->n = 0;
		m->next = NULL;
		ik_atomic_fetch_add(&d->rc_mags, 1, IK_MO_RELAXED);
	}
	return m;
}

static void mag_free(struct ik_iova_domain *d, mag_t *m)
{
	if (m) {
		ik_atomic_fetch_sub(&d->rc_mags, 1, IK_MO_RELAXED);
		ik_free(d->alloc, m, sizeof(mag_t));
	}
}

/* Return m's ranges to the tree (takes the tree lock); m is left empty. */
static void mag_drain(struct ik_iova_domain *d, mag_t *m, unsigned cls)
{
	ik_u32 i;

	(void)cls;
	if (!m || !m->n)
		return;
	ik_lock(&d->lock);
	for (i = 0; i < m->n; i++) {
		int err = ik_iova_free_locked(d, m->pfn[i]);

		IK_ASSERT(err == 0);
		(void)err;
	}
	ik_unlock(&d->lock);
	m->n = 0;
}

static inline struct ik_iova_cpu *slot(struct ik_iova_domain *d, unsigned cls, unsigned cpu)
{
	return &d->rc_cpu[cls * d->rc_ncpus + cpu];
}

static inline void mark_cached(struct ik_iova_domain *d)
{
	ik_iova_mark_cached_(d);
}

#define ALL_CPUS ((unsigned)-1)
#define NO_FENCE ((unsigned)-2) /* slot_lock(): the caller fences by itself */
#define MAX_CLASSES 21		/* size classes 2^0 .. 2^20 pages */

/* RSEQ or PINNED: hits take no lock, lockers set `held` and fence. */
static inline bool lockless(const struct ik_iova_domain *d)
{
	return d->rc_mode == IK_IOVA_RCACHE_RSEQ || d->rc_mode == IK_IOVA_RCACHE_PINNED;
}

/* The CPU this thread runs on now, as the lockless mode sees it (exact, not
 * the env's hint); ALL_CPUS when unknown. */
static unsigned cpu_now(struct ik_iova_domain *d)
{
	(void)d;
#ifdef IK_ENV_CPU_PIN
	if (d->rc_mode == IK_IOVA_RCACHE_PINNED) {
		unsigned cpu = IK_ENV_CPU_PIN();

		IK_ENV_CPU_UNPIN();
		return cpu;
	}
#endif
#ifdef IK_IOVA_HAVE_RSEQ_
	if (d->rc_mode == IK_IOVA_RCACHE_RSEQ) {
		void *rs = IK_ENV_RSEQ_AREA();

		/* cpu_id, which the kernel rewrites on every migration. */
		return rs ? *(volatile ik_u32 *)((char *)rs + 4) : ALL_CPUS;
	}
#endif
	return ALL_CPUS;
}

/* Lockless modes: make sure no hit on `cpu` (ALL_CPUS: any) that began
 * before this call still runs, the caller having set `held` on the slots it
 * holds (see the top comment).  LOCK mode: nothing to do. */
static void fence_cpu(struct ik_iova_domain *d, unsigned cpu)
{
	if (!lockless(d))
		return;
	/* `held` reaches the fenced CPU through the fence itself (membarrier
	 * and IK_ENV_CPU_FENCE order the caller's earlier stores), or through
	 * program order and the context switch when the caller is on it. */
	if (cpu != ALL_CPUS && cpu_now(d) == cpu)
		return;
#ifdef IK_ENV_CPU_PIN
	if (d->rc_mode == IK_IOVA_RCACHE_PINNED) {
		IK_ENV_CPU_FENCE(cpu);
		return;
	}
#endif
#ifdef IK_IOVA_HAVE_RSEQ_
	/* Registered at init (and the registration survives fork()), so
	 * neither fails on Linux.  Should a targeted fence fail all the same,
	 * the whole-process one is tried, and until it succeeds the process
	 * registers again: going on without a fence would race with a hit. */
	if (IK_ENV_RSEQ_FENCE(cpu) == 0)
		return;
	while (IK_ENV_RSEQ_FENCE(ALL_CPUS) != 0) {
		(void)IK_ENV_RSEQ_REGISTER();
		IK_ENV_YIELD();
	}
#endif
}

/* Take a slot as a locker: the lock, then in the lockless modes `held` and
 * a fence of `cpu`, the slot's CPU (NO_FENCE when the caller fences several
 * slots at once). */
static void slot_lock(struct ik_iova_domain *d, struct ik_iova_cpu *c, unsigned cpu)
{
	ik_lock(&c->lock);
	if (lockless(d)) {
		ik_store_relaxed(&c->held, 1u);
		if (cpu != NO_FENCE)
			fence_cpu(d, cpu);
	}
}

static void slot_unlock(struct ik_iova_domain *d, struct ik_iova_cpu *c)
{
	if (lockless(d))
		ik_store_release(&c->held, 0u); /* the slot's new state before it */
	ik_unlock(&c->lock);
}

/* The slot of the calling thread's CPU for class cls, and in *cpu the CPU
 * it belongs to: in the lockless modes the exact CPU (so that a miss there
 * fences nothing), in LOCK mode the env's hint (and *cpu = NO_FENCE: LOCK
 * mode never fences). */
static struct ik_iova_cpu *cur_slot(struct ik_iova_domain *d, unsigned cls, unsigned *cpu)
{
	if (!lockless(d)) {
		*cpu = NO_FENCE;
		return ik_iova_cpu_slot_(d, cls);
	}
	*cpu = cpu_now(d);
	if (*cpu >= d->rc_ncpus)
		*cpu = 0;
	return slot(d, cls, *cpu);
}

enum ik_iova_rcache_mode ik_iova_rcache_mode(const struct ik_iova_domain *d)
{
	if (!d || !d->rc_max_pages)
		return IK_IOVA_RCACHE_NONE;
	return (enum ik_iova_rcache_mode)d->rc_mode;
}

int ik_iova_rcache_init(struct ik_iova_domain *d, const struct ik_iova_config *cfg)
{
	ik_u64 maxp = cfg->rcache_max_pages ? cfg->rcache_max_pages : IK_IOVA_RCACHE_MAX_PAGES;
	unsigned c, i, n;

	d->rc_max_pages = 0;
	d->rc_classes = 0;
	d->rc_ncpus = 0;
	d->rc_cpu = NULL;
	d->rc_depot = NULL;
	d->rc_mags = 0;
	d->rc_maybe_cached = 0;
	d->rc_mode = IK_IOVA_RCACHE_NONE;
	if (cfg->flags & IK_IOVA_CFG_NO_RCACHE)
		return 0;
	if (!IK_IS_POW2(maxp) || maxp > ((ik_u64)1 << 20))
		return -EINVAL;
	d->rc_classes = (unsigned)IK_ILOG2_64(maxp) + 1;
	IK_ASSERT(d->rc_classes <= MAX_CLASSES); /* maxp <= 2^20 above */
	d->rc_ncpus = IK_ENV_NR_CPUS();
	d->depot_max = cfg->depot_max ? cfg->depot_max : IK_IOVA_DEPOT_MAX;
	n = d->rc_classes * d->rc_ncpus;
	d->rc_cpu = (struct ik_iova_cpu *)ik_alloc(d->alloc, n * sizeof(struct ik_iova_cpu),
						    IK_CACHELINE);
	if (!d->rc_cpu)
		return -ENOMEM;
	d->rc_depot = (struct ik_iova_depot *)ik_alloc(
		d->alloc, d->rc_classes * sizeof(struct ik_iova_depot), IK_CACHELINE);
	if (!d->rc_depot) {
		ik_free(d->alloc, d->rc_cpu, n * sizeof(struct ik_iova_cpu));
		d->rc_cpu = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		ik_lock_init(&d->rc_cpu[i].lock);
		d->rc_cpu[i].held = 0;
		d->rc_cpu[i].loaded = d->rc_cpu[i].prev = NULL;
	}
	for (c = 0; c < d->rc_classes; c++) {
		ik_lock_init(&d->rc_depot[c].lock);
		d->rc_depot[c].n = 0;
		d->rc_depot[c].head = NULL;
	}
	d->rc_mode = IK_IOVA_RCACHE_LOCK;
	if (!(cfg->flags & IK_IOVA_CFG_LOCKED_RCACHE)) {
#if defined(IK_ENV_CPU_PIN)
		d->rc_mode = IK_IOVA_RCACHE_PINNED;
#elif defined(IK_IOVA_HAVE_RSEQ_)
		if (IK_ENV_RSEQ_AREA() && IK_ENV_RSEQ_REGISTER() == 0) {
#ifdef RSEQ_TP
			ik_store_relaxed(&rseq_tp_off, IK_ENV_RSEQ_TP_OFFSET());
#endif
			d->rc_mode = IK_IOVA_RCACHE_RSEQ;
		}
#endif
	}
	d->rc_max_pages = maxp;
	return 0;
}

/* Free every magazine without returning ranges (the tree goes too). */
void ik_iova_rcache_destroy(struct ik_iova_domain *d)
{
	unsigned c, i, n = d->rc_classes * d->rc_ncpus;

	if (!d->rc_cpu)
		return;
	for (i = 0; i < n; i++) {
		mag_free(d, d->rc_cpu[i].loaded);
		mag_free(d, d->rc_cpu[i].prev);
		ik_lock_destroy(&d->rc_cpu[i].lock);
	}
	for (c = 0; c < d->rc_classes; c++) {
		mag_t *m = d->rc_depot[c].head, *nx;

		for (; m; m = nx) {
			nx = m->next;
			mag_free(d, m);
		}
		ik_lock_destroy(&d->rc_depot[c].lock);
	}
	ik_free(d->alloc, d->rc_cpu, n * sizeof(struct ik_iova_cpu));
	ik_free(d->alloc, d->rc_depot, d->rc_classes * sizeof(struct ik_iova_depot));
	d->rc_cpu = NULL;
	d->rc_depot = NULL;
	d->rc_max_pages = 0;
	d->rc_classes = 0;
}

/* Take a range whose last pfn (pfn + top) is <= limit out of m (the top
 * entry if it qualifies, else the highest-placed one that does, bounded by
 * the magazine size).  pfn + top never overflows: it is a range's last pfn. */
static bool mag_pop(mag_t *m, ik_u64 limit, ik_u64 top, ik_u64 *pfn)
{
	ik_u32 i;

	if (!m || !m->n)
		return false;
	for (i = m->n; i-- > 0;) {
		if (m->pfn[i] + top <= limit) {
			*pfn = m->pfn[i];
			m->pfn[i] = m->pfn[m->n - 1];
			m->n--;
			return true;
		}
	}
	return false;
}

/* A miss of ik_iova_alloc_fast(), or its bad arguments. */
static IK_NOINLINE IK_COLD int alloc_miss(struct ik_iova_domain *d, ik_u64 npages, ik_u64 limit,
					  ik_u64 *pfn)
{
	struct ik_iova_cpu *c;
	struct ik_iova_depot *dep;
	unsigned cls, cpu;
	ik_u64 top;
	bool hit;

	if (!d || npages == 0 || !pfn)
		return -EINVAL;
	if (npages - 1 >= d->rc_max_pages)
		return ik_iova_alloc(d, npages, limit, IK_IOVA_SIZE_ALIGNED, pfn);
	cls = (unsigned)IK_ILOG2_64_UP(npages);
	top = ((ik_u64)1 << cls) - 1;
	c = cur_slot(d, cls, &cpu);
	dep = &d->rc_depot[cls];
	slot_lock(d, c, cpu);
	hit = mag_pop(c->loaded, limit, top, pfn);
	if (!hit && c->prev && c->prev->n) {
		mag_t *t = c->loaded;

		c->loaded = c->prev;
		c->prev = t;
		hit = mag_pop(c->loaded, limit, top, pfn);
	}
	if (!hit && (!c->loaded || !c->loaded->n)) {
		mag_t *m = NULL;

		ik_lock(&dep->lock);
		if (dep->head) {
			m = dep->head;
			dep->head = m->next;
			dep->n--;
		}
		ik_unlock(&dep->lock);
		if (m) {
			mag_free(d, c->loaded);
			c->loaded = m;
			mark_cached(d); /* under the slot lock: see the top comment */
			hit = mag_pop(m, limit, top, pfn);
		}
	}
	slot_unlock(d, c);
	if (hit)
		return 0;
	return ik_iova_alloc(d, (ik_u64)1 << cls, limit, IK_IOVA_SIZE_ALIGNED, pfn);
}

int ik_iova_alloc_fast_slow_(struct ik_iova_domain *d, ik_u64 npages, ik_u64 limit,
			     ik_u64 *pfn)
{
	return alloc_miss(d, npages, limit, pfn);
}

/* A miss of ik_iova_free_fast(), or its bad arguments. */
static IK_NOINLINE IK_COLD int free_miss(struct ik_iova_domain *d, ik_u64 pfn, ik_u64 npages)
{
	struct ik_iova_cpu *c;
	struct ik_iova_depot *dep;
	mag_t *m;
	unsigned cls, cpu;

	if (!d || npages == 0)
		return -EINVAL;
	if (npages - 1 >= d->rc_max_pages)
		return ik_iova_free(d, pfn);
	cls = (unsigned)IK_ILOG2_64_UP(npages);
	c = cur_slot(d, cls, &cpu);
	dep = &d->rc_depot[cls];
	slot_lock(d, c, cpu);
	if (c->loaded && c->loaded->n < IK_IOVA_MAG_SIZE)
		goto push;
	if (c->prev && c->prev->n < IK_IOVA_MAG_SIZE) {
		m = c->loaded;
		c->loaded = c->prev;
		c->prev = m;
		goto push;
	}
	if (!c->loaded || !c->prev) {
		m = mag_alloc(d);
		if (!m)
			goto to_tree;
		if (c->loaded)
			c->prev = c->loaded;
		c->loaded = m;
		goto push;
	}
	/* Both full: the loaded one goes to the depot, or is trimmed. */
	m = c->loaded;
	ik_lock(&dep->lock);
	if (dep->n < d->depot_max) {
		m->next = dep->head;
		dep->head = m;
		dep->n++;
		ik_unlock(&dep->lock);
		c->loaded = mag_alloc(d);
		if (!c->loaded)
			goto to_tree;
	} else {
		ik_unlock(&dep->lock);
		mag_drain(d, m, cls); /* slot lock -> tree lock: the documented order */
		ik_lock(&d->lock);
		d->nr_trims++;
		ik_unlock(&d->lock);
	}
push:
	c->loaded->pfn[c->loaded->n++] = pfn;
	mark_cached(d); /* under the slot lock: see the top comment */
	slot_unlock(d, c);
	return 0;
to_tree:
	slot_unlock(d, c);
	return ik_iova_free(d, pfn);
}

int ik_iova_free_fast_slow_(struct ik_iova_domain *d, ik_u64 pfn, ik_u64 npages)
{
	return free_miss(d, pfn, npages);
}

int ik_iova_flush_cpu(struct ik_iova_domain *d, unsigned cpu)
{
	mag_t *mag[2 * MAX_CLASSES]; /* loaded and prev of each class */
	unsigned cls;

	if (!d || cpu >= IK_ENV_NR_CPUS())
		return -EINVAL;
	if (cpu >= d->rc_ncpus)
		return 0;
	/* Every class of the CPU at once (slot index order), so that the
	 * lockless modes fence the CPU once. */
	for (cls = 0; cls < d->rc_classes; cls++)
		slot_lock(d, slot(d, cls, cpu), NO_FENCE);
	fence_cpu(d, cpu);
	for (cls = 0; cls < d->rc_classes; cls++) {
		struct ik_iova_cpu *c = slot(d, cls, cpu);

		mag[2 * cls] = c->loaded;
		mag[2 * cls + 1] = c->prev;
		c->loaded = c->prev = NULL;
	}
	for (cls = d->rc_classes; cls-- > 0;)
		slot_unlock(d, slot(d, cls, cpu));
	for (cls = 0; cls < 2 * d->rc_classes; cls++) {
		mag_drain(d, mag[cls], cls / 2);
		mag_free(d, mag[cls]);
	}
	return 0;
}

void ik_iova_flush_all(struct ik_iova_domain *d)
{
	unsigned cls, cpu;

	IK_ASSERT(d);
	if (!d->rc_classes)
		return;
	/* Cleared before any slot is visited: see the top comment. */
	ik_store_relaxed(&d->rc_maybe_cached, 0u);
	for (cpu = 0; cpu < d->rc_ncpus; cpu++)
		(void)ik_iova_flush_cpu(d, cpu);
	for (cls = 0; cls < d->rc_classes; cls++) {
		struct ik_iova_depot *dep = &d->rc_depot[cls];
		mag_t *m, *nx;

		ik_lock(&dep->lock);
		m = dep->head;
		dep->head = NULL;
		dep->n = 0;
		ik_unlock(&dep->lock);
		for (; m; m = nx) {
			nx = m->next;
			mag_drain(d, m, cls);
			mag_free(d, m);
		}
	}
}

void ik_iova_rcache_lock_all(struct ik_iova_domain *d)
{
	unsigned i, n = d->rc_classes * d->rc_ncpus;

	for (i = 0; i < n; i++)
		slot_lock(d, &d->rc_cpu[i], NO_FENCE);
	if (n)
		fence_cpu(d, ALL_CPUS);
	for (i = 0; i < d->rc_classes; i++)
		ik_lock(&d->rc_depot[i].lock);
}

void ik_iova_rcache_unlock_all(struct ik_iova_domain *d)
{
	unsigned i, n = d->rc_classes * d->rc_ncpus;

	for (i = d->rc_classes; i-- > 0;)
		ik_unlock(&d->rc_depot[i].lock);
	for (i = n; i-- > 0;)
		slot_unlock(d, &d->rc_cpu[i]);
}

/* Visit every cached pfn with its class; every lock is held. */
static int visit_cached(struct ik_iova_domain *d, int (*fn)(void *ctx, ik_u64 pfn, unsigned cls),
			void *ctx)
{
	unsigned cls, cpu;
	ik_u32 i;
	int r;

	for (cls = 0; cls < d->rc_classes; cls++) {
		mag_t *m;

		for (cpu = 0; cpu < d->rc_ncpus; cpu++) {
			struct ik_iova_cpu *c = slot(d, cls, cpu);
			mag_t *mm[2];
			unsigned k;

			mm[0] = c->loaded;
			mm[1] = c->prev;
			for (k = 0; k < 2; k++)
				for (i = 0; mm[k] && i < mm[k]->n; i++)
					if ((r = fn(ctx, mm[k]->pfn[i], cls)))
						return r;
		}
		for (m = d->rc_depot[cls].head; m; m = m->next)
			for (i = 0; i < m->n; i++)
				if ((r = fn(ctx, m->pfn[i], cls)))
					return r;
	}
	return 0;
}

struct count_ctx {
	ik_u64 ranges, pages;
};

static int count_one(void *ctx, ik_u64 pfn, unsigned cls)
{
	struct count_ctx *cc = (struct count_ctx *)ctx;

	(void)pfn;
	cc->ranges++;
	cc->pages += (ik_u64)1 << cls;
	return 0;
}

void ik_iova_rcache_count(struct ik_iova_domain *d, ik_u64 *ranges, ik_u64 *pages)
{
	struct count_ctx cc = { 0, 0 };

	ik_iova_rcache_lock_all(d);
	(void)visit_cached(d, count_one, &cc);
	ik_iova_rcache_unlock_all(d);
	*ranges = cc.ranges;
	*pages = cc.pages;
}

struct user_ctx {
	int (*fn)(void *ctx, ik_u64 pfn, ik_u64 pages);
	void *ctx;
};

static int user_one(void *ctx, ik_u64 pfn, unsigned cls)
{
	struct user_ctx *u = (struct user_ctx *)ctx;

	return u->fn(u->ctx, pfn, (ik_u64)1 << cls);
}

int ik_iova_for_each_cached(struct ik_iova_domain *d,
			    int (*fn)(void *ctx, ik_u64 pfn, ik_u64 pages), void *ctx)
{
	struct user_ctx u;
	int r;

	if (!d || !fn)
		return -EINVAL;
	u.fn = fn;
	u.ctx = ctx;
	ik_iova_rcache_lock_all(d);
	r = visit_cached(d, user_one, &u);
	ik_iova_rcache_unlock_all(d);
	return r;
}

/* ---- checker ---- */

struct check_ctx {
	struct ik_iova_domain *d;
	ik_u64 *pfns;
	ik_u64 n, cap;
};

static int check_one(void *ctx, ik_u64 pfn, unsigned cls)
{
	struct check_ctx *cc = (struct check_ctx *)ctx;
	struct ik_iova_node *x;
	ik_u64 hi, pages = (ik_u64)1 << cls;

	x = ik_iova_lookup_start(cc->d, pfn, &hi);
	if (!x || ik_iova_node_reserved(x) || hi - pfn + 1 != pages || (pfn & (pages - 1)))
		return IK_IOVA_CHECK_CACHE;
	if (cc->n < cc->cap)
		cc->pfns[cc->n++] = pfn;
	return 0;
}

static void sift_down(ik_u64 *a, ik_u64 i, ik_u64 n)
{
	for (;;) {
		ik_u64 l = 2 * i + 1, big = i, t;

		if (l < n && a[l] > a[big])
			big = l;
		if (l + 1 < n && a[l + 1] > a[big])
			big = l + 1;
		if (big == i)
			return;
		t = a[i];
		a[i] = a[big];
		a[big] = t;
		i = big;
	}
}

static void heap_sort(ik_u64 *a, ik_u64 n)
{
	ik_u64 i, t;

	for (i = n / 2; i-- > 0;)
		sift_down(a, i, n);
	for (i = n; i-- > 1;) {
		t = a[0];
		a[0] = a[i];
		a[i] = t;
		sift_down(a, 0, i);
	}
}

int ik_iova_rcache_check(struct ik_iova_domain *d)
{
	struct count_ctx cc = { 0, 0 };
	struct check_ctx ck;
	unsigned cls, i, n = d->rc_classes * d->rc_ncpus;
	int err;

	if (!d->rc_classes)
		return 0;
	for (i = 0; i < n; i++)
		if ((d->rc_cpu[i].loaded && d->rc_cpu[i].loaded->n > IK_IOVA_MAG_SIZE) ||
		    (d->rc_cpu[i].prev && d->rc_cpu[i].prev->n > IK_IOVA_MAG_SIZE))
			return IK_IOVA_CHECK_MAGAZINE;
	for (cls = 0; cls < d->rc_classes; cls++) {
		mag_t *m;
		unsigned k = 0;

		for (m = d->rc_depot[cls].head; m; m = m->next, k++)
			if (m->n > IK_IOVA_MAG_SIZE || k >= d->depot_max)
				return IK_IOVA_CHECK_MAGAZINE;
		if (k != d->rc_depot[cls].n)
			return IK_IOVA_CHECK_MAGAZINE;
	}
	(void)visit_cached(d, count_one, &cc);
	if (!cc.ranges)
		return 0;
	ck.d = d;
	ck.n = 0;
	ck.cap = cc.ranges;
	ck.pfns = (ik_u64 *)ik_alloc(d->alloc, cc.ranges * sizeof(ik_u64), sizeof(ik_u64));
	if (!ck.pfns)
		return -ENOMEM;
	err = visit_cached(d, check_one, &ck);
	if (!err) {
		ik_u64 j;

		heap_sort(ck.pfns, ck.n);
		for (j = 1; j < ck.n; j++)
			if (ck.pfns[j] == ck.pfns[j - 1])
				err = IK_IOVA_CHECK_CACHE_DUP;
	}
	ik_free(d->alloc, ck.pfns, cc.ranges * sizeof(ik_u64));
	return err;
}

/*
 * The exported forms.  They are the inline bodies of iova.h, written out
 * here so that a hit is as short as the inline one: the checks the inline
 * form leaves to its caller's loop (the mode, the size class) come first
 * and cost a few predicted branches; the RSEQ sequence finds the rseq area
 * through rseq_tp_off and %fs (no GOT read); the misses and the errors go to
 * alloc_miss() and free_miss() (cold) by a tail call from this unit (no PLT,
 * no frame: a hit saves no register, with gcc and clang alike -
 * tests/fast_path_code.sh checks it); and the LOCK-mode hit is out of the
 * lockless modes' way.  What is left above the inline form is the call
 * itself and those checks (issue 25: the call alone, a no-op exported
 * function called the same way, costs more than an inlined hit).
 * The names are macros here (IK_INLINE_FAST): the parentheses define the
 * functions.
 */

/* The size class of npages, 1 <= npages <= 2^62, without a branch (a size
 * of 1, the commonest, would otherwise be one): the log2 of npages rounded
 * up to a power of two. */
static inline unsigned size_class(ik_u64 npages)
{
	return 63u - (unsigned)ik_clz64(((npages - 1) << 1) | 1);
}

#ifdef IK_IOVA_HAVE_RSEQ_
/* A miss of the RSEQ-mode hit: the same request (npages rounds up to top + 1
 * there), from the values the sequence kept in registers.  Out of line, so
 * that the compiler does not keep `limit` (lim + top) live as well: the hit
 * then fits in the caller-saved registers and saves none. */
static IK_NOINLINE int alloc_rseq_miss(struct ik_iova_domain *d, ik_u64 top, ik_u64 lim,
				       ik_u64 *pfn)
{
	return alloc_miss(d, top + 1, lim + top, pfn);
}
#endif

#ifdef RSEQ_TP
/* ik_iova_rseq_pop_() and ik_iova_rseq_push_() of iova.h, with the area
 * found through rseq_tp_off (the offset goes in rdx, which the sequence
 * reuses for the count once it has read cpu_id). */
#define RSEQ_TP_ASM_(body, ...)                                                \
	IK_IOVA_RSEQ_ASM_AT_("movq %[off], %%rdx\n\t", "%%fs:8(%%rdx)", "%%fs:4(%%rdx)", \
			     [off] "m"(rseq_tp_off), body, __VA_ARGS__)

IK_ALWAYS_INLINE bool rseq_pop(struct ik_iova_domain *d, unsigned cls, ik_u64 lim, ik_u64 *pfn)
{
	struct ik_iova_cpu *base = &d->rc_cpu[cls * d->rc_ncpus];

again:
	RSEQ_TP_ASM_(IK_IOVA_RSEQ_POP_, [lim] "r"(lim), [out] "r"(pfn));
	return true;
miss:
	return false;
}

IK_ALWAYS_INLINE bool rseq_push(struct ik_iova_domain *d, unsigned cls, ik_u64 pfn)
{
	struct ik_iova_cpu *base = &d->rc_cpu[cls * d->rc_ncpus];

again:
	RSEQ_TP_ASM_(IK_IOVA_RSEQ_PUSH_, [cap] "i"(IK_IOVA_MAG_SIZE), [pfn] "r"(pfn));
	return true;
miss:
	return false;
}
#elif defined(IK_IOVA_HAVE_RSEQ_)
#define rseq_pop ik_iova_rseq_pop_
#define rseq_push ik_iova_rseq_push_
#endif

/* LOCK mode: pop from this CPU's loaded magazine under the slot lock.  The
 * lock is only tried: a slot another thread holds goes to the miss, which
 * waits for it there (so the wait loop, and the registers it needs, stay
 * out of the hit). */
static IK_NOINLINE int alloc_locked_hit(struct ik_iova_domain *d, ik_u64 npages, ik_u64 limit,
					ik_u64 *pfn, unsigned cls)
{
	struct ik_iova_cpu *c = ik_iova_cpu_slot_(d, cls);
	ik_u64 top = ((ik_u64)1 << cls) - 1;
	struct ik_iova_mag *m;

	if (IK_UNLIKELY(!ik_trylock(&c->lock)))
		return alloc_miss(d, npages, limit, pfn);
	m = c->loaded;
	if (IK_LIKELY(m && m->n && m->pfn[m->n - 1] + top <= limit)) {
		*pfn = m->pfn[--m->n];
		ik_unlock(&c->lock);
		return 0;
	}
	ik_unlock(&c->lock);
	return alloc_miss(d, npages, limit, pfn);
}

static IK_NOINLINE int free_locked_hit(struct ik_iova_domain *d, ik_u64 pfn, ik_u64 npages,
				       unsigned cls)
{
	struct ik_iova_cpu *c = ik_iova_cpu_slot_(d, cls);
	struct ik_iova_mag *m;

	if (IK_UNLIKELY(!ik_trylock(&c->lock)))
		return free_miss(d, pfn, npages); /* as in alloc_locked_hit() */
	m = c->loaded;
	if (IK_LIKELY(m && m->n < IK_IOVA_MAG_SIZE)) {
		m->pfn[m->n++] = pfn;
		mark_cached(d); /* under the slot lock: see the top comment */
		ik_unlock(&c->lock);
		return 0;
	}
	ik_unlock(&c->lock);
	return free_miss(d, pfn, npages);
}

int (ik_iova_alloc_fast)(struct ik_iova_domain *d, ik_u64 npages, ik_u64 limit, ik_u64 *pfn)
{
	unsigned cls;

	/* Errors too go out of line, by a tail call: a hit then returns
	 * its constant in a block of its own (clang would otherwise keep
	 * the merged return value in a callee-saved register). */
	if (IK_UNLIKELY(!d || !pfn))
		return alloc_miss(d, npages, limit, pfn);
	if (IK_UNLIKELY(npages - 1 >= d->rc_max_pages))
		return alloc_miss(d, npages, limit, pfn);
	cls = size_class(npages);
#ifdef IK_IOVA_HAVE_RSEQ_
	if (IK_LIKELY(d->rc_mode == IK_IOVA_RCACHE_RSEQ)) {
		ik_u64 top = ((ik_u64)1 << cls) - 1, lim;

		/* The whole cached range, [pfn, pfn + top], must be <= limit. */
		if (IK_UNLIKELY(__builtin_sub_overflow(limit, top, &lim)))
			return alloc_miss(d, npages, limit, pfn);
		if (IK_LIKELY(rseq_pop(d, cls, lim, pfn)))
			return 0;
		return alloc_rseq_miss(d, top, lim, pfn);
	}
#endif
#ifdef IK_ENV_CPU_PIN
	if (IK_LIKELY(d->rc_mode == IK_IOVA_RCACHE_PINNED)) {
		ik_u64 top = ((ik_u64)1 << cls) - 1;
		struct ik_iova_mag *m = ik_iova_pinned_mag_(d, cls, IK_ENV_CPU_PIN());
		bool hit = m && m->n && m->pfn[m->n - 1] + top <= limit;

		if (IK_LIKELY(hit))
			*pfn = m->pfn[--m->n];
		IK_ENV_CPU_UNPIN();
		return hit ? 0 : alloc_miss(d, npages, limit, pfn);
	}
#endif
	if (IK_LIKELY(d->rc_mode == IK_IOVA_RCACHE_LOCK))
		return alloc_locked_hit(d, npages, limit, pfn, cls);
	return alloc_miss(d, npages, limit, pfn);
}

int (ik_iova_free_fast)(struct ik_iova_domain *d, ik_u64 pfn, ik_u64 npages)
{
	unsigned cls;

	if (IK_UNLIKELY(!d))
		return free_miss(d, pfn, npages); /* as in ik_iova_alloc_fast() */
	if (IK_UNLIKELY(npages - 1 >= d->rc_max_pages))
		return free_miss(d, pfn, npages);
	cls = size_class(npages);
#ifdef IK_IOVA_HAVE_RSEQ_
	if (IK_LIKELY(d->rc_mode == IK_IOVA_RCACHE_RSEQ)) {
		if (IK_LIKELY(rseq_push(d, cls, pfn))) {
			mark_cached(d);
			return 0;
		}
		return free_miss(d, pfn, npages);
	}
#endif
#ifdef IK_ENV_CPU_PIN
	if (IK_LIKELY(d->rc_mode == IK_IOVA_RCACHE_PINNED)) {
		struct ik_iova_mag *m = ik_iova_pinned_mag_(d, cls, IK_ENV_CPU_PIN());
		bool hit = m && m->n < IK_IOVA_MAG_SIZE;

		if (IK_LIKELY(hit))
			m->pfn[m->n++] = pfn;
		IK_ENV_CPU_UNPIN();
		if (!hit)
			return free_miss(d, pfn, npages);
		mark_cached(d);
		return 0;
	}
#endif
	if (IK_LIKELY(d->rc_mode == IK_IOVA_RCACHE_LOCK))
		return free_locked_hit(d, pfn, npages, cls);
	return free_miss(d, pfn, npages);
}
