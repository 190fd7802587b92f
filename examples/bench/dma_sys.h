/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit-bench: the system the end-to-end subcommands (dma, reproduce) run
 * on - a soft IOMMU whose stream 0 walks an ik_pgtable of the chosen format,
 * an IOVA domain, and a set of command queues (SMMUv3 commands for the LPAE
 * formats, VT-d descriptors for the VT-d ones) drained by a consumer thread
 * that executes them on the soft IOMMU.  What a driver would do with real
 * hardware, with the hardware replaced by the soft IOMMU.
 *
 * Nested (dsys_cfg.nested): the table the benchmark maps is a guest's stage
 * 1 (lpae-s1 or vtd-fl, its output addresses IPAs), attached with
 * ik_softiommu_attach_nested() over a host stage 2 (lpae-s2 / vtd-sl) that
 * maps IPA = PA over the whole 48-bit space with its largest blocks (the
 * host's buffers and the guest's table pages are wherever the heap put
 * them).  Every stage-1 table fetch of a walk is translated by stage 2, as
 * the hardware does; unmaps invalidate stage 1 by (ASID, VMID) or (PASID,
 * DID).
 */
#ifndef IK_BENCH_DMA_SYS_H
#define IK_BENCH_DMA_SYS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <iommukit/softiommu.h>
#include <iommukit/pgtable.h>
#include <iommukit/iova.h>
#include <iommukit/cmdq.h>

struct dsys_cfg {
	enum ik_pt_fmt fmt;
	unsigned granule_shift; /* 12, 14 or 16 */
	bool coherent;
	unsigned nqueues;	/* 1: one shared queue; more: one per CPU (mod nqueues) */
	/* The soft IOMMU consumes on its own thread (true), or inline when the
	 * producer writes PROD (false: as an emulator traps the register) */
	bool consumer_thread;
	bool check;		/* soft IOMMU stale-translation checking */
	uint32_t iotlb_entries, iotlb_ways;
	bool iotlb_set; /* else the soft IOMMU's default geometry */
	/* iotlb_sync_map issues an invalidation + sync of the mapped range (an
	 * IOMMU that caches non-present entries: VT-d caching mode). */
	bool sync_map_cmd;
	/* non-coherent: the clean hook writes the cache lines back for real
	 * (clflushopt/clwb/clflush, dc cvac) instead of only counting */
	bool real_clean;
	/* ... and one clean + barrier per 8-byte entry of each run, as the old
	 * per-PTE sync did (the unbatched baseline) */
	bool per_pte_clean;
	/* fmt (lpae-s1 or vtd-fl) nested over its stage 2 (see above) */
	bool nested;
};

/* Counters the hooks and helpers add to (relaxed atomics). */
struct dsys_counts {
	uint64_t cleans, clean_bytes, sync_maps, cmds, syncs, cas_retries;
};

struct dsys {
	struct dsys_cfg cfg;
	struct ik_softiommu *s;
	struct ik_pgtable *pt;
	struct ik_pgtable *s2;	/* nested: the host's stage 2 */
	struct ik_pgtable_hooks hooks;
	struct ik_iova_domain iovad;
	bool iovad_ok;
	struct ik_cmdq_set *qset;
	struct ik_softiommu_cq *cqs;
	struct ik_softiommu_cq **cqp;
	void **rings;
	unsigned nq;
	pthread_t consumer;
	bool consumer_running;
	int stop;
	bool smmu;	/* SMMUv3 commands (LPAE) or VT-d descriptors ... */
	bool riscv;	/* ... or RISC-V IOMMU commands */
	bool stage2;	/* stage-2 invalidations (the format's bench_fmts row) */
	uint32_t tag;	/* ASID / VMID / DID of the one context (nested: ASID / PASID) */
	uint32_t tag2;	/* nested: VMID / DID */
	uint64_t granule, iova_limit_pfn;
	struct dsys_counts c;
	int hook_error;	/* first error a hook met (sync_map_cmd) */
};

/* Build everything; on failure writes a message into err and returns a
 * negative errno (everything built so far is torn down). */
int dsys_init(struct dsys *d, const struct dsys_cfg *cfg, char *err, size_t errlen);
void dsys_fini(struct dsys *d);

/* The invalidation a strict unmap needs for [iova, iova + size) (walk: the
 * unmap freed or split tables), with a sync, through the caller's queue. */
int dsys_invalidate(struct dsys *d, uint64_t iova, uint64_t size, bool walk, bool sync);
/* Invalidate the whole context (the deferred flush), with a sync. */
int dsys_invalidate_all(struct dsys *d);

/* The name of the real clean instruction used ("clflushopt", ...). */
const char *dsys_clean_insn(void);

/* The stage-2 format a stage-1 format nests over (lpae-s1: lpae-s2,
 * vtd-fl: vtd-sl), or IK_PT_FMT_NONE. */
enum ik_pt_fmt dsys_nested_s2(enum ik_pt_fmt s1);

/* True if the page-table format is built into the library. */
bool dsys_fmt_available(enum ik_pt_fmt fmt);

/* One strict run of the dma loop (bench_dma.c) for `seconds` on `threads`
 * threads with buffers of `size` bytes; 0, or -errno with a message. */
int bench_dma_once(const struct dsys_cfg *dc, unsigned threads, uint64_t size, double seconds,
		   double *iters_per_s, uint64_t *unmap_p99, uint64_t *cas_retries, char *err,
		   size_t errlen);

#endif
