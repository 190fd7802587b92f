/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * SMMUv3 driver core, the device: register-level command queue hooks,
 * bring-up and teardown, the event queue and global errors
 * (<iommukit/drv/smmuv3.h>).
 *
 * Command queue errors.  SMMU_CMDQ_CONS.ERR [30:24] holds the code of the
 * last error, but an error is *active* only while GERROR.CMDQ_ERR differs
 * from GERRORN.CMDQ_ERR: QEMU 7.2 leaves the code in CONS.ERR after the
 * error was acknowledged, so the hooks below never take CONS.ERR alone for
 * an error.  GERRORN is written only by this object, so a shadow of it
 * (gerrorn, under gerr_lock for the read-modify-write of acknowledgements)
 * spares a register read per CONS poll.
 *
 * Ordering edges (names of <iommukit/cmdq.h>):
 *   R2  write_prod: the ring entries are cleaned (non-coherent) and the
 *       CMDQ_PROD write is ordered after them by ik_mmio (io.h's contract);
 *   C1  read_cons: GERROR is read before CMDQ_CONS, and ik_mmio orders the
 *       CONS read before later loads of the ring;
 *   E1  ack_error: the repaired entry is cleaned before the GERRORN write.
 */
#include <iommukit/drv/smmuv3.h>
#include <iommukit/atomic.h>
#include <iommukit/lock.h>
#include "drv_int.h"

/* One ECMDQ (see "ECMDQ" in the header). */
struct ecq {
	struct ik_smmu *s;
	ik_u32 off;	/* register offset of its ECMDQ_BASE */
	ik_u8 *ring;
	ik_u64 ring_dma;
	ik_lock_t lock;	/* PROD composition: write_prod vs. the error acknowledgements */
	ik_u32 prod_shadow;	/* WR as about to be written (stored before the write) */
	ik_u32 errack;	/* PROD.ERRACK as last written */
	ik_u32 cons_good;	/* the newest credible CONS [19:0] */
	bool enabled;
};

struct ik_smmu {
	struct ik_mmio mmio;
	const struct ik_dma_mem *dma;
	const struct ik_allocator *alloc;
	struct ik_smmu_idr idr;
	ik_u64 timeout_ns;
	unsigned flags;
	bool coherent;
	bool queue_live; /* reset ran: the ik_cmdq is initialised */
	bool enabled;	 /* CR0 may be non-zero */
	bool evtq_live;	 /* reset set the event queue up */
	struct ik_smmu_strtab st;

	/* command queue */
	unsigned cmdq_log2;
	ik_u8 *cmdq_ring;
	ik_u64 cmdq_dma;
	ik_size cmdq_bytes;
	void *cmdq_mem;
	ik_size cmdq_memsize;
	struct ik_cmdq_config qcfg;
	struct ik_cmdq *q;
	ik_u32 prod_shadow; /* written under the queue's publish lock, before PROD */
	ik_u32 cons_good;   /* the newest credible CMDQ_CONS index */

	/* event queue (one consumer) */
	unsigned evtq_log2;
	ik_u64 *evtq_ring;
	ik_u64 evtq_dma;
	ik_size evtq_bytes;
	ik_u32 evtq_cons; /* RD | wrap | OVACKFLG, as last written */
	bool evtq_ovf_pending;

	/* GERRORN */
	ik_lock_t gerr_lock;
	ik_u32 gerrorn;

	ik_u64 events, evtq_overflows, gerrors, ste_writes, cd_writes, issues;

	/* ECMDQs */
	unsigned ecmdq_max;	/* ik_smmu_ecmdq_limit() (0: CPUs) */
	unsigned necq;	/* allocated */
	struct ecq *ecq;
	ik_size ecq_bytes;	/* each ring */
	struct ik_cmdq_set *eset;	/* non-NULL while the ECMDQs are in use */
	ik_u64 ecmdq_enable_timeouts, ecmdq_spurious, ecmdq_hostile;
	ik_u64 ecmdq_retired[5];	/* counters of sets destroyed at a reset */
};

/* ---------------------------------------------------------------- waits */

static ik_u32 rd(const struct ik_smmu *s, ik_u32 off)
{
	return ik_mmio_read32(&s->mmio, off);
}

static void wr(const struct ik_smmu *s, ik_u32 off, ik_u32 v)
{
	ik_mmio_write32(&s->mmio, off, v);
}

/* Poll `off` until (value & mask) == want; -ETIMEDOUT past the timeout. */
static int wait_reg(const struct ik_smmu *s, ik_u32 off, ik_u32 mask, ik_u32 want)
{
	ik_u64 deadline = 0;

	for (;;) {
		if ((rd(s, off) & mask) == want)
			return 0;
		if (ik_drv_poll_step(&deadline, s->timeout_ns))
			return -ETIMEDOUT;
	}
}

#define CR0_ENABLES \
	(IK_SMMU_CR0_SMMUEN | IK_SMMU_CR0_PRIQEN | IK_SMMU_CR0_EVTQEN | IK_SMMU_CR0_CMDQEN | \
	 IK_SMMU_CR0_ATSCHK)

static int cr0_write(struct ik_smmu *s, ik_u32 v)
{
	wr(s, IK_SMMU_CR0, v);
	return wait_reg(s, IK_SMMU_CR0ACK, CR0_ENABLES, v & CR0_ENABLES);
}

/* GBPA update handshake: wait UPDATE clear, write with UPDATE, wait. */
static int gbpa_set_abort(struct ik_smmu *s)
{
	int err = wait_reg(s, IK_SMMU_GBPA, IK_SMMU_GBPA_UPDATE, 0);

	if (err)
		return err;
	wr(s, IK_SMMU_GBPA, rd(s, IK_SMMU_GBPA) | IK_SMMU_GBPA_ABORT | IK_SMMU_GBPA_UPDATE);
	return wait_reg(s, IK_SMMU_GBPA, IK_SMMU_GBPA_UPDATE, 0);
}

/* ---------------------------------------------------------------- queue hooks */

static ik_u32 cmdq_wrap_mask(const struct ik_smmu *s)
{
	return (2u << s->cmdq_log2) - 1;
}

/*
 * Whether CONS index `idx` is credible for a queue whose PROD shadow is
 * `prod` (stored before each PROD write, so a real consumer is never ahead
 * of it): then *good advances to it (never back: a reader that read CONS
 * earlier must not move it back) and idx is returned; else the hostile read
 * is counted and the last credible index returned (no progress), so no
 * sync is ever taken as complete before it is.
 */
static ik_u32 cons_credible(struct ik_smmu *s, ik_u32 *good, ik_u32 prod, ik_u32 idx)
{
	ik_u32 size = 1u << s->cmdq_log2, mask = cmdq_wrap_mask(s), old;

	if (((prod - idx) & mask) > size) {
		ik_atomic_fetch_add(&s->ecmdq_hostile, 1, IK_MO_RELAXED);
		return ik_load_acquire(good);
	}
	old = ik_load_relaxed(good);
	while (old != idx && ((idx - old) & mask) <= size &&
	       !ik_atomic_cas(good, &old, idx, IK_MO_RELEASE, IK_MO_RELAXED))
		;
	return idx;
}

/* The ik_cmdq error class of an SMMU CERROR code (CMDQ_CONS.ERR or an
 * ECMDQ's ERR_REASON).  ILL, and codes this core does not know, are ILL:
 * the queue is stopped either way; replacing the entry with a no-op is
 * what makes it run again. */
static ik_u32 cerror_class(ik_u32 code)
{
	switch (code) {
	case IK_SMMU_CERROR_ABT:
		return IK_CMDQ_CERROR_ABT;
	case IK_SMMU_CERROR_ATC_INV_SYNC:
		return IK_CMDQ_CERROR_ATC_INV_SYNC;
	default:
		return IK_CMDQ_CERROR_ILL;
	}
}

static ik_u32 hook_read_cons(void *ctx, ik_u32 *cerror)
{
	struct ik_smmu *s = (struct ik_smmu *)ctx;
	/* C1: the error state (GERROR) before the index. */
	ik_u32 g = rd(s, IK_SMMU_GERROR);
	ik_u32 gn = ik_load_acquire(&s->gerrorn);
	ik_u32 cons = rd(s, IK_SMMU_CMDQ_CONS);
	ik_u32 prod = ik_load_acquire(&s->prod_shadow) & cmdq_wrap_mask(s);
	ik_u32 idx = cons & cmdq_wrap_mask(s);

	*cerror = 0;
	if (cons_credible(s, &s->cons_good, prod, idx) != idx)
		return ik_load_acquire(&s->cons_good);
	if ((g ^ gn) & IK_SMMU_GERROR_CMDQ_ERR) {
		*cerror = cerror_class((cons >> IK_SMMU_CMDQ_CONS_ERR_SHIFT) &
				       IK_SMMU_CMDQ_CONS_ERR_MASK);
	}
	return cons & cmdq_wrap_mask(s);
}

/* Clean ring slots [from, to) (free-running register values). */
static void ring_clean(struct ik_smmu *s, ik_u32 from, ik_u32 to)
{
	ik_u32 size = 1u << s->cmdq_log2, n = (to - from) & cmdq_wrap_mask(s);

	if (!s->dma->clean)
		return;
	while (n) {
		ik_u32 slot = from & (size - 1), k = size - slot < n ? size - slot : n;

		ik_dma_clean(s->dma, s->cmdq_ring + (ik_size)slot * 16,
			     s->cmdq_dma + (ik_u64)slot * 16, (ik_size)k * 16);
		from += k;
		n -= k;
	}
}

static void hook_write_prod(void *ctx, ik_u32 prod)
{
	struct ik_smmu *s = (struct ik_smmu *)ctx;

	/* R2: the entries reach memory before the doorbell (ik_mmio orders
	 * its write after earlier stores). */
	ik_u32 from = ik_load_relaxed(&s->prod_shadow);

	/* The shadow first: a CONS read after this cannot be beyond it. */
	ik_store_release(&s->prod_shadow, prod);
	ring_clean(s, from, prod);
	wr(s, IK_SMMU_CMDQ_PROD, prod);
}

static void hook_ack_error(void *ctx)
{
	struct ik_smmu *s = (struct ik_smmu *)ctx;
	ik_u32 cons = rd(s, IK_SMMU_CMDQ_CONS);

	/* E1: the repaired entry at CONS is visible before the SMMU resumes. */
	ring_clean(s, cons, cons + 1);
	ik_lock(&s->gerr_lock);
	wr(s, IK_SMMU_GERRORN, s->gerrorn ^ IK_SMMU_GERROR_CMDQ_ERR);
	ik_store_release(&s->gerrorn, s->gerrorn ^ IK_SMMU_GERROR_CMDQ_ERR);
	ik_unlock(&s->gerr_lock);
}

static const struct ik_cmdq_regs smmu_cmdq_regs = {
	hook_read_cons, hook_write_prod, NULL, hook_ack_error,
};

/* ---------------------------------------------------------------- ECMDQ hooks */

static ik_u32 ecq_wrap_mask(const struct ecq *e)
{
	return cmdq_wrap_mask(e->s);
}

/* Clean ring slots [from, to) of an ECMDQ. */
static void ecq_clean(struct ecq *e, ik_u32 from, ik_u32 to)
{
	struct ik_smmu *s = e->s;
	ik_u32 size = 1u << s->cmdq_log2, n = (to - from) & ecq_wrap_mask(e);

	if (!s->dma->clean)
		return;
	while (n) {
		ik_u32 slot = from & (size - 1), k = size - slot < n ? size - slot : n;

		ik_dma_clean(s->dma, e->ring + (ik_size)slot * 16, e->ring_dma + (ik_u64)slot * 16,
			     (ik_size)k * 16);
		from += k;
		n -= k;
	}
}

/* PROD = EN | ERRACK | WR (e->lock held). */
static void ecq_prod_locked(struct ecq *e)
{
	wr(e->s, e->off + 8, IK_SMMU_ECMDQ_PROD_EN | (e->errack ? IK_SMMU_ECMDQ_PROD_ERRACK : 0) |
				     (ik_load_relaxed(&e->prod_shadow) & ecq_wrap_mask(e)));
}

static ik_u32 ecq_read_cons(void *ctx, ik_u32 *cerror)
{
	struct ecq *e = (struct ecq *)ctx;
	struct ik_smmu *s = e->s;
	ik_u32 mask = ecq_wrap_mask(e);
	/* C1: the register (ERR and RD together) first; then the shadows,
	 * which only ever run ahead of what the SMMU was given. */
	ik_u32 c = rd(s, e->off + 12);
	ik_u32 prod = ik_load_acquire(&e->prod_shadow) & mask;
	ik_u32 idx = c & mask;
	bool err;

	*cerror = 0;
	/* No consumer can be beyond what it was given: hostile or broken. */
	if (cons_credible(s, &e->cons_good, prod, idx) != idx)
		return ik_load_acquire(&e->cons_good);
	err = (c & IK_SMMU_ECMDQ_CONS_ERR) != 0;
	if (err == (ik_load_acquire(&e->errack) != 0))
		return idx;
	if (idx == prod) {
		/* ERR with CONS == PROD: no command to blame (a stopped
		 * consumer stops at a command it was given).  Acknowledge it
		 * without touching the ring, unless it changed meanwhile. */
		ik_lock(&e->lock);
		c = rd(s, e->off + 12);
		if (((c & IK_SMMU_ECMDQ_CONS_ERR) != 0) != (e->errack != 0) &&
		    (c & mask) == (ik_load_relaxed(&e->prod_shadow) & mask)) {
			ik_store_release(&e->errack, e->errack ^ 1u);
			ecq_prod_locked(e);
			ik_atomic_fetch_add(&s->ecmdq_spurious, 1, IK_MO_RELAXED);
		}
		ik_unlock(&e->lock);
		return idx;
	}
	*cerror = cerror_class((c >> IK_SMMU_ECMDQ_CONS_REASON_SHIFT) & 7);
	return idx;
}

static void ecq_write_prod(void *ctx, ik_u32 prod)
{
	struct ecq *e = (struct ecq *)ctx;
	ik_u32 from;

	ik_lock(&e->lock);
	from = ik_load_relaxed(&e->prod_shadow);
	/* The shadow first: a CONS read after this cannot be beyond it. */
	ik_store_release(&e->prod_shadow, prod);
	/* R2: entries cleaned, then the doorbell (ik_mmio orders it). */
	ecq_clean(e, from, prod);
	ecq_prod_locked(e);
	ik_unlock(&e->lock);
}

static void ecq_ack_error(void *ctx)
{
	struct ecq *e = (struct ecq *)ctx;
	ik_u32 c;

	ik_lock(&e->lock);
	c = rd(e->s, e->off + 12);
	/* E1: the repaired entry at CONS is visible before ERRACK. */
	ecq_clean(e, c, c + 1);
	ik_store_release(&e->errack, (c & IK_SMMU_ECMDQ_CONS_ERR) ? 1u : 0u);
	ecq_prod_locked(e);
	ik_unlock(&e->lock);
}

static const struct ik_cmdq_regs ecq_regs = {
	ecq_read_cons, ecq_write_prod, NULL, ecq_ack_error,
};

/* ---------------------------------------------------------------- create / destroy */

static bool dma_fits(ik_u64 dma, ik_u64 size, unsigned bits)
{
	ik_u64 last = dma + size - 1;

	return last >= dma && (bits >= 64 || !(last >> bits));
}

static int ring_alloc(struct ik_smmu *s, ik_size bytes, void **cpu, ik_u64 *dma)
{
	ik_size b = bytes < 32 ? 32 : bytes;
	int err = ik_dma_alloc(s->dma, b, b, cpu, dma);

	if (err)
		return err;
	if (!dma_fits(*dma, b, s->idr.oas)) {
		ik_dma_free(s->dma, *cpu, *dma, b);
		*cpu = NULL;
		return -ERANGE;
	}
	ik_dma_clean(s->dma, *cpu, *dma, b);
	return 0;
}

static void ecq_free(struct ik_smmu *s)
{
	if (s->eset) {
		ik_cmdq_set_destroy(s->eset);
		s->eset = NULL;
	}
	for (unsigned i = 0; i < s->necq; i++)
		ik_dma_free(s->dma, s->ecq[i].ring, s->ecq[i].ring_dma, s->ecq_bytes);
	ik_free(s->alloc, s->ecq, sizeof(*s->ecq) * s->necq);
	s->ecq = NULL;
	s->necq = 0;
}

static void smmu_free(struct ik_smmu *s)
{
	const struct ik_allocator *a = s->alloc;

	ecq_free(s);
	ik_dma_free(s->dma, s->evtq_ring, s->evtq_dma, s->evtq_bytes);
	ik_dma_free(s->dma, s->cmdq_ring, s->cmdq_dma, s->cmdq_bytes);
	ik_free(a, s->cmdq_mem, s->cmdq_memsize);
	ik_smmu_strtab_fini(&s->st);
	ik_free(a, s, sizeof(*s));
}

IK_API int ik_smmu_create(const struct ik_smmu_config *cfg, struct ik_smmu **out)
{
	struct ik_smmu_strtab_config sc;
	struct ik_smmu_idr id;
	struct ik_smmu *s;
	unsigned cq, eq, sid;
	void *p;
	int err;

	if (!cfg || !out || !ik_drv_io_ok(cfg->mmio, cfg->dma) || (cfg->flags & ~IK_SMMU_F_ALL))
		return -EINVAL;
	err = ik_smmu_probe(cfg->mmio, &id);
	if (!err)
		err = ik_smmu_idr_usable(&id);
	if (err)
		return err;
	cq = cfg->cmdq_log2 ? cfg->cmdq_log2 : (id.cmdqs < 8 ? id.cmdqs : 8);
	eq = cfg->evtq_log2 ? cfg->evtq_log2 : (id.eventqs < 7 ? id.eventqs : 7);
	sid = cfg->sid_bits ? cfg->sid_bits : (id.sidsize < 16 ? id.sidsize : 16);
	if (cq < IK_CMDQ_LOG2_MIN || cq > id.cmdqs || cq > IK_CMDQ_LOG2_MAX || eq < 2 ||
	    eq > id.eventqs || eq > 20 || sid < 1 || sid > id.sidsize)
		return -EINVAL;
	s = (struct ik_smmu *)ik_drv_zalloc(cfg->alloc, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->mmio = *cfg->mmio;
	s->dma = cfg->dma;
	s->alloc = cfg->alloc;
	s->idr = id;
	s->timeout_ns = cfg->timeout_ns ? cfg->timeout_ns : IK_SMMU_DEFAULT_TIMEOUT_NS;
	s->flags = cfg->flags;
	s->coherent = ik_smmu_coherent(&id, cfg->dma);
	s->cmdq_log2 = cq;
	s->evtq_log2 = eq;
	ik_lock_init(&s->gerr_lock);

	IK_ENV_MEMSET(&sc, 0, sizeof(sc));
	sc.idr = &s->idr;
	sc.dma = cfg->dma;
	sc.alloc = cfg->alloc;
	sc.log2size = sid;
	sc.two_level = !cfg->linear && id.st_level == 1 && sid > 8;
	sc.split = 8;
	err = ik_smmu_strtab_init(&s->st, &sc);
	if (err)
		goto fail;

	s->cmdq_bytes = (ik_size)16 << cq;
	err = ring_alloc(s, s->cmdq_bytes, &p, &s->cmdq_dma);
	if (err)
		goto fail;
	s->cmdq_ring = (ik_u8 *)p;
	if (s->cmdq_bytes < 32)
		s->cmdq_bytes = 32;
	s->qcfg.fmt = &ik_cmdq_fmt_smmuv3;
	s->qcfg.log2_entries = cq;
	s->qcfg.flags = 0; /* completion by polling CONS: no MSI (QEMU writes none) */
	s->qcfg.ring = s->cmdq_ring;
	s->qcfg.ring_dma = s->cmdq_dma;
	s->qcfg.regs = &smmu_cmdq_regs;
	s->qcfg.regs_ctx = s;
	s->qcfg.timeout_ns = s->timeout_ns;
	s->cmdq_memsize = ik_cmdq_memsize(&s->qcfg);
	if (!s->cmdq_memsize) {
		err = -EINVAL;
		goto fail;
	}
	s->cmdq_mem = ik_alloc(cfg->alloc, s->cmdq_memsize, IK_CACHELINE);
	if (!s->cmdq_mem) {
		err = -ENOMEM;
		goto fail;
	}

	s->evtq_bytes = (ik_size)32 << eq;
	err = ring_alloc(s, s->evtq_bytes, &p, &s->evtq_dma);
	if (err)
		goto fail;
	s->evtq_ring = (ik_u64 *)p;
	*out = s;
	return 0;
fail:
	smmu_free(s);
	return err;
}

IK_API void ik_smmu_destroy(struct ik_smmu *s)
{
	if (!s)
		return;
	if (s->enabled)
		(void)ik_smmu_disable(s);
	smmu_free(s);
}

IK_API const struct ik_smmu_idr *ik_smmu_get_idr(const struct ik_smmu *s)
{
	IK_ASSERT(s);
	return &s->idr;
}

IK_API struct ik_cmdq *ik_smmu_cmdq(struct ik_smmu *s)
{
	IK_ASSERT(s);
	return s->queue_live ? s->q : NULL;
}

IK_API struct ik_smmu_strtab *ik_smmu_get_strtab(struct ik_smmu *s)
{
	IK_ASSERT(s);
	return &s->st;
}

/* ---------------------------------------------------------------- bring-up */

/* Disable every ECMDQ that is (or may be) enabled; the first error.  The
 * set is destroyed: commands go to the main queue from here on. */
static int ecmdq_disable_all(struct ik_smmu *s)
{
	int first = 0;

	if (s->eset) {
		struct ik_cmdq_stats st;

		for (unsigned i = 0; i < ik_cmdq_set_size(s->eset); i++) {
			ik_cmdq_get_stats(ik_cmdq_set_queue(s->eset, i), &st);
			s->ecmdq_retired[0] += st.doorbells;
			s->ecmdq_retired[1] += st.errors;
			s->ecmdq_retired[2] += st.retried;
			s->ecmdq_retired[3] += st.replaced;
			s->ecmdq_retired[4] += st.timeouts;
		}
		ik_cmdq_set_destroy(s->eset);
		s->eset = NULL;
	}
	for (unsigned i = 0; i < s->necq; i++) {
		struct ecq *e = &s->ecq[i];
		int err;

		if (!e->enabled)
			continue;
		wr(s, e->off + 8, (e->errack ? IK_SMMU_ECMDQ_PROD_ERRACK : 0) |
					  (e->prod_shadow & cmdq_wrap_mask(s)));
		err = wait_reg(s, e->off + 12, IK_SMMU_ECMDQ_CONS_ENACK, 0);
		if (err && !first)
			first = err;
		e->enabled = false;
	}
	return first;
}

IK_API int ik_smmu_disable(struct ik_smmu *s)
{
	int err, eerr;

	if (!s)
		return -EINVAL;
	eerr = ecmdq_disable_all(s);
	if (s->flags & IK_SMMU_F_ABORT_DISABLED) {
		err = gbpa_set_abort(s);
		if (err)
			return err;
	}
	err = cr0_write(s, 0);
	if (!err)
		s->enabled = false;
	return err ? err : eerr;
}

static ik_u32 cr1_value(const struct ik_smmu *s)
{
	ik_u32 c = s->coherent ? IK_SMMU_CR1_CACHE_WB : IK_SMMU_CR1_CACHE_NC;
	ik_u32 sh = s->coherent ? IK_SMMU_SH_ISH : IK_SMMU_SH_OSH;

	return c << IK_SMMU_CR1_QUEUE_IC_SHIFT | c << IK_SMMU_CR1_QUEUE_OC_SHIFT |
	       sh << IK_SMMU_CR1_QUEUE_SH_SHIFT | c << IK_SMMU_CR1_TABLE_IC_SHIFT |
	       c << IK_SMMU_CR1_TABLE_OC_SHIFT | sh << IK_SMMU_CR1_TABLE_SH_SHIFT;
}

static ik_u64 q_base(const struct ik_smmu *s, ik_u64 dma, unsigned log2)
{
	return (dma & IK_SMMU_Q_BASE_ADDR_MASK) | (s->coherent ? IK_SMMU_Q_BASE_RWA : 0) |
	       ((ik_u64)log2 & IK_SMMU_Q_BASE_LOG2SIZE_MASK);
}

/* Allocate the ECMDQ rings (first reset only). */
static int ecmdq_alloc(struct ik_smmu *s, const struct ik_smmu_ecmdq_info *info)
{
	unsigned n = s->ecmdq_max ? s->ecmdq_max : IK_ENV_NR_CPUS();
	unsigned qlog2 = 0;

	if (n > info->nr)
		n = info->nr;
	while ((1u << qlog2) < info->numq)
		qlog2++;
	s->ecq = (struct ecq *)ik_alloc(s->alloc, sizeof(*s->ecq) * n, IK_CACHELINE);
	if (!s->ecq)
		return -ENOMEM;
	IK_ENV_MEMSET(s->ecq, 0, sizeof(*s->ecq) * n);
	s->ecq_bytes = (ik_size)16 << s->cmdq_log2;
	for (unsigned i = 0; i < n; i++) {
		struct ecq *e = &s->ecq[i];
		void *p;
		int err;

		e->s = s;
		e->off = info->page0 + ((i >> qlog2) << 16) + IK_SMMU_ECMDQ_BASE(i & (info->numq - 1));
		ik_lock_init(&e->lock);
		err = ring_alloc(s, s->ecq_bytes, &p, &e->ring_dma);
		if (err) {
			s->necq = i;
			ecq_free(s);
			return err;
		}
		e->ring = (ik_u8 *)p;
		s->necq = i + 1;
	}
	if (s->ecq_bytes < 32)
		s->ecq_bytes = 32;
	return 0;
}

/* Step 9 of ik_smmu_reset(): program and enable the ECMDQs; on any failure
 * leave none enabled (the main queue serves). */
static void ecmdq_setup(struct ik_smmu *s)
{
	struct ik_smmu_ecmdq_info info;
	struct ik_cmdq_config *cfgs;
	unsigned n;
	int err;

	(void)ecmdq_disable_all(s);
	if (ik_smmu_ecmdq_probe(&s->mmio, &s->idr, &info))
		return;
	if (!s->ecq && ecmdq_alloc(s, &info))
		return;
	n = s->necq;
	for (unsigned i = 0; i < n; i++) {
		struct ecq *e = &s->ecq[i];
		ik_u32 c;

		/* Disabled first (a previous owner may have left it on). */
		if ((rd(s, e->off + 8) & IK_SMMU_ECMDQ_PROD_EN) ||
		    (rd(s, e->off + 12) & IK_SMMU_ECMDQ_CONS_ENACK)) {
			wr(s, e->off + 8, rd(s, e->off + 8) & ~IK_SMMU_ECMDQ_PROD_EN);
			if (wait_reg(s, e->off + 12, IK_SMMU_ECMDQ_CONS_ENACK, 0))
				goto fail;
		}
		ik_mmio_write64(&s->mmio, e->off, q_base(s, e->ring_dma, s->cmdq_log2));
		wr(s, e->off + 12, 0);
		c = rd(s, e->off + 12);
		e->errack = (c & IK_SMMU_ECMDQ_CONS_ERR) ? 1u : 0u;
		e->prod_shadow = 0;
		e->cons_good = 0;
		e->enabled = true; /* from here on EN may be set */
		ecq_prod_locked(e);
		if (wait_reg(s, e->off + 12, IK_SMMU_ECMDQ_CONS_ENACK, IK_SMMU_ECMDQ_CONS_ENACK))
			goto fail;
	}
	cfgs = (struct ik_cmdq_config *)ik_alloc(s->alloc, sizeof(*cfgs) * n, IK_CACHELINE);
	if (!cfgs)
		goto fail;
	for (unsigned i = 0; i < n; i++) {
		cfgs[i] = s->qcfg;
		cfgs[i].ring = s->ecq[i].ring;
		cfgs[i].ring_dma = s->ecq[i].ring_dma;
		cfgs[i].regs = &ecq_regs;
		cfgs[i].regs_ctx = &s->ecq[i];
		cfgs[i].alloc = s->alloc;
	}
	err = ik_cmdq_set_create(n, cfgs, &s->eset);
	ik_free(s->alloc, cfgs, sizeof(*cfgs) * n);
	if (!err)
		return;
	s->eset = NULL;
fail:
	ik_atomic_fetch_add(&s->ecmdq_enable_timeouts, 1, IK_MO_RELAXED);
	(void)ecmdq_disable_all(s);
}

IK_API int ik_smmu_reset(struct ik_smmu *s)
{
	struct ik_smmu_cmd c[3];
	ik_u64 base;
	ik_u32 cfg, g, gn, cr0;
	unsigned n = 0;
	int err;

	if (!s)
		return -EINVAL;
	s->queue_live = false;
	s->evtq_live = false;
	(void)ecmdq_disable_all(s);
	s->enabled = true; /* from here on CR0 may hold something */
	/* 1-2: quiesce. */
	if (s->flags & IK_SMMU_F_ABORT_DISABLED) {
		err = gbpa_set_abort(s);
		if (err)
			return err;
	}
	err = cr0_write(s, 0);
	if (err)
		return err;
	wr(s, IK_SMMU_IRQ_CTRL, 0);
	err = wait_reg(s, IK_SMMU_IRQ_CTRLACK, 7, 0);
	if (err)
		return err;
	g = rd(s, IK_SMMU_GERROR);
	gn = rd(s, IK_SMMU_GERRORN);
	if (g ^ gn)
		wr(s, IK_SMMU_GERRORN, g); /* errors left by a previous owner */
	ik_store_release(&s->gerrorn, g);
	/* 3-4: attributes and the stream table. */
	wr(s, IK_SMMU_CR1, cr1_value(s));
	wr(s, IK_SMMU_CR2, IK_SMMU_CR2_RECINVSID | IK_SMMU_CR2_PTM);
	ik_smmu_strtab_regs(&s->st, &base, &cfg);
	ik_mmio_write64(&s->mmio, IK_SMMU_STRTAB_BASE, base);
	wr(s, IK_SMMU_STRTAB_BASE_CFG, cfg);
	/* 5-6: the command queue. */
	ik_mmio_write64(&s->mmio, IK_SMMU_CMDQ_BASE, q_base(s, s->cmdq_dma, s->cmdq_log2));
	wr(s, IK_SMMU_CMDQ_PROD, 0);
	wr(s, IK_SMMU_CMDQ_CONS, 0);
	s->prod_shadow = 0;
	s->cons_good = 0;
	err = ik_cmdq_init(s->cmdq_mem, s->cmdq_memsize, &s->qcfg, &s->q);
	if (err)
		return err;
	cr0 = IK_SMMU_CR0_CMDQEN;
	err = cr0_write(s, cr0);
	if (err)
		return err;
	s->queue_live = true;
	IK_ENV_MEMSET(c, 0, sizeof(c));
	c[n].op = IK_SMMU_CMD_CFGI_STE_RANGE;
	c[n++].range = IK_SMMU_CFGI_RANGE_ALL;
	if (s->idr.hyp)
		c[n++].op = IK_SMMU_CMD_TLBI_EL2_ALL;
	c[n++].op = IK_SMMU_CMD_TLBI_NSNH_ALL;
	err = ik_smmu_issue(s, c, n);
	if (err)
		return err;
	/* 7: the event queue (PROD/CONS in page 1). */
	ik_mmio_write64(&s->mmio, IK_SMMU_EVTQ_BASE, q_base(s, s->evtq_dma, s->evtq_log2));
	wr(s, IK_SMMU_EVTQ_PROD, 0);
	wr(s, IK_SMMU_EVTQ_CONS, 0);
	s->evtq_cons = 0;
	s->evtq_ovf_pending = false;
	cr0 |= IK_SMMU_CR0_EVTQEN;
	err = cr0_write(s, cr0);
	if (err)
		return err;
	s->evtq_live = true;
	/* 8: translate. */
	err = cr0_write(s, cr0 | IK_SMMU_CR0_SMMUEN);
	if (err)
		return err;
	/* 9: the ECMDQs, if asked for and present. */
	if (s->flags & IK_SMMU_F_ECMDQ)
		ecmdq_setup(s);
	return 0;
}

/* ---------------------------------------------------------------- commands */

/* Commands per queue call: small enough for a kernel stack frame. */
#define ISSUE_GROUP 16u

IK_API int ik_smmu_issue(void *ctx, const struct ik_smmu_cmd *cmds, unsigned n)
{
	struct ik_smmu *s = (struct ik_smmu *)ctx;
	ik_u64 w[ISSUE_GROUP][2];
	struct ik_cmdq *q;
	unsigned done = 0;
	int first = 0;

	if (!s || (!cmds && n) || !s->queue_live)
		return -EINVAL;
	/* Every command encodes, or nothing is issued. */
	for (unsigned i = 0; i < n; i++)
		if (ik_smmu_cmd_encode(&cmds[i], w[0]))
			return -EINVAL;
	ik_atomic_fetch_add(&s->issues, 1, IK_MO_RELAXED);
	/* One queue for the whole call: every group and its sync go there. */
	q = s->eset ? ik_cmdq_set_pick(s->eset) : s->q;
	if (!n)
		return ik_cmdq_sync(q);
	/* Each group ends with its own sync, so that an error in any group
	 * reaches this caller. */
	while (done < n) {
		unsigned k = n - done < ISSUE_GROUP ? n - done : ISSUE_GROUP;
		int err;

		for (unsigned i = 0; i < k; i++)
			(void)ik_smmu_cmd_encode(&cmds[done + i], w[i]);
		err = ik_cmdq_issue(q, w, k, IK_CMDQ_SYNC);
		if (err && !first)
			first = err;
		if (err == -ETIMEDOUT)
			break; /* the queue is stuck: stop adding to it */
		done += k;
	}
	return first;
}

IK_API int ik_smmu_write_ste(struct ik_smmu *s, ik_u32 sid, const ik_u64 ste[8])
{
	int err;

	if (!s)
		return -EINVAL;
	err = ik_smmu_strtab_write(&s->st, sid, ste, s->queue_live ? ik_smmu_issue : NULL, s);
	if (!err)
		ik_atomic_fetch_add(&s->ste_writes, 1, IK_MO_RELAXED);
	return err;
}

IK_API int ik_smmu_write_cd(struct ik_smmu *s, struct ik_smmu_cdtab *cdt, ik_u32 ssid,
			    const ik_u64 cd[8], const ik_u32 *sids, unsigned nsids)
{
	int err;

	if (!s)
		return -EINVAL;
	err = ik_smmu_cdtab_write(cdt, ssid, cd, sids, nsids, s->queue_live ? ik_smmu_issue : NULL,
				  s);
	if (!err)
		ik_atomic_fetch_add(&s->cd_writes, 1, IK_MO_RELAXED);
	return err;
}

/* The TLBIs ik_smmu_inv_gather() plans at most: its plan is on the stack
 * (56 bytes a command on 64-bit), and every library frame stays within 1024
 * bytes for kernels (tests/frame_size.sh; 16 took 1032 with clang). */
#define INV_MAX_TLBI 12u

IK_API int ik_smmu_inv_gather(struct ik_smmu *s, const struct ik_pgtable *pt,
			      const struct ik_gather *g, const struct ik_smmu_inv_target *t)
{
	struct ik_smmu_cmd plan[IK_SMMU_PLAN_MAX_CMDS(INV_MAX_TLBI)];
	struct ik_smmu_inv_target tt;
	int n;

	if (!s || !t)
		return -EINVAL;
	tt = *t;
	if (!tt.max_tlbi || tt.max_tlbi > INV_MAX_TLBI)
		tt.max_tlbi = INV_MAX_TLBI;
	n = ik_smmu_plan_inv(&s->idr, pt, g, &tt, plan, IK_ARRAY_SIZE(plan));
	if (n <= 0)
		return n;
	/* The plan ends with CMD_SYNC; ik_smmu_issue() appends the queue's. */
	return ik_smmu_issue(s, plan, (unsigned)n - 1);
}

/* ---------------------------------------------------------------- events, errors */

IK_API int ik_smmu_event_pop(struct ik_smmu *s, struct ik_smmu_event *ev)
{
	ik_u32 prod, mask, idx;
	ik_u64 rec[4];
	const ik_u64 *slot;

	if (!s || !ev || !s->evtq_live)
		return -EINVAL;
	mask = (2u << s->evtq_log2) - 1;
	/* The read orders later loads of the ring after it (ik_mmio). */
	prod = rd(s, IK_SMMU_EVTQ_PROD);
	if ((prod ^ s->evtq_cons) & IK_SMMU_EVTQ_OVFLG) {
		/* Records were dropped: acknowledge with the next CONS write. */
		s->evtq_cons ^= IK_SMMU_EVTQ_OVFLG;
		s->evtq_ovf_pending = true;
		s->evtq_overflows++;
	}
	if (((prod ^ s->evtq_cons) & mask) == 0) {
		if (s->evtq_ovf_pending)
			wr(s, IK_SMMU_EVTQ_CONS, s->evtq_cons);
		return -ENOENT;
	}
	idx = s->evtq_cons & ((1u << s->evtq_log2) - 1);
	slot = s->evtq_ring + (ik_size)idx * 4;
	ik_dma_clean(s->dma, slot, s->evtq_dma + (ik_u64)idx * 32, 32);
	for (unsigned k = 0; k < 4; k++)
		rec[k] = ((const volatile ik_u64 *)slot)[k];
	(void)ik_smmu_event_decode(rec, ev);
	ev->overflow = s->evtq_ovf_pending;
	s->evtq_ovf_pending = false;
	s->evtq_cons = (((s->evtq_cons & mask) + 1) & mask) | (s->evtq_cons & IK_SMMU_EVTQ_OVFLG);
	wr(s, IK_SMMU_EVTQ_CONS, s->evtq_cons);
	s->events++;
	return 0;
}

IK_API int ik_smmu_gerror_poll(struct ik_smmu *s, struct ik_smmu_gerror *out)
{
	ik_u32 g, active, others;

	if (!s)
		return -EINVAL;
	g = rd(s, IK_SMMU_GERROR);
	active = g ^ ik_load_acquire(&s->gerrorn);
	if (out)
		(void)ik_smmu_gerror_decode(active, 0, out);
	if ((active & IK_SMMU_GERROR_CMDQ_ERR) && s->queue_live)
		(void)ik_cmdq_poll_errors(s->q);
	others = active & ~IK_SMMU_GERROR_CMDQ_ERR;
	if (others) {
		ik_lock(&s->gerr_lock);
		/* Toggle only what this read saw active (another caller may
		 * have acknowledged some of it meanwhile). */
		others &= g ^ s->gerrorn;
		wr(s, IK_SMMU_GERRORN, s->gerrorn ^ others);
		ik_store_release(&s->gerrorn, s->gerrorn ^ others);
		ik_unlock(&s->gerr_lock);
		for (ik_u32 b = others; b; b &= b - 1)
			ik_atomic_fetch_add(&s->gerrors, 1, IK_MO_RELAXED);
	}
	/* CMDQP_ERR is acknowledged first (above): an ECMDQ error raised after
	 * the polls below activates it again. */
	if ((active & IK_SMMU_GERROR_CMDQP_ERR) && s->eset)
		for (unsigned i = 0; i < ik_cmdq_set_size(s->eset); i++)
			(void)ik_cmdq_poll_errors(ik_cmdq_set_queue(s->eset, i));
	return (int)(active & 0x7fffffffu);
}

IK_API void ik_smmu_get_stats(const struct ik_smmu *s, struct ik_smmu_stats *st)
{
	IK_ASSERT(s && st);
	IK_ENV_MEMSET(st, 0, sizeof(*st));
	st->events = s->events;
	st->evtq_overflows = s->evtq_overflows;
	st->gerrors = ik_load_relaxed(&s->gerrors);
	st->ste_writes = ik_load_relaxed(&s->ste_writes);
	st->cd_writes = ik_load_relaxed(&s->cd_writes);
	st->issues = ik_load_relaxed(&s->issues);
	if (s->queue_live)
		ik_cmdq_get_stats(s->q, &st->cmdq);
}

/* ---------------------------------------------------------------- ECMDQ */

IK_API int ik_smmu_ecmdq_probe(const struct ik_mmio *m, const struct ik_smmu_idr *id,
			       struct ik_smmu_ecmdq_info *out)
{
	ik_u32 idr6, lp, lq;
	ik_u64 prev = 0;

	if (!m || !id || !out || !m->read32)
		return -EINVAL;
	if (!id->ecmdq)
		return -ENODEV;
	idr6 = ik_mmio_read32(m, IK_SMMU_IDR6);
	lp = (idr6 >> IK_SMMU_IDR6_LOG2NUMP_SHIFT) & 0xf;
	lq = (idr6 >> IK_SMMU_IDR6_LOG2NUMQ_SHIFT) & 0xf;
	if (lp > 8 || lq > 8 || lp + lq > 8)
		return -ENODEV;
	for (ik_u32 n = 0; n < (1u << lp); n++) {
		ik_u64 b = ik_mmio_read64(m, IK_SMMU_CP_BASE(n));
		ik_u64 addr = b & IK_SMMU_CP_BASE_ADDR_MASK;

		if (!(b & IK_SMMU_CP_BASE_PRESET) || ((b >> IK_SMMU_CP_BASE_CMDQGS_SHIFT) & 3) != 1)
			return -ENODEV;
		/* One 64 KiB page after the other, within 32-bit offsets, and
		 * clear of register pages 0 and 1. */
		if (n ? addr != prev + 0x10000 : addr < 0x20000)
			return -ENODEV;
		if (addr > 0xffff0000ull)
			return -ENODEV;
		prev = addr;
		if (!n)
			out->page0 = (ik_u32)addr;
	}
	out->nump = 1u << lp;
	out->numq = 1u << lq;
	out->nr = out->nump * out->numq;
	return 0;
}

IK_API int ik_smmu_ecmdq_limit(struct ik_smmu *s, unsigned max)
{
	if (!s || max > 256)
		return -EINVAL;
	if (s->ecq)
		return -EBUSY;
	s->ecmdq_max = max;
	return 0;
}

IK_API unsigned ik_smmu_ecmdq_count(const struct ik_smmu *s)
{
	IK_ASSERT(s);
	return s->eset ? ik_cmdq_set_size(s->eset) : 0;
}

IK_API struct ik_cmdq_set *ik_smmu_ecmdq_set(struct ik_smmu *s)
{
	IK_ASSERT(s);
	return s->eset;
}

IK_API int ik_smmu_get_ecmdq_stats(const struct ik_smmu *s, struct ik_smmu_ecmdq_stats *st)
{
	if (!s || !st)
		return -EINVAL;
	IK_ENV_MEMSET(st, 0, sizeof(*st));
	st->enable_timeouts = ik_load_relaxed(&s->ecmdq_enable_timeouts);
	st->spurious_errors = ik_load_relaxed(&s->ecmdq_spurious);
	st->hostile_cons = ik_load_relaxed(&s->ecmdq_hostile);
	st->cmdq.doorbells = s->ecmdq_retired[0];
	st->cmdq.errors = s->ecmdq_retired[1];
	st->cmdq.retried = s->ecmdq_retired[2];
	st->cmdq.replaced = s->ecmdq_retired[3];
	st->cmdq.timeouts = s->ecmdq_retired[4];
	if (s->eset) {
		struct ik_cmdq_set *set = (struct ik_cmdq_set *)s->eset;

		for (unsigned i = 0; i < ik_cmdq_set_size(set); i++) {
			struct ik_cmdq_stats q;

			ik_cmdq_get_stats(ik_cmdq_set_queue(set, i), &q);
			st->cmdq.doorbells += q.doorbells;
			st->cmdq.errors += q.errors;
			st->cmdq.retried += q.retried;
			st->cmdq.replaced += q.replaced;
			st->cmdq.timeouts += q.timeouts;
		}
	}
	return 0;
}
