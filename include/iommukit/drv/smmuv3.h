/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/drv/smmuv3.h - the ARM SMMUv3 driver core: everything between
 * iommukit's page tables and command queue and a real (or emulated) SMMUv3.
 *
 * What it is for.  A kernel port, a firmware or a VMM that drives an SMMUv3
 * needs the same pieces every time: read the ID registers; build stream
 * table entries (STE) and context descriptors (CD) from a page-table set;
 * lay out stream and CD tables and update them in an order the SMMU never
 * sees half-written; point an ik_cmdq at the command queue registers (with
 * the error protocol of GERROR/GERRORN); bring the SMMU up and down with
 * bounded waits; read the event queue; and turn an unmap's gather into the
 * smallest correct list of invalidation commands.  This unit is those
 * pieces.  It touches registers only through struct ik_mmio and allocates
 * SMMU-visible memory only through struct ik_dma_mem (<iommukit/drv/io.h>),
 * its own bookkeeping only through a struct ik_allocator; it is
 * freestanding and polls (no interrupt is needed: CMD_SYNC completion is
 * seen by polling SMMU_CMDQ_CONS, as QEMU's SMMUv3 requires).
 *
 * Layers, each usable alone:
 *   pure encoders   ik_smmu_idr_decode, ik_smmu_ste_build, ik_smmu_cd_build,
 *                   ik_smmu_event_decode, ik_smmu_gerror_decode,
 *                   ik_smmu_plan_inv: no memory, no registers;
 *   tables          struct ik_smmu_strtab / ik_smmu_cdtab: memory from
 *                   ik_dma_mem, entry updates in a safe order, with the
 *                   CFGI_* + CMD_SYNC they need issued through a callback;
 *   the device      struct ik_smmu: registers, the command queue, the event
 *                   queue, bring-up and teardown.
 *
 * Glossary
 *   SID, SSID   StreamID (which device) and SubstreamID (PASID: which
 *               context of a device).
 *   STE         stream table entry, 64 bytes: how a stream is translated
 *               (abort, bypass, stage 1, stage 2, both: "nested").
 *   CD          context descriptor, 64 bytes: a stage-1 context (TTB0, TCR
 *               fields, MAIR, ASID), found through the STE's CD table.
 *   L1STD, L1CD level-1 descriptors of 2-level stream and CD tables.
 *   IDR         the read-only ID registers SMMU_IDR0..5 (+ IIDR, AIDR).
 *   CFGI        configuration-cache invalidation (CFGI_STE, CFGI_CD, ...):
 *               after changing an STE or CD the SMMU must be told, and a
 *               CMD_SYNC must complete, before the change is known to be in
 *               effect.
 *   GERROR/GERRORN  global error register pair: an error is active while
 *               the two differ in its bit; software acknowledges by
 *               toggling GERRORN.
 *   coherent    the SMMU's table walks and queue accesses snoop the CPU
 *               caches: SMMU_IDR0.COHACC and a DMA memory without a clean
 *               hook (ik_smmu_coherent()).  Otherwise every structure is
 *               cleaned after CPU writes and accessed non-cacheable.
 *   plan        the invalidation commands for a gather (ik_smmu_plan_inv).
 *
 * Word order.  STEs, CDs, descriptors, commands and event records are
 * little-endian 64-bit words, word k holding bits [64k+63:64k] as IHI 0070
 * numbers them; the library stores native 64-bit words, so the host must be
 * little-endian (as every SMMUv3 system iommukit targets is; the
 * identification refuses an SMMU whose table walks are big-endian only).
 *
 * Synchronization table
 *   call                                   may run concurrently with
 *   -------------------------------------  ------------------------------------
 *   pure encoders and decoders             anything (no shared state)
 *   ik_smmu_strtab_write/_read, cdtab_*    nothing else on the same table
 *                                          (caller serialises writers of one
 *                                          table); the SMMU reads it all along
 *   ik_smmu_issue, ik_smmu_inv_gather,     each other and every other call
 *   ik_smmu_write_ste/_cd (the queue part)  below except reset/disable/destroy
 *                                          (the queue is ik_cmdq: lock-free)
 *   ik_smmu_write_ste / ik_smmu_write_cd   not with another write of the same
 *                                          table
 *   ik_smmu_event_pop                      one caller at a time (the event
 *                                          queue has one consumer)
 *   ik_smmu_gerror_poll                    anything but reset/disable/destroy
 *   ik_smmu_get_stats, _idr, _cmdq         anything but destroy
 *   ik_smmu_create/reset/disable/destroy   nothing else on the object
 * Callbacks: the issue callback of the table functions is called from the
 * writing thread, with no iommukit lock held.
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_DRV_SMMUV3_H
#define IOMMUKIT_DRV_SMMUV3_H

#include <iommukit/env.h>
#include <iommukit/drv/io.h>
#include <iommukit/cmd/smmuv3.h>
#include <iommukit/cmdq.h>
#include <iommukit/pgtable.h>

IK_BEGIN_DECLS

/* ================================================================ registers */

/* Register offsets (IHI 0070, "Registers"); page 1 starts at 0x10000. */
#define IK_SMMU_IDR0 0x00u
#define IK_SMMU_IDR1 0x04u
#define IK_SMMU_IDR2 0x08u
#define IK_SMMU_IDR3 0x0cu
#define IK_SMMU_IDR4 0x10u
#define IK_SMMU_IDR5 0x14u
#define IK_SMMU_IIDR 0x18u
#define IK_SMMU_AIDR 0x1cu
#define IK_SMMU_CR0 0x20u
#define IK_SMMU_CR0ACK 0x24u
#define IK_SMMU_CR1 0x28u
#define IK_SMMU_CR2 0x2cu
#define IK_SMMU_STATUSR 0x40u
#define IK_SMMU_GBPA 0x44u
#define IK_SMMU_IRQ_CTRL 0x50u
#define IK_SMMU_IRQ_CTRLACK 0x54u
#define IK_SMMU_GERROR 0x60u
#define IK_SMMU_GERRORN 0x64u
#define IK_SMMU_STRTAB_BASE 0x80u     /* 64-bit */
#define IK_SMMU_STRTAB_BASE_CFG 0x88u
#define IK_SMMU_CMDQ_BASE 0x90u       /* 64-bit */
#define IK_SMMU_CMDQ_PROD 0x98u
#define IK_SMMU_CMDQ_CONS 0x9cu
#define IK_SMMU_EVTQ_BASE 0xa0u       /* 64-bit */
#define IK_SMMU_EVTQ_PROD 0x100a8u    /* page 1 */
#define IK_SMMU_EVTQ_CONS 0x100acu    /* page 1 */

/* CR0 / CR0ACK. */
#define IK_SMMU_CR0_SMMUEN (1u << 0)
#define IK_SMMU_CR0_PRIQEN (1u << 1)
#define IK_SMMU_CR0_EVTQEN (1u << 2)
#define IK_SMMU_CR0_CMDQEN (1u << 3)
#define IK_SMMU_CR0_ATSCHK (1u << 4)
/* CR1: cacheability (IC/OC) and shareability (SH) of queue and table
 * accesses. */
#define IK_SMMU_CR1_QUEUE_IC_SHIFT 0
#define IK_SMMU_CR1_QUEUE_OC_SHIFT 2
#define IK_SMMU_CR1_QUEUE_SH_SHIFT 4
#define IK_SMMU_CR1_TABLE_IC_SHIFT 6
#define IK_SMMU_CR1_TABLE_OC_SHIFT 8
#define IK_SMMU_CR1_TABLE_SH_SHIFT 10
#define IK_SMMU_CR1_CACHE_NC 0u
#define IK_SMMU_CR1_CACHE_WB 1u
#define IK_SMMU_CR1_CACHE_WT 2u
/* Shareability values (CR1, STE S1CSH / S2SH0, CD SH0). */
#define IK_SMMU_SH_NSH 0u
#define IK_SMMU_SH_OSH 2u
#define IK_SMMU_SH_ISH 3u
/* CR2. */
#define IK_SMMU_CR2_E2H (1u << 0)
#define IK_SMMU_CR2_RECINVSID (1u << 1)
#define IK_SMMU_CR2_PTM (1u << 2)
/* GBPA (global bypass attributes, in effect while SMMUEN is 0). */
#define IK_SMMU_GBPA_ABORT (1u << 20)
#define IK_SMMU_GBPA_UPDATE (1u << 31)
/* GERROR / GERRORN. */
#define IK_SMMU_GERROR_CMDQ_ERR (1u << 0)
#define IK_SMMU_GERROR_EVTQ_ABT_ERR (1u << 2)
#define IK_SMMU_GERROR_PRIQ_ABT_ERR (1u << 3)
#define IK_SMMU_GERROR_MSI_CMDQ_ABT_ERR (1u << 4)
#define IK_SMMU_GERROR_MSI_EVTQ_ABT_ERR (1u << 5)
#define IK_SMMU_GERROR_MSI_PRIQ_ABT_ERR (1u << 6)
#define IK_SMMU_GERROR_MSI_GERROR_ABT_ERR (1u << 7)
#define IK_SMMU_GERROR_SFM_ERR (1u << 8)
/* STRTAB_BASE, STRTAB_BASE_CFG. */
#define IK_SMMU_STRTAB_BASE_RA (1ull << 62)
#define IK_SMMU_STRTAB_BASE_ADDR_MASK 0x000fffffffffffc0ull /* [51:6] */
#define IK_SMMU_STRTAB_CFG_LOG2SIZE_SHIFT 0 /* [5:0] */
#define IK_SMMU_STRTAB_CFG_SPLIT_SHIFT 6    /* [10:6] */
#define IK_SMMU_STRTAB_CFG_FMT_SHIFT 16     /* [17:16]: 0 linear, 1 2-level */
/* CMDQ_BASE, EVTQ_BASE. */
#define IK_SMMU_Q_BASE_RWA (1ull << 62)     /* CMDQ: RA; EVTQ: WA */
#define IK_SMMU_Q_BASE_ADDR_MASK 0x000fffffffffffe0ull /* [51:5] */
#define IK_SMMU_Q_BASE_LOG2SIZE_MASK 0x1full /* [4:0] */
/* CMDQ_CONS.ERR, EVTQ_PROD.OVFLG, EVTQ_CONS.OVACKFLG. */
#define IK_SMMU_CMDQ_CONS_ERR_SHIFT 24      /* [30:24] */
#define IK_SMMU_CMDQ_CONS_ERR_MASK 0x7fu	/* the 7-bit error code, after the shift */
#define IK_SMMU_EVTQ_OVFLG (1u << 31)

/* ECMDQ (SMMUv3.3 enhanced command queues, IHI 0070 "Enhanced Command queue
 * interfaces").  IDR1.ECMDQ says they exist; IDR6 how many: 2^LOG2NUMP
 * command-queue control pages of 2^LOG2NUMQ queues each.  Control page n is
 * described by CMDQ_CONTROL_PAGE_BASEn (ADDR: its offset from register page
 * 0, 64 KiB aligned; CMDQGS 1: 64 KiB pages; PRESET: the queues are
 * registers); queue q of a page has ECMDQ_BASE/PROD/CONS at 0x100 * q in it.
 * A queue is enabled when PROD.EN == CONS.ENACK == 1, disabled when both
 * are 0; an error toggles CONS.ERR (code in ERR_REASON, CONS at the failing
 * command) and GERROR.CMDQP_ERR; the queue consumes again once PROD.ERRACK
 * equals CONS.ERR. */
#define IK_SMMU_IDR1_ECMDQ (1u << 31)
#define IK_SMMU_IDR6 0x190u
#define IK_SMMU_IDR6_LOG2NUMP_SHIFT 24	/* [27:24] */
#define IK_SMMU_IDR6_LOG2NUMQ_SHIFT 16	/* [19:16] */
#define IK_SMMU_CP_BASE(n) (0x4000u + 32u * (n))	/* 64-bit, read-only */
#define IK_SMMU_CP_BASE_ADDR_MASK 0x00ffffffffff0000ull	/* [55:16] */
#define IK_SMMU_CP_BASE_CMDQGS_SHIFT 1	/* [2:1]: 1 = 64 KiB */
#define IK_SMMU_CP_BASE_PRESET 1u
#define IK_SMMU_ECMDQ_BASE(q) (0x100u * (q))	/* in its control page; 64-bit */
#define IK_SMMU_ECMDQ_PROD(q) (0x100u * (q) + 0x8u)
#define IK_SMMU_ECMDQ_CONS(q) (0x100u * (q) + 0xcu)
#define IK_SMMU_ECMDQ_PROD_EN (1u << 31)
#define IK_SMMU_ECMDQ_PROD_ERRACK (1u << 23)
#define IK_SMMU_ECMDQ_CONS_ENACK (1u << 31)
#define IK_SMMU_ECMDQ_CONS_ERR (1u << 23)
#define IK_SMMU_ECMDQ_CONS_REASON_SHIFT 24	/* [26:24], CERROR_* */
#define IK_SMMU_ECMDQ_IDX_MASK 0xfffffu	/* RD/WR and their wrap bit, [19:0] */
#define IK_SMMU_GERROR_CMDQP_ERR (1u << 9)

/* ================================================================ identification */

/*
 * struct ik_smmu_idr - SMMU_IDR0..5, IIDR and AIDR, field by field (names as
 * IHI 0070 gives them).  Enumerated fields keep the register's encoding:
 *   ttf          1 AArch32 tables only, 2 AArch64 only, 3 both;
 *   httu         0 none, 1 access flag, 2 access flag and dirty state;
 *   ttendian     0 mixed, 2 little-endian only, 3 big-endian only;
 *   stall_model  0 stall and terminate, 1 terminate only, 2 stall forced;
 *   st_level     0 linear stream table only, 1 2-level also;
 *   bbml         break-before-make level (IDR3.BBML);
 *   oas_enc      IDR5.OAS: 0..6 = 32, 36, 40, 42, 44, 48, 52 bits; `oas`
 *                holds the bits (0 for a reserved encoding);
 *   vax          IDR5.VAX: 0 48-bit VAs, 1 52-bit VAs (64K granule, or
 *                4K/16K with DS);
 *   ds           IDR5.DS: 52-bit addresses with 4K/16K granules (FEAT_LPA2
 *                tables: CD.DS, STE.S2DS);
 *   sidsize, ssidsize  bits of StreamID and SubstreamID;
 *   cmdqs, eventqs, priqs  log2 of the largest queue of each kind.
 */
struct ik_smmu_idr {
	ik_u32 raw[6]; /* IDR0..IDR5 as read */
	ik_u32 iidr, aidr;	/* IIDR and AIDR as read */
	/* IDR0 */
	bool s2p, s1p;
	ik_u8 ttf;
	bool cohacc, btm;
	ik_u8 httu;
	bool dormhint, hyp, ats, ns1ats, asid16, msi, sev, atos, pri, vmw, vmid16, cd2l,
		vatos, atsrecerr, term_model;
	ik_u8 ttendian, stall_model, st_level;
	/* IDR1 */
	ik_u8 sidsize, ssidsize, priqs, eventqs, cmdqs;
	bool attr_perms_ovr, attr_types_ovr, rel, queues_preset, tables_preset, ecmdq;
	/* IDR2 */
	ik_u16 ba_vatos;
	/* IDR3 */
	bool had, pbha, xnx, pps, mpam, fwb, stt, ril, e0pd, ptwnnc;
	ik_u8 bbml;
	/* IDR5 */
	ik_u8 oas_enc, oas, vax;
	bool gran4k, gran16k, gran64k, ds;
	ik_u16 stall_max;
	/* IIDR */
	ik_u16 implementer, productid;
	ik_u8 revision, variant;
	/* AIDR: SMMUv3.arch_minor when arch_major is 0 */
	ik_u8 arch_major, arch_minor;
};

/*
 * ik_smmu_idr_decode - decode idr[0..5] (SMMU_IDR0..IDR5, IDR4 kept raw
 * only), iidr and aidr into *out.  Total: every bit pattern decodes (a
 * reserved OAS encoding gives oas = 0).  -EINVAL for a NULL idr or out
 * (nothing written).  O(1).
 */
IK_API int ik_smmu_idr_decode(const ik_u32 idr[6], ik_u32 iidr, ik_u32 aidr,
			      struct ik_smmu_idr *out);

/*
 * ik_smmu_probe - read SMMU_IDR0..5, IIDR and AIDR through `m` and decode
 * them.  Only reads.  -EINVAL for a NULL m or out.  8 register reads.
 */
IK_API int ik_smmu_probe(const struct ik_mmio *m, struct ik_smmu_idr *out);

/*
 * ik_smmu_idr_usable - 0 if this core can drive the SMMU, else -ENODEV: it
 * needs AArch64 tables (TTF), little-endian or mixed-endian walks, a known
 * OAS, at least one of stage 1/2, one granule, queues of at least 4
 * entries (CMDQS, EVENTQS >= 2) and at least one StreamID bit (SIDSIZE).  -EINVAL for a NULL id.  O(1).
 */
IK_API int ik_smmu_idr_usable(const struct ik_smmu_idr *id);

/* Whether accesses to DMA memory `dma` are coherent for this SMMU:
 * IDR0.COHACC and no clean hook.  Decides CR1, STE S1C* and CD fetch
 * attributes, queue RA/WA hints.  id and dma must not be NULL. */
IK_API bool ik_smmu_coherent(const struct ik_smmu_idr *id, const struct ik_dma_mem *dma);

/* ================================================================ STE */

/* Config (STE[3:1]). */
#define IK_SMMU_STE_CFG_ABORT 0u  /* abort, no event */
#define IK_SMMU_STE_CFG_BYPASS 4u	/* bypass: no translation */
#define IK_SMMU_STE_CFG_S1 5u     /* stage 1 translate, stage 2 bypass */
#define IK_SMMU_STE_CFG_S2 6u     /* stage 1 bypass, stage 2 translate */
#define IK_SMMU_STE_CFG_NESTED 7u /* both */
/* S1Fmt: the CD table's layout. */
#define IK_SMMU_S1FMT_LINEAR 0u
#define IK_SMMU_S1FMT_2LVL_4K 1u  /* L2 tables of 64 CDs (4 KiB) */
#define IK_SMMU_S1FMT_2LVL_64K 2u /* L2 tables of 1024 CDs (64 KiB) */
/* S1DSS: what traffic without a SubstreamID uses when S1CDMax > 0. */
#define IK_SMMU_S1DSS_TERMINATE 0u
#define IK_SMMU_S1DSS_BYPASS 1u
#define IK_SMMU_S1DSS_SSID0 2u
/* S1CIR/S1COR (CD fetch cacheability). */
#define IK_SMMU_S1C_NC 0u
#define IK_SMMU_S1C_WBRA 1u
#define IK_SMMU_S1C_WT 2u
#define IK_SMMU_S1C_WB 3u
/* EATS (ATS translation requests). */
#define IK_SMMU_EATS_ABT 0u
#define IK_SMMU_EATS_TRANS 1u
#define IK_SMMU_EATS_S1CHK 2u /* split-stage: nested only, !IDR0.NS1ATS */
/* STRW (the translation regime of stage 1). */
#define IK_SMMU_STRW_NSEL1 0u
#define IK_SMMU_STRW_EL2 2u

/* STE bit positions (over the 512-bit entry), from IHI 0070 "Stream table
 * entry"; word k holds bits [64k+63:64k]. */
#define IK_SMMU_STE_V (1ull << 0)
#define IK_SMMU_STE_CFG_SHIFT 1        /* [3:1] */
#define IK_SMMU_STE_S1FMT_SHIFT 4      /* [5:4] */
#define IK_SMMU_STE_S1CTXPTR_MASK 0x000fffffffffffc0ull /* [51:6] */
#define IK_SMMU_STE_S1CDMAX_SHIFT 59   /* [63:59] */

/*
 * struct ik_smmu_ste_config - what an STE says.  Zero-initialise and set
 * what the config needs; every attribute override of the STE is left at
 * "use incoming" (SHCFG = 0b01 where IDR1.ATTR_TYPES_OVR makes it a field,
 * else 0, as RES0; MTCFG, ALLOCCFG, PRIVCFG, INSTCFG, NSCFG 0).
 *   config       IK_SMMU_STE_CFG_*.
 *   stage 1 (S1, NESTED): the CD table: s1_ctx_ptr (its device address,
 *                64-byte aligned), s1_fmt (IK_SMMU_S1FMT_*), s1_cdmax (log2
 *                of its CDs: 0 is one CD and no substreams), s1_dss
 *                (IK_SMMU_S1DSS_*, when s1_cdmax > 0), s1_cir/s1_cor
 *                (IK_SMMU_S1C_*) and s1_csh (IK_SMMU_SH_*) for CD fetches,
 *                s1_stalld (disable stalls; needs STALL_MODEL 0).
 *                ik_smmu_cdtab_ste() fills all of these from a CD table.
 *   stage 2 (S2, NESTED): s2_pt (an IK_PT_LPAE_S2 table set: S2T0SZ, S2SL0,
 *                S2IR0/OR0/SH0, S2TG, S2PS (0b110: 52 bits), S2HA/S2HD
 *                (IK_PT_QUIRK_DIRTY), S2DS (IK_LPAE_FLAG_LPA2 at 4K/16K)
 *                from ik_lpae_get_regs(); S2TTB = the root's address, bits
 *                [51:4]), s2_vmid.  S2AA64 and S2R (record faults) are set,
 *                S2PTW for NESTED.
 *   s2_vmid      also written for a stage-1-only STE on an SMMU with stage
 *                2 (S2VMID then tags the stage-1 entries; TLBI_NH_* name it);
 *                must be 0 on an SMMU without stage 2.
 *   eats         IK_SMMU_EATS_* (non-zero needs IDR0.ATS).
 *   strw         IK_SMMU_STRW_* (EL2 needs IDR0.HYP and config S1).
 */
struct ik_smmu_ste_config {
	unsigned config;	/* IK_SMMU_STE_CFG_* */
	ik_u64 s1_ctx_ptr;	/* stage 1: the CD table's device address, 64-byte aligned */
	ik_u8 s1_fmt, s1_cdmax, s1_dss;	/* IK_SMMU_S1FMT_*, log2 of the CDs, IK_SMMU_S1DSS_* */
	ik_u8 s1_cir, s1_cor, s1_csh;	/* CD fetches: IK_SMMU_S1C_* inner/outer, IK_SMMU_SH_* */
	bool s1_stalld;	/* disable stalls (needs STALL_MODEL 0) */
	const struct ik_pgtable *s2_pt;	/* stage 2: an IK_PT_LPAE_S2 table set */
	ik_u16 s2_vmid;	/* S2VMID (0 on an SMMU without stage 2) */
	ik_u8 eats, strw;	/* IK_SMMU_EATS_*, IK_SMMU_STRW_* */
};

/*
 * ik_smmu_ste_build - encode the STE `c` describes into ste[0..7], after
 * checking it against the SMMU's IDR: -EINVAL (ste untouched) for an
 * unknown config; a stage the SMMU lacks (S1P/S2P); s2_pt missing or not
 * IK_PT_LPAE_S2; a VMID above 255 without VMID16, or any VMID without
 * S2P; a stage-2 granule the SMMU
 * lacks (GRAN4K/16K/64K); a stage-2 output size (S2PS) or input size beyond
 * OAS, or a root beyond it; a coherent (write-back) stage-2 walk on an SMMU
 * without COHACC; S2DS without IDR5.DS; S2HD without HTTU = 2; a CD table pointer misaligned or beyond OAS, S1Fmt
 * unknown or 2-level without CD2L, S1CDMax beyond SSIDSIZE or above 20,
 * S1DSS above 2, an attribute value out of range, a cacheable CD fetch
 * (S1CIR/S1COR) without COHACC, S1STALLD with a
 * STALL_MODEL other than 0; EATS without ATS (or split-stage outside
 * NESTED or with NS1ATS); STRW EL2 without HYP or outside config S1; NULL
 * id, c or ste.  Abort and bypass STEs take no other field.  O(1).
 */
IK_API int ik_smmu_ste_build(const struct ik_smmu_idr *id, const struct ik_smmu_ste_config *c,
			     ik_u64 ste[8]);

/* ================================================================ CD */

/* CD flags (struct ik_smmu_cd_config.flags). */
#define IK_SMMU_CD_STALL 0x1u	  /* S = 1: stall faulting transactions */
#define IK_SMMU_CD_AFFD 0x2u	  /* AFFD = 1: an AF = 0 leaf does not fault */
#define IK_SMMU_CD_SHARED_ASID 0x4u /* ASET = 0: the ASID is shared with the
				       CPU (broadcast TLBI applies) */
#define IK_SMMU_CD_NO_RECORD 0x8u /* R = 0: faults are not recorded */
#define IK_SMMU_CD_TERM_RAZWI 0x10u /* A = 0: terminated reads RAZ, writes WI */
#define IK_SMMU_CD_FLAGS_ALL 0x1fu	/* every IK_SMMU_CD_* flag */

/* CD bit positions (over the 512-bit descriptor), from IHI 0070 "Context
 * descriptor".  Note how they differ from TCR_EL1's: TG0 [7:6] (TCR [15:14]),
 * EPD0 14 (TCR 7), EPD1 30 (TCR 23), HD 42 and HA 43 (TCR 40 and 39). */
#define IK_SMMU_CD_T0SZ_SHIFT 0	 /* [5:0] */
#define IK_SMMU_CD_TG0_SHIFT 6	 /* [7:6]: 0 4K, 1 64K, 2 16K */
#define IK_SMMU_CD_IR0_SHIFT 8	 /* [9:8] */
#define IK_SMMU_CD_OR0_SHIFT 10	 /* [11:10] */
#define IK_SMMU_CD_SH0_SHIFT 12	 /* [13:12] */
#define IK_SMMU_CD_EPD0 (1ull << 14)
#define IK_SMMU_CD_ENDI (1ull << 15)
#define IK_SMMU_CD_EPD1 (1ull << 30)
#define IK_SMMU_CD_V (1ull << 31)
#define IK_SMMU_CD_IPS_SHIFT 32	 /* [34:32] */
#define IK_SMMU_CD_AFFD_BIT (1ull << 35)
#define IK_SMMU_CD_AA64 (1ull << 41)
#define IK_SMMU_CD_HD (1ull << 42)
#define IK_SMMU_CD_HA (1ull << 43)
#define IK_SMMU_CD_S (1ull << 44)
#define IK_SMMU_CD_R (1ull << 45)
#define IK_SMMU_CD_A (1ull << 46)
#define IK_SMMU_CD_ASET (1ull << 47)
#define IK_SMMU_CD_ASID_SHIFT 48 /* [63:48] */
#define IK_SMMU_CD_TTB0_MASK 0x000ffffffffffff0ull /* word 1, [51:4] */
#define IK_SMMU_CD_DS (1ull << 58)	/* word 2: CD bit 186, FEAT_LPA2 tables */

/*
 * struct ik_smmu_cd_config - a stage-1 context: pt (an IK_PT_LPAE_S1 table
 * set), asid, flags (IK_SMMU_CD_*).  The CD gets T0SZ = 64 - ias, TG0 in
 * the CD's encoding, IR0/OR0/SH0 as the table set's walk attributes
 * (write-back inner-shareable when it is coherent), EPD0 = 0, EPD1 = 1,
 * ENDI = 0, IPS = its oas (0b110: 52 bits), HA/HD when it has
 * IK_PT_QUIRK_DIRTY, DS (word 2 bit 58) with IK_LPAE_FLAG_LPA2 at 4K/16K,
 * AA64 = 1, R = 1, A = 1, ASET = 1 (flags change S, AFFD, ASET, R, A),
 * ASID, MAIR (ik_lpae_get_regs()), TTB0 = the root's address (bits [51:4];
 * not TTBR's packing of BADDR[51:48] into [5:2]), V = 1.
 */
struct ik_smmu_cd_config {
	const struct ik_pgtable *pt;	/* an IK_PT_LPAE_S1 table set */
	ik_u16 asid;	/* the CD's ASID */
	unsigned flags;	/* IK_SMMU_CD_* flags */
};

/*
 * ik_smmu_cd_build - encode a CD into cd[0..7].  -EINVAL (cd untouched):
 * pt missing or not IK_PT_LPAE_S1; no stage 1 (S1P); a granule the SMMU
 * lacks; an output size (IPS) or TTB0 beyond OAS; an input size over 48
 * bits without IDR5.VAX; DS without IDR5.DS; an ASID above 255
 * without ASID16; IK_PT_QUIRK_DIRTY without HTTU = 2; a coherent walk
 * without COHACC; STALL without STALL_MODEL 0, or no STALL with STALL_MODEL
 * 2 (forced); TERM_RAZWI with TERM_MODEL 1; an unknown flag; NULL id, c or
 * cd.  O(1).
 */
IK_API int ik_smmu_cd_build(const struct ik_smmu_idr *id, const struct ik_smmu_cd_config *c,
			    ik_u64 cd[8]);

/* ================================================================ tables */

/*
 * The issue callback of the table writers: issue cmds[0..n) followed by a
 * CMD_SYNC and wait for the sync; 0, or a negative errno (the writer stops
 * and returns it).  struct ik_smmu's writers pass their own; a VMM or a
 * driver with its own queue passes one of its own.
 */
typedef int (*ik_smmu_issue_fn)(void *ctx, const struct ik_smmu_cmd *cmds, unsigned n);

/*
 * Safe update order (what ik_smmu_strtab_write / ik_smmu_cdtab_write do).
 * The SMMU may read an entry at any time, 64 bits at a time (single-copy
 * atomic per word, not per entry), and may cache what it read until a CFGI.
 *   - Unchanged entry: nothing is written, nothing issued.
 *   - Entry not valid now (STE V = 0 / CD V = 0), or exactly one 64-bit word
 *     changes: words other than word 0 first, then word 0 (which holds V),
 *     each a single 64-bit store, cleaned (ik_dma_clean) before the next
 *     step; then CFGI_STE (CFGI_CD for each SID given) + CMD_SYNC.  A
 *     newly valid entry becomes visible whole; a one-word change is seen
 *     either old or new.  An entry becoming invalid has word 0 written
 *     first.
 *   - Valid entry, several words change (break-before-make): word 0 becomes
 *     an entry that takes no other word (STE: V = 1, Config = abort, no
 *     event; CD: V = 0), clean, CFGI + CMD_SYNC; then the other words, clean,
 *     word 0, clean, CFGI + CMD_SYNC.  Traffic of that stream (substream) is
 *     aborted in between.
 *   - A new L2 table (2-level): allocated, zeroed, cleaned, then its L1
 *     descriptor written (one 64-bit store) and cleaned; the CFGI that
 *     follows the entry's write is then a non-leaf one (Leaf = 0), which
 *     also drops a cached invalid L1 descriptor.
 * The caller still owns TLB maintenance: a changed translation (a new
 * TTB0, a changed ASID/VMID) needs its TLBI_NH_ASID / TLBI_S12_VMALL.
 * A NULL issue function means "the SMMU does not read this table now"
 * (before SMMUEN, or a table not yet installed): words are written and
 * cleaned in the same order, but nothing is issued.
 */

/* CFGI_STE(sid, leaf) + CMD_SYNC into out[0..1]; returns 2.  O(1). */
IK_API int ik_smmu_cfgi_ste_cmds(ik_u32 sid, bool leaf, struct ik_smmu_cmd out[2]);
/* CFGI_CD(sid, ssid, leaf) + CMD_SYNC into out[0..1]; returns 2, or
 * -EINVAL for an ssid of more than 20 bits or a NULL out.  O(1). */
IK_API int ik_smmu_cfgi_cd_cmds(ik_u32 sid, ik_u32 ssid, bool leaf, struct ik_smmu_cmd out[2]);

/*
 * struct ik_smmu_strtab - a stream table in DMA memory.
 *   idr        the SMMU's (copied fields: SIDSIZE, ST_LEVEL, OAS).
 *   dma        DMA memory for the table and its L2 tables (must outlive it).
 *   alloc      bookkeeping (the L2 pointer array of a 2-level table); NULL:
 *              the env's.
 *   log2size   StreamID bits it covers (SIDs 0 .. 2^log2size - 1), 1 ..
 *              IDR1.SIDSIZE; linear: at most 24 (1 GiB); 2-level: at most
 *              split + 17 (an L1 table of 2^17 descriptors, 1 MiB).
 *   two_level  2-level (needs IDR0.ST_LEVEL = 1; log2size must exceed
 *              split); else linear.
 *   split      2-level: an L2 table holds 2^split STEs: 6, 8 or 10 (4, 16,
 *              64 KiB); 0 means 8.
 * The linear table, or the L1 table, is allocated (aligned to its size) and
 * zeroed at init: every STE invalid (V = 0: C_BAD_STE) or every L1
 * descriptor invalid (Span = 0: C_BAD_STREAMID).  L2 tables are allocated
 * on the first write into their range (aligned to their size).
 * Fields are private.
 */
struct ik_smmu_strtab_config {
	const struct ik_smmu_idr *idr;	/* the SMMU's ID registers */
	const struct ik_dma_mem *dma;	/* DMA memory for the table and its L2 tables */
	const struct ik_allocator *alloc;	/* bookkeeping; NULL: the env's */
	unsigned log2size;	/* StreamID bits covered */
	bool two_level;	/* 2-level, else linear */
	unsigned split;	/* 2-level: log2 of the STEs per L2 table (0: 8) */
};

/* A stream table (ik_smmu_strtab_init()); fields are private. */
struct ik_smmu_strtab {
	const struct ik_dma_mem *dma;	/* private: the DMA memory */
	const struct ik_allocator *alloc;	/* private: the bookkeeping allocator */
	ik_u64 *base;	     /* linear: the STEs; 2-level: the L1 descriptors */
	ik_u64 base_dma;	/* private: device address of base */
	ik_size base_size;	/* private: bytes of base */
	ik_u64 **l2;	     /* 2-level: CPU addresses of L2 tables (or NULL) */
	ik_u64 *l2_dma;	/* private: device addresses of the L2 tables */
	ik_u32 nl1;	/* private: L1 descriptors */
	ik_u32 l2_tables;	/* private: L2 tables allocated */
	ik_u8 log2size, split, oas;	/* private: the config's, and the SMMU's OAS */
	bool two_level, coherent;	/* private: layout; walks are cache-coherent */
};

/*
 * ik_smmu_strtab_init - allocate and zero the table (and the 2-level
 * bookkeeping).  -EINVAL (NULL t or c, no idr or dma, a size or split out of
 * range, 2-level without ST_LEVEL), -ENOMEM / -ERANGE (from ik_dma_alloc;
 * -ERANGE also for a table beyond OAS): nothing allocated, *t untouched.
 * Cost: O(table size) to zero; 1 DMA + (2-level) 1 bookkeeping allocation.
 */
IK_API int ik_smmu_strtab_init(struct ik_smmu_strtab *t, const struct ik_smmu_strtab_config *c);
/* Free the table and every L2 table; NULL (or a zeroed struct) is ignored.
 * The SMMU must no longer read it. */
IK_API void ik_smmu_strtab_fini(struct ik_smmu_strtab *t);
/* SMMU_STRTAB_BASE (with RA when coherent) and SMMU_STRTAB_BASE_CFG for the
 * table.  t, base and cfg must not be NULL. */
IK_API void ik_smmu_strtab_regs(const struct ik_smmu_strtab *t, ik_u64 *base, ik_u32 *cfg);

/*
 * ik_smmu_strtab_write - make `ste` the STE of `sid`, in the safe order
 * above, issuing CFGI_STE + CMD_SYNC through fn (may be NULL, see above).
 * Returns 0; -EINVAL (NULL t or ste, sid >= 2^log2size; nothing written);
 * -ENOMEM / -ERANGE (a needed L2 table; nothing written); fn's error (the
 * STE is then in the state of the step that failed: the new value, or
 * abort during a break-before-make).  Cost: up to 2 issue calls, 2-4
 * cleans.
 */
IK_API int ik_smmu_strtab_write(struct ik_smmu_strtab *t, ik_u32 sid, const ik_u64 ste[8],
				ik_smmu_issue_fn fn, void *ctx);
/* The current STE of `sid` (zeros where no L2 table exists).  -EINVAL for
 * NULL arguments or an sid out of range.  O(1). */
IK_API int ik_smmu_strtab_read(const struct ik_smmu_strtab *t, ik_u32 sid, ik_u64 ste[8]);

/*
 * struct ik_smmu_cdtab - a CD table (the S1ContextPtr of an STE).
 *   idr, dma, alloc  as for the stream table;
 *   log2_cds         S1CDMax: 2^log2_cds CDs (SSIDs), 0 .. IDR1.SSIDSIZE
 *                    (and at most 20);
 *   fmt              IK_SMMU_S1FMT_*; 2-level needs IDR0.CD2L.  L2 tables
 *                    (64 or 1024 CDs) are allocated on the first write into
 *                    their range.
 * Fields are private.
 */
struct ik_smmu_cdtab_config {
	const struct ik_smmu_idr *idr;	/* the SMMU's ID registers */
	const struct ik_dma_mem *dma;	/* DMA memory for the table and its L2 tables */
	const struct ik_allocator *alloc;	/* bookkeeping; NULL: the env's */
	unsigned log2_cds;	/* S1CDMax: 2^log2_cds CDs */
	unsigned fmt;	/* IK_SMMU_S1FMT_* */
};

/* A CD table (ik_smmu_cdtab_init()); fields are private. */
struct ik_smmu_cdtab {
	const struct ik_dma_mem *dma;	/* private: the DMA memory */
	const struct ik_allocator *alloc;	/* private: the bookkeeping allocator */
	ik_u64 *base;	/* linear: the CDs; 2-level: the L1CDs */
	ik_u64 base_dma;	/* private: device address of base */
	ik_size base_size;	/* private: bytes of base */
	ik_u64 **l2;	/* private: 2-level: CPU addresses of L2 tables (or NULL) */
	ik_u64 *l2_dma;	/* private: device addresses of the L2 tables */
	ik_u32 nl1;	/* private: L1CDs */
	ik_u32 l2_tables;	/* private: L2 tables allocated */
	ik_u8 log2_cds, fmt, l2_log2, oas; /* private: config, log2 CDs per L2, OAS */
	bool coherent;	/* private: walks are cache-coherent */
};

/* As ik_smmu_strtab_init, for a CD table. */
IK_API int ik_smmu_cdtab_init(struct ik_smmu_cdtab *t, const struct ik_smmu_cdtab_config *c);
IK_API void ik_smmu_cdtab_fini(struct ik_smmu_cdtab *t);
/* Fill the stage-1 fields of an STE config (s1_ctx_ptr, s1_fmt, s1_cdmax,
 * s1_cir/cor/csh: write-back inner-shareable when coherent, else
 * non-cacheable outer-shareable) for this table.  t and c must not be
 * NULL. */
IK_API void ik_smmu_cdtab_ste(const struct ik_smmu_cdtab *t, struct ik_smmu_ste_config *c);

/*
 * ik_smmu_cdtab_write - make `cd` the CD of `ssid` in the safe order above;
 * the invalidation is CFGI_CD(sid, ssid) for each of sids[0..nsids) (the
 * streams whose STE points at this table), issued through fn in groups,
 * each group followed by a CMD_SYNC.  Returns as ik_smmu_strtab_write();
 * -EINVAL also for an ssid >= 2^log2_cds or sids NULL with nsids > 0.
 */
IK_API int ik_smmu_cdtab_write(struct ik_smmu_cdtab *t, ik_u32 ssid, const ik_u64 cd[8],
			       const ik_u32 *sids, unsigned nsids, ik_smmu_issue_fn fn, void *ctx);
/* The current CD of `ssid` (zeros where no L2 table exists). */
IK_API int ik_smmu_cdtab_read(const struct ik_smmu_cdtab *t, ik_u32 ssid, ik_u64 cd[8]);

/* ================================================================ events */

/* Event types (record bits [7:0]), IHI 0070 "Event queue record formats". */
#define IK_SMMU_EVT_F_UUT 0x01
#define IK_SMMU_EVT_C_BAD_STREAMID 0x02
#define IK_SMMU_EVT_F_STE_FETCH 0x03
#define IK_SMMU_EVT_C_BAD_STE 0x04
#define IK_SMMU_EVT_F_BAD_ATS_TREQ 0x05
#define IK_SMMU_EVT_F_STREAM_DISABLED 0x06
#define IK_SMMU_EVT_F_TRANSL_FORBIDDEN 0x07
#define IK_SMMU_EVT_C_BAD_SUBSTREAMID 0x08
#define IK_SMMU_EVT_F_CD_FETCH 0x09
#define IK_SMMU_EVT_C_BAD_CD 0x0a
#define IK_SMMU_EVT_F_WALK_EABT 0x0b
#define IK_SMMU_EVT_F_TRANSLATION 0x10
#define IK_SMMU_EVT_F_ADDR_SIZE 0x11
#define IK_SMMU_EVT_F_ACCESS 0x12
#define IK_SMMU_EVT_F_PERMISSION 0x13
#define IK_SMMU_EVT_F_TLB_CONFLICT 0x20
#define IK_SMMU_EVT_F_CFG_CONFLICT 0x21
#define IK_SMMU_EVT_E_PAGE_REQUEST 0x24
#define IK_SMMU_EVT_F_VMS_FETCH 0x25

/* Event Class (faults found during a walk). */
#define IK_SMMU_EVT_CLASS_CD 0u	 /* fetching the CD */
#define IK_SMMU_EVT_CLASS_TT 1u	 /* walking the translation tables */
#define IK_SMMU_EVT_CLASS_IN 2u	 /* the input address itself */

/*
 * struct ik_smmu_event - one 32-byte event record, decoded.
 *   type, name   the event type and its name ("F_TRANSLATION"; "IMPDEF"
 *                for 0xe0..0xef; "UNKNOWN" otherwise: never NULL);
 *   sid, ssv, ssid  the stream and substream (ssid valid when ssv);
 *   has_addr, addr  InputAddr (the address the device used) where the type
 *                has one (F_UUT, F_BAD_ATS_TREQ, F_TRANSL_FORBIDDEN,
 *                F_WALK_EABT, F_TRANSLATION..F_PERMISSION, F_TLB_CONFLICT,
 *                E_PAGE_REQUEST);
 *   has_ipa, ipa    the IPA of a stage-2 fault (F_TRANSLATION..F_PERMISSION
 *                with S2 set): record bits [243:204];
 *   has_fetch, fetch_addr  the structure or descriptor address whose fetch
 *                aborted (F_STE_FETCH, F_CD_FETCH, F_WALK_EABT,
 *                F_VMS_FETCH): bits [243:195];
 *   rnw, ind, pnu   read (not write), instruction (not data), privileged
 *                (not unprivileged) access, where the type has an access;
 *   s2           the fault is at stage 2; cls the Class (IK_SMMU_EVT_CLASS_*);
 *   stall, stag  the transaction is stalled, with its tag (for CMD_RESUME);
 *   overflow     the event queue overflowed before this record (records
 *                were lost; ik_smmu_event_pop() sets it);
 *   raw          the record's four words.
 */
struct ik_smmu_event {
	ik_u8 type;	/* the event type (IK_SMMU_EVT_*) */
	const char *name;	/* its name; never NULL */
	ik_u32 sid;	/* StreamID */
	bool ssv;	/* ssid is valid */
	ik_u32 ssid;	/* SubstreamID */
	bool has_addr, has_ipa, has_fetch;	/* which of addr, ipa, fetch_addr the type has */
	ik_u64 addr, ipa, fetch_addr;	/* InputAddr, stage-2 fault IPA, aborted fetch address */
	bool rnw, ind, pnu, s2, stall, overflow; /* RnW, InD, PnU, S2, Stall; records lost before */
	ik_u8 cls;	/* IK_SMMU_EVT_CLASS_* */
	ik_u16 stag;	/* stall tag (for CMD_RESUME) */
	ik_u64 raw[4];	/* the record's four words */
};

/* Decode rec[0..3] (hostile: any bits) into *ev.  -EINVAL for a NULL rec or
 * ev (nothing written).  O(1). */
IK_API int ik_smmu_event_decode(const ik_u64 rec[4], struct ik_smmu_event *ev);
/* The name of an event type ("C_BAD_CD"); "IMPDEF" or "UNKNOWN" as above. */
IK_API const char *ik_smmu_event_name(unsigned type);

/*
 * struct ik_smmu_gerror - the global errors active in a GERROR/GERRORN pair
 * (bits where they differ): `active` as a mask of IK_SMMU_GERROR_*, and one
 * flag per error.  SFM (service failure mode) needs a reset.
 */
struct ik_smmu_gerror {
	ik_u32 active;	/* mask of IK_SMMU_GERROR_* */
	/* one flag per IK_SMMU_GERROR_* error */
	bool cmdq_err, evtq_abt, priq_abt, msi_cmdq_abt, msi_evtq_abt, msi_priq_abt,
		msi_gerror_abt, sfm;
};

/* Decode the active errors of gerror ^ gerrorn.  -EINVAL for a NULL out. */
IK_API int ik_smmu_gerror_decode(ik_u32 gerror, ik_u32 gerrorn, struct ik_smmu_gerror *out);
/* The name of one GERROR bit (IK_SMMU_GERROR_*: "CMDQ_ERR"), NULL for a bit
 * without a name or a value that is not one bit. */
IK_API const char *ik_smmu_gerror_name(ik_u32 bit);

/* ================================================================ invalidation planner */

/* The usual threshold T: ik_smmu_inv_target.max_tlbi. */
#define IK_SMMU_PLAN_DEFAULT_MAX_TLBI 128u
/* An out[] that holds every plan for a threshold T (TLBIs, the nested
 * TLBI_NH_ALL, the CMD_SYNC). */
#define IK_SMMU_PLAN_MAX_CMDS(T) ((T) + 2u)

/* What ik_smmu_plan_inv() invalidates ("t" below). */
struct ik_smmu_inv_target {
	unsigned stage;	/* 1: TLBI_NH_*; 2: TLBI_S2_IPA / S12_VMALL */
	ik_u16 asid;	/* stage 1 tag (0 at stage 2) */
	ik_u16 vmid;	/* the STE's S2VMID (0 without stage 2) */
	bool nested;	/* stage 2 of a nested STE: add TLBI_NH_ALL */
	unsigned max_tlbi;	/* T, TLBIs before the whole-context fallback */
};

/*
 * ik_smmu_plan_inv - the invalidation of an ik_gather (issue 12 part 3):
 * the smallest correct list of commands, ending with one CMD_SYNC
 * (CS = NONE), for what unmaps of table set `pt` gathered in `g`.
 *
 * Choice table (T = t->max_tlbi, 0 = IK_SMMU_PLAN_DEFAULT_MAX_TLBI; "range"
 * is [g->start, g->end); G the table set's granule; Leaf = !g->walk):
 *
 *   gather                          SMMU     commands
 *   ------------------------------  -------  --------------------------------
 *   empty (start >= end)            any      none (returns 0, no CMD_SYNC)
 *   stage 1, range TLBIs <= T       RIL      TLBI_NH_VA(ASID, VMID, TG = G,
 *                                            NUM/SCALE, Leaf, TTL) per
 *                                            ik_smmu_tlbi_range() piece,
 *                                            CMD_SYNC
 *   stage 1, range/g->granule <= T  no RIL   TLBI_NH_VA(ASID, VMID, Leaf,
 *                                            TG = 0) at every g->granule step
 *                                            of the range, CMD_SYNC
 *   stage 1, more than T            any      TLBI_NH_ASID(ASID, VMID), CMD_SYNC
 *   stage 2, <= T (as stage 1)      RIL/not  TLBI_S2_IPA(VMID, ...) likewise,
 *                                            [nested: TLBI_NH_ALL(VMID)],
 *                                            CMD_SYNC
 *   stage 2, more than T            any      TLBI_S12_VMALL(VMID), CMD_SYNC
 *
 *   TTL (RIL only) is the level of g->granule's leaves (3 - engine level),
 *   and only where that is exact: !g->walk, and no naturally aligned block
 *   of the table set's next larger leaf size fits in the range (so every
 *   leaf cleared was of that size); else 0.  A TLBI without range (TG = 0)
 *   hits every entry holding its address, whatever the entry's size, so
 *   one per g->granule covers every leaf the unmaps cleared (an unlinked
 *   table reports the table set's granule).  Nested stage 2: an IPA
 *   invalidation does not reach combined stage-1+2 entries, hence the
 *   TLBI_NH_ALL of the VMID.  The whole-context fallback is also taken
 *   when the precise list does not fit in `max` (or would not encode).
 *   Commands are counted, not bytes: T bounds the TLBIs in the list.
 *
 * t: stage (1: TLBI_NH_*, tag asid and vmid - the STE's S2VMID, 0 on an
 * SMMU without stage 2; 2: TLBI_S2_IPA / S12_VMALL, tag vmid, asid 0),
 * nested, max_tlbi.  The stage must match pt's format (1 for
 * IK_PT_LPAE_S1, 2 for IK_PT_LPAE_S2).  A gather filled by hand
 * (ik_gather_add() alone, g->pt NULL) is accepted; its range is widened to
 * the stride.
 * Returns the number of commands written to out[0..max); -EINVAL (out and
 * nothing else touched): NULL id, pt, g, t or out; a table set that is not
 * LPAE or a stage that does not match it; a gather from another table set
 * (g->pt neither NULL nor pt); a gather range beyond the table set's ias;
 * a gather granule that is not a power of two; an ASID or VMID too wide
 * for ASID16/VMID16, an ASID at stage 2; nested with stage 1; -ENOSPC: max
 * below 2 for a non-empty gather (with max 2 the fallback is used).
 * Cost: O(commands).  Calls nothing.
 */
IK_API int ik_smmu_plan_inv(const struct ik_smmu_idr *id, const struct ik_pgtable *pt,
			    const struct ik_gather *g, const struct ik_smmu_inv_target *t,
			    struct ik_smmu_cmd *out, unsigned max);

/* ================================================================ the device */

struct ik_smmu; /* opaque */

/* Driver flags (struct ik_smmu_config.flags). */
#define IK_SMMU_F_ABORT_DISABLED 0x1u /* GBPA.ABORT: while SMMUEN = 0 (during
					 reset, after disable) incoming
					 transactions abort instead of
					 bypassing */
#define IK_SMMU_F_ECMDQ 0x2u /* use the ECMDQs when the SMMU has them (see
				ik_smmu_reset(), "ECMDQ" below) */
#define IK_SMMU_F_ALL 0x3u	/* every IK_SMMU_F_* flag */

#define IK_SMMU_DEFAULT_TIMEOUT_NS 1000000000ull	/* default ik_smmu_config.timeout_ns: 1 s */

/*
 * struct ik_smmu_config - what ik_smmu_create() needs.
 *   mmio        the register accessors (copied); page 1 (EVTQ_PROD/CONS)
 *               at +0x10000 through the same accessors.
 *   dma         DMA memory for the stream table, its L2 tables and the two
 *               queues (must outlive the object).
 *   alloc       bookkeeping (the object, the command queue state, L2
 *               pointers); NULL: the env's.
 *   cmdq_log2   command queue entries 2^n, 2 .. IDR1.CMDQS (0: min(8, CMDQS)).
 *   evtq_log2   event queue entries 2^n, 2 .. IDR1.EVENTQS (0: min(7,
 *               EVENTQS)).
 *   sid_bits    StreamID bits of the stream table, 1 .. IDR1.SIDSIZE (0:
 *               min(SIDSIZE, 16)).
 *   linear      force a linear stream table (else 2-level, split 8, when
 *               IDR0.ST_LEVEL allows and sid_bits > 8).
 *   timeout_ns  bound of every register wait and of the queue's waits (0:
 *               IK_SMMU_DEFAULT_TIMEOUT_NS).
 *   flags       IK_SMMU_F_*.
 */
struct ik_smmu_config {
	const struct ik_mmio *mmio;	/* register accessors (copied) */
	const struct ik_dma_mem *dma;	/* DMA memory for the tables and queues */
	const struct ik_allocator *alloc;	/* bookkeeping; NULL: the env's */
	unsigned cmdq_log2;	/* command queue entries 2^n (0: min(8, CMDQS)) */
	unsigned evtq_log2;	/* event queue entries 2^n (0: min(7, EVENTQS)) */
	unsigned sid_bits;	/* stream table StreamID bits (0: min(SIDSIZE, 16)) */
	bool linear;	/* force a linear stream table */
	ik_u64 timeout_ns;	/* register and queue wait bound (0: the default) */
	unsigned flags;	/* IK_SMMU_F_* */
};

/*
 * ik_smmu_create - probe the SMMU (register reads only) and allocate what
 * it needs: the stream table, the command queue ring (ik_dma_mem) and state
 * (ik_allocator), the event queue ring.  No register is written: the SMMU is
 * untouched until ik_smmu_reset().  Errors: -EINVAL (NULL cfg, mmio, dma or
 * out; a size out of range; unknown flags); -ENODEV (ik_smmu_idr_usable());
 * -ENOMEM, -ERANGE (DMA memory misaligned or beyond OAS): nothing left
 * allocated, *out untouched.
 */
IK_API int ik_smmu_create(const struct ik_smmu_config *cfg, struct ik_smmu **out);

/*
 * ik_smmu_reset - bring the SMMU up, polling, every wait bounded:
 *   1. GBPA.ABORT if IK_SMMU_F_ABORT_DISABLED (GBPA.UPDATE handshake);
 *   2. CR0 = 0, wait CR0ACK = 0; IRQ_CTRL = 0, wait IRQ_CTRLACK = 0;
 *      acknowledge global errors left active (GERRORN = GERROR);
 *   3. CR1 (queues and tables write-back inner-shareable when coherent,
 *      else non-cacheable outer-shareable), CR2 = RECINVSID | PTM;
 *   4. STRTAB_BASE (+RA when coherent), STRTAB_BASE_CFG;
 *   5. CMDQ_BASE (+RA, LOG2SIZE), CMDQ_PROD = CMDQ_CONS = 0, the ik_cmdq
 *      over the ring (completion by polling CONS: no MSI);
 *   6. CR0 = CMDQEN, wait; CFGI_ALL, TLBI_EL2_ALL (IDR0.HYP), TLBI_NSNH_ALL,
 *      CMD_SYNC, wait;
 *   7. EVTQ_BASE (+WA, LOG2SIZE), EVTQ_PROD = EVTQ_CONS = 0 (page 1),
 *      CR0 |= EVTQEN, wait;
 *   8. CR0 |= SMMUEN, wait;
 *   9. with IK_SMMU_F_ECMDQ and IDR1.ECMDQ (and control pages that
 *      ik_smmu_ecmdq_probe() accepts): up to ik_smmu_ecmdq_limit() queues
 *      (default IK_ENV_NR_CPUS()), each disabled (PROD.EN = 0, wait
 *      ENACK = 0), programmed (ECMDQ_BASE as CMDQ_BASE, CONS = 0,
 *      PROD.ERRACK = CONS.ERR) and enabled (PROD.EN = 1, wait ENACK = 1),
 *      rings allocated at the first reset.  If any does not acknowledge,
 *      those enabled are disabled again and commands keep using the single
 *      command queue (ik_smmu_ecmdq_count() is 0; counted in
 *      ik_smmu_ecmdq_stats.enable_timeouts); reset still returns 0.
 * STEs written before (with a NULL issue function) take effect at SMMUEN.
 * Returns 0; -ETIMEDOUT (an acknowledgement did not come; the SMMU is left
 * as far as it got: call ik_smmu_disable() or reset again); -EIO (the
 * initial invalidation was refused); -EINVAL for a NULL s.  May be called
 * again to re-initialise (the command queue restarts empty; no other call
 * may run on the object).
 */
IK_API int ik_smmu_reset(struct ik_smmu *s);

/* ik_smmu_disable - disable the ECMDQs in use (PROD.EN = 0, wait ENACK = 0;
 * a timeout is reported after the rest is done), GBPA.ABORT if
 * IK_SMMU_F_ABORT_DISABLED, then CR0 = 0 and wait for CR0ACK.  0,
 * -ETIMEDOUT, or -EINVAL for a NULL s. */
IK_API int ik_smmu_disable(struct ik_smmu *s);

/* ik_smmu_destroy - disable (if reset ran; a timeout is ignored) and free
 * everything: stream table and L2 tables, queues, the object.  NULL is
 * ignored. */
IK_API void ik_smmu_destroy(struct ik_smmu *s);

/* The decoded ID registers, the command queue (for ik_cmdq_issue() and
 * batches of the caller's own; NULL until ik_smmu_reset() has enabled it;
 * the main SMMU_CMDQ also while ECMDQs are in use, when ik_smmu_issue()
 * uses them instead: see ik_smmu_ecmdq_set()), and the stream table.  s
 * must not be NULL. */
IK_API const struct ik_smmu_idr *ik_smmu_get_idr(const struct ik_smmu *s);
IK_API struct ik_cmdq *ik_smmu_cmdq(struct ik_smmu *s);
IK_API struct ik_smmu_strtab *ik_smmu_get_strtab(struct ik_smmu *s);

/*
 * ik_smmu_issue - encode cmds[0..n) and issue them followed by a CMD_SYNC,
 * then wait (an ik_smmu_issue_fn with ctx = s), on the main command queue
 * or, with ECMDQs in use, on the calling CPU's ECMDQ (one queue for the
 * whole call; see "ECMDQ").  0; -EINVAL (NULL s, cmds
 * NULL with n > 0, a command that does not encode: nothing issued; or reset
 * has not run); -ETIMEDOUT, -EIO as ik_cmdq_issue() (the first error of
 * any group).  Commands are issued in order, 16 at a time, each group
 * followed by its CMD_SYNC (an error in any group is reported; the stack
 * holds one group); after a -ETIMEDOUT no further group is queued.
 */
IK_API int ik_smmu_issue(void *s, const struct ik_smmu_cmd *cmds, unsigned n);

/* ik_smmu_strtab_write() on the SMMU's stream table with ik_smmu_issue. */
IK_API int ik_smmu_write_ste(struct ik_smmu *s, ik_u32 sid, const ik_u64 ste[8]);
/* ik_smmu_cdtab_write() with ik_smmu_issue. */
IK_API int ik_smmu_write_cd(struct ik_smmu *s, struct ik_smmu_cdtab *cdt, ik_u32 ssid,
			    const ik_u64 cd[8], const ik_u32 *sids, unsigned nsids);

/*
 * ik_smmu_inv_gather - plan the gather's invalidation (ik_smmu_plan_inv()
 * with the SMMU's IDR) and issue it, waiting for its CMD_SYNC; then the
 * caller may ik_pgtable_gather_sync().  0 (also for an empty gather);
 * errors of the planner and of ik_smmu_issue().  Uses a plan of at most
 * IK_SMMU_PLAN_MAX_CMDS(12) commands on the stack (under 1 KiB, for kernel
 * stacks): t->max_tlbi above 12 (and 0) is taken as 12; a gather that needs
 * more TLBIs is invalidated by its whole context (TLBI_NH_ASID or
 * TLBI_S12_VMALL).  For a larger threshold, call ik_smmu_plan_inv() with a
 * plan of your own and ik_smmu_issue().
 */
IK_API int ik_smmu_inv_gather(struct ik_smmu *s, const struct ik_pgtable *pt,
			      const struct ik_gather *g, const struct ik_smmu_inv_target *t);

/*
 * ik_smmu_event_pop - the oldest event record: 0 with *ev filled; -ENOENT
 * when the queue is empty; -EINVAL for NULL arguments or before reset.
 * Overflow: when EVTQ_PROD.OVFLG differs from the OVACKFLG last written, the
 * SMMU dropped records: the overflow is acknowledged (EVTQ_CONS.OVACKFLG =
 * OVFLG with the next CONS write), counted, and reported in ev->overflow of
 * the record popped then.  One consumer at a time.  The record is read
 * after ik_dma_clean() over it: on a non-coherent system whose event queue
 * memory is cacheable, the clean hook must also invalidate (as a clean-
 * and-invalidate, "dc civac", does).  Cost: 1-2 register reads, one write.
 */
IK_API int ik_smmu_event_pop(struct ik_smmu *s, struct ik_smmu_event *ev);

/*
 * ik_smmu_gerror_poll - read GERROR and handle what is active: CMDQ_ERR
 * through the command queue's repair (ik_cmdq_poll_errors()), every other
 * error acknowledged by toggling its GERRORN bit.  *out (may be NULL)
 * receives what was active.  Returns the active mask (0: none), or -EINVAL
 * for a NULL s.
 */
IK_API int ik_smmu_gerror_poll(struct ik_smmu *s, struct ik_smmu_gerror *out);

/* ================================================================ ECMDQ */

/*
 * ECMDQ register mode.  With IK_SMMU_F_ECMDQ, ik_smmu_reset() gives the
 * object N = min(ECMDQs, ik_smmu_ecmdq_limit()) enhanced command queues,
 * each an ik_cmdq over its own ring, gathered in an ik_cmdq_set; the main
 * command queue stays enabled (bring-up uses it, and it is the fallback).
 *   CPU -> queue   ik_smmu_issue() (and everything built on it: STE/CD
 *                  writes, ik_smmu_inv_gather) picks the queue of the
 *                  calling CPU once per call (IK_ENV_CPU_ID() mod N) and
 *                  issues all its groups, each with its CMD_SYNC, there:
 *                  a batch and its sync never split across queues, and a
 *                  CMD_SYNC on an ECMDQ completes the commands of that queue
 *                  (which is all a caller needs: its own commands).  With
 *                  fewer queues than CPUs a queue is shared, and stays
 *                  lock-free multi-producer (ik_cmdq's reservation CAS); the
 *                  PROD register write, one publisher at a time already,
 *                  takes a per-queue lock shared only with the error
 *                  acknowledgement (both compose PROD from EN, ERRACK, WR).
 *   errors         per queue: the queue's read_cons hook sees CONS.ERR !=
 *                  ERRACK, decodes ERR_REASON into the CERROR the queue
 *                  repairs (ILL: replace with a no-op; ABT, ATC_INV_SYNC:
 *                  retry, then replace), and the ack hook sets PROD.ERRACK
 *                  = CONS.ERR; producers on other queues never notice.
 *                  ik_smmu_gerror_poll() acknowledges GERROR.CMDQP_ERR and
 *                  polls every ECMDQ for an error nobody waits on.
 *   hostile registers  a CONS beyond the PROD last written (no consumer can
 *                  be there) is ignored: the hook reports the last credible
 *                  CONS, so no sync is taken as complete before it is
 *                  (counted in hostile_cons; the main command queue's
 *                  hook does the same); an ERR toggled while CONS ==
 *                  PROD (no command to blame) is acknowledged without
 *                  touching the ring (spurious_errors); an ENACK that never
 *                  comes ends in the fallback above; waits are bounded by
 *                  the object's timeout_ns.
 */

/* What IDR6 and the control-page registers say (ik_smmu_ecmdq_probe()). */
struct ik_smmu_ecmdq_info {
	unsigned nump;	/* control pages */
	unsigned numq;	/* queues per page */
	unsigned nr;	/* nump * numq */
	ik_u32 page0;	/* register offset of control page 0 */
};

/*
 * ik_smmu_ecmdq_probe - read IDR6 and CMDQ_CONTROL_PAGE_BASE0..nump-1
 * (reads only).  -ENODEV: id has no ECMDQ, or the pages are not what this
 * core drives (PRESET clear, CMDQGS not 64 KiB, pages not contiguous in
 * ascending order, beyond a 32-bit register offset, more than 256 queues).
 * -EINVAL for NULL arguments.  1 + 2 * nump register reads.
 */
IK_API int ik_smmu_ecmdq_probe(const struct ik_mmio *m, const struct ik_smmu_idr *id,
			       struct ik_smmu_ecmdq_info *out);

/* ik_smmu_ecmdq_limit - use at most `max` ECMDQs (0: IK_ENV_NR_CPUS()),
 * from the next ik_smmu_reset() on.  -EINVAL for a NULL s or a max above
 * 256; -EBUSY once reset has allocated the queues (call it before the first
 * reset).  O(1). */
IK_API int ik_smmu_ecmdq_limit(struct ik_smmu *s, unsigned max);
/* ECMDQs in use (0: commands go to the single command queue).  s must not be
 * NULL. */
IK_API unsigned ik_smmu_ecmdq_count(const struct ik_smmu *s);
/* The set of ECMDQs in use, or NULL (ik_smmu_ecmdq_count() 0). */
IK_API struct ik_cmdq_set *ik_smmu_ecmdq_set(struct ik_smmu *s);

/* ECMDQ counters, all queues together. */
struct ik_smmu_ecmdq_stats {
	ik_u64 enable_timeouts;	/* resets that fell back to the single queue */
	ik_u64 spurious_errors;	/* ERR with nothing to blame, acknowledged */
	ik_u64 hostile_cons;	/* CONS reads beyond PROD, ignored (the main
				   command queue's counted here too) */
	struct ik_cmdq_stats cmdq;	/* the queues' counters, summed */
};
/* Snapshot.  -EINVAL for NULL arguments. */
IK_API int ik_smmu_get_ecmdq_stats(const struct ik_smmu *s, struct ik_smmu_ecmdq_stats *st);

/* Counters. */
struct ik_smmu_stats {
	ik_u64 events;		/* records popped */
	ik_u64 evtq_overflows;	/* overflows acknowledged */
	ik_u64 gerrors;		/* global errors acknowledged (CMDQ_ERR excluded) */
	ik_u64 ste_writes, cd_writes; /* entries changed through the object */
	ik_u64 issues;		/* ik_smmu_issue() calls */
	struct ik_cmdq_stats cmdq;	/* the main command queue's (ECMDQs:
					   ik_smmu_get_ecmdq_stats()) */
};
/* Snapshot (approximate while other calls run).  s and st must not be NULL. */
IK_API void ik_smmu_get_stats(const struct ik_smmu *s, struct ik_smmu_stats *st);

IK_END_DECLS

#endif /* IOMMUKIT_DRV_SMMUV3_H */
