/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The command-queue formats: how the queue writes a no-op and a sync for
 * SMMUv3 and VT-d, and how a consumer recognises entries.
 */
#include <iommukit/cmdq.h>
#include <iommukit/cmd/smmuv3.h>
#include <iommukit/cmd/vtd.h>

/* ---- SMMUv3: no-op = CMD_SYNC with CS=NONE; sync = CMD_SYNC, CS=IRQ with
 * an MSI write of `data` to `addr` (Inner Shareable, Write-Back). */
static void smmu_nop(void *ent)
{
	ik_u64 *w = (ik_u64 *)ent;

	w[0] = IK_SMMU_CMD_SYNC;
	w[1] = 0;
}

static void smmu_sync(void *ent, ik_u64 addr, ik_u32 data)
{
	struct ik_smmu_cmd c;
	int err;

	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.op = IK_SMMU_CMD_SYNC;
	if (addr) {
		c.cs = IK_SMMU_SYNC_CS_IRQ;
		c.msh = 3;
		c.msiattr = 0xf;
		c.msidata = data;
		c.msiaddr = addr;
	}
	/* An address the command cannot hold (>= 2^52): a sync without the
	 * write.  ik_cmdq_init() refuses a ring where that could happen. */
	err = ik_smmu_cmd_encode(&c, (ik_u64 *)ent);
	if (err)
		smmu_nop(ent);
}

static int smmu_classify(const void *ent, struct ik_cmdq_sync_info *si)
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

IK_API const struct ik_cmdq_fmt ik_cmdq_fmt_smmuv3 = {
	"smmuv3", 16, smmu_nop, smmu_sync, smmu_classify,
};

/* ---- VT-d: no-op = invalidation wait with no status write, no interrupt;
 * sync = invalidation wait with SW=1 (status data written to addr). */
static void vtd_wait(void *ent, unsigned words, ik_u64 addr, ik_u32 data)
{
	struct ik_vtd_desc d;
	int err;

	IK_ENV_MEMSET(&d, 0, sizeof(d));
	d.type = IK_VTD_DESC_WAIT;
	if (addr) {
		d.sw = 1;
		d.status_addr = addr;
		d.status_data = data;
	}
	err = ik_vtd_desc_encode(&d, (ik_u64 *)ent, words);
	if (err) {
		/* An address the descriptor cannot hold (not 4-byte aligned):
		 * a wait without the status write, as the format contract asks;
		 * ik_cmdq_init() refuses such a ring for MSI. */
		d.sw = 0;
		d.status_addr = 0;
		d.status_data = 0;
		err = ik_vtd_desc_encode(&d, (ik_u64 *)ent, words);
	}
	IK_ASSERT(err == 0);
	(void)err;
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
