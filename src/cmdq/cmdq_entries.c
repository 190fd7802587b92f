/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The command queue's entry formats: how the queue writes a no-op and a sync for
 * SMMUv3, VT-d and RISC-V, and how a consumer recognises entries.
 */
#include <iommukit/cmdq.h>
#include <iommukit/cmd/smmuv3.h>
#include <iommukit/cmd/vtd.h>
#include <iommukit/cmd/riscv.h>

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

/*
 * ---- VT-d: every wait the queue writes must signal its completion: the
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
	struct ik_vtd_desc d;
	int err = -EINVAL;

	IK_ENV_MEMSET(&d, 0, sizeof(d));
	d.type = IK_VTD_DESC_WAIT;
	if (addr) {
		d.sw = 1;
		d.status_addr = addr;
		d.status_data = data;
		err = ik_vtd_desc_encode(&d, (ik_u64 *)ent, words);
	}
	if (err) {
		d.sw = 0;
		d.iflag = 1;
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

/*
 * ---- RISC-V IOMMU: sync = IOFENCE.C with AV = 1 (DATA written at ADDR
 * once every command before it has completed); no-op = IOFENCE.C with
 * AV = WSI = 0, a fence that writes nothing and raises nothing (the
 * consumer's cqh passing it is its only effect).  An address the command
 * cannot hold (not 4-byte aligned) gives the no-op form, a sync without
 * the write, as the ik_cmdq_fmt contract asks.
 */
static void riscv_nop(void *ent)
{
	ik_u64 *w = (ik_u64 *)ent;

	w[0] = IK_RISCV_CMD_IOFENCE | ((ik_u64)IK_RISCV_IOFENCE_C << 7);
	w[1] = 0;
}

static void riscv_sync(void *ent, ik_u64 addr, ik_u32 data)
{
	struct ik_riscv_cmd c;

	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.opcode = IK_RISCV_CMD_IOFENCE;
	c.func3 = IK_RISCV_IOFENCE_C;
	if (addr) {
		c.av = 1;
		c.addr = addr;
		c.data = data;
	}
	if (ik_riscv_cmd_encode(&c, (ik_u64 *)ent))
		riscv_nop(ent);
}

static int riscv_classify(const void *ent, struct ik_cmdq_sync_info *si)
{
	struct ik_riscv_cmd c;

	if (ik_riscv_cmd_decode((const ik_u64 *)ent, &c))
		return -EINVAL;
	if (c.opcode != IK_RISCV_CMD_IOFENCE)
		return IK_CMDQ_KIND_CMD;
	si->write = c.av != 0;
	si->addr = c.addr;
	si->data = c.data;
	return IK_CMDQ_KIND_SYNC;
}

IK_API const struct ik_cmdq_fmt ik_cmdq_fmt_riscv = {
	"riscv", 16, riscv_nop, riscv_sync, riscv_classify,
};
