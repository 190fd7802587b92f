/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/cmd/riscv.h - RISC-V IOMMU command-queue encoders and decoders,
 * and the fault-queue record decoder (The RISC-V IOMMU Architecture
 * Specification v1.0, "In-memory queue interface").
 *
 * A command is 16 bytes: two little-endian 64-bit words, w[0] = bits
 * [63:0], w[1] = [127:64].  Every command has OPCODE [6:0] and FUNC3 [9:7];
 * struct ik_riscv_cmd is the decoded form, with the fields the command
 * defines; every other field must be zero.
 *
 * Field layout (bit numbers over the 128-bit command):
 *
 *   IOTINVAL.VMA  (1, 0)  AV [10]  PSCID [31:12]  PSCV [32]  GV [33]
 *                         GSCID [59:44]  ADDR[63:12] at [125:74]
 *   IOTINVAL.GVMA (1, 1)  AV [10]  GV [33]  GSCID [59:44]
 *                         ADDR[63:12] at [125:74]  (PSCV, PSCID reserved)
 *   IOFENCE.C     (2, 0)  AV [10]  WSI [11]  PR [12]  PW [13]
 *                         DATA [63:32]  ADDR[63:2] at [125:64]
 *   IODIR.INVAL_DDT (3, 0)  DV [33]  DID [63:40]
 *   IODIR.INVAL_PDT (3, 1)  PID [31:12]  DV [33] (must be 1)  DID [63:40]
 *
 * What the commands do:
 *   IOTINVAL.VMA  invalidate first-stage (and, under a G-stage, the
 *                 combined) IOTLB entries: of address space PSCID if PSCV
 *                 (else of every process context), of guest GSCID if GV
 *                 (else of the host), of the page holding ADDR if AV (else
 *                 of every address);
 *   IOTINVAL.GVMA invalidate G-stage entries: of GSCID if GV (else all), of
 *                 the guest-physical page holding ADDR if AV;
 *   IOFENCE.C     complete every command before it; then, if AV, write the
 *                 32-bit DATA at ADDR (4-byte aligned), if WSI, raise the
 *                 command queue's wired interrupt (cqcsr.fence_w_ip); PR/PW
 *                 also order previous page-request responses / writes;
 *   IODIR.INVAL_DDT  invalidate cached device contexts: device DID if DV,
 *                 else all;
 *   IODIR.INVAL_PDT  invalidate the cached process context PID of device
 *                 DID.
 * iommukit's encoding rules beyond the bit layout (the decoder applies the
 * same ones, so that decode and encode are inverses): a field that only
 * means something with its valid bit (PSCID with PSCV, GSCID with GV, ADDR
 * and DATA with AV, DID with DV) must be zero without it.  A decoder that
 * refuses a command reports what the IOMMU reports as cqcsr.cmd_ill.
 *
 * Fault-queue record (32 bytes, w[0..3]):
 *   w[0]  CAUSE [11:0]  PID [31:12]  PV [32]  PRIV [33]  TTYP [39:34]
 *         DID [63:40]
 *   w[1]  bits 31:0 custom use; bits 63:32 reserved
 *   w[2]  iotval  (per cause: the faulting IOVA for page and access faults)
 *   w[3]  iotval2 (guest-page faults: bits 63:2 of the guest-physical
 *         address in place; bit 0 set when the fault was on an implicit
 *         access to a first-stage table entry, bit 1 then set when that
 *         access was a write, an A/D update)
 *
 * Synchronization: pure functions; call them from any thread.
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_CMD_RISCV_H
#define IOMMUKIT_CMD_RISCV_H

#include <iommukit/env.h>

IK_BEGIN_DECLS

/* Opcodes and functions. */
#define IK_RISCV_CMD_IOTINVAL	1
#define IK_RISCV_CMD_IOFENCE	2
#define IK_RISCV_CMD_IODIR	3
#define IK_RISCV_IOTINVAL_VMA	0
#define IK_RISCV_IOTINVAL_GVMA	1
#define IK_RISCV_IOFENCE_C	0
#define IK_RISCV_IODIR_INVAL_DDT 0
#define IK_RISCV_IODIR_INVAL_PDT 1

/* The decoded form of one command; see the layout table above. */
struct ik_riscv_cmd {
	ik_u8 opcode;	/* IK_RISCV_CMD_* */
	ik_u8 func3;	/* IK_RISCV_IOTINVAL_* / _IOFENCE_C / _IODIR_* */
	ik_u8 av;	/* IOTINVAL, IOFENCE: ADDR (and DATA) valid */
	ik_u8 pscv;	/* IOTINVAL.VMA: PSCID valid */
	ik_u8 gv;	/* IOTINVAL: GSCID valid */
	ik_u8 wsi;	/* IOFENCE: wired-signalled interrupt */
	ik_u8 pr, pw;	/* IOFENCE: order page-request responses / writes */
	ik_u8 dv;	/* IODIR: DID valid */
	ik_u16 gscid;	/* IOTINVAL: 16 bits */
	ik_u32 pscid;	/* 20 bits */
	ik_u32 pid;	/* IODIR.INVAL_PDT: 20 bits */
	ik_u32 did;	/* IODIR: 24 bits */
	ik_u32 data;	/* IOFENCE: the 32-bit value written at addr */
	ik_u64 addr;	/* IOTINVAL: 4 KiB aligned; IOFENCE: 4-byte aligned */
};

/*
 * ik_riscv_cmd_encode - encode *c into w[0..1].  -EINVAL (w untouched): an
 * unknown opcode/function, a value that does not fit its field, a field the
 * command does not define set, a field set without its valid bit (see
 * above), IODIR.INVAL_PDT without DV, a misaligned addr, or a NULL c or w.
 * O(1).
 */
IK_API int ik_riscv_cmd_encode(const struct ik_riscv_cmd *c, ik_u64 *w);

/*
 * ik_riscv_cmd_decode - decode w[0..1] into *c.  -EINVAL for a command the
 * IOMMU reports as illegal (cmd_ill: unknown opcode or function, a reserved
 * bit set, the rules of ik_riscv_cmd_encode()), or for a NULL w or c (then
 * nothing is written).  O(1).
 */
IK_API int ik_riscv_cmd_decode(const ik_u64 *w, struct ik_riscv_cmd *c);

/* The command's name ("IOTINVAL.VMA"), or NULL for an unknown pair. */
IK_API const char *ik_riscv_cmd_name(unsigned opcode, unsigned func3);

/* ---- fault queue ---- */

/* CAUSE codes of fault records. */
enum ik_riscv_fault_cause {
	IK_RISCV_CAUSE_INST_ACCESS = 1,		/* instruction access fault */
	IK_RISCV_CAUSE_READ_MISALIGNED = 4,	/* read address misaligned */
	IK_RISCV_CAUSE_READ_ACCESS = 5,		/* read access fault */
	IK_RISCV_CAUSE_WRITE_MISALIGNED = 6,	/* write/AMO address misaligned */
	IK_RISCV_CAUSE_WRITE_ACCESS = 7,	/* write/AMO access fault */
	IK_RISCV_CAUSE_INST_PAGE = 12,		/* instruction page fault */
	IK_RISCV_CAUSE_READ_PAGE = 13,		/* read page fault */
	IK_RISCV_CAUSE_WRITE_PAGE = 15,		/* write/AMO page fault */
	IK_RISCV_CAUSE_INST_GUEST_PAGE = 20,	/* instruction guest-page fault */
	IK_RISCV_CAUSE_READ_GUEST_PAGE = 21,	/* read guest-page fault */
	IK_RISCV_CAUSE_WRITE_GUEST_PAGE = 23,	/* write/AMO guest-page fault */
	IK_RISCV_CAUSE_DMA_DISABLED = 256,	/* all inbound transactions disallowed */
	IK_RISCV_CAUSE_DDT_LOAD = 257,		/* DDT entry load access fault */
	IK_RISCV_CAUSE_DDT_INVALID = 258,	/* DDT entry not valid */
	IK_RISCV_CAUSE_DDT_MISCONFIG = 259,	/* DDT entry misconfigured */
	IK_RISCV_CAUSE_TTYP_BLOCKED = 260,	/* transaction type disallowed */
	IK_RISCV_CAUSE_MSI_LOAD = 261,		/* MSI PTE load access fault */
	IK_RISCV_CAUSE_MSI_INVALID = 262,	/* MSI PTE not valid */
	IK_RISCV_CAUSE_MSI_MISCONFIG = 263,	/* MSI PTE misconfigured */
	IK_RISCV_CAUSE_MRIF_ACCESS = 264,	/* MRIF access fault */
	IK_RISCV_CAUSE_PDT_LOAD = 265,		/* PDT entry load access fault */
	IK_RISCV_CAUSE_PDT_INVALID = 266,	/* PDT entry not valid */
	IK_RISCV_CAUSE_PDT_MISCONFIG = 267,	/* PDT entry misconfigured */
	IK_RISCV_CAUSE_DDT_CORRUPT = 268,	/* DDT data corruption */
	IK_RISCV_CAUSE_PDT_CORRUPT = 269,	/* PDT data corruption */
	IK_RISCV_CAUSE_MSI_PT_CORRUPT = 270,	/* MSI PT data corruption */
	IK_RISCV_CAUSE_MRIF_CORRUPT = 271,	/* MSI MRIF data corruption */
	IK_RISCV_CAUSE_INTERNAL = 272,		/* internal data path error */
	IK_RISCV_CAUSE_MSI_WRITE = 273,		/* IOMMU MSI write access fault */
	IK_RISCV_CAUSE_PT_CORRUPT = 274,	/* first/second-stage PT data corruption */
};

/* TTYP: the transaction that faulted. */
enum ik_riscv_ttyp {
	IK_RISCV_TTYP_NONE = 0,		/* not caused by an inbound transaction */
	IK_RISCV_TTYP_UX = 1,		/* untranslated read for execute */
	IK_RISCV_TTYP_UR = 2,		/* untranslated read */
	IK_RISCV_TTYP_UW = 3,		/* untranslated write/AMO */
	IK_RISCV_TTYP_TX = 5,		/* translated read for execute */
	IK_RISCV_TTYP_TR = 6,		/* translated read */
	IK_RISCV_TTYP_TW = 7,		/* translated write/AMO */
	IK_RISCV_TTYP_ATS = 8,		/* PCIe ATS translation request */
	IK_RISCV_TTYP_MSG = 9,		/* PCIe message request */
};

/*
 * struct ik_riscv_fault - a decoded fault record.
 *   cause    IK_RISCV_CAUSE_* (or a reserved / custom value, 0..4095);
 *   ttyp     IK_RISCV_TTYP_*;
 *   did      device ID (24 bits);
 *   pid, pv  process ID (20 bits), valid;
 *   priv     the request was privileged (S-mode);
 *   custom   w[1] bits 31:0 (implementation-defined);
 *   iotval, iotval2  as recorded;
 *   page_fault, guest_page_fault   the cause is a (first-stage) page fault,
 *            a guest-page fault (G-stage: iotval2 holds the GPA);
 *   gpa      guest-page faults: iotval2 with bits 1:0 cleared (the GPA,
 *            4-byte granular);
 *   implicit, implicit_write  guest-page faults: iotval2 bit 0 (the
 *            G-stage fault happened on an access to a first-stage table
 *            entry) and bit 1 (that access was a write: an A/D update).
 */
struct ik_riscv_fault {
	ik_u16 cause;
	ik_u8 ttyp;
	bool pv, priv, page_fault, guest_page_fault, implicit, implicit_write;
	ik_u32 did, pid, custom;
	ik_u64 iotval, iotval2, gpa;
};

/*
 * ik_riscv_fault_decode - decode a 32-byte fault record w[0..3] (as the
 * IOMMU, or a guest's emulated IOMMU, wrote it: hostile input).  -EINVAL
 * for a NULL argument, a record with a reserved bit set (w[1] bits 63:32),
 * a reserved TTYP (4, 10..31), a PID or PRIV with PV clear, a DID or PV
 * with TTYP 0 (no transaction: the specification has them 0), or a cause in the
 * reserved ranges (0, 2, 3, 8..11, 14, 16..19, 22, 24..255, 275..2047:
 * 2048..4095 are custom, accepted); *f is then zeroed.  O(1).
 */
IK_API int ik_riscv_fault_decode(const ik_u64 *w, struct ik_riscv_fault *f);

/*
 * ik_riscv_fault_encode - the record for *f (what an emulated IOMMU writes
 * into a guest's fault queue); page_fault, guest_page_fault, gpa, implicit
 * and implicit_write are derived, not read.  -EINVAL (w untouched) for what
 * ik_riscv_fault_decode() refuses, a value that does not fit its field, or
 * a NULL argument.  O(1).
 */
IK_API int ik_riscv_fault_encode(const struct ik_riscv_fault *f, ik_u64 *w);

/* The cause's name ("read page fault"), or NULL for a reserved value
 * ("custom" for 2048..4095). */
IK_API const char *ik_riscv_fault_cause_name(unsigned cause);

IK_END_DECLS

#endif /* IOMMUKIT_CMD_RISCV_H */
