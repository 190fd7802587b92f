/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/drv/riscv.h - the RISC-V IOMMU driver core: what lies between
 * iommukit's RISC-V page tables (<iommukit/fmt/riscv.h>) and command
 * encoders (<iommukit/cmd/riscv.h>) and a real or emulated RISC-V IOMMU
 * (The RISC-V IOMMU Architecture Specification v1.0).
 *
 * What it is for.  A firmware, a kernel port or a VMM driving a RISC-V IOMMU
 * needs, beyond page tables and commands: the capabilities decoded; device
 * contexts built from table sets and decoded from memory someone else
 * wrote; the device directory (1, 2 or 3 levels) updated in an order the
 * IOMMU never sees half-written; process directories for first-stage
 * tables per PID; and the invalidations an unmap or a context change needs,
 * no more and no fewer.  This unit provides them.  It allocates
 * IOMMU-visible memory only through struct ik_dma_mem (<iommukit/drv/io.h>),
 * bookkeeping only through an ik_allocator, and is freestanding.
 *
 * Sections (each usable alone):
 *   capabilities   ik_riscv_caps_decode: the capabilities register;
 *   device contexts  ik_riscv_dc_build / ik_riscv_dc_decode: pure;
 *   directories    struct ik_riscv_ddt (device directory, DID -> device
 *                  context) and struct ik_riscv_pdt (process directory,
 *                  PID -> process context): tables in DMA memory,
 *                  allocated on first use, with their register / fsc value;
 *   planner        ik_riscv_plan_unmap / _range / _change: pure functions
 *                  from a gather or a change to commands;
 *                  ik_riscv_plan_issue() runs a plan on an ik_cmdq;
 *   registers      struct ik_riscv (ik_riscv_create()): capabilities and
 *                  fctl, ddtp with its busy handshake, the command queue
 *                  (an ik_cmdq whose register hooks handle cmd_ill,
 *                  cmd_to and cqmf and restart it), the fault queue
 *                  (overflow, records through ik_riscv_fault_decode()),
 *                  the page-request queue where capabilities.ATS says
 *                  there is one.  Interrupt vectors (icvec, the MSI
 *                  configuration table) are left to the caller.
 *
 * Glossary (the specification's words)
 *   DID         device ID, up to 24 bits: indexes the device directory.
 *   PID         process ID, up to 20 bits: indexes a process directory.
 *   PSCID       process soft-context ID (20 bits): the tag of first-stage
 *               translations (device context ta.PSCID, or a process
 *               context's).  IOTINVAL.VMA with PSCV names it.
 *   GSCID       guest soft-context ID (16 bits, iohgatp bits 59:44): the tag
 *               of G-stage translations and of the first-stage translations
 *               made under that G-stage.  IOTINVAL with GV names it.
 *   AV          IOTINVAL's "address valid".  The specification's IOTINVAL
 *               tables: with AV = 1 the IOMMU invalidates the cached entries
 *               holding *leaf* PTEs for ADDR; cached non-leaf entries (a
 *               walk cache) may stay.  Only AV = 0 drops them.  So after an
 *               unmap that freed a table page (or cleared a non-leaf entry)
 *               only AV = 0 keeps a cached non-leaf entry from pointing into
 *               the freed page.
 *
 * Device context layout (spec section "Device-context fields"; 64-bit
 * words, dc[k] = bytes 8k..8k+7; the base format is words 0..3, the extended
 * format (capabilities.MSI_FLAT) words 0..7):
 *
 *   dc[0] tc       0 V  1 EN_ATS  2 EN_PRI  3 T2GPA  4 DTF  5 PDTV  6 PRPR
 *                  7 GADE  8 SADE  9 DPE  10 SBE  11 SXL  63:12 reserved
 *   dc[1] iohgatp  63:60 MODE (0 Bare, 8 Sv39x4, 9 Sv48x4, 10 Sv57x4)
 *                  59:44 GSCID  43:0 PPN (16 KiB aligned root)
 *   dc[2] ta       31:12 PSCID  11:0, 63:32 reserved
 *   dc[3] fsc      PDTV = 0: iosatp, 63:60 MODE (0 Bare, 8 Sv39, 9 Sv48,
 *                  10 Sv57) 43:0 PPN; PDTV = 1: pdtp, 63:60 MODE (0 Bare,
 *                  1 PD8, 2 PD17, 3 PD20) 43:0 PPN; 59:44 reserved
 *   dc[4] msiptp   63:60 MODE (0 Off, 1 Flat) 43:0 PPN, 59:44 reserved
 *   dc[5] msi_addr_mask, dc[6] msi_addr_pattern   51:0, 63:52 reserved
 *   dc[7] reserved
 *
 * Directories: a non-leaf entry is V [0] | PPN [53:10] of the next table.
 * Device directory index (DDI) bits by format:
 *   base (32-byte contexts, 128 a page)      DDI[0] = DID[6:0]
 *                                            DDI[1] = DID[15:7]
 *                                            DDI[2] = DID[23:16]
 *   extended (64-byte contexts, 64 a page)   DDI[0] = DID[5:0]
 *                                            DDI[1] = DID[14:6]
 *                                            DDI[2] = DID[23:15]
 * ddtp MODE 2, 3, 4 = 1, 2, 3 levels: DIDs up to 7, 16, 24 bits (base) or
 * 6, 15, 24 (extended).  Process directory: PDI[0] = PID[7:0] (256
 * 16-byte process contexts a page), PDI[1] = PID[16:8], PDI[2] =
 * PID[19:17]; PD8, PD17, PD20 = 1, 2, 3 levels.  Process context: ta (0 V,
 * 1 ENS, 2 SUM, 31:12 PSCID; 11:3 and 63:32 reserved), fsc (iosatp).
 *
 * Synchronization
 *   call                                   may run concurrently with
 *   -------------------------------------  ----------------------------------
 *   ik_riscv_caps_decode, dc_build,        anything (pure)
 *   dc_decode, ik_riscv_plan_* (not
 *   _issue)
 *   ik_riscv_ddt_write / _read             nothing else on the same directory
 *   ik_riscv_pdt_set / _clear / _read      (the caller serialises); the
 *                                          IOMMU reads it all along
 *   ik_riscv_plan_issue                    anything (the queue is lock-free)
 *   ik_riscv_fault_pop, _page_req_pop      nothing else popping the same
 *                                          queue
 *   ik_riscv_enable, _disable, _set_ddtp   nothing else on the object
 *   *_init / *_fini, create / destroy      nothing else on the object
 * Callbacks: the issue function of ik_riscv_ddt_write() is called from the
 * writing thread, with no iommukit lock held.
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_DRV_RISCV_H
#define IOMMUKIT_DRV_RISCV_H

#include <iommukit/env.h>
#include <iommukit/lock.h>
#include <iommukit/drv/io.h>
#include <iommukit/cmd/riscv.h>
#include <iommukit/fmt/riscv.h>
#include <iommukit/cmdq.h>
#include <iommukit/pgtable.h>

IK_BEGIN_DECLS

/* Tag and ID widths. */
#define IK_RISCV_MAX_PSCID 0xfffffu	/* 20 bits */
#define IK_RISCV_MAX_GSCID 0xffffu	/* 16 bits */
#define IK_RISCV_MAX_DID 0xffffffu	/* 24 bits */
#define IK_RISCV_MAX_PID 0xfffffu	/* 20 bits */

/* ================================================================ capabilities */

/* capabilities register bits (offset 0, 64 bits). */
#define IK_RISCV_CAP_VERSION_MASK 0xffull	/* [7:0] version (0x10: v1.0) */
#define IK_RISCV_CAP_SV32 ((ik_u64)1 << 8)	/* first stage Sv32 */
#define IK_RISCV_CAP_SV39 ((ik_u64)1 << 9)	/* first stage Sv39 */
#define IK_RISCV_CAP_SV48 ((ik_u64)1 << 10)	/* first stage Sv48 */
#define IK_RISCV_CAP_SV57 ((ik_u64)1 << 11)	/* first stage Sv57 */
#define IK_RISCV_CAP_SVPBMT ((ik_u64)1 << 15)	/* page-based memory types */
#define IK_RISCV_CAP_SV32X4 ((ik_u64)1 << 16)	/* G-stage Sv32x4 */
#define IK_RISCV_CAP_SV39X4 ((ik_u64)1 << 17)	/* G-stage Sv39x4 */
#define IK_RISCV_CAP_SV48X4 ((ik_u64)1 << 18)	/* G-stage Sv48x4 */
#define IK_RISCV_CAP_SV57X4 ((ik_u64)1 << 19)	/* G-stage Sv57x4 */
#define IK_RISCV_CAP_AMO_MRIF ((ik_u64)1 << 21)	/* atomic updates of MRIFs */
#define IK_RISCV_CAP_MSI_FLAT ((ik_u64)1 << 22)	/* MSI page tables (extended contexts) */
#define IK_RISCV_CAP_MSI_MRIF ((ik_u64)1 << 23)	/* MSI MRIF mode */
#define IK_RISCV_CAP_AMO_HWAD ((ik_u64)1 << 24)	/* hardware A/D updates (SADE, GADE) */
#define IK_RISCV_CAP_ATS ((ik_u64)1 << 25)	/* PCIe ATS and PRI */
#define IK_RISCV_CAP_T2GPA ((ik_u64)1 << 26)	/* ATS returns guest-physical addresses */
#define IK_RISCV_CAP_END ((ik_u64)1 << 27)	/* big-endian data structures (SBE) */
#define IK_RISCV_CAP_IGS_SHIFT 28	/* [29:28] 0 MSI, 1 WSI, 2 both */
#define IK_RISCV_CAP_HPM ((ik_u64)1 << 30)	/* performance monitor */
#define IK_RISCV_CAP_DBG ((ik_u64)1 << 31)	/* translation-request debug interface */
#define IK_RISCV_CAP_PAS_SHIFT 32	/* [37:32] physical address bits */
#define IK_RISCV_CAP_PD8 ((ik_u64)1 << 38)	/* one-level process directory */
#define IK_RISCV_CAP_PD17 ((ik_u64)1 << 39)	/* two-level process directory */
#define IK_RISCV_CAP_PD20 ((ik_u64)1 << 40)	/* three-level process directory */

/*
 * struct ik_riscv_caps - the capabilities register decoded.  raw is the
 * register as read (bits this release does not name, e.g. later
 * extensions and the custom bits 63:56, are kept there).
 */
struct ik_riscv_caps {
	ik_u64 raw;	/* the register */
	ik_u8 version;	/* [7:0]: major << 4 | minor */
	ik_u8 igs;	/* interrupt generation: 0 MSI, 1 WSI, 2 both */
	ik_u8 pas;	/* physical address bits */
	bool sv39, sv48, sv57;	/* first-stage modes */
	bool sv39x4, sv48x4, sv57x4;	/* G-stage modes */
	bool svpbmt, amo_mrif, msi_flat, msi_mrif, amo_hwad, ats, t2gpa, end, hpm, dbg;	/* the bits of those names */
	bool pd8, pd17, pd20;	/* process directory levels */
};

/*
 * ik_riscv_caps_decode - decode the capabilities register value `reg`.
 * -EINVAL (*out untouched): NULL out, IGS 3 (reserved), a PAS below 32 or
 * above 56 (iommukit's table memory and page-table output range), or
 * version other than 1.x.  Pure, O(1).
 */
IK_API int ik_riscv_caps_decode(ik_u64 reg, struct ik_riscv_caps *out);

/* ================================================================ device contexts */

/* Device context word 0 (tc). */
#define IK_RISCV_TC_V ((ik_u64)1 << 0)	/* valid */
#define IK_RISCV_TC_EN_ATS ((ik_u64)1 << 1)	/* ATS translation requests allowed */
#define IK_RISCV_TC_EN_PRI ((ik_u64)1 << 2)	/* page requests allowed */
#define IK_RISCV_TC_T2GPA ((ik_u64)1 << 3)	/* ATS returns guest-physical addresses */
#define IK_RISCV_TC_DTF ((ik_u64)1 << 4)	/* disable translation-fault reporting */
#define IK_RISCV_TC_PDTV ((ik_u64)1 << 5)	/* fsc holds a process directory pointer */
#define IK_RISCV_TC_PRPR ((ik_u64)1 << 6)	/* page-request responses carry the PASID */
#define IK_RISCV_TC_GADE ((ik_u64)1 << 7)	/* G-stage A/D updates by the IOMMU */
#define IK_RISCV_TC_SADE ((ik_u64)1 << 8)	/* first-stage A/D updates by the IOMMU */
#define IK_RISCV_TC_DPE ((ik_u64)1 << 9)	/* requests without PID use PID 0 */
#define IK_RISCV_TC_SBE ((ik_u64)1 << 10)	/* big-endian first-stage tables */
#define IK_RISCV_TC_SXL ((ik_u64)1 << 11)	/* 32-bit first stage (Sv32) */
#define IK_RISCV_TC_RSVD 0xfffffffffffff000ull	/* [63:12] */
/* Device context word 2 (ta). */
#define IK_RISCV_TA_PSCID_SHIFT 12	/* [31:12] PSCID */
#define IK_RISCV_DC_TA_RSVD 0xffffffff00000fffull	/* [11:0], [63:32] */
/* Words 3 (fsc) and 4 (msiptp): MODE [63:60], PPN [43:0], [59:44] reserved. */
#define IK_RISCV_PTR_RSVD 0x0ffff00000000000ull	/* [59:44] */
#define IK_RISCV_PDTP_MODE_PD8 1u	/* fsc MODE with PDTV: one-level process directory */
#define IK_RISCV_PDTP_MODE_PD17 2u	/* two levels */
#define IK_RISCV_PDTP_MODE_PD20 3u	/* three levels */
#define IK_RISCV_MSIPTP_MODE_FLAT 1u	/* msiptp MODE: flat MSI page table */
#define IK_RISCV_MSI_ADDR_MASK 0x000fffffffffffffull	/* words 5, 6: [51:0] */

/* ik_riscv_dc_config.flags: the tc bits of the same names. */
#define IK_RISCV_DC_EN_ATS 0x1u	/* EN_ATS (capabilities.ATS) */
#define IK_RISCV_DC_EN_PRI 0x2u	/* EN_PRI (needs EN_ATS) */
#define IK_RISCV_DC_T2GPA 0x4u	/* T2GPA (capabilities.T2GPA, EN_ATS, a G-stage) */
#define IK_RISCV_DC_DTF 0x8u	/* DTF: no fault records for translation faults */
#define IK_RISCV_DC_PRPR 0x10u	/* PRPR (needs EN_PRI) */
#define IK_RISCV_DC_DPE 0x20u	/* DPE (needs a process directory) */
#define IK_RISCV_DC_FLAGS_ALL 0x3fu	/* every IK_RISCV_DC_* flag */

struct ik_riscv_pdt;

/*
 * struct ik_riscv_dc_config - what a device context says.  Zero-initialise,
 * then set:
 *   s1       a first-stage (IK_PT_RISCV_S1) table set: fsc = its iosatp,
 *            PDTV = 0, SADE = 1 when it has IK_PT_QUIRK_DIRTY (the IOMMU
 *            then sets A and D: needs capabilities.AMO_HWAD); NULL: no
 *            first stage from here;
 *   pdt      a process directory (ik_riscv_pdt_init()): fsc = its pdtp,
 *            PDTV = 1 (not with s1); DPE allowed;
 *   s2       a G-stage (IK_PT_RISCV_S2) table set: iohgatp = its atp with
 *            gscid; GADE = 1 with IK_PT_QUIRK_DIRTY; NULL: iohgatp Bare;
 *   gscid    the G-stage's GSCID (16 bits; 0 without s2);
 *   pscid    ta.PSCID of s1's translations (20 bits; 0 without s1: a
 *            process directory's contexts carry their own);
 *   flags    IK_RISCV_DC_*;
 *   extended the 64-byte format (capabilities.MSI_FLAT): msiptp,
 *            msi_addr_mask and msi_addr_pattern are written as given
 *            (iommukit builds no MSI page table) and checked; base format:
 *            they must be 0.
 * The context always has V = 1, SBE = SXL = 0 (little-endian, 64-bit).
 */
struct ik_riscv_dc_config {
	const struct ik_pgtable *s1;	/* first stage, or NULL */
	const struct ik_riscv_pdt *pdt;	/* process directory, or NULL */
	const struct ik_pgtable *s2;	/* G-stage, or NULL: Bare */
	ik_u32 gscid;	/* iohgatp.GSCID */
	ik_u32 pscid;	/* ta.PSCID */
	ik_u32 flags;	/* IK_RISCV_DC_* */
	bool extended;	/* 64-byte format */
	ik_u64 msiptp;	/* extended: MODE Off or Flat, PPN */
	ik_u64 msi_addr_mask;	/* extended: [51:0] */
	ik_u64 msi_addr_pattern;	/* extended: [51:0] */
};

/*
 * ik_riscv_dc_build - encode the device context `c` describes into dc[0..3]
 * (base) or dc[0..7] (extended), for an IOMMU with capabilities `caps`.
 * -EINVAL (dc untouched): NULL caps, c or dc; s1 not riscv-s1 or s2 not
 * riscv-s2 (a table set of another format), a root beyond 2^56, s1 with
 * IK_RISCV_FLAG_SUM (a device context has no SUM: use a process context);
 * both s1 and pdt; a mode the capabilities lack (Sv39/48/57, Sv39x4/48x4/
 * 57x4, PD8/17/20); SADE or GADE without AMO_HWAD; EN_ATS without ATS,
 * EN_PRI or T2GPA without EN_ATS, T2GPA without capabilities.T2GPA or
 * without s2, PRPR without EN_PRI, DPE without pdt; an unknown flag; a GSCID
 * or PSCID too wide, a GSCID without s2, a PSCID without s1; extended
 * without capabilities.MSI_FLAT; MSI fields in the base format, or with
 * reserved bits, a reserved msiptp MODE.  Pure, O(1).
 */
IK_API int ik_riscv_dc_build(const struct ik_riscv_caps *caps, const struct ik_riscv_dc_config *c,
			     ik_u64 *dc);

/*
 * struct ik_riscv_dc - a device context decoded: tc as its bits, the
 * pointer fields' MODE and root address (PPN << 12), the tags.
 */
struct ik_riscv_dc {
	ik_u64 tc;	/* the tc word (IK_RISCV_TC_*) */
	bool v, pdtv;	/* tc.V, tc.PDTV */
	ik_u8 iohgatp_mode;	/* 0 Bare, 8..10 */
	ik_u16 gscid;	/* iohgatp.GSCID */
	ik_u64 iohgatp_root;	/* the G-stage root */
	ik_u32 pscid;	/* ta.PSCID */
	ik_u8 fsc_mode;	/* iosatp MODE (0, 8..10) or, with PDTV, pdtp MODE (0..3) */
	ik_u64 fsc_root;	/* the first-stage root or the process directory */
	ik_u8 msiptp_mode;	/* extended: 0 Off, 1 Flat */
	ik_u64 msiptp_root;	/* extended: the MSI page table */
	ik_u64 msi_addr_mask, msi_addr_pattern;	/* extended */
};

/*
 * ik_riscv_dc_decode - decode dc[0..3] (base) or dc[0..7] (extended) -
 * memory anyone may have written: a guest's, in a VMM - into *out, and
 * check it as the IOMMU does before it uses a valid context ("DDT entry
 * misconfigured"): -EINVAL, *out untouched, for a NULL dc or out, a
 * reserved bit set, a reserved MODE in iohgatp, fsc or msiptp, a Bare
 * iohgatp with a GSCID or PPN, a G-stage root not 16 KiB aligned, EN_PRI or T2GPA without EN_ATS, PRPR without
 * EN_PRI, T2GPA with iohgatp Bare, DPE without PDTV, SXL or SBE set (not
 * supported by iommukit's tables), and, with caps not NULL, what the
 * capabilities lack (modes, ATS, T2GPA, AMO_HWAD for SADE/GADE, MSI_FLAT
 * for an extended context with msiptp Flat).  A context with V = 0 decodes
 * (v = false) whatever its other words hold, as the IOMMU ignores them.
 * Pure, O(1).
 */
IK_API int ik_riscv_dc_decode(const struct ik_riscv_caps *caps, const ik_u64 *dc, bool extended,
			      struct ik_riscv_dc *out);

/* ================================================================ planner */

#define IK_RISCV_PLAN_MAX 16	/* the most commands one ik_riscv_plan holds */

/*
 * struct ik_riscv_plan - what an update needs: n decoded commands to issue
 * in order, then (sync) an IOFENCE.C that the issuer waits for -
 * ik_cmdq_issue(..., IK_CMDQ_SYNC) on a queue of ik_cmdq_fmt_riscv appends
 * it (AV = 1: a 32-bit store to the queue's completion word); a driver with
 * a ring of its own writes one.  ik_riscv_plan_issue() does all of it.
 */
struct ik_riscv_plan {
	unsigned n;	/* commands to issue, in c[0..n) */
	bool sync;	/* then an IOFENCE.C, and wait for it */
	struct ik_riscv_cmd c[IK_RISCV_PLAN_MAX];	/* the decoded commands */
};

/* ik_riscv_target.flags */
#define IK_RISCV_TARGET_GV 0x1u	/* riscv-s1 under a G-stage: .VMA with GV = 1, GSCID */
#define IK_RISCV_TARGET_FLAGS_ALL 0x1u	/* every IK_RISCV_TARGET_* flag */

/*
 * struct ik_riscv_target - whose translations an unmap touched:
 *   pt       the table set: IK_PT_RISCV_S1 (a first-stage table: the
 *            commands are IOTINVAL.VMA with PSCV = 1 and its PSCID) or
 *            IK_PT_RISCV_S2 (a G-stage table: IOTINVAL.GVMA with GV = 1
 *            and its GSCID);
 *   pscid    riscv-s1: the PSCID of the contexts that use it (20 bits);
 *            riscv-s2: 0;
 *   gscid    riscv-s2: the GSCID (iohgatp) of the device contexts that use
 *            it; riscv-s1 with IK_RISCV_TARGET_GV: the GSCID of the
 *            G-stage it sits under (16 bits); otherwise 0;
 *   flags    IK_RISCV_TARGET_*;
 *   max_av   use AV = 0 (the whole PSCID / GSCID) when the range needs
 *            more than this many AV = 1 commands, one per gather granule
 *            (0: IK_RISCV_PLAN_MAX; at most IK_RISCV_PLAN_MAX).
 */
struct ik_riscv_target {
	const struct ik_pgtable *pt;	/* the table set whose entries changed */
	ik_u32 pscid;	/* riscv-s1: PSCID */
	ik_u32 gscid;	/* riscv-s2, or riscv-s1 with IK_RISCV_TARGET_GV: GSCID */
	ik_u32 flags;	/* IK_RISCV_TARGET_* */
	ik_u32 max_av;	/* AV = 1 commands at most (0: IK_RISCV_PLAN_MAX) */
};

/*
 * ik_riscv_plan_unmap - the invalidations an unmap needs, from its gather
 * (before ik_pgtable_gather_sync() frees the tables):
 *
 *   gather                              commands
 *   ----------------------------------  ---------------------------------------------
 *   empty                               none (sync = false)
 *   g->walk (a table freed or a         IOTINVAL AV = 0 of the PSCID / GSCID: a
 *     non-leaf entry cleared)             cached non-leaf entry could still
 *                                         point into the freed table, and
 *                                         AV = 1 drops leaf entries only
 *   [start, end) in at most max_av      IOTINVAL AV = 1, ADDR = start + k *
 *     granule steps                       granule, one per step (each drops
 *                                         the leaf holding ADDR, whatever its
 *                                         size)
 *   more steps                          IOTINVAL AV = 0 of the PSCID / GSCID
 *   any non-empty gather                then the IOFENCE.C (sync = true)
 *
 * IOTINVAL is .VMA (PSCV = 1, PSCID; GV = 1 and GSCID with
 * IK_RISCV_TARGET_GV) for riscv-s1 and .GVMA (GV = 1, GSCID) for
 * riscv-s2.  Errors (-EINVAL, *p untouched): NULL argument; t->pt neither
 * riscv-s1 nor riscv-s2; a gather holding another table set's ranges; a
 * PSCID or GSCID too wide, a PSCID for riscv-s2, a GSCID for riscv-s1
 * without IK_RISCV_TARGET_GV; an unknown flag; max_av above
 * IK_RISCV_PLAN_MAX; a gather granule that is not a power of two of at
 * least 4 KiB.  Pure, O(max_av).
 */
IK_API int ik_riscv_plan_unmap(const struct ik_riscv_target *t, const struct ik_gather *g,
			       struct ik_riscv_plan *p);

/*
 * ik_riscv_plan_range - the same choice for [iova, iova + size) with a 4 KiB
 * stride (walk = true: AV = 0): what the page-table engine's flush_walk
 * hook needs (an empty table that a new block replaced is freed outside any
 * gather: walk = true) and what a driver that syncs ranges itself issues.
 * Errors as ik_riscv_plan_unmap(), and -EINVAL for size 0 or a range that
 * wraps.  Pure, O(max_av).
 */
IK_API int ik_riscv_plan_range(const struct ik_riscv_target *t, ik_u64 iova, ik_u64 size,
			       bool walk, struct ik_riscv_plan *p);

/* ik_riscv_change.kind */
#define IK_RISCV_CHANGE_DC 1u	/* a device context (DDT leaf) */
#define IK_RISCV_CHANGE_PC 2u	/* a process context (PDT leaf) */

/* ik_riscv_change.flags */
#define IK_RISCV_CHANGE_FLUSH_PSCID 0x1u	/* also IOTINVAL.VMA of pscid (AV = 0) */
#define IK_RISCV_CHANGE_FLUSH_GSCID 0x2u	/* also IOTINVAL.GVMA of gscid (AV = 0) */
#define IK_RISCV_CHANGE_GV 0x4u	/* the PSCID flush is under gscid (GV = 1) */
#define IK_RISCV_CHANGE_FLAGS_ALL 0x7u	/* every IK_RISCV_CHANGE_* flag */

/*
 * struct ik_riscv_change - what a device- or process-directory update did,
 * for ik_riscv_plan_change():
 *   kind     IK_RISCV_CHANGE_DC (the device context of did) or
 *            IK_RISCV_CHANGE_PC (the process context of pid under did);
 *   did, pid which context (pid: PC only);
 *   flags    IK_RISCV_CHANGE_*: the translations cached under the old
 *            context's PSCID / GSCID came from tables the context no longer
 *            names (the caller owns the tags: set these when the old
 *            context's tag leaves its tables);
 *   pscid, gscid  the old context's tags to flush.
 */
struct ik_riscv_change {
	ik_u8 kind;	/* IK_RISCV_CHANGE_DC / _PC */
	ik_u32 flags;	/* IK_RISCV_CHANGE_* */
	ik_u32 did;	/* the device */
	ik_u32 pid;	/* PC: the process */
	ik_u32 pscid;	/* FLUSH_PSCID: the PSCID */
	ik_u32 gscid;	/* FLUSH_GSCID or GV: the GSCID */
};

/*
 * ik_riscv_plan_change - the invalidations a directory update needs:
 *
 *   change                   commands
 *   -----------------------  ---------------------------------------------------
 *   DC                       IODIR.INVAL_DDT (DV = 1, DID)
 *   PC                       IODIR.INVAL_PDT (DV = 1, DID, PID)
 *   FLUSH_PSCID              + IOTINVAL.VMA (PSCV = 1, PSCID; GV with
 *                              IK_RISCV_CHANGE_GV), AV = 0
 *   FLUSH_GSCID              + IOTINVAL.GVMA (GV = 1, GSCID), AV = 0
 *   any                      then the IOFENCE.C (sync = true)
 *
 * The directory invalidation comes first: once it completes the IOMMU can
 * no longer reach the old tables through a cached context, and only then
 * are the translations it made through them dropped.  Errors (-EINVAL, *p
 * untouched): NULL argument, an unknown kind or flag, a DID, PID, PSCID or
 * GSCID too wide, a PID with kind DC.  Pure, O(1).
 */
IK_API int ik_riscv_plan_change(const struct ik_riscv_change *c, struct ik_riscv_plan *p);

/*
 * ik_riscv_plan_issue - encode p's commands and issue them on `q` (a queue
 * of ik_cmdq_fmt_riscv) in order, with IK_CMDQ_SYNC when p->sync: returns
 * once the IOMMU completed them.  0 (also for an empty plan); -EINVAL (NULL
 * q or p, p->n above IK_RISCV_PLAN_MAX, a command that does not encode:
 * nothing issued); the queue's errors (ik_cmdq_issue()).
 */
IK_API int ik_riscv_plan_issue(struct ik_cmdq *q, const struct ik_riscv_plan *p);

/* ================================================================ directories */

/*
 * The issue function of the directory writers: issue the plan (its
 * commands, then the IOFENCE.C when p->sync) and wait for it; 0, or a
 * negative errno (the writer stops and returns it).  ik_riscv_issue_cmdq
 * (ctx = a struct ik_cmdq of ik_cmdq_fmt_riscv) is one; a VMM or a driver
 * with its own ring passes its own.
 */
typedef int (*ik_riscv_issue_fn)(void *ctx, const struct ik_riscv_plan *p);
/* ik_riscv_plan_issue() as an ik_riscv_issue_fn (ctx = the struct ik_cmdq). */
IK_API int ik_riscv_issue_cmdq(void *ctx, const struct ik_riscv_plan *p);

struct ik_riscv_dir_node;	/* private: a directory table and its children */

/* A radix directory (the common part of ik_riscv_ddt and ik_riscv_pdt);
 * fields are private. */
struct ik_riscv_dir {
	const struct ik_dma_mem *dma;	/* private: the DMA memory */
	const struct ik_allocator *alloc;	/* private: the bookkeeping allocator */
	struct ik_riscv_dir_node *root;	/* private: the top table */
	ik_u32 tables;	/* private: table pages allocated, the root included */
	ik_u8 levels;	/* private: 1..3 */
	ik_u8 bits[3];	/* private: index bits per level, leaf level first */
	ik_u8 leaf_words;	/* private: 64-bit words per leaf entry */
	ik_u8 oas;	/* private: table memory below 2^oas */
};

/*
 * struct ik_riscv_ddt_config - for ik_riscv_ddt_init():
 *   dma       DMA memory for the tables (must outlive the directory);
 *   alloc     bookkeeping (NULL: the env's);
 *   caps      the IOMMU's capabilities (extended needs MSI_FLAT; oas 0
 *             takes its PAS);
 *   levels    1, 2 or 3 (ddtp MODE 1LVL, 2LVL, 3LVL): the DIDs it serves
 *             (see the layout above);
 *   extended  64-byte device contexts;
 *   oas       table memory must lie below 2^oas, 32..56 (0: caps->pas).
 */
struct ik_riscv_ddt_config {
	const struct ik_dma_mem *dma;	/* DMA memory for the tables */
	const struct ik_allocator *alloc;	/* bookkeeping; NULL: the env's */
	const struct ik_riscv_caps *caps;	/* the IOMMU's capabilities */
	unsigned levels;	/* 1..3 */
	bool extended;	/* 64-byte device contexts */
	unsigned oas;	/* table memory below 2^oas (0: caps->pas) */
};

/* A device directory (ik_riscv_ddt_init()); fields are private. */
struct ik_riscv_ddt {
	struct ik_riscv_dir d;	/* private */
	struct ik_riscv_caps caps;	/* private: the IOMMU's */
	bool extended;	/* private */
};

/* ddtp register fields. */
#define IK_RISCV_DDTP_MODE_OFF 0u	/* no inbound transactions */
#define IK_RISCV_DDTP_MODE_BARE 1u	/* no translation */
#define IK_RISCV_DDTP_MODE_1LVL 2u	/* one-level directory */
#define IK_RISCV_DDTP_MODE_2LVL 3u	/* two levels */
#define IK_RISCV_DDTP_MODE_3LVL 4u	/* three levels */
#define IK_RISCV_DDTP_MODE_MASK 0xfull	/* [3:0] */
#define IK_RISCV_DDTP_BUSY ((ik_u64)1 << 4)	/* a mode change in progress */
#define IK_RISCV_DDTP_PPN_MASK 0x003ffffffffffc00ull	/* [53:10] the root's PPN */
/* A directory's non-leaf entry: V | PPN [53:10]. */
#define IK_RISCV_DIR_V ((ik_u64)1 << 0)	/* valid */

/*
 * ik_riscv_ddt_init - allocate the top table (zeroed: every context
 * invalid, so the IOMMU faults every DMA with "DDT entry not valid") and
 * its bookkeeping; lower tables come with the first context under them.
 * -EINVAL (NULL t, c, caps or dma, levels outside 1..3, extended without
 * MSI_FLAT, oas out of range), -ENOMEM / -ERANGE (from the memory, or
 * memory beyond oas): nothing allocated, *t untouched.  Cost: one DMA page,
 * one bookkeeping allocation.
 */
IK_API int ik_riscv_ddt_init(struct ik_riscv_ddt *t, const struct ik_riscv_ddt_config *c);
/* Free every table; NULL (or a zeroed struct) is ignored.  The IOMMU must
 * no longer read it (ddtp Off or Bare, and IODIR.INVAL_DDT done). */
IK_API void ik_riscv_ddt_fini(struct ik_riscv_ddt *t);
/* The ddtp value that selects this directory: MODE (levels + 1) | PPN.
 * t must be initialised.  O(1). */
IK_API ik_u64 ik_riscv_ddt_reg(const struct ik_riscv_ddt *t);
/* The highest DID the directory serves.  t must be initialised. */
IK_API ik_u32 ik_riscv_ddt_max_did(const struct ik_riscv_ddt *t);

/*
 * ik_riscv_ddt_write - make dc[0..3] (base) or dc[0..7] (extended) the
 * device context of `did`.  The IOMMU may read a context at any time, and
 * cache it (valid or not) until an IODIR.INVAL_DDT; the CPU stores 64 bits
 * at a time.  So:
 *   - unchanged context: nothing written, nothing issued;
 *   - the old context is not valid: words 1.. first, cleaned, then tc (V)
 *     in one store, cleaned, then the plan;
 *   - the old context is valid (break-before-make): tc = 0 first, cleaned,
 *     the old context's plan issued and waited for; then words 1.., tc,
 *     cleaned, and IODIR.INVAL_DDT with a fence (the device's DMA faults in
 *     between).  A new context with V = 0 is written after the first
 *     step's plan and needs nothing more;
 *   - the plan (ik_riscv_plan_change(chg)): IODIR.INVAL_DDT of did; the
 *     old context's PSCID (first stage, PDTV = 0) when it translated with
 *     a first stage and the new context does not name the same iosatp and
 *     PSCID (GV and its GSCID when it had a G-stage); the old GSCID when
 *     the new context does not name the same iohgatp; an IOFENCE.C.  With
 *     a process directory (PDTV = 1) the PSCIDs of its contexts are the
 *     caller's to flush.
 * Lower directory tables are allocated (zeroed, cleaned, then linked) before
 * the first store.  fn NULL means "the IOMMU does not read this directory
 * now" (before ddtp selects it): words are written in the same order,
 * nothing is issued; *chg (if chg is not NULL) still says what to
 * invalidate.  Returns 0; -EINVAL (NULL t or dc, did beyond the directory,
 * a context that ik_riscv_dc_decode() with the directory's capabilities
 * refuses: nothing written); -ENOMEM / -ERANGE (a lower table: nothing
 * written); fn's error (the context is then invalid, or the new value).
 * Cost: up to two fn calls, up to four cleans, up to two DMA pages.
 */
IK_API int ik_riscv_ddt_write(struct ik_riscv_ddt *t, ik_u32 did, const ik_u64 *dc,
			      ik_riscv_issue_fn fn, void *ctx, struct ik_riscv_change *chg);
/* The current device context of did into dc[0..3] or dc[0..7] (zeros where
 * no lower table exists).  -EINVAL for NULL arguments or a did beyond the
 * directory.  O(levels). */
IK_API int ik_riscv_ddt_read(const struct ik_riscv_ddt *t, ik_u32 did, ik_u64 *dc);

/* ---- process directories ---- */

/* Process context ta bits. */
#define IK_RISCV_PC_V ((ik_u64)1 << 0)	/* valid */
#define IK_RISCV_PC_ENS ((ik_u64)1 << 1)	/* privileged (S-mode) requests allowed */
#define IK_RISCV_PC_SUM ((ik_u64)1 << 2)	/* S-mode requests may access U pages */
#define IK_RISCV_PC_TA_RSVD 0xffffffff00000ff8ull	/* [11:3], [63:32] */

/*
 * struct ik_riscv_pdt_config - for ik_riscv_pdt_init():
 *   dma, alloc, caps   as for the device directory;
 *   pid_bits  8, 17 or 20 (PD8, PD17, PD20: one, two, three levels); the
 *             capabilities must have the mode;
 *   oas       table memory below 2^oas, 32..56 (0: caps->pas).
 */
struct ik_riscv_pdt_config {
	const struct ik_dma_mem *dma;	/* DMA memory for the tables */
	const struct ik_allocator *alloc;	/* bookkeeping; NULL: the env's */
	const struct ik_riscv_caps *caps;	/* the IOMMU's capabilities */
	unsigned pid_bits;	/* 8, 17 or 20 */
	unsigned oas;	/* table memory below 2^oas (0: caps->pas) */
};

/* A process directory (ik_riscv_pdt_init()); fields are private. */
struct ik_riscv_pdt {
	struct ik_riscv_dir d;	/* private */
	struct ik_riscv_caps caps;	/* private: the IOMMU's */
};

/* Allocate the top table (zeroed: every process context invalid).  Errors
 * as ik_riscv_ddt_init(), and -EINVAL for pid_bits other than 8, 17, 20 or
 * a mode the capabilities lack. */
IK_API int ik_riscv_pdt_init(struct ik_riscv_pdt *t, const struct ik_riscv_pdt_config *c);
/* Free every table; NULL (or a zeroed struct) is ignored. */
IK_API void ik_riscv_pdt_fini(struct ik_riscv_pdt *t);
/* The pdtp value for a device context's fsc (MODE PD8/17/20 | PPN).  t must
 * be initialised.  ik_riscv_dc_build() uses it. */
IK_API ik_u64 ik_riscv_pdt_fsc(const struct ik_riscv_pdt *t);

/* ik_riscv_pdt_set flags */
#define IK_RISCV_PC_FLAG_ENS 0x1u	/* ENS: the device's privileged requests are allowed */

/*
 * ik_riscv_pdt_set - make `s1` (a riscv-s1 table set) the first stage of
 * `pid`, tagged `pscid`: ta = V | ENS (flags) | SUM (when s1 has
 * IK_RISCV_FLAG_SUM) | PSCID, fsc = its iosatp.  Lower tables are
 * allocated, zeroed and cleaned before the entry above points at them; fsc
 * is stored and cleaned before ta (V) is.  *chg (if not NULL) gets kind PC
 * and pid; the caller fills did and issues ik_riscv_plan_change() (the
 * IOMMU may have cached the invalid context).  Errors, nothing written:
 * -EINVAL (NULL t or s1, pid beyond pid_bits, s1 not riscv-s1 or its mode
 * not in the capabilities, a root beyond 2^56, pscid above 20 bits, an
 * unknown flag); -EBUSY (the context is valid: clear it and invalidate
 * first); -ENOMEM / -ERANGE (a lower table).  Cost: O(levels) plus up to
 * two DMA pages.
 */
IK_API int ik_riscv_pdt_set(struct ik_riscv_pdt *t, ik_u32 pid, const struct ik_pgtable *s1,
			    ik_u32 pscid, ik_u32 flags, struct ik_riscv_change *chg);
/*
 * ik_riscv_pdt_clear - invalidate the process context of `pid` (ta = 0 in
 * one store, cleaned, then fsc = 0).  *chg (if not NULL) gets kind PC, pid,
 * FLUSH_PSCID and the old PSCID; the caller fills did (and GV/gscid under a
 * G-stage) and issues ik_riscv_plan_change(): until it completes the IOMMU
 * may still translate through the old table.  -EINVAL (NULL t, pid out of
 * range), -ENOENT (not valid).  O(levels).
 */
IK_API int ik_riscv_pdt_clear(struct ik_riscv_pdt *t, ik_u32 pid, struct ik_riscv_change *chg);
/* The process context of pid into pc[0] (ta) and pc[1] (fsc); zeros where
 * no lower table exists.  -EINVAL for NULL arguments or a pid out of range. */
IK_API int ik_riscv_pdt_read(const struct ik_riscv_pdt *t, ik_u32 pid, ik_u64 pc[2]);

/* ================================================================ registers and bring-up */

/* Register offsets (spec chapter "Memory-mapped register interface"). */
#define IK_RISCV_REG_CAPS 0x00	/* capabilities, 64 bits, RO */
#define IK_RISCV_REG_FCTL 0x08	/* features control, 32 bits */
#define IK_RISCV_REG_DDTP 0x10	/* device directory pointer, 64 bits */
#define IK_RISCV_REG_CQB 0x18	/* command queue base, 64 bits */
#define IK_RISCV_REG_CQH 0x20	/* command queue head, 32 bits, RO */
#define IK_RISCV_REG_CQT 0x24	/* command queue tail, 32 bits */
#define IK_RISCV_REG_FQB 0x28	/* fault queue base, 64 bits */
#define IK_RISCV_REG_FQH 0x30	/* fault queue head, 32 bits */
#define IK_RISCV_REG_FQT 0x34	/* fault queue tail, 32 bits, RO */
#define IK_RISCV_REG_PQB 0x38	/* page-request queue base, 64 bits */
#define IK_RISCV_REG_PQH 0x40	/* page-request queue head, 32 bits */
#define IK_RISCV_REG_PQT 0x44	/* page-request queue tail, 32 bits, RO */
#define IK_RISCV_REG_CQCSR 0x48	/* command queue control and status, 32 bits */
#define IK_RISCV_REG_FQCSR 0x4c	/* fault queue control and status, 32 bits */
#define IK_RISCV_REG_PQCSR 0x50	/* page-request queue control and status, 32 bits */
#define IK_RISCV_REG_IPSR 0x54	/* interrupt pending status, 32 bits, RW1C */
#define IK_RISCV_REG_ICVEC 0x2f8	/* interrupt cause to vector, 64 bits */

/* fctl bits. */
#define IK_RISCV_FCTL_BE (1u << 0)	/* big-endian accesses */
#define IK_RISCV_FCTL_WSI (1u << 1)	/* wired-signalled interrupts */
#define IK_RISCV_FCTL_GXL (1u << 2)	/* 32-bit G-stage */

/* Queue base registers: LOG2SZ-1 [4:0], PPN [53:10]. */
#define IK_RISCV_QB_LOG2SZ_MASK 0x1full	/* log2(entries) - 1 */
/* Queue CSR bits (cqcsr; fqcsr and pqcsr share ENABLE, IE, MF, OF, ON, BUSY). */
#define IK_RISCV_QCSR_EN (1u << 0)	/* enable */
#define IK_RISCV_QCSR_IE (1u << 1)	/* interrupt enable */
#define IK_RISCV_QCSR_MF (1u << 8)	/* memory fault (RW1C) */
#define IK_RISCV_CQCSR_CMD_TO (1u << 9)	/* command timeout (RW1C) */
#define IK_RISCV_QCSR_OF (1u << 9)	/* fault / page-request queue overflow (RW1C) */
#define IK_RISCV_CQCSR_CMD_ILL (1u << 10)	/* illegal command (RW1C) */
#define IK_RISCV_CQCSR_FENCE_W_IP (1u << 11)	/* IOFENCE.C with WSI done (RW1C) */
#define IK_RISCV_QCSR_ON (1u << 16)	/* the queue is active */
#define IK_RISCV_QCSR_BUSY (1u << 17)	/* an enable / disable is in progress */
/* ipsr bits (RW1C). */
#define IK_RISCV_IPSR_CIP (1u << 0)	/* command queue */
#define IK_RISCV_IPSR_FIP (1u << 1)	/* fault queue */
#define IK_RISCV_IPSR_PMIP (1u << 2)	/* performance monitor */
#define IK_RISCV_IPSR_PIP (1u << 3)	/* page-request queue */

/*
 * struct ik_riscv_page_req - a page-request queue record (16 bytes)
 * decoded: w[0] PID [31:12], PV [32], PRIV [33], EXEC [34], DID [63:40];
 * w[1] the PCIe page request message's payload: page address [63:12],
 * PRG index [11:3], Last [2], Write [1], Read [0].
 */
struct ik_riscv_page_req {
	ik_u32 did, pid;	/* device; process (pv) */
	bool pv, priv, exec;	/* PID valid; privileged; execute */
	ik_u64 addr;	/* the page (4 KiB aligned) */
	ik_u16 prgi;	/* page request group index */
	bool last, write, read;	/* L, W, R */
};

/*
 * ik_riscv_page_req_decode - decode a page-request record w[0..1] (hostile:
 * the device chose most of it).  -EINVAL, *r untouched: NULL argument,
 * reserved bits of w[0] set (11:0, 39:35), a PID or PRIV without PV.  Pure.
 */
IK_API int ik_riscv_page_req_decode(const ik_u64 w[2], struct ik_riscv_page_req *r);

/*
 * struct ik_riscv_cq_regs - the register side of the command queue, as
 * struct ik_cmdq_regs hooks (ik_riscv_cq_regs, regs_ctx = this):
 *   read_cons  cqcsr first: cmd_ill -> IK_CMDQ_CERROR_ILL, cqmf ->
 *              IK_CMDQ_CERROR_ABT, cmd_to -> IK_CMDQ_CERROR_ATC_INV_SYNC
 *              (an IOFENCE.C that waited too long for ATS invalidations);
 *              then cqh (the ring slot: the queue uses IK_CMDQ_CFG_NO_WRAP);
 *   write_prod cqt = the slot;
 *   ack_error  write the set error bits back to cqcsr (RW1C), then cqt
 *              again with the last tail written (an IOMMU that resumes only
 *              on a cqt write - QEMU 10.0.2 - resumes too).
 * Fields are private except errors (errors acknowledged) and last_cqcsr
 * (cqcsr at the last error report).
 */
struct ik_riscv_cq_regs {
	const struct ik_mmio *mmio;	/* private: the registers */
	ik_u32 mask;	/* private: slot mask */
	ik_lock_t lock;	/* private: orders cqt writes */
	ik_u32 tail;	/* private: the last tail written */
	ik_u32 last_cqcsr;	/* cqcsr at the last error report */
	ik_u64 errors;	/* errors acknowledged */
};

/* The struct ik_cmdq_regs hooks of a struct ik_riscv_cq_regs. */
IK_API extern const struct ik_cmdq_regs ik_riscv_cq_regs_ops;

/* ik_riscv_cq_regs_init - for a queue of 2^log2_entries commands
 * (IK_CMDQ_LOG2_MIN..IK_CMDQ_LOG2_MAX), registers through mmio (not
 * copied: it must outlive r).  Touches no register.  -EINVAL for NULL
 * arguments or a size out of range.  O(1). */
IK_API int ik_riscv_cq_regs_init(struct ik_riscv_cq_regs *r, const struct ik_mmio *mmio,
				 unsigned log2_entries);

/*
 * struct ik_riscv_config - for ik_riscv_create():
 *   mmio      the register file;
 *   dma       DMA memory for the queues;
 *   alloc     bookkeeping (NULL: the env's);
 *   cq_log2, fq_log2, pq_log2  queue sizes, log2 of the entries (0: 8, 8,
 *             8); cq 2..IK_CMDQ_LOG2_MAX, fq and pq 1..16;
 *   flags     IK_RISCV_CFG_WSI: wired interrupts (fctl.WSI; needs IGS WSI
 *             or both), IK_RISCV_CFG_IE: enable the queues' interrupts (cie,
 *             fie, pie; the vectors, icvec and msi_cfg_tbl, are the
 *             caller's);
 *   timeout_ns  bound of every register handshake and command wait (0: 1 s).
 */
struct ik_riscv_config {
	const struct ik_mmio *mmio;	/* registers */
	const struct ik_dma_mem *dma;	/* DMA memory for the queues */
	const struct ik_allocator *alloc;	/* bookkeeping; NULL: the env's */
	unsigned cq_log2, fq_log2, pq_log2;	/* queue sizes (0: 8) */
	ik_u32 flags;	/* IK_RISCV_CFG_* */
	ik_u64 timeout_ns;	/* handshake bound (0: 1 s) */
};
#define IK_RISCV_CFG_WSI 0x1u	/* fctl.WSI = 1 */
#define IK_RISCV_CFG_IE 0x2u	/* cie, fie, pie = 1 */

struct ik_riscv;	/* opaque: one IOMMU */

/*
 * ik_riscv_create - read capabilities and fctl through cfg->mmio (nothing is
 * written) and build the driver object.  Errors: -EINVAL (NULL cfg, out,
 * mmio or dma, accessors missing, a queue size out of range, an unknown
 * flag); -EOPNOTSUPP (capabilities that do not decode, WSI asked without
 * IGS WSI or both, fctl.BE set: big-endian IOMMUs are not supported);
 * -ENOMEM.  *out untouched on error.  One allocation.
 */
IK_API int ik_riscv_create(const struct ik_riscv_config *cfg, struct ik_riscv **out);
/* Disable (as ik_riscv_disable()) if enabled, free the queues and the
 * object.  NULL is ignored. */
IK_API void ik_riscv_destroy(struct ik_riscv *u);
/* The decoded capabilities. */
IK_API const struct ik_riscv_caps *ik_riscv_get_caps(const struct ik_riscv *u);

/*
 * ik_riscv_enable - bring the queues up: fctl.WSI as configured; the
 * command queue (cqb, cqt = 0, cqcsr.cqen, wait for cqon and !busy), the
 * fault queue (fqb, fqh = 0, fqcsr.fqen, wait for fqon), the page-request
 * queue when capabilities.ATS (the same with pq*); then IOTINVAL.VMA and
 * .GVMA of everything, IODIR.INVAL_DDT of everything and IOFENCE.C through
 * the queue.  ddtp is not touched: set it with ik_riscv_set_ddtp() (the
 * IOMMU comes out of reset with ddtp Off: every DMA refused).  Errors:
 * -ETIMEDOUT (a handshake, or the fence), -ENOMEM / -ERANGE (queue
 * memory), -EIO (a queue that reports a memory fault when enabled); the
 * queues enabled so far are disabled again.  -EBUSY if already enabled.
 */
IK_API int ik_riscv_enable(struct ik_riscv *u);
/* Disable the queues (cqen, fqen, pqen = 0, wait for !on and !busy).
 * -ETIMEDOUT on a handshake.  The queue memory stays for a later enable. */
IK_API int ik_riscv_disable(struct ik_riscv *u);

/*
 * ik_riscv_set_ddtp - write ddtp (from ik_riscv_ddt_reg(), or MODE Off /
 * Bare with PPN 0) with the busy handshake: wait for ddtp.BUSY = 0, write,
 * wait for BUSY = 0 again, and read back: a MODE the IOMMU does not
 * implement reads back as another (the specification lets it keep the old
 * value): -EOPNOTSUPP.  After a change from one directory to another the
 * caller issues IODIR.INVAL_DDT of everything (ik_riscv_enable() did it
 * once).  -EINVAL (NULL u, a reserved MODE, bits outside MODE and PPN),
 * -ETIMEDOUT.
 */
IK_API int ik_riscv_set_ddtp(struct ik_riscv *u, ik_u64 ddtp);

/* The command queue (an ik_cmdq of ik_cmdq_fmt_riscv) once enabled, else
 * NULL.  ik_riscv_plan_issue() and ik_riscv_issue_cmdq() take it. */
IK_API struct ik_cmdq *ik_riscv_queue(struct ik_riscv *u);

/*
 * ik_riscv_fault_pop - the oldest fault record: decoded into *f (raw, if
 * not NULL, gets the 32 bytes as read), fqh advanced.  A record that does
 * not decode is still consumed: -EIO with raw filled.  -ERANGE: fqt
 * beyond the queue (nothing read).  -ENOENT: the
 * queue is empty (fqh = fqt); first, an overflow (fqof) or memory fault
 * (fqmf) is counted in the stats and acknowledged (RW1C), and ipsr.fip is
 * cleared.  -EINVAL for NULL u or f, or a queue not enabled.  O(1).
 */
IK_API int ik_riscv_fault_pop(struct ik_riscv *u, struct ik_riscv_fault *f, ik_u64 raw[4]);
/* The same for the page-request queue (-ENODEV without one). */
IK_API int ik_riscv_page_req_pop(struct ik_riscv *u, struct ik_riscv_page_req *r, ik_u64 raw[2]);

/* Counters (relaxed; exact when quiet). */
struct ik_riscv_stats {
	ik_u64 faults;	/* fault records read */
	ik_u64 bad_faults;	/* of them, not decodable */
	ik_u64 fq_overflows;	/* fqof seen */
	ik_u64 fq_mem_faults;	/* fqmf seen */
	ik_u64 page_reqs;	/* page requests read */
	ik_u64 pq_overflows;	/* pqof seen */
	ik_u64 cq_errors;	/* command-queue errors acknowledged */
};
/* Copy the counters.  -EINVAL for NULL arguments. */
IK_API int ik_riscv_get_stats(const struct ik_riscv *u, struct ik_riscv_stats *st);

IK_END_DECLS

#endif /* IOMMUKIT_DRV_RISCV_H */
