/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/fmt/lpae.h - the ARM LPAE (VMSAv8-64 long-descriptor) formats:
 * descriptor bits, the memory-attribute layout the library uses, and the
 * register values a driver programs for a table set.
 *
 * Formats: IK_PT_LPAE_S1 (stage 1: AP, nG, AttrIndx into MAIR, UXN/PXN, AF,
 * SH, DBM) and IK_PT_LPAE_S2 (stage 2: S2AP, MemAttr, XN, DBM).  Granules 4K,
 * 16K, 64K (the lowest bit of the config's pgsize_bitmap); stage 2 may start
 * one level lower with 2..16 concatenated root tables where that saves a
 * level, as the architecture allows.
 *
 * Address sizes (ias: TnSZ = 64 - ias; oas: IPS/PS):
 *   4K, 16K granules     ias 32..48, oas 32..48 (PARange values 32, 36, 40,
 *                        42, 44, 48);
 *   4K, 16K with LPA2    (IK_LPAE_FLAG_LPA2: FEAT_LPA2, TCR.DS = 1) ias
 *                        32..52, oas up to 52: OA[51:50] in descriptor bits
 *                        [9:8], OA[49:48] in [49:48]; block and page
 *                        shareability comes from TCR.SH0 / VTCR.SH0 instead
 *                        (inner-shareable when coherent, else outer).  A 4K
 *                        stage 1 with ias > 48 starts at lookup level -1
 *                        (hw_start_level is then (ik_u32)-1: hw_start_level
 *                        + nlevels is still 4 in unsigned arithmetic); a 4K
 *                        stage 2 concatenates 2..16 level-0 tables instead;
 *                        a 16K stage 2 with ias 52 starts at level 0;
 *   64K granule          ias 32..52 (FEAT_LVA for stage 1), oas up to 52
 *                        (FEAT_LPA): OA[51:48] in descriptor bits [15:12].
 * Descriptors hold table addresses the same way as output addresses.  A
 * 52-bit root address goes into TTBR/VTTBR with BADDR[51:48] in bits [5:2]
 * (the root is at least 64-byte aligned).
 *
 * Block sizes, every one the architecture allows and nothing more: 4K
 * granule 1G and 2M, plus 512G (lookup level 0) with LPA2; 16K granule 32M,
 * plus 64G (level 1) with LPA2; 64K granule 512M, plus 4T (level 1) when oas
 * is 52.  (The architecture allows the 64K level-1 block whenever the
 * implementation has 52-bit PAs; a config with oas < 52 does not say so,
 * and the library then neither makes nor accepts them.)
 *
 * Glossary: TTBR/VTTBR (table base registers), TCR/VTCR (translation
 * control: T0SZ = 64 - ias, TG0 = granule, SL0 (and SL2) = stage-2 start
 * level, IRGN/ORGN/SH = cacheability of walks, IPS/PS = oas, DS = the LPA2
 * layout, HA/HD = hardware access flag / dirty state), MAIR (memory
 * attribute indirection: eight 8-bit attributes that stage-1 AttrIndx
 * selects).
 *
 * fmt_flags: IK_LPAE_FLAG_LPA2 (accepted and without effect with the 64K
 * granule, where DS does not apply).  Quirks: IK_PT_QUIRK_DIRTY (both
 * stages: hardware access flag and dirty state, HA/HD; a writable leaf is
 * made writable-clean: stage 1 DBM = 1 with AP[2] = 1 (read-only), stage 2
 * DBM = 1 with S2AP[1] = 0 (no write); the IOMMU's first write sets the
 * write permission, which is the dirty bit), IK_PT_QUIRK_ARM_NS (stage 1
 * only).
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
/* 52-bit OA, 64K granule (FEAT_LPA): OA[51:48] in bits [15:12]. */
#define IK_LPAE_PTE_LPA_OA_HI_SHIFT	12
/* 52-bit OA, 4K/16K with DS = 1 (FEAT_LPA2): OA[49:12] in [49:12] and
 * OA[51:50] in bits [9:8] (which hold SH without DS). */
#define IK_LPAE_PTE_LPA2_ADDR_MASK	0x0003fffffffff000ull
#define IK_LPAE_PTE_LPA2_OA_HI_SHIFT	8
/* TTBR/VTTBR of a 52-bit table: BADDR[51:48] in bits [5:2]. */
#define IK_LPAE_TTBR_BADDR_HI_SHIFT	2

/* fmt_flags: FEAT_LPA2 layout (TCR.DS / VTCR.DS = 1) for 4K and 16K. */
#define IK_LPAE_FLAG_LPA2	0x1ull

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
 *   stage 1: ttbr (TTBR0: the root's IOMMU address, BADDR[51:48] in bits
 *            [5:2]), tcr (TCR for the TTBR0 half: T0SZ, IRGN0/ORGN0
 *            write-back when coherent, else non-cacheable, SH0
 *            inner-shareable when coherent, TG0, IPS (52 bits: 0b110),
 *            EPD1 set; HA/HD set when IK_PT_QUIRK_DIRTY; DS (bit 59) with
 *            IK_LPAE_FLAG_LPA2 at 4K/16K), mair;
 *   stage 2: vttbr (the root's IOMMU address as for ttbr; VMID is the
 *            driver's), vtcr (T0SZ, SL0, IRGN0/ORGN0/SH0 as above, TG0, PS;
 *            HA/HD (bits 21, 22) when IK_PT_QUIRK_DIRTY; DS (bit 32) as
 *            above).
 *   The fields of the other stage are 0.
 */
struct ik_lpae_regs {
	ik_u64 ttbr;	/* stage 1: TTBR0 */
	ik_u64 tcr;	/* stage 1: TCR, the TTBR0 half */
	ik_u64 mair;	/* stage 1: MAIR */
	ik_u64 vttbr;	/* stage 2: VTTBR (VMID 0) */
	ik_u64 vtcr;	/* stage 2: VTCR */
};

/* Fill *r for an LPAE table set; -EINVAL if `pt` is not LPAE or pt or r is
 * NULL.  O(1). */
IK_API int ik_lpae_get_regs(const struct ik_pgtable *pt, struct ik_lpae_regs *r);

/*
 * ik_lpae_ttbr_from_addr - the TTBR/VTTBR base field for a root table at
 * `addr` (at least 64-byte aligned): BADDR[47:6] in place and BADDR[51:48]
 * in bits [5:2], as a 52-bit table needs (identity below 2^48).  An SMMU's
 * CD.TTB0 and STE.S2TTB hold the address itself; an emulator passes them
 * through this to ik_lpae_walker_from_regs().  O(1).
 */
IK_INLINE ik_u64 ik_lpae_ttbr_from_addr(ik_u64 addr)
{
	return (addr & 0x0000ffffffffffffull) | ((addr >> 48) & 0xf) << IK_LPAE_TTBR_BADDR_HI_SHIFT;
}

/*
 * ik_lpae_walker_from_regs - the walker a stage-1 (stage == 1: tcr, ttbr) or
 * stage-2 (stage == 2: vtcr, vttbr) SMMU would use, decoding T0SZ, TG0,
 * SL0 (with SL2), IPS/PS and DS from the register values, as an emulator
 * receives them; a 52-bit TTBR's BADDR[51:48] from bits [5:2].
 * quirks: IK_PT_QUIRK_DIRTY to model hardware access flag and dirty state
 * (HA/HD).  -EINVAL for a NULL w or values the library does not support.
 * O(1).
 */
IK_API int ik_lpae_walker_from_regs(struct ik_pt_walker *w, unsigned stage, ik_u64 tcr,
				    ik_u64 ttbr, ik_u32 quirks);

IK_END_DECLS

#endif /* IOMMUKIT_FMT_LPAE_H */
