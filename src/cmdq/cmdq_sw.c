/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The software consumer: registers in memory, in-order draining, sync
 * completion writes, CERROR stops and error injection.  Edges as named in
 * <iommukit/cmdq.h>.
 */
#include <iommukit/cmdq.h>

static ik_u32 sw_read_cons(void *ctx, ik_u32 *cerror)
{
	struct ik_cmdq_sw *sw = (struct ik_cmdq_sw *)ctx;

	/* The error word first (acquire, pairs with the consumer's release
	 * when it stops): a reported error comes with its own index. */
	*cerror = ik_load_acquire(&sw->cerror);
	/* C1 acquire, pairs with the consumer's CONS release. */
	return ik_load_acquire(&sw->cons);
}

static void sw_write_prod(void *ctx, ik_u32 prod)
{
	struct ik_cmdq_sw *sw = (struct ik_cmdq_sw *)ctx;

	/* R2 release, pairs with the PROD acquire in ik_cmdq_sw_consume(). */
	ik_store_release(&sw->prod, prod);
}

static void sw_ack_error(void *ctx)
{
	struct ik_cmdq_sw *sw = (struct ik_cmdq_sw *)ctx;

	/* E1 release, pairs with the error-word acquire in consume(). */
	ik_store_release(&sw->cerror, 0);
}

IK_API const struct ik_cmdq_regs ik_cmdq_sw_regs = {
	sw_read_cons, sw_write_prod, NULL, sw_ack_error,
};

IK_API int ik_cmdq_sw_init(struct ik_cmdq_sw *sw, const struct ik_cmdq_sw_config *cfg)
{
	ik_u64 ring_dma;
	ik_u32 size;

	if (!sw || !cfg || !cfg->fmt || !cfg->ring || !cfg->fmt->classify ||
	    cfg->log2_entries < IK_CMDQ_LOG2_MIN || cfg->log2_entries > IK_CMDQ_LOG2_MAX ||
	    (cfg->flags & ~(IK_CMDQ_CFG_NO_WRAP | IK_CMDQ_CFG_MSI)))
		return -EINVAL;
	size = (ik_u32)1 << cfg->log2_entries;
	ring_dma = cfg->ring_dma ? cfg->ring_dma : (ik_u64)(ik_uptr)cfg->ring;
	/* The ring's device addresses must not wrap past 2^64. */
	if ((ik_u64)cfg->fmt->entry_size * size - 1 > IK_U64_MAX - ring_dma)
		return -EINVAL;
	/* Both addresses aligned to the entry size: a completion write at an
	 * aligned device address is then an aligned store into the ring. */
	if (!cfg->fmt->entry_size || !IK_IS_POW2(cfg->fmt->entry_size) ||
	    ((ring_dma | (ik_u64)(ik_uptr)cfg->ring) & (cfg->fmt->entry_size - 1)))
		return -EINVAL;
	IK_ENV_MEMSET(sw, 0, sizeof(*sw));
	sw->cfg = *cfg;
	sw->cfg.ring_dma = ring_dma;
	sw->mask = size - 1;
	sw->regmask = (cfg->flags & IK_CMDQ_CFG_NO_WRAP) ? size - 1 : 2 * size - 1;
	sw->inject_at = ~(ik_u64)0;
	return 0;
}

IK_API void ik_cmdq_sw_inject(struct ik_cmdq_sw *sw, ik_u64 after, ik_u32 cerror,
			      unsigned times)
{
	IK_ASSERT(sw);
	sw->inject_at = sw->consumed + after;
	sw->inject_cerror = cerror;
	sw->inject_times = times;
}

IK_API ik_u32 ik_cmdq_sw_error(const struct ik_cmdq_sw *sw)
{
	IK_ASSERT(sw);
	return ik_load_acquire(&sw->cerror);
}

/* A completion write not performed (a wide store not 8-byte aligned, or
 * outside the ring with no hook).  Relaxed atomic: one writer, the consumer;
 * other threads may read the counter at any time. */
static void sw_refuse(struct ik_cmdq_sw *sw)
{
	ik_atomic_fetch_add(&sw->completions_refused, 1, IK_MO_RELAXED);
}

/* The sync's completion write: into the ring as 32-bit atomics (S1
 * release on the data word, last: everything consumed before it is done),
 * elsewhere via the hook.  A wide (64-bit) store writes the high word
 * first. */
static void sw_complete(struct ik_cmdq_sw *sw, const struct ik_cmdq_sync_info *si)
{
	ik_u64 lo = sw->cfg.ring_dma;
	ik_u64 bytes = (ik_u64)sw->cfg.fmt->entry_size * (sw->mask + 1);
	ik_u64 len = si->wide ? 8 : 4;

	if (si->wide && (si->addr & 7)) {
		sw_refuse(sw);	/* a 64-bit store is only ever aligned */
		return;
	}
	/* addr is what the submitter (a guest) wrote: any 64-bit value.  No
	 * sum may wrap, so compare the offset into the ring, never addr + len. */
	if (si->addr >= lo && si->addr - lo < bytes && bytes - (si->addr - lo) >= len &&
	    !(si->addr & 3)) {
		ik_u32 *p = (ik_u32 *)(void *)((ik_u8 *)sw->cfg.ring + (si->addr - lo));

		if (si->wide)
			ik_store_relaxed(&p[1], si->data_hi);
		ik_store_release(p, si->data);
	} else if (sw->cfg.write32) {
		/* aligned to len: addr + 4 cannot wrap for a wide store */
		if (si->wide)
			sw->cfg.write32(sw->cfg.ctx, si->addr + 4, si->data_hi);
		sw->cfg.write32(sw->cfg.ctx, si->addr, si->data);
	} else {
		/* Never a store at a host address the submitter named. */
		sw_refuse(sw);
	}
}

static void sw_stop(struct ik_cmdq_sw *sw, ik_u32 cerror)
{
	sw->errors++;
	/* CONS at the bad entry first, then the error (release): a reader that
	 * sees the error sees its index (sw_read_cons). */
	ik_store_release(&sw->cons, sw->cons_full & sw->regmask);
	ik_store_release(&sw->cerror, cerror);
}

IK_API int ik_cmdq_sw_consume(struct ik_cmdq_sw *sw, unsigned budget)
{
	const struct ik_cmdq_fmt *fmt;
	unsigned words, n = 0;
	ik_u32 prod, cur;
	ik_u64 consumed;

	if (!sw)
		return -EINVAL;
	fmt = sw->cfg.fmt;
	words = fmt->entry_size / 4;
	/* E1 acquire: after an acknowledgement, the repaired entry. */
	if (ik_load_acquire(&sw->cerror))
		return -EAGAIN;
	/* R2 acquire, pairs with write_prod's release. */
	prod = ik_load_acquire(&sw->prod);
	prod = sw->cons_full + ((prod - sw->cons_full) & sw->regmask);
	/* The index and the count live in locals while we drain: they share
	 * a line with the CONS register that producers poll, and a store per
	 * entry would take that line from them each time (they are written
	 * back before anything that reads them: the handler, which may call
	 * inject(), a stop, a CONS store, the return). */
	cur = sw->cons_full;
	consumed = sw->consumed;
	while (cur != prod && n < budget) {
		ik_u32 i = cur, cerror = 0;
		ik_u32 *slot = (ik_u32 *)(void *)((ik_u8 *)sw->cfg.ring +
						  (ik_size)(i & sw->mask) * fmt->entry_size);
		struct ik_cmdq_sync_info si = { false, 0, 0, false, 0 };
		ik_u64 ent[4];
		int kind;

		for (unsigned k = 0; k < words; k++) {
			ik_u32 v = ik_load_relaxed(&slot[k]);

			IK_ENV_MEMCPY((char *)ent + 4 * k, &v, 4);
		}
		kind = fmt->classify(ent, &si);
		if (consumed == sw->inject_at && sw->inject_times) {
			/* An injected fault on this fetch (the entry may be
			 * fetched again after the acknowledgement). */
			cerror = sw->inject_cerror;
			if (--sw->inject_times == 0)
				sw->inject_at = ~(ik_u64)0;
		} else if (kind < 0) {
			cerror = IK_CMDQ_CERROR_ILL;
		} else if (kind == IK_CMDQ_KIND_SYNC && sw->atc_pending) {
			/* SMMUv3: an ATC invalidation timed out; the next sync
			 * reports it, and its retry re-executes the sync. */
			sw->atc_pending = false;
			cerror = IK_CMDQ_CERROR_ATC_INV_SYNC;
		} else if (sw->cfg.handler) {
			sw->consumed = consumed;
			sw->cons_full = cur;
			cerror = sw->cfg.handler(sw->cfg.ctx, i, ent, kind);
			if (cerror == IK_CMDQ_CERROR_ATC_INV_SYNC && kind != IK_CMDQ_KIND_SYNC) {
				sw->atc_pending = true;
				cerror = 0;
			}
		}
		if (cerror) {
			sw->consumed = consumed;
			sw->cons_full = cur;
			sw_stop(sw, cerror);
			return (int)n;
		}
		if (kind == IK_CMDQ_KIND_SYNC) {
			sw->syncs++;
			if (si.write)
				sw_complete(sw, &si);
		}
		consumed++;
		cur = i + 1;
		n++;
		if (kind == IK_CMDQ_KIND_SYNC) /* C1 release: waiters see it now */
			ik_store_release(&sw->cons, cur & sw->regmask);
	}
	sw->consumed = consumed;
	sw->cons_full = cur;
	/* C1 release: the slots passed are free. */
	ik_store_release(&sw->cons, cur & sw->regmask);
	return (int)n;
}
