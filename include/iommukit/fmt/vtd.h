/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/fmt/vtd.h - Intel VT-d page-table formats for the generic engine.
 *
 * Two formats, both 4 KiB tables of 512 eight-byte entries, 9 index bits per
 * level, 4 KiB granule:
 *
 *   IK_PT_VTD_SL   second-level (second-stage) tables, what a legacy-mode
 *                  context entry or a scalable-mode PASID entry with
 *                  PGTT = second-level-only points to.  3, 4 or 5 levels
 *                  (39, 48 or 57-bit input).  4K pages; 2M and 1G
 *                  superpages where CAP.SLLPS says so.
 *   IK_PT_VTD_FL   first-level (first-stage) tables, the x86-64 paging
 *                  format that a scalable-mode PASID entry with
 *                  PGTT = first-level-only points to.  4 or 5 levels (48 or
 *                  57-bit; iommukit maps the lower canonical half, 47 or 56
 *                  bits).  4K and 2M pages; 1G where CAP.FL1GP says so.
 *
 * Config (struct ik_pgtable_cfg; ik_vtd_cfg_init() derives it from CAP/ECAP):
 *   ias        second-level 32..57: up to 39 bits 3 levels, up to 48 bits 4,
 *              else 5; first-level 32..56: up to 47 bits 4 levels, else 5.
 *              The root is always a whole 4 KiB table.
 *   oas        the host address width (HAW), 32..52.
 *   pgsize_bitmap  must have 4K as its lowest size; 2M and 1G are kept only
 *              where fmt_flags says the unit has them (a map_pages() of a
 *              size the unit lacks is then -EINVAL; map() uses smaller pages).
 *   fmt_flags  IK_VTD_FLAG_* below; unknown flags -> -EINVAL.
 *   quirks     IK_PT_QUIRK_DIRTY, IK_PT_QUIRK_DEFER_LEAF_CLEAN; others
 *              -> -EINVAL.
 *
 * Glossary (the words of the VT-d specification, in iommukit's terms)
 *   CAP, ECAP   the capability registers a driver reads from the remapping
 *               unit.  The fields used here:
 *                 CAP.SAGAW  bits 12:8, one bit per supported second-level
 *                            depth: bit 1 = 3-level/39-bit, bit 2 =
 *                            4-level/48-bit, bit 3 = 5-level/57-bit.
 *                 CAP.MGAW   bits 21:16, maximum input address width - 1.
 *                 CAP.SLLPS  bits 37:34, second-level superpages: bit 0 =
 *                            2 MiB (a leaf at the directory level), bit 1 =
 *                            1 GiB (a leaf at the directory-pointer level).
 *                 CAP.FL1GP  bit 56, first-level 1 GiB pages.
 *                 CAP.FL5LP  bit 60, first-level 5-level paging.
 *                 ECAP.C     bit 0, page-walk coherency (legacy mode): 0
 *                            means the unit does not snoop the CPU caches
 *                            when it walks tables, so software must clean
 *                            (write back) every cache line of table memory
 *                            it changes before the unit may read it.
 *                 ECAP.SC    bit 7, snoop control: the SNP bit is honoured.
 *                 ECAP.SMPWC bit 48, page-walk coherency in scalable mode
 *                            (used with PASID-entry PWSNP).
 *                 ECAP.SLADS bit 45, second-level accessed/dirty support.
 *                 ECAP.SMTS  bit 43, scalable mode; ECAP.SLTS bit 46 and
 *                            ECAP.FLTS bit 47, second-level and first-level
 *                            translation in scalable mode.
 *   HAW         host address width: how many physical address bits the
 *               platform has (from the DMAR table).  Address bits at and
 *               above HAW in an entry are reserved: a walk that meets one
 *               faults (the walker: IK_PT_FAULT_ADDR_SIZE; the other
 *               reserved fields: IK_PT_FAULT_RESERVED).  iommukit's oas.
 *   AGAW / AW   adjusted guest address width: the second-level input width
 *               a table set covers, 12 + 9 * levels (39, 48, 57).  Context and
 *               PASID entries encode it in a 3-bit AW field: 1 = 39-bit,
 *               2 = 48-bit, 3 = 57-bit (= levels - 2).
 *   SLPTPTR     the physical address of the top second-level table, in
 *               bits 63:12 of a context entry's low word or of PASID-entry
 *               word 0.  FLPTPTR: the same for first-level, PASID word 2.
 *   SSADS       "second-stage accessed/dirty": with the PASID entry's SLADE
 *               (also called SSADE) bit set, the unit sets A in every entry
 *               it uses and D in every leaf it writes through; software
 *               reads and clears D to track dirty memory.
 *
 * Second-level entry (every level; "leaf" = SL-PTE, or an SL-PDE/SL-PDPE
 * with PS = 1):
 *   bit  0     R    read allowed (through this entry, for the range below).
 *   bit  1     W    write allowed.  An entry with R = W = 0 is not present:
 *                   the format has no separate present bit.  Non-leaf
 *                   entries carry R = W = 1 so that only leaves restrict.
 *   bit  2     X    execute (legacy, only with SLEE); iommukit writes 0.
 *   bits 6:3        memory-type fields in some revisions (used only with the
 *                   extended memory-type controls); iommukit writes 0.
 *   bit  7     PS   page size: 1 in a directory (2M) or directory-pointer
 *                   (1G) entry makes it a leaf.  Must be 0 at the PML4 and
 *                   PML5 levels, and at the directory-pointer level unless
 *                   SLLPS bit 1 is set (and at the directory level unless
 *                   SLLPS bit 0) - otherwise a reserved-bit fault.  In an
 *                   SL-PTE (the last level, always a leaf) iommukit writes
 *                   0 and its walker does not interpret it.
 *   bit  8     A    accessed, set by the unit when SSADS is enabled
 *                   (ignored otherwise).
 *   bit  9     D    dirty, leaves only, set by the unit on a write when
 *                   SSADS is enabled (ignored otherwise).
 *   bit 10          ignored: available to software.
 *   bit 11     SNP  snoop: in a leaf, forces the device's access to snoop
 *                   the CPU caches even if the request says no-snoop.  Only
 *                   where ECAP.SC = 1.  Ignored in non-leaf entries.
 *   bits HAW-1:12   address of the next table or of the page (2M leaves:
 *                   bits HAW-1:21, with 20:12 reserved; 1G: HAW-1:30, with
 *                   29:12 reserved).
 *   bits 51:HAW     reserved (must be 0).
 *   bits 61:52      ignored: available to software.
 *   bit 62          reserved (must be 0).
 *   bit 63          ignored: available to software.
 *
 * First-level entry (x86-64 paging, as the remapping unit walks it):
 *   bit  0     P    present.
 *   bit  1     R/W  writes allowed (through this entry).
 *   bit  2     U/S  user-mode requests allowed; DMA without a privilege
 *                   flag is a user request, so iommukit sets U/S everywhere
 *                   unless the mapping is privileged-only.
 *   bit  3     PWT  page-level write-through; bit 4 PCD page-level cache
 *                   disable (memory type, with PAT).
 *   bit  5     A    accessed; the unit sets it if clear (iommukit sets it
 *                   in every entry it writes, so the unit never has to).
 *   bit  6     D    dirty, leaves only; iommukit sets it in writable
 *                   leaves for the same reason.  Ignored in non-leaf entries.
 *   bit  7     PS   page size in PDPE (1G, needs CAP.FL1GP) and PDE (2M);
 *                   reserved in PML4E/PML5E; in a 4K PTE it is the PAT bit.
 *   bit  8     G    global (leaves); ignored by the remapping unit.
 *   bits 11:9       ignored (bit 10 is "extended accessed" only with EAFE).
 *   bit 12     PAT  in 2M/1G leaves; the address starts above it.
 *   bits HAW-1:12   address (2M: HAW-1:21; 1G: HAW-1:30; bits in between
 *                   are reserved, PAT excepted).
 *   bits 51:HAW     reserved.
 *   bits 62:52      ignored: available to software.
 *   bit 63     XD   execute disable, when the PASID entry's NXE is set
 *                   (ik_vtd_get_regs() sets it; the walker assumes it).
 *
 * Protections (IK_PROT_*) and what the walker decodes back:
 *   second-level  READ -> R, WRITE -> W (write-only is expressible); CACHE ->
 *                 SNP when the unit has snoop control (IK_VTD_FLAG_SC), and
 *                 every leaf gets SNP with IK_VTD_FLAG_FORCE_SNP; NOEXEC,
 *                 PRIV and MMIO have no bits (second-level tables never
 *                 grant execute, so the walker reports NOEXEC always; the
 *                 walker's attr is 1 for SNP, else 0).
 *   first-level   P always (x86 paging cannot deny reads: WRITE alone maps
 *                 readable too); WRITE -> R/W; PRIV -> U/S clear (else set);
 *                 NOEXEC -> XD; CACHE -> write-back (PWT = PCD = 0), MMIO ->
 *                 uncached (PWT = PCD = 1), neither -> UC- (PCD only), with
 *                 the power-on PAT (the walker's attr is the PAT index
 *                 PWT | PCD << 1 | PAT << 2).  A is set in every entry and D
 *                 in writable leaves, so the unit never has to update an
 *                 entry; with IK_PT_QUIRK_DIRTY writable leaves start with
 *                 D clear instead and the unit's D tracks writes.
 *
 * Second-level dirty tracking: IK_PT_QUIRK_DIRTY models SSADS (the PASID
 * entry's SLADE, which ik_vtd_get_regs() sets): leaves are written with A and
 * D clear, the unit sets them, ik_pgtable_read_and_clear_dirty() reads and
 * atomically clears D.  Without the quirk the unit ignores A and D.
 *
 * Non-coherent walks (ECAP.C = 0): cfg.coherent = false; the engine cleans
 * each run of changed entries once, at write time, or - with
 * IK_PT_QUIRK_DEFER_LEAF_CLEAN, as the Linux VT-d driver does since 2021 -
 * cleans the leaf runs of a whole request just before its single
 * iotlb_sync_map(iova, size).  The number of cleans is the same.
 *
 * Synchronization: the format adds nothing to the engine's rules (see
 * <iommukit/pgtable.h>).  ik_vtd_cfg_init() and the walker constructors are
 * pure functions of their arguments; ik_vtd_get_regs() reads only a table
 * set's immutable geometry and root, so it may run concurrently with
 * anything but ik_pgtable_destroy().
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_FMT_VTD_H
#define IOMMUKIT_FMT_VTD_H

#include <iommukit/pgtable.h>

IK_BEGIN_DECLS

/* ---- fmt_flags (struct ik_pgtable_cfg): what the unit supports ---- */
/* 2 MiB second-level superpages (CAP.SLLPS bit 0).  First-level tables
 * always have 2 MiB pages; the flag is ignored there. */
#define IK_VTD_FLAG_SP_2M 0x1ull
/* 1 GiB superpages: second-level CAP.SLLPS bit 1, first-level CAP.FL1GP. */
#define IK_VTD_FLAG_SP_1G 0x2ull
/* Second-level: the unit honours SNP (ECAP.SC); IK_PROT_CACHE then sets SNP
 * in the leaf.  Without it SNP is never written. */
#define IK_VTD_FLAG_SC 0x4ull
/* Second-level: SNP in every leaf whatever the prot ("force coherency", as
 * for a domain that must not let devices bypass the CPU caches).  Needs
 * IK_VTD_FLAG_SC. */
#define IK_VTD_FLAG_FORCE_SNP 0x8ull

/* ---- second-level entry bits ---- */
#define IK_VTD_SL_R ((ik_u64)1 << 0)
#define IK_VTD_SL_W ((ik_u64)1 << 1)
#define IK_VTD_SL_X ((ik_u64)1 << 2)
#define IK_VTD_SL_PS ((ik_u64)1 << 7)
#define IK_VTD_SL_A ((ik_u64)1 << 8)
#define IK_VTD_SL_D ((ik_u64)1 << 9)
#define IK_VTD_SL_SNP ((ik_u64)1 << 11)
/* Address field at its widest (HAW = 52); bits >= HAW are reserved. */
#define IK_VTD_ADDR_MASK ((((ik_u64)1 << 52) - 1) & ~(ik_u64)0xfff)
/* Ignored bits software may use: 10, 61:52, 63. */
#define IK_VTD_SL_SW_MASK (((ik_u64)1 << 10) | ((ik_u64)0x3ff << 52) | ((ik_u64)1 << 63))
#define IK_VTD_SL_RSVD62 ((ik_u64)1 << 62)

/* ---- first-level entry bits ---- */
#define IK_VTD_FL_P ((ik_u64)1 << 0)
#define IK_VTD_FL_RW ((ik_u64)1 << 1)
#define IK_VTD_FL_US ((ik_u64)1 << 2)
#define IK_VTD_FL_PWT ((ik_u64)1 << 3)
#define IK_VTD_FL_PCD ((ik_u64)1 << 4)
#define IK_VTD_FL_A ((ik_u64)1 << 5)
#define IK_VTD_FL_D ((ik_u64)1 << 6)
#define IK_VTD_FL_PS ((ik_u64)1 << 7)
#define IK_VTD_FL_PAT_4K ((ik_u64)1 << 7)
#define IK_VTD_FL_G ((ik_u64)1 << 8)
#define IK_VTD_FL_PAT_LARGE ((ik_u64)1 << 12)
#define IK_VTD_FL_XD ((ik_u64)1 << 63)
/* Ignored bits software may use: 11:9, 62:52. */
#define IK_VTD_FL_SW_MASK (((ik_u64)0x7 << 9) | ((ik_u64)0x7ff << 52))

/* ---- capability registers ----
 * Every CAP_REG and ECAP_REG field, at the positions of the VT-d
 * specification's "Register descriptions" (revision 3 and later; reserved
 * and deprecated bits omitted).  Multi-bit fields are macros of the register
 * value returning the field; single bits are masks.  The driver core
 * (<iommukit/drv/vtd.h>, ik_vtd_hwcaps_decode()) decodes them all into named
 * fields. */
/* CAP_REG (offset 0x08) */
#define IK_VTD_CAP_ND(cap) ((unsigned)((cap) & 0x7))	/* 2:0: 2^(4 + 2 ND) domains */
#define IK_VTD_CAP_AFL ((ik_u64)1 << 3)			/* advanced fault logging */
#define IK_VTD_CAP_RWBF ((ik_u64)1 << 4)		/* write-buffer flush required */
#define IK_VTD_CAP_PLMR ((ik_u64)1 << 5)		/* protected low-memory region */
#define IK_VTD_CAP_PHMR ((ik_u64)1 << 6)		/* protected high-memory region */
#define IK_VTD_CAP_CM ((ik_u64)1 << 7)			/* caching mode */
#define IK_VTD_CAP_SAGAW(cap) ((unsigned)(((cap) >> 8) & 0x1f))
#define IK_VTD_CAP_MGAW(cap) ((unsigned)(((cap) >> 16) & 0x3f) + 1)
#define IK_VTD_CAP_ZLR ((ik_u64)1 << 22)		/* zero-length read */
/* 33:24 FRO: offset of the first fault-recording register, in 16-byte
 * units; this macro gives bytes. */
#define IK_VTD_CAP_FRO(cap) ((ik_u32)(((cap) >> 24) & 0x3ff) * 16u)
#define IK_VTD_CAP_SLLPS(cap) ((unsigned)(((cap) >> 34) & 0xf))
#define IK_VTD_CAP_PSI ((ik_u64)1 << 39)		/* page-selective invalidation */
/* 47:40 NFR: number of fault-recording registers - 1; this macro gives the
 * number. */
#define IK_VTD_CAP_NFR(cap) ((unsigned)(((cap) >> 40) & 0xff) + 1)
#define IK_VTD_CAP_MAMV(cap) ((unsigned)(((cap) >> 48) & 0x3f)) /* max address mask */
#define IK_VTD_CAP_DWD ((ik_u64)1 << 54)		/* write draining */
#define IK_VTD_CAP_DRD ((ik_u64)1 << 55)		/* read draining */
#define IK_VTD_CAP_FL1GP ((ik_u64)1 << 56)
#define IK_VTD_CAP_PI ((ik_u64)1 << 59)			/* posted interrupts */
#define IK_VTD_CAP_FL5LP ((ik_u64)1 << 60)
#define IK_VTD_CAP_ECMDS ((ik_u64)1 << 61)		/* enhanced command */
#define IK_VTD_CAP_ESIRTPS ((ik_u64)1 << 62)		/* enhanced SIRTP */
#define IK_VTD_CAP_ESRTPS ((ik_u64)1 << 63)		/* enhanced SRTP */
#define IK_VTD_SLLPS_2M 0x1u
#define IK_VTD_SLLPS_1G 0x2u
/* ECAP_REG (offset 0x10) */
#define IK_VTD_ECAP_C ((ik_u64)1 << 0)			/* page-walk coherency */
#define IK_VTD_ECAP_QI ((ik_u64)1 << 1)			/* queued invalidation */
#define IK_VTD_ECAP_DT ((ik_u64)1 << 2)			/* device-TLB */
#define IK_VTD_ECAP_IR ((ik_u64)1 << 3)			/* interrupt remapping */
#define IK_VTD_ECAP_EIM ((ik_u64)1 << 4)		/* extended interrupt mode */
#define IK_VTD_ECAP_PT ((ik_u64)1 << 6)			/* pass-through */
#define IK_VTD_ECAP_SC ((ik_u64)1 << 7)			/* snoop control */
/* 17:8 IRO: offset of the IOTLB registers, in 16-byte units; bytes here. */
#define IK_VTD_ECAP_IRO(ecap) ((ik_u32)(((ecap) >> 8) & 0x3ff) * 16u)
#define IK_VTD_ECAP_MHMV(ecap) ((unsigned)(((ecap) >> 20) & 0xf)) /* max handle mask */
#define IK_VTD_ECAP_MTS ((ik_u64)1 << 25)		/* memory-type support */
#define IK_VTD_ECAP_NEST ((ik_u64)1 << 26)		/* nested translation */
#define IK_VTD_ECAP_PRS ((ik_u64)1 << 29)		/* page requests */
#define IK_VTD_ECAP_ERS ((ik_u64)1 << 30)		/* execute requests */
#define IK_VTD_ECAP_SRS ((ik_u64)1 << 31)		/* supervisor requests */
#define IK_VTD_ECAP_NWFS ((ik_u64)1 << 33)		/* no-write flag */
#define IK_VTD_ECAP_EAFS ((ik_u64)1 << 34)		/* extended accessed flag */
/* 39:35 PSS: PASID size supported - 1 (PSS + 1 PASID bits). */
#define IK_VTD_ECAP_PSS(ecap) ((unsigned)(((ecap) >> 35) & 0x1f))
#define IK_VTD_ECAP_PASID ((ik_u64)1 << 40)		/* PASID support */
#define IK_VTD_ECAP_DIT ((ik_u64)1 << 41)		/* device-TLB invalidation throttle */
#define IK_VTD_ECAP_PDS ((ik_u64)1 << 42)		/* page-request drain */
#define IK_VTD_ECAP_SMTS ((ik_u64)1 << 43)
#define IK_VTD_ECAP_VCS ((ik_u64)1 << 44)		/* virtual command */
#define IK_VTD_ECAP_SLADS ((ik_u64)1 << 45)
#define IK_VTD_ECAP_SLTS ((ik_u64)1 << 46)
#define IK_VTD_ECAP_FLTS ((ik_u64)1 << 47)
#define IK_VTD_ECAP_SMPWC ((ik_u64)1 << 48)
#define IK_VTD_ECAP_RPS ((ik_u64)1 << 49)		/* RID_PASID support */
#define IK_VTD_ECAP_PMS ((ik_u64)1 << 51)		/* performance monitoring */
#define IK_VTD_ECAP_ADMS ((ik_u64)1 << 52)		/* abort DMA mode */
#define IK_VTD_ECAP_RPRIVS ((ik_u64)1 << 53)		/* RID_PRIV support */

/* ---- context and PASID entries (what ik_vtd_get_regs() fills) ---- */
/* Context entry (legacy mode, 128 bits). */
#define IK_VTD_CTX_P ((ik_u64)1 << 0)
#define IK_VTD_CTX_FPD ((ik_u64)1 << 1) /* lo 1: fault processing disable */
#define IK_VTD_CTX_TT_SHIFT 2	/* lo 3:2: 0 = untranslated only, 1 = + device-TLB */
#define IK_VTD_CTX_TT_UNTRANSLATED 0u /* second-level translation of untranslated requests */
#define IK_VTD_CTX_TT_DEVTLB 1u	      /* ... and translation/translated requests (ATS) */
#define IK_VTD_CTX_TT_PASSTHROUGH 2u  /* untranslated requests pass through (ECAP.PT) */
#define IK_VTD_CTX_AW_SHIFT 0	/* hi 2:0 */
#define IK_VTD_CTX_DID_SHIFT 8	/* hi 23:8 */
/* Scalable-mode PASID entry (512 bits); word 0. */
#define IK_VTD_PE_P ((ik_u64)1 << 0)
#define IK_VTD_PE_FPD ((ik_u64)1 << 1) /* fault processing disable */
#define IK_VTD_PE_AW_SHIFT 2	/* 4:2 */
#define IK_VTD_PE_PGTT_SHIFT 6	/* 8:6: 1 FL only, 2 SL only, 3 nested, 4 pass-through */
#define IK_VTD_PE_SLADE ((ik_u64)1 << 9)
#define IK_VTD_PGTT_FL 1u
#define IK_VTD_PGTT_SL 2u
#define IK_VTD_PGTT_NESTED 3u
#define IK_VTD_PGTT_PT 4u	/* pass-through (ECAP.PT) */
/* word 1 */
#define IK_VTD_PE_PWSNP ((ik_u64)1 << 23)
#define IK_VTD_PE_PGSNP ((ik_u64)1 << 24)
/* word 2 */
#define IK_VTD_PE_SRE ((ik_u64)1 << 0)
#define IK_VTD_PE_FLPM_SHIFT 2	/* 3:2: 0 = 4-level, 1 = 5-level */
#define IK_VTD_PE_NXE ((ik_u64)1 << 5)

/* AW field value for a second-level table of `levels` levels (3, 4, 5). */
#define IK_VTD_AW_FROM_LEVELS(levels) ((unsigned)(levels) - 2)

/*
 * struct ik_vtd_caps - what a driver read from the remapping unit.
 *   cap, ecap   the CAP_REG and ECAP_REG values;
 *   haw         host address width (the DMAR table's), 32..52;
 *   scalable    the unit runs in scalable mode (RTADDR_REG.TTM = 01b): tables
 *               are reached through PASID entries, page-walk coherency is
 *               ECAP.SMPWC (with PWSNP) instead of ECAP.C, and first-level
 *               tables and second-level A/D are available.
 */
struct ik_vtd_caps {
	ik_u64 cap;
	ik_u64 ecap;
	ik_u32 haw;
	bool scalable;
};

/*
 * ik_vtd_cfg_init - fill the format part of a page-table config from the
 * unit's registers: fmt, ias, oas = haw, pgsize_bitmap (4K | 2M | 1G as the
 * unit supports them: SLLPS, or 2M always and FL1GP for first-level),
 * coherent (ECAP.C, or ECAP.SMPWC in scalable mode), fmt_flags (SP_2M, SP_1G,
 * SC from ECAP.SC) and quirks.  Other fields (hooks, cookie, allocator) are
 * zeroed: the caller sets them.
 *   fmt     IK_PT_VTD_SL or IK_PT_VTD_FL;
 *   ias     input width: SL 32..57 (3 levels up to 39, 4 up to 48, else 5);
 *           FL 32..56 (4 levels up to 47, else 5);
 *   quirks  IK_PT_QUIRK_DIRTY (needs scalable mode and, for second-level,
 *           ECAP.SLADS) and/or IK_PT_QUIRK_DEFER_LEAF_CLEAN.
 * Errors: -EINVAL for a NULL cfg or caps, a bad fmt, ias, haw or quirk, or
 * an ias above CAP.MGAW; -EOPNOTSUPP if the unit lacks what is asked: the
 * level count in CAP.SAGAW (SL), first-level translation (scalable mode,
 * ECAP.FLTS, and CAP.FL5LP for 5 levels), second-level translation in
 * scalable mode (ECAP.SLTS), dirty tracking.  *cfg is untouched on error.
 * O(1).
 */
IK_API int ik_vtd_cfg_init(struct ik_pgtable_cfg *cfg, enum ik_pt_fmt fmt,
			   const struct ik_vtd_caps *caps, ik_u32 ias, ik_u32 quirks);

/*
 * struct ik_vtd_regs - the values a driver programs for a VT-d table set.
 *   ptptr       the root table's IOMMU address (SLPTPTR or FLPTPTR);
 *   aw          the AW field: levels - 2 (1 = 39-bit, 2 = 48, 3 = 57);
 *   flpm        first-level paging mode (0 = 4-level, 1 = 5-level); 0 for SL;
 *   context     legacy-mode context entry (second-level only, else zero):
 *               lo = P | TT 00b (untranslated requests through the
 *               second-level tables) | SLPTPTR, hi = AW | DID << 8;
 *   pasid       scalable-mode PASID entry: word 0 = P | AW << 2 |
 *               PGTT << 6 (2 = second-level only, 1 = first-level only) |
 *               SLADE (second-level with IK_PT_QUIRK_DIRTY) | SLPTPTR (SL);
 *               word 1 = DID | PWSNP (when the config is coherent: the walk
 *               snoops); word 2 (FL) = FLPTPTR | FLPM << 2 | NXE (XD is
 *               honoured); other words zero.
 */
struct ik_vtd_regs {
	ik_u64 ptptr;
	ik_u32 aw;
	ik_u32 flpm;
	ik_u64 context[2];
	ik_u64 pasid[8];
};

/*
 * ik_vtd_get_regs - fill *r for a VT-d table set, with domain id `did`.
 * -EINVAL if `pt` is not a VT-d table set or pt or r is NULL.  O(1); reads
 * only the immutable geometry and root, so it may run concurrently with
 * anything but destroy.
 */
IK_API int ik_vtd_get_regs(const struct ik_pgtable *pt, ik_u16 did, struct ik_vtd_regs *r);

/*
 * ik_vtd_walker_from_context / ik_vtd_walker_from_pasid - the walker the
 * remapping unit would use for a legacy-mode context entry (ctx[0] = low
 * word, ctx[1] = high word) or a scalable-mode PASID entry (pe[0..2] used),
 * as an emulator receives them from a guest.  `fmt_flags` (IK_VTD_FLAG_*)
 * and `haw` describe the emulated unit.  A PASID entry's SLADE selects the
 * second-level A/D model (IK_PT_QUIRK_DIRTY).  -EINVAL for a NULL w, ctx or
 * pe, a non-present entry, a translation type other than second-level
 * (context: TT 00b or 01b) or first-/second-level only (PASID: PGTT 1 or 2),
 * a reserved AW or FLPM.  O(1).
 */
IK_API int ik_vtd_walker_from_context(struct ik_pt_walker *w, const ik_u64 ctx[2],
				      ik_u64 fmt_flags, ik_u32 haw);
IK_API int ik_vtd_walker_from_pasid(struct ik_pt_walker *w, const ik_u64 pe[8],
				    ik_u64 fmt_flags, ik_u32 haw);

IK_END_DECLS

#endif /* IOMMUKIT_FMT_VTD_H */
