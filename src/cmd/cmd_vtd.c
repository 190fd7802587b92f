/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * VT-d queued-invalidation descriptors, encoded and decoded from one field
 * table (positions from the VT-d specification, "Queued Invalidation
 * Interface"; summarised in <iommukit/cmd/vtd.h>).  Last, the queue entries
 * (ik_cmdq_fmt_vtd128, ik_cmdq_fmt_vtd256).
 */
#include <iommukit/cmdq.h>
#include <iommukit/cmd/vtd.h>
#include "cmd_codec.h"

#define M(m) (ik_u8) __builtin_offsetof(struct ik_vtd_desc, m), \
	     (ik_u8)sizeof(((struct ik_vtd_desc *)0)->m)
#define F(t, m, lsb, width, shift) { IK_VTD_DESC_##t, M(m), lsb, width, shift }

static const struct ik_field vtd_fields[] = {
	F(CC, g, 4, 2, 0),
	F(CC, did, 16, 16, 0),
	F(CC, sid, 32, 16, 0),
	F(CC, fm, 48, 2, 0),
	F(IOTLB, g, 4, 2, 0),
	F(IOTLB, dw, 6, 1, 0),
	F(IOTLB, dr, 7, 1, 0),
	F(IOTLB, did, 16, 16, 0),
	F(IOTLB, am, 64, 6, 0),
	F(IOTLB, ih, 70, 1, 0),
	F(IOTLB, addr, 76, 52, 12),
	F(DEVTLB, pfsid, 12, 4, 0),
	F(DEVTLB, mip, 16, 5, 0),
	F(DEVTLB, sid, 32, 16, 0),
	F(DEVTLB, pfsid, 52, 12, 4),
	F(DEVTLB, s, 64, 1, 0),
	F(DEVTLB, addr, 76, 52, 12),
	F(WAIT, iflag, 4, 1, 0),
	F(WAIT, sw, 5, 1, 0),
	F(WAIT, fn, 6, 1, 0),
	F(WAIT, pd, 7, 1, 0),
	F(WAIT, status_data, 32, 32, 0),
	F(WAIT, status_addr, 66, 62, 2),
	F(PIOTLB, g, 4, 2, 0),
	F(PIOTLB, did, 16, 16, 0),
	F(PIOTLB, pasid, 32, 20, 0),
	F(PIOTLB, am, 64, 6, 0),
	F(PIOTLB, ih, 70, 1, 0),
	F(PIOTLB, addr, 76, 52, 12),
	F(PC, g, 4, 2, 0),
	F(PC, did, 16, 16, 0),
	F(PC, pasid, 32, 20, 0),
};

struct ik_codec ik_codec_vtd_ = IK_CODEC_INIT(vtd_fields, struct ik_vtd_desc, 4, 0xf, 0);

IK_API const char *ik_vtd_desc_name(unsigned type)
{
	switch (type) {
	case IK_VTD_DESC_CC: return "CC";
	case IK_VTD_DESC_IOTLB: return "IOTLB";
	case IK_VTD_DESC_DEVTLB: return "DEVTLB";
	case IK_VTD_DESC_WAIT: return "WAIT";
	case IK_VTD_DESC_PIOTLB: return "PIOTLB";
	case IK_VTD_DESC_PC: return "PC";
	default: return NULL;
	}
}

static int vtd_check(const struct ik_vtd_desc *d)
{
	switch (d->type) {
	case IK_VTD_DESC_CC:
	case IK_VTD_DESC_IOTLB:
		if (d->g == 0)
			return -EINVAL;
		break;
	case IK_VTD_DESC_PIOTLB:
		if (d->g < IK_VTD_G_PASID)
			return -EINVAL;
		break;
	case IK_VTD_DESC_PC:
		if (d->g == 2)
			return -EINVAL;
		break;
	case IK_VTD_DESC_WAIT:
		/* Completion is signalled by a status write or an interrupt;
		 * a wait with neither has no defined completion (QEMU 7.2:
		 * Invalidation Queue Error). */
		if (!d->sw && !d->iflag)
			return -EINVAL;
		break;
	default:
		break;
	}
	/* A page-selective address is aligned to its 2^AM pages; from AM 52
	 * on the block is the whole 64-bit space, so only ADDR 0 is. */
	if (d->am && (d->am >= 52 ? d->addr != 0 : (d->addr & ((((ik_u64)1 << d->am) << 12) - 1))))
		return -EINVAL;
	return 0;
}

IK_API int ik_vtd_desc_encode(const struct ik_vtd_desc *d, ik_u64 *w, unsigned words)
{
	ik_u64 t[4] = { 0, 0, 0, 0 };
	int err;

	if (!d || !w || (words != 2 && words != 4))
		return -EINVAL;
	t[0] = d->type;
	if (!ik_vtd_desc_name(d->type))
		return -EINVAL;
	err = vtd_check(d);
	if (!err)
		err = ik_codec_encode(&ik_codec_vtd_, d->type, d, t);
	if (err)
		return err;
	for (unsigned i = 0; i < words; i++)
		w[i] = t[i];
	return 0;
}

IK_API int ik_vtd_desc_decode(const ik_u64 *w, unsigned words, struct ik_vtd_desc *d)
{
	int err;

	if (!w || !d)
		return -EINVAL;
	IK_ENV_MEMSET(d, 0, sizeof(*d));
	if (words != 2 && words != 4)
		return -EINVAL;
	d->type = (ik_u8)(w[0] & 0xf);
	if (!ik_vtd_desc_name(d->type))
		return -EINVAL;
	err = ik_codec_decode(&ik_codec_vtd_, d->type, w, words, d);
	return err ? err : vtd_check(d);
}

IK_API int ik_vtd_psi_mask(ik_u64 pfn, ik_u64 npages, unsigned max_am, ik_u64 *base_pfn,
			   unsigned *am)
{
	ik_u64 last;
	unsigned a;

	if (!base_pfn || !am || npages == 0 || pfn + npages < pfn || max_am > 63)
		return -EINVAL;
	last = pfn + npages - 1;
	/* The block of 2^a pages holding pfn also holds last once the two
	 * agree above bit a: a = index of the highest differing bit + 1. */
	a = pfn == last ? 0 : (unsigned)(64 - ik_clz64(pfn ^ last));
	if (a > max_am)
		return -EINVAL;
	*base_pfn = a >= 64 ? 0 : pfn & ~((((ik_u64)1) << a) - 1);
	*am = a;
	return 0;
}

IK_API int ik_vtd_desc_validate(const struct ik_vtd_desc *d, const struct ik_vtd_desc_rules *r)
{
	const ik_u32 known = IK_VTD_RULE_PSI | IK_VTD_RULE_PDS | IK_VTD_RULE_SCALABLE |
			     IK_VTD_RULE_QEMU72;
	bool qemu;

	if (!d || !r || (r->flags & ~known) || !ik_vtd_desc_name(d->type) || vtd_check(d))
		return -EINVAL;
	qemu = r->flags & IK_VTD_RULE_QEMU72;
	switch (d->type) {
	case IK_VTD_DESC_IOTLB:
	case IK_VTD_DESC_PIOTLB:
		if (d->type == IK_VTD_DESC_PIOTLB && !(r->flags & IK_VTD_RULE_SCALABLE))
			return -EINVAL;
		if (d->g == IK_VTD_G_PAGE &&
		    (!(r->flags & IK_VTD_RULE_PSI) || d->am > r->mamv))
			return -EINVAL;
		break;
	case IK_VTD_DESC_PC:
		if (!(r->flags & IK_VTD_RULE_SCALABLE))
			return -EINVAL;
		break;
	case IK_VTD_DESC_DEVTLB:
		if (qemu && d->pfsid)
			return -EINVAL;
		break;
	case IK_VTD_DESC_WAIT:
		if (d->pd && !(r->flags & IK_VTD_RULE_PDS))
			return -EINVAL;
		if (qemu && d->sw && d->iflag)
			return -EINVAL;
		break;
	default:
		break;
	}
	return 0;
}

IK_API int ik_vtd_desc_rules_qemu72(struct ik_vtd_desc_rules *r, bool scalable)
{
	if (!r)
		return -EINVAL;
	r->flags = IK_VTD_RULE_PSI | IK_VTD_RULE_QEMU72 | (scalable ? IK_VTD_RULE_SCALABLE : 0);
	r->mamv = IK_VTD_QEMU72_MAMV;
	return 0;
}

/* ---------------------------------------------------------------- queue entries */

/*
 * struct ik_cmdq_fmt for the VT-d command queue (<iommukit/cmdq.h>): the no-op
 * and the sync the queue writes itself, and how a consumer classifies an
 * entry.  The sync is a fixed template with the address and data patched in,
 * not a trip through the codec above, since every waiting ik_cmdq_issue()
 * writes one; tests/test_cmdq.c ("fmt_sync_vs_codec") holds it to the
 * codec's encoding bit for bit.
 *
 * VT-d: every wait the queue writes must signal its completion: the
 * specification defines a status write (SW) and an interrupt (IF) for that
 * and no third way, and QEMU 7.2 rejects a wait with neither (FSTS.IQE).
 *   sync with a completion address: wait with SW = 1 (status data written
 *        to addr), IF = 0 (QEMU 7.2 asserts on SW and IF together);
 *   no-op, and a sync without a completion address: wait with IF = 1, which
 *        needs no memory: on completion the unit sets ICS.IWC and raises the
 *        invalidation completion event only where IECTL.IM is clear (the
 *        reset value masks it; the VT-d driver core keeps it masked and
 *        polls).  It invalidates nothing, so it is harmless anywhere.
 * An address the descriptor cannot hold (not 4-byte aligned) gives the IF
 * wait, a sync without the write, as the ik_cmdq_fmt contract asks;
 * ik_cmdq_init() then refuses such a ring or status array for MSI.
 */
static void vtd_wait(void *ent, unsigned words, ik_u64 addr, ik_u32 data)
{
	ik_u64 *w = (ik_u64 *)ent;

	/* Status Address[63:2] sits at bits [127:66], in place in w[1];
	 * IF is bit 4, SW bit 5, Status Data [63:32]. */
	if (addr && !(addr & 3)) {
		w[0] = IK_VTD_DESC_WAIT | ((ik_u64)1 << 5) | ((ik_u64)data << 32);
		w[1] = addr;
	} else {
		w[0] = IK_VTD_DESC_WAIT | ((ik_u64)1 << 4);
		w[1] = 0;
	}
	if (words == 4)
		w[2] = w[3] = 0;
}

static void vtd128_nop(void *ent)
{
	vtd_wait(ent, 2, 0, 0);
}

static void vtd256_nop(void *ent)
{
	vtd_wait(ent, 4, 0, 0);
}

static void vtd128_sync(void *ent, ik_u64 addr, ik_u32 data)
{
	vtd_wait(ent, 2, addr, data);
}

static void vtd256_sync(void *ent, ik_u64 addr, ik_u32 data)
{
	vtd_wait(ent, 4, addr, data);
}

static int vtd_classify(const void *ent, unsigned words, struct ik_cmdq_sync_info *si)
{
	struct ik_vtd_desc d;

	if (ik_vtd_desc_decode((const ik_u64 *)ent, words, &d))
		return -EINVAL;
	if (d.type != IK_VTD_DESC_WAIT)
		return IK_CMDQ_KIND_CMD;
	si->write = d.sw;
	si->addr = d.status_addr;
	si->data = d.status_data;
	return IK_CMDQ_KIND_SYNC;
}

static int vtd128_classify(const void *ent, struct ik_cmdq_sync_info *si)
{
	return vtd_classify(ent, 2, si);
}

static int vtd256_classify(const void *ent, struct ik_cmdq_sync_info *si)
{
	return vtd_classify(ent, 4, si);
}

IK_API const struct ik_cmdq_fmt ik_cmdq_fmt_vtd128 = {
	"vtd128", 16, vtd128_nop, vtd128_sync, vtd128_classify,
};

IK_API const struct ik_cmdq_fmt ik_cmdq_fmt_vtd256 = {
	"vtd256", 32, vtd256_nop, vtd256_sync, vtd256_classify,
};
