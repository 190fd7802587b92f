/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/drv/amd.h - the AMD IOMMU driver core: what lies between
 * iommukit's AMD page tables (<iommukit/fmt/amd.h>) and command encoders
 * (<iommukit/cmd/amd.h>) and a real or emulated AMD IOMMU.
 *
 * What it is for.  A firmware, a kernel port or a VMM driving an AMD IOMMU
 * needs, beyond page tables and commands: device table entries (DTE) built
 * from a table set and decoded from memory someone else wrote; the device
 * table itself, sized from the highest DeviceID and updated in an order the
 * IOMMU never sees half-written; GCR3 tables for guest (amd-v2) tables per
 * PASID; and the invalidations an unmap or a DTE change needs, no more and
 * no fewer.  This unit provides them.  It allocates IOMMU-visible memory
 * only through struct ik_dma_mem (<iommukit/drv/io.h>), bookkeeping only
 * through an ik_allocator, and is freestanding.
 *
 * Sections (each usable alone):
 *   device table entries  ik_amd_dte_build / ik_amd_dte_decode /
 *                  ik_amd_walker_from_dte: pure, no memory;
 *   device table   struct ik_amd_devtab: the table in DMA memory, its base
 *                  register value, entry updates in a safe order;
 *   GCR3 tables    struct ik_amd_gcr3tab: PASID -> guest table root;
 *   planner        ik_amd_plan_unmap / _range / _map / _change: pure
 *                  functions from a gather or a change to commands;
 *                  ik_amd_plan_issue() runs a plan on an ik_cmdq;
 *   registers      offsets and bits of the MMIO register file, the
 *                  Extended Feature Register decoded (ik_amd_hwcaps_decode);
 *   command buffer struct ik_amd_cmdbuf + ik_amd_cmdbuf_regs: the ik_cmdq
 *                  register hooks (head/tail, CmdBufRun error recovery);
 *   event and PPR logs  ik_amd_event_decode / ik_amd_ppr_decode: a log
 *                  entry's fields, pure;
 *   IVRS           ik_amd_ivrs_parse: the ACPI table's IOMMUs and DeviceID
 *                  ranges from its bytes (hostile input);
 *   the unit       struct ik_amd: bring-up (device table, command buffer,
 *                  event log, PPR log, the enable sequence), disable, the
 *                  logs popped, using all of the above.
 * docs/amd-bringup.md walks through a bring-up with this API, in the code
 * of the hardware-in-the-loop checks (examples/baremetal/hil_amd.c) that run
 * it on QEMU 7.2's amd-iommu.
 *
 * Glossary (AMD pub. 48882's words)
 *   DeviceID    the requester: bus << 8 | devfn (one PCI segment); indexes
 *               the device table.
 *   DTE         device table entry, 256 bits: four little-endian 64-bit
 *               words, dte[k] = bits [64k+63:64k].
 *   DomainID    the 16-bit tag of cached translations (DTE bits 79:64);
 *               INVALIDATE_IOMMU_PAGES names it.
 *   Mode        DTE bits 11:9: levels of the host (v1) table, 1..6; 0 = no
 *               host translation (addresses pass through, gated by IR/IW).
 *   IR, IW      DTE bits 61, 62: read and write permission for the device,
 *               ANDed with every table entry's.  A DTE with neither blocks
 *               all DMA of the device, whatever its tables say.
 *   GV, GLX, GCR3 table  guest translation: with GV (bit 55) requests with a
 *               PASID (and, with GIoV, requests without one, as PASID 0)
 *               are translated by the x86-64 (amd-v2) table whose root the
 *               GCR3 table holds for that PASID; GLX (57:56) + 1 is the
 *               number of GCR3 table levels (9 PASID bits each).
 *   V, TV       DTE bit 0 and 1.  V = 0: the entry is invalid and the
 *               IOMMU passes the device's DMA through untranslated; V = 1,
 *               TV = 1: the translation fields are valid.
 *   blocked     V = 1, TV = 1, Mode 0, IR = IW = 0, GV = 0: every DMA of
 *               the device is refused.  ik_amd_devtab_init() fills the
 *               table with it (a zeroed table would let every device
 *               through untranslated).
 *
 * DTE layout (bit numbers over the 256-bit entry; from pub. 48882 "Device
 * Table Entry Format", checked against QEMU's hw/i386/amd_iommu.h and
 * Linux's drivers/iommu/amd/amd_iommu_types.h):
 *
 *   0 V  1 TV  8:7 HAD (host access/dirty)  11:9 Mode
 *   51:12 Page Table Root Pointer  52 PPR  53 GPRP  54 GIoV  55 GV
 *   57:56 GLX  60:58 GCR3 TRP[14:12]  61 IR  62 IW
 *   79:64 DomainID  95:80 GCR3 TRP[30:15]  96 I (IOTLB)  97 SE  98 SA
 *   100:99 IoCtl  101 Cache  102 SD  103 EX  105:104 SysMgt
 *   127:107 GCR3 TRP[51:31]
 *   128 IV  132:129 IntTabLen  133 IG  179:134 Interrupt Table Root [51:6]
 *   183:182 GPT level (guest table: 00b 4 levels, 01b 5 levels)
 *   184 InitPass  185 EIntPass  186 NMIPass  189:188 IntCtl
 *   190 Lint0Pass  191 Lint1Pass  (the interrupt-remapping fields)
 *   255:192 word 3: vIOMMU and attribute-override fields
 * Reserved (an IOMMU logs ILLEGAL_DEV_TABLE_ENTRY): 6:2, 63, 181:180,
 * 206:192 and 245:240.
 *
 * QEMU 7.2's amd-iommu checks an older reserved mask (word 0: bits 7:2, 52,
 * 53, 63; word 1: bit 8, that is DomainID bit 8; word 2: bits 55:52, 59):
 * there, HAD, PPR, GPRP, a 5-level GPT level and DomainIDs 256..511 mod 512
 * make the entry illegal.  ik_amd_dte_build() sets HAD, PPR and the GPT
 * level only when asked (a dirty-tracking table, IK_AMD_DTE_PPR, a 5-level
 * guest table); the DomainID is the caller's choice.
 *
 * Synchronization
 *   call                                   may run concurrently with
 *   -------------------------------------  ----------------------------------
 *   ik_amd_dte_build/_decode, walker_from_  anything (pure)
 *   dte, ik_amd_plan_* (not _issue)
 *   ik_amd_devtab_write / _read            nothing else on the same table
 *                                          (the caller serialises); the
 *                                          IOMMU reads it all along
 *   ik_amd_gcr3tab_set / _clear / _read    nothing else on the same table
 *   ik_amd_plan_issue                      anything (the queue is lock-free)
 *   *_init / *_fini                        nothing else on the object
 *   ik_amd_hwcaps_decode, ik_amd_event_     anything (pure)
 *   decode, ik_amd_ppr_decode,
 *   ik_amd_ivrs_parse, name functions
 *   ik_amd_cmdbuf_regs hooks               each other, as struct ik_cmdq_regs
 *                                          requires
 *   ik_amd_issue, ik_amd_queue users       each other, and device table
 *                                          updates
 *   ik_amd_event_pop, ik_amd_ppr_pop       one at a time per log; with the
 *                                          rest
 *   ik_amd_create, _enable, _disable,      nothing else on the unit
 *   _destroy
 * Callbacks: the issue function of ik_amd_devtab_write() is called from the
 * writing thread, with no iommukit lock held.  Nothing else calls back into
 * the caller except the ik_mmio, ik_dma_mem and allocator hooks.
 *
 * docs/fmt-amd.md lists what is and is not supported.  Pointer arguments
 * follow the rule of <iommukit/env.h> ("Conventions: pointer arguments").
 */
#ifndef IOMMUKIT_DRV_AMD_H
#define IOMMUKIT_DRV_AMD_H

#include <iommukit/env.h>
#include <iommukit/drv/io.h>
#include <iommukit/cmd/amd.h>
#include <iommukit/fmt/amd.h>
#include <iommukit/cmdq.h>
#include <iommukit/pgtable.h>

IK_BEGIN_DECLS

/* ================================================================ device table entries */

/* DTE word 0 (bits 63:0).  IK_AMD_DTE_V, _TV and _MODE() of
 * <iommukit/fmt/amd.h> are the same bits. */
#define IK_AMD_DTE0_V ((ik_u64)1 << 0)	/* valid */
#define IK_AMD_DTE0_TV ((ik_u64)1 << 1)	/* translation information valid */
#define IK_AMD_DTE0_HAD_SHIFT 7	/* [8:7] host access/dirty update */
#define IK_AMD_DTE0_HAD_MASK ((ik_u64)3 << 7)	/* HAD field mask */
#define IK_AMD_DTE0_MODE_SHIFT 9	/* [11:9] host table levels */
#define IK_AMD_DTE0_MODE_MASK ((ik_u64)7 << 9)	/* Mode field mask */
#define IK_AMD_DTE0_ROOT_MASK 0x000ffffffffff000ull	/* [51:12] host table root */
#define IK_AMD_DTE0_PPR ((ik_u64)1 << 52)	/* peripheral page requests */
#define IK_AMD_DTE0_GPRP ((ik_u64)1 << 53)	/* guest PPR response with PASID */
#define IK_AMD_DTE0_GIOV ((ik_u64)1 << 54)	/* requests without PASID use PASID 0's guest table */
#define IK_AMD_DTE0_GV ((ik_u64)1 << 55)	/* guest translation valid */
#define IK_AMD_DTE0_GLX_SHIFT 56	/* [57:56] GCR3 table levels - 1 */
#define IK_AMD_DTE0_GCR3_A_SHIFT 58	/* [60:58] GCR3 table root [14:12] */
#define IK_AMD_DTE0_IR ((ik_u64)1 << 61)	/* read permission */
#define IK_AMD_DTE0_IW ((ik_u64)1 << 62)	/* write permission */
#define IK_AMD_DTE0_RSVD 0x800000000000007cull	/* reserved: 6:2, 63 */
/* DTE word 1 (bits 127:64). */
#define IK_AMD_DTE1_DOMID_MASK 0xffffull	/* [79:64] DomainID */
#define IK_AMD_DTE1_GCR3_B_SHIFT 16	/* [95:80] GCR3 table root [30:15] */
#define IK_AMD_DTE1_I ((ik_u64)1 << 32)	/* [96] IOTLB (ATS) enable */
#define IK_AMD_DTE1_SE ((ik_u64)1 << 33)	/* [97] suppress page-fault events */
#define IK_AMD_DTE1_SA ((ik_u64)1 << 34)	/* [98] suppress all I/O page-fault events */
#define IK_AMD_DTE1_GCR3_C_SHIFT 43	/* [127:107] GCR3 table root [51:31] */
#define IK_AMD_DTE1_GCR3_MASK 0xfffff800ffff0000ull	/* the GCR3 parts of word 1 */
/* DTE word 2 (bits 191:128): interrupt remapping, and the GPT level. */
#define IK_AMD_DTE2_IV ((ik_u64)1 << 0)	/* [128] interrupt map valid */
#define IK_AMD_DTE2_GPT_LEVEL_SHIFT 54	/* [183:182] guest table: 0 4-level, 1 5-level */
#define IK_AMD_DTE2_GPT_LEVEL_MASK ((ik_u64)3 << 54)	/* GPT level field mask */
#define IK_AMD_DTE2_INTR_MASK 0xff0fffffffffffffull	/* the interrupt-remapping fields */
#define IK_AMD_DTE2_RSVD 0x0030000000000000ull	/* reserved: 181:180 */
/* DTE word 3 (bits 255:192). */
#define IK_AMD_DTE3_RSVD 0x003f000000007fffull	/* reserved: 206:192, 245:240 */

/* Domains and devices: both 16-bit. */
#define IK_AMD_MAX_DOMID 0xffffu	/* the highest DomainID */
#define IK_AMD_MAX_DEVID 0xffffu	/* the highest DeviceID (one PCI segment) */

/* ik_amd_dte_config.flags */
#define IK_AMD_DTE_IOTLB 0x1u	/* I: the device may cache translations (ATS) */
#define IK_AMD_DTE_SE 0x2u	/* SE: suppress page-fault events */
#define IK_AMD_DTE_SA 0x4u	/* SA: suppress all I/O page-fault events */
#define IK_AMD_DTE_GIOV 0x8u	/* GIoV: requests without PASID use PASID 0's guest table */
#define IK_AMD_DTE_PPR 0x10u	/* PPR: the device may send page requests */
#define IK_AMD_DTE_FLAGS_ALL 0x1fu	/* every IK_AMD_DTE_* flag */

/*
 * struct ik_amd_dte_config - what a DTE says.  Zero-initialise, then set:
 *   pt          the host (IK_PT_AMD_V1) table set: Mode = its levels, root
 *               = its root (HAD = 11b when it has IK_PT_QUIRK_DIRTY); NULL:
 *               Mode 0, no host translation (DMA addresses pass through,
 *               or, with guest translation, guest physical = system
 *               physical).
 *   prot        IK_PROT_READ / IK_PROT_WRITE -> IR / IW.  Nothing else.
 *               0 blocks every DMA of the device (the blocked entry).
 *   domid       DomainID, 0..65535 (the tag of its cached translations).
 *   flags       IK_AMD_DTE_*.
 *   guest translation (GV), from ik_amd_gcr3tab_dte(): gcr3_root (the GCR3
 *               table's device address, 4 KiB aligned, below 2^52; 0: no
 *               guest translation), glx (0..2: 1..3 levels), gpt_levels (4
 *               or 5: the amd-v2 tables' levels).
 *   intr        DTE word 2's interrupt-remapping fields (IV, IntTabLen, IG,
 *               the interrupt table root, the pass bits, IntCtl), written
 *               as given: iommukit does not build interrupt remapping
 *               tables.  Bits outside IK_AMD_DTE2_INTR_MASK -> -EINVAL.
 * The entry always has V = 1 and TV = 1.
 */
struct ik_amd_dte_config {
	const struct ik_pgtable *pt;	/* host (amd-v1) table set, or NULL: Mode 0 */
	unsigned prot;	/* IK_PROT_READ / IK_PROT_WRITE: IR / IW */
	ik_u32 domid;	/* DomainID, 0..65535 */
	ik_u32 flags;	/* IK_AMD_DTE_* */
	ik_u64 gcr3_root;	/* GCR3 table device address, 0: no guest translation */
	ik_u8 glx;	/* GCR3 table levels - 1 (0..2) */
	ik_u8 gpt_levels;	/* guest (amd-v2) table levels: 4 or 5 */
	ik_u64 intr;	/* word 2's interrupt-remapping fields, verbatim */
};

/*
 * ik_amd_dte_build - encode the DTE `c` describes into dte[0..3].
 * -EINVAL (dte untouched): NULL c or dte; pt not an IK_PT_AMD_V1 table set
 * (an amd-v2, VT-d or LPAE table set given as the host table), or its root
 * not below 2^52; prot other than READ/WRITE; domid above 65535; an unknown
 * flag; gcr3_root misaligned or not below 2^52, glx above 2, gpt_levels
 * other than 4 or 5 with a gcr3_root; glx, gpt_levels or GIoV without one;
 * intr outside IK_AMD_DTE2_INTR_MASK.  Pure, O(1).
 */
IK_API int ik_amd_dte_build(const struct ik_amd_dte_config *c, ik_u64 dte[4]);

/*
 * struct ik_amd_dte - a DTE decoded: every named field of the layout above;
 * root and gcr3_root are addresses (the fields shifted into place), prot is
 * IK_PROT_READ/WRITE from IR/IW, intr is word 2 masked with
 * IK_AMD_DTE2_INTR_MASK, word3 is word 3 as read (less nothing: its defined
 * fields are not decoded here).
 */
struct ik_amd_dte {
	bool v, tv;	/* valid; translation information valid */
	ik_u8 had;	/* host access/dirty update */
	ik_u8 mode;	/* host table levels (0: none; 7 is refused) */
	ik_u64 root;	/* host table root */
	bool ppr, gprp, giov, gv;	/* PPR, GPRP, GIoV, GV */
	ik_u8 glx;	/* GCR3 table levels - 1 */
	ik_u64 gcr3_root;	/* GCR3 table root */
	unsigned prot;	/* IK_PROT_READ / IK_PROT_WRITE */
	ik_u16 domid;	/* DomainID */
	bool iotlb, se, sa, cache, sd, ex;	/* I, SE, SA, Cache, SD, EX */
	ik_u8 ioctl, sysmgt;	/* IoCtl, SysMgt */
	ik_u8 gpt_level;	/* raw: 0 4-level, 1 5-level guest tables */
	ik_u64 intr;	/* word 2's interrupt-remapping fields */
	ik_u64 word3;	/* word 3 as read */
};

/*
 * ik_amd_dte_decode - decode dte[0..3] (memory anyone may have written: a
 * guest's, in a VMM) into *out.  -EINVAL, *out untouched: NULL argument, a
 * reserved bit set (see the layout), Mode 7, or a GLX of 3.  Pure, O(1).
 */
IK_API int ik_amd_dte_decode(const ik_u64 dte[4], struct ik_amd_dte *out);

/*
 * ik_amd_walker_from_dte - the host-table walker the IOMMU uses for a DTE,
 * as an emulator receives it: Mode levels at the root, input width
 * 12 + 9 * Mode (63 for Mode 6), output width oas (32..52), HAD = 11b ->
 * IK_PT_QUIRK_DIRTY.  -EINVAL: NULL argument, a DTE that does not decode,
 * V or TV clear, Mode 0 (no table to walk), an oas out of range.  O(1).
 */
IK_API int ik_amd_walker_from_dte(struct ik_pt_walker *w, const ik_u64 dte[4], unsigned oas);

/* ================================================================ planner */

#define IK_AMD_PLAN_MAX 4	/* the most commands one ik_amd_plan holds */

/*
 * struct ik_amd_plan - what an update needs: n decoded commands to issue in
 * order, then (sync) a COMPLETION_WAIT that the issuer waits for -
 * ik_cmdq_issue(..., IK_CMDQ_SYNC) on a queue of ik_cmdq_fmt_amd appends it
 * (a store wait to the queue's completion word); a driver with a ring of its
 * own writes one (op COMPLETION_WAIT, store = 1).  ik_amd_plan_issue() does
 * all of it.
 */
struct ik_amd_plan {
	unsigned n;	/* commands to issue, in c[0..n) */
	bool sync;	/* then a COMPLETION_WAIT, and wait for it */
	struct ik_amd_cmd c[IK_AMD_PLAN_MAX];	/* the decoded commands */
};

/*
 * struct ik_amd_target - whose translations an unmap or a map touched:
 *   pt       the table set: IK_PT_AMD_V1 (the host table of a DTE: the
 *            commands name the DomainID, GN = 0) or IK_PT_AMD_V2 (a guest
 *            table under a GCR3 entry: GN = 1 and the PASID);
 *   domid    the DomainID of the DTEs that use it (0..65535);
 *   pasid    amd-v2: its PASID in the GCR3 table (0..2^20 - 1); amd-v1: 0;
 *   flags    IK_AMD_TARGET_ATS: a device behind it caches translations
 *            (DTE I = 1): devid and maxpend describe it, and each
 *            invalidation also gets an INVALIDATE_IOTLB_PAGES;
 *   max_inv_bytes  use the whole-domain form (Address = everything) when
 *            the S-encoded block of the range would exceed this many bytes
 *            (0: no threshold; ranges reaching 2^52 use it anyway).
 */
struct ik_amd_target {
	const struct ik_pgtable *pt;	/* the table set whose entries changed */
	ik_u32 domid;	/* DomainID, 0..65535 */
	ik_u32 pasid;	/* amd-v2: the PASID; amd-v1: 0 */
	ik_u32 flags;	/* IK_AMD_TARGET_* */
	ik_u16 devid;	/* ATS: the device's DeviceID */
	ik_u8 maxpend;	/* ATS: INVALIDATE_IOTLB_PAGES Maxpend */
	ik_u64 max_inv_bytes;	/* whole-domain form above this block size (0: none) */
};
#define IK_AMD_TARGET_ATS 0x1u	/* a device-side IOTLB caches the translations */

/* Mode flags of ik_amd_plan_map(): the IOMMU caches not-present entries
 * (the capability header's NpCache bit; emulated IOMMUs set it). */
#define IK_AMD_PLAN_NPCACHE 0x1u

/*
 * ik_amd_plan_unmap - the invalidations that make an unmap's gather `g`
 * (from ik_pgtable_unmap() on t->pt) safe: after they and their wait
 * complete, no IOTLB, page-directory cache or device IOTLB holds a
 * translation through what was unmapped, and the gather may be synced
 * (ik_pgtable_gather_sync(): tables freed) and the IOVA reused.
 *
 *   condition                           commands
 *   ----------------------------------  ----------------------------------------
 *   empty gather (start >= end)         none, no wait
 *   non-empty, block within threshold   INVALIDATE_IOMMU_PAGES: DomainID, the
 *                                         smallest S-encoded block holding
 *                                         [start, end) (ik_amd_inv_encode():
 *                                         S = 0 for one page), PDE = g->walk
 *   above max_inv_bytes, or the block   INVALIDATE_IOMMU_PAGES: DomainID, S = 1,
 *     reaches 2^52                        Address = IK_AMD_INV_ALL_ADDR, PDE = 1
 *   amd-v2 pt                           the same with GN = 1, PASID = t->pasid
 *   ATS                                 + INVALIDATE_IOTLB_PAGES: DeviceID,
 *                                         Maxpend, the same Address and S
 *                                         (GN and PASID as above)
 *   any non-empty gather                then the wait (sync = true)
 *
 * PDE (also drop cached page-directory entries) is set exactly when the
 * gather says a table entry was cleared or a table freed (g->walk); a
 * leaf-only unmap keeps the walk caches.  Errors (-EINVAL, *p untouched):
 * NULL argument; t->pt neither amd-v1 nor amd-v2; a gather holding another
 * table set's ranges; domid above 65535; pasid not 0 for amd-v1 or 2^20 or
 * more; an unknown target flag; an ATS PASID of more than 16 bits (the
 * command carries PASID[15:0]).  Pure, O(1).
 */
IK_API int ik_amd_plan_unmap(const struct ik_amd_target *t, const struct ik_gather *g,
			     struct ik_amd_plan *p);

/*
 * ik_amd_plan_range - the same choice for [iova, iova + size), PDE = walk:
 * what the page-table engine's flush_walk hook needs (walk = true: an empty
 * table that a new block replaced is freed outside any gather) and what a
 * driver that syncs ranges itself issues.  Errors as ik_amd_plan_unmap(),
 * and -EINVAL for size 0 or a range that wraps.  Pure, O(1).
 */
IK_API int ik_amd_plan_range(const struct ik_amd_target *t, ik_u64 iova, ik_u64 size, bool walk,
			     struct ik_amd_plan *p);

/*
 * ik_amd_plan_map - what a map of [iova, iova + size) needs (the
 * iotlb_sync_map hook): with IK_AMD_PLAN_NPCACHE (the IOMMU may have cached
 * the not-present entries the map replaced, at any level) the range's
 * invalidation as ik_amd_plan_range() with PDE = 1, without the device
 * IOTLB one (a device caches no not-present entry), and a wait; without it
 * nothing.  Errors as ik_amd_plan_range(), and -EINVAL for an unknown flag.
 * Pure, O(1).
 */
IK_API int ik_amd_plan_map(ik_u32 flags, const struct ik_amd_target *t, ik_u64 iova, ik_u64 size,
			   struct ik_amd_plan *p);

/*
 * struct ik_amd_change - what a device-table or GCR3-table update did
 * (ik_amd_devtab_write() and ik_amd_gcr3tab_set()/_clear() fill it), for
 * ik_amd_plan_change():
 *   kind     IK_AMD_CHANGE_DTE (the DTE of devid) or IK_AMD_CHANGE_GCR3
 *            (the GCR3 entry of pasid, in the table of the DTEs of domid);
 *   devid    the device (DTE changes; GCR3 changes with ats);
 *   domid    the DomainID whose cached translations may be stale: the old
 *            entry's, when the new entry names the same DomainID with
 *            another table (root, Mode, GCR3 table) or no translation;
 *            for a GCR3 change the domain of the DTEs using the table;
 *   flush_domain  DTE: cached translations tagged domid came from a table
 *            the entry no longer names (set by ik_amd_devtab_write());
 *   ats      the old entry let the device cache translations (DTE I = 1):
 *            its IOTLB is flushed too;
 *   pasid    GCR3 changes: which PASID.
 */
struct ik_amd_change {
	ik_u8 kind;	/* IK_AMD_CHANGE_* */
	bool flush_domain;	/* DTE: translations tagged domid are stale */
	bool ats;	/* the device's IOTLB must be flushed too */
	ik_u16 devid;	/* the device */
	ik_u16 domid;	/* the DomainID to flush */
	ik_u32 pasid;	/* GCR3: the PASID */
};
#define IK_AMD_CHANGE_DTE 1u	/* ik_amd_change.kind: a device table entry */
#define IK_AMD_CHANGE_GCR3 2u	/* ik_amd_change.kind: a GCR3 table entry */

/*
 * ik_amd_plan_change - the invalidations a table update needs:
 *
 *   change                   commands
 *   -----------------------  ---------------------------------------------------
 *   DTE                      INVALIDATE_DEVTAB_ENTRY (devid)
 *   DTE, flush_domain        + INVALIDATE_IOMMU_PAGES (domid, everything, PDE = 1)
 *   DTE, ats                 + INVALIDATE_IOTLB_PAGES (devid, everything)
 *   GCR3                     INVALIDATE_IOMMU_PAGES (domid, GN = 1, pasid,
 *                              everything, PDE = 1)
 *   GCR3, ats                + INVALIDATE_IOTLB_PAGES (devid, GN = 1, pasid,
 *                              everything)
 *   any                      then the wait (sync = true)
 *
 * Errors (-EINVAL, *p untouched): NULL argument, an unknown kind, a pasid of
 * 2^20 or more (GCR3), or of more than 16 bits with ats.  Pure, O(1).
 */
IK_API int ik_amd_plan_change(const struct ik_amd_change *c, struct ik_amd_plan *p);

/*
 * ik_amd_plan_issue - encode p's commands and issue them on `q` (a queue of
 * ik_cmdq_fmt_amd) in order, with IK_CMDQ_SYNC when p->sync: returns once
 * the IOMMU completed them.  0 (also for an empty plan); -EINVAL (NULL q or
 * p, p->n above IK_AMD_PLAN_MAX, a command that does not encode: nothing
 * issued); the queue's errors (ik_cmdq_issue()).  Usable as the issue
 * function of ik_amd_devtab_write() (ik_amd_issue_cmdq, ctx = the queue).
 */
IK_API int ik_amd_plan_issue(struct ik_cmdq *q, const struct ik_amd_plan *p);

/* ================================================================ device table */

/*
 * The issue function of the table writers: issue the plan (its commands,
 * then the wait when p->sync) and wait for it; 0, or a negative errno (the
 * writer stops and returns it).  ik_amd_issue_cmdq (ctx = a struct ik_cmdq
 * of ik_cmdq_fmt_amd) is one; a VMM or a driver with its own ring passes
 * its own.
 */
typedef int (*ik_amd_issue_fn)(void *ctx, const struct ik_amd_plan *p);
/* ik_amd_plan_issue() as an ik_amd_issue_fn (ctx = the struct ik_cmdq). */
IK_API int ik_amd_issue_cmdq(void *ctx, const struct ik_amd_plan *p);

/*
 * struct ik_amd_devtab_config - for ik_amd_devtab_init():
 *   dma        DMA memory for the table (must outlive it);
 *   max_devid  the highest DeviceID the table serves (0..65535): the table
 *              has max_devid + 1 entries rounded up to whole 4 KiB pages
 *              (128 entries each; the base register's Size field counts
 *              pages), 4 KiB .. 2 MiB;
 *   oas        the IOMMU's reach in bits for table memory, 32..52 (0: 52):
 *              memory above it is -ERANGE.
 */
struct ik_amd_devtab_config {
	const struct ik_dma_mem *dma;	/* DMA memory for the table */
	ik_u32 max_devid;	/* the highest DeviceID served */
	unsigned oas;	/* table memory must lie below 2^oas (0: 52) */
};

/* A device table (ik_amd_devtab_init()); fields are private. */
struct ik_amd_devtab {
	const struct ik_dma_mem *dma;	/* private: the DMA memory */
	ik_u64 *base;	/* private: the entries (CPU address) */
	ik_u64 base_dma;	/* private: their device address */
	ik_u32 entries;	/* private: DTEs in the table */
};

/*
 * ik_amd_devtab_init - allocate the table (4 KiB aligned) and fill every
 * entry with the blocked DTE (V = TV = 1, nothing else), cleaned.
 * -EINVAL (NULL t or c, no dma or its alloc/free, max_devid above 65535, oas
 * out of range), -ENOMEM / -ERANGE (from the DMA memory, or memory beyond
 * oas): nothing allocated, *t untouched.  Cost: one DMA allocation, O(table
 * size) stores.
 */
IK_API int ik_amd_devtab_init(struct ik_amd_devtab *t, const struct ik_amd_devtab_config *c);
/* Free the table; NULL (or a zeroed struct) is ignored.  The IOMMU must no
 * longer read it. */
IK_API void ik_amd_devtab_fini(struct ik_amd_devtab *t);
/* The Device Table Base Address register value: base [51:12] | Size [8:0]
 * (4 KiB pages - 1).  t must be initialised.  O(1). */
IK_API ik_u64 ik_amd_devtab_reg(const struct ik_amd_devtab *t);
/* DTEs in the table (max_devid + 1 rounded up to a multiple of 128). */
IK_API ik_u32 ik_amd_devtab_entries(const struct ik_amd_devtab *t);

/*
 * ik_amd_devtab_write - make `dte` the entry of `devid`.  The IOMMU may read
 * a DTE at any time, in 128-bit halves or whole, and cache it until an
 * INVALIDATE_DEVTAB_ENTRY; the CPU stores 64 bits at a time.  So:
 *   - unchanged entry: nothing written, nothing issued;
 *   - one 64-bit word changes, or the entry does not translate now (V = 0,
 *     or blocked): words 3, 2, 1 first, then word 0 (V, TV, Mode, root, IR,
 *     IW), each a single 64-bit store, cleaned before the next step;
 *   - becoming blocked: word 0 first, then words 1..3;
 *   - a translating entry with several words changing (break-before-make):
 *     word 0 becomes the blocked word (V | TV: no translation, no access,
 *     whatever the other words say), cleaned, and the old entry's plan
 *     (below) issued and waited for; then words 3, 2, 1, cleaned, word 0,
 *     cleaned, and INVALIDATE_DEVTAB_ENTRY with a wait.  The device's DMA is
 *     refused in between;
 *   - otherwise, after the stores, the plan: ik_amd_plan_change(chg) -
 *     INVALIDATE_DEVTAB_ENTRY; the old DomainID's translations when the
 *     device leaves that (DomainID, tables) pair (another DomainID, other
 *     tables, or none: flush_domain); the device IOTLB when the old entry
 *     had I = 1; a wait.
 * A DomainID is a tag the caller owns: the IOMMU serves any device whose
 * DTE names it from what it cached under it.  Reusing one for other tables
 * needs its flush (flush_domain does it when the last DTE leaves).
 * fn NULL means "the IOMMU does not read this table now" (before it is
 * enabled): words are written in the same order, nothing is issued; *chg
 * (if chg is not NULL) still says what to invalidate.  Returns 0; -EINVAL
 * (NULL t or dte, devid beyond the table, a dte that ik_amd_dte_decode()
 * refuses: nothing written); fn's error (the entry is then blocked, or the
 * new value).  Cost: up to two fn calls, up to 3 cleans.
 */
IK_API int ik_amd_devtab_write(struct ik_amd_devtab *t, ik_u32 devid, const ik_u64 dte[4],
			       ik_amd_issue_fn fn, void *ctx, struct ik_amd_change *chg);
/* The current DTE of devid.  -EINVAL for NULL arguments or a devid beyond
 * the table.  O(1). */
IK_API int ik_amd_devtab_read(const struct ik_amd_devtab *t, ik_u32 devid, ik_u64 dte[4]);

/* ================================================================ GCR3 tables */

/* GCR3 table entry (64 bits): bit 0 valid, bits 51:12 the next level's
 * table (upper levels) or the guest table root (the last level). */
#define IK_AMD_GCR3_V ((ik_u64)1 << 0)	/* valid */
#define IK_AMD_GCR3_ADDR_MASK 0x000ffffffffff000ull	/* [51:12] */

/*
 * struct ik_amd_gcr3tab_config - for ik_amd_gcr3tab_init():
 *   dma         DMA memory for its tables (must outlive it);
 *   alloc       bookkeeping (NULL: the env's);
 *   pasid_bits  PASIDs 0 .. 2^pasid_bits - 1, 1..20: GLX = ceil(bits / 9)
 *               - 1 (one level up to 9 bits, two up to 18, three beyond;
 *               the IOMMU's EFR.GLXSup and PASmax must allow it);
 *   gpt_levels  the levels of every amd-v2 table under it: 4 or 5 (0: 4);
 *               the DTE's GPT level says it once for all PASIDs;
 *   oas         table memory below 2^oas, 32..52 (0: 52).
 */
struct ik_amd_gcr3tab_config {
	const struct ik_dma_mem *dma;	/* DMA memory for the tables */
	const struct ik_allocator *alloc;	/* bookkeeping; NULL: the env's */
	unsigned pasid_bits;	/* PASIDs below 2^pasid_bits, 1..20 */
	unsigned gpt_levels;	/* amd-v2 table levels, 4 or 5 (0: 4) */
	unsigned oas;	/* table memory below 2^oas (0: 52) */
};

/* A GCR3 table (ik_amd_gcr3tab_init()); fields are private. */
struct ik_amd_gcr3tab {
	const struct ik_dma_mem *dma;	/* private: the DMA memory */
	const struct ik_allocator *alloc;	/* private: the bookkeeping allocator */
	ik_u64 *root;	/* private: the top level (CPU address) */
	ik_u64 root_dma;	/* private: its device address */
	ik_u64 **sub;	/* private: CPU addresses of lower tables, by index (or NULL) */
	ik_u64 *sub_dma;	/* private: their device addresses */
	ik_u32 nsub;	/* private: slots in sub (levels 2 and 3 together) */
	ik_u32 tables;	/* private: table pages allocated, the root included */
	ik_u8 glx, pasid_bits, gpt_levels, oas;	/* private: the config's */
};

/*
 * ik_amd_gcr3tab_init - allocate and zero the top-level table (and the
 * bookkeeping of the lower ones, allocated on first use).  -EINVAL (NULL t
 * or c, no dma, pasid_bits outside 1..20, gpt_levels not 0, 4 or 5, oas out
 * of range), -ENOMEM / -ERANGE: nothing allocated, *t untouched.  Cost: one
 * DMA page and (GLX > 0) one bookkeeping allocation of 16 bytes per
 * possible lower table.
 */
IK_API int ik_amd_gcr3tab_init(struct ik_amd_gcr3tab *t, const struct ik_amd_gcr3tab_config *c);
/* Free every table and the bookkeeping; NULL (or a zeroed struct) is
 * ignored.  The IOMMU must no longer read it. */
IK_API void ik_amd_gcr3tab_fini(struct ik_amd_gcr3tab *t);
/* Fill the guest-translation fields of a DTE config (gcr3_root, glx,
 * gpt_levels) for this table.  t and c must not be NULL. */
IK_API void ik_amd_gcr3tab_dte(const struct ik_amd_gcr3tab *t, struct ik_amd_dte_config *c);

/*
 * ik_amd_gcr3tab_set - make `pt` (an IK_PT_AMD_V2 table set with the
 * table's gpt_levels) the guest table of `pasid`: lower tables are
 * allocated, zeroed and cleaned before the entry above points at them; the
 * last-level entry (root | V) is one 64-bit store, cleaned.  *chg (if not
 * NULL) gets kind GCR3 and pasid; the caller fills domid, devid and ats
 * and issues ik_amd_plan_change() (a valid entry is never rewritten in
 * place, so the IOMMU cached no translation of this PASID unless it caches
 * not-present entries: then issue it before the device uses the PASID).
 * Errors, nothing written: -EINVAL (NULL t or pt, pasid >= 2^pasid_bits,
 * pt not amd-v2, other levels than the table's, a root not below 2^52);
 * -EBUSY (the entry is valid: clear it and invalidate first); -ENOMEM /
 * -ERANGE (a lower table).  Cost: O(1) plus up to two DMA pages.
 */
IK_API int ik_amd_gcr3tab_set(struct ik_amd_gcr3tab *t, ik_u32 pasid, const struct ik_pgtable *pt,
			      struct ik_amd_change *chg);
/*
 * ik_amd_gcr3tab_clear - invalidate the entry of `pasid` (one 64-bit store,
 * cleaned; lower tables stay for later sets).  Until ik_amd_plan_change()
 * of *chg (kind GCR3, pasid; the caller fills domid, devid, ats) completes,
 * the IOMMU may still translate through the old table.  -EINVAL (NULL t,
 * pasid out of range), -ENOENT (not valid).  O(1).
 */
IK_API int ik_amd_gcr3tab_clear(struct ik_amd_gcr3tab *t, ik_u32 pasid, struct ik_amd_change *chg);
/* The last-level entry of `pasid` (0 where no lower table exists).
 * -EINVAL for NULL arguments or a pasid out of range.  O(1). */
IK_API int ik_amd_gcr3tab_read(const struct ik_amd_gcr3tab *t, ik_u32 pasid, ik_u64 *entry);

/* ================================================================ registers */

/*
 * MMIO register file (pub. 48882 "MMIO Registers"): 64-bit registers at
 * these offsets from the base the IVRS table gives (IVHD IOMMU Base
 * Address; 16 KiB at least).
 */
#define IK_AMD_REG_DEVTAB_BASE 0x0000u	/* Device Table Base Address */
#define IK_AMD_REG_CMDBUF_BASE 0x0008u	/* Command Buffer Base Address */
#define IK_AMD_REG_EVTLOG_BASE 0x0010u	/* Event Log Base Address */
#define IK_AMD_REG_CONTROL 0x0018u	/* IOMMU Control */
#define IK_AMD_REG_EXCL_BASE 0x0020u	/* Exclusion Range Base */
#define IK_AMD_REG_EXCL_LIMIT 0x0028u	/* Exclusion Range Limit */
#define IK_AMD_REG_EFR 0x0030u		/* Extended Feature Register */
#define IK_AMD_REG_PPRLOG_BASE 0x0038u	/* PPR Log Base Address */
#define IK_AMD_REG_CMDBUF_HEAD 0x2000u	/* Command Buffer Head Pointer */
#define IK_AMD_REG_CMDBUF_TAIL 0x2008u	/* Command Buffer Tail Pointer */
#define IK_AMD_REG_EVTLOG_HEAD 0x2010u	/* Event Log Head Pointer */
#define IK_AMD_REG_EVTLOG_TAIL 0x2018u	/* Event Log Tail Pointer */
#define IK_AMD_REG_STATUS 0x2020u	/* IOMMU Status */
#define IK_AMD_REG_PPRLOG_HEAD 0x2030u	/* PPR Log Head Pointer */
#define IK_AMD_REG_PPRLOG_TAIL 0x2038u	/* PPR Log Tail Pointer */

/* Command buffer, event log and PPR log base registers: base [51:12], Len
 * [59:56] = log2 of the entries (16 bytes each), 8..15 (256..32768). */
#define IK_AMD_RING_ADDR_MASK 0x000ffffffffff000ull	/* [51:12] */
#define IK_AMD_RING_LEN_SHIFT 56	/* [59:56] log2(entries) */
#define IK_AMD_RING_LOG2_MIN 8u	/* the smallest ring: 256 entries (4 KiB) */
#define IK_AMD_RING_LOG2_MAX 15u	/* the largest: 32768 entries (512 KiB) */
/* Head and tail pointers: the byte offset of an entry, bits [18:4]. */
#define IK_AMD_PTR_MASK 0x7fff0u
#define IK_AMD_PTR_SHIFT 4u

/* IOMMU Control register bits (the ones iommukit writes or reads). */
#define IK_AMD_CTRL_IOMMU_EN ((ik_u64)1 << 0)	/* IommuEn: translation on */
#define IK_AMD_CTRL_HT_TUN_EN ((ik_u64)1 << 1)	/* HtTunEn */
#define IK_AMD_CTRL_EVTLOG_EN ((ik_u64)1 << 2)	/* EventLogEn */
#define IK_AMD_CTRL_EVT_INT_EN ((ik_u64)1 << 3)	/* EventIntEn */
#define IK_AMD_CTRL_COMWAIT_INT_EN ((ik_u64)1 << 4)	/* ComWaitIntEn */
#define IK_AMD_CTRL_COHERENT ((ik_u64)1 << 10)	/* Coherent */
#define IK_AMD_CTRL_CMDBUF_EN ((ik_u64)1 << 12)	/* CmdBufEn */
#define IK_AMD_CTRL_PPRLOG_EN ((ik_u64)1 << 13)	/* PPRLogEn */
#define IK_AMD_CTRL_PPR_INT_EN ((ik_u64)1 << 14)	/* PPRIntEn */
#define IK_AMD_CTRL_PPR_EN ((ik_u64)1 << 15)	/* PPREn: peripheral page requests */
#define IK_AMD_CTRL_GT_EN ((ik_u64)1 << 16)	/* GTEn: guest translation */

/* IOMMU Status register bits; RW1C: the overflow and interrupt bits. */
#define IK_AMD_STS_EVT_OVERFLOW (1u << 0)	/* EventOverflow (RW1C) */
#define IK_AMD_STS_EVT_INT (1u << 1)	/* EventLogInt (RW1C) */
#define IK_AMD_STS_COMWAIT_INT (1u << 2)	/* ComWaitInt (RW1C) */
#define IK_AMD_STS_EVTLOG_RUN (1u << 3)	/* EventLogRun */
#define IK_AMD_STS_CMDBUF_RUN (1u << 4)	/* CmdBufRun */
#define IK_AMD_STS_PPR_OVERFLOW (1u << 5)	/* PprOverflow (RW1C) */
#define IK_AMD_STS_PPR_INT (1u << 6)	/* PprInt (RW1C) */
#define IK_AMD_STS_PPRLOG_RUN (1u << 7)	/* PprLogRun */

/* ring value of a base register: addr (4 KiB aligned) | log2 entries. */
IK_INLINE ik_u64 ik_amd_ring_reg(ik_u64 addr, unsigned log2_entries)
{
	return (addr & IK_AMD_RING_ADDR_MASK) | (ik_u64)(log2_entries & 0xfu)
		<< IK_AMD_RING_LEN_SHIFT;
}

/*
 * struct ik_amd_hwcaps - the Extended Feature Register decoded (field names
 * as pub. 48882's; bools are single bits; efr as read).  Positions:
 *   0 PreFSup  1 PPRSup  2 XTSup  3 NXSup  4 GTSup  6 IASup  7 GASup
 *   8 HESup  9 PCSup  11:10 HATS  13:12 GATS  15:14 GLXSup  17:16 SmiFSup
 *   20:18 SmiFRC  23:21 GAMSup  36:32 PASmax  37 USSup  39:38 DevTblSegSup
 *   48 GIoSup  49 HASup  50 EPHSup  52 HDSup
 * Derived: host_levels = HATS + 4 (the deepest host table Mode; HATS 11b
 * is reserved and decodes to 0), guest_levels = GATS + 4 (likewise;
 * amd-v2 tables), glx_max = GLXSup (0..2: GCR3 table levels - 1),
 * pasid_bits = PASmax + 1 (0 when GTSup is clear).
 */
struct ik_amd_hwcaps {
	ik_u64 efr;	/* as read */
	bool pref, ppr, xt, nx, gt, ia, ga, he, pc, us, gio, ha, eph, hd; /* *Sup bits */
	ik_u8 hats, gats, glx_sup, smif_sup, smif_rc, gam_sup, pasmax, devtblseg; /* fields */
	ik_u8 host_levels;	/* HATS + 4, 0 if reserved */
	ik_u8 guest_levels;	/* GATS + 4, 0 if reserved */
	ik_u8 pasid_bits;	/* PASmax + 1 with GTSup, else 0 */
};

/* ik_amd_hwcaps_decode - fill *out from the EFR value.  -EINVAL for a NULL
 * out.  Pure, O(1). */
IK_API int ik_amd_hwcaps_decode(ik_u64 efr, struct ik_amd_hwcaps *out);

/* ================================================================ command buffer */

/*
 * struct ik_amd_cmdbuf - the register side of a command buffer, as struct
 * ik_cmdq_regs hooks (ik_amd_cmdbuf_regs, regs_ctx = the ik_amd_cmdbuf);
 * the queue needs IK_CMDQ_CFG_NO_WRAP (the pointers carry no wrap bit: one
 * slot stays empty) and ik_cmdq_fmt_amd:
 *   read_cons  Status first, then Head >> 4 masked to the ring.  The mask
 *              is needed on QEMU 7.2, whose Head reads as the buffer's
 *              length (one past the last slot) right after it executed
 *              the last slot, until it wraps at the next command; on the
 *              specification's IOMMU it changes nothing.  When the buffer
 *              was started (ik_amd_cmdbuf_start()) and Status.CmdBufRun
 *              reads 0, the IOMMU stopped at Head on an
 *              ILLEGAL_COMMAND_ERROR or a COMMAND_HARDWARE_ERROR (it logs
 *              which in the event log): reported as IK_CMDQ_CERROR_ILL,
 *              so the queue replaces the command with its no-op (a
 *              COMPLETION_WAIT without store) and its issuer gets -EIO.
 *   write_prod Tail = index << 4.
 *   ack_error  Control.CmdBufEn cleared and set again (written in two
 *              stores): the IOMMU resumes fetching at Head, and CmdBufRun
 *              is 1 again; the command buffer's other registers are not
 *              touched.
 * Fields are private except errors (CmdBufRun stops seen).
 */
struct ik_amd_cmdbuf {
	const struct ik_mmio *mmio;	/* private: the IOMMU's registers */
	ik_u32 mask;	/* private: entries - 1 */
	bool started;	/* private: CmdBufRun must read 1 */
	ik_u64 errors;	/* CmdBufRun stops reported to the queue */
};

/* The struct ik_cmdq_regs hooks of a struct ik_amd_cmdbuf. */
IK_API extern const struct ik_cmdq_regs ik_amd_cmdbuf_regs;

/*
 * ik_amd_cmdbuf_init - set up *cb for a buffer of 2^log2_entries commands
 * (IK_AMD_RING_LOG2_MIN..MAX), registers through mmio (not copied: it must
 * outlive cb).  Touches no register; the hooks report no error until
 * ik_amd_cmdbuf_start().  -EINVAL for a NULL cb or mmio or a size out of
 * range.  O(1).
 */
IK_API int ik_amd_cmdbuf_init(struct ik_amd_cmdbuf *cb, const struct ik_mmio *mmio,
			      unsigned log2_entries);
/* The buffer runs (Control.CmdBufEn set and CmdBufRun seen): from now on a
 * CmdBufRun of 0 is a stop on an error.  ik_amd_cmdbuf_stop(): it no longer
 * runs.  Neither touches a register. */
IK_API void ik_amd_cmdbuf_start(struct ik_amd_cmdbuf *cb);
IK_API void ik_amd_cmdbuf_stop(struct ik_amd_cmdbuf *cb);

/* ================================================================ event and PPR logs */

/* Event codes (EventCode, bits [63:60] of an event log entry). */
#define IK_AMD_EVT_ILLEGAL_DEV_TABLE_ENTRY 0x1u
#define IK_AMD_EVT_IO_PAGE_FAULT 0x2u
#define IK_AMD_EVT_DEV_TAB_HARDWARE_ERROR 0x3u
#define IK_AMD_EVT_PAGE_TAB_HARDWARE_ERROR 0x4u
#define IK_AMD_EVT_ILLEGAL_COMMAND_ERROR 0x5u
#define IK_AMD_EVT_COMMAND_HARDWARE_ERROR 0x6u
#define IK_AMD_EVT_IOTLB_INV_TIMEOUT 0x7u
#define IK_AMD_EVT_INVALID_DEVICE_REQUEST 0x8u
#define IK_AMD_EVT_INVALID_PPR_REQUEST 0x9u
#define IK_AMD_EVT_EVENT_COUNTER_ZERO 0xau

/*
 * struct ik_amd_event - one event log entry (16 bytes: rec[0] = bits 63:0,
 * rec[1] = bits 127:64) decoded.  Layout (pub. 48882 "Event Log"; a field
 * is filled only for the codes that define it, else 0):
 *   DeviceID   [15:0]        codes 1, 2, 3, 4, 7, 8, 9
 *   PASID      [19:16] (PASID[19:16]) and [47:32] (PASID[15:0]): codes 1,
 *              2, 4, 8, 9 with GN = 1
 *   DomainID   [47:32]       codes 2 and 4 with GN = 0
 *   flags      [59:48]       codes 1, 2, 3, 4, 8, 9 (raw, 12 bits), named:
 *              GN [48]  NX [49]  US [50]  I [51]  PR [52]  RW [53]  PE [54]
 *              RZ [55]  TR [56]; hardware-error Type [58:57] (codes 3, 4
 *              and 6: 00b master abort, 01b target abort, 10b data error);
 *              INVALID_DEVICE_REQUEST Type [59:57]
 *   EventCode  [63:60]
 *   address    [127:64]: the faulting address (1, 2, 8, 9), the DTE's or
 *              table entry's system physical address (3, 4), the command's
 *              (5, 6), the INVALIDATE_IOTLB_PAGES' (7); low bits as logged
 * write = RW (1: a write, 0: a read), present = PR (the page was present:
 * a permission fault), intr = I (an interrupt request).
 */
struct ik_amd_event {
	ik_u8 code;	/* IK_AMD_EVT_* */
	ik_u16 devid;	/* DeviceID */
	ik_u16 domid;	/* DomainID (GN = 0 page faults and page-table errors) */
	ik_u32 pasid;	/* PASID (GN = 1) */
	ik_u16 flags;	/* bits 59:48 as logged, for the codes that define them */
	bool gn, nx, us, intr, present, write, pe, rz, tr;	/* the named flags */
	ik_u8 type;	/* hardware-error / invalid-request Type */
	ik_u64 addr;	/* bits 127:64 */
	bool overflow;	/* ik_amd_event_pop(): the log overflowed before this entry */
};

/*
 * ik_amd_event_decode - decode one entry into *e.  -ENOENT for an entry of
 * EventCode 0 (an empty slot; *e zeroed), -EINVAL for a code the
 * specification does not define above (0xb..0xf: *e untouched) or a NULL
 * argument.  Pure, O(1).
 */
IK_API int ik_amd_event_decode(const ik_u64 rec[2], struct ik_amd_event *e);
/* The event code's name ("IO_PAGE_FAULT"), or NULL. */
IK_API const char *ik_amd_event_name(unsigned code);

/*
 * struct ik_amd_ppr - one PPR log entry (a PCIe page request) decoded.
 * Layout (16 bytes): DeviceID [15:0], PASID[15:0] [31:16], Tag [40:32],
 * PASID[19:16] [45:42], flags [59:48] (raw; named: exec [49], read [50],
 * write [53], user [54], priv [55], gn [56]: a PASID is present), PPRCode
 * [63:60] (1: PAGE_SERVICE_REQUEST), address [127:64] (bits 63:12 of the
 * page; the low bits as logged).
 */
struct ik_amd_ppr {
	ik_u8 code;	/* PPRCode */
	ik_u16 devid;	/* DeviceID */
	ik_u16 tag;	/* PRG index tag (9 bits) */
	ik_u32 pasid;	/* PASID (gn) */
	ik_u16 flags;	/* bits 59:48 as logged */
	bool exec, read, write, user, priv, gn;	/* named flags */
	ik_u64 addr;	/* bits 127:64 */
	bool overflow;	/* ik_amd_ppr_pop(): the log overflowed before this entry */
};
#define IK_AMD_PPR_PAGE_SERVICE_REQUEST 0x1u	/* PPRCode of a page request */

/* ik_amd_ppr_decode - decode one PPR log entry: -ENOENT for PPRCode 0 (*p
 * zeroed), -EINVAL for another code than 1 or a NULL argument (*p
 * untouched).  Pure, O(1). */
IK_API int ik_amd_ppr_decode(const ik_u64 rec[2], struct ik_amd_ppr *p);

/* ================================================================ ACPI IVRS */

/*
 * The IVRS table (I/O Virtualization Reporting Structure, pub. 48882
 * "ACPI Tables"): the 36-byte ACPI header, IVinfo [36..40), 8 reserved
 * bytes, then from byte 48 blocks of Type [0], Flags [1], Length [2..4):
 *   IVHD (types 10h, 11h, 40h): one IOMMU: DeviceID [4..6) (the IOMMU's
 *        own), Capability Offset [6..8), IOMMU Base Address [8..16), PCI
 *        Segment [16..18), IOMMU Info [18..20), IOMMU Feature Info /
 *        Attributes [20..24); types 11h and 40h also EFR Register Image
 *        [24..32) and a reserved (EFR2) quadword: a 24- or 40-byte header,
 *        then device entries: 4 bytes for types 00h..3Fh, 8 bytes for
 *        40h..7Fh, for F0h (ACPI HID) 22 bytes + the UID length at [21];
 *        the ones that name DeviceIDs: 01h all, 02h select, 03h..04h start
 *        and end of a range, 42h alias select (source DeviceID at [5..7)),
 *        43h alias range start, 46h extended select, 47h extended range
 *        start, 48h special device (DeviceID at [5..7), variety [7]).
 *   IVMD (types 20h, 21h, 22h) and unknown types: skipped by Length.
 * Every multi-byte field is little-endian.
 *
 * ik_amd_ivrs_parse() reads only [table, table + len): every length is
 * checked against what is left before it is used (overflow-safe), and the
 * output is written only once the whole table is known to be well formed.
 * A firmware that describes one IOMMU with both a type 10h and a type 11h
 * block (QEMU, most BIOSes) yields two units with the same base: a driver
 * picks the highest type it understands (11h or 40h carry the EFR image).
 */
struct ik_amd_ivrs_unit {
	ik_u8 type;	/* 0x10, 0x11 or 0x40 */
	ik_u8 flags;	/* the block's Flags */
	ik_u16 devid;	/* the IOMMU's own DeviceID */
	ik_u16 cap_off;	/* its capability block's offset in config space */
	ik_u16 segment;	/* PCI segment group */
	ik_u16 info;	/* IOMMU Info (MSI number, UnitID) */
	ik_u32 attr;	/* IOMMU Feature Info (10h) / Attributes (11h, 40h) */
	ik_u64 base;	/* IOMMU Base Address: the register file */
	ik_u64 efr;	/* EFR Register Image (11h, 40h; 0 for 10h) */
	bool have_efr;	/* type 11h or 40h */
};

/* A run of DeviceIDs an IVHD says its IOMMU serves: [first, last], with the
 * entry's DTE Setting byte.  Alias entries (42h, 43h) give the DeviceID the
 * IOMMU sees for the whole run (alias, alias_valid true); for the others
 * alias = first and alias_valid is false. */
struct ik_amd_ivrs_range {
	ik_u16 first, last;	/* DeviceIDs, inclusive */
	ik_u16 alias;	/* alias entries: the source DeviceID the IOMMU sees */
	bool alias_valid;	/* an alias entry */
	ik_u8 setting;	/* DTE Setting (INITPass, EIntPass, NMIPass, SysMgt, Lint0/1) */
	ik_u8 unit;	/* index of its IVHD in units[] */
	ik_u8 kind;	/* the device entry type (0x01, 0x02, 0x03, 0x42, ...) */
};

/*
 * struct ik_amd_ivrs - the parse result: caller arrays units[max_units]
 * and ranges[max_ranges] (either may be NULL with max 0: only counted).
 * ik_amd_ivrs_parse() sets ivinfo, nunits and nranges (the table's counts,
 * also when they exceed the arrays) and fills min(n, max) entries.
 */
struct ik_amd_ivrs {
	ik_u32 ivinfo;	/* IVinfo: EFRSup [0], GVA size [7:5], PA size [14:8], VA size [21:15] */
	struct ik_amd_ivrs_unit *units;	/* caller array, or NULL */
	unsigned max_units, nunits;	/* its size; IVHD blocks in the table */
	struct ik_amd_ivrs_range *ranges;	/* caller array, or NULL */
	unsigned max_ranges, nranges;	/* its size; DeviceID runs in the table */
};

/*
 * ik_amd_ivrs_parse - parse the IVRS table at [table, table + len).
 * Returns 0, or -ENOSPC when a count exceeds its array (the arrays hold
 * the first entries, the counts are the table's); -EINVAL, *out's counts
 * and arrays untouched: NULL table or out, an array NULL with a nonzero
 * max, len below 48 or the header's Length other than len, a signature
 * other than "IVRS", a checksum that does not sum to 0, a block whose
 * Length is below 4 (or below its type's header) or runs past the table, a
 * device entry that runs past its block, a range end without a start (or
 * a start not ended before the next start or the block's end), a range
 * end below its start, more than 255 IVHD blocks.  O(len).  The table is
 * read twice (check, then fill): bytes that change during the call (a
 * guest's memory) may give -EINVAL after part of the arrays was written;
 * copy such a table first.
 */
IK_API int ik_amd_ivrs_parse(const void *table, ik_size len, struct ik_amd_ivrs *out);

/* ================================================================ the unit */

/*
 * struct ik_amd_config - for ik_amd_create():
 *   mmio, dma   the IOMMU's registers and DMA memory (both copied);
 *   alloc       bookkeeping memory (NULL: the env's);
 *   max_devid   the highest DeviceID the device table serves (0..65535;
 *               from the IVRS ranges);
 *   oas         table, buffer and log memory below 2^oas, 32..52 (0: 52);
 *   cmd_log2, evt_log2, ppr_log2  command buffer, event log and PPR log of
 *               2^n entries, IK_AMD_RING_LOG2_MIN..MAX (0: the minimum, 8);
 *   flags       IK_AMD_CFG_*;
 *   timeout_ns  bound of every register wait and command wait (0: 1 s).
 */
struct ik_amd_config {
	const struct ik_mmio *mmio;	/* registers (copied) */
	const struct ik_dma_mem *dma;	/* DMA memory (copied) */
	const struct ik_allocator *alloc;	/* bookkeeping; NULL: the env's */
	ik_u32 max_devid;	/* the highest DeviceID served */
	unsigned oas;	/* memory below 2^oas (0: 52) */
	unsigned cmd_log2, evt_log2, ppr_log2;	/* ring sizes (0: 8) */
	ik_u32 flags;	/* IK_AMD_CFG_* */
	ik_u64 timeout_ns;	/* wait bound (0: 1 s) */
};
#define IK_AMD_CFG_NO_PPR 0x1u	/* no PPR log even where EFR.PPRSup says there is one */

struct ik_amd;	/* opaque */

/*
 * ik_amd_create - read the EFR through cfg->mmio (no register is written),
 * allocate the driver object and the device table (ik_amd_devtab_init():
 * every entry blocked), so that entries can be written before enable.
 * Errors, *out untouched and nothing allocated: -EINVAL (NULL cfg or out,
 * no mmio read32/write32, no dma alloc/free, max_devid above 65535, oas
 * outside 32..52, a ring size out of range, unknown flags); -ENOMEM /
 * -ERANGE (memory).
 */
IK_API int ik_amd_create(const struct ik_amd_config *cfg, struct ik_amd **out);
/*
 * ik_amd_destroy - ik_amd_disable() if this object enabled the IOMMU, then
 * free everything.  If the IOMMU does not let go (the Run bits stay set),
 * the memory it may still read is left allocated (leaked) rather than freed
 * under it.  NULL is ignored.
 */
IK_API void ik_amd_destroy(struct ik_amd *u);
/* The decoded EFR (valid from create on). */
IK_API const struct ik_amd_hwcaps *ik_amd_caps(const struct ik_amd *u);
/* The device table: write DTEs with ik_amd_devtab_write(ik_amd_devtab(u),
 * devid, dte, ik_amd_issue_cmdq, ik_amd_queue(u), &chg) once enabled, with
 * fn NULL before. */
IK_API struct ik_amd_devtab *ik_amd_devtab(struct ik_amd *u);

/*
 * ik_amd_enable - bring the IOMMU up, in this order:
 *   1. refuse (-EBUSY) when Control shows IommuEn or CmdBufEn (someone
 *      else's, or this object's: ik_amd_disable() first);
 *   2. allocate the command buffer (and its ik_cmdq: ik_cmdq_fmt_amd,
 *      IK_CMDQ_CFG_NO_WRAP | IK_CMDQ_CFG_MSI: each COMPLETION_WAIT stores
 *      into its own slot), the event log and, with EFR.PPRSup and without
 *      IK_AMD_CFG_NO_PPR, the PPR log: all zeroed and cleaned;
 *   3. Device Table Base = the table (ik_amd_devtab_reg()); Command Buffer
 *      Base = buffer | ComLen, Head = Tail = 0; Event Log Base = log |
 *      EventLen, Head = Tail = 0; the PPR log likewise; Status's RW1C bits
 *      cleared;
 *   4. Control |= CmdBufEn | EventLogEn (| PPRLogEn) (interrupt enables
 *      left clear: iommukit polls), then Control |= IommuEn, then wait for
 *      Status.CmdBufRun and EventLogRun (and PprLogRun).  The Run bits are
 *      waited for after IommuEn, not before: an IOMMU may start its rings
 *      only once it is enabled (QEMU 7.2 is understood to).  With every
 *      DTE blocked (create) or written by the caller, nothing translates
 *      through a stale cache meanwhile except what step 5 flushes;
 *   5. INVALIDATE_IOMMU_ALL (EFR.IASup) or, without it,
 *      INVALIDATE_DEVTAB_ENTRY for every DeviceID of the table, and a
 *      COMPLETION_WAIT.
 * Errors: -EBUSY (see 1); -ENOMEM, -ERANGE (memory); -ETIMEDOUT (a Run bit
 * did not follow, or the invalidation did not complete); -EIO (the IOMMU
 * stopped on it).  On error the IOMMU is switched off again (Control as it
 * was) and the memory of step 2 freed - unless the IOMMU does not let go
 * (then it stays allocated: see ik_amd_destroy()).
 */
IK_API int ik_amd_enable(struct ik_amd *u);
/*
 * ik_amd_disable - a COMPLETION_WAIT (nothing pending), then Control's
 * IommuEn, CmdBufEn, EventLogEn, PPRLogEn, PPREn cleared in one write, and
 * a wait for the Run bits to clear.  Works on an IOMMU someone else
 * enabled.  The device table stays (a later enable uses it with its
 * entries); the rings are freed.  0 or -ETIMEDOUT (rings then kept).
 */
IK_API int ik_amd_disable(struct ik_amd *u);
/* The command queue of an enabled unit (NULL otherwise): ik_cmdq_fmt_amd
 * entries (ik_amd_cmd_encode()). */
IK_API struct ik_cmdq *ik_amd_queue(struct ik_amd *u);
/*
 * ik_amd_issue - encode n decoded commands and issue them in order, then a
 * COMPLETION_WAIT and wait for it when sync.  0; -EINVAL (NULL u, c NULL
 * with n > 0, n > IK_AMD_PLAN_MAX * 4, a command that does not encode:
 * nothing issued); -ENODEV (not enabled); the queue's errors (-ETIMEDOUT;
 * -EIO: the IOMMU stopped on one of them, see struct ik_amd_cmdbuf).
 */
IK_API int ik_amd_issue(struct ik_amd *u, const struct ik_amd_cmd *c, unsigned n, bool sync);

/*
 * ik_amd_event_pop - the oldest entry of the event log (Head to Tail),
 * decoded into *e (e->overflow: Status.EventOverflow was set - entries
 * were lost; it is cleared and the log restarted: EventLogEn cleared and
 * set, Head = Tail = 0, after the entries still in it are popped), then
 * Head moves past it.  0; -ENOENT (log empty); -EIO (Head or Tail beyond
 * the log - a hostile or broken IOMMU: nothing moved - or an entry whose
 * code the specification does not define: it is skipped); -ENODEV (not
 * enabled); -EINVAL (NULL arguments).  The entry is read after
 * ik_dma_mem.clean (which must also invalidate on a non-coherent machine)
 * and zeroed after.  O(1).
 */
IK_API int ik_amd_event_pop(struct ik_amd *u, struct ik_amd_event *e);
/* ik_amd_ppr_pop - the same for the PPR log (Status.PprOverflow, PPRLogEn):
 * -ENODEV also when the unit has no PPR log. */
IK_API int ik_amd_ppr_pop(struct ik_amd *u, struct ik_amd_ppr *p);
/* True when the unit runs a PPR log (EFR.PPRSup, not IK_AMD_CFG_NO_PPR, enabled). */
IK_API bool ik_amd_has_ppr(const struct ik_amd *u);

/* Counters since create. */
struct ik_amd_stats {
	ik_u64 events;	/* event log entries popped */
	ik_u64 pprs;	/* PPR log entries popped */
	ik_u64 overflows;	/* EventOverflow / PprOverflow seen and cleared */
	ik_u64 cmd_stops;	/* CmdBufRun stops (command errors) recovered */
};
/* Snapshot; -EINVAL for NULL arguments. */
IK_API int ik_amd_get_stats(const struct ik_amd *u, struct ik_amd_stats *st);

IK_END_DECLS

#endif /* IOMMUKIT_DRV_AMD_H */
