/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/cmd/amd.h - AMD IOMMU command-buffer encoders and decoders.
 *
 * A command is 16 bytes: two little-endian 64-bit words, w[0] = bits [63:0]
 * and w[1] = bits [127:64] (the specification's DW0..DW3 are w[0] low/high,
 * w[1] low/high).  The opcode is bits [63:60].  struct ik_amd_cmd is the
 * decoded form; a field the opcode does not define must be zero.
 *
 * Field layout (bit numbers over the 128-bit command; from AMD pub. 48882,
 * "Commands", checked against QEMU's hw/i386/amd_iommu.c and Linux's
 * drivers/iommu/amd/iommu.c):
 *
 *   COMPLETION_WAIT (0x1)          S (store) [0]  I (interrupt) [1]
 *                                  F (flush queue) [2]
 *                                  StoreAddress[51:3] at [51:3]
 *                                  StoreData [127:64] (64 bits)
 *   INVALIDATE_DEVTAB_ENTRY (0x2)  DeviceID [15:0]
 *   INVALIDATE_IOMMU_PAGES (0x3)   PASID [19:0]  DomainID [47:32]
 *                                  S [64]  PDE [65]  GN [66]
 *                                  Address[63:12] at [127:76]
 *   INVALIDATE_IOTLB_PAGES (0x4)   DeviceID [15:0]  PASID[15:8] at [23:16]
 *                                  Maxpend [31:24]  QueueID [47:32]
 *                                  PASID[7:0] at [55:48]
 *                                  S [64]  GN [66]  Address[63:12] at [127:76]
 *   INVALIDATE_IOMMU_ALL (0x8)     (no fields)
 * Every other bit is reserved: the decoder refuses it (an ILLEGAL_COMMAND
 * event on the hardware), as it refuses opcodes not listed here.
 *
 * Address and the S bit (both invalidations): S = 0 names the one 4 KiB page
 * at Address; S = 1 a naturally aligned power-of-two range whose size is
 * given by the lowest zero bit of Address at or above bit 12: a zero at bit
 * k means 2^(k + 1) bytes from Address with bits k..0 cleared.  A first zero
 * at bit 51 or above (or none below 64) means the whole address space
 * (ik_amd_inv_decode(); QEMU reads Table 14 this way; Linux sends
 * 0x7fff_ffff_ffff_f000 for "all").  PDE = 1 also invalidates cached page
 * directory entries (walk caches).  GN = 1: guest (PASID) invalidation.
 *
 * COMPLETION_WAIT: once every earlier command has completed, with S = 1 the
 * IOMMU writes the 64-bit StoreData at StoreAddress (8-byte aligned, below
 * 2^52); with I = 1 it raises the completion-wait interrupt; F = 1 also
 * waits for outstanding requests to drain.  With neither S nor I it is a
 * barrier whose completion is only seen in the head pointer: the queue's
 * no-op.
 *
 * Synchronization: pure functions; call them from any thread.
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_CMD_AMD_H
#define IOMMUKIT_CMD_AMD_H

#include <iommukit/env.h>

IK_BEGIN_DECLS

/* Opcodes (struct ik_amd_cmd.op), with the layouts above. */
#define IK_AMD_CMD_COMPLETION_WAIT 0x1
#define IK_AMD_CMD_INV_DEVTAB_ENTRY 0x2
#define IK_AMD_CMD_INV_IOMMU_PAGES 0x3
#define IK_AMD_CMD_INV_IOTLB_PAGES 0x4
#define IK_AMD_CMD_INV_IOMMU_ALL 0x8

/* The Address of an S = 1 invalidation of everything (Linux's value). */
#define IK_AMD_INV_ALL_ADDR 0x7ffffffffffff000ull

/* The decoded form of one command; see the layout table above. */
struct ik_amd_cmd {
	ik_u8 op;	/* IK_AMD_CMD_* */
	ik_u8 s;	/* invalidations: size bit */
	ik_u8 pde;	/* INVALIDATE_IOMMU_PAGES: also page directory entries */
	ik_u8 gn;	/* invalidations: guest (PASID) */
	ik_u8 store;	/* COMPLETION_WAIT: S */
	ik_u8 irq;	/* COMPLETION_WAIT: I */
	ik_u8 flush;	/* COMPLETION_WAIT: F */
	ik_u8 maxpend;	/* INVALIDATE_IOTLB_PAGES */
	ik_u16 devid, domid, queueid; /* DeviceID, DomainID, QueueID (see the table) */
	ik_u32 pasid;	/* IOMMU_PAGES: 20 bits; IOTLB_PAGES: 16 bits */
	ik_u64 addr;	/* invalidations: 4 KiB aligned (S encoding in it) */
	ik_u64 store_addr; /* COMPLETION_WAIT: 8-byte aligned, < 2^52 */
	ik_u64 store_data;	/* COMPLETION_WAIT: the 64-bit StoreData */
};

/*
 * ik_amd_cmd_encode - encode *c into w[0..1].  -EINVAL (w untouched): an
 * unknown opcode, a value that does not fit its field, a field the opcode
 * does not define set, an address misaligned for its field, a NULL c or w.
 * O(1).
 */
IK_API int ik_amd_cmd_encode(const struct ik_amd_cmd *c, ik_u64 *w);

/* Decode w[0..1] into *c (zeroed first).  -EINVAL for an illegal command (an
 * unknown opcode or a reserved bit set: what the IOMMU logs as
 * ILLEGAL_COMMAND_ERROR), or a NULL w or c (then nothing is written).  O(1). */
IK_API int ik_amd_cmd_decode(const ik_u64 *w, struct ik_amd_cmd *c);

/* The opcode's name ("COMPLETION_WAIT"), or NULL. */
IK_API const char *ik_amd_cmd_name(unsigned op);

/*
 * ik_amd_inv_encode - the Address and S of an invalidation that covers
 * [iova, iova + size): one page (S = 0) when it lies in one 4 KiB page, else
 * the smallest naturally aligned power-of-two block holding it (S = 1), or
 * IK_AMD_INV_ALL_ADDR when that block would reach bit 52.  size >= 1 and
 * iova + size <= 2^64 (the range may end exactly at the top); -EINVAL
 * otherwise or for a NULL addr or s.  O(1).
 */
IK_API int ik_amd_inv_encode(ik_u64 iova, ik_u64 size, ik_u64 *addr, ik_u8 *s);

/*
 * ik_amd_inv_decode - the range [*first, *last] (inclusive) that an
 * invalidation's Address and S name, as the IOMMU reads them (see above);
 * the whole space is [0, 2^64 - 1].  addr's bits 11..0 are ignored.
 * -EINVAL for a NULL first or last.  O(1).
 */
IK_API int ik_amd_inv_decode(ik_u64 addr, ik_u8 s, ik_u64 *first, ik_u64 *last);

IK_END_DECLS

#endif /* IOMMUKIT_CMD_AMD_H */
