/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/cmd/smmuv3.h - ARM SMMUv3 command encoders and decoders.
 *
 * An SMMUv3 command-queue entry is 16 bytes: two little-endian 64-bit words,
 * w[0] holding bits [63:0] and w[1] bits [127:64] as the specification (Arm
 * IHI 0070, "Commands") numbers them.  struct ik_smmu_cmd is the decoded
 * form: an opcode and the fields that opcode defines; fields that an opcode
 * does not define must be zero.
 *
 *   ik_smmu_cmd_encode(&cmd, w)  -> 0, or -EINVAL (unknown opcode, a value that
 *                                   does not fit its field, a field the opcode
 *                                   does not define set, misaligned address,
 *                                   NULL arguments);
 *   ik_smmu_cmd_decode(w, &cmd)  -> 0, or -EINVAL for what the SMMU reports as
 *                                   CERROR_ILL: an opcode we do not know, a bit
 *                                   set outside the opcode's fields, CS == 3
 *                                   (and for NULL arguments).
 *
 * Field layout (bit numbers over the 128-bit entry):
 *
 *   all         OP [7:0]
 *   CFGI_STE    SSec [10]  SID [63:32]  Leaf [64]
 *   CFGI_STE_RANGE (CFGI_ALL: Range 31)  SSec [10]  SID [63:32]  Range [68:64]
 *   CFGI_CD     SSec [10]  SSID [31:12]  SID [63:32]  Leaf [64]
 *   CFGI_CD_ALL SSec [10]  SID [63:32]
 *   TLBI_NH_ALL, TLBI_S12_VMALL          VMID [47:32]
 *   TLBI_NH_ASID                         VMID [47:32]  ASID [63:48]
 *   TLBI_NH_VA  NUM [16:12] SCALE [24:20] VMID [47:32] ASID [63:48]
 *               Leaf [64] TTL [73:72] TG [75:74] Address[63:12] at [127:76]
 *   TLBI_S2_IPA NUM [16:12] SCALE [24:20] VMID [47:32]
 *               Leaf [64] TTL [73:72] TG [75:74] Address[51:12] at [115:76]
 *   TLBI_EL2_ALL, TLBI_NSNH_ALL          (no fields)
 *   ATC_INV     Global [9] SSV [11] SSID [31:12] SID [63:32]
 *               Size [69:64] Address[63:12] at [127:76]
 *   PRI_RESP    SSV [11] SSID [31:12] SID [63:32] PRGI [72:64] Resp [77:76]
 *   CMD_SYNC    CS [13:12] MSH [23:22] MSIAttr [27:24] MSIData [63:32]
 *               MSIAddress[51:2] at [115:66]
 *
 * Range invalidation (SMMU_IDR3.RIL): with TG != 0 a TLBI_NH_VA/TLBI_S2_IPA
 * covers (NUM + 1) * 2^SCALE granules from Address, and TTL hints the level
 * of the leaf entries; with TG == 0, NUM, SCALE and TTL must be zero.
 *
 * Synchronization: every function here is pure (no shared state); call them
 * from any thread.
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_CMD_SMMUV3_H
#define IOMMUKIT_CMD_SMMUV3_H

#include <iommukit/env.h>

IK_BEGIN_DECLS

/* Opcodes (w[0] bits [7:0]). */
#define IK_SMMU_CMD_CFGI_STE 0x03
#define IK_SMMU_CMD_CFGI_STE_RANGE 0x04
#define IK_SMMU_CMD_CFGI_CD 0x05
#define IK_SMMU_CMD_CFGI_CD_ALL 0x06
#define IK_SMMU_CMD_TLBI_NH_ALL 0x10
#define IK_SMMU_CMD_TLBI_NH_ASID 0x11
#define IK_SMMU_CMD_TLBI_NH_VA 0x12
#define IK_SMMU_CMD_TLBI_EL2_ALL 0x20
#define IK_SMMU_CMD_TLBI_S12_VMALL 0x28
#define IK_SMMU_CMD_TLBI_S2_IPA 0x2a
#define IK_SMMU_CMD_TLBI_NSNH_ALL 0x30
#define IK_SMMU_CMD_ATC_INV 0x40
#define IK_SMMU_CMD_PRI_RESP 0x41
#define IK_SMMU_CMD_SYNC 0x46

/* CFGI_ALL is CFGI_STE_RANGE with Range = 31 (every StreamID). */
/* The largest SCALE a range TLBI holds (a five-bit field). */
#define IK_SMMU_TLBI_SCALE_MAX 31
#define IK_SMMU_CFGI_RANGE_ALL 31

/* CMD_SYNC completion signal (CS). */
#define IK_SMMU_SYNC_CS_NONE 0 /* no signal: poll SMMU_CMDQ_CONS */
#define IK_SMMU_SYNC_CS_IRQ 1  /* MSI write of MSIData to MSIAddress (or wired IRQ) */
#define IK_SMMU_SYNC_CS_SEV 2  /* send event (WFE wake-up) */

/* PRI_RESP responses. */
#define IK_SMMU_PRI_RESP_DENY 0
#define IK_SMMU_PRI_RESP_FAIL 1
#define IK_SMMU_PRI_RESP_SUCC 2

/* Translation granule codes (TG). */
#define IK_SMMU_TG_NONE 0
#define IK_SMMU_TG_4K 1
#define IK_SMMU_TG_16K 2
#define IK_SMMU_TG_64K 3

/* Command-queue error codes, SMMU_CMDQ_CONS.ERR. */
#define IK_SMMU_CERROR_NONE 0
#define IK_SMMU_CERROR_ILL 1
#define IK_SMMU_CERROR_ABT 2
#define IK_SMMU_CERROR_ATC_INV_SYNC 3

/* The decoded form of one command; see the layout table above. */
struct ik_smmu_cmd {
	ik_u8 op;	/* IK_SMMU_CMD_* */
	ik_u8 ssec;	/* CFGI_*: Secure stream */
	ik_u8 leaf;	/* CFGI_STE/CD, TLBI_*: leaf only */
	ik_u8 ssv;	/* ATC_INV, PRI_RESP: SubstreamID valid */
	ik_u8 global;	/* ATC_INV: all SubstreamIDs */
	ik_u8 range;	/* CFGI_STE_RANGE: 2^(range+1) StreamIDs, 0..31 */
	ik_u8 num;	/* TLBI range: NUM, 0..31 */
	ik_u8 scale;	/* TLBI range: SCALE, 0..31 */
	ik_u8 tg;	/* TLBI range: IK_SMMU_TG_* */
	ik_u8 ttl;	/* TLBI level hint, 0..3 */
	ik_u8 size;	/* ATC_INV: 2^size pages of 4 KiB, 0..63 */
	ik_u8 resp;	/* PRI_RESP: IK_SMMU_PRI_RESP_* */
	ik_u8 cs;	/* CMD_SYNC: IK_SMMU_SYNC_CS_* */
	ik_u8 msh;	/* CMD_SYNC: MSI shareability, 0..3 */
	ik_u8 msiattr;	/* CMD_SYNC: MSI memory attributes, 0..15 */
	ik_u16 asid, vmid;	/* TLBI_*: ASID and VMID tags (16 bits each with ASID16/VMID16) */
	ik_u16 prgi;	/* PRI_RESP: page request group index, 0..511 */
	ik_u32 sid;	/* StreamID */
	ik_u32 ssid;	/* SubstreamID, 20 bits */
	ik_u32 msidata;	/* CMD_SYNC: the 32-bit value the MSI writes */
	ik_u64 addr;	/* TLBI VA/IPA, ATC_INV: byte address, 4 KiB aligned */
	ik_u64 msiaddr;	/* CMD_SYNC: MSI target, 4-byte aligned, < 2^52 */
};

/* Encode `c` into w[0..1].  -EINVAL (w untouched) on a bad command or a NULL
 * c or w.  O(1). */
IK_API int ik_smmu_cmd_encode(const struct ik_smmu_cmd *c, ik_u64 w[2]);

/* Decode w[0..1] into *c (zeroed first).  -EINVAL: illegal (CERROR_ILL), or
 * a NULL w or c (then nothing is written). */
IK_API int ik_smmu_cmd_decode(const ik_u64 w[2], struct ik_smmu_cmd *c);

/* The opcode's name ("TLBI_NH_VA"), or NULL for an unknown opcode. */
IK_API const char *ik_smmu_cmd_name(unsigned op);

/*
 * ik_smmu_tlbi_range - the TLBI commands that invalidate [iova, iova + size).
 *
 * `tmpl` is a TLBI_NH_VA or TLBI_S2_IPA command carrying ASID/VMID, leaf and
 * ttl; its addr, num, scale and tg are ignored.  `granule_shift` is 12, 14 or
 * 16.  Without `ril` (the SMMU lacks range invalidation) one command per
 * granule is produced, with TG = 0 (ttl must then be 0); with `ril` each
 * command covers (NUM+1) * 2^SCALE granules, so any range takes at most a few
 * commands per power of two of its length.  iova and size must be multiples
 * of the granule, size > 0, and iova + size must not wrap; for TLBI_S2_IPA
 * the range must end at or below 2^52 (the command holds IPA[51:12]).
 * Every command returned encodes with ik_smmu_cmd_encode().
 *
 * Returns the number of commands written to out[0..max), or -EINVAL (bad
 * argument, NULL tmpl or out, or a template field the encoder rejects),
 * -ENOSPC (more than `max` needed; nothing useful written).  O(result).
 */
IK_API int ik_smmu_tlbi_range(const struct ik_smmu_cmd *tmpl, ik_u64 iova, ik_u64 size,
			      unsigned granule_shift, bool ril, struct ik_smmu_cmd *out,
			      unsigned max);

IK_END_DECLS

#endif /* IOMMUKIT_CMD_SMMUV3_H */
