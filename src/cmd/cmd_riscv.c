/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RISC-V IOMMU commands, encoded and decoded from one field table (positions
 * from the RISC-V IOMMU specification, "Command Queue"; summarised in
 * <iommukit/cmd/riscv.h>), and the fault-queue record.  Last, the queue
 * entries (ik_cmdq_fmt_riscv).
 */
#include <iommukit/cmdq.h>
#include <iommukit/cmd/riscv.h>
#include "cmd_codec.h"

/* The codec's opcode key: OPCODE (< 16 for the commands here) and FUNC3. */
#define RV_OP(opc, fn) ((ik_u8)((opc) | ((fn) << 4)))
#define OP_VMA RV_OP(IK_RISCV_CMD_IOTINVAL, IK_RISCV_IOTINVAL_VMA)
#define OP_GVMA RV_OP(IK_RISCV_CMD_IOTINVAL, IK_RISCV_IOTINVAL_GVMA)
#define OP_FENCE RV_OP(IK_RISCV_CMD_IOFENCE, IK_RISCV_IOFENCE_C)
#define OP_DDT RV_OP(IK_RISCV_CMD_IODIR, IK_RISCV_IODIR_INVAL_DDT)
#define OP_PDT RV_OP(IK_RISCV_CMD_IODIR, IK_RISCV_IODIR_INVAL_PDT)

#define M(m) (ik_u8) __builtin_offsetof(struct ik_riscv_cmd, m), \
	     (ik_u8)sizeof(((struct ik_riscv_cmd *)0)->m)
#define F(op, m, lsb, width, shift) { op, M(m), lsb, width, shift }

static const struct ik_field rv_fields[] = {
	F(OP_VMA, av, 10, 1, 0),
	F(OP_VMA, pscid, 12, 20, 0),
	F(OP_VMA, pscv, 32, 1, 0),
	F(OP_VMA, gv, 33, 1, 0),
	F(OP_VMA, gscid, 44, 16, 0),
	F(OP_VMA, addr, 74, 52, 12),
	F(OP_GVMA, av, 10, 1, 0),
	F(OP_GVMA, gv, 33, 1, 0),
	F(OP_GVMA, gscid, 44, 16, 0),
	F(OP_GVMA, addr, 74, 52, 12),
	F(OP_FENCE, av, 10, 1, 0),
	F(OP_FENCE, wsi, 11, 1, 0),
	F(OP_FENCE, pr, 12, 1, 0),
	F(OP_FENCE, pw, 13, 1, 0),
	F(OP_FENCE, data, 32, 32, 0),
	F(OP_FENCE, addr, 64, 62, 2),
	F(OP_DDT, dv, 33, 1, 0),
	F(OP_DDT, did, 40, 24, 0),
	F(OP_PDT, pid, 12, 20, 0),
	F(OP_PDT, dv, 33, 1, 0),
	F(OP_PDT, did, 40, 24, 0),
};

struct ik_codec ik_codec_riscv_ = IK_CODEC_INIT(rv_fields, struct ik_riscv_cmd, 2, 0x3ff, 0);

IK_API const char *ik_riscv_cmd_name(unsigned opcode, unsigned func3)
{
	if (opcode > 0xf || func3 > 7)
		return NULL;
	switch (RV_OP(opcode, func3)) {
	case OP_VMA: return "IOTINVAL.VMA";
	case OP_GVMA: return "IOTINVAL.GVMA";
	case OP_FENCE: return "IOFENCE.C";
	case OP_DDT: return "IODIR.INVAL_DDT";
	case OP_PDT: return "IODIR.INVAL_PDT";
	default: return NULL;
	}
}

/* The rules beyond the layout (see the header): valid bits gate their
 * fields; a PDT invalidation names its device. */
static int rv_check(const struct ik_riscv_cmd *c)
{
	if (c->av > 1 || c->pscv > 1 || c->gv > 1 || c->dv > 1)
		return -EINVAL;	/* the codec checks widths; keep flags 0/1 */
	if ((!c->av && (c->addr || c->data)) || (!c->pscv && c->pscid) ||
	    (!c->gv && c->gscid) || (!c->dv && c->did))
		return -EINVAL;
	if (c->opcode == IK_RISCV_CMD_IODIR && c->func3 == IK_RISCV_IODIR_INVAL_PDT && !c->dv)
		return -EINVAL;
	if (c->opcode == IK_RISCV_CMD_IOTINVAL && (c->addr & 0xfff))
		return -EINVAL;
	if (c->opcode == IK_RISCV_CMD_IOFENCE && (c->addr & 3))
		return -EINVAL;
	return 0;
}

IK_API int ik_riscv_cmd_encode(const struct ik_riscv_cmd *c, ik_u64 *w)
{
	ik_u64 t[2] = { 0, 0 };
	int err;

	if (!c || !w || !ik_riscv_cmd_name(c->opcode, c->func3))
		return -EINVAL;
	err = rv_check(c);
	if (err)
		return err;
	t[0] = (ik_u64)c->opcode | ((ik_u64)c->func3 << 7);
	err = ik_codec_encode(&ik_codec_riscv_, RV_OP(c->opcode, c->func3), c, t);
	if (err)
		return err;
	w[0] = t[0];
	w[1] = t[1];
	return 0;
}

IK_API int ik_riscv_cmd_decode(const ik_u64 *w, struct ik_riscv_cmd *c)
{
	int err;

	if (!w || !c)
		return -EINVAL;
	IK_ENV_MEMSET(c, 0, sizeof(*c));
	c->opcode = (ik_u8)(w[0] & 0x7f);
	c->func3 = (ik_u8)((w[0] >> 7) & 7);
	if (!ik_riscv_cmd_name(c->opcode, c->func3))
		return -EINVAL;
	err = ik_codec_decode(&ik_codec_riscv_, RV_OP(c->opcode, c->func3), w, 2, c);
	if (!err)
		err = rv_check(c);
	return err;
}

/* ---- fault queue records ---- */

IK_API const char *ik_riscv_fault_cause_name(unsigned cause)
{
	static const char *const low[24] = {
		[1] = "instruction access fault", [4] = "read address misaligned",
		[5] = "read access fault", [6] = "write/AMO address misaligned",
		[7] = "write/AMO access fault", [12] = "instruction page fault",
		[13] = "read page fault", [15] = "write/AMO page fault",
		[20] = "instruction guest-page fault", [21] = "read guest-page fault",
		[23] = "write/AMO guest-page fault",
	};
	static const char *const high[19] = {
		"all inbound transactions disallowed", "DDT entry load access fault",
		"DDT entry not valid", "DDT entry misconfigured", "transaction type disallowed",
		"MSI PTE load access fault", "MSI PTE not valid", "MSI PTE misconfigured",
		"MRIF access fault", "PDT entry load access fault", "PDT entry not valid",
		"PDT entry misconfigured", "DDT data corruption", "PDT data corruption",
		"MSI PT data corruption", "MSI MRIF data corruption", "internal data path error",
		"IOMMU MSI write access fault", "first/second-stage PT data corruption",
	};

	if (cause < 24)
		return low[cause];
	if (cause >= 256 && cause < 256 + IK_ARRAY_SIZE(high))
		return high[cause - 256];
	if (cause >= 2048 && cause < 4096)
		return "custom";
	return NULL;
}

static bool rv_ttyp_ok(unsigned t)
{
	return t != 4 && (t < 10 || t >= 32) && t < 64;
}

/* Derived fields of a fault with f's cause and iotval2. */
static void rv_fault_derive(struct ik_riscv_fault *f)
{
	unsigned c = f->cause;

	f->page_fault = c == IK_RISCV_CAUSE_INST_PAGE || c == IK_RISCV_CAUSE_READ_PAGE ||
			c == IK_RISCV_CAUSE_WRITE_PAGE;
	f->guest_page_fault = c == IK_RISCV_CAUSE_INST_GUEST_PAGE ||
			      c == IK_RISCV_CAUSE_READ_GUEST_PAGE ||
			      c == IK_RISCV_CAUSE_WRITE_GUEST_PAGE;
	/* iotval2: GPA bits 63:2 in place; bit 0 implicit access, bit 1 an
	 * implicit write */
	f->implicit = f->guest_page_fault && (f->iotval2 & 1);
	f->implicit_write = f->implicit && (f->iotval2 & 2);
	f->gpa = f->guest_page_fault ? f->iotval2 & ~(ik_u64)3 : 0;
}

static int rv_fault_check(const struct ik_riscv_fault *f)
{
	/* PID and PRIV are 0 without PV; DID, PV (so PID, PRIV) 0 without
	 * a transaction (TTYP 0) */
	if (!ik_riscv_fault_cause_name(f->cause) || !rv_ttyp_ok(f->ttyp) ||
	    (!f->pv && (f->pid || f->priv)) || (!f->ttyp && (f->did || f->pv)) || f->did >> 24 ||
	    f->pid >> 20)
		return -EINVAL;
	return 0;
}

IK_API int ik_riscv_fault_decode(const ik_u64 *w, struct ik_riscv_fault *f)
{
	if (!w || !f)
		return -EINVAL;
	IK_ENV_MEMSET(f, 0, sizeof(*f));
	if (w[1] >> 32)
		return -EINVAL;	/* reserved for standard use */
	f->cause = (ik_u16)(w[0] & 0xfff);
	f->pid = (ik_u32)((w[0] >> 12) & 0xfffff);
	f->pv = (w[0] >> 32) & 1;
	f->priv = (w[0] >> 33) & 1;
	f->ttyp = (ik_u8)((w[0] >> 34) & 0x3f);
	f->did = (ik_u32)(w[0] >> 40);
	f->custom = (ik_u32)w[1];
	f->iotval = w[2];
	f->iotval2 = w[3];
	if (rv_fault_check(f)) {
		IK_ENV_MEMSET(f, 0, sizeof(*f));
		return -EINVAL;
	}
	rv_fault_derive(f);
	return 0;
}

IK_API int ik_riscv_fault_encode(const struct ik_riscv_fault *f, ik_u64 *w)
{
	if (!f || !w || f->cause > 0xfff || rv_fault_check(f))
		return -EINVAL;
	w[0] = (ik_u64)f->cause | ((ik_u64)f->pid << 12) | ((ik_u64)f->pv << 32) |
	       ((ik_u64)f->priv << 33) | ((ik_u64)f->ttyp << 34) | ((ik_u64)f->did << 40);
	w[1] = f->custom;
	w[2] = f->iotval;
	w[3] = f->iotval2;
	return 0;
}

/* ---------------------------------------------------------------- queue entries */

/*
 * struct ik_cmdq_fmt for the RISC-V IOMMU command queue (<iommukit/cmdq.h>): the no-op
 * and the sync the queue writes itself, and how a consumer classifies an
 * entry.  The sync is a fixed template with the address and data patched in,
 * not a trip through the codec above, since every waiting ik_cmdq_issue()
 * writes one; tests/test_cmdq.c ("fmt_sync_vs_codec") holds it to the
 * codec's encoding bit for bit.
 *
 * RISC-V IOMMU: sync = IOFENCE.C with AV = 1 (DATA written at ADDR
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
