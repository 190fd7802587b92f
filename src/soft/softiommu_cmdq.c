/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The soft IOMMU's command front end: SMMUv3 commands, VT-d invalidation
 * descriptors, RISC-V IOMMU commands and AMD commands, decoded by the command unit's
 * decoders, executed as soft IOMMU
 * operations; and a command queue drained through the command unit's
 * software consumer.  See <iommukit/softiommu.h>.
 */
#include <iommukit/softiommu.h>
#include <iommukit/atomic.h>
#include <iommukit/lock.h>

/* Execute one soft IOMMU command; flags/tag2 scope it for combined entries
 * (IK_SOFTIOMMU_CMD_VMID, _PASID). */
static int run2(struct ik_softiommu *s, ik_u32 op, ik_u32 tag, ik_u64 iova, ik_u64 size, bool leaf,
		ik_u32 flags, ik_u32 tag2)
{
	struct ik_softiommu_cmd c;

	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.op = op;
	c.tag = tag;
	c.iova = iova;
	c.size = size;
	c.leaf = leaf;
	c.flags = flags;
	c.tag2 = tag2;
	return ik_softiommu_exec(s, &c);
}

static int run(struct ik_softiommu *s, ik_u32 op, ik_u32 tag, ik_u64 iova, ik_u64 size, bool leaf)
{
	return run2(s, op, tag, iova, size, leaf, 0, 0);
}

/* The byte length a TLBI_NH_VA / TLBI_S2_IPA covers. */
static int smmu_tlbi_len(const struct ik_smmu_cmd *c, ik_u64 *len)
{
	unsigned shift;

	if (c->tg == IK_SMMU_TG_NONE) {
		*len = 1; /* every entry that holds the address, whatever its size */
		return 0;
	}
	shift = c->tg == IK_SMMU_TG_4K ? 12u : c->tg == IK_SMMU_TG_16K ? 14u : 16u;
	if ((ik_u32)c->scale + shift >= 64u - 5u)
		return -EINVAL;
	*len = ((ik_u64)c->num + 1) << (c->scale + shift);
	return 0;
}

IK_API int ik_softiommu_exec_smmu(struct ik_softiommu *s, const struct ik_smmu_cmd *c)
{
	ik_u64 len;

	if (!s || !c)
		return -EINVAL;
	switch (c->op) {
	case IK_SMMU_CMD_TLBI_NH_VA:
		if (smmu_tlbi_len(c, &len) || c->addr + (len - 1) < c->addr)
			return -EINVAL;
		return run2(s, IK_SOFTIOMMU_OP_INV_RANGE, c->asid, c->addr, len, c->leaf,
			    IK_SOFTIOMMU_CMD_VMID, c->vmid);
	case IK_SMMU_CMD_TLBI_S2_IPA:
		if (smmu_tlbi_len(c, &len) || c->addr + (len - 1) < c->addr)
			return -EINVAL;
		return run(s, IK_SOFTIOMMU_OP_INV_S2_RANGE, c->vmid, c->addr, len, c->leaf);
	case IK_SMMU_CMD_TLBI_NH_ASID:
		return run2(s, IK_SOFTIOMMU_OP_INV_TAG, c->asid, 0, 0, false, IK_SOFTIOMMU_CMD_VMID,
			    c->vmid);
	case IK_SMMU_CMD_TLBI_S12_VMALL:
		return run(s, IK_SOFTIOMMU_OP_INV_S2_TAG, c->vmid, 0, 0, false);
	case IK_SMMU_CMD_TLBI_NH_ALL:
	case IK_SMMU_CMD_TLBI_NSNH_ALL:
		return run(s, IK_SOFTIOMMU_OP_INV_ALL, 0, 0, 0, false);
	case IK_SMMU_CMD_SYNC:
		return run(s, IK_SOFTIOMMU_OP_SYNC, 0, 0, 0, false);
	case IK_SMMU_CMD_CFGI_STE:
	case IK_SMMU_CMD_CFGI_STE_RANGE:
	case IK_SMMU_CMD_CFGI_CD:
	case IK_SMMU_CMD_CFGI_CD_ALL:
	case IK_SMMU_CMD_ATC_INV:
	case IK_SMMU_CMD_PRI_RESP:
	case IK_SMMU_CMD_TLBI_EL2_ALL:
		/* No configuration cache, ATC or EL2 translations in this
		 * model: attach takes effect at once. */
		return run(s, IK_SOFTIOMMU_OP_NOP, 0, 0, 0, false);
	default:
		return -EINVAL;
	}
}

IK_API int ik_softiommu_exec_vtd(struct ik_softiommu *s, const struct ik_vtd_desc *d)
{
	ik_u64 len;
	bool p;

	if (!s || !d)
		return -EINVAL;
	switch (d->type) {
	case IK_VTD_DESC_IOTLB:
	case IK_VTD_DESC_PIOTLB:
		/* IOTLB descriptors address the domain (second stage, and
		 * every nested entry of the DID); PASID-based ones the first
		 * stage of one PASID in the domain. */
		p = d->type == IK_VTD_DESC_PIOTLB;
		if (!p && d->g == IK_VTD_G_GLOBAL)
			return run(s, IK_SOFTIOMMU_OP_INV_ALL, 0, 0, 0, false);
		if (d->g == IK_VTD_G_DOMAIN) /* == IK_VTD_G_PASID for PIOTLB */
			return p ? run2(s, IK_SOFTIOMMU_OP_INV_TAG, d->did, 0, 0, false,
					IK_SOFTIOMMU_CMD_PASID, d->pasid)
				 : run(s, IK_SOFTIOMMU_OP_INV_S2_TAG, d->did, 0, 0, false);
		if (d->g != IK_VTD_G_PAGE || d->am > 51)
			return -EINVAL;
		len = 4096ull << d->am;
		if (d->addr & (len - 1))
			return -EINVAL;
		return p ? run2(s, IK_SOFTIOMMU_OP_INV_RANGE, d->did, d->addr, len, d->ih != 0,
				IK_SOFTIOMMU_CMD_PASID, d->pasid)
			 : run(s, IK_SOFTIOMMU_OP_INV_S2_RANGE, d->did, d->addr, len, d->ih != 0);
	case IK_VTD_DESC_WAIT:
		return run(s, IK_SOFTIOMMU_OP_SYNC, 0, 0, 0, false);
	case IK_VTD_DESC_CC:
	case IK_VTD_DESC_DEVTLB:
	case IK_VTD_DESC_PC:
		return run(s, IK_SOFTIOMMU_OP_NOP, 0, 0, 0, false);
	default:
		return -EINVAL;
	}
}

IK_API int ik_softiommu_exec_riscv(struct ik_softiommu *s, const struct ik_riscv_cmd *c)
{
	ik_u32 tag;
	bool tagged;

	if (!s || !c)
		return -EINVAL;
	switch (c->opcode) {
	case IK_RISCV_CMD_IOTINVAL:
		if (c->func3 != IK_RISCV_IOTINVAL_VMA && c->func3 != IK_RISCV_IOTINVAL_GVMA)
			return -EINVAL;
		tagged = (c->func3 == IK_RISCV_IOTINVAL_VMA && c->pscv) || c->gv;
		tag = c->func3 == IK_RISCV_IOTINVAL_VMA && c->pscv ? c->pscid : c->gscid;
		if (!tagged)
			return run(s, IK_SOFTIOMMU_OP_INV_ALL, 0, 0, 0, false);
		/* AV: the entries holding leaf PTEs for ADDR, whatever their
		 * size; cached non-leaf entries stay (the specification's
		 * IOTINVAL tables), so the walk cache is kept. */
		if (c->av)
			return run(s, IK_SOFTIOMMU_OP_INV_RANGE, tag, c->addr, 1, true);
		return run(s, IK_SOFTIOMMU_OP_INV_TAG, tag, 0, 0, false);
	case IK_RISCV_CMD_IOFENCE:
		if (c->func3 != IK_RISCV_IOFENCE_C)
			return -EINVAL;
		return run(s, IK_SOFTIOMMU_OP_SYNC, 0, 0, 0, false);
	case IK_RISCV_CMD_IODIR:
		if (c->func3 != IK_RISCV_IODIR_INVAL_DDT && c->func3 != IK_RISCV_IODIR_INVAL_PDT)
			return -EINVAL;
		return run(s, IK_SOFTIOMMU_OP_NOP, 0, 0, 0, false);
	default:
		return -EINVAL;
	}
}

IK_API int ik_softiommu_exec_amd(struct ik_softiommu *s, const struct ik_amd_cmd *c)
{
	ik_u64 first, last;

	if (!s || !c)
		return -EINVAL;
	switch (c->op) {
	case IK_AMD_CMD_INV_IOMMU_PAGES:
		(void)ik_amd_inv_decode(c->addr, c->s, &first, &last);
		if (first == 0 && last == IK_U64_MAX)
			return run(s, IK_SOFTIOMMU_OP_INV_TAG, c->domid, 0, 0, false);
		return run(s, IK_SOFTIOMMU_OP_INV_RANGE, c->domid, first, last - first + 1, !c->pde);
	case IK_AMD_CMD_INV_IOMMU_ALL:
		return run(s, IK_SOFTIOMMU_OP_INV_ALL, 0, 0, 0, false);
	case IK_AMD_CMD_COMPLETION_WAIT:
		return run(s, IK_SOFTIOMMU_OP_SYNC, 0, 0, 0, false);
	case IK_AMD_CMD_INV_DEVTAB_ENTRY:
	case IK_AMD_CMD_INV_IOTLB_PAGES:
		return run(s, IK_SOFTIOMMU_OP_NOP, 0, 0, 0, false);
	default:
		return -EINVAL;
	}
}

/* ---- the queue front end ---- */

static ik_u32 cq_handler(void *ctx, ik_u32 index, const void *ent, int kind)
{
	struct ik_softiommu_cq *cq = (struct ik_softiommu_cq *)ctx;
	ik_u64 w[4];
	int err;

	(void)index;
	IK_ENV_MEMCPY(w, ent, cq->vtd_words ? cq->vtd_words * 8u : 16u);
	if (cq->riscv) {
		struct ik_riscv_cmd c;

		err = ik_riscv_cmd_decode(w, &c);
		if (!err)
			err = ik_softiommu_exec_riscv(cq->s, &c);
	} else if (cq->amd) {
		struct ik_amd_cmd c;

		err = ik_amd_cmd_decode(w, &c);
		if (!err)
			err = ik_softiommu_exec_amd(cq->s, &c);
	} else if (cq->vtd_words) {
		struct ik_vtd_desc d;

		err = ik_vtd_desc_decode(w, cq->vtd_words, &d);
		if (!err && cq->have_rules)
			err = ik_vtd_desc_validate(&d, &cq->rules);
		if (!err)
			err = ik_softiommu_exec_vtd(cq->s, &d);
	} else {
		struct ik_smmu_cmd c;

		err = ik_smmu_cmd_decode(w, &c);
		if (!err)
			err = ik_softiommu_exec_smmu(cq->s, &c);
	}
	(void)kind; /* a sync is executed like any command; the consumer then
		       writes its completion */
	/* Relaxed atomics: other threads may read the counters at any time. */
	if (err) {
		ik_atomic_fetch_add(&cq->rejected, 1, IK_MO_RELAXED);
		return IK_CMDQ_CERROR_ILL;
	}
	ik_atomic_fetch_add(&cq->executed, 1, IK_MO_RELAXED);
	return IK_CMDQ_CERROR_NONE;
}

/* Completion writes outside the ring go to the config's hook (installed only
 * when there is one: without it the software consumer refuses and counts
 * them, sw.completions_refused). */
static void cq_write32(void *ctx, ik_u64 addr, ik_u32 val)
{
	struct ik_softiommu_cq *cq = (struct ik_softiommu_cq *)ctx;

	cq->write32(cq->write_ctx, addr, val);
}

IK_API int ik_softiommu_cq_init(struct ik_softiommu_cq *cq, struct ik_softiommu *s,
				const struct ik_softiommu_cq_config *cfg)
{
	struct ik_cmdq_sw_config sc;
	int err;

	if (!cq || !s || !cfg || !cfg->fmt || !cfg->ring)
		return -EINVAL;
	if (cfg->fmt != &ik_cmdq_fmt_smmuv3 && cfg->fmt != &ik_cmdq_fmt_vtd128 &&
	    cfg->fmt != &ik_cmdq_fmt_vtd256 && cfg->fmt != &ik_cmdq_fmt_riscv &&
	    cfg->fmt != &ik_cmdq_fmt_amd)
		return -EINVAL;
	IK_ENV_MEMSET(cq, 0, sizeof(*cq));
	cq->s = s;
	cq->riscv = cfg->fmt == &ik_cmdq_fmt_riscv;
	cq->amd = cfg->fmt == &ik_cmdq_fmt_amd;
	cq->vtd_words = cfg->fmt == &ik_cmdq_fmt_smmuv3 || cq->riscv || cq->amd ? 0u : cfg->fmt->entry_size / 8u;
	cq->write32 = cfg->write32;
	cq->write_ctx = cfg->write_ctx;
	if (cfg->vtd_rules) {
		struct ik_vtd_desc nop;

		/* Refuse rules that no descriptor could satisfy (unknown
		 * flags): ik_vtd_desc_validate() says -EINVAL for them. */
		IK_ENV_MEMSET(&nop, 0, sizeof(nop));
		nop.type = IK_VTD_DESC_WAIT;
		nop.iflag = 1;
		if (!cq->vtd_words || ik_vtd_desc_validate(&nop, cfg->vtd_rules)) {
			IK_ENV_MEMSET(cq, 0, sizeof(*cq));
			return -EINVAL;
		}
		cq->have_rules = true;
		cq->rules = *cfg->vtd_rules;
	}
	IK_ENV_MEMSET(&sc, 0, sizeof(sc));
	sc.fmt = cfg->fmt;
	sc.log2_entries = cfg->log2_entries;
	sc.flags = cfg->flags;
	sc.ring = cfg->ring;
	sc.ring_dma = cfg->ring_dma;
	sc.handler = cq_handler;
	sc.ctx = cq;
	sc.write32 = cq->write32 ? cq_write32 : NULL;
	err = ik_cmdq_sw_init(&cq->sw, &sc);
	if (err) {
		IK_ENV_MEMSET(cq, 0, sizeof(*cq));
		return err;
	}
	ik_lock_init(&cq->lock);
	return 0;
}

/* Drain everything published (lock held).  Returns the number consumed. */
static int cq_drain(struct ik_softiommu_cq *cq, unsigned budget)
{
	int total = 0;

	while ((unsigned)total < budget) {
		int r = ik_cmdq_sw_consume(&cq->sw, budget - (unsigned)total);

		if (r <= 0)
			return total ? total : r;
		total += r;
	}
	return total;
}

/* Published but not consumed, and not stopped on an error? */
static bool cq_pending(struct ik_softiommu_cq *cq)
{
	ik_u32 cerror, cons;

	cons = ik_cmdq_sw_regs.read_cons(&cq->sw, &cerror);
	return !cerror && cons != ik_load_relaxed(&cq->prod);
}

/*
 * Consume on the producer's thread, as an emulator does when the guest writes
 * PROD: whoever gets the consumer lock drains; a producer that finds it held
 * leaves, and the holder looks again after unlocking.  K1: the producer's
 * PROD store, full fence, try-lock  |  K2: the holder's unlock, full fence,
 * PROD load - one of the two sees the other, so nothing published is left.
 */
static void cq_kick(struct ik_softiommu_cq *cq)
{
	for (;;) {
		ik_smp_mb(); /* K1 */
		if (!ik_trylock(&cq->lock))
			return;
		(void)cq_drain(cq, ~0u);
		ik_unlock(&cq->lock);
		ik_smp_mb(); /* K2 */
		if (!cq_pending(cq))
			return;
	}
}

static ik_u32 cqr_read_cons(void *ctx, ik_u32 *cerror)
{
	struct ik_softiommu_cq *cq = (struct ik_softiommu_cq *)ctx;

	return ik_cmdq_sw_regs.read_cons(&cq->sw, cerror);
}

static void cqr_write_prod(void *ctx, ik_u32 prod)
{
	struct ik_softiommu_cq *cq = (struct ik_softiommu_cq *)ctx;

	ik_store_relaxed(&cq->prod, prod);
	ik_cmdq_sw_regs.write_prod(&cq->sw, prod);
}

static void cqr_doorbell(void *ctx)
{
	cq_kick((struct ik_softiommu_cq *)ctx);
}

static void cqr_ack_error(void *ctx)
{
	struct ik_softiommu_cq *cq = (struct ik_softiommu_cq *)ctx;

	ik_cmdq_sw_regs.ack_error(&cq->sw);
	cq_kick(cq); /* resume at the repaired entry */
}

IK_API const struct ik_cmdq_regs ik_softiommu_cq_regs = {
	cqr_read_cons, cqr_write_prod, cqr_doorbell, cqr_ack_error,
};

IK_API int ik_softiommu_cq_poll(struct ik_softiommu_cq *cq, unsigned budget)
{
	int r;

	if (!cq || !cq->s || budget == 0)
		return -EINVAL;
	ik_lock(&cq->lock);
	r = cq_drain(cq, budget);
	ik_unlock(&cq->lock);
	return r;
}

IK_API int ik_softiommu_cq_run(struct ik_softiommu_cq *const *cqs, unsigned n, const int *stop)
{
	unsigned idle = 0;

	if (!cqs || n == 0 || !stop)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		if (!cqs[i] || !cqs[i]->s)
			return -EINVAL;
	/* Acquire pairs with the caller's release store of *stop: whatever it
	 * did before asking us to stop is visible when we see the flag. */
	while (!ik_load_acquire(stop)) {
		int got = 0;

		for (unsigned i = 0; i < n; i++) {
			int r;

			if (!ik_trylock(&cqs[i]->lock))
				continue; /* a producer is draining it inline */
			r = cq_drain(cqs[i], 256);
			ik_unlock(&cqs[i]->lock);
			if (r > 0)
				got += r;
		}
		if (got) {
			idle = 0;
		} else if (++idle < 64) {
			ik_cpu_relax();
		} else {
			IK_ENV_YIELD();
		}
	}
	/* Drain what was published before the stop. */
	for (unsigned i = 0; i < n; i++) {
		ik_lock(&cqs[i]->lock);
		(void)cq_drain(cqs[i], ~0u);
		ik_unlock(&cqs[i]->lock);
	}
	return 0;
}
