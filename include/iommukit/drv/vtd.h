/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/drv/vtd.h - the Intel VT-d driver core: everything between
 * iommukit's VT-d page tables and invalidation descriptors and a real DMA
 * remapping unit (DRHD).
 *
 * What it is for.  A firmware author, a kernel port or a VMM with a VT-d
 * unit needs, beyond page tables (<iommukit/fmt/vtd.h>) and descriptors
 * (<iommukit/cmd/vtd.h>): the capability registers decoded; root, context
 * and PASID tables in DMA memory written in an order the unit never sees
 * half-done; the invalidation queue driven through its registers with error
 * recovery; the unit switched on and off by the GCMD/GSTS protocol; fault
 * records read and cleared; and the invalidations an unmap or a table change
 * needs, no more and no fewer.  This unit provides them on top of
 * <iommukit/drv/io.h>: every register access goes through a struct ik_mmio,
 * every table or queue through a struct ik_dma_mem, bookkeeping through an
 * ik_allocator; waits poll IK_ENV_TIME_NS() and end in -ETIMEDOUT.  It is
 * freestanding (no libc) and needs no interrupt.
 *
 * Pieces, and who may use them alone:
 *   - ik_vtd_hwcaps_decode(): CAP/ECAP/VER into named fields (any user);
 *   - struct ik_vtd_qi + ik_vtd_qi_regs: the ik_cmdq register hooks of one
 *     invalidation queue (a driver with its own bring-up);
 *   - ik_vtd_fault_decode(): a fault-recording register's fields;
 *   - ik_vtd_plan_unmap() / _map() / _change(): the invalidation planner, a
 *     pure function of the unit's capabilities (also for emulators and
 *     tests);
 *   - struct ik_vtd: the unit - bring-up, tables, queue, faults - using all
 *     of the above.
 *
 * Glossary (VT-d's words)
 *   DRHD, unit  one remapping hardware unit: a register file and the
 *               devices behind it.
 *   SID         source-id of a request: bus << 8 | devfn (devfn = device
 *               << 3 | function).
 *   DID         domain id: the tag of cached translations; a unit has
 *               2^(4 + 2 CAP.ND) of them, and with CAP.CM (caching mode,
 *               as emulated units have) DID 0 is reserved for the unit.
 *   legacy mode root table -> context table per bus -> 128-bit context
 *               entry per devfn -> second-level tables.
 *   scalable mode (RTADDR.TTM = 01b, ECAP.SMTS) root entry with a lower
 *               (devfn 0-127) and an upper (128-255) context table ->
 *               256-bit scalable-mode context entry -> PASID directory ->
 *               PASID table (64 entries of 64 bytes) -> PASID entry ->
 *               second- or first-level tables.  Requests without PASID use
 *               the PASID entry of RID_PASID (iommukit: PASID 0).
 *   QI          queued invalidation: the invalidation queue (IQ) of 2^QS
 *               4-KiB pages at IQA, consumed from IQH, produced up to IQT;
 *               128-bit descriptors, or 256-bit with IQA.DW (scalable mode).
 *   CM          caching mode: the unit may cache not-present entries, so
 *               making an entry present also needs an invalidation.
 *   RWBF        the unit needs a write-buffer flush (GCMD.WBF) to see
 *               table updates.
 *   ATS, device-TLB  a device that caches translations itself (context
 *               TT = 01b / DTE); unmaps then also invalidate its TLB.
 *   persistent / one-shot GCMD bits  TE, EAFL, QIE, IRE, CFI stay as
 *               written (GSTS reflects them); SRTP, SFL, WBF, SIRTP act
 *               once.  Every GCMD write here is the persistent GSTS bits
 *               with one bit changed, never a one-shot bit written back.
 *
 * Invalidation-queue errors (struct ik_vtd_qi, the mapping onto the
 * generic queue's CERROR codes, see <iommukit/cmdq.h> "Errors"):
 *   FSTS.IQE  -> IK_CMDQ_CERROR_ILL: IQH points at the bad descriptor; the
 *             queue replaces it with the no-op (a wait with IF = 1), its
 *             issuer gets -EIO, and ack_error clears IQE and writes IQT again
 *             with the current tail, because QEMU 7.2 fetches again only on
 *             an IQT write (real units resume when IQE clears; the repeated
 *             IQT write is harmless there).
 *   FSTS.ITE, FSTS.ICE -> IK_CMDQ_CERROR_ATC_INV_SYNC: a device-TLB
 *             invalidation timed out or completed wrongly.  The unit aborts
 *             the waits that were pending (their status is never written);
 *             ack_error clears the bit and rewrites IQT, the queue goes on,
 *             and the issuers of the aborted waits get -ETIMEDOUT: the
 *             queue's syncs use completion words (cfg.status), so IQH
 *             passing an aborted wait is never taken for completion.  IQE
 *             takes precedence when several are set.
 *   IQERCD (0xb0, revision 3+) says why (ik_vtd_iqercd_decode()); QEMU 7.2
 *   does not implement it (reads 0, "no information").
 *
 * Synchronization
 *   call                                  may run concurrently with
 *   ------------------------------------  ----------------------------------
 *   ik_vtd_hwcaps_decode, ik_vtd_fault_    anything (pure)
 *   decode, ik_vtd_plan_*, name functions
 *   ik_vtd_qi_regs hooks                  each other, as struct ik_cmdq_regs
 *                                         requires (an internal lock orders
 *                                         IQT writes)
 *   ik_vtd_issue, ik_vtd_plan_issue,      each other, and table updates
 *   ik_vtd_queue users                    (the queue is lock-free)
 *   ik_vtd_context_*, ik_vtd_pasid_*      one at a time per unit (caller
 *                                         serializes); with queue users
 *   ik_vtd_fault_pop                      one at a time; with everything else
 *   ik_vtd_enable, _disable, _destroy     nothing else on the unit
 * Nothing here calls back into the caller except the ik_mmio, ik_dma_mem and
 * allocator hooks.
 *
 * docs/vtd-bringup.md walks through bringing a unit up with this API, in
 * the code of the hardware-in-the-loop checks (examples/baremetal/hil_vtd.c)
 * that run it on QEMU's intel-iommu.  Without QEMU, <iommukit/softvtd.h> is
 * a register-level unit this core brings up through the same hooks
 * (ik_softvtd_mmio(); tests/test_softvtd.c).
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_DRV_VTD_H
#define IOMMUKIT_DRV_VTD_H

#include <iommukit/env.h>
#include <iommukit/lock.h>
#include <iommukit/cmdq.h>
#include <iommukit/cmd/vtd.h>
#include <iommukit/fmt/vtd.h>
#include <iommukit/drv/io.h>

IK_BEGIN_DECLS

/* ---------------------------------------------------------------- registers */
/* Offsets in the unit's register file ("Register descriptions"). */
#define IK_VTD_REG_VER 0x00u
#define IK_VTD_REG_CAP 0x08u
#define IK_VTD_REG_ECAP 0x10u
#define IK_VTD_REG_GCMD 0x18u
#define IK_VTD_REG_GSTS 0x1cu
#define IK_VTD_REG_RTADDR 0x20u
#define IK_VTD_REG_CCMD 0x28u
#define IK_VTD_REG_FSTS 0x34u
#define IK_VTD_REG_FECTL 0x38u
#define IK_VTD_REG_FEDATA 0x3cu
#define IK_VTD_REG_FEADDR 0x40u
#define IK_VTD_REG_FEUADDR 0x44u
#define IK_VTD_REG_PMEN 0x64u
#define IK_VTD_REG_IQH 0x80u
#define IK_VTD_REG_IQT 0x88u
#define IK_VTD_REG_IQA 0x90u
#define IK_VTD_REG_ICS 0x9cu
#define IK_VTD_REG_IECTL 0xa0u
#define IK_VTD_REG_IEDATA 0xa4u
#define IK_VTD_REG_IEADDR 0xa8u
#define IK_VTD_REG_IEUADDR 0xacu
#define IK_VTD_REG_IQERCD 0xb0u
#define IK_VTD_REG_IRTA 0xb8u

/* VER_REG: 7:4 major, 3:0 minor. */
#define IK_VTD_VER_MAJOR(v) ((unsigned)(((v) >> 4) & 0xf))
#define IK_VTD_VER_MINOR(v) ((unsigned)((v) & 0xf))

/* GCMD_REG commands and the GSTS_REG status bits at the same positions. */
#define IK_VTD_GCMD_TE (1u << 31)    /* translation enable (persistent) */
#define IK_VTD_GCMD_SRTP (1u << 30)  /* set root table pointer (one-shot) */
#define IK_VTD_GCMD_SFL (1u << 29)   /* set fault log (one-shot) */
#define IK_VTD_GCMD_EAFL (1u << 28)  /* advanced fault logging (persistent) */
#define IK_VTD_GCMD_WBF (1u << 27)   /* write-buffer flush (one-shot) */
#define IK_VTD_GCMD_QIE (1u << 26)   /* queued invalidation (persistent) */
#define IK_VTD_GCMD_IRE (1u << 25)   /* interrupt remapping (persistent) */
#define IK_VTD_GCMD_SIRTP (1u << 24) /* set IR table pointer (one-shot) */
#define IK_VTD_GCMD_CFI (1u << 23)   /* compatibility format interrupts (persistent) */
#define IK_VTD_GSTS_TES (1u << 31)
#define IK_VTD_GSTS_RTPS (1u << 30)
#define IK_VTD_GSTS_FLS (1u << 29)
#define IK_VTD_GSTS_AFLS (1u << 28)
#define IK_VTD_GSTS_WBFS (1u << 27)  /* set while a write-buffer flush runs */
#define IK_VTD_GSTS_QIES (1u << 26)
#define IK_VTD_GSTS_IRES (1u << 25)
#define IK_VTD_GSTS_IRTPS (1u << 24)
#define IK_VTD_GSTS_CFIS (1u << 23)
/* The GSTS bits whose command bits are persistent: a GCMD write carries
 * them as GSTS shows them. */
#define IK_VTD_GSTS_PERSISTENT                                                              \
	(IK_VTD_GSTS_TES | IK_VTD_GSTS_AFLS | IK_VTD_GSTS_QIES | IK_VTD_GSTS_IRES |         \
	 IK_VTD_GSTS_CFIS)

/* RTADDR_REG: 63:12 root table address, 11:10 TTM translation table mode. */
#define IK_VTD_RTADDR_TTM_SHIFT 10
#define IK_VTD_RTADDR_TTM_LEGACY 0u
#define IK_VTD_RTADDR_TTM_SCALABLE 1u

/* FSTS_REG (RW1C bits clear when written with 1). */
#define IK_VTD_FSTS_PFO (1u << 0) /* primary fault overflow (RW1C) */
#define IK_VTD_FSTS_PPF (1u << 1) /* primary pending fault (RO: OR of the F bits) */
#define IK_VTD_FSTS_IQE (1u << 4) /* invalidation queue error (RW1C) */
#define IK_VTD_FSTS_ICE (1u << 5) /* invalidation completion error (RW1C) */
#define IK_VTD_FSTS_ITE (1u << 6) /* invalidation time-out error (RW1C) */
#define IK_VTD_FSTS_FRI(fsts) ((unsigned)(((fsts) >> 8) & 0xff)) /* fault record index */

/* FECTL_REG / IECTL_REG: 31 IM interrupt mask, 30 IP interrupt pending. */
#define IK_VTD_ECTL_IM (1u << 31)
#define IK_VTD_ECTL_IP (1u << 30)

/* IQA_REG: 63:12 base, 11 DW (256-bit descriptors), 2:0 QS (2^QS pages). */
#define IK_VTD_IQA_DW ((ik_u64)1 << 11)
#define IK_VTD_IQA_QS_MAX 7u
/* IQH_REG / IQT_REG: the descriptor index << 4 (128-bit) or << 5 (256-bit;
 * bit 4 is then reserved), in bits 18:4. */
#define IK_VTD_IQ_SHIFT_128 4u
#define IK_VTD_IQ_SHIFT_256 5u

/* IQERCD_REG: 3:0 IQEI, 47:32 ITESID, 63:48 ICESID. */
#define IK_VTD_IQEI_NONE 0u	     /* no information (older units, QEMU) */
#define IK_VTD_IQEI_TAIL 1u	     /* invalid tail pointer */
#define IK_VTD_IQEI_FETCH 2u	     /* descriptor fetch failed */
#define IK_VTD_IQEI_TYPE 3u	     /* invalid descriptor type */
#define IK_VTD_IQEI_RESERVED 4u	     /* reserved field set in a valid type */
#define IK_VTD_IQEI_WIDTH 5u	     /* invalid descriptor width in IQA */

/* Fault-recording register (128 bits at CAP.FRO + 16 i): lo = bits 63:0,
 * hi = bits 127:64. */
#define IK_VTD_FRCD_HI_F ((ik_u64)1 << 63)  /* fault (RW1C) */
#define IK_VTD_FRCD_HI_T ((ik_u64)1 << 62)  /* type: 0 write, 1 read/AtomicOp */

/* ---- root, context and PASID structure fields not in <iommukit/fmt/vtd.h> */
/* Root entry (128 bits).  Legacy: lo = P | CTP; hi reserved.  Scalable:
 * lo = LP | LCTP (devfn 0-127), hi = UP | UCTP (devfn 128-255). */
#define IK_VTD_RE_P ((ik_u64)1 << 0)
/* Scalable-mode context entry (256 bits), word 0 and word 1. */
#define IK_VTD_SMCE_P ((ik_u64)1 << 0)
#define IK_VTD_SMCE_FPD ((ik_u64)1 << 1)
#define IK_VTD_SMCE_DTE ((ik_u64)1 << 2)	 /* device-TLB enable */
#define IK_VTD_SMCE_PASIDE ((ik_u64)1 << 3) /* requests-with-PASID allowed */
#define IK_VTD_SMCE_PRE ((ik_u64)1 << 4)	 /* page requests */
#define IK_VTD_SMCE_PDTS_SHIFT 9	 /* 11:9: directory of 2^(PDTS + 7) entries */
#define IK_VTD_SMCE1_RID_PASID_MASK 0xfffffull /* word 1, 19:0 */
/* PASID directory entry (64 bits): P, FPD, 63:12 PASID table pointer. */
#define IK_VTD_PDE_P ((ik_u64)1 << 0)
#define IK_VTD_PDE_FPD ((ik_u64)1 << 1)

/* ---------------------------------------------------------------- capabilities */

/*
 * struct ik_vtd_hwcaps - CAP_REG, ECAP_REG and VER_REG decoded (field names
 * as in the specification; bools are single bits).  Derived values:
 * domains = 2^(4 + 2 nd), mgaw in bits (field + 1), fro and iro in bytes
 * (field * 16), nfr the number of records (field + 1), pasid_bits = pss + 1.
 */
struct ik_vtd_hwcaps {
	ik_u64 cap, ecap;	/* CAP_REG and ECAP_REG as read */
	ik_u32 ver;	/* VER_REG as read */
	ik_u8 ver_major, ver_minor;	/* VER_REG's major and minor version */
	/* CAP */
	ik_u8 nd;
	ik_u32 domains;
	bool afl, rwbf, plmr, phmr, cm;
	ik_u8 sagaw; /* bit 1: 3 levels (39 bits), bit 2: 4 (48), bit 3: 5 (57) */
	ik_u8 mgaw;
	bool zlr;
	ik_u32 fro;
	ik_u8 sllps; /* bit 0: 2 MiB, bit 1: 1 GiB */
	bool psi;
	ik_u16 nfr;
	ik_u8 mamv;
	bool dwd, drd, fl1gp, pi, fl5lp, ecmds, esirtps, esrtps;
	/* ECAP */
	bool c, qi, dt, ir, eim, pt, sc;
	ik_u32 iro;
	ik_u8 mhmv;
	bool mts, nest, prs, ers, srs, nwfs, eafs;
	ik_u8 pss, pasid_bits;
	bool pasid, dit, pds, smts, vcs, slads, slts, flts, smpwc, rps, pms, adms, rprivs;
};

/* ik_vtd_hwcaps_decode - fill *out from the three registers.  -EINVAL for a
 * NULL out.  Pure, O(1). */
IK_API int ik_vtd_hwcaps_decode(ik_u32 ver, ik_u64 cap, ik_u64 ecap, struct ik_vtd_hwcaps *out);

/* ---------------------------------------------------------------- queue registers */

/*
 * struct ik_vtd_qi - the register side of one invalidation queue, as
 * struct ik_cmdq_regs hooks (ik_vtd_qi_regs, regs_ctx = the ik_vtd_qi):
 *   read_cons  FSTS first (the error state, see "Invalidation-queue errors"
 *              above), then IQH >> shift;
 *   write_prod IQT = index << shift (the index is the ring slot: VT-d's
 *              registers carry no wrap bit, so the queue uses
 *              IK_CMDQ_CFG_NO_WRAP);
 *   ack_error  write the set IQE/ITE/ICE bits back to FSTS (RW1C), then IQT
 *              again with the last tail written.
 * IQT writes of write_prod and ack_error are ordered by `lock` so that IQT
 * never goes backwards.  Fields are private except iqercd (IQERCD as read at
 * the last error report, for diagnostics) and errors (count).
 */
struct ik_vtd_qi {
	const struct ik_mmio *mmio;	/* private: the unit's registers */
	unsigned shift;	/* private: IQH/IQT index shift (4, or 5 for 256-bit descriptors) */
	ik_u32 mask;	/* private: index mask of the ring */
	ik_lock_t lock;	/* private: orders IQT writes */
	ik_u32 tail;	/* private: the last tail written */
	ik_u64 iqercd;	/* IQERCD as read at the last error report */
	ik_u64 errors;	/* errors reported */
};

/* The struct ik_cmdq_regs hooks of a struct ik_vtd_qi (regs_ctx = the ik_vtd_qi). */
IK_API extern const struct ik_cmdq_regs ik_vtd_qi_regs;

/*
 * ik_vtd_qi_init - set up *qi for a queue of 2^log2_entries descriptors of
 * 128 bits (dw false) or 256 bits (dw true), registers through `mmio` (not
 * copied: it must outlive qi).  Touches no register.  -EINVAL for a NULL qi
 * or mmio, or a size no IQA.QS can give (128-bit: 2^8..2^15 entries;
 * 256-bit: 2^7..2^14).  O(1).
 */
IK_API int ik_vtd_qi_init(struct ik_vtd_qi *qi, const struct ik_mmio *mmio,
			  unsigned log2_entries, bool dw);

/* IQA_REG for a queue at device address `base` (4-KiB aligned) of 2^qs
 * pages (qs 0..7) with 256-bit descriptors when dw; IQT/IQH for an index;
 * the index in an IQH/IQT value.  Pure. */
IK_INLINE ik_u64 ik_vtd_iqa_value(ik_u64 base, unsigned qs, bool dw)
{
	return (base & ~(ik_u64)0xfff) | (dw ? IK_VTD_IQA_DW : 0) | (qs & 7u);
}
IK_INLINE ik_u64 ik_vtd_iq_reg_value(ik_u32 index, bool dw)
{
	return (ik_u64)index << (dw ? IK_VTD_IQ_SHIFT_256 : IK_VTD_IQ_SHIFT_128);
}
IK_INLINE ik_u32 ik_vtd_iq_reg_index(ik_u64 reg, bool dw)
{
	return (ik_u32)((reg & 0x7fff0u) >> (dw ? IK_VTD_IQ_SHIFT_256 : IK_VTD_IQ_SHIFT_128));
}

/* IQERCD_REG decoded. */
struct ik_vtd_iqerr {
	ik_u8 iqei;	/* IK_VTD_IQEI_* */
	ik_u16 itesid;	/* SID of the device-TLB invalidation that timed out (ITE) */
	ik_u16 icesid;	/* SID of the bad invalidation completion (ICE) */
};
/* ik_vtd_iqercd_decode - -EINVAL for a NULL out.  Pure. */
IK_API int ik_vtd_iqercd_decode(ik_u64 iqercd, struct ik_vtd_iqerr *out);
/* Name of an IQEI value ("invalid descriptor type"), or NULL. */
IK_API const char *ik_vtd_iqei_name(unsigned iqei);

/* ---------------------------------------------------------------- faults */

/*
 * struct ik_vtd_fault - one fault-recording register decoded:
 *   addr    FI, bits 63:12 (the page address of the faulted request; for
 *           interrupt-remapping faults bits 63:48 hold the interrupt index);
 *   sid     bits 79:64;
 *   t2      bit 92 (a second type bit of later revisions; 0 before), raw;
 *   priv    bit 93, privileged-mode request;
 *   exe     bit 94, execute request;
 *   pp      bit 95, a PASID was present;
 *   pasid   bits 123:104 (valid if pp);
 *   reason  FR, bits 103:96 (ik_vtd_fault_reason_name());
 *   at      bits 125:124, the request's address type;
 *   write   T (bit 126) is 0: a write request (T = 1: read or AtomicOp);
 *   index   which record (set by ik_vtd_fault_pop());
 *   overflow  FSTS.PFO was set when it was popped: later faults were lost.
 */
struct ik_vtd_fault {
	ik_u64 addr;
	ik_u32 pasid;
	ik_u16 sid;
	ik_u16 index;
	ik_u8 reason;
	ik_u8 at;
	bool write, priv, exe, pp, t2, overflow;
};

/* ik_vtd_fault_decode - decode a record (rec[0] = bits 63:0, rec[1] =
 * 127:64).  -ENOENT if its F bit is clear (nothing recorded; *f zeroed),
 * -EINVAL for a NULL argument.  Pure. */
IK_API int ik_vtd_fault_decode(const ik_u64 rec[2], struct ik_vtd_fault *f);

/* Name of a fault reason: the legacy codes (0x1-0xe), interrupt-remapping
 * codes (0x20-0x26) and scalable-mode codes (0x30-0x90); NULL for values the
 * specification does not define. */
IK_API const char *ik_vtd_fault_reason_name(unsigned reason);

/* ---------------------------------------------------------------- planner */

#define IK_VTD_PLAN_MAX 6	/* the most descriptors one ik_vtd_plan holds */

/*
 * struct ik_vtd_plan - what an update needs: n decoded descriptors to issue
 * in order, then (sync) a wait for them - ik_cmdq_issue(..., IK_CMDQ_SYNC)
 * appends it - and, before them, a write-buffer flush (wbf: GCMD.WBF, a
 * register operation) where the unit has RWBF.  ik_vtd_plan_issue() does
 * all of it on a struct ik_vtd.
 */
struct ik_vtd_plan {
	unsigned n;	/* descriptors to issue, in d[0..n) */
	bool sync;	/* then wait for them (IK_CMDQ_SYNC) */
	bool wbf;	/* first a write-buffer flush (GCMD.WBF) */
	struct ik_vtd_desc d[IK_VTD_PLAN_MAX];	/* the decoded descriptors */
};

/*
 * struct ik_vtd_target - whose translations an unmap or map touched.
 *   pt      the table set (second-level: IOTLB descriptors tagged with did;
 *           first-level: PASID-based IOTLB tagged with did and pasid);
 *   did     its domain id on this unit;
 *   pasid   the PASID whose entry points to pt (0: RID_PASID, or legacy);
 *   flags   IK_VTD_TARGET_ATS: a device behind it caches translations
 *           (device-TLB): sid, pfsid (the physical function's SID for an SR-IOV
 *           virtual function, else 0) and mip (ATS invalidate queue depth
 *           hint, 0..31) describe it;
 *   max_psi_pages  use a domain-selective invalidation when the
 *           page-selective block would exceed this many pages (0: only
 *           MAMV limits it).
 */
struct ik_vtd_target {
	const struct ik_pgtable *pt;
	ik_u16 did;
	ik_u32 pasid;
	ik_u32 flags;
	ik_u16 sid;	/* ATS: the device's source id */
	ik_u16 pfsid;	/* ATS: the physical function's SID of an SR-IOV virtual function, else 0 */
	ik_u8 mip;	/* ATS: invalidate queue depth hint, 0..31 */
	ik_u64 max_psi_pages;
};
#define IK_VTD_TARGET_ATS 0x1u	/* a device-TLB caches the translations (ik_vtd_target.flags) */

/* Mode flags of the planners: the unit runs in scalable mode. */
#define IK_VTD_PLAN_SCALABLE 0x1u

/*
 * ik_vtd_plan_unmap - the invalidations that make an unmap's gather `g`
 * (from ik_pgtable_unmap() on t->pt) safe: after they and their wait
 * complete, no IOTLB, paging-structure cache or device-TLB of the unit holds
 * a translation through what was unmapped, and the gather may be synced
 * (ik_pgtable_gather_sync(): tables freed) and the IOVA reused.
 *
 * The choice, for a non-empty gather over pages [s, e) (s = g->start >> 12,
 * e = (g->end + 4095) >> 12; (a, am) = ik_vtd_psi_mask(s, e - s, MAMV):
 * the smallest aligned block of 2^am pages at a that holds them):
 *
 *   condition                                      descriptors
 *   ---------------------------------------------  -----------------------------
 *   empty gather (start >= end)                    none, no wait
 *   second-level pt, CAP.PSI, am <= CAP.MAMV, and  IOTLB G=3 page: DID, ADDR = a,
 *     2^am <= max_psi_pages (or no threshold)        AM = am, IH = !g->walk
 *   second-level pt, otherwise (no PSI, block      IOTLB G=2 domain: DID
 *     above MAMV, or above the threshold)
 *   first-level pt, same tests                     PIOTLB G=3: DID, PASID, ADDR,
 *                                                    AM, IH = !g->walk
 *   first-level pt, otherwise                      PIOTLB G=2: DID, PASID
 *   IOTLB descriptors, any                         DR = CAP.DRD, DW = CAP.DWD
 *   ATS, page-selective above                      + DEVTLB: SID, PFSID, MIP,
 *                                                    the same block (S = 0 and
 *                                                    ADDR = a for one page; else
 *                                                    S = 1 and ADDR bits
 *                                                    12..12+am-2 set)
 *   ATS, domain/PASID-selective above              + DEVTLB of everything: S = 1,
 *                                                    ADDR = 0x7ffffffffffff000
 *   any non-empty gather                           then the wait (sync = true)
 *
 * IH (invalidation hint: only leaf entries changed, paging-structure caches
 * may be kept) is set only when the gather says no table entry was cleared
 * or split (!g->walk); otherwise the page-selective invalidation also drops
 * cached non-leaf entries.  No wbf: unmaps need none.
 *
 * Errors (-EINVAL, *p untouched): NULL argument, unknown flags or target
 * flags, t->pt not a VT-d table set, a gather holding another table set's
 * ranges or pages, did out of range for CAP.ND (or 0 with CAP.CM), a
 * first-level pt without IK_VTD_PLAN_SCALABLE, pasid not 0 for a
 * second-level pt in legacy mode or >= 2^20.  -EOPNOTSUPP: ATS with a PASID
 * other than 0 (the PASID-based device-TLB invalidation is not implemented).
 * Pure, O(1).
 */
IK_API int ik_vtd_plan_unmap(const struct ik_vtd_hwcaps *caps, ik_u32 flags,
			     const struct ik_vtd_target *t, const struct ik_gather *g,
			     struct ik_vtd_plan *p);

/*
 * ik_vtd_plan_range - the same choice for [iova, iova + size), leaf-only
 * (IH = 1) unless walk: what the page-table engine's flush_walk hook needs
 * (walk = true: it frees an empty table that a new block replaced, outside
 * any gather) and what a driver that syncs ranges itself issues.  Errors as
 * ik_vtd_plan_unmap(), and -EINVAL for size 0 or a range that wraps.
 */
IK_API int ik_vtd_plan_range(const struct ik_vtd_hwcaps *caps, ik_u32 flags,
			     const struct ik_vtd_target *t, ik_u64 iova, ik_u64 size, bool walk,
			     struct ik_vtd_plan *p);

/*
 * ik_vtd_plan_map - what a map of [iova, iova + size) needs (the
 * iotlb_sync_map hook): with CAP.CM (the unit may cache not-present
 * entries) the page-selective (or, past the limits above, domain/PASID-
 * selective) IOTLB or PIOTLB invalidation of the range and a wait, IH = 0;
 * without CM, wbf when the unit has RWBF; else nothing.  Never a device-TLB
 * invalidation (a device caches no not-present entry).  Errors as
 * ik_vtd_plan_unmap(), and -EINVAL for size 0 or a range that wraps.
 */
IK_API int ik_vtd_plan_map(const struct ik_vtd_hwcaps *caps, ik_u32 flags,
			   const struct ik_vtd_target *t, ik_u64 iova, ik_u64 size,
			   struct ik_vtd_plan *p);

/*
 * struct ik_vtd_change - what a table update did (ik_vtd_context_set() and
 * friends fill it), for ik_vtd_plan_change():
 *   kind         IK_VTD_CHANGE_CONTEXT (a context entry: legacy, or
 *                scalable with its RID_PASID PASID entry) or
 *                IK_VTD_CHANGE_PASID (one PASID entry, scalable);
 *   sid, pasid   which entry;
 *   did          the domain the entry names (the old one for a clear);
 *   present      the entry is present now (a set) or not (a clear);
 *   ats          the device has its TLB enabled through the entry;
 *   first_level  the PASID entry is first-level or pass-through (tagged by
 *                PASID: PASID-based IOTLB invalidation), not second-level.
 */
struct ik_vtd_change {
	ik_u8 kind;
	bool present;
	bool ats;
	bool first_level;
	ik_u16 sid;
	ik_u16 did;
	ik_u32 pasid;
};
#define IK_VTD_CHANGE_CONTEXT 1u	/* ik_vtd_change.kind: a context entry */
#define IK_VTD_CHANGE_PASID 2u	/* ik_vtd_change.kind: one PASID entry */

/*
 * ik_vtd_plan_change - the invalidations a table update needs (the VT-d
 * specification's guidance for context- and PASID-entry changes):
 *
 *   change                          descriptors
 *   ------------------------------  -----------------------------------------
 *   set, no CM                      none (wbf if RWBF): the unit caches no
 *                                   not-present entry
 *   set, CM (context, legacy)       CC device (SID, DID 0: not-present entries
 *                                   are cached under DID 0), IOTLB domain (DID)
 *   set, CM (context, scalable)     CC device (SID, DID 0), PC PASID (DID, 0),
 *                                   IOTLB domain (DID) or PIOTLB PASID (DID, 0)
 *   set, CM (PASID entry)           PC PASID (DID, PASID), IOTLB domain or
 *                                   PIOTLB PASID (DID, PASID)
 *   clear (context, legacy)         CC device (SID, DID), IOTLB domain (DID)
 *   clear (context, scalable)       CC device (SID, DID), PC PASID (DID, 0),
 *                                   IOTLB domain or PIOTLB PASID (DID, 0)
 *   clear (PASID entry)             PC PASID (DID, PASID), IOTLB domain or
 *                                   PIOTLB PASID (DID, PASID)
 *   clear with ats                  + DEVTLB of everything (SID, S = 1,
 *                                   ADDR = 0x7ffffffffffff000)
 *   any descriptor                  then the wait (sync)
 *
 * "IOTLB domain or PIOTLB" is IOTLB domain-selective for a second-level
 * entry and PIOTLB PASID-selective for first-level or pass-through; IOTLB
 * descriptors carry DR/DW as the unit drains.  Errors: -EINVAL for a NULL
 * argument, an unknown kind or flag, a PASID change or scalable flag
 * mismatch; -EOPNOTSUPP for ats on a PASID other than 0.  Pure, O(1).
 */
IK_API int ik_vtd_plan_change(const struct ik_vtd_hwcaps *caps, ik_u32 flags,
			      const struct ik_vtd_change *c, struct ik_vtd_plan *p);

/* ---------------------------------------------------------------- the unit */

/* Config flags. */
#define IK_VTD_CFG_SCALABLE 0x1u /* scalable mode (needs ECAP.SMTS; 256-bit descriptors) */

/*
 * struct ik_vtd_config - for ik_vtd_create():
 *   mmio, dma     the unit's registers and DMA memory (both copied); every
 *                 register access goes through mmio, every table, queue and
 *                 completion word through dma (tables 4 KiB aligned);
 *   alloc         bookkeeping memory (NULL: the env's);
 *   haw           host address width from the DMAR table, 32..52: table
 *                 and queue memory must lie below 2^haw (-ERANGE otherwise);
 *   flags         IK_VTD_CFG_*;
 *   qs            invalidation queue of 2^qs 4-KiB pages (0..7): 256 << qs
 *                 128-bit or 128 << qs 256-bit descriptors;
 *   pasid_bits    scalable mode: PASIDs per device below 2^pasid_bits,
 *                 1..20 and at most ECAP.PSS + 1 (0: 6, one PASID table);
 *                 the PASID directory has max(512, 2^(pasid_bits - 6))
 *                 entries;
 *   timeout_ns    bound of every register wait and queue wait (0: 1 s).
 */
struct ik_vtd_config {
	const struct ik_mmio *mmio;
	const struct ik_dma_mem *dma;
	const struct ik_allocator *alloc;
	ik_u32 haw;
	ik_u32 flags;
	unsigned qs;
	unsigned pasid_bits;
	ik_u64 timeout_ns;
};

struct ik_vtd; /* opaque */

/*
 * ik_vtd_create - read VER/CAP/ECAP through cfg->mmio (nothing is written)
 * and build the driver object.  Errors: -EINVAL (NULL cfg, out, mmio or dma,
 * dma without alloc/free, mmio without read32/write32, haw outside 32..52,
 * unknown flags, qs > 7, pasid_bits above 20 or ECAP.PSS + 1); -EOPNOTSUPP
 * (no queued invalidation, scalable mode without ECAP.SMTS, fault-recording
 * registers over the architectural ones: CAP.FRO below 0x100); -ENOMEM.  One
 * allocation.  *out untouched on error.
 */
IK_API int ik_vtd_create(const struct ik_vtd_config *cfg, struct ik_vtd **out);

/*
 * ik_vtd_destroy - disable the unit if it is enabled, or an earlier call left
 * it stuck (ik_vtd_disable()), and
 * free everything: tables, queue, completion words, bookkeeping.  If the
 * disable fails the unit may still read its tables: their DMA memory is then
 * left allocated (leaked) rather than freed under it.  NULL is ignored.
 */
IK_API void ik_vtd_destroy(struct ik_vtd *u);

/* The decoded capabilities (valid from create on). */
IK_API const struct ik_vtd_hwcaps *ik_vtd_caps(const struct ik_vtd *u);

/*
 * ik_vtd_enable - bring the unit up, in this order:
 *   1. allocate and zero the root table (unless entries were set before
 *      enable: they are kept), the invalidation queue and its completion
 *      words (all through cfg->dma; the root table cleaned);
 *   2. mask invalidation completion events (IECTL.IM = 1: the no-op's IF
 *      wait must not interrupt anyone; iommukit polls);
 *   3. RTADDR = root | TTM (01b in scalable mode), GCMD.SRTP, wait
 *      GSTS.RTPS; a write-buffer flush (GCMD.WBF, wait GSTS.WBFS clear)
 *      when CAP.RWBF;
 *   4. FSTS.IQE/ITE/ICE cleared if a previous owner left them set, IQT = 0,
 *      IQA = queue | DW | QS, GCMD.QIE, wait GSTS.QIES; build the
 *      ik_cmdq over the ring (IK_CMDQ_CFG_NO_WRAP | IK_CMDQ_CFG_MSI with
 *      completion words outside the ring);
 *   5. global context-cache, PASID-cache (scalable) and IOTLB invalidation
 *      and a wait;
 *   6. GCMD.TE, wait GSTS.TES.
 * Every GCMD write is GSTS's persistent bits plus the one command.  Devices
 * are then blocked until a context entry is set for them (all entries are
 * not present).  Errors: -EBUSY (already enabled by this object, or GSTS
 * shows translation or queued invalidation already enabled by someone
 * else: ik_vtd_disable() first); -ENOMEM, -ERANGE (DMA memory not below
 * 2^haw or misaligned); -ETIMEDOUT (a status bit did not follow its
 * command; what was switched on is switched off again); -EIO (the
 * invalidations were refused).  On error everything allocated is freed and
 * the unit is back as it was (translation and QI off) - unless the unit does
 * not let go (TE or QIE will not clear): then its queue and tables stay
 * allocated, ik_vtd_disable() may try again, and ik_vtd_destroy() leaks them
 * rather than free memory the unit may still read.
 */
IK_API int ik_vtd_enable(struct ik_vtd *u);

/*
 * ik_vtd_disable - translation off (GCMD.TE clear, wait GSTS.TES clear),
 * then, when this object enabled QI: a wait on the queue (the unit must have
 * nothing pending, and QEMU 7.2 refuses to disable QI unless the last
 * descriptor was a wait), GCMD.QIE clear, wait GSTS.QIES clear.  Works on a
 * unit someone else enabled (firmware, a previous kernel): TE and QIE are
 * cleared.  Tables, entries and queue memory stay allocated: a later enable
 * uses the same root table (with its entries) and restarts the queue at 0;
 * destroy frees them.  0 or -ETIMEDOUT.
 */
IK_API int ik_vtd_disable(struct ik_vtd *u);

/* The invalidation queue of an enabled unit (NULL before enable), for
 * descriptors of the caller's own: encode with the unit's width
 * (ik_vtd_desc_words()). */
IK_API struct ik_cmdq *ik_vtd_queue(struct ik_vtd *u);
/* 2 (128-bit descriptors) or 4 (256-bit, scalable mode). */
IK_API unsigned ik_vtd_desc_words(const struct ik_vtd *u);

/*
 * ik_vtd_issue - encode n decoded descriptors in the unit's width and issue
 * them in order, then a wait when sync.  0; -EINVAL (NULL u, or d NULL with
 * n > 0, n > IK_VTD_PLAN_MAX * 4, a descriptor that does not encode or that
 * the unit's rules refuse (ik_vtd_desc_validate()): nothing issued); -ENODEV
 * (not enabled); the queue's errors (-ETIMEDOUT, -EIO).
 */
IK_API int ik_vtd_issue(struct ik_vtd *u, const struct ik_vtd_desc *d, unsigned n, bool sync);

/* ik_vtd_plan_issue - the write-buffer flush a plan asks for (GCMD.WBF,
 * bounded wait), then its descriptors and wait.  Errors as ik_vtd_issue(),
 * and -ETIMEDOUT from the flush.  A plan with nothing to do returns 0. */
IK_API int ik_vtd_plan_issue(struct ik_vtd *u, const struct ik_vtd_plan *p);

/* The unit's mode flags for the planners (IK_VTD_PLAN_SCALABLE or 0). */
IK_API ik_u32 ik_vtd_plan_flags(const struct ik_vtd *u);

/*
 * struct ik_vtd_attach - what a device (or one of its PASIDs) translates
 * through:
 *   pt     the table set: second-level (legacy mode, or scalable PGTT
 *          second-level) or first-level (scalable, ECAP.FLTS); NULL with
 *          IK_VTD_ATTACH_PASSTHROUGH;
 *   did    its domain id (< 2^(4 + 2 CAP.ND), not 0 with CAP.CM);
 *   flags  IK_VTD_ATTACH_ATS: let the device use its device-TLB (legacy
 *          TT = 01b, scalable DTE; ECAP.DT); IK_VTD_ATTACH_FPD: record no
 *          faults for it; IK_VTD_ATTACH_PASSTHROUGH: no translation (ECAP.PT;
 *          legacy TT = 10b, scalable PGTT = 100b); IK_VTD_ATTACH_PASID
 *          (scalable context entries only): allow requests with PASID
 *          (PASIDE), so that ik_vtd_pasid_set() can add PASIDs.
 */
struct ik_vtd_attach {
	const struct ik_pgtable *pt;
	ik_u16 did;
	ik_u32 flags;
};
#define IK_VTD_ATTACH_ATS 0x1u	/* let the device use its device-TLB (ik_vtd_attach.flags) */
#define IK_VTD_ATTACH_FPD 0x2u	/* record no faults for it */
#define IK_VTD_ATTACH_PASSTHROUGH 0x4u	/* no translation */
#define IK_VTD_ATTACH_PASID 0x8u	/* allow requests with PASID (scalable only) */

/*
 * ik_vtd_context_set - attach device bus:devfn (bus 0..255, devfn 0..255):
 * legacy mode writes its context entry; scalable mode writes the PASID entry
 * of RID_PASID (PASID 0) in the device's PASID table, then its
 * scalable-mode context entry (P, FPD, DTE, PASIDE, PDTS, directory pointer,
 * RID_PASID = 0).  Tables it needs (the bus's context table, the device's
 * PASID directory and table) are allocated first; then every entry is
 * written with the word holding P last, and cleaned (ECAP.C = 0) before the
 * next level points to it; the root entry last.  The unit may then cache
 * the new entry only under caching mode: issue ik_vtd_plan_change(*chg)
 * (ik_vtd_plan_issue()) before the device does DMA.
 * Errors, nothing written: -EINVAL (NULL u, a or chg; bus or devfn > 255;
 * did out of range; unknown flags; pt NULL without PASSTHROUGH or set with
 * it; a table set of another format than the mode allows; levels the unit's
 * SAGAW lacks (second-level) or 5-level first-level without CAP.FL5LP;
 * ATS without ECAP.DT, PASSTHROUGH without ECAP.PT, PASID in legacy mode or
 * without ECAP.PASID; a root table above HAW); -EBUSY (the entry is
 * present: clear it and issue its invalidations first - a present entry is
 * never rewritten in place); -ENOMEM, -ERANGE (table memory).  Entries may
 * be set before ik_vtd_enable() (the root table is then allocated here; the
 * enable's global invalidation covers them, and their plans need not be
 * issued - ik_vtd_plan_issue() is -ENODEV until then).  Cost: O(1) plus the
 * allocations; scalable mode O(1) bookkeeping allocations from cfg->alloc.
 */
IK_API int ik_vtd_context_set(struct ik_vtd *u, unsigned bus, unsigned devfn,
			      const struct ik_vtd_attach *a, struct ik_vtd_change *chg);

/*
 * ik_vtd_context_clear - detach bus:devfn: the word with P first, then the
 * rest, cleaned; scalable mode also clears the RID_PASID PASID entry (the
 * directory and tables stay allocated for a later set).  *chg says what to
 * invalidate (ik_vtd_plan_change()); until that completes the unit may
 * still translate through the old entry.  Errors: -EINVAL (bad arguments),
 * -ENOENT (not present), -EBUSY (scalable: PASIDs other than 0 are still
 * set); nothing written then.
 */
IK_API int ik_vtd_context_clear(struct ik_vtd *u, unsigned bus, unsigned devfn,
				struct ik_vtd_change *chg);

/*
 * ik_vtd_pasid_set / ik_vtd_pasid_clear - scalable mode: the PASID entry of
 * `pasid` (0 is RID_PASID; others need the context entry set with
 * IK_VTD_ATTACH_PASID) of a device whose context entry is set, as
 * ik_vtd_context_set() writes it (PASID table allocated on first use; P
 * last).  Errors as ik_vtd_context_set() / _clear(), and -EINVAL for legacy
 * mode, pasid >= 2^pasid_bits (config) or outside ECAP.PSS, or PASIDE not
 * set; -ENOENT for a device whose context entry is not present (set) or a
 * PASID entry not present (clear); -EBUSY for a present PASID entry (set).
 */
IK_API int ik_vtd_pasid_set(struct ik_vtd *u, unsigned bus, unsigned devfn, ik_u32 pasid,
			    const struct ik_vtd_attach *a, struct ik_vtd_change *chg);
IK_API int ik_vtd_pasid_clear(struct ik_vtd *u, unsigned bus, unsigned devfn, ik_u32 pasid,
			      struct ik_vtd_change *chg);

/*
 * ik_vtd_fault_pop - the oldest pending fault record (from FSTS.FRI, in
 * ring order over the CAP.NFR records at CAP.FRO): decoded into *f, then
 * cleared (its F bit written with 1).  When FSTS.PFO (overflow) is set it is
 * cleared too and reported in f->overflow.  0; -ENOENT when no record is
 * pending (a set PFO is still cleared); -EINVAL for NULL arguments.  Works
 * on an enabled or disabled unit.  Cost: at most NFR + 2 register reads.
 */
IK_API int ik_vtd_fault_pop(struct ik_vtd *u, struct ik_vtd_fault *f);

/* Counters since create. */
struct ik_vtd_stats {
	ik_u64 faults;	      /* records popped */
	ik_u64 overflows;     /* FSTS.PFO seen and cleared */
	ik_u64 wbf;	      /* write-buffer flushes */
	ik_u64 tables;	      /* table pages allocated (root, context, PASID) */
	ik_u64 queue_errors;  /* IQE/ITE/ICE reported to the queue */
};
/* Snapshot; -EINVAL for NULL arguments. */
IK_API int ik_vtd_get_stats(const struct ik_vtd *u, struct ik_vtd_stats *st);

IK_END_DECLS

#endif /* IOMMUKIT_DRV_VTD_H */
