/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/flushq.h - a deferred flush queue ("lazy" DMA unmapping).
 *
 * What it is for.  A strict DMA layer invalidates the IOTLB and waits for the
 * sync on every unmap before it frees the IOVA.  A lazy one unmaps the page
 * tables at once but *defers* the invalidation: it queues the unmapped range
 * and, when the queue is full or its oldest entry is old enough, issues one
 * invalidation (typically of the whole domain) and one sync for the whole
 * batch, and only then frees the IOVAs (and the table pages the unmaps
 * emptied).  Freeing an IOVA before the sync would let it be reallocated and
 * remapped while the IOTLB still holds the old translation; the queue makes
 * that impossible by construction: release() runs only after flush()
 * returned success.
 *
 * Glossary
 *   entry     one deferred unmap: iova, size and an opaque cookie (the IOVA
 *             pfn to free, a gather of table pages, ...).
 *   flush     the caller's callback that invalidates everything the queued
 *             entries might still have cached and waits for completion.
 *   release   the caller's callback that frees one entry's resources; called
 *             for every entry, oldest first, after a successful flush.
 *
 * Synchronization: every call takes the queue's lock; calls on one queue may
 * run from any threads.  flush() and release() are called with that lock
 * held: they must not call back into the same queue.  Use one queue per CPU
 * (or per thread) when the lock would be contended.
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_FLUSHQ_H
#define IOMMUKIT_FLUSHQ_H

#include <iommukit/env.h>
#include <iommukit/lock.h>

IK_BEGIN_DECLS

/* One queued range (what release() receives). */
struct ik_flushq_entry {
	ik_u64 iova;	/* first IOMMU address of the range */
	ik_u64 size;	/* bytes */
	ik_u64 stamp; /* IK_ENV_TIME_NS() when queued */
	void *cookie;	/* the caller's, from ik_flushq_add() */
};

/*
 * struct ik_flushq_ops
 *   flush(ctx, lo, hi): make the IOMMU forget every translation of
 *     [lo, hi] (the span of all queued entries; a caller may invalidate more,
 *     e.g. the whole domain) and wait for it; 0 or a negative errno.
 *   release(ctx, e): free e's resources (never fails).
 */
struct ik_flushq_ops {
	int (*flush)(void *ctx, ik_u64 lo, ik_u64 hi);
	void (*release)(void *ctx, const struct ik_flushq_entry *e);
	void *ctx;	/* passed back to flush and release */
};

/* A queue.  Fields are not API; use the functions. */
struct ik_flushq {
	ik_lock_t lock;	/* not API: guards the queue */
	struct ik_flushq_ops ops;	/* not API: the callbacks */
	struct ik_flushq_entry *ent;	/* not API: the entries */
	ik_u32 cap, n;	/* not API: capacity and entries queued */
	ik_u64 timeout_ns;	/* not API: flush after an entry waited this long */
	const struct ik_allocator *alloc;	/* not API: where ent came from */
	ik_u64 adds, flushes, released, flush_errors;	/* not API: counters */
	ik_u64 live;	/* IK_FLUSHQ_LIVE between init and destroy */
};

/* What `live` holds while a queue is initialised (debug builds check it). */
#define IK_FLUSHQ_LIVE 0x666c7573687121ull

/*
 * ik_flushq_init - a queue of `capacity` entries (1..65536) that flushes when
 * full, or on an add when its oldest entry is older than `timeout_ns` (0:
 * only when full).  ops->flush and ops->release are required.
 * Errors: -EINVAL (NULL, capacity out of range, missing callback), -ENOMEM.
 * Precondition: `fq` is not a live queue (initialised and not destroyed):
 * re-initialising one would leak its entries.  Builds with IK_DEBUG detect
 * it and return -EBUSY (changing nothing); release builds do not read `fq`
 * before writing it, so it may be uninitialised memory.
 * O(1) plus one allocation of capacity entries.
 */
IK_API int ik_flushq_init(struct ik_flushq *fq, ik_u32 capacity, ik_u64 timeout_ns,
			  const struct ik_flushq_ops *ops, const struct ik_allocator *alloc);

/*
 * ik_flushq_destroy - flush what is queued (release entries only if the flush
 * succeeded) and free the queue.  Returns 0, or the flush error, in which case
 * the entries were *not* released (their resources are leaked rather than
 * reused while possibly cached) and the queue is freed anyway.  A NULL fq
 * is ignored (0); a queue already destroyed gives -EINVAL.
 */
IK_API int ik_flushq_destroy(struct ik_flushq *fq);

/*
 * ik_flushq_add - queue one unmapped range.  If the queue is full, or the
 * oldest entry is older than the timeout, flush and release first.
 * Errors: -EINVAL (NULL fq, size 0, iova + size overflows); the flush error
 * (nothing queued, nothing released: the caller keeps the entry and may call
 * again).  Cost: O(1), or one flush plus O(capacity) releases.
 */
IK_API int ik_flushq_add(struct ik_flushq *fq, ik_u64 iova, ik_u64 size, void *cookie);

/*
 * ik_flushq_flush - flush and release everything queued now (no-op on an
 * empty queue).  Errors: -EINVAL (NULL or destroyed fq); the flush error
 * (entries kept).
 */
IK_API int ik_flushq_flush(struct ik_flushq *fq);

/* ik_flushq_pending - entries queued now (a snapshot). */
IK_API ik_u32 ik_flushq_pending(struct ik_flushq *fq);

IK_END_DECLS

#endif /* IOMMUKIT_FLUSHQ_H */
