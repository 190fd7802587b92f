/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Deferred flush queue; see <iommukit/flushq.h>. */
#include <iommukit/flushq.h>

IK_API int ik_flushq_init(struct ik_flushq *fq, ik_u32 capacity, ik_u64 timeout_ns,
			  const struct ik_flushq_ops *ops, const struct ik_allocator *alloc)
{
	struct ik_flushq_entry *ent;

	if (!fq || !ops || !ops->flush || !ops->release || capacity < 1 || capacity > 65536)
		return -EINVAL;
#ifdef IK_DEBUG
	/* See ik_iova_init(): only debug builds may read a maybe-uninitialised
	 * queue to catch a re-init that would leak its entries. */
	if (fq->live == IK_FLUSHQ_LIVE)
		return -EBUSY;
#endif
	ent = (struct ik_flushq_entry *)ik_alloc(alloc, (ik_size)capacity * sizeof(*ent), 64);
	if (!ent)
		return -ENOMEM;
	IK_ENV_MEMSET(fq, 0, sizeof(*fq));
	ik_lock_init(&fq->lock);
	fq->ops = *ops;
	fq->ent = ent;
	fq->cap = capacity;
	fq->timeout_ns = timeout_ns;
	fq->alloc = alloc;
	fq->live = IK_FLUSHQ_LIVE;
	return 0;
}

/* Lock held. */
static int fq_flush_locked(struct ik_flushq *fq)
{
	ik_u64 lo = IK_U64_MAX, hi = 0;
	int err;

	if (!fq->n)
		return 0;
	for (ik_u32 i = 0; i < fq->n; i++) {
		lo = IK_MIN(lo, fq->ent[i].iova);
		hi = IK_MAX(hi, fq->ent[i].iova + (fq->ent[i].size - 1));
	}
	err = fq->ops.flush(fq->ops.ctx, lo, hi);
	if (err) {
		fq->flush_errors++;
		return err;
	}
	fq->flushes++;
	/* Only now may the resources be reused: the sync has completed. */
	for (ik_u32 i = 0; i < fq->n; i++)
		fq->ops.release(fq->ops.ctx, &fq->ent[i]);
	fq->released += fq->n;
	fq->n = 0;
	return 0;
}

IK_API int ik_flushq_destroy(struct ik_flushq *fq)
{
	int err;

	if (!fq)
		return 0;	/* teardown of nothing */
	if (!fq->ent)
		return -EINVAL;
	err = ik_flushq_flush(fq);
	ik_lock_destroy(&fq->lock);
	ik_free(fq->alloc, fq->ent, (ik_size)fq->cap * sizeof(*fq->ent));
	fq->ent = NULL;
	fq->live = 0;
	return err;
}

IK_API int ik_flushq_add(struct ik_flushq *fq, ik_u64 iova, ik_u64 size, void *cookie)
{
	ik_u64 now;
	int err = 0;

	if (!fq || !fq->ent || size == 0 || iova + (size - 1) < iova)
		return -EINVAL;
	now = IK_ENV_TIME_NS();
	ik_lock(&fq->lock);
	if (fq->n == fq->cap ||
	    (fq->n && fq->timeout_ns && now - fq->ent[0].stamp >= fq->timeout_ns))
		err = fq_flush_locked(fq);
	if (!err) {
		struct ik_flushq_entry *e = &fq->ent[fq->n++];

		e->iova = iova;
		e->size = size;
		e->stamp = now;
		e->cookie = cookie;
		fq->adds++;
	}
	ik_unlock(&fq->lock);
	return err;
}

IK_API int ik_flushq_flush(struct ik_flushq *fq)
{
	int err;

	if (!fq || !fq->ent)
		return -EINVAL;
	ik_lock(&fq->lock);
	err = fq_flush_locked(fq);
	ik_unlock(&fq->lock);
	return err;
}

IK_API ik_u32 ik_flushq_pending(struct ik_flushq *fq)
{
	ik_u32 n;

	IK_ASSERT(fq);
	/* A release build keeps its old answer for NULL: nothing pending. */
	if (!fq || !fq->ent)
		return 0;
	ik_lock(&fq->lock);
	n = fq->n;
	ik_unlock(&fq->lock);
	return n;
}
