/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The command queue's entry formats: how the queue writes a no-op and a sync for
 * SMMUv3, VT-d, RISC-V and AMD, and how a consumer recognises entries.
 *
 * The queue writes a sync on every ik_cmdq_issue() that waits, so the syncs
 * are written here directly, a fixed template with the address and data
 * patched in, rather than through the field codec; tests/test_cmdq.c
 * ("fmt_sync_vs_codec") holds each to the codec's encoding bit for bit.
 */
#include <iommukit/cmdq.h>
#include <iommukit/cmd/smmuv3.h>
#include <iommukit/cmd/vtd.h>
#include <iommukit/cmd/riscv.h>
#include <iommukit/cmd/amd.h>

/* ---- SMMUv3: no-op = CMD_SYNC with CS=NONE; sync = CMD_SYNC, CS=IRQ with
 * an MSI write of `data` to `addr` (Inner Shareable, Write-Back). */
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
	ik_u64 *w = (ik_u64 *)ent;

	if (!addr || (addr & 3)) {
		riscv_nop(ent);
		return;
	}
	/* AV is bit 10, DATA [63:32], ADDR[63:2] at [125:64]. */
	w[0] = IK_RISCV_CMD_IOFENCE | ((ik_u64)IK_RISCV_IOFENCE_C << 7) | ((ik_u64)1 << 10) |
	       ((ik_u64)data << 32);
	w[1] = addr >> 2;
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

/*
 * ---- AMD: sync = COMPLETION_WAIT with S = 1: once every earlier command
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
