/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/softvtd.h - a register-level Intel VT-d model: one DMA
 * remapping unit's register file (MMIO), its invalidation queue, its
 * root / context / PASID structures fetched from memory and its fault
 * recording, on top of a soft IOMMU (<iommukit/softiommu.h>) that does the
 * translating and caching.
 *
 * What it is for.  A driver core talks to a remapping unit only through
 * registers and memory.  This model answers those registers as the VT-d
 * specification ("Register descriptions", "Translation structure formats",
 * "Queued invalidation", "Fault recording") says, so that
 *   - the VT-d driver core (<iommukit/drv/vtd.h>) brings it up exactly as it
 *     brings up QEMU's intel-iommu or silicon, through the same struct
 *     ik_mmio hooks (ik_softvtd_mmio()), on any machine, and its paths
 *     (legacy and scalable mode, caching mode, queue errors, fault records)
 *     have an end-to-end test that needs no QEMU;
 *   - a VMM without an emulated VT-d unit gives its guest one: it routes
 *     the guest's MMIO accesses to the DRHD's register page to
 *     ik_softvtd_read32/write32 and its devices' DMA through
 *     ik_softvtd_dma(), with a phys_to_host hook that checks the guest's
 *     memory map (see "Host memory").  docs/vtd.md, "Embedding the register
 *     model", walks through it.
 *
 * What it models
 *   registers   VER, CAP, ECAP (from the config; read-only); GCMD -> GSTS
 *               with the one-command-per-write protocol (TE, SRTP, SFL,
 *               EAFL, WBF, QIE, IRE, SIRTP, CFI: a write that changes more
 *               than one persistent bit, or sets a one-shot bit with a
 *               persistent change, is ignored and counted in
 *               stats.gcmd_violations); RTADDR (latched by SRTP, with TTM);
 *               CCMD (register-based context-cache invalidation: global,
 *               domain, device; CAIG = CIRG); the IOTLB registers at
 *               ECAP.IRO (IVA, IOTLB: global, domain, page); FSTS (PFO, IQE,
 *               ICE, ITE write-1-to-clear; PPF from the records; FRI);
 *               FECTL / IECTL (IM; IP set when an event is raised, cleared
 *               when its status is); FEDATA/FEADDR/FEUADDR, IEDATA/IEADDR/
 *               IEUADDR (stored; nothing is signalled); IQH, IQT, IQA, ICS
 *               (IWC write-1-to-clear), IQERCD; NFR fault-recording
 *               registers at CAP.FRO.  64-bit registers are two 32-bit
 *               halves (struct ik_mmio's split).  Other offsets below
 *               IK_SOFTVTD_REG_SIZE read as zero and ignore writes; so do
 *               unaligned ones and offsets beyond.
 *   queue       when GCMD.QIE is acknowledged (GSTS.QIES), IQA is latched
 *               (base, DW, QS) and IQH is 0; every IQT write makes the
 *               descriptors from IQH to IQT run, in order, on the writing
 *               thread (the device runs when the doorbell rings; a wait
 *               has completed when the write returns), through the cmdq
 *               unit's software consumer (struct ik_cmdq_sw): each
 *               descriptor decoded (ik_vtd_desc_decode()) and checked
 *               against the unit's rules (CAP.PSI, CAP.MAMV, ECAP.PDS, the
 *               mode), invalidations executed on the soft IOMMU
 *               (ik_softiommu_exec_vtd()) and on the model's context and
 *               PASID caches; a wait writes its status (SW) and/or sets
 *               ICS.IWC (IF); the fence (FN) holds trivially (descriptors
 *               run in order, each completely).
 *   queue errors  FSTS.IQE with IQH at the bad descriptor and IQERCD.IQEI
 *               saying why: an IQT beyond the queue or with bit 4 set with
 *               256-bit descriptors (TAIL; the IQT value is not taken), a
 *               queue that is not memory or an injected fetch abort
 *               (FETCH), an unknown or disallowed type (TYPE), a reserved
 *               field or a value the unit's rules refuse (RESERVED), DW = 1
 *               without ECAP.SMTS or DW = 0 in scalable mode (WIDTH).  The
 *               queue stops; clearing IQE (software has replaced the
 *               descriptor, or rewritten IQT) resumes it at IQH, and an IQT
 *               write while IQE is set only records the tail.  FSTS.ITE: an
 *               injected device-TLB invalidation time-out; the next wait is
 *               aborted (its status is never written, IQH passes it) and
 *               the queue stops until ITE is cleared; IQERCD.ITESID is the
 *               device's SID.
 *   structures  legacy mode (RTADDR.TTM 00b): root entry -> context entry
 *               (TT 00b / 01b (ECAP.DT) second-level, 10b (ECAP.PT)
 *               pass-through; AW in CAP.SAGAW; DID below 2^(4 + 2 ND)).
 *               Scalable mode (TTM 01b, ECAP.SMTS): root entry (lower /
 *               upper context table) -> scalable-mode context entry -> PASID
 *               directory entry -> PASID entry of RID_PASID (word 1 of the
 *               context entry with ECAP.RPS, else PASID 0): PGTT first-level
 *               (ECAP.FLTS), second-level (ECAP.SLTS) or pass-through
 *               (ECAP.PT); nested is refused (invalid PASID entry).  Each
 *               is fetched through phys_to_host on a source id's first DMA
 *               after it was invalidated, and cached as the hardware caches
 *               it: a changed entry is not seen until a context-cache
 *               invalidation (CC descriptor or CCMD: global, domain,
 *               device with FM) or, in scalable mode, a PASID-cache
 *               invalidation (PC: global, domain, PASID) drops it.  An
 *               entry that is not present or faults is cached only under
 *               caching mode (CAP.CM), as CM allows.  Translations are cached
 *               by the soft IOMMU under the DID and dropped by IOTLB /
 *               PASID-based IOTLB invalidations.  A second-level input
 *               address at or above 2^MGAW faults (address width).
 *   faults      a DMA that cannot be translated writes a fault record: the
 *               next of the NFR records in ring order, F set, FR the
 *               specification's reason (legacy 0x1-0xd, scalable 0x30-0x86),
 *               T 0 for a write, SID, FI the page address.  Recording stops
 *               with FSTS.PFO when the next record still has F set (the
 *               fault is lost, stats.faults_lost) or PFO is set; FSTS.FRI is
 *               the record the first pending fault went to when PPF became
 *               set; PPF is the OR of the F bits; an F bit clears when
 *               written with 1.  Fault processing disable (context entry or
 *               PASID directory / PASID entry FPD) records nothing.
 *   injection   ik_softvtd_inject(): a device-TLB invalidation time-out,
 *               a descriptor fetch abort, GSTS bits that never follow their
 *               command.
 * Not modelled: interrupt remapping (IRE and SIRTP are acknowledged, the
 * table is not read), interrupts and MSIs (IP bits only), requests with
 * PASID (every DMA is a request without PASID), ATS translated requests,
 * page requests, advanced fault logging (EAFL acknowledged), the protected
 * memory regions, nested PASID entries, performance monitoring, virtual
 * commands.
 *
 * Hostile input.  Every register value and every byte the model reads from
 * memory (the queue, root, context, PASID directory and PASID entries,
 * page tables) may be anything: indexes are masked to the queue's size,
 * every address sum is checked for overflow before use, addresses at or
 * above 2^haw are not memory, and memory is reached only through
 * phys_to_host, which is asked for the whole range it must cover.  The
 * model never crashes, never reads or writes outside what the hook
 * returned, and reports what the specification reports (a queue error, a
 * fault record).
 *
 * Host memory.  config.phys_to_host(ctx, pa, len) turns a device (guest
 * physical) address into a host pointer for `len` bytes, or NULL.  It is
 * the same hook type as struct ik_softiommu_config.phys_to_host, and a VMM
 * passes the same checking function to both.  ik_softiommu_host_identity
 * trusts every address (tests, benchmarks: never a VMM).
 *
 * Synchronization.  One lock serializes the register file, the queue's
 * consumption and the context cache: read32/write32, dma, inject and
 * get_stats may be called from any thread concurrently (a DMA's table walk
 * and data copy run outside the lock); create/destroy with nothing else on
 * the object.  phys_to_host is called with the lock held and must not call
 * back into the model.
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_SOFTVTD_H
#define IOMMUKIT_SOFTVTD_H

#include <iommukit/env.h>
#include <iommukit/drv/io.h>
#include <iommukit/softiommu.h>
#include <iommukit/drv/vtd.h>

IK_BEGIN_DECLS

/* The register file's size: the fault-recording and IOTLB registers
 * (CAP.FRO, ECAP.IRO) must lie inside it. */
#define IK_SOFTVTD_REG_SIZE 0x1000u

/*
 * struct ik_softvtd_config
 *   ver, cap, ecap   VER_REG, CAP_REG, ECAP_REG as the model reports them
 *                    (ik_softvtd_config_init() fills a capable unit).  The
 *                    model's behaviour follows them: CAP.ND bounds DIDs,
 *                    SAGAW the second-level AW values accepted, CM caching
 *                    mode, FRO/NFR the fault-recording registers (1..256
 *                    records; FRO at least 0x100), PSI and MAMV the
 *                    page-selective invalidations accepted, SLLPS and
 *                    FL1GP the walker's large pages; ECAP.QI is required,
 *                    SMTS allows scalable mode, PT pass-through, DT TT 01b,
 *                    PDS a wait's PD, IRO the IOTLB registers, RPS the
 *                    context entry's RID_PASID.
 *   haw              host address width, 32..52: memory addresses at or
 *                    above 2^haw are not memory (the DMAR table's HAW).
 *   soft             the soft IOMMU that translates and executes the
 *                    invalidations (required; source ids are attached to
 *                    it as their structures are fetched: its max_streams
 *                    must cover the source ids in use).
 *   max_sids         source ids 0 .. max_sids - 1 (bus << 8 | devfn) have a
 *                    context-cache entry (1..65536; config_init: 256 - bus
 *                    0); a DMA by a higher one is refused (-EFAULT, no
 *                    record: the request never reaches this unit).
 *   phys_to_host, phys_ctx  see "Host memory" (required).
 *   alloc            the model's state; NULL: the env's.
 */
struct ik_softvtd_config {
	ik_u32 ver;	/* VER_REG */
	ik_u64 cap, ecap;	/* CAP_REG, ECAP_REG */
	ik_u32 haw;	/* host address width, 32..52 */
	struct ik_softiommu *soft;	/* translation and invalidation */
	ik_u32 max_sids;	/* context-cache entries (source ids) */
	void *(*phys_to_host)(void *ctx, ik_u64 pa, ik_size len);	/* device memory */
	void *phys_ctx;	/* passed to phys_to_host */
	const struct ik_allocator *alloc;	/* NULL: the env's */
};

/* ik_softvtd_config_init flags. */
#define IK_SOFTVTD_SCALABLE 0x1u /* ECAP.SMTS with PASID (PSS 19), FLTS, SLTS, SMPWC, RPS */
#define IK_SOFTVTD_CM 0x2u	 /* CAP.CM: caching mode, as emulated units have */

/*
 * ik_softvtd_config_init - a VT-d 6.0 unit: CAP ND 16-bit DIDs, SAGAW 39
 * and 48 bits, MGAW 48, PSI with MAMV 18, SLLPS 2 MiB and 1 GiB, FL1GP,
 * read/write draining, 8 fault-recording registers at 0x220; ECAP C, QI,
 * DT, PT, IRO 0x100, PDS; `flags` adds scalable mode and caching mode
 * (IK_SOFTVTD_*; other bits are ignored).  haw 48, 256 source ids; soft and
 * phys_to_host are left NULL.  Change cap/ecap afterwards for other units
 * (e.g. NFR: cap bits 47:40; SAGAW: cap bits 12:8).  O(1).
 */
IK_API void ik_softvtd_config_init(struct ik_softvtd_config *cfg, ik_u32 flags);

struct ik_softvtd; /* opaque */

/* ik_softvtd_create - a model in its reset state (GSTS 0, every register
 * 0 but VER/CAP/ECAP and FECTL.IM / IECTL.IM set).  -EINVAL (NULL cfg, out,
 * soft or phys_to_host; haw outside 32..52; max_sids 0 or above 65536;
 * ECAP.QI clear; CAP.FRO below 0x100, or the fault-recording or IOTLB
 * registers beyond IK_SOFTVTD_REG_SIZE or overlapping), -ENOMEM.  One
 * allocation (plus one for the context cache). */
IK_API int ik_softvtd_create(const struct ik_softvtd_config *cfg, struct ik_softvtd **out);
/* Free the model (the soft IOMMU is the caller's).  NULL is ignored. */
IK_API void ik_softvtd_destroy(struct ik_softvtd *m);

/* MMIO: 32-bit read and write at byte offset `off` of the register file.
 * m must not be NULL.  Each access is atomic with respect to the model's
 * other accesses (one lock). */
IK_API ik_u32 ik_softvtd_read32(struct ik_softvtd *m, ik_u32 off);
IK_API void ik_softvtd_write32(struct ik_softvtd *m, ik_u32 off, ik_u32 val);
/* Fill *io with accessors over the model (read64/write64 NULL: split, low
 * word first).  -EINVAL for NULL arguments. */
IK_API int ik_softvtd_mmio(struct ik_softvtd *m, struct ik_mmio *io);

/* What ik_softvtd_inject() injects. */
#define IK_SOFTVTD_INJ_DEVTLB_TIMEOUT 1 /* the next `times` device-TLB invalidations time
					   out: FSTS.ITE at the wait after each */
#define IK_SOFTVTD_INJ_FETCH_ABT 2	/* the after-th descriptor from now fails to
					   fetch, `times` times: FSTS.IQE, IQEI FETCH */
#define IK_SOFTVTD_INJ_STUCK 3		/* GSTS bits in `after` never follow their
					   command (set or clear) until injected
					   again with other bits (0: none) */

/*
 * ik_softvtd_inject - inject an error (see the kinds).  Returns 0; -EINVAL
 * (NULL m, unknown kind, FETCH_ABT or DEVTLB_TIMEOUT with times 0, STUCK
 * with bits that are not GSTS status bits); -EBUSY: FETCH_ABT needs queued
 * invalidation enabled.
 */
IK_API int ik_softvtd_inject(struct ik_softvtd *m, unsigned kind, ik_u64 after, unsigned times);

/*
 * ik_softvtd_dma - a DMA request without PASID of `len` bytes by source id
 * `sid` at `iova` (write: from buf to memory; read: into buf).  Until
 * GSTS.TES is set the address is used untranslated.  Then the cached (or
 * freshly fetched) structures decide: pass-through (iova is the physical
 * address), translation through the soft IOMMU, or a fault, which is
 * recorded (see "faults") unless fault processing is disabled, and makes
 * the call return -EFAULT; bytes before the faulting page were
 * transferred.  0 when done.  -EINVAL for a NULL m, buf NULL with len > 0,
 * or a range that wraps; -EFAULT also for sid >= max_sids.
 */
IK_API int ik_softvtd_dma(struct ik_softvtd *m, ik_u32 sid, ik_u64 iova, void *buf, ik_size len,
			  bool write);

/* Counters. */
struct ik_softvtd_stats {
	ik_u64 descriptors;	/* descriptors executed (waits included) */
	ik_u64 queue_errors;	/* IQE and ITE raised */
	ik_u64 root_fetches, context_fetches, pasid_fetches; /* structure fetches */
	ik_u64 faults, faults_lost, faults_suppressed; /* recorded; lost (PFO); FPD */
	ik_u64 gcmd_violations;	/* GCMD writes with more than one command, ignored */
	ik_u64 wbf;		/* write-buffer flushes */
};
/* Snapshot.  -EINVAL for NULL arguments. */
IK_API int ik_softvtd_get_stats(struct ik_softvtd *m, struct ik_softvtd_stats *st);

IK_END_DECLS

#endif /* IOMMUKIT_SOFTVTD_H */
