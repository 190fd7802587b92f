/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/fmt/riscv.h - RISC-V IOMMU page-table formats for the generic
 * engine (The RISC-V IOMMU Architecture Specification v1.0, which uses the
 * RISC-V privileged specification's virtual-memory formats).
 *
 * Two formats, both with 4 KiB tables of 512 eight-byte entries, 9 index
 * bits per level, 4 KiB granule, and leaves ("superpages") at every level:
 *
 *   IK_PT_RISCV_S1  first stage (the device or process context's iosatp):
 *                   Sv39, Sv48 or Sv57 (3, 4 or 5 levels).  Input addresses
 *                   are sign-extended in hardware; iommukit maps the lower
 *                   half, ias 32..56: up to 38 bits Sv39, up to 47 Sv48,
 *                   else Sv57.  Pages 4K, 2M, 1G, 512G (Sv48+), 256T (Sv57).
 *   IK_PT_RISCV_S2  second stage (G-stage, the device context's iohgatp):
 *                   Sv39x4, Sv48x4 or Sv57x4.  The root is 16 KiB (2048
 *                   entries: four concatenated 4 KiB tables, 16 KiB
 *                   aligned), so the guest-physical input has two more bits:
 *                   ias 32..59: up to 41 bits Sv39x4, up to 50 Sv48x4, else
 *                   Sv57x4.  Every G-stage access is a user-mode access: all
 *                   leaves carry U = 1.
 *
 * Config (struct ik_pgtable_cfg):
 *   oas        32..56 (the PPN field holds physical address bits 55:12).
 *   pgsize_bitmap  4K lowest; the engine keeps the sizes the levels have.
 *   fmt_flags  IK_RISCV_FLAG_* below; unknown flags -> -EINVAL.
 *   quirks     IK_PT_QUIRK_DIRTY: the IOMMU updates A/D itself (device
 *              context tc.SADE for the first stage, tc.GADE for the
 *              G-stage): writable leaves start with D = 0 and
 *              ik_pgtable_read_and_clear_dirty() reports the device's writes.
 *              Without it the engine presets A in every leaf and D in every
 *              writable leaf, so an IOMMU that does not update A/D never
 *              faults on them.  IK_PT_QUIRK_DEFER_LEAF_CLEAN.
 *
 * Levels: engine level L is the privileged specification's level i = L
 * (a PTE at level i maps 2^(12 + 9 i) bytes; the root is i = LEVELS - 1).
 * ik_pt_geometry.hw_start_level counts up from the leaves as the format
 * contract defines it (the root is nlevels).
 *
 * Page-table entry (every level):
 *   bit  0     V    valid.
 *   bit  1     R    read.        R = W = X = 0 with V = 1: a pointer to the
 *   bit  2     W    write.       next table (non-leaf).  W = 1 with R = 0 is
 *   bit  3     X    execute.     reserved (page fault).
 *   bit  4     U    user-mode accessible.  First stage: IK_PROT_PRIV clear
 *                   sets U; a privileged (S-mode) access to a U page faults
 *                   unless the context's SUM is set (IK_RISCV_FLAG_SUM), an
 *                   S-mode instruction fetch from it always does.  G-stage:
 *                   a leaf without U faults.
 *   bit  5     G    global mapping (first stage; iommukit writes 0).
 *   bit  6     A    accessed.
 *   bit  7     D    dirty (leaves).
 *   bits 9:8   RSW  reserved for software; iommukit writes 0.
 *   bits 53:10 PPN  physical page number: the next table or the leaf's
 *                   output address >> 12.  A superpage's PPN bits below its
 *                   size must be 0 (else: misaligned superpage, page fault).
 *   bits 60:54      reserved (page fault).
 *   bits 62:61 PBMT Svpbmt memory type; not supported: reserved (page fault).
 *   bit  63    N    Svnapot; not supported: reserved (page fault).
 * Non-leaf entries: iommukit writes V and the PPN only (A, D, U zero as the
 * privileged specification asks of software).
 *
 * Memory types: without Svpbmt the platform's PMAs decide; IK_PROT_CACHE
 * and IK_PROT_MMIO are accepted and encode nothing.
 *
 * The atp registers (device context fsc.iosatp / iohgatp):
 *   bits 63:60 MODE   0 Bare, 8 Sv39 / Sv39x4, 9 Sv48 / Sv48x4, 10 Sv57 /
 *                     Sv57x4;
 *   bits 59:44 GSCID  (iohgatp only);
 *   bits 43:0  PPN    root table >> 12 (G-stage: 16 KiB aligned).
 */
#ifndef IOMMUKIT_FMT_RISCV_H
#define IOMMUKIT_FMT_RISCV_H

#include <iommukit/pgtable.h>

IK_BEGIN_DECLS

/* Sv39/48/57 page-table entry bits (see the layout above). */
#define IK_RISCV_PTE_V		(1ull << 0)	/* valid */
#define IK_RISCV_PTE_R		(1ull << 1)	/* readable */
#define IK_RISCV_PTE_W		(1ull << 2)	/* writable */
#define IK_RISCV_PTE_X		(1ull << 3)	/* executable */
#define IK_RISCV_PTE_U		(1ull << 4)	/* user-mode accessible */
#define IK_RISCV_PTE_G		(1ull << 5)	/* global mapping */
#define IK_RISCV_PTE_A		(1ull << 6)	/* accessed */
#define IK_RISCV_PTE_D		(1ull << 7)	/* dirty */
#define IK_RISCV_PTE_RSW_MASK	(3ull << 8)	/* bits 9:8, reserved for software */
#define IK_RISCV_PTE_PPN_SHIFT	10	/* PPN starts at bit 10 */
#define IK_RISCV_PTE_PPN_MASK	0x003ffffffffffc00ull	/* bits 53:10 */
#define IK_RISCV_PTE_RSVD_MASK	0x1fc0000000000000ull	/* bits 60:54 */
#define IK_RISCV_PTE_PBMT_MASK	(3ull << 61) /* Svpbmt memory type, bits 62:61 (not supported:
						reserved) */
#define IK_RISCV_PTE_N		(1ull << 63)	/* Svnapot (not supported: reserved) */

/* The physical address an entry's PPN names, and the PPN field for one. */
#define IK_RISCV_PTE_ADDR(pte)	((((pte) & IK_RISCV_PTE_PPN_MASK) >> IK_RISCV_PTE_PPN_SHIFT) << 12)
#define IK_RISCV_PTE_PPN(pa)	((((pa) >> 12) << IK_RISCV_PTE_PPN_SHIFT) & IK_RISCV_PTE_PPN_MASK)

/* fmt_flags.  First stage only: the process context's SUM (privileged
 * requests may read and write U pages). */
#define IK_RISCV_FLAG_SUM	0x1ull

/* atp (iosatp / iohgatp) fields. */
#define IK_RISCV_ATP_MODE_SHIFT	60
#define IK_RISCV_ATP_MODE_BARE	0u
#define IK_RISCV_ATP_MODE_SV39	8u	/* Sv39 / Sv39x4 */
#define IK_RISCV_ATP_MODE_SV48	9u	/* Sv48 / Sv48x4 */
#define IK_RISCV_ATP_MODE_SV57	10u	/* Sv57 / Sv57x4 */
#define IK_RISCV_ATP_GSCID_SHIFT 44
#define IK_RISCV_ATP_GSCID_MASK	(0xffffull << IK_RISCV_ATP_GSCID_SHIFT)
#define IK_RISCV_ATP_PPN_MASK	0x00000fffffffffffull

/*
 * ik_riscv_get_atp - the atp value that points the IOMMU at `pt`: iosatp
 * (MODE, PPN) for an IK_PT_RISCV_S1 table set, iohgatp (MODE, GSCID, PPN)
 * for IK_PT_RISCV_S2.  `gscid` must be 0 for a first-stage table set.
 * Errors: -EINVAL for a NULL pt or atp, a table set of another format, or a
 * non-zero gscid with IK_PT_RISCV_S1 (*atp untouched).  O(1); calls nothing.
 */
IK_API int ik_riscv_get_atp(const struct ik_pgtable *pt, ik_u16 gscid, ik_u64 *atp);

/*
 * ik_riscv_walker_from_atp - a walker for the table an atp value names, as
 * the IOMMU would walk it (an emulator's view of a guest's iosatp or
 * iohgatp): `fmt` says which register it is (IK_PT_RISCV_S1: iosatp;
 * IK_PT_RISCV_S2: iohgatp), `oas` the platform's physical address width,
 * `quirks` IK_PT_QUIRK_DIRTY when the context enables A/D updates (SADE /
 * GADE), `fmt_flags` IK_RISCV_FLAG_SUM for a first stage with SUM.  The
 * walker covers the mode's whole lower input space (S1: 38, 47 or 56 bits;
 * S2: 41, 50 or 59 bits).  Errors: -EINVAL for a NULL w, another fmt, MODE
 * Bare or reserved, a G-stage root not 16 KiB aligned, an oas or flag the
 * format does not accept.  O(1); calls nothing.
 */
IK_API int ik_riscv_walker_from_atp(struct ik_pt_walker *w, enum ik_pt_fmt fmt, ik_u64 atp,
				    ik_u32 oas, ik_u32 quirks, ik_u64 fmt_flags);

IK_END_DECLS

#endif /* IOMMUKIT_FMT_RISCV_H */
