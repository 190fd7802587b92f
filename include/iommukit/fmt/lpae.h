/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/fmt/lpae.h - the ARM LPAE (VMSAv8-64 long-descriptor) formats:
 * descriptor bits, the memory-attribute layout the library uses, and the
 * register values a driver programs for a table set.
 *
 * Formats: IK_PT_LPAE_S1 (stage 1: AP, nG, AttrIndx into MAIR, UXN/PXN, AF,
 * SH) and IK_PT_LPAE_S2 (stage 2: S2AP, MemAttr, XN).  Granules 4K, 16K, 64K
 * (the lowest bit of the config's pgsize_bitmap); ias 32..48 (stage 2 may
 * start one level lower with 2..16 concatenated root tables where that saves
 * a level, as the architecture allows); oas 32..48.  Block sizes: 4K granule
 * 1G and 2M, 16K granule 32M, 64K granule 512M (no 4 TiB level-1 blocks).
 *
 * Glossary: TTBR/VTTBR (table base registers), TCR/VTCR (translation
 * control: T0SZ = 64 - ias, TG0 = granule, SL0 = stage-2 start level,
 * IRGN/ORGN/SH = cacheability of walks, IPS/PS = oas), MAIR (memory attribute
 * indirection: eight 8-bit attributes that stage-1 AttrIndx selects).
 *
 * fmt_flags: none yet (0).  Quirks: IK_PT_QUIRK_DIRTY (stage 1 only: DBM),
 * IK_PT_QUIRK_ARM_NS (stage 1 only).
 *
 * Synchronization: ik_lpae_get_regs() only reads the table set's immutable
 * geometry; it may run concurrently with anything but destroy.
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_FMT_LPAE_H
#define IOMMUKIT_FMT_LPAE_H

#include <iommukit/pgtable.h>

IK_BEGIN_DECLS

/* Descriptor type, bits [1:0]. */
#define IK_LPAE_PTE_TYPE_MASK	0x3ull
#define IK_LPAE_PTE_TYPE_BLOCK	0x1ull	/* levels above the last */
#define IK_LPAE_PTE_TYPE_TABLE	0x3ull	/* levels above the last */
#define IK_LPAE_PTE_TYPE_PAGE	0x3ull	/* the last level */

/* Lower attributes of leaves, stage 1. */
#define IK_LPAE_PTE_ATTRINDX_SHIFT 2	/* [4:2] index into MAIR */
#define IK_LPAE_PTE_NS		(1ull << 5)
#define IK_LPAE_PTE_AP_UNPRIV	(1ull << 6)	/* AP[1]: EL0 access */
#define IK_LPAE_PTE_AP_RDONLY	(1ull << 7)	/* AP[2]: read-only */
#define IK_LPAE_PTE_SH_SHIFT	8	/* [9:8] shareability */
#define IK_LPAE_PTE_SH_NS	(0ull << 8)
#define IK_LPAE_PTE_SH_OS	(2ull << 8)
#define IK_LPAE_PTE_SH_IS	(3ull << 8)
#define IK_LPAE_PTE_AF		(1ull << 10)
#define IK_LPAE_PTE_NG		(1ull << 11)
/* Upper attributes. */
#define IK_LPAE_PTE_DBM		(1ull << 51)
#define IK_LPAE_PTE_CONT	(1ull << 52)
#define IK_LPAE_PTE_PXN		(1ull << 53)
#define IK_LPAE_PTE_UXN		(1ull << 54)	/* stage 1 XN; stage 2 XN[1] */
/* Stage 2 lower attributes. */
#define IK_LPAE_PTE_S2_MEMATTR_SHIFT 2	/* [5:2] */
#define IK_LPAE_PTE_S2AP_READ	(1ull << 6)
#define IK_LPAE_PTE_S2AP_WRITE	(1ull << 7)
/* Table descriptor attributes (stage 1). */
#define IK_LPAE_PTE_PXNTABLE	(1ull << 59)
#define IK_LPAE_PTE_XNTABLE	(1ull << 60)
#define IK_LPAE_PTE_APTABLE_SHIFT 61	/* [62:61] */
#define IK_LPAE_PTE_NSTABLE	(1ull << 63)
/* Output / next-table address bits (up to 48-bit OA). */
#define IK_LPAE_PTE_ADDR_MASK	0x0000fffffffff000ull

/* The MAIR layout the library programs and its stage-1 AttrIndx values. */
#define IK_LPAE_MAIR_IDX_NC	0	/* normal, inner/outer non-cacheable: 0x44 */
#define IK_LPAE_MAIR_IDX_WBRWA	1	/* normal, write-back RW-allocate: 0xff */
#define IK_LPAE_MAIR_IDX_DEV	2	/* device nGnRE: 0x04 */
#define IK_LPAE_MAIR_VALUE	0x000000000004ff44ull
/* Stage-2 MemAttr values. */
#define IK_LPAE_S2_MEMATTR_DEV	0x1ull	/* device nGnRE */
#define IK_LPAE_S2_MEMATTR_NC	0x5ull	/* normal non-cacheable */
#define IK_LPAE_S2_MEMATTR_WB	0xfull	/* normal write-back */

/*
 * struct ik_lpae_regs - register values for a table set.
 *   stage 1: ttbr (TTBR0: the root's IOMMU address), tcr (TCR for the TTBR0
 *            half: T0SZ, IRGN0/ORGN0 write-back when coherent, else
 *            non-cacheable, SH0 inner-shareable when coherent, TG0, IPS,
 *            EPD1 set; HA/HD set when IK_PT_QUIRK_DIRTY), mair;
 *   stage 2: vttbr (the root's IOMMU address; VMID is the driver's), vtcr
 *            (T0SZ, SL0, IRGN0/ORGN0/SH0 as above, TG0, PS).
 *   The fields of the other stage are 0.
 */
struct ik_lpae_regs {
	ik_u64 ttbr;
	ik_u64 tcr;
	ik_u64 mair;
	ik_u64 vttbr;
	ik_u64 vtcr;
};

/* Fill *r for an LPAE table set; -EINVAL if `pt` is not LPAE or pt or r is
 * NULL.  O(1). */
IK_API int ik_lpae_get_regs(const struct ik_pgtable *pt, struct ik_lpae_regs *r);

/*
 * ik_lpae_walker_from_regs - the walker a stage-1 (stage == 1: tcr, ttbr) or
 * stage-2 (stage == 2: vtcr, vttbr) SMMU would use, decoding T0SZ, TG0,
 * SL0 and IPS/PS from the register values, as an emulator receives them.
 * quirks: IK_PT_QUIRK_DIRTY to model hardware DBM (stage 1).  -EINVAL for
 * a NULL w or values the library does not support.  O(1).
 */
IK_API int ik_lpae_walker_from_regs(struct ik_pt_walker *w, unsigned stage, ik_u64 tcr,
				    ik_u64 ttbr, ik_u32 quirks);

IK_END_DECLS

#endif /* IOMMUKIT_FMT_LPAE_H */
