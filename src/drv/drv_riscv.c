/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RISC-V IOMMU driver core (<iommukit/drv/riscv.h>): the register file and
 * bring-up - capabilities and fctl, ddtp with its busy handshake, the
 * command queue as an ik_cmdq with error recovery, the fault and
 * page-request queues.
 *
 * Queue base registers are LOG2SZ-1 [4:0] | PPN [53:10]; a queue is
 * aligned to its size and at least to 4 KiB.  Every handshake polls with a
 * bound (config timeout_ns).
 */
#include <iommukit/drv/riscv.h>
#include <iommukit/atomic.h>
#include "drv_int.h"

#define QB_PPN 0x003ffffffffffc00ull	/* [53:10] */
#define CQ_ERRORS (IK_RISCV_QCSR_MF | IK_RISCV_CQCSR_CMD_TO | IK_RISCV_CQCSR_CMD_ILL)
#define DDTP_WRITABLE (IK_RISCV_DDTP_MODE_MASK | IK_RISCV_DDTP_PPN_MASK)

/* ================================================================ page requests */

IK_API int ik_riscv_page_req_decode(const ik_u64 w[2], struct ik_riscv_page_req *r)
{
	struct ik_riscv_page_req o;
	ik_u64 h;

	if (!w || !r)
		return -EINVAL;
	h = w[0];
	/* reserved: 11:0, 39:35 */
	if (h & (0xfffull | (0x1full << 35)))
		return -EINVAL;
	IK_ENV_MEMSET(&o, 0, sizeof(o));
	o.pid = (ik_u32)(h >> 12) & 0xfffffu;
	o.pv = (h >> 32) & 1;
	o.priv = (h >> 33) & 1;
	o.exec = (h >> 34) & 1;
	o.did = (ik_u32)(h >> 40);
	if (!o.pv && (o.pid || o.priv))
		return -EINVAL;
	o.addr = w[1] & ~0xfffull;
	o.prgi = (ik_u16)((w[1] >> 3) & 0x1ff);
	o.last = (w[1] >> 2) & 1;
	o.write = (w[1] >> 1) & 1;
	o.read = w[1] & 1;
	*r = o;
	return 0;
}

/* ================================================================ command queue registers */

static ik_u32 cq_read_cons(void *ctx, ik_u32 *cerror)
{
	struct ik_riscv_cq_regs *r = (struct ik_riscv_cq_regs *)ctx;
	/* The error state first, then the index (edge C1: the accessor
	 * orders the read before later loads of the ring). */
	ik_u32 csr = ik_mmio_read32(r->mmio, IK_RISCV_REG_CQCSR);
	ik_u32 ce = IK_CMDQ_CERROR_NONE;

	if (csr & IK_RISCV_CQCSR_CMD_ILL)
		ce = IK_CMDQ_CERROR_ILL;
	else if (csr & IK_RISCV_QCSR_MF)
		ce = IK_CMDQ_CERROR_ABT;
	else if (csr & IK_RISCV_CQCSR_CMD_TO)
		ce = IK_CMDQ_CERROR_ATC_INV_SYNC;
	if (ce)
		ik_store_relaxed(&r->last_cqcsr, csr);
	*cerror = ce;
	return ik_mmio_read32(r->mmio, IK_RISCV_REG_CQH) & r->mask;
}

static void cq_write_prod(void *ctx, ik_u32 prod)
{
	struct ik_riscv_cq_regs *r = (struct ik_riscv_cq_regs *)ctx;

	/* R2: the accessor orders the ring stores before the register write.
	 * The lock keeps ack_error's cqt rewrite from going backwards. */
	ik_lock(&r->lock);
	r->tail = prod & r->mask;
	ik_mmio_write32(r->mmio, IK_RISCV_REG_CQT, r->tail);
	ik_unlock(&r->lock);
}

static void cq_ack_error(void *ctx)
{
	struct ik_riscv_cq_regs *r = (struct ik_riscv_cq_regs *)ctx;
	ik_u32 csr;

	/* E1: the repaired command is stored before these writes.  Clear
	 * the error bits that are set (RW1C; writing cqen as read keeps the
	 * queue on), then cqt again: QEMU 10.0.2 resumes only on a cqt
	 * write. */
	ik_lock(&r->lock);
	csr = ik_mmio_read32(r->mmio, IK_RISCV_REG_CQCSR);
	if (csr & CQ_ERRORS)
		ik_mmio_write32(r->mmio, IK_RISCV_REG_CQCSR,
				(csr & (CQ_ERRORS | IK_RISCV_QCSR_EN | IK_RISCV_QCSR_IE)));
	ik_mmio_write32(r->mmio, IK_RISCV_REG_CQT, r->tail);
	ik_store_relaxed(&r->errors, r->errors + 1);
	ik_unlock(&r->lock);
}

IK_API const struct ik_cmdq_regs ik_riscv_cq_regs_ops = {
	cq_read_cons, cq_write_prod, NULL, cq_ack_error,
};

IK_API int ik_riscv_cq_regs_init(struct ik_riscv_cq_regs *r, const struct ik_mmio *mmio,
				 unsigned log2_entries)
{
	if (!r || !mmio || log2_entries < IK_CMDQ_LOG2_MIN || log2_entries > IK_CMDQ_LOG2_MAX)
		return -EINVAL;
	IK_ENV_MEMSET(r, 0, sizeof(*r));
	r->mmio = mmio;
	r->mask = ((ik_u32)1 << log2_entries) - 1;
	ik_lock_init(&r->lock);
	return 0;
}

/* ================================================================ the IOMMU */

struct dmabuf {
	void *cpu;
	ik_u64 dma;
	ik_size size;
};

struct ik_riscv {
	struct ik_mmio mmio;
	struct ik_dma_mem dma;
	const struct ik_allocator *alloc;
	struct ik_riscv_caps caps;
	ik_u32 flags;
	ik_u64 timeout;
	unsigned cq_log2, fq_log2, pq_log2;
	bool enabled, has_pq;
	struct dmabuf cq, status, fq, pq;
	void *qmem;
	ik_size qmem_size;
	struct ik_cmdq *q;
	struct ik_riscv_cq_regs cqr;
	ik_u32 fqh, pqh;
	struct ik_riscv_stats st;
};

static int wait32(const struct ik_riscv *u, ik_u32 off, ik_u32 mask, ik_u32 want)
{
	ik_u64 deadline = 0;

	for (;;) {
		if ((ik_mmio_read32(&u->mmio, off) & mask) == want)
			return 0;
		if (ik_drv_poll_step(&deadline, u->timeout))
			return -ETIMEDOUT;
	}
}

static int wait_ddtp_idle(const struct ik_riscv *u, ik_u64 *val)
{
	ik_u64 deadline = 0;

	for (;;) {
		*val = ik_mmio_read64(&u->mmio, IK_RISCV_REG_DDTP);
		if (!(*val & IK_RISCV_DDTP_BUSY))
			return 0;
		if (ik_drv_poll_step(&deadline, u->timeout))
			return -ETIMEDOUT;
	}
}

static bool log2_ok(unsigned v, unsigned lo, unsigned hi)
{
	return v == 0 || (v >= lo && v <= hi);
}

IK_API int ik_riscv_create(const struct ik_riscv_config *cfg, struct ik_riscv **out)
{
	struct ik_riscv_caps caps;
	struct ik_riscv *u;
	ik_u32 fctl;

	if (!cfg || !out || !ik_drv_io_ok(cfg->mmio, cfg->dma) ||
	    (cfg->flags & ~(IK_RISCV_CFG_WSI | IK_RISCV_CFG_IE)) ||
	    !log2_ok(cfg->cq_log2, IK_CMDQ_LOG2_MIN, IK_CMDQ_LOG2_MAX) ||
	    !log2_ok(cfg->fq_log2, 1, 16) || !log2_ok(cfg->pq_log2, 1, 16))
		return -EINVAL;
	if (ik_riscv_caps_decode(ik_mmio_read64(cfg->mmio, IK_RISCV_REG_CAPS), &caps))
		return -EOPNOTSUPP;
	fctl = ik_mmio_read32(cfg->mmio, IK_RISCV_REG_FCTL);
	if ((fctl & IK_RISCV_FCTL_BE) || ((cfg->flags & IK_RISCV_CFG_WSI) && caps.igs == 0))
		return -EOPNOTSUPP;
	u = (struct ik_riscv *)ik_drv_zalloc(cfg->alloc, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->mmio = *cfg->mmio;
	u->dma = *cfg->dma;
	u->alloc = cfg->alloc;
	u->caps = caps;
	u->flags = cfg->flags;
	u->timeout = cfg->timeout_ns ? cfg->timeout_ns : 1000000000ull;
	u->cq_log2 = cfg->cq_log2 ? cfg->cq_log2 : 8;
	u->fq_log2 = cfg->fq_log2 ? cfg->fq_log2 : 8;
	u->pq_log2 = cfg->pq_log2 ? cfg->pq_log2 : 8;
	u->has_pq = caps.ats;
	*out = u;
	return 0;
}

static void buf_free(struct ik_riscv *u, struct dmabuf *b)
{
	ik_dma_free(&u->dma, b->cpu, b->dma, b->size);
	IK_ENV_MEMSET(b, 0, sizeof(*b));
}

/* A zeroed, cleaned buffer of `size` bytes aligned to `align`, below 2^PAS. */
static int buf_get(struct ik_riscv *u, struct dmabuf *b, ik_size size, ik_size align)
{
	int err;

	if (b->cpu)
		return 0;
	err = ik_drv_dma_alloc_below(&u->dma, size, align, u->caps.pas, &b->cpu, &b->dma);
	if (err)
		return err;
	b->size = size;
	ik_dma_wmb();
	ik_dma_clean(&u->dma, b->cpu, b->dma, size);
	return 0;
}

static ik_size q_align(ik_size bytes)
{
	return bytes < 4096 ? 4096 : bytes;
}

static ik_u64 qb_value(const struct dmabuf *b, unsigned log2)
{
	return ((b->dma >> 12) << 10 & QB_PPN) | (ik_u64)(log2 - 1);
}

static void queue_cfg(struct ik_riscv *u, struct ik_cmdq_config *qc)
{
	ik_drv_queue_cfg(qc, &ik_cmdq_fmt_riscv, u->cq_log2, u->cq.cpu, u->cq.dma,
			 &ik_riscv_cq_regs_ops, &u->cqr, u->timeout);
	/* cqh may pass an IOFENCE.C before its write lands: completion by
	 * status words, never by cqh alone */
	qc->status = (ik_u32 *)u->status.cpu;
	qc->status_dma = u->status.dma;
}

static void queues_free(struct ik_riscv *u)
{
	buf_free(u, &u->cq);
	buf_free(u, &u->status);
	buf_free(u, &u->fq);
	buf_free(u, &u->pq);
	if (u->qmem)
		ik_free(u->alloc, u->qmem, u->qmem_size);
	u->qmem = NULL;
	u->q = NULL;
}

static int queues_alloc(struct ik_riscv *u)
{
	struct ik_cmdq_config qc;
	ik_size cqb = (ik_size)16 << u->cq_log2, fqb = (ik_size)32 << u->fq_log2;
	ik_size pqb = (ik_size)16 << u->pq_log2;
	int err;

	err = buf_get(u, &u->cq, cqb, q_align(cqb));
	if (!err)
		err = buf_get(u, &u->status, (ik_size)4 << u->cq_log2, 64);
	if (!err)
		err = buf_get(u, &u->fq, fqb, q_align(fqb));
	if (!err && u->has_pq)
		err = buf_get(u, &u->pq, pqb, q_align(pqb));
	if (!err && !u->qmem) {
		queue_cfg(u, &qc);
		u->qmem_size = ik_cmdq_memsize(&qc);
		u->qmem = u->qmem_size ? ik_alloc(u->alloc, u->qmem_size, IK_CACHELINE) : NULL;
		if (!u->qmem)
			err = -ENOMEM;
	}
	if (err)
		queues_free(u);
	return err;
}

/* Turn a queue off (csr = 0) and wait until it is: 0 or -ETIMEDOUT. */
static int queue_off(struct ik_riscv *u, ik_u32 csr_off)
{
	ik_mmio_write32(&u->mmio, csr_off, 0);
	return wait32(u, csr_off, IK_RISCV_QCSR_ON | IK_RISCV_QCSR_BUSY, 0);
}

/* Program a queue's base, then enable it and wait for ON: 0, -ETIMEDOUT, or
 * -EIO when it reports a memory fault instead. */
static int queue_on(struct ik_riscv *u, ik_u32 base_off, ik_u64 base, ik_u32 csr_off)
{
	ik_u32 en = IK_RISCV_QCSR_EN | ((u->flags & IK_RISCV_CFG_IE) ? IK_RISCV_QCSR_IE : 0);
	ik_u32 csr;
	ik_u64 deadline = 0;

	ik_mmio_write64(&u->mmio, base_off, base);
	ik_mmio_write32(&u->mmio, csr_off, en);
	for (;;) {
		csr = ik_mmio_read32(&u->mmio, csr_off);
		if (csr & IK_RISCV_QCSR_MF)
			return -EIO;
		if ((csr & (IK_RISCV_QCSR_ON | IK_RISCV_QCSR_BUSY)) == IK_RISCV_QCSR_ON)
			return 0;
		if (ik_drv_poll_step(&deadline, u->timeout))
			return -ETIMEDOUT;
	}
}

static int queues_off(struct ik_riscv *u)
{
	int err = queue_off(u, IK_RISCV_REG_CQCSR), e2;

	e2 = queue_off(u, IK_RISCV_REG_FQCSR);
	err = err ? err : e2;
	if (u->has_pq) {
		e2 = queue_off(u, IK_RISCV_REG_PQCSR);
		err = err ? err : e2;
	}
	return err;
}

IK_API int ik_riscv_enable(struct ik_riscv *u)
{
	struct ik_cmdq_config qc;
	struct ik_riscv_cmd c[3];
	ik_u64 w[6];
	ik_u32 fctl;
	int err;

	if (!u)
		return -EINVAL;
	if (u->enabled)
		return -EBUSY;
	err = queues_alloc(u);
	if (err)
		return err;
	/* The queues must be off before their bases may be written. */
	err = queues_off(u);
	if (err)
		return err;
	fctl = ik_mmio_read32(&u->mmio, IK_RISCV_REG_FCTL) & ~IK_RISCV_FCTL_WSI;
	if (u->flags & IK_RISCV_CFG_WSI)
		fctl |= IK_RISCV_FCTL_WSI;
	ik_mmio_write32(&u->mmio, IK_RISCV_REG_FCTL, fctl);
	err = ik_riscv_cq_regs_init(&u->cqr, &u->mmio, u->cq_log2);
	if (err)
		return err;
	ik_mmio_write32(&u->mmio, IK_RISCV_REG_CQT, 0);
	err = queue_on(u, IK_RISCV_REG_CQB, qb_value(&u->cq, u->cq_log2), IK_RISCV_REG_CQCSR);
	if (!err) {
		u->fqh = 0;
		ik_mmio_write32(&u->mmio, IK_RISCV_REG_FQH, 0);
		err = queue_on(u, IK_RISCV_REG_FQB, qb_value(&u->fq, u->fq_log2),
			       IK_RISCV_REG_FQCSR);
	}
	if (!err && u->has_pq) {
		u->pqh = 0;
		ik_mmio_write32(&u->mmio, IK_RISCV_REG_PQH, 0);
		err = queue_on(u, IK_RISCV_REG_PQB, qb_value(&u->pq, u->pq_log2),
			       IK_RISCV_REG_PQCSR);
	}
	if (!err) {
		queue_cfg(u, &qc);
		err = ik_cmdq_init(u->qmem, u->qmem_size, &qc, &u->q);
	}
	if (!err) {
		/* Whatever an earlier owner left cached: every address space,
		 * every device context, then the fence. */
		IK_ENV_MEMSET(c, 0, sizeof(c));
		c[0].opcode = IK_RISCV_CMD_IOTINVAL;
		c[0].func3 = IK_RISCV_IOTINVAL_VMA;
		c[1].opcode = IK_RISCV_CMD_IOTINVAL;
		c[1].func3 = IK_RISCV_IOTINVAL_GVMA;
		c[2].opcode = IK_RISCV_CMD_IODIR;
		c[2].func3 = IK_RISCV_IODIR_INVAL_DDT;
		for (unsigned i = 0; i < 3 && !err; i++)
			err = ik_riscv_cmd_encode(&c[i], &w[2 * i]);
		if (!err)
			err = ik_cmdq_issue(u->q, w, 3, IK_CMDQ_SYNC);
	}
	if (err) {
		(void)queues_off(u);
		u->q = NULL;
		return err;
	}
	u->enabled = true;
	return 0;
}

IK_API int ik_riscv_disable(struct ik_riscv *u)
{
	int err;

	if (!u)
		return -EINVAL;
	err = queues_off(u);
	if (!err)
		u->enabled = false;
	return err;
}

IK_API void ik_riscv_destroy(struct ik_riscv *u)
{
	if (!u)
		return;
	if (u->enabled && ik_riscv_disable(u)) {
		/* The IOMMU may still write its queues: leak them rather than
		 * free memory under it; free only the object. */
		if (u->qmem)
			ik_free(u->alloc, u->qmem, u->qmem_size);
		ik_free(u->alloc, u, sizeof(*u));
		return;
	}
	queues_free(u);
	ik_free(u->alloc, u, sizeof(*u));
}

IK_API const struct ik_riscv_caps *ik_riscv_get_caps(const struct ik_riscv *u)
{
	IK_ASSERT(u);
	return &u->caps;
}

IK_API struct ik_cmdq *ik_riscv_queue(struct ik_riscv *u)
{
	IK_ASSERT(u);
	return u->enabled ? u->q : NULL;
}

IK_API int ik_riscv_set_ddtp(struct ik_riscv *u, ik_u64 ddtp)
{
	ik_u64 cur;
	unsigned mode = (unsigned)(ddtp & IK_RISCV_DDTP_MODE_MASK);
	int err;

	if (!u || (ddtp & ~DDTP_WRITABLE) || mode > IK_RISCV_DDTP_MODE_3LVL ||
	    (mode <= IK_RISCV_DDTP_MODE_BARE && (ddtp & IK_RISCV_DDTP_PPN_MASK)))
		return -EINVAL;
	err = wait_ddtp_idle(u, &cur);
	if (err)
		return err;
	ik_mmio_write64(&u->mmio, IK_RISCV_REG_DDTP, ddtp);
	err = wait_ddtp_idle(u, &cur);
	if (err)
		return err;
	return (cur & IK_RISCV_DDTP_MODE_MASK) == mode ? 0 : -EOPNOTSUPP;
}

/* Acknowledge overflow and memory-fault bits of a fault / page-request
 * queue (RW1C, keeping EN and IE as they are). */
static void q_ack(struct ik_riscv *u, ik_u32 csr_off, ik_u64 *of, ik_u64 *mf)
{
	ik_u32 csr = ik_mmio_read32(&u->mmio, csr_off);
	ik_u32 bits = csr & (IK_RISCV_QCSR_OF | IK_RISCV_QCSR_MF);

	if (!bits)
		return;
	if (bits & IK_RISCV_QCSR_OF)
		ik_store_relaxed(of, *of + 1);
	if ((bits & IK_RISCV_QCSR_MF) && mf)
		ik_store_relaxed(mf, *mf + 1);
	ik_mmio_write32(&u->mmio, csr_off, bits | (csr & (IK_RISCV_QCSR_EN | IK_RISCV_QCSR_IE)));
}

/* The next record of a queue at head *h of 2^log2 `words`-word records, or
 * -ENOENT (tail = head; the pending bit `ip` cleared), -ERANGE (a tail
 * beyond the queue: the register cannot be trusted). */
static int q_pop(struct ik_riscv *u, const struct dmabuf *b, unsigned log2, unsigned words,
		 ik_u32 *h, ik_u32 head_off, ik_u32 tail_off, ik_u32 ip, ik_u64 *rec)
{
	ik_u32 mask = ((ik_u32)1 << log2) - 1;
	ik_u32 t = ik_mmio_read32(&u->mmio, tail_off);
	const ik_u64 *e;

	if (t > mask)
		return -ERANGE;
	if (t == *h) {
		ik_mmio_write32(&u->mmio, IK_RISCV_REG_IPSR, ip);
		/* a record may have come between the tail read and the
		 * clear: look once more */
		if (ik_mmio_read32(&u->mmio, tail_off) == *h)
			return -ENOENT;
	}
	e = (const ik_u64 *)b->cpu + (ik_size)*h * words;
	for (unsigned i = 0; i < words; i++)
		rec[i] = ik_load_relaxed(&e[i]);
	*h = (*h + 1) & mask;
	ik_mmio_write32(&u->mmio, head_off, *h);
	return 0;
}

IK_API int ik_riscv_fault_pop(struct ik_riscv *u, struct ik_riscv_fault *f, ik_u64 raw[4])
{
	ik_u64 rec[4];
	int err;

	if (!u || !f || !u->enabled)
		return -EINVAL;
	q_ack(u, IK_RISCV_REG_FQCSR, &u->st.fq_overflows, &u->st.fq_mem_faults);
	err = q_pop(u, &u->fq, u->fq_log2, 4, &u->fqh, IK_RISCV_REG_FQH, IK_RISCV_REG_FQT,
		    IK_RISCV_IPSR_FIP, rec);
	if (err)
		return err;
	if (raw)
		for (unsigned i = 0; i < 4; i++)
			raw[i] = rec[i];
	ik_store_relaxed(&u->st.faults, u->st.faults + 1);
	if (ik_riscv_fault_decode(rec, f)) {
		ik_store_relaxed(&u->st.bad_faults, u->st.bad_faults + 1);
		return -EIO;
	}
	return 0;
}

IK_API int ik_riscv_page_req_pop(struct ik_riscv *u, struct ik_riscv_page_req *r, ik_u64 raw[2])
{
	ik_u64 rec[2];
	int err;

	if (!u || !r || !u->enabled)
		return -EINVAL;
	if (!u->has_pq)
		return -ENODEV;
	q_ack(u, IK_RISCV_REG_PQCSR, &u->st.pq_overflows, NULL);
	err = q_pop(u, &u->pq, u->pq_log2, 2, &u->pqh, IK_RISCV_REG_PQH, IK_RISCV_REG_PQT,
		    IK_RISCV_IPSR_PIP, rec);
	if (err)
		return err;
	if (raw) {
		raw[0] = rec[0];
		raw[1] = rec[1];
	}
	ik_store_relaxed(&u->st.page_reqs, u->st.page_reqs + 1);
	return ik_riscv_page_req_decode(rec, r) ? -EIO : 0;
}

IK_API int ik_riscv_get_stats(const struct ik_riscv *u, struct ik_riscv_stats *st)
{
	if (!u || !st)
		return -EINVAL;
	*st = u->st;
	st->cq_errors = ik_load_relaxed(&u->cqr.errors);
	return 0;
}
