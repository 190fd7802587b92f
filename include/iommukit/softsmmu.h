/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/softsmmu.h - a register-level SMMUv3 model: the SMMUv3's
 * register file (MMIO), its command queues (the main one and the enhanced
 * ECMDQs), its stream table and context descriptors, its event queue and
 * its global errors, on top of a soft IOMMU (<iommukit/softiommu.h>) that
 * does the translating and caching.
 *
 * What it is for.  A driver core talks to an SMMUv3 only through registers
 * and memory.  This model answers those registers as the architecture
 * (IHI 0070) says, so that
 *   - a driver core (<iommukit/drv/smmuv3.h>) brings it up exactly as it
 *     brings up QEMU's SMMUv3 or silicon, through the same struct ik_mmio
 *     hooks (ik_softsmmu_mmio()), on any machine, and every path - ECMDQ,
 *     which QEMU does not emulate, included - has an end-to-end test;
 *   - a VMM without an emulated SMMUv3 gives its guest one: it routes the
 *     guest's MMIO accesses to ik_softsmmu_read32/write32 and its devices'
 *     DMA through ik_softsmmu_dma(), with a phys_to_host hook that checks
 *     the guest's memory map (see "Host memory").
 *
 * What it models
 *   registers   IDR0..5 and IDR6 (from the config), IIDR, AIDR; CR0 ->
 *               CR0ACK; CR1, CR2; GBPA with the UPDATE handshake; IRQ_CTRL
 *               -> IRQ_CTRLACK; GERROR/GERRORN (toggle protocol);
 *               STRTAB_BASE(_CFG); CMDQ_BASE/PROD/CONS; EVTQ_BASE and
 *               EVTQ_PROD/CONS (page 1); with IDR1.ECMDQ the command-queue
 *               control page registers CMDQ_CONTROL_PAGE_BASE/CFG/STATUSn
 *               (0x4000 + 32n: pages at IK_SOFTSMMU_CP_OFFSET + 64 KiB * n,
 *               PRESET, 64 KiB granule, always enabled) and in each page
 *               the queues' ECMDQ_BASE/PROD/CONS (0x100 apart).  64-bit
 *               registers are two 32-bit halves (struct ik_mmio's split).
 *               Other offsets read as zero and ignore writes; so do
 *               unaligned ones.
 *   commands    when CMDQEN (or an ECMDQ's PROD.EN) is acknowledged, the
 *               ring at the queue's BASE is consumed by the cmdq unit's
 *               software consumer (struct ik_cmdq_sw), in order, each
 *               command executed on the soft IOMMU (ik_softiommu_exec_smmu)
 *               and CFGI_* re-fetching the configuration.  Consumption
 *               happens on the thread that writes PROD (the device runs
 *               when the doorbell rings; a CMD_SYNC has completed when the
 *               write returns), or, while the model is paused
 *               (ik_softsmmu_pause()), only in ik_softsmmu_poll().  Queues
 *               are consumed independently and in parallel (one lock per
 *               queue), as the architecture allows for ECMDQs; a CMD_SYNC
 *               completes the commands of its own queue.
 *   errors      main queue: CONS.ERR = the CERROR code and GERROR.CMDQ_ERR
 *               toggles; consumption resumes when GERRORN acknowledges.
 *               ECMDQ: CONS.ERR toggles, ERR_REASON holds the code, and
 *               GERROR.CMDQP_ERR toggles; the queue resumes when PROD.ERRACK
 *               equals CONS.ERR again.  Other queues are not affected.
 *   config      the STE of a stream (linear or 2-level stream table) and,
 *               for stage 1, its CD 0 (linear or 2-level CD table) are
 *               fetched at CFGI_STE / CFGI_STE_RANGE / CFGI_CD / CFGI_CD_ALL
 *               / CFGI_ALL and when SMMUEN is set, and cached as the
 *               hardware caches them: a changed STE without its CFGI is not
 *               seen.  Abort, bypass, stage 1 (AArch64 LPAE, tag = ASID) and
 *               stage 2 (tag = VMID) are modelled; an STE or CD that is not
 *               valid, uses a reserved Config, or cannot be decoded makes
 *               the stream's DMA raise C_BAD_STE / C_BAD_CD; one whose fetch
 *               fails (phys_to_host refuses) F_STE_FETCH / F_CD_FETCH;
 *               nested STEs are treated as C_BAD_STE (not modelled).
 *   events      ik_softsmmu_dma() faults become event records (F_TRANSLATION,
 *               F_PERMISSION, F_ADDR_SIZE, F_ACCESS, F_WALK_EABT,
 *               C_BAD_STREAMID, C_BAD_STE, ...) written at EVTQ_PROD while
 *               EVTQEN is on; a full queue toggles EVTQ_PROD.OVFLG; a record
 *               that cannot be written (phys_to_host refuses) raises
 *               GERROR.EVTQ_ABT_ERR.
 *   injection   ik_softsmmu_inject(): illegal command, fetch abort, ATC
 *               invalidation timeout, on the main queue or one ECMDQ; and
 *               hostile register behaviour: a CONS beyond PROD, an ENACK
 *               (or CR0ACK) that never follows, an ERR toggled on an empty
 *               queue.
 * Not modelled: the PRI queue, MSIs and interrupts (IRQ_CTRL is
 * acknowledged, nothing is signalled), stalls, ATS, Secure and Realm
 * state, nested translation, substreams other than 0.
 *
 * Hostile input.  Every register value and every byte the model reads from
 * memory (rings, STEs, L1 descriptors, CDs) may be anything: sizes are
 * clamped to what the IDRs advertise, every address sum is checked for
 * overflow before use, and memory is reached only through phys_to_host,
 * which is asked for the whole range it must cover.  The model never
 * crashes, never reads or writes outside what the hook returned, and
 * reports what the architecture reports (an abort, an event, an error).
 *
 * Host memory.  config.phys_to_host(ctx, pa, len) turns a device (guest
 * physical) address into a host pointer for `len` bytes, or NULL.  It is
 * the same hook type as struct ik_softiommu_config.phys_to_host, and a VMM
 * passes the same checking function to both.  ik_softiommu_host_identity
 * trusts every address (tests, benchmarks: never a VMM).
 *
 * Synchronization
 *   read32/write32 (ik_softsmmu_mmio)   any thread, concurrently: one lock
 *                                       per command queue, one for the rest
 *                                       of the register file and the event
 *                                       queue
 *   dma                                 any thread, concurrently with all
 *                                       of the above
 *   poll, pause, inject, get_stats      any thread
 *   create/destroy                      nothing else on the object
 * Callbacks (phys_to_host) are called with a model lock held and must not
 * call back into the model.
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_SOFTSMMU_H
#define IOMMUKIT_SOFTSMMU_H

#include <iommukit/env.h>
#include <iommukit/drv/io.h>
#include <iommukit/softiommu.h>
#include <iommukit/drv/smmuv3.h>

IK_BEGIN_DECLS

/* Where the model puts its command-queue control pages (the ECMDQ
 * registers are <iommukit/drv/smmuv3.h>'s IK_SMMU_IDR6, IK_SMMU_CP_*,
 * IK_SMMU_ECMDQ_*): page n at IK_SOFTSMMU_CP_OFFSET + n * 64 KiB, after
 * register pages 0 and 1. */
#define IK_SOFTSMMU_CP_OFFSET 0x20000u

/*
 * struct ik_softsmmu_config
 *   idr[6], iidr, aidr   the ID registers the model reports (IDR4 as is).
 *                        ik_softsmmu_config_init() gives a capable SMMU.
 *                        The model's own limits follow them: CMDQS and
 *                        EVENTQS bound the queue sizes it accepts, SIDSIZE
 *                        the stream table, OAS the addresses.
 *   ecmdq_log2nump, ecmdq_log2numq  IDR6: 2^nump control pages of 2^numq
 *                        queues each (0..8 each), used when IDR1.ECMDQ
 *                        (bit 31) is set.  At most 256 queues in all.
 *   soft                 the soft IOMMU that translates and executes the
 *                        invalidations (required; streams are attached to
 *                        it by the configuration fetches: it needs
 *                        max_streams covering the SIDs in use).
 *   max_streams          StreamIDs 0 .. max_streams - 1 have a configuration
 *                        cache entry (1..65536; ik_softsmmu_config_init: 64);
 *                        a DMA by a higher one raises C_BAD_STREAMID.
 *   phys_to_host, phys_ctx  see "Host memory" (required).
 *   alloc                the model's state; NULL: the env's.
 */
struct ik_softsmmu_config {
	ik_u32 idr[6];	/* SMMU_IDR0..5 */
	ik_u32 iidr, aidr;	/* SMMU_IIDR, SMMU_AIDR */
	unsigned ecmdq_log2nump, ecmdq_log2numq;	/* SMMU_IDR6 fields */
	struct ik_softiommu *soft;	/* translation and invalidation */
	ik_u32 max_streams;	/* configuration cache entries (StreamIDs) */
	void *(*phys_to_host)(void *ctx, ik_u64 pa, ik_size len);	/* device memory */
	void *phys_ctx;	/* passed to phys_to_host */
	const struct ik_allocator *alloc;	/* NULL: the env's */
};

/*
 * ik_softsmmu_config_init - an SMMUv3.3 with stage 1 and 2, AArch64 tables,
 * coherent (COHACC), little-endian, 2-level stream tables, ASID16/VMID16,
 * RIL, SIDSIZE 16, SSIDSIZE 0, CMDQS/EVENTQS 19, OAS 48 bits, 4K/16K/64K
 * granules; 64 streams; no ECMDQ (set IK_SMMU_IDR1_ECMDQ in idr[1] and the
 * IDR6 fields for them).  soft and phys_to_host are left NULL.  O(1).
 */
IK_API void ik_softsmmu_config_init(struct ik_softsmmu_config *cfg);

struct ik_softsmmu; /* opaque */

/* ik_softsmmu_create - a model in its reset state (every enable off,
 * GERROR = GERRORN = 0).  -EINVAL (NULL cfg, out, soft or phys_to_host;
 * max_streams 0 or above 65536; an IDR6 field above 8, or more than 256
 * queues), -ENOMEM.  One allocation
 * (plus one for the ECMDQs). */
IK_API int ik_softsmmu_create(const struct ik_softsmmu_config *cfg, struct ik_softsmmu **out);
/* Free the model (the soft IOMMU is the caller's).  NULL is ignored. */
IK_API void ik_softsmmu_destroy(struct ik_softsmmu *m);

/* MMIO: 32-bit read and write at byte offset `off` of the register file.
 * m must not be NULL.  A read has acquire and a write release semantics
 * with respect to the model's own memory accesses. */
IK_API ik_u32 ik_softsmmu_read32(struct ik_softsmmu *m, ik_u32 off);
IK_API void ik_softsmmu_write32(struct ik_softsmmu *m, ik_u32 off, ik_u32 val);
/* Fill *io with accessors over the model (read64/write64 NULL: split, low
 * word first).  -EINVAL for NULL arguments. */
IK_API int ik_softsmmu_mmio(struct ik_softsmmu *m, struct ik_mmio *io);

/* ik_softsmmu_pause - paused (true): PROD writes are recorded but nothing
 * is consumed until ik_softsmmu_poll() (or pause(false)); the device
 * "running late".  Returns 0, -EINVAL for a NULL m. */
IK_API int ik_softsmmu_pause(struct ik_softsmmu *m, bool paused);
/* ik_softsmmu_poll - consume what every enabled queue has published.
 * Returns the number of commands consumed, -EINVAL for a NULL m. */
IK_API int ik_softsmmu_poll(struct ik_softsmmu *m);

/* Queues for ik_softsmmu_inject(): the main command queue, or ECMDQ i
 * (0 .. queues - 1, control page i >> numq, queue i & (2^numq - 1)). */
#define IK_SOFTSMMU_MAIN_CMDQ (-1)

/* What ik_softsmmu_inject() injects. */
#define IK_SOFTSMMU_INJ_ILL 1	/* the after-th command from now is illegal */
#define IK_SOFTSMMU_INJ_ABT 2	/* its fetch aborts, `times` times */
#define IK_SOFTSMMU_INJ_ATC_TIMEOUT 3 /* the next `times` ATC_INVs time out: the CMD_SYNC
					 after each reports CERROR_ATC_INV_SYNC */
#define IK_SOFTSMMU_INJ_CONS_BEYOND_PROD 4 /* CONS reads `after` (>= 1) entries beyond the
					      last PROD, `times` reads */
#define IK_SOFTSMMU_INJ_NO_ENACK 5 /* the enable acknowledgement (ECMDQ CONS.ENACK; main
				      queue: CR0ACK.CMDQEN) never follows until injected again
				      with times = 0 */
#define IK_SOFTSMMU_INJ_SPURIOUS_ERR 6 /* toggle the ECMDQ's CONS.ERR now (ERR_REASON
					  CERROR_ILL) without a failing command */

/*
 * ik_softsmmu_inject - inject one error on `queue` (IK_SOFTSMMU_MAIN_CMDQ
 * or an ECMDQ index).  `after` counts commands from the next one (0) for
 * ILL and ABT.  Returns 0; -EINVAL (NULL m, unknown kind, queue out of
 * range, SPURIOUS_ERR on the main queue, CONS_BEYOND_PROD with after 0);
 * -EBUSY: ILL, ABT and SPURIOUS_ERR need the queue enabled.
 */
IK_API int ik_softsmmu_inject(struct ik_softsmmu *m, int queue, unsigned kind, ik_u64 after,
			      unsigned times);

/*
 * ik_softsmmu_dma - a DMA of `len` bytes by stream `sid` at `iova` (write:
 * from buf to memory; read: into buf), translated as the cached STE says:
 * abort (-EFAULT, no event: Config = abort records none), bypass (iova is
 * the physical address), stage 1 or 2 through the soft IOMMU.  A fault
 * writes an event record (see "events") and returns -EFAULT; 0 when done.
 * Until SMMUEN is set, the DMA follows GBPA (ABORT: -EFAULT; else bypass).
 * -EINVAL for a NULL m, or buf NULL with len > 0.
 */
IK_API int ik_softsmmu_dma(struct ik_softsmmu *m, ik_u32 sid, ik_u64 iova, void *buf,
			   ik_size len, bool write);

/* Counters. */
struct ik_softsmmu_stats {
	ik_u64 commands;	/* commands executed, every queue */
	ik_u64 cmd_errors;	/* command errors raised (main queue and ECMDQs) */
	ik_u64 ste_fetches, cd_fetches;	/* configuration fetches */
	ik_u64 events, events_lost;	/* records written; dropped (queue full or off) */
	ik_u64 ecmdq_enables;	/* ECMDQ enable acknowledgements given */
};
/* Snapshot.  -EINVAL for NULL arguments. */
IK_API int ik_softsmmu_get_stats(struct ik_softsmmu *m, struct ik_softsmmu_stats *st);
/* Commands executed on `queue` (IK_SOFTSMMU_MAIN_CMDQ or an ECMDQ index):
 * for tests that check where commands went.  0 for a bad queue. */
IK_API ik_u64 ik_softsmmu_queue_commands(struct ik_softsmmu *m, int queue);

IK_END_DECLS

#endif /* IOMMUKIT_SOFTSMMU_H */
