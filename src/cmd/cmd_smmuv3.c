/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * SMMUv3 command encoders and decoders: one table of (opcode, member, bits)
 * drives both directions, so that a field's position is written once.  The
 * positions are those of <iommukit/cmd/smmuv3.h>'s layout table (IHI 0070,
 * "Commands").  Last, the queue entries (ik_cmdq_fmt_smmuv3).
 */
#include <iommukit/cmdq.h>
#include <iommukit/cmd/smmuv3.h>
#include "cmd_codec.h"

#define M(m) (ik_u8) __builtin_offsetof(struct ik_smmu_cmd, m), \
	     (ik_u8)sizeof(((struct ik_smmu_cmd *)0)->m)
#define F(op, m, lsb, width, shift) { IK_SMMU_CMD_##op, M(m), lsb, width, shift }

static const struct ik_field smmu_fields[] = {
	F(CFGI_STE, ssec, 10, 1, 0),
	F(CFGI_STE, sid, 32, 32, 0),
	F(CFGI_STE, leaf, 64, 1, 0),
	F(CFGI_STE_RANGE, ssec, 10, 1, 0),
	F(CFGI_STE_RANGE, sid, 32, 32, 0),
	F(CFGI_STE_RANGE, range, 64, 5, 0),
	F(CFGI_CD, ssec, 10, 1, 0),
	F(CFGI_CD, ssid, 12, 20, 0),
	F(CFGI_CD, sid, 32, 32, 0),
	F(CFGI_CD, leaf, 64, 1, 0),
	F(CFGI_CD_ALL, ssec, 10, 1, 0),
	F(CFGI_CD_ALL, sid, 32, 32, 0),
	F(TLBI_NH_ALL, vmid, 32, 16, 0),
	F(TLBI_NH_ASID, vmid, 32, 16, 0),
	F(TLBI_NH_ASID, asid, 48, 16, 0),
	F(TLBI_NH_VA, num, 12, 5, 0),
	F(TLBI_NH_VA, scale, 20, 5, 0),
	F(TLBI_NH_VA, vmid, 32, 16, 0),
	F(TLBI_NH_VA, asid, 48, 16, 0),
	F(TLBI_NH_VA, leaf, 64, 1, 0),
	F(TLBI_NH_VA, ttl, 72, 2, 0),
	F(TLBI_NH_VA, tg, 74, 2, 0),
	F(TLBI_NH_VA, addr, 76, 52, 12),
	F(TLBI_S12_VMALL, vmid, 32, 16, 0),
	F(TLBI_S2_IPA, num, 12, 5, 0),
	F(TLBI_S2_IPA, scale, 20, 5, 0),
	F(TLBI_S2_IPA, vmid, 32, 16, 0),
	F(TLBI_S2_IPA, leaf, 64, 1, 0),
	F(TLBI_S2_IPA, ttl, 72, 2, 0),
	F(TLBI_S2_IPA, tg, 74, 2, 0),
	F(TLBI_S2_IPA, addr, 76, 40, 12),
	F(ATC_INV, global, 9, 1, 0),
	F(ATC_INV, ssv, 11, 1, 0),
	F(ATC_INV, ssid, 12, 20, 0),
	F(ATC_INV, sid, 32, 32, 0),
	F(ATC_INV, size, 64, 6, 0),
	F(ATC_INV, addr, 76, 52, 12),
	F(PRI_RESP, ssv, 11, 1, 0),
	F(PRI_RESP, ssid, 12, 20, 0),
	F(PRI_RESP, sid, 32, 32, 0),
	F(PRI_RESP, prgi, 64, 9, 0),
	F(PRI_RESP, resp, 76, 2, 0),
	F(SYNC, cs, 12, 2, 0),
	F(SYNC, msh, 22, 2, 0),
	F(SYNC, msiattr, 24, 4, 0),
	F(SYNC, msidata, 32, 32, 0),
	F(SYNC, msiaddr, 66, 50, 2),
};

struct ik_codec ik_codec_smmuv3_ = IK_CODEC_INIT(smmu_fields, struct ik_smmu_cmd, 2, 0xff, 0);

IK_API const char *ik_smmu_cmd_name(unsigned op)
{
	switch (op) {
	case IK_SMMU_CMD_CFGI_STE: return "CFGI_STE";
	case IK_SMMU_CMD_CFGI_STE_RANGE: return "CFGI_STE_RANGE";
	case IK_SMMU_CMD_CFGI_CD: return "CFGI_CD";
	case IK_SMMU_CMD_CFGI_CD_ALL: return "CFGI_CD_ALL";
	case IK_SMMU_CMD_TLBI_NH_ALL: return "TLBI_NH_ALL";
	case IK_SMMU_CMD_TLBI_NH_ASID: return "TLBI_NH_ASID";
	case IK_SMMU_CMD_TLBI_NH_VA: return "TLBI_NH_VA";
	case IK_SMMU_CMD_TLBI_EL2_ALL: return "TLBI_EL2_ALL";
	case IK_SMMU_CMD_TLBI_S12_VMALL: return "TLBI_S12_VMALL";
	case IK_SMMU_CMD_TLBI_S2_IPA: return "TLBI_S2_IPA";
	case IK_SMMU_CMD_TLBI_NSNH_ALL: return "TLBI_NSNH_ALL";
	case IK_SMMU_CMD_ATC_INV: return "ATC_INV";
	case IK_SMMU_CMD_PRI_RESP: return "PRI_RESP";
	case IK_SMMU_CMD_SYNC: return "CMD_SYNC";
	default: return NULL;
	}
}

static bool is_tlbi_addr(unsigned op)
{
	return op == IK_SMMU_CMD_TLBI_NH_VA || op == IK_SMMU_CMD_TLBI_S2_IPA;
}

/* Rules beyond "fits its field": reserved encodings. */
static int smmu_check(const struct ik_smmu_cmd *c)
{
	if (is_tlbi_addr(c->op) && c->tg == IK_SMMU_TG_NONE &&
	    (c->num || c->scale || c->ttl))
		return -EINVAL; /* RES0 when TG == 0 */
	if (c->op == IK_SMMU_CMD_SYNC && c->cs == 3)
		return -EINVAL;
	if (c->op == IK_SMMU_CMD_PRI_RESP && c->resp == 3)
		return -EINVAL;
	return 0;
}

IK_API int ik_smmu_cmd_encode(const struct ik_smmu_cmd *c, ik_u64 w[2])
{
	ik_u64 t[2] = { 0, 0 };
	int err;

	if (!c || !w || !ik_smmu_cmd_name(c->op))
		return -EINVAL;
	t[0] = c->op;
	err = smmu_check(c);
	if (!err)
		err = ik_codec_encode(&ik_codec_smmuv3_, c->op, c, t);
	if (err)
		return err;
	w[0] = t[0];
	w[1] = t[1];
	return 0;
}

IK_API int ik_smmu_cmd_decode(const ik_u64 w[2], struct ik_smmu_cmd *c)
{
	int err;

	if (!w || !c)
		return -EINVAL;
	IK_ENV_MEMSET(c, 0, sizeof(*c));
	c->op = (ik_u8)(w[0] & 0xff);
	if (!ik_smmu_cmd_name(c->op))
		return -EINVAL;
	err = ik_codec_decode(&ik_codec_smmuv3_, c->op, w, 2, c);
	return err ? err : smmu_check(c);
}

IK_API int ik_smmu_tlbi_range(const struct ik_smmu_cmd *tmpl, ik_u64 iova, ik_u64 size,
			      unsigned granule_shift, bool ril, struct ik_smmu_cmd *out,
			      unsigned max)
{
	ik_u64 gran, pages, w[2];
	unsigned n = 0;
	ik_u8 tg;

	if (!tmpl || !out || !is_tlbi_addr(tmpl->op) || size == 0)
		return -EINVAL;
	switch (granule_shift) {
	case 12: tg = IK_SMMU_TG_4K; break;
	case 14: tg = IK_SMMU_TG_16K; break;
	case 16: tg = IK_SMMU_TG_64K; break;
	default: return -EINVAL;
	}
	gran = (ik_u64)1 << granule_shift;
	if (!IK_IS_ALIGNED(iova, gran) || !IK_IS_ALIGNED(size, gran) || iova + size < iova)
		return -EINVAL;
	if (!ril && tmpl->ttl)
		return -EINVAL; /* the level hint needs TG, i.e. RIL */
	/* TLBI_S2_IPA carries IPA[51:12]: the whole range must lie below 2^52. */
	if (tmpl->op == IK_SMMU_CMD_TLBI_S2_IPA && (iova >> 52 || size > ((ik_u64)1 << 52) - iova))
		return -EINVAL;
	pages = size >> granule_shift;
	while (pages) {
		ik_u64 span;
		struct ik_smmu_cmd *c;

		if (n == max)
			return -ENOSPC;
		c = &out[n++];
		*c = *tmpl;
		c->addr = iova;
		if (!ril) {
			c->num = c->scale = c->tg = 0;
			span = 1;
		} else {
			/*
			 * Take the lowest set bit of the remaining page count as
			 * the scale and the next five bits as NUM + 1: each
			 * command clears up to five bits of the count.  SCALE
			 * is five bits wide (0..31): a count whose lowest set
			 * bit lies higher is taken 32 * 2^31 pages (or what is
			 * left, an even number below 32) at a time.
			 */
			unsigned scale = (unsigned)ik_ctz64(pages);
			/* pages >> scale is odd, so this is 1..31. */
			ik_u64 units = (pages >> scale) & 31;

			if (scale > IK_SMMU_TLBI_SCALE_MAX) {
				scale = IK_SMMU_TLBI_SCALE_MAX;
				units = pages >> scale;
				if (units > 32)
					units = 32;
			}

			c->tg = tg;
			c->scale = (ik_u8)scale;
			c->num = (ik_u8)(units - 1);
			span = units << scale;
		}
		/* Whatever else the template holds (ASID, VMID, ttl) must
		 * encode: never hand back a command the encoder rejects. */
		if (ik_smmu_cmd_encode(c, w))
			return -EINVAL;
		iova += span << granule_shift;
		pages -= span;
	}
	return (int)n;
}

/* ---------------------------------------------------------------- queue entries */

/*
 * struct ik_cmdq_fmt for the SMMUv3 command queue (<iommukit/cmdq.h>): the no-op
 * and the sync the queue writes itself, and how a consumer classifies an
 * entry.  The sync is a fixed template with the address and data patched in,
 * not a trip through the codec above, since every waiting ik_cmdq_issue()
 * writes one; tests/test_cmdq.c ("fmt_sync_vs_codec") holds it to the
 * codec's encoding bit for bit.
 *
 * SMMUv3: no-op = CMD_SYNC with CS=NONE; sync = CMD_SYNC, CS=IRQ with
 * an MSI write of `data` to `addr` (Inner Shareable, Write-Back).
 */
static void smmu_nop(void *ent)
{
	ik_u64 *w = (ik_u64 *)ent;

	w[0] = IK_SMMU_CMD_SYNC;
	w[1] = 0;
}

/* MSIAddress[51:2] sits at entry bits [115:66], i.e. in place in w[1]. */
#define SMMU_SYNC_MSIADDR_MASK ((((ik_u64)1 << 50) - 1) << 2)

static void smmu_sync(void *ent, ik_u64 addr, ik_u32 data)
{
	ik_u64 *w = (ik_u64 *)ent;

	/* An address the command cannot hold (>= 2^52, or not 4-byte
	 * aligned): a sync without the write, as is no address.
	 * ik_cmdq_init() refuses a ring where that could happen. */
	if (!addr || (addr & ~SMMU_SYNC_MSIADDR_MASK)) {
		smmu_nop(ent);
		return;
	}
	/* CS = IRQ [13:12], MSH = Inner Shareable (3) [23:22], MSIAttr =
	 * Write-Back (0xf) [27:24], MSIData [63:32]. */
	w[0] = IK_SMMU_CMD_SYNC | ((ik_u64)IK_SMMU_SYNC_CS_IRQ << 12) | ((ik_u64)3 << 22) |
	       ((ik_u64)0xf << 24) | ((ik_u64)data << 32);
	w[1] = addr;
}

/* The classification through a full decode: the reference for the fast
 * path below, and its fallback while the codec's plan is not built. */
static int smmu_classify_decode(const void *ent, struct ik_cmdq_sync_info *si)
{
	struct ik_smmu_cmd c;

	if (ik_smmu_cmd_decode((const ik_u64 *)ent, &c))
		return -EINVAL;
	if (c.op != IK_SMMU_CMD_SYNC)
		return IK_CMDQ_KIND_CMD;
	si->write = c.cs == IK_SMMU_SYNC_CS_IRQ && c.msiaddr != 0;
	si->addr = c.msiaddr;
	si->data = c.msidata;
	return IK_CMDQ_KIND_SYNC;
}

/*
 * What a consumer runs for every entry, so without the decode into a
 * struct: the opcode's bits from the codec's plan (a bit outside them is
 * illegal, as for ik_smmu_cmd_decode()), then smmu_check()'s rules read
 * from the entry's bits (the table's positions: NUM [16:12], SCALE
 * [24:20], TTL [73:72], TG [75:74], CS [13:12], RESP [77:76]), then a
 * sync's fields in place.  The same answer as smmu_classify_decode() for
 * every entry (tests/test_cmdq.c "fmt_smmuv3_classify_vs_decode").
 */
static int smmu_classify(const void *ent, struct ik_cmdq_sync_info *si)
{
	const ik_u64 *w = (const ik_u64 *)ent;
	unsigned op = (unsigned)(w[0] & 0xff);
	const struct ik_codec_op *o;

	if (!ik_smmu_cmd_name(op))
		return -EINVAL;
	if (!ik_codec_ready(&ik_codec_smmuv3_))
		return smmu_classify_decode(ent, si);
	o = &ik_codec_smmuv3_.ops[ik_codec_smmuv3_.slot[op]];
	if ((w[0] & ~o->defined[0]) | (w[1] & ~o->defined[1]))
		return -EINVAL;
	switch (op) {
	case IK_SMMU_CMD_TLBI_NH_VA:
	case IK_SMMU_CMD_TLBI_S2_IPA:
		/* TG == 0: NUM, SCALE and TTL are RES0 */
		if (!((w[1] >> 10) & 3) && ((w[0] >> 12) & 0x1f || (w[0] >> 20) & 0x1f ||
					    (w[1] >> 8) & 3))
			return -EINVAL;
		return IK_CMDQ_KIND_CMD;
	case IK_SMMU_CMD_PRI_RESP:
		return ((w[1] >> 12) & 3) == 3 ? -EINVAL : IK_CMDQ_KIND_CMD;
	case IK_SMMU_CMD_SYNC:
		break;
	default:
		return IK_CMDQ_KIND_CMD;
	}
	if (((w[0] >> 12) & 3) == 3)
		return -EINVAL;
	/* MSIAddress[51:2] at [115:66]: in place in w[1] */
	si->addr = w[1] & SMMU_SYNC_MSIADDR_MASK;
	si->data = (ik_u32)(w[0] >> 32);
	si->write = ((w[0] >> 12) & 3) == IK_SMMU_SYNC_CS_IRQ && si->addr != 0;
	return IK_CMDQ_KIND_SYNC;
}

IK_API const struct ik_cmdq_fmt ik_cmdq_fmt_smmuv3 = {
	"smmuv3", 16, smmu_nop, smmu_sync, smmu_classify,
};
