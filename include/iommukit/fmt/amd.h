/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/fmt/amd.h - AMD IOMMU page-table formats for the generic engine.
 *
 * Source: AMD I/O Virtualization Technology (IOMMU) Specification (pub.
 * 48882), "I/O Page Tables for Host Translations" (v1) and "Guest Page
 * Tables" (v2).  Both are 4 KiB tables of 512 eight-byte entries, 9 index
 * bits per level, 4 KiB granule.
 *
 *   IK_PT_AMD_V1   the host ("v1") page table that a device table entry
 *                  (DTE) points to with Mode = 1..6 levels.  Level n
 *                  (1 = the 4 KiB-page level) indexes input bits
 *                  [12 + 9n - 1 : 12 + 9(n - 1)]; level 6 indexes 63:57.
 *   IK_PT_AMD_V2   the guest ("v2") page table: x86-64 long-mode paging,
 *                  4 or 5 levels (the DTE's GLX / guest CR3 table).  The
 *                  entry layout is the one of <iommukit/fmt/vtd.h>'s
 *                  first-level format (P, R/W, U/S, PWT, PCD, A, D, PS, G,
 *                  PAT, XD) and the engine shares its encoders; the
 *                  difference is capability gating: 2 MiB and 1 GiB pages
 *                  need no capability flag (fmt_flags must be 0).  ias
 *                  32..56 as for VT-d first-level: up to 47 bits 4 levels,
 *                  else 5 (the lower canonical half); oas 32..52; quirks
 *                  IK_PT_QUIRK_DIRTY (leaves start with D clear) and
 *                  IK_PT_QUIRK_DEFER_LEAF_CLEAN.  Entry bits: IK_VTD_FL_*.
 *
 * v1 config (struct ik_pgtable_cfg):
 *   ias        21..63; the engine uses Mode = the fewest levels that cover
 *              ias (21 bits: 1, 30: 2, 39: 3, 48: 4, 57: 5, 63: 6) and
 *              always a whole 4 KiB root table.  (Mode 6 covers 64 bits;
 *              the engine's widths stop at 63.)
 *   oas        32..52 (entries hold address bits 51:12).
 *   pgsize_bitmap  4K lowest; 2M and 1G are kept where the table has a
 *              level for them (the natural sizes of levels 2 and 3, written
 *              with NextLevel = 0).
 *   fmt_flags  IK_AMD_FLAG_* below; unknown flags -> -EINVAL.
 *   quirks     IK_PT_QUIRK_DIRTY (host access/dirty: DTE.HAD, leaves start
 *              with D clear and the IOMMU sets A and D), and
 *              IK_PT_QUIRK_DEFER_LEAF_CLEAN.
 *
 * What the engine builds, and what the walker reads (docs/fmt-amd.md has the
 * full list of what is and is not supported):
 *   - map() writes only natural-size leaves (4K, 2M, 1G, NextLevel = 0) and
 *     table entries whose NextLevel is the next lower level: it never skips
 *     levels and never writes a next-level-7 page.  512 GiB and larger
 *     leaves are not offered (Linux avoids 512 GiB pages for a hardware
 *     erratum; level 6 can hold no leaf at all).
 *   - ik_pt_walk() (and ik_pt_walker_dump()) decode what the hardware
 *     accepts, for tables built by someone else (a guest): next-level-7
 *     pages of any power-of-two size strictly between the size of the level
 *     holding them and the span of the level above (8K..1M in a level-1
 *     table, 4M..512M in level 2, ...), and PDEs that skip levels (NextLevel
 *     lower than the level below).  The input bits of skipped levels must
 *     be zero; an address with one set faults (TRANSLATION).
 *
 * Glossary
 *   DTE         device table entry: 256 bits per device ID.  Word 0: V [0],
 *               TV [1], Mode [11:9], Page Table Root Pointer [51:12],
 *               IR [61], IW [62].  Word 1: DomainID [15:0].
 *   Mode        number of levels of the host table (1..6); 0 = no
 *               translation, 7 reserved.
 *   NextLevel   bits 11:9 of an entry: in a PDE, the level of the table it
 *               points to; 0 in a PTE (a page of the level's natural size);
 *               7 in a PTE whose size is encoded in its address field.
 *   next-level-7 page  a page of 2^(13 + k) bytes, where k is the number of
 *               one bits in the address field from bit 12 up before the
 *               first zero (bit 12 = 0: 8 KiB; bits 12 = 1, 13 = 0: 16 KiB;
 *               ...).  The entry is replicated in every entry of the level
 *               that the page covers.
 *   skip levels a PDE at level n whose NextLevel is below n - 1: the levels
 *               in between are not walked.
 *   IR, IW      read / write permission; ANDed over every entry of the walk.
 *   FC          force coherent: the IOMMU marks the translated request
 *               snooped.  iommukit: IK_PROT_CACHE (or IK_AMD_FLAG_FORCE_FC).
 *   U           "untranslated only": the IOMMU tells an ATS requester not to
 *               cache the translation.  iommukit: IK_AMD_FLAG_U.
 *
 * v1 entry (PDE and PTE share the layout):
 *   bit  0     PR   present.
 *   bit  5     A    accessed (host A/D, HAD).
 *   bit  6     D    dirty (PTE only).
 *   bits 11:9  NextLevel.
 *   bits 51:12 address of the next table (PDE) or of the page (PTE).
 *   bit  59    U    (PTE).
 *   bit  60    FC   (PTE).
 *   bit  61    IR.
 *   bit  62    IW.
 * iommukit's table entries: PR | IR | IW | NextLevel = level below.  Leaves:
 * PR, IR for IK_PROT_READ, IW for IK_PROT_WRITE, FC, U, NextLevel 0.  The
 * format has no execute, privilege or memory-type bits: NOEXEC, PRIV and
 * MMIO are accepted and leave no trace; the walker reports NOEXEC always
 * (no execute permission is granted) and CACHE where FC is set; attr =
 * FC (bit 0) | U (bit 1).
 *
 * Synchronization: as <iommukit/pgtable.h>.
 */
#ifndef IOMMUKIT_FMT_AMD_H
#define IOMMUKIT_FMT_AMD_H

#include <iommukit/env.h>

IK_BEGIN_DECLS

/* Page-table entry bits (see the layout above). */
#define IK_AMD_PTE_PR 0x1ull	/* PR: present */
#define IK_AMD_PTE_A (1ull << 5)	/* A: accessed */
#define IK_AMD_PTE_D (1ull << 6)	/* D: dirty */
#define IK_AMD_PTE_NL_SHIFT 9	/* NextLevel, bits 11:9: a PDE's table level; 0 or 7 in a PTE */
#define IK_AMD_PTE_NL_MASK (7ull << 9)	/* NextLevel field mask */
#define IK_AMD_PTE_NL(n) ((ik_u64)(n) << 9)	/* NextLevel field of value n */
#define IK_AMD_PTE_NL_SIZE 7u	/* NextLevel of a page whose size is in its address */
#define IK_AMD_ADDR_MASK 0x000ffffffffff000ull	/* address field [51:12] */
#define IK_AMD_PTE_U (1ull << 59)	/* U: untranslated only (see above) */
#define IK_AMD_PTE_FC (1ull << 60)	/* FC: force coherent */
#define IK_AMD_PTE_IR (1ull << 61)	/* IR: read permission */
#define IK_AMD_PTE_IW (1ull << 62)	/* IW: write permission */

/* DTE word 0. */
#define IK_AMD_DTE_V 0x1ull
#define IK_AMD_DTE_TV 0x2ull
#define IK_AMD_DTE_MODE(n) ((ik_u64)(n) << 9)

/* fmt_flags (v1). */
/* Set FC in every leaf (Linux does, for coherent DMA), not only in
 * IK_PROT_CACHE mappings. */
#define IK_AMD_FLAG_FORCE_FC 0x1ull
/* Set U in every leaf: ATS requesters must not cache translations. */
#define IK_AMD_FLAG_U 0x2ull

/*
 * ik_amd_pte_size_encode - the address field of a next-level-7 entry for a
 * page of `size` bytes (a power of two, 8 KiB .. 2^51) at `paddr` (aligned to
 * size): paddr with bits 12 .. log2(size) - 2 set and bit log2(size) - 1
 * clear.  Returns the field (bits 51:12; combine with IK_AMD_PTE_NL(7) and
 * the permission bits), or 0 for a size or alignment the encoding cannot
 * express.  For emulator tests and guests that build such tables; the engine
 * never writes one.  Pure, O(1).
 */
IK_INLINE ik_u64 ik_amd_pte_size_encode(ik_u64 paddr, ik_u64 size)
{
	if (size < 0x2000 || size > (1ull << 51) || !IK_IS_POW2(size) || (paddr & (size - 1)) ||
	    (paddr & ~IK_AMD_ADDR_MASK))
		return 0;
	return (paddr | ((size >> 1) - 1)) & IK_AMD_ADDR_MASK;
}

IK_END_DECLS

#endif /* IOMMUKIT_FMT_AMD_H */
