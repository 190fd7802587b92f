/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Lock-free multi-producer command queue: reservation, publication, waits,
 * error recovery, batches and multi-queue sets.  The design and the ordering
 * edges (R1, R2, C1, C2, S1, E1, P1/P2) are described in <iommukit/cmdq.h>;
 * every acquire/release below names its edge.
 */
#include <iommukit/cmdq.h>
#include <iommukit/lock.h>
#include "cmdq_test.h"

/*
 * The tail record of a reservation [start, end), in the slot of its last
 * entry (end - 1): its first index and the issuer that waits for it (NULL
 * for none), written once per reservation, with its entries, before its
 * valid marker (R1).  The error handler finds the owner of an entry by
 * walking these records back from `published` (see tail_of()); a record is
 * read only while its reservation is published and not entirely consumed,
 * so no later lap has written that slot since.
 */
struct tail {
	struct ik_cmdq_owner *owner;
	ik_u32 start;
};

struct ik_cmdq {
	/* Read-mostly configuration. */
	const struct ik_cmdq_fmt *fmt;
	const struct ik_cmdq_regs *regs;
	void *regs_ctx;
	ik_u8 *ring;
	ik_u64 ring_dma;
	ik_u32 *status;		/* completion words outside the ring, or NULL */
	ik_u64 status_dma;
	ik_u32 size, mask, cap, regmask;
	unsigned log2, es, flags, max_retries;
	ik_u64 timeout_ns;
	ik_u64 spin_max_ns;	/* ik_cmdq_set_spin() */
	void (*on_error)(void *ctx, const struct ik_cmdq_error *e);
	void *err_ctx;
	const struct ik_allocator *alloc;
	ik_size memsize;
	/* Per slot: the valid marker of a reservation that starts there,
	 * start | end << 32 (see mark_of()), or a value whose low half is
	 * not an index of the slot (nothing to publish there). */
	ik_u64 *marker;
	/* Per slot: the tail record of a reservation whose last entry is
	 * there (see struct tail). */
	struct tail *tail;

	/* Hot producer words, each on its own line. */
	IK_ALIGNED(IK_CACHELINE) ik_u32 reserve;
	/* Fairness: 0, or the space (entries) a producer that found the ring
	 * too full has claimed; others leave that much free (see reserve()).
	 * On reserve's line: read with it, written only on the slow path. */
	ik_u32 claim;
	IK_ALIGNED(IK_CACHELINE) ik_u32 cons_cached;
	IK_ALIGNED(IK_CACHELINE) ik_u32 published;
	ik_lock_t pub_lock;
	ik_u64 doorbells;

	/* Status array only: every index below `completed` is known complete
	 * (completion words handed on before they were cleared). */
	IK_ALIGNED(IK_CACHELINE) ik_u32 completed;

	/* Error handling (rare). */
	IK_ALIGNED(IK_CACHELINE) ik_lock_t err_lock;
	bool err_active;
	ik_u32 err_index;
	unsigned err_attempts;
	ik_u64 errors, retried, replaced, timeouts;

	/* Waiting (see waiter_step()): the adaptive spin budget, in
	 * [min(SPIN_MIN_NS, spin_max_ns), spin_max_ns], written only when a
	 * wait changes it; and the yields waiters made (slow path). */
	IK_ALIGNED(IK_CACHELINE) ik_u64 spin_ns;
	ik_u64 yields;
};

#define WORDS(q) ((q)->es / 4)

/* ---------------------------------------------------------------- entries */

/*
 * Ring entries are read and written as 32-bit relaxed atomics: a waiter
 * polls a sync's slot (IK_CMDQ_CFG_MSI) while the next lap's producer may be
 * writing it, and the consumer writes completion words into slots.
 */
static inline void ent_store(ik_u8 *slot, const void *src, unsigned words)
{
	ik_u32 *d = (ik_u32 *)(void *)slot;

	for (unsigned i = 0; i < words; i++) {
		ik_u32 v;

		IK_ENV_MEMCPY(&v, (const char *)src + 4 * i, 4);
		ik_store_relaxed(&d[i], v);
	}
}

static inline void ent_load(void *dst, const ik_u8 *slot, unsigned words)
{
	ik_u32 *s = (ik_u32 *)(void *)(ik_uptr)slot;

	for (unsigned i = 0; i < words; i++) {
		ik_u32 v = ik_load_relaxed(&s[i]);

		IK_ENV_MEMCPY((char *)dst + 4 * i, &v, 4);
	}
}

static inline ik_u8 *slot_of(const struct ik_cmdq *q, ik_u32 i)
{
	return q->ring + (ik_size)(i & q->mask) * q->es;
}

/*
 * Valid markers.  A producer that has written a reservation [r, end) stores
 * one marker at slot r: r in the low half, end in the high half.  The
 * publisher, at `published` == r, finds it, jumps to end and replaces it by
 * mark_none(r), whose low half is not congruent to r modulo the ring size:
 * so a marker names an index of its slot only while the reservation that
 * wrote it is unpublished, and a slot inside a reservation (never marked)
 * can never be taken for one, however many laps ago it was last marked.
 */
static inline ik_u64 mark_of(ik_u32 r, ik_u32 end)
{
	return (ik_u64)r | (ik_u64)end << 32;
}

static inline ik_u64 mark_none(ik_u32 i)
{
	return (ik_u64)(i ^ 1u);
}

/* The completion word of the sync at index j: low byte 0 (not an SMMUv3
 * opcode, not a VT-d type), bit 8 set, the lap number above.  For
 * completion words in the ring (IK_CMDQ_CFG_MSI without a status array). */
static inline ik_u32 done_word(const struct ik_cmdq *q, ik_u32 j)
{
	return (((j >> q->log2) & 0xfffffu) << 12) | 0x100u;
}

/*
 * The completion word of the sync at index j in a status array: the index
 * with its slot bits replaced by 1, so never 0 ("not complete"), and the
 * word of slot s names the full index (tag & ~mask) | s.  Two words of one
 * slot compare as their indices do (32-bit serial arithmetic).
 */
static inline ik_u32 status_tag(const struct ik_cmdq *q, ik_u32 j)
{
	return (j & ~q->mask) | 1u;
}

/* Raise `completed` to c (it only grows).  Release: hands on the
 * completion write (S1) that proved it. */
static void completed_raise(struct ik_cmdq *q, ik_u32 c)
{
	ik_u32 old = ik_load_relaxed(&q->completed);

	while ((ik_s32)(c - old) > 0) {
		if (ik_atomic_cas_weak(&q->completed, &old, c, IK_MO_RELEASE, IK_MO_RELAXED))
			break;
	}
}

/*
 * With a status array: has the sync at index j completed?  Its word holds
 * 0 (cleared), the tag of an earlier sync in the slot (a late write), its
 * own tag, or the tag of a later lap's sync there - which completed after
 * ours (the consumer completes in order), so that proves ours too.  A word
 * is cleared only by a filler of a later lap or by a waiter that saw it,
 * and both first hand it on to `completed`; so a completion is never lost,
 * however long the waiter did not look (lost-completion fix, issue 28).
 */
static bool status_done(struct ik_cmdq *q, ik_u32 j)
{
	ik_u32 *word = &q->status[j & q->mask];
	/* S1 acquire, pairs with the consumer's completion write. */
	ik_u32 w = ik_load_acquire(word);

	if (w && (ik_s32)((w & ~q->mask) - (j & ~q->mask)) >= 0) {
		/* Clear what we saw (an old word must not outlive its waiter:
		 * see fill()), after handing it on.  A CAS: a later lap's
		 * filler may have taken it already, or its sync completed. */
		completed_raise(q, ((w & ~q->mask) | (j & q->mask)) + 1);
		ik_atomic_cas(word, &w, 0u, IK_MO_RELAXED, IK_MO_RELAXED);
		return true;
	}
	/* Acquire, pairs with completed_raise()'s release. */
	return (ik_s32)(ik_load_acquire(&q->completed) - j) > 0;
}

/* ---------------------------------------------------------------- waiting */

struct waiter {
	struct ik_cmdq *q;
	ik_u64 deadline;
	ik_u64 timeout;
	ik_u64 spin_start;	/* clock when the timed spin began, or 0 */
	ik_u64 budget;		/* q->spin_ns when the wait began */
	unsigned step;
	bool yielded;
	ik_u32 seen; /* the consumer index when the deadline was set */
};

#define SPIN_STEPS 4	/* 1, 2, 4, 8 pauses without the clock */
#define SPIN_CHUNK 8	/* steps (one pause each) per clock read after that */
#define SPIN_MIN_NS 2000ull /* the adaptive budget's floor */

#ifdef IK_ENV_WAIT_SPIN_NS
#define SPIN_DEFAULT_NS ((ik_u64)(IK_ENV_WAIT_SPIN_NS))
#else
#define SPIN_DEFAULT_NS 50000ull
#endif

static void waiter_init(struct waiter *w, struct ik_cmdq *q)
{
	w->q = q;
	w->deadline = 0;
	w->timeout = ik_load_relaxed(&q->timeout_ns); /* ik_cmdq_set_timeout() */
	w->spin_start = 0;
	w->budget = ik_load_relaxed(&q->spin_ns);
	w->step = 0;
	w->yielded = false;
	w->seen = 0;
}

/*
 * One back-off step: spin, then yield; -ETIMEDOUT once the consumer index
 * `c` (just read by the caller) has not moved for the timeout.  The
 * deadline restarts whenever c differs from the last step's: a timeout
 * means "the consumer made no progress", never "slow" or "others went
 * first".
 *
 * Spinning is bounded: SPIN_STEPS steps of 1 .. 8 pauses (no clock), then
 * steps of one pause, the clock read at every SPIN_CHUNK-th, until the wait
 * has spun for the queue's budget (q->spin_ns), then IK_ENV_YIELD() each
 * step (each reading the clock).  A yield can hand away a
 * whole time slice (sched_yield() on a busy CPU), far longer than a sync
 * takes on a consumer that runs elsewhere, so a waiter yields only once the
 * wait has proved long.  The budget adapts (waiter_done()): a wait that had
 * to yield halves it (the consumer, or a producer preempted inside its
 * insertion, may need this CPU: spinning only delays them), a wait that
 * ended while spinning past the untimed steps doubles it, within
 * [SPIN_MIN_NS, ik_cmdq_set_spin()].  One pause per step: the caller looks
 * again after each, so a completion is seen within about one pause, as a
 * plain cpu_relax() loop sees it (a pause and a clock read cost about the
 * same, so eight pauses a step made the average wait about four pauses and
 * a clock read longer than needed); the lines polled are read-shared until
 * the consumer writes them.
 */
static int waiter_step(struct waiter *w, ik_u32 c)
{
	ik_u64 now;

	if (w->step < SPIN_STEPS) {
		for (unsigned k = 0; k < (1u << w->step); k++)
			ik_cpu_relax();
		w->step++;
		return 0;
	}
	if (!w->yielded && (w->step++ - SPIN_STEPS) % SPIN_CHUNK) {
		ik_cpu_relax();
		return 0;
	}
	now = IK_ENV_TIME_NS();
	if (!w->deadline || c != w->seen) {
		w->deadline = now + w->timeout;
		w->seen = c;
	} else if (now > w->deadline) {
		return -ETIMEDOUT;
	}
	if (!w->spin_start)
		w->spin_start = now;
	if (!w->yielded && now - w->spin_start < w->budget) {
		ik_cpu_relax();
		return 0;
	}
	w->yielded = true;
	ik_atomic_fetch_add(&w->q->yields, 1, IK_MO_RELAXED);
	IK_ENV_YIELD();
	return 0;
}

/* A wait ended (successfully): adapt the queue's spin budget to what this
 * wait needed (see waiter_step()).  Writes q->spin_ns only on a change. */
static void waiter_done(struct waiter *w)
{
	struct ik_cmdq *q = w->q;
	ik_u64 max = ik_load_relaxed(&q->spin_max_ns), min = IK_MIN(SPIN_MIN_NS, max), b;

	if (w->yielded)
		b = IK_MAX(w->budget / 2, min);
	else if (w->spin_start)
		b = IK_MIN(w->budget * 2, max);
	else
		return;
	if (b != w->budget)
		ik_store_relaxed(&q->spin_ns, b);
}

/* ---------------------------------------------------------------- consumer index */

/* Raise cons_cached to c (it only grows). */
static void cons_update(struct ik_cmdq *q, ik_u32 c)
{
	ik_u32 old = ik_load_relaxed(&q->cons_cached);

	while ((ik_s32)(c - old) > 0) {
		/* C2 release: hands C1 (the consumer finished with these slots)
		 * on to producers that load cons_cached with acquire. */
		if (ik_atomic_cas_weak(&q->cons_cached, &old, c, IK_MO_RELEASE, IK_MO_RELAXED))
			break;
	}
}

/*
 * CONS register -> full index.  The register holds the index modulo
 * M = regmask + 1; the full index lies in [lo, hi] for any lo read before
 * the register and any hi read after it: cons_cached only ever holds earlier
 * values of CONS (lo <= CONS), and the consumer never passes `published`
 * (CONS <= hi).  When hi - lo < M that interval names one index.
 *
 * A thread preempted between the reads sees a wider interval: the consumer
 * and the producers may have run laps meanwhile.  Then the register says
 * nothing certain and we return lo, a lower bound, which is always safe (a
 * producer waits a little longer); every caller reads again.  Extending from
 * `published` alone would be wrong there: it can name an index one lap
 * ahead of the consumer, and producers would overwrite unconsumed entries.
 */
static ik_u32 cons_extend(const struct ik_cmdq *q, ik_u32 lo, ik_u32 reg)
{
	/* Read after the register (the hook has acquire semantics, C1). */
	ik_u32 hi = ik_load_relaxed(&q->published);

	if (hi - lo > q->regmask)
		return lo;
	return lo + ((reg - lo) & q->regmask);
}

/* The same while the consumer is stopped at an unacknowledged error (only
 * the error-lock holder acknowledges): CONS cannot move, and published -
 * CONS <= capacity < M, so the distance back from `published` is exact. */
static ik_u32 cons_extend_stopped(const struct ik_cmdq *q, ik_u32 reg)
{
	ik_u32 p = ik_load_relaxed(&q->published);

	return p - ((p - reg) & q->regmask);
}

/* Read the CONS register: the full index (or a lower bound, see
 * cons_extend()) and the error state. */
static ik_u32 cons_read(struct ik_cmdq *q, ik_u32 *cerror)
{
	/* C2 acquire: the lower bound, read before the register. */
	ik_u32 lo = ik_load_acquire(&q->cons_cached);
	/* C1 acquire, in the hook. */
	ik_u32 reg = q->regs->read_cons(q->regs_ctx, cerror);

	return cons_extend(q, lo, reg);
}

static int handle_error(struct ik_cmdq *q);

/* Read CONS ourselves (never rely on another producer), handle an error the
 * consumer reports, return the newest consumer index. */
static ik_u32 cons_refresh(struct ik_cmdq *q)
{
	ik_u32 cerror = 0;
	ik_u32 c = cons_read(q, &cerror);

	cons_update(q, c);
	if (IK_UNLIKELY(cerror))
		handle_error(q);
	return c;
}

/* ---------------------------------------------------------------- errors */

/*
 * The tail record of the reservation that holds index i, the consumer being
 * stopped at i (error lock held), or NULL.  Reservations tile the indices
 * and `published` is the end of one, so the walk starts at the record in
 * the slot before `published`, and each record's start is the end of the
 * reservation before it: one step per reservation in [i, published), at
 * most the capacity.  Every record read is in a slot of index >= i, so
 * its reservation is published (its record written before its marker, R1,
 * which the publisher acquired, A1, before its release of `published`,
 * which we acquire) and not entirely consumed: no producer of a later lap
 * may reserve that slot before the consumer passes i (reserve()), so the
 * record is the one that reservation wrote, whatever the laps and the
 * 2^32 wrap of indices; indices are only compared by their distance.
 *
 * `lo` is a consumer index read before the register that gave i.  A
 * consumer that reports an index outside [lo, published) - one it has
 * already passed, or one nothing was published at - names no reservation
 * that can be trusted to be live: NULL, nothing is attributed.  A record
 * that does not step back by 1 to the capacity (which a live one always
 * does) also ends the walk with NULL.
 */
static struct tail *tail_of(struct ik_cmdq *q, ik_u32 i, ik_u32 lo)
{
	/* Acquire, pairs with publish()'s release of `published` (R2). */
	ik_u32 b = ik_load_acquire(&q->published);

	if ((ik_s32)(i - lo) < 0 || b - i - 1 >= q->cap)
		return NULL;
	for (;;) {
		struct tail *t = &q->tail[(b - 1) & q->mask];
		ik_u32 s = ik_load_relaxed(&t->start);

		if (b - s - 1 >= q->cap)
			return NULL; /* not a live record */
		if ((ik_s32)(i - s) >= 0)
			return t; /* s <= i < b */
		b = s;
	}
}

static int handle_error(struct ik_cmdq *q)
{
	ik_u64 orig[4], noop[4];
	struct ik_cmdq_error e;
	ik_u32 cerror = 0, reg, i, lo;
	struct ik_cmdq_owner *o;
	struct tail *t;
	ik_irqflags irq;
	bool replace;

	/* Interrupts off while the lock is held: a handler on this CPU that
	 * waits on the queue would find it taken and the error unhandled
	 * ("Interrupts" in cmdq.h). */
	IK_ENV_IRQ_SAVE(irq);
	if (!ik_trylock(&q->err_lock)) {
		IK_ENV_IRQ_RESTORE(irq);
		return 0; /* another thread is on it */
	}
	/* C2 acquire: a consumer index the register cannot be below. */
	lo = ik_load_acquire(&q->cons_cached);
	/* Re-read under the lock: only the lock holder acknowledges, so the
	 * error and the index read now belong together. */
	reg = q->regs->read_cons(q->regs_ctx, &cerror);
	if (!cerror) {
		ik_unlock(&q->err_lock);
		IK_ENV_IRQ_RESTORE(irq);
		return 0;
	}
	i = cons_extend_stopped(q, reg);
	cons_update(q, i);
	if (q->err_active && q->err_index == i) {
		q->err_attempts++;
	} else {
		q->err_active = true;
		q->err_index = i;
		q->err_attempts = 1;
	}
	switch (cerror) {
	case IK_CMDQ_CERROR_ABT:
	case IK_CMDQ_CERROR_ATC_INV_SYNC:
		replace = q->err_attempts > q->max_retries;
		break;
	case IK_CMDQ_CERROR_ILL:
	default:
		replace = true;
		break;
	}
	ent_load(orig, slot_of(q, i), WORDS(q));
	if (replace) {
		q->fmt->encode_nop(noop);
		ent_store(slot_of(q, i), noop, WORDS(q));
		q->err_active = false;
		ik_store_relaxed(&q->replaced, q->replaced + 1);
		/* The entry is published and not consumed, so the tail record
		 * of its reservation names its issuer; an issuer that gave up
		 * cleared it under this lock (disown()), so the pointer is
		 * live. */
		t = tail_of(q, i, lo);
		o = t ? ik_load_relaxed(&t->owner) : NULL;
		if (o) {
			int zero = 0;

			ik_atomic_cas(&o->status, &zero, -EIO, IK_MO_RELAXED, IK_MO_RELAXED);
		}
		if (q->status) {
			/* The entry may have been its issuer's sync, whose waiter
			 * polls only the completion word: write it (S1 release,
			 * after the status above), so that the waiter wakes and
			 * returns -EIO.  The reservation's entries still to run
			 * belong to no one then: that waiter may return before
			 * they are consumed (its status already holds an error,
			 * so nothing it would hear is lost). */
			if (t)
				ik_store_relaxed(&t->owner, (struct ik_cmdq_owner *)NULL);
			ik_store_release(&q->status[i & q->mask], status_tag(q, i));
		}
	} else {
		ik_store_relaxed(&q->retried, q->retried + 1);
	}
	ik_store_relaxed(&q->errors, q->errors + 1);
	if (q->on_error) {
		e.index = i;
		e.cerror = cerror;
		e.attempt = q->err_attempts;
		e.result = replace ? -EIO : 0;
		e.entry = orig;
		q->on_error(q->err_ctx, &e);
	}
	/* E1 release, in the hook: the repaired entry and the owner's status
	 * are written before the consumer resumes. */
	ik_dma_wmb();
	q->regs->ack_error(q->regs_ctx);
	ik_unlock(&q->err_lock);
	IK_ENV_IRQ_RESTORE(irq);
	return 1;
}

IK_API int ik_cmdq_poll_errors(struct ik_cmdq *q)
{
	ik_u32 cerror = 0;

	IK_ASSERT(q);
	(void)q->regs->read_cons(q->regs_ctx, &cerror);
	return cerror ? handle_error(q) : 0;
}

/* An issuer that stops waiting (timeout) clears its owner pointer from the
 * tail records of its reservations not yet consumed (each has its record in
 * a slot of [first, reserve)), under the error lock, so the handler never
 * writes to its (dead) stack. */
static void disown(struct ik_cmdq *q, struct ik_cmdq_owner *o)
{
	ik_u32 c, r, i, cerror;
	ik_irqflags irq;

	if (!o->started)
		return;
	IK_ENV_IRQ_SAVE(irq); /* as in handle_error() */
	ik_lock(&q->err_lock);
	c = cons_read(q, &cerror); /* a lower bound is enough here */
	r = ik_load_relaxed(&q->reserve);
	i = (ik_s32)(o->first - c) > 0 ? o->first : c;
	/* A CONS past the reservations (a hostile or broken consumer
	 * register) cannot be trusted: walking from it to r would go the
	 * long way round (2^32 steps).  Clear from our first entry instead,
	 * at most one lap of slots (the CAS leaves others' owners alone). */
	if ((ik_s32)(r - i) < 0)
		i = (ik_s32)(r - o->first) > (ik_s32)q->size ? r - q->size : o->first;
	for (; i != r; i++) {
		struct ik_cmdq_owner *mine = o;

		/* A CAS, not a store: the slot may already carry the next lap's
		 * owner if the consumer passed it since we read CONS. */
		ik_atomic_cas(&q->tail[i & q->mask].owner, &mine, (struct ik_cmdq_owner *)NULL,
			      IK_MO_RELAXED, IK_MO_RELAXED);
	}
	ik_unlock(&q->err_lock);
	IK_ENV_IRQ_RESTORE(irq);
}

/* ---------------------------------------------------------------- publication */

static void publish(struct ik_cmdq *q, struct ik_cmdq_counters *cnt)
{
	for (;;) {
		ik_u32 p0, p;

		/* P1: the caller stored its markers and fenced before this. */
		if (!ik_trylock(&q->pub_lock))
			return; /* the holder re-scans after unlocking (P2) */
		p0 = ik_load_relaxed(&q->published);
		p = p0;
		/* A1 acquire, pairs with R1: every entry of the reservation
		 * that starts at p, and its tail record, are complete.  Only
		 * unpublished reservations are marked, so this stops within
		 * the capacity, one step per reservation.  The marker is
		 * retired before the release below (R2), so it happens before
		 * the next lap's producer marks this slot again. */
		for (;;) {
			ik_u64 m = ik_load_acquire(&q->marker[p & q->mask]);

			if ((ik_u32)m != p)
				break;
			ik_store_relaxed(&q->marker[p & q->mask], mark_none(p));
			p = (ik_u32)(m >> 32);
		}
		if (p != p0) {
			/* R2: `published` then PROD; the hook releases (and a
			 * device driver's hook orders MMIO after ik_dma_wmb()). */
			ik_store_release(&q->published, p);
			ik_dma_wmb();
			q->regs->write_prod(q->regs_ctx, p & q->regmask);
			if (q->regs->doorbell)
				q->regs->doorbell(q->regs_ctx);
			ik_store_relaxed(&q->doorbells, q->doorbells + 1);
			if (cnt)
				cnt->publishes++;
		}
		ik_unlock(&q->pub_lock);
		/* P2: unlock; fence; re-check the frontier.  Pairs with P1: a
		 * producer that failed the try-lock stored its marker before
		 * its fence, so we see it here. */
		ik_smp_mb();
		p = ik_load_relaxed(&q->published);
		if ((ik_u32)ik_load_relaxed(&q->marker[p & q->mask]) != p)
			return;
	}
}

/* publish() from outside an insertion (a waiter's): interrupts off while
 * it may hold the publish lock, which a handler on this CPU could
 * otherwise find held by the thread it interrupted, its own entries then
 * unpublished until that thread runs again. */
static void publish_irqsafe(struct ik_cmdq *q, struct ik_cmdq_counters *cnt)
{
	ik_irqflags irq;

	IK_ENV_IRQ_SAVE(irq);
	publish(q, cnt);
	IK_ENV_IRQ_RESTORE(irq);
}

/* ---------------------------------------------------------------- issue */

/*
 * Reserve n (<= cap) contiguous entries.  Fairness: a producer that keeps
 * finding too little space posts a claim for its n (if none is posted); while a
 * claim is posted, the others reserve only what leaves the claimed space
 * free, so the claimant is served as soon as the consumer has freed it,
 * however many small requests compete (issue 28: a request that needs a
 * nearly empty ring was overtaken forever).  The claimant clears its claim
 * when it reserves or gives up.  The fast path reads `claim` from the line
 * it CASes anyway.
 *
 * Interrupts: called with them saved in *irq (IK_ENV_IRQ_SAVE), and returns
 * so, on success and on error.  The slow path, which holds no reservation,
 * runs with them restored: it reads CONS and waits (waiter_step() yields).
 */
static int reserve(struct ik_cmdq *q, ik_u32 n, ik_u32 *out, struct waiter *w,
		   struct ik_cmdq_counters *cnt, ik_irqflags *irq)
{
	ik_u32 r = ik_load_relaxed(&q->reserve);
	unsigned short_of_space = 0;
	bool mine = false;
	int err = 0;

	for (;;) {
		/* C2 acquire, pairs with cons_update()'s release: the consumer
		 * is done with the slots we are about to overwrite. */
		ik_u32 c = ik_load_acquire(&q->cons_cached);
		ik_u32 need = n + (mine ? 0 : ik_load_relaxed(&q->claim));

		if (r - c <= q->cap && r - c + need <= q->cap) {
			/* Relaxed: the slot ordering comes from C2 above. */
			if (ik_atomic_cas_weak(&q->reserve, &r, r + n, IK_MO_RELAXED,
					       IK_MO_RELAXED)) {
				*out = r;
				break;
			}
			if (cnt)
				cnt->cas_retries++;
			continue;
		}
		/* Full (or a stale r): read CONS ourselves, interrupts on. */
		IK_ENV_IRQ_RESTORE(*irq);
		c = cons_refresh(q);
		r = ik_load_relaxed(&q->reserve);
		/* Claim only once a wait persists: a ring that is full for a
		 * moment (a producer outrunning the consumer) needs no claim,
		 * and the hot path takes no extra atomic write. */
		if (!mine && ++short_of_space > 2) {
			ik_u32 none = 0;

			mine = ik_atomic_cas(&q->claim, &none, n, IK_MO_RELAXED, IK_MO_RELAXED);
		}
		need = n + (mine ? 0 : ik_load_relaxed(&q->claim));
		if (r - c <= q->cap && r - c + need <= q->cap) {
			IK_ENV_IRQ_SAVE(*irq);
			continue;
		}
		publish_irqsafe(q, cnt);
		if (cnt)
			cnt->full_waits++;
		err = waiter_step(w, c);
		IK_ENV_IRQ_SAVE(*irq);
		if (err)
			break;
	}
	if (mine)
		ik_store_relaxed(&q->claim, 0u);
	return err;
}

/*
 * Copy `cnt` entries of `words` (4 or 8) 32-bit words from src into the
 * consecutive slots from d on (no wrap inside).
 * A 16-byte half of an entry is two relaxed 64-bit stores: the ring is
 * aligned to the entry size, and every other access to it is a 32-bit
 * relaxed atomic (ent_store(), ent_load(), a completion word) on the same
 * bytes, so no thread ever sees a torn word.  The source is read with
 * 8-byte copies (the API asks only for 4-byte alignment, and no type).
 */
static inline void half_store(ik_u64 *w, const char *src)
{
	ik_u64 v0, v1;

	IK_ENV_MEMCPY(&v0, src, 8);
	IK_ENV_MEMCPY(&v1, src + 8, 8);
	ik_store_relaxed(&w[0], v0);
	ik_store_relaxed(&w[1], v1);
}

static inline void ents_store(ik_u32 *d, const char *src, ik_u32 cnt, unsigned words)
{
	ik_u64 *w = (ik_u64 *)(void *)d;

	if (words == 4) {
		for (ik_u32 e = 0; e < cnt; e++, w += 2, src += 16)
			half_store(w, src);
	} else {
		for (ik_u32 e = 0; e < cnt; e++, w += 4, src += 32) {
			half_store(w, src);
			half_store(w + 2, src + 16);
		}
	}
}

/*
 * Write n entries (and a sync when `sync`) at reserved index r, then mark
 * the reservation valid.  The commands go in at most two contiguous runs
 * of slots (the ring wraps at most once); one tail record (start and owner,
 * in the last entry's slot) and one marker (in the first's) for the whole
 * reservation, the marker stored last (R1).
 */
static void fill(struct ik_cmdq *q, ik_u32 r, const void *cmds, ik_u32 n, bool sync,
		 struct ik_cmdq_owner *o)
{
	const char *src = (const char *)cmds;
	unsigned words = WORDS(q);
	ik_u32 k = 0;

	while (k < n) {
		ik_u32 sl = (r + k) & q->mask, cnt = IK_MIN(n - k, q->size - sl);

		ents_store((ik_u32 *)(void *)(q->ring + (ik_size)sl * q->es), src, cnt, words);
		src += (ik_size)cnt * q->es;
		k += cnt;
	}
	if (sync) {
		ik_u32 j = r + n;
		ik_u64 addr = 0, s[4];

		if (q->status) {
			ik_u32 sl = j & q->mask, old;

			addr = q->status_dma + 4 * (ik_u64)sl;
			/* A word left from an earlier lap must not look done, so
			 * clear it (ordered before publication by R1 below); but
			 * it may be the only proof that an earlier sync here
			 * completed, whose waiter has not looked yet: hand it on
			 * to `completed` first.  An exchange, so that a
			 * completion write landing meanwhile is not lost; acquire
			 * (S1) for the hand-on's release.  Waiters clear the words
			 * they see, so a word left here belongs to a recent sync
			 * or to one whose waiter gave up. */
			old = ik_atomic_xchg(&q->status[sl], 0u, IK_MO_ACQ_REL);
			if (old && (ik_s32)(j - ((old & ~q->mask) | sl)) > 0)
				completed_raise(q, ((old & ~q->mask) | sl) + 1);
		} else if (q->flags & IK_CMDQ_CFG_MSI) {
			addr = q->ring_dma + (ik_u64)(j & q->mask) * q->es;
		}
		q->fmt->encode_sync(s, addr, q->status ? status_tag(q, j) : done_word(q, j));
		ent_store(slot_of(q, j), s, words);
	}
	if (n || sync) {
		struct tail *t = &q->tail[(r + n + sync - 1) & q->mask];

		ik_store_relaxed(&t->owner, o);
		ik_store_relaxed(&t->start, r);
		/* R1 release, pairs with A1 in publish(): the entries and
		 * the tail record above are complete. */
		ik_store_release(&q->marker[r & q->mask], mark_of(r, r + n + sync));
	}
}

/* Queue n commands (+ sync) without waiting for the sync.  *sync_idx gets
 * the sync's index. */
static int enqueue(struct ik_cmdq *q, const void *cmds, ik_u32 n, bool sync,
		   struct ik_cmdq_owner *o, struct waiter *w, struct ik_cmdq_counters *cnt,
		   ik_u32 *sync_idx)
{
	const char *p = (const char *)cmds;
	/* A request that does not fit the ring (commands + sync) goes in
	 * chunks of at most half the ring, the sync in the last: a chunk then
	 * never needs an empty ring, and with the claim in reserve() it gets
	 * its turn among small requests (issue 28). */
	ik_u32 lim = n + sync > q->cap ? IK_MAX(q->cap / 2, 1u) : q->cap;

	while (n || sync) {
		ik_u32 units = n + sync, chunk = IK_MIN(units, lim), r;
		bool with_sync = sync && chunk == units;
		ik_u32 take = chunk - with_sync;
		ik_irqflags irq;
		int err;

		/* Interrupts off from the reservation through its publication,
		 * one chunk at a time: a handler on this CPU never finds this
		 * CPU's entries reserved but unpublished ("Interrupts" in
		 * cmdq.h).  reserve() turns them on while it waits. */
		IK_ENV_IRQ_SAVE(irq);
		err = reserve(q, chunk, &r, w, cnt, &irq);
		if (err) {
			IK_ENV_IRQ_RESTORE(irq);
			return err;
		}
		if (o && !o->started) {
			o->started = true;
			o->first = r;
		}
		fill(q, r, p, take, with_sync, o);
		/* P1: markers stored; fence; then try to publish. */
		ik_smp_mb();
		publish(q, cnt);
		IK_ENV_IRQ_RESTORE(irq);
		if (with_sync) {
			*sync_idx = r + take;
			sync = false;
		}
		if (take) /* cmds may be NULL for a sync alone */
			p += (ik_size)take * q->es;
		n -= take;
	}
	return 0;
}

/* Whether the sync at index j is known complete, c being a consumer index
 * (or lower bound) just read. */
static bool sync_done(struct ik_cmdq *q, ik_u32 j, ik_u32 c)
{
	/* With a status array only the words prove completion. */
	if (q->status)
		return status_done(q, j);
	/* S1 acquire, pairs with the consumer's completion write. */
	if ((q->flags & IK_CMDQ_CFG_MSI) &&
	    ik_load_acquire((ik_u32 *)(void *)slot_of(q, j)) == done_word(q, j))
		return true;
	return (ik_s32)(c - j) > 0;
}

/* Wait until the sync at index j has completed.  The waiter checks once
 * more before it reports a timeout: a sync that completed is never
 * reported as timed out, however long this thread was descheduled. */
static int wait_index(struct ik_cmdq *q, ik_u32 j, struct waiter *w,
		      struct ik_cmdq_counters *cnt)
{
	bool msi = q->flags & IK_CMDQ_CFG_MSI;
	unsigned iter = 0;

	for (;; iter++) {
		ik_u32 c;

		/* With MSI the sync's own word proves completion: read the
		 * CONS register (for errors, and the progress that restarts
		 * the timeout) only every 64th look while spinning - it shares
		 * a line with what the consumer writes per entry - and at
		 * every look once the wait yields. */
		if (msi && (iter & 63) != 63 && !w->yielded)
			c = ik_load_acquire(&q->cons_cached); /* C2 */
		else
			c = cons_refresh(q);
		if (sync_done(q, j, c))
			return 0;
		if ((ik_s32)(ik_load_relaxed(&q->published) - j) <= 0)
			publish_irqsafe(q, cnt);
		if (cnt)
			cnt->sync_waits++;
		if (waiter_step(w, c))
			return sync_done(q, j, cons_refresh(q)) ? 0 : -ETIMEDOUT;
	}
}

/* The two halves of ik_cmdq_issue(), for tests (cmdq_test.h). */
int ik_cmdq_test_reserve(struct ik_cmdq *q, unsigned n, ik_u32 *first)
{
	ik_irqflags irq;
	struct waiter w;
	int err;

	if (!q || !first || n == 0 || n > q->cap)
		return -EINVAL;
	waiter_init(&w, q);
	IK_ENV_IRQ_SAVE(irq);
	err = reserve(q, n, first, &w, NULL, &irq);
	IK_ENV_IRQ_RESTORE(irq);
	return err;
}

void ik_cmdq_test_commit(struct ik_cmdq *q, ik_u32 first, const void *cmds, unsigned n)
{
	fill(q, first, cmds, n, false, NULL);
	ik_smp_mb(); /* P1 */
	publish(q, NULL);
}

static void count_timeout(struct ik_cmdq *q)
{
	ik_atomic_fetch_add(&q->timeouts, 1, IK_MO_RELAXED);
}

IK_API int ik_cmdq_issue_ex(struct ik_cmdq *q, const void *cmds, unsigned n, unsigned flags,
			    struct ik_cmdq_counters *cnt)
{
	struct ik_cmdq_owner own = { 0, false, 0 };
	bool sync = flags & IK_CMDQ_SYNC;
	struct waiter w;
	ik_u32 j = 0;
	int err;

	if (!q || (n && !cmds) || (flags & ~IK_CMDQ_SYNC))
		return -EINVAL;
	if (!n && !sync)
		return 0;
	waiter_init(&w, q);
	err = enqueue(q, cmds, n, sync, sync ? &own : NULL, &w, cnt, &j);
	if (!err && sync)
		err = wait_index(q, j, &w, cnt);
	if (err) {
		if (sync)
			disown(q, &own);
		count_timeout(q);
		return err;
	}
	waiter_done(&w);
	/* The handler wrote own.status before acknowledging (E1), which came
	 * before the consumer passed j (C1/S1), which we acquired. */
	return sync ? ik_atomic_load(&own.status, IK_MO_RELAXED) : 0;
}

IK_API int ik_cmdq_issue(struct ik_cmdq *q, const void *cmds, unsigned n, unsigned flags)
{
	return ik_cmdq_issue_ex(q, cmds, n, flags, NULL);
}

IK_API int ik_cmdq_sync(struct ik_cmdq *q)
{
	return ik_cmdq_issue_ex(q, NULL, 0, IK_CMDQ_SYNC, NULL);
}

/* ---------------------------------------------------------------- setup */

static bool config_ok(const struct ik_cmdq_config *cfg)
{
	return cfg && cfg->fmt && (cfg->fmt->entry_size == 16 || cfg->fmt->entry_size == 32) &&
	       cfg->fmt->encode_nop && cfg->fmt->encode_sync && cfg->fmt->classify &&
	       cfg->log2_entries >= IK_CMDQ_LOG2_MIN &&
	       cfg->log2_entries <= IK_CMDQ_LOG2_MAX && cfg->regs && cfg->regs->read_cons &&
	       cfg->regs->write_prod && cfg->regs->ack_error &&
	       !(cfg->flags & ~(IK_CMDQ_CFG_NO_WRAP | IK_CMDQ_CFG_MSI)) &&
	       (!cfg->ring || IK_IS_ALIGNED((ik_uptr)cfg->ring, cfg->fmt->entry_size));
}

static ik_size hdr_size(void)
{
	return IK_ALIGN_UP((ik_size)sizeof(struct ik_cmdq), (ik_size)IK_CACHELINE);
}

IK_API ik_size ik_cmdq_memsize(const struct ik_cmdq_config *cfg)
{
	ik_size n, sz;

	if (!config_ok(cfg))
		return 0;
	n = (ik_size)1 << cfg->log2_entries;
	sz = hdr_size() + IK_ALIGN_UP(n * sizeof(ik_u64), (ik_size)IK_CACHELINE) +
	     IK_ALIGN_UP(n * sizeof(struct tail), (ik_size)IK_CACHELINE);
	if (!cfg->ring)
		sz += n * cfg->fmt->entry_size;
	return sz;
}

/* Whether a sync whose completion word is at device address `addr` encodes
 * and reads back with that address (SMMUv3's MSI address holds 52 bits). */
static bool msi_addr_ok(const struct ik_cmdq_fmt *fmt, ik_u64 addr)
{
	ik_u64 ent[4] = { 0, 0, 0, 0 };
	struct ik_cmdq_sync_info si = { false, 0, 0, false, 0 };

	fmt->encode_sync(ent, addr, 0x600dd00eu);
	return fmt->classify(ent, &si) == IK_CMDQ_KIND_SYNC && si.write && si.addr == addr &&
	       si.data == 0x600dd00eu;
}

IK_API int ik_cmdq_init(void *mem, ik_size size, const struct ik_cmdq_config *cfg,
			struct ik_cmdq **out)
{
	ik_size need = ik_cmdq_memsize(cfg), n;
	struct ik_cmdq *q = (struct ik_cmdq *)mem;
	ik_u8 *p = (ik_u8 *)mem, *ring;
	ik_u32 cerror = 0, base;
	ik_u64 ring_dma, bytes, status_dma;

	if (!need || !mem || !out || size < need ||
	    !IK_IS_ALIGNED((ik_uptr)mem, (ik_uptr)IK_CACHELINE))
		return -EINVAL;
	n = (ik_size)1 << cfg->log2_entries;
	ring = cfg->ring ? (ik_u8 *)cfg->ring :
			   p + hdr_size() + IK_ALIGN_UP(n * sizeof(ik_u64), (ik_size)IK_CACHELINE) +
				   IK_ALIGN_UP(n * sizeof(struct tail), (ik_size)IK_CACHELINE);
	ring_dma = cfg->ring_dma ? cfg->ring_dma : (ik_u64)(ik_uptr)ring;
	bytes = (ik_u64)n * cfg->fmt->entry_size;
	status_dma = cfg->status_dma ? cfg->status_dma : (ik_u64)(ik_uptr)cfg->status;
	if (cfg->status) {
		/* Completion words outside the ring: the same checks on the
		 * array, whose first and last words the syncs name. */
		if (!(cfg->flags & IK_CMDQ_CFG_MSI) || !IK_IS_ALIGNED((ik_uptr)cfg->status, 4) ||
		    4 * (ik_u64)n - 1 > IK_U64_MAX - status_dma || !msi_addr_ok(cfg->fmt, status_dma) ||
		    !msi_addr_ok(cfg->fmt, status_dma + 4 * (ik_u64)n - 4))
			return -EINVAL;
	} else if ((cfg->flags & IK_CMDQ_CFG_MSI) &&
		   (bytes - 1 > IK_U64_MAX - ring_dma || !msi_addr_ok(cfg->fmt, ring_dma) ||
		    !msi_addr_ok(cfg->fmt, ring_dma + bytes - cfg->fmt->entry_size))) {
		/* With MSI every sync names its own slot as the completion
		 * address: the ring must not wrap 2^64, and the format must be
		 * able to carry the first and the last slot's address (else
		 * syncs never complete). */
		return -EINVAL;
	}
	IK_ENV_MEMSET(mem, 0, need);
	q->fmt = cfg->fmt;
	q->regs = cfg->regs;
	q->regs_ctx = cfg->regs_ctx;
	q->log2 = cfg->log2_entries;
	q->size = (ik_u32)n;
	q->mask = q->size - 1;
	q->es = cfg->fmt->entry_size;
	q->flags = cfg->flags;
	if (cfg->flags & IK_CMDQ_CFG_NO_WRAP) {
		q->regmask = q->mask;
		q->cap = q->size - 1;
	} else {
		q->regmask = 2 * q->size - 1;
		q->cap = q->size;
	}
	q->timeout_ns = cfg->timeout_ns ? cfg->timeout_ns : IK_CMDQ_DEFAULT_TIMEOUT_NS;
	q->spin_max_ns = q->spin_ns = SPIN_DEFAULT_NS;
	q->max_retries = cfg->max_retries ? cfg->max_retries : IK_CMDQ_DEFAULT_RETRIES;
	q->on_error = cfg->on_error;
	q->err_ctx = cfg->err_ctx;
	q->alloc = cfg->alloc;
	q->memsize = need;
	p += hdr_size();
	q->marker = (ik_u64 *)(void *)p;
	p += IK_ALIGN_UP(n * sizeof(ik_u64), (ik_size)IK_CACHELINE);
	q->tail = (struct tail *)(void *)p;
	p += IK_ALIGN_UP(n * sizeof(struct tail), (ik_size)IK_CACHELINE);
	q->ring = ring;
	q->ring_dma = ring_dma;
	q->status = cfg->status;
	q->status_dma = cfg->status ? status_dma : 0;
	ik_lock_init(&q->pub_lock);
	ik_lock_init(&q->err_lock);

	/* Start where the consumer is (PROD == CONS). */
	base = q->regs->read_cons(q->regs_ctx, &cerror) & q->regmask;
	q->reserve = q->published = q->cons_cached = q->completed = base;
	/* No completion word may hold a tag yet (fill() trusts what it finds). */
	if (q->status)
		for (ik_u32 k = 0; k < q->size; k++)
			ik_store_relaxed(&q->status[k], 0u);
	/* Nothing to publish anywhere (see mark_none()). */
	for (ik_u32 k = 0; k < q->size; k++)
		q->marker[k] = mark_none(k);
	*out = q;
	return 0;
}

IK_API int ik_cmdq_create(const struct ik_cmdq_config *cfg, struct ik_cmdq **out)
{
	ik_size need = ik_cmdq_memsize(cfg);
	void *mem;
	int err;

	if (!need || !out)
		return -EINVAL;
	mem = ik_alloc(cfg->alloc, need, IK_CACHELINE);
	if (!mem)
		return -ENOMEM;
	err = ik_cmdq_init(mem, need, cfg, out);
	if (err)
		ik_free(cfg->alloc, mem, need);
	return err;
}

IK_API void ik_cmdq_destroy(struct ik_cmdq *q)
{
	if (q)
		ik_free(q->alloc, q, q->memsize);
}

IK_API void *ik_cmdq_ring(const struct ik_cmdq *q)
{
	IK_ASSERT(q);
	return q->ring;
}

IK_API ik_u64 ik_cmdq_ring_dma(const struct ik_cmdq *q)
{
	IK_ASSERT(q);
	return q->ring_dma;
}

IK_API ik_u32 ik_cmdq_entries(const struct ik_cmdq *q)
{
	IK_ASSERT(q);
	return q->size;
}

IK_API ik_u32 ik_cmdq_capacity(const struct ik_cmdq *q)
{
	IK_ASSERT(q);
	return q->cap;
}

IK_API ik_u64 ik_cmdq_set_timeout(struct ik_cmdq *q, ik_u64 timeout_ns)
{
	IK_ASSERT(q);
	return ik_atomic_xchg(&q->timeout_ns, timeout_ns ? timeout_ns : IK_CMDQ_DEFAULT_TIMEOUT_NS,
			      IK_MO_RELAXED);
}

IK_API ik_u64 ik_cmdq_set_spin(struct ik_cmdq *q, ik_u64 spin_ns)
{
	ik_u64 v = spin_ns ? spin_ns : SPIN_DEFAULT_NS;

	IK_ASSERT(q);
	/* The budget starts again from the new bound (a racing waiter_done()
	 * may store one budget from the old bound: the next waits adapt it). */
	ik_store_relaxed(&q->spin_ns, v);
	return ik_atomic_xchg(&q->spin_max_ns, v, IK_MO_RELAXED);
}

IK_API int ik_cmdq_get_wait_stats(const struct ik_cmdq *q, struct ik_cmdq_wait_stats *ws)
{
	if (!q || !ws)
		return -EINVAL;
	ws->yields = ik_load_relaxed(&q->yields);
	ws->spin_ns = ik_load_relaxed(&q->spin_ns);
	ws->spin_max_ns = ik_load_relaxed(&q->spin_max_ns);
	return 0;
}

IK_API void ik_cmdq_get_stats(const struct ik_cmdq *q, struct ik_cmdq_stats *st)
{
	IK_ASSERT(q && st);
	st->doorbells = ik_load_relaxed(&q->doorbells);
	st->errors = ik_load_relaxed(&q->errors);
	st->retried = ik_load_relaxed(&q->retried);
	st->replaced = ik_load_relaxed(&q->replaced);
	st->timeouts = ik_load_relaxed(&q->timeouts);
}

/* ---------------------------------------------------------------- batches */

IK_API void ik_cmdq_batch_init(struct ik_cmdq_batch *b, struct ik_cmdq *q)
{
	IK_ASSERT(b && q);
	b->q = q;
	b->n = 0;
	b->own.status = 0;
	b->own.started = false;
	b->own.first = 0;
}

static int batch_flush(struct ik_cmdq_batch *b, bool sync)
{
	struct ik_cmdq *q = b->q;
	struct ik_cmdq_owner *o = &b->own;
	struct waiter w;
	ik_u32 j = 0;
	int err, zero = 0;

	waiter_init(&w, q);
	err = enqueue(q, b->ents, b->n, sync, o, &w, NULL, &j);
	b->n = 0;
	if (!err && sync)
		err = wait_index(q, j, &w, NULL);
	if (!err)
		waiter_done(&w);
	if (err) {
		disown(q, o);
		count_timeout(q);
		o->started = false;
		ik_atomic_cas(&o->status, &zero, err, IK_MO_RELAXED, IK_MO_RELAXED);
	}
	return err;
}

IK_API int ik_cmdq_batch_add(struct ik_cmdq_batch *b, const void *cmd)
{
	if (IK_UNLIKELY(!b || !cmd))
		return -EINVAL;
	IK_ENV_MEMCPY((char *)b->ents + (ik_size)b->n * b->q->es, cmd, b->q->es);
	if (++b->n < IK_CMDQ_BATCH_MAX)
		return 0;
	return batch_flush(b, false);
}

IK_API int ik_cmdq_batch_submit(struct ik_cmdq_batch *b)
{
	int err, st;

	if (!b)
		return -EINVAL;
	err = batch_flush(b, true);
	/* Written by the handler before the consumer passed our sync. */
	st = ik_atomic_load(&b->own.status, IK_MO_RELAXED);
	b->own.status = 0;
	b->own.started = false;
	return st ? st : err;
}

/* ---------------------------------------------------------------- sets */

struct ik_cmdq_set {
	unsigned nr;
	const struct ik_allocator *alloc;
	struct ik_cmdq *q[];
};

IK_API int ik_cmdq_set_create(unsigned nr, const struct ik_cmdq_config *cfgs,
			      struct ik_cmdq_set **out)
{
	const struct ik_allocator *a;
	struct ik_cmdq_set *s;
	ik_size sz;
	unsigned i;
	int err = 0;

	if (!nr || nr > 4096 || !cfgs || !out)
		return -EINVAL;
	for (i = 0; i < nr; i++)
		if (!ik_cmdq_memsize(&cfgs[i]))
			return -EINVAL;
	a = cfgs[0].alloc;
	sz = sizeof(*s) + nr * sizeof(s->q[0]);
	s = (struct ik_cmdq_set *)ik_alloc(a, sz, sizeof(void *));
	if (!s)
		return -ENOMEM;
	s->nr = nr;
	s->alloc = a;
	for (i = 0; i < nr; i++) {
		struct ik_cmdq_config c = cfgs[i];

		c.alloc = a;
		err = ik_cmdq_create(&c, &s->q[i]);
		if (err)
			break;
	}
	if (err) {
		while (i--)
			ik_cmdq_destroy(s->q[i]);
		ik_free(a, s, sz);
		return err;
	}
	*out = s;
	return 0;
}

IK_API void ik_cmdq_set_destroy(struct ik_cmdq_set *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->nr; i++)
		ik_cmdq_destroy(s->q[i]);
	ik_free(s->alloc, s, sizeof(*s) + s->nr * sizeof(s->q[0]));
}

IK_API unsigned ik_cmdq_set_size(const struct ik_cmdq_set *s)
{
	IK_ASSERT(s);
	return s->nr;
}

IK_API struct ik_cmdq *ik_cmdq_set_queue(struct ik_cmdq_set *s, unsigned i)
{
	IK_ASSERT(s);
	return i < s->nr ? s->q[i] : NULL;
}

IK_API struct ik_cmdq *ik_cmdq_set_pick(struct ik_cmdq_set *s)
{
	IK_ASSERT(s);
	return s->q[IK_ENV_CPU_ID() % s->nr];
}

IK_API int ik_cmdq_set_issue(struct ik_cmdq_set *s, const void *cmds, unsigned n,
			     unsigned flags)
{
	if (!s)
		return -EINVAL;
	return ik_cmdq_issue(ik_cmdq_set_pick(s), cmds, n, flags);
}

IK_API int ik_cmdq_set_sync_all(struct ik_cmdq_set *s)
{
	ik_u32 idx[32];
	int first = 0;

	if (!s)
		return -EINVAL;
	/* Queue a sync on up to 32 queues, then wait for them: the queues drain
	 * in parallel. */
	for (unsigned base = 0; base < s->nr; base += 32) {
		unsigned cnt = IK_MIN(s->nr - base, 32u), i;
		int err[32];

		for (i = 0; i < cnt; i++) {
			struct waiter w;

			waiter_init(&w, s->q[base + i]);
			err[i] = enqueue(s->q[base + i], NULL, 0, true, NULL, &w, NULL, &idx[i]);
		}
		for (i = 0; i < cnt; i++) {
			struct waiter w;

			waiter_init(&w, s->q[base + i]);
			if (!err[i])
				err[i] = wait_index(s->q[base + i], idx[i], &w, NULL);
			if (err[i]) {
				count_timeout(s->q[base + i]);
				if (!first)
					first = err[i];
			}
		}
	}
	return first;
}
