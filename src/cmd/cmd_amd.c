/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * AMD IOMMU commands, encoded and decoded from one field table (positions
 * from the AMD IOMMU specification, "Commands"; summarised in
 * <iommukit/cmd/amd.h>), and the invalidation range encoding (S bit).  Last,
 * the queue entries (ik_cmdq_fmt_amd).
 */
#include <iommukit/cmdq.h>
#include <iommukit/cmd/amd.h>
#include "cmd_codec.h"

#define M(m) (ik_u8) __builtin_offsetof(struct ik_amd_cmd, m), \
	     (ik_u8)sizeof(((struct ik_amd_cmd *)0)->m)
#define F(t, m, lsb, width, shift) { IK_AMD_CMD_##t, M(m), lsb, width, shift }

static const struct ik_field amd_fields[] = {
	F(COMPLETION_WAIT, store, 0, 1, 0),
	F(COMPLETION_WAIT, irq, 1, 1, 0),
	F(COMPLETION_WAIT, flush, 2, 1, 0),
	F(COMPLETION_WAIT, store_addr, 3, 49, 3),
	F(COMPLETION_WAIT, store_data, 64, 64, 0),
	F(INV_DEVTAB_ENTRY, devid, 0, 16, 0),
	F(INV_IOMMU_PAGES, pasid, 0, 20, 0),
	F(INV_IOMMU_PAGES, domid, 32, 16, 0),
	F(INV_IOMMU_PAGES, s, 64, 1, 0),
	F(INV_IOMMU_PAGES, pde, 65, 1, 0),
	F(INV_IOMMU_PAGES, gn, 66, 1, 0),
	F(INV_IOMMU_PAGES, addr, 76, 52, 12),
	F(INV_IOTLB_PAGES, devid, 0, 16, 0),
	F(INV_IOTLB_PAGES, pasid, 16, 8, 8),
	F(INV_IOTLB_PAGES, maxpend, 24, 8, 0),
	F(INV_IOTLB_PAGES, queueid, 32, 16, 0),
	F(INV_IOTLB_PAGES, pasid, 48, 8, 0),
	F(INV_IOTLB_PAGES, s, 64, 1, 0),
	F(INV_IOTLB_PAGES, gn, 66, 1, 0),
	F(INV_IOTLB_PAGES, addr, 76, 52, 12),
};

#define AMD_OP_SHIFT 60

struct ik_codec ik_codec_amd_ = IK_CODEC_INIT(amd_fields, struct ik_amd_cmd, 2,
					     0xfull << AMD_OP_SHIFT, 0);

IK_API const char *ik_amd_cmd_name(unsigned op)
{
	switch (op) {
	case IK_AMD_CMD_COMPLETION_WAIT: return "COMPLETION_WAIT";
	case IK_AMD_CMD_INV_DEVTAB_ENTRY: return "INVALIDATE_DEVTAB_ENTRY";
	case IK_AMD_CMD_INV_IOMMU_PAGES: return "INVALIDATE_IOMMU_PAGES";
	case IK_AMD_CMD_INV_IOTLB_PAGES: return "INVALIDATE_IOTLB_PAGES";
	case IK_AMD_CMD_INV_IOMMU_ALL: return "INVALIDATE_IOMMU_ALL";
	default: return NULL;
	}
}

IK_API int ik_amd_cmd_encode(const struct ik_amd_cmd *c, ik_u64 *w)
{
	ik_u64 t[2] = { 0, 0 };
	int err;

	if (!c || !w || !ik_amd_cmd_name(c->op))
		return -EINVAL;
	t[0] = (ik_u64)c->op << AMD_OP_SHIFT;
	err = ik_codec_encode(&ik_codec_amd_, c->op, c, t);
	if (err)
		return err;
	w[0] = t[0];
	w[1] = t[1];
	return 0;
}

IK_API int ik_amd_cmd_decode(const ik_u64 *w, struct ik_amd_cmd *c)
{
	if (!w || !c)
		return -EINVAL;
	IK_ENV_MEMSET(c, 0, sizeof(*c));
	c->op = (ik_u8)(w[0] >> AMD_OP_SHIFT);
	if (!ik_amd_cmd_name(c->op))
		return -EINVAL;
	return ik_codec_decode(&ik_codec_amd_, c->op, w, 2, c);
}

IK_API int ik_amd_inv_encode(ik_u64 iova, ik_u64 size, ik_u64 *addr, ik_u8 *s)
{
	ik_u64 last;
	unsigned b;

	if (!addr || !s || size == 0 || iova + (size - 1) < iova)
		return -EINVAL;
	last = iova + (size - 1);
	if ((iova >> 12) == (last >> 12)) {
		*addr = iova & ~(ik_u64)0xfff;
		*s = 0;
		return 0;
	}
	/* The block of 2^b bytes holding iova holds last once they agree
	 * above bit b - 1 (b >= 13 here: they differ at or above bit 12). */
	b = (unsigned)(64 - ik_clz64(iova ^ last));
	*s = 1;
	if (b >= 52) {
		*addr = IK_AMD_INV_ALL_ADDR;
		return 0;
	}
	/* Bits 12 .. b - 2 set, bit b - 1 clear: the size code of 2^b. */
	*addr = ((iova & ~(((ik_u64)1 << b) - 1)) | (((ik_u64)1 << (b - 1)) - 1)) & ~(ik_u64)0xfff;
	return 0;
}

IK_API int ik_amd_inv_decode(ik_u64 addr, ik_u8 s, ik_u64 *first, ik_u64 *last)
{
	ik_u64 zeros, size;
	unsigned k;

	if (!first || !last)
		return -EINVAL;
	if (!s) {
		*first = addr & ~(ik_u64)0xfff;
		*last = *first + 0xfff;
		return 0;
	}
	zeros = ~(addr | 0xfff);
	k = zeros ? (unsigned)ik_ctz64(zeros) : 64;
	if (k >= 51) {
		*first = 0;
		*last = IK_U64_MAX;
		return 0;
	}
	size = (ik_u64)1 << (k + 1);
	*first = addr & ~(size - 1);
	*last = *first + (size - 1);
	return 0;
}

/* ---------------------------------------------------------------- queue entries */

/*
 * struct ik_cmdq_fmt for the AMD command queue (<iommukit/cmdq.h>): the no-op
 * and the sync the queue writes itself, and how a consumer classifies an
 * entry.  The sync is a fixed template with the address and data patched in,
 * not a trip through the codec above, since every waiting ik_cmdq_issue()
 * writes one; tests/test_cmdq.c ("fmt_sync_vs_codec") holds it to the
 * codec's encoding bit for bit.
 *
 * AMD: sync = COMPLETION_WAIT with S = 1: once every earlier command
 * has completed the IOMMU stores the 64-bit StoreData (data, zero-extended)
 * at StoreAddress.  No-op, and a sync without a completion address (or with
 * one the command cannot hold: not 8-byte aligned, or at or above 2^52):
 * COMPLETION_WAIT with S = I = 0, a barrier that writes nothing and raises
 * nothing.
 */
static void amd_nop(void *ent)
{
	ik_u64 *w = (ik_u64 *)ent;

	w[0] = (ik_u64)IK_AMD_CMD_COMPLETION_WAIT << 60;
	w[1] = 0;
}

static void amd_sync(void *ent, ik_u64 addr, ik_u32 data)
{
	ik_u64 *w = (ik_u64 *)ent;

	/* S is bit 0; StoreAddress[51:3] sits in place at [51:3]; StoreData
	 * is the second word. */
	if (!addr || (addr & 7) || (addr >> 52)) {
		amd_nop(ent);
		return;
	}
	w[0] = ((ik_u64)IK_AMD_CMD_COMPLETION_WAIT << 60) | 1 | addr;
	w[1] = data;
}

static int amd_classify(const void *ent, struct ik_cmdq_sync_info *si)
{
	struct ik_amd_cmd c;

	if (ik_amd_cmd_decode((const ik_u64 *)ent, &c))
		return -EINVAL;
	if (c.op != IK_AMD_CMD_COMPLETION_WAIT)
		return IK_CMDQ_KIND_CMD;
	si->write = c.store != 0;
	si->addr = c.store_addr;
	/* The IOMMU stores all 64 bits; the queue's own syncs carry a
	 * 32-bit value, zero-extended. */
	si->data = (ik_u32)c.store_data;
	si->data_hi = (ik_u32)(c.store_data >> 32);
	si->wide = true;
	return IK_CMDQ_KIND_SYNC;
}

IK_API const struct ik_cmdq_fmt ik_cmdq_fmt_amd = {
	"amd", 16, amd_nop, amd_sync, amd_classify,
};
