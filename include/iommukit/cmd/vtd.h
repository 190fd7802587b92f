/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/cmd/vtd.h - Intel VT-d queued-invalidation descriptors.
 *
 * A descriptor is 128 bits (legacy queues, IQA_REG.DW = 0) or 256 bits
 * (scalable mode, DW = 1): w[0] = bits [63:0], w[1] = [127:64], and in the
 * 256-bit form w[2], w[3] = [255:128], which are reserved (zero) for every
 * descriptor type here.  struct ik_vtd_desc is the decoded form.
 *
 * Field layout (bit numbers over the descriptor; Type [3:0], Type[6:4] at
 * [11:9] is zero for these types):
 *
 *   CC (0x1)     context-cache invalidate: G [5:4] (1 global, 2 domain,
 *                3 device)  DID [31:16]  SID [47:32]  FM [49:48]
 *   IOTLB (0x2)  G [5:4] (1 global, 2 domain, 3 page)  DW [6]  DR [7]
 *                DID [31:16] | AM [69:64]  IH [70]  ADDR[63:12] at [127:76]
 *   DEVTLB (0x3) device-TLB invalidate: PFSID[3:0] at [15:12]  MIP [20:16]
 *                SID [47:32]  PFSID[15:4] at [63:52] | S [64]  ADDR[63:12]
 *                at [127:76]
 *   WAIT (0x5)   invalidation wait: IF [4]  SW [5] (status write)  FN [6]
 *                (fence)  PD [7] (page-request drain)  STATUS DATA [63:32] |
 *                STATUS ADDR[63:2] at [127:66]
 *   PIOTLB (0x6) PASID-based IOTLB: G [5:4] (2 all of a PASID, 3 page)
 *                DID [31:16]  PASID [51:32] | AM [69:64]  IH [70]
 *                ADDR[63:12] at [127:76]
 *   PC (0x7)     PASID-cache invalidate (scalable mode): G [5:4] (0 every
 *                PASID of a domain, 1 one PASID of a domain, 3 global; 2 is
 *                reserved)  DID [31:16]  PASID [51:32]
 *
 * A wait descriptor signals its completion by a status write (SW: the 32-bit
 * STATUS DATA written at STATUS ADDR) and/or an interrupt (IF: the
 * invalidation completion event, ICS.IWC, raised as IECTL says).  The
 * specification defines no other way for it to complete, and QEMU 7.2
 * rejects a wait with neither (FSTS.IQE), so the encoder and the decoder
 * refuse one with SW = IF = 0.  ik_vtd_desc_validate() checks what a
 * particular unit accepts beyond the encoding (CAP.MAMV, ECAP.PDS, and what
 * QEMU 7.2's emulation refuses).
 *
 * Page-selective invalidations cover 2^AM pages from ADDR, which must be
 * aligned to 2^AM pages; ik_vtd_psi_mask() computes the smallest such block
 * for a range.
 *
 * Synchronization: pure functions; call them from any thread.
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_CMD_VTD_H
#define IOMMUKIT_CMD_VTD_H

#include <iommukit/env.h>

IK_BEGIN_DECLS

/* Descriptor types (struct ik_vtd_desc.type). */
#define IK_VTD_DESC_CC 0x1
#define IK_VTD_DESC_IOTLB 0x2
#define IK_VTD_DESC_DEVTLB 0x3
#define IK_VTD_DESC_WAIT 0x5
#define IK_VTD_DESC_PIOTLB 0x6
#define IK_VTD_DESC_PC 0x7

/* Granularities (G). */
#define IK_VTD_G_GLOBAL 1
#define IK_VTD_G_DOMAIN 2
#define IK_VTD_G_DEVICE 3 /* CC */
#define IK_VTD_G_PAGE 3	  /* IOTLB */
#define IK_VTD_G_PASID 2  /* PIOTLB: everything of a PASID in a domain */
#define IK_VTD_G_PASID_PAGE 3
#define IK_VTD_G_PC_DOMAIN 0 /* PC: every PASID of the domain */
#define IK_VTD_G_PC_PASID 1  /* PC: one PASID of the domain */
#define IK_VTD_G_PC_GLOBAL 3 /* PC: everything */

/* The decoded form of one descriptor; see the layout table above. */
struct ik_vtd_desc {
	ik_u8 type;	/* IK_VTD_DESC_* */
	ik_u8 g;	/* granularity, 0..3 */
	ik_u8 fm;	/* CC: function mask, 0..3 */
	ik_u8 dw, dr;	/* IOTLB: drain writes / reads */
	ik_u8 am;	/* address mask: 2^am pages, 0..63 */
	ik_u8 ih;	/* invalidation hint: leaf entries only */
	ik_u8 s;	/* DEVTLB: size bit (ATS encoding in ADDR) */
	ik_u8 mip;	/* DEVTLB: max invalidations pending, 0..31 */
	ik_u8 iflag;	/* WAIT: interrupt */
	ik_u8 sw;	/* WAIT: status write */
	ik_u8 fn;	/* WAIT: fence */
	ik_u8 pd;	/* WAIT: page-request drain */
	ik_u16 did, sid, pfsid; /* domain id, source id, PF source id (DEVTLB) */
	ik_u32 pasid;	/* 20 bits */
	ik_u32 status_data;	/* WAIT: the 32-bit value written at status_addr */
	ik_u64 addr;	/* 4 KiB aligned */
	ik_u64 status_addr; /* 4-byte aligned */
};

/*
 * Encode into w[0 .. words) where words is 2 (128-bit form) or 4 (256-bit;
 * w[2], w[3] = 0).  -EINVAL (w untouched): unknown type, a value that does
 * not fit, a field the type does not define set, a misaligned address, a
 * reserved granularity (G = 0 for CC/IOTLB, < 2 for PIOTLB, 2 for PC), a
 * wait with neither SW nor IF, words not 2 or 4, or a NULL d or w.  O(1).
 */
IK_API int ik_vtd_desc_encode(const struct ik_vtd_desc *d, ik_u64 *w, unsigned words);

/* Decode w[0 .. words).  -EINVAL for an invalid descriptor (unknown type,
 * reserved bit set, reserved granularity, a wait with neither SW nor IF:
 * what the hardware reports as an Invalidation Queue Error), or for a NULL
 * w or d (then nothing is written). */
IK_API int ik_vtd_desc_decode(const ik_u64 *w, unsigned words, struct ik_vtd_desc *d);

/*
 * struct ik_vtd_desc_rules - what one remapping unit accepts beyond the
 * encoding, for ik_vtd_desc_validate():
 *   mamv    CAP.MAMV: the largest AM of a page-selective IOTLB or PASID-based
 *           IOTLB invalidation (iommukit applies it to both);
 *   flags   IK_VTD_RULE_*:
 *     PSI     the unit has page-selective IOTLB invalidation (CAP.PSI);
 *             without it a page-selective IOTLB/PIOTLB is invalid;
 *     PDS     the unit accepts a wait's PD (ECAP.PDS);
 *     SCALABLE the unit runs in scalable mode: PIOTLB and PC are defined
 *             (in legacy mode they are invalid types);
 *     QEMU72  also refuse what QEMU 7.2's intel-iommu refuses or mishandles
 *             although the specification allows it: a wait with both SW
 *             and IF (QEMU asserts), a device-TLB PFSID other than 0 (its
 *             reserved-field mask covers the PFSID bits).
 * ik_vtd_desc_rules_qemu72() gives the rules of QEMU 7.2's default
 * intel-iommu (PSI, MAMV 18, no PDS; SCALABLE with x-scalable-mode=on).
 */
struct ik_vtd_desc_rules {
	ik_u32 flags;
	ik_u8 mamv;
};
#define IK_VTD_RULE_PSI 0x1u	/* page-selective IOTLB/PIOTLB invalidation (CAP.PSI) */
#define IK_VTD_RULE_PDS 0x2u	/* a wait may set PD (ECAP.PDS) */
#define IK_VTD_RULE_SCALABLE 0x4u	/* scalable mode: PIOTLB and PC descriptors are defined */
#define IK_VTD_RULE_QEMU72 0x8u
#define IK_VTD_QEMU72_MAMV 18u

/*
 * ik_vtd_desc_validate - 0 if the unit described by `r` executes the decoded
 * descriptor `d` (which ik_vtd_desc_encode() accepts), -EINVAL if it would
 * report an Invalidation Queue Error for it (see struct ik_vtd_desc_rules),
 * or for a NULL argument or unknown flags in r.  Pure, O(1).
 */
IK_API int ik_vtd_desc_validate(const struct ik_vtd_desc *d, const struct ik_vtd_desc_rules *r);

/* The rules of QEMU 7.2's intel-iommu (scalable: x-scalable-mode=on).
 * -EINVAL for a NULL r. */
IK_API int ik_vtd_desc_rules_qemu72(struct ik_vtd_desc_rules *r, bool scalable);

/* The type's name ("IOTLB"), or NULL. */
IK_API const char *ik_vtd_desc_name(unsigned type);

/*
 * ik_vtd_psi_mask - the smallest naturally aligned block of 2^*am pages that
 * holds pages [pfn, pfn + npages): *base_pfn and *am.  npages >= 1; -EINVAL
 * otherwise, for a NULL base_pfn or am, or if am would exceed `max_am`
 * (CAP_REG.MAMV): use a domain invalidation then.  O(1).
 */
IK_API int ik_vtd_psi_mask(ik_u64 pfn, ik_u64 npages, unsigned max_am, ik_u64 *base_pfn,
			   unsigned *am);

IK_END_DECLS

#endif /* IOMMUKIT_CMD_VTD_H */
