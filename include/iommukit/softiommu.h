/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/softiommu.h - a software IOMMU: a device model that translates
 * DMA through page tables, caches translations in an IOTLB, obeys
 * invalidation commands and records faults.
 *
 * What it is for.  Emulators (an SMMUv3 or VT-d model in a hypervisor) need
 * exactly this: walk the guest's tables, cache the answers, drop them when
 * the guest invalidates.  Driver authors need the converse: run their map /
 * unmap / invalidate logic against an IOMMU that *notices* when an
 * invalidation is missing or late.  The soft IOMMU serves both:
 *
 *   - Streams and contexts.  A device is named by its stream id (SMMUv3
 *     StreamID, VT-d source-id).  ik_softiommu_attach() binds a stream to a
 *     context: a tag (SMMUv3 ASID, VT-d domain id) and a walker.  Several
 *     streams may share one context (one tag, one table).
 *   - Walker.  The soft IOMMU never decodes a page-table entry itself.
 *     ik_softiommu_attach_pt() gives a stream a page-table root in any format
 *     the page-table unit supports (struct ik_pt_walker: geometry + root, as
 *     an STE or context entry would hold it) and the table memory to read it
 *     from; every walk is ik_pt_walk().  ik_softiommu_attach() takes any
 *     other walker (struct ik_softiommu_walker), e.g. an emulator's own.
 *   - IOTLB.  A set-associative cache of leaf translations: each entry holds
 *     a tag, the input block base, the output block base, the block size
 *     (4 KiB page, 2 MiB block, ...), and permissions.  Entries of several
 *     block sizes coexist; a lookup probes the set of each block size present.
 *     Replacement is least-recently-used within a set.
 *   - Walk cache.  A small fully-associative cache of "the table that holds
 *     the leaf for this region": (tag, region) -> leaf-table address.  Leaf-
 *     only range invalidations keep it (as SMMUv3 TLBI with Leaf=1 and VT-d
 *     page-selective invalidation with the IH hint do); non-leaf range,
 *     tag and global invalidations drop it.  A walk restarted at a cached
 *     leaf table does not see hierarchical permission limits set in upper
 *     levels (ARM APTable/XNTable); iommukit's page-table engine sets none,
 *     and checking mode compares against the full walk.  For page-table
 *     streams (attach_pt) only last-level tables are cached: a table that
 *     holds a block leaf may later hold a table pointer in that entry
 *     without any invalidation being due (the block was unmapped with a
 *     leaf-only invalidation, then a table installed in the empty entry).
 *   - Commands.  ik_softiommu_exec() executes one decoded command (invalidate
 *     all / by tag / by range, sync).  A command queue in SMMUv3, VT-d,
 *     RISC-V or AMD encoding is consumed through the cmdq unit's software
 *     consumer (ik_softiommu_exec_smmu() / _vtd() / _riscv() / _amd() execute
 *     one decoded command; ik_softiommu_cq_*() drain a queue, polled or from
 *     a host thread that runs ik_softiommu_cq_run()); a sync completion is written
 *     only after every earlier command has taken effect here.
 *     Invalidations take effect when executed (there is no asynchronous
 *     invalidation window): a sync is a completion point, not a trigger.
 *   - Nesting.  ik_softiommu_attach_nested() gives a stream two stages: a
 *     stage-1 (guest) table whose root, table and output addresses are
 *     intermediate physical addresses (IPAs), walked through a stage-2
 *     (host) table, as SMMUv3 nested STEs (Config = 0b111) and VT-d
 *     scalable-mode PASID entries with PGTT = 011 define it.  Every stage-1
 *     table fetch is itself translated (and permission-checked) by stage 2,
 *     then the final IPA is; the IOTLB caches the combined translation under
 *     both tags, and a fault says which stage raised it.  See "Nested
 *     translation" below.
 *   - Faults.  A device access that cannot be translated (no mapping,
 *     permission, address size, access flag, table read error, unknown
 *     stream) is not performed; a record
 *     (address, access, stream, tag, type) goes into a bounded fault queue
 *     that the driver drains with ik_softiommu_fault_pop().
 *   - Checking mode (IK_SOFTIOMMU_CHECK).  Every device access that hits the
 *     IOTLB is also walked afresh; if the tables disagree with the cached
 *     answer (a missing or late invalidation) a stale-translation report is
 *     queued with the iova, both answers and the recent command history
 *     (maps, unmaps, invalidations, syncs, in order), and the access is
 *     refused.  A correct driver never triggers it; tests rely on that.
 *     The walk cache is checked the same way (a freed or replaced leaf table
 *     still cached).
 *
 * Glossary
 *   iova     input (I/O virtual) address the device issues.
 *   oa       output address the tables produce; "physical" for the device.
 *   tag      the cache tag of a context: ASID (SMMUv3 stage 1), VMID (stage
 *            2) or domain id (VT-d).  Invalidation by tag drops exactly the
 *            entries with that tag.
 *   block    the naturally aligned region one leaf entry maps (lg2_size).
 *   history  a ring of the last events the soft IOMMU saw (commands it
 *            executed, map/unmap notes the driver's hooks sent); a stale
 *            report carries the newest IK_SOFTIOMMU_REPORT_HIST of them.
 *   generation
 *            a counter bumped by every invalidation; a walk that started
 *            before an invalidation never inserts its (possibly stale)
 *            result into the IOTLB afterwards.
 *
 * Nested translation
 *   supported pairs    lpae-s1 over lpae-s2 (SMMUv3), vtd-fl over vtd-sl
 *                      (VT-d); any other pair is -EINVAL.
 *   walk               stage 1 is walked with ik_pt_walk() through a memory
 *                      view that translates each table-entry address (an IPA)
 *                      by a stage-2 walk for a read (and, where the host
 *                      memory has cas64, the access-flag / A-D update by a
 *                      stage-2 walk for a write), then reads host memory at
 *                      the resulting PA; the final IPA is walked by stage 2.
 *                      Guest tables are hostile: every fetched descriptor goes
 *                      through the format's own checks (reserved bits,
 *                      addresses beyond the stage-1 oas = the IPA size), and
 *                      each IPA through stage 2's (beyond its ias: a stage-2
 *                      translation fault; not mapped; not readable), and
 *                      each PA through the host memory's read64 (outside
 *                      memory: EXTERNAL).
 *   combined entries   block size = the smaller of the two leaves'; prot =
 *                      stage-1 prot AND stage-2 prot; tags (s1_tag, s2_tag)
 *                      = (ASID, VMID) or (PASID, DID).  Nested streams do not
 *                      use the walk cache.
 *   fault order        stage-2 faults on a stage-1 table fetch (stage 2,
 *                      s2_class TT: SMMUv3 F_TRANSLATION etc. with S2 = 1,
 *                      CLASS = TT) come first, in walk order; then stage-1
 *                      faults of the walk; then a stage-1 permission fault;
 *                      then stage-2 faults on the final IPA (stage 2,
 *                      s2_class IN) and stage-2 permission.  The record holds
 *                      the IOVA and the IPA stage 2 was asked to translate
 *                      (the table-entry IPA for TT, the output IPA for IN).
 *   invalidation       stage-1 commands (INV_TAG / INV_RANGE with
 *                      IK_SOFTIOMMU_CMD_VMID or _PASID) drop the combined
 *                      entries of their two tags (by IOVA range for
 *                      INV_RANGE).  Stage-2 commands (INV_S2_TAG,
 *                      INV_S2_RANGE) drop every combined entry of the VMID /
 *                      DID: a stage-2 IPA range invalidation drops the whole
 *                      VMID's combined entries, because a combined entry
 *                      depends on the stage-2 translations of every stage-1
 *                      table it was walked through, not only on its final IPA
 *                      (the architecture requires software to follow
 *                      TLBI_S2_IPA with a stage-1 invalidation for the same
 *                      reason; here one command suffices).
 *
 * Host memory is an explicit choice.  Every address the soft IOMMU is given
 * by its tables or its queues - an output address, a table-entry address, a
 * completion address in a wait descriptor - was written by the driver or a
 * guest, and the soft IOMMU reaches host memory only through the caller's
 * hooks:
 *   DMA          config.phys_to_host turns an output address into a host
 *                pointer; NULL (the default): every DMA faults EXTERNAL
 *                (queued and counted in stats.faults), nothing is read or
 *                written.
 *   table reads  attach_pt / attach_nested take a struct ik_pt_mem; NULL is
 *                -EINVAL (there is no default table memory).
 *   completions  a sync's completion store outside the queue's ring goes to
 *                struct ik_softiommu_cq_config.write32; NULL (the default):
 *                not performed, counted in cq.sw.completions_refused, the
 *                sync still completes (CONS passes it, no error).
 * A userspace test or benchmark whose device addresses are its own host
 * virtual addresses passes the identity hooks below on purpose:
 * ik_softiommu_host_identity (phys_to_host), &ik_softiommu_host_mem (table
 * memory) and ik_softiommu_host_write32 (completions).
 * WARNING: these trust every address they are given.  With them, whoever
 * writes the page tables or the command queue - a guest, in a VMM - can
 * read and write anywhere in the host process, or crash it.  A VMM must
 * never pass them: it translates guest-physical addresses to host memory
 * with hooks that check the guest's memory map.
 *
 * Synchronization
 *   call                                   may run concurrently with
 *   ------------------------------------   ------------------------------------
 *   dma_read/dma_write/translate           everything below except destroy,
 *                                          and with itself on any stream
 *   exec, exec_smmu/vtd/riscv, note        dma_*, translate, each other
 *   cq_poll/cq_run on one queue            everything on other queues and the
 *                                          queue's producers; one consumer per
 *                                          queue at a time
 *   attach, attach_pt, attach_nested,      everything but destroy; a stream's
 *   detach                                 accesses during detach either see
 *                                          the old context or fault
 *   fault_pop, stale_pop, history, stats   everything but destroy
 *   set_flags                              everything but destroy (takes
 *                                          effect for later accesses)
 *   create/destroy                         nothing
 * One ik_lock_t protects the IOTLB, walk cache, history and queues; walks
 * run outside it (the walker reads table memory that the driver may be
 * changing, as hardware does).  Callbacks (walker, phys_to_host) are called
 * without the lock held and may not call back into the same soft IOMMU.
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_SOFTIOMMU_H
#define IOMMUKIT_SOFTIOMMU_H

#include <iommukit/env.h>
#include <iommukit/lock.h>
#include <iommukit/pgtable.h>
#include <iommukit/cmdq.h>
#include <iommukit/cmd/smmuv3.h>
#include <iommukit/cmd/vtd.h>
#include <iommukit/cmd/riscv.h>
#include <iommukit/cmd/amd.h>

IK_BEGIN_DECLS

/* Access permissions and access kinds. */
#define IK_SOFTIOMMU_READ 0x1u
#define IK_SOFTIOMMU_WRITE 0x2u

/* Fault types (struct ik_softiommu_fault.type, walker results). */
enum ik_softiommu_fault_type {
	IK_SOFTIOMMU_FAULT_NONE = 0,
	IK_SOFTIOMMU_FAULT_TRANSLATION = 1, /* no valid entry on the walk */
	IK_SOFTIOMMU_FAULT_PERMISSION = 2,  /* entry valid, access not allowed */
	IK_SOFTIOMMU_FAULT_ADDR_SIZE = 3,   /* iova beyond ias, or oa beyond oas */
	IK_SOFTIOMMU_FAULT_BAD_STREAM = 4,  /* stream id not attached */
	IK_SOFTIOMMU_FAULT_STALE = 5,       /* checking mode: IOTLB disagrees with tables */
	IK_SOFTIOMMU_FAULT_EXTERNAL = 6,    /* table read or phys_to_host failed */
	IK_SOFTIOMMU_FAULT_ACCESS_FLAG = 7, /* ARM: leaf with AF clear */
};

/* Translation stages (ik_softiommu_xlate.stage, ik_softiommu_fault.stage). */
enum ik_softiommu_stage {
	IK_SOFTIOMMU_STAGE_ONLY = 0,   /* not nested: the stream's only stage */
	IK_SOFTIOMMU_STAGE_1 = 1,      /* nested: stage 1 (guest table) */
	IK_SOFTIOMMU_STAGE_2 = 2,      /* nested: stage 2 (host table) */
	IK_SOFTIOMMU_STAGE_NESTED = 3, /* nested, no fault: both stages */
};

/* What a stage-2 access was for (SMMUv3 event CLASS). */
enum ik_softiommu_s2_class {
	IK_SOFTIOMMU_S2_NONE = 0, /* not a stage-2 fault */
	IK_SOFTIOMMU_S2_TT = 1,   /* fetch of a stage-1 table entry ("S2 fault on S1 walk") */
	IK_SOFTIOMMU_S2_IN = 2,   /* the final IPA of the access */
};

/* Deepest walk a walker reports, in levels. */
#define IK_SOFTIOMMU_MAX_LEVELS 6

/*
 * struct ik_softiommu_xlate - what one walk (or IOTLB hit) says about an iova.
 *   oa        output address of the iova itself (block base + offset).
 *   lg2_size  log2 of the leaf's block size (12 for a 4 KiB page).
 *   prot      IK_SOFTIOMMU_READ | IK_SOFTIOMMU_WRITE allowed by the entry.
 *   fault     IK_SOFTIOMMU_FAULT_NONE, or TRANSLATION / PERMISSION /
 *             ADDR_SIZE (the walker reports permission faults only when
 *             asked to check an access; the soft IOMMU checks prot itself).
 *   level     level at which the walk ended (leaf or fault), numbered as
 *             the page-table unit does: 0 is the last level (4 KiB pages),
 *             the root is the highest; 0 for an IOTLB hit.
 *   leaf_table
 *             the address (as the IOMMU sees it) of the table that holds the
 *             leaf entry, 0 when unknown; feeds the walk cache.
 *   leaf_table_lg2
 *             log2 of the input span that leaf table covers.
 *   Nested streams only (0 otherwise; a custom walker leaves them 0):
 *   ipa       the IPA stage 1 produced for the iova; on a stage-2 fault the
 *             IPA stage 2 failed on (a stage-1 table-entry address for
 *             s2_class TT, the output IPA for IN).
 *   stage     IK_SOFTIOMMU_STAGE_NESTED for a translation; on a fault the
 *             stage that raised it (level is then that stage's level).
 *   s2_class  for a stage-2 fault: IK_SOFTIOMMU_S2_TT or _IN.
 *   prot_s1   stage 1's own permissions (prot is stage 1 AND stage 2).
 */
struct ik_softiommu_xlate {
	ik_u64 oa;
	ik_u64 leaf_table;
	ik_u32 lg2_size;
	ik_u32 prot;
	ik_u32 fault;
	ik_u32 level;
	ik_u32 leaf_table_lg2;
	ik_u32 stage;
	ik_u64 ipa;
	ik_u32 s2_class;
	ik_u32 prot_s1;
};

/*
 * struct ik_softiommu_walker - how a context's tables are walked.
 *   walk(ctx, iova, out): decode the tables as the hardware would and fill
 *     *out (oa, lg2_size, prot, level, leaf_table if known), or set
 *     out->fault.  Returns 0 whenever *out is filled (faults included), a
 *     negative errno for a walker error (treated as a translation fault).
 *     Must be safe to call from several threads at once and concurrently with
 *     the driver's map/unmap of other ranges.
 *   walk_leaf(ctx, table, table_lg2, iova, out): optional (NULL: the walk
 *     cache only records and checks).  Decode only the leaf-level table at
 *     `table` (as a previous walk reported it in leaf_table/leaf_table_lg2)
 *     for `iova`, as hardware does after a walk-cache hit.  Same return
 *     convention; it must fill leaf_table/leaf_table_lg2 with its inputs.
 *   ctx: passed back.
 * The page-table unit's binding fills one from an ik_pgtable; a test or an
 * emulator with its own table memory may supply its own.
 */
struct ik_softiommu_walker {
	int (*walk)(void *ctx, ik_u64 iova, struct ik_softiommu_xlate *out);
	int (*walk_leaf)(void *ctx, ik_u64 table, ik_u32 table_lg2, ik_u64 iova,
			 struct ik_softiommu_xlate *out);
	void *ctx;
};

/* Checking and behaviour flags (struct ik_softiommu_config.flags). */
#define IK_SOFTIOMMU_CHECK 0x1u /* walk every IOTLB hit afresh and compare */

/*
 * struct ik_softiommu_config - see ik_softiommu_config_init() for defaults.
 *   iotlb_entries   total IOTLB entries, a power of two, 1..65536; 0 disables
 *                   the IOTLB (every access walks).
 *   iotlb_ways      associativity, a power of two dividing iotlb_entries
 *                   (iotlb_entries: fully associative).
 *   walk_cache_entries  0..256; 0 disables the walk cache.
 *   max_streams     stream ids 0 .. max_streams - 1 (1..65536).
 *   fault_depth     fault queue records, a power of two 1..65536; when full,
 *                   further faults are counted in stats.faults_dropped.
 *   stale_depth     stale-report queue, a power of two 1..4096.
 *   history_depth   event history ring, a power of two 16..65536.
 *   flags           IK_SOFTIOMMU_CHECK.
 *   phys_to_host    hook: host pointer for `len` bytes at output address
 *                   `oa`, or NULL to fault (EXTERNAL); the range never
 *                   crosses the translated block.  NULL (the default): no
 *                   host memory, every DMA faults EXTERNAL.
 *                   ik_softiommu_host_identity: output addresses are host
 *                   addresses (trusted; see "Host memory" above).
 *   phys_ctx        passed back.
 *   allocator       NULL: the env's.
 */
struct ik_softiommu_config {
	ik_u32 iotlb_entries;
	ik_u32 iotlb_ways;
	ik_u32 walk_cache_entries;
	ik_u32 max_streams;
	ik_u32 fault_depth;
	ik_u32 stale_depth;
	ik_u32 history_depth;
	ik_u32 flags;
	void *(*phys_to_host)(void *ctx, ik_u64 oa, ik_size len);
	void *phys_ctx;
	const struct ik_allocator *allocator;
};

/*
 * ik_softiommu_config_init - defaults: 512 entries 8-way, 32 walk-cache
 * entries, 64 streams, fault queue 256, stale queue 16, history 256, no
 * checking, no host memory (phys_to_host NULL: DMA faults EXTERNAL), env
 * allocator.  O(1).
 */
IK_API void ik_softiommu_config_init(struct ik_softiommu_config *cfg);

/*
 * The explicit identity hooks (see "Host memory" above).  WARNING: each
 * trusts the address it is given; a guest that can name one reads, writes or
 * crashes the host process.  For tests, benchmarks and device models whose
 * device addresses are their own host addresses - never for a VMM.
 *
 * ik_softiommu_host_identity - a phys_to_host hook: `oa` as a host pointer,
 * or NULL (the access faults EXTERNAL) for 0, a len of 0, an address wider
 * than a pointer, or a range that wraps.  ctx is ignored.  O(1).
 */
IK_API void *ik_softiommu_host_identity(void *ctx, ik_u64 oa, ik_size len);

/*
 * ik_softiommu_host_mem - table memory at host addresses equal to the IOMMU
 * addresses, for attach_pt / attach_nested (the default table memory of
 * ik_pgtable's allocator): read64 loads the 8-byte entry (relaxed), and
 * fails with -EFAULT (a walk faults EXTERNAL) for 0, a misaligned address or
 * one wider than a pointer; no cas64 (no hardware access-flag or A/D
 * updates).  ctx NULL.
 */
IK_API extern const struct ik_pt_mem ik_softiommu_host_mem;

/*
 * ik_softiommu_host_write32 - a completion hook for struct
 * ik_softiommu_cq_config.write32: a 32-bit release store of `val` at the host
 * address equal to `addr` (the waiter reads it with acquire: every command
 * before the sync has taken effect), not performed for 0, a misaligned
 * address or one wider than a pointer.  ctx is ignored.  O(1).
 */
IK_API void ik_softiommu_host_write32(void *ctx, ik_u64 addr, ik_u32 val);

struct ik_softiommu; /* opaque */

/*
 * ik_softiommu_create - allocate a soft IOMMU.  *out is set on success.
 * Errors: -EINVAL (NULL argument, a size outside its range or not a power of
 * two, ways not dividing entries); -ENOMEM (allocation failed; nothing is
 * left allocated).  Cost: O(entries) to clear the caches.
 */
IK_API int ik_softiommu_create(const struct ik_softiommu_config *cfg, struct ik_softiommu **out);

/* ik_softiommu_destroy - free everything.  NULL is ignored.  No call may be
 * running on it, and no queue may still be consumed into it (stop the
 * ik_softiommu_cq_run() threads first).  Calls the allocator only. */
IK_API void ik_softiommu_destroy(struct ik_softiommu *s);

/*
 * ik_softiommu_attach - bind stream `sid` to a context: cache tag `tag` and
 * the walker of its tables (copied).  Replaces an earlier binding of that
 * stream *without* invalidating anything, as reprogramming an STE or context
 * entry does: the driver must invalidate the old tag if it changes tables.
 * Errors: -EINVAL (s or w NULL, w->walk NULL, sid >= max_streams).  O(1).
 */
IK_API int ik_softiommu_attach(struct ik_softiommu *s, ik_u32 sid, ik_u32 tag,
			       const struct ik_softiommu_walker *w);

/*
 * ik_softiommu_attach_pt - bind stream `sid` to tag `tag` and the page-table
 * root described by `w` (from ik_pgtable_walker() for a table set the driver
 * builds, or ik_pt_walker_init() / ik_lpae_walker_from_regs() for a root an
 * emulator is given).  Table memory is read through `mem` (copied; required:
 * &ik_softiommu_host_mem reads at host addresses equal to the IOMMU
 * addresses, the default of ik_pgtable's table allocator, and trusts the
 * table's addresses).  Walks use ik_pt_walk(); the walk cache
 * restarts walks at a cached leaf table (leaf_table = the table holding the
 * leaf entry).  Replaces an earlier binding as ik_softiommu_attach() does.
 * Errors: -EINVAL (NULL s, w or mem, sid out of range, mem without read64,
 * a walker whose format is not built in).  O(1).
 */
IK_API int ik_softiommu_attach_pt(struct ik_softiommu *s, ik_u32 sid, ik_u32 tag,
				  const struct ik_pt_walker *w, const struct ik_pt_mem *mem);

/*
 * struct ik_softiommu_nested - a nested binding (an SMMUv3 STE with Config =
 * 0b111 and its CD, or a VT-d PASID entry with PGTT = 011):
 *   s1       the stage-1 (guest) root and geometry, as the CD (TTB0, TG0,
 *            T0SZ, IPS) or the PASID entry's FLPTPTR and FLPM hold them:
 *            root and every table address in it are IPAs; geom.oas is the
 *            IPA width stage 1 may output (larger: ADDR_SIZE at stage 1).
 *            Format lpae-s1 or vtd-fl.
 *   s1_tag   ASID (SMMUv3) or PASID (VT-d).
 *   s2       the stage-2 (host) root and geometry (STE S2TTB/VTCR, the
 *            PASID entry's SLPTPTR/AW): addresses in it are host physical.
 *            Format lpae-s2 under lpae-s1, vtd-sl under vtd-fl.
 *   s2_tag   VMID (SMMUv3 S2VMID) or domain id (VT-d DID).
 *   mem      host physical memory, read by both stages (stage-1 entries at
 *            the PA stage 2 gives); required (NULL: -EINVAL);
 *            &ik_softiommu_host_mem: host addresses equal to PAs.  Copied.
 */
struct ik_softiommu_nested {
	struct ik_pt_walker s1;
	ik_u32 s1_tag;
	struct ik_pt_walker s2;
	ik_u32 s2_tag;
	const struct ik_pt_mem *mem;
};

/*
 * ik_softiommu_attach_nested - bind stream `sid` to a stage-1 table walked
 * through a stage-2 table (see "Nested translation" above).
 * Ownership and lifetime: the soft IOMMU copies the two descriptions (roots
 * and geometries) and the mem hooks; it never owns, allocates or frees table
 * memory.  The host must keep the stage-2 tables and host memory readable
 * through mem until the stream is detached or re-attached and every access
 * in flight on it has returned; the guest's stage-1 tables need no such
 * promise (a stage-1 table that stage 2 no longer maps is a stage-2 fault).
 * Several streams may nest over the same stage 2 (one VMID/DID, one root),
 * each with its own copy: changing the stage-2 root means re-attaching each.
 * Replaces an earlier binding without invalidating anything, as
 * ik_softiommu_attach() does; ik_softiommu_detach() unbinds both stages.
 * Errors: -EINVAL (NULL s or n, sid out of range, a pair not listed above, a
 * stage whose format is not built in or has no sane level count, mem NULL or
 * without read64); nothing changes.  O(1).
 */
IK_API int ik_softiommu_attach_nested(struct ik_softiommu *s, ik_u32 sid,
				      const struct ik_softiommu_nested *n);

/* ik_softiommu_detach - unbind `sid`; later accesses fault BAD_STREAM.
 * Errors: -EINVAL (bad sid), -ENOENT (not attached).  O(1). */
IK_API int ik_softiommu_detach(struct ik_softiommu *s, ik_u32 sid);

/*
 * ik_softiommu_translate - what the device's access of kind `access`
 * (IK_SOFTIOMMU_READ or _WRITE) at `iova` resolves to, through the IOTLB
 * (filling it on a miss), exactly as a DMA would.  On a fault the record is
 * queued and -EFAULT returned, *out (if not NULL) then holds the fault type.
 * Errors: -EINVAL (s NULL, access not exactly one of READ/WRITE); -EFAULT.
 * Cost: one IOTLB probe per block size present; a walk on a miss (and on
 * every hit in checking mode).
 */
IK_API int ik_softiommu_translate(struct ik_softiommu *s, ik_u32 sid, ik_u64 iova,
				  ik_u32 access, struct ik_softiommu_xlate *out);

/*
 * ik_softiommu_dma_read / ik_softiommu_dma_write - the device reads `len`
 * bytes at `iova` into `buf` / writes `len` bytes from `buf` to `iova`,
 * translating each block the range crosses.  Stops at the first fault:
 * bytes before it were transferred, the fault is queued, -EFAULT returned.
 * Errors: -EINVAL (s or buf NULL with len > 0, iova + len overflows); -EFAULT.
 * len 0 does nothing and returns 0.  Cost: one translation per block crossed.
 */
IK_API int ik_softiommu_dma_read(struct ik_softiommu *s, ik_u32 sid, ik_u64 iova, void *buf,
				 ik_size len);
IK_API int ik_softiommu_dma_write(struct ik_softiommu *s, ik_u32 sid, ik_u64 iova,
				  const void *buf, ik_size len);

/* Decoded commands, in the soft IOMMU's own terms. */
enum ik_softiommu_op {
	IK_SOFTIOMMU_OP_INV_ALL = 1,   /* every IOTLB and walk-cache entry */
	IK_SOFTIOMMU_OP_INV_TAG = 2,   /* every entry with `tag` */
	IK_SOFTIOMMU_OP_INV_RANGE = 3, /* entries of `tag` overlapping [iova, iova+size) */
	IK_SOFTIOMMU_OP_SYNC = 4,      /* completion point; earlier commands are done */
	IK_SOFTIOMMU_OP_NOP = 5,       /* a command with nothing to do in this model
					  (configuration-cache, ATC, page responses) */
	IK_SOFTIOMMU_OP_INV_S2_TAG = 6,   /* stage 2: entries with `tag` and every
					     combined entry whose stage-2 tag is `tag` */
	IK_SOFTIOMMU_OP_INV_S2_RANGE = 7, /* stage 2: entries of `tag` overlapping
					     [iova, iova+size) (iova an IPA) and
					     every combined entry of stage-2 tag `tag` */
	/* history-only events the driver's hooks report (ik_softiommu_note) */
	IK_SOFTIOMMU_EV_MAP = 16,
	IK_SOFTIOMMU_EV_UNMAP = 17,
	IK_SOFTIOMMU_EV_ACCESS_FAULT = 18, /* recorded by the soft IOMMU itself */
};

/*
 * struct ik_softiommu_cmd - one command.  For INV_RANGE and INV_S2_RANGE:
 * `leaf` true keeps the walk cache (the driver promises only leaf entries
 * changed); size > 0.
 * Non-nested entries match on `tag` alone.  Combined (nested) entries carry
 * two tags; INV_TAG and INV_RANGE match them by `flags`:
 *   0                       stage-1 tag == tag (any stage-2 tag);
 *   IK_SOFTIOMMU_CMD_VMID   stage-1 tag == tag (ASID) and stage-2 tag ==
 *                           tag2 (VMID): SMMUv3 TLBI_NH_*;
 *   IK_SOFTIOMMU_CMD_PASID  stage-2 tag == tag (DID) and stage-1 tag == tag2
 *                           (PASID): VT-d PASID-based IOTLB invalidation.
 * The other ops take flags 0 (tag2 ignored).
 */
#define IK_SOFTIOMMU_CMD_VMID 0x1u
#define IK_SOFTIOMMU_CMD_PASID 0x2u

/* The command ik_softiommu_exec() runs; the fields as above. */
struct ik_softiommu_cmd {
	ik_u32 op;	/* IK_SOFTIOMMU_OP_* */
	ik_u32 tag;	/* the (stage-1) tag the command matches */
	ik_u64 iova;	/* INV_RANGE / INV_S2_RANGE: first address */
	ik_u64 size;	/* INV_RANGE / INV_S2_RANGE: bytes, > 0 */
	bool leaf;	/* ranges: only leaf entries changed; keep the walk cache */
	ik_u32 tag2;	/* the second tag of IK_SOFTIOMMU_CMD_VMID / _PASID */
	ik_u32 flags;	/* 0, IK_SOFTIOMMU_CMD_VMID or IK_SOFTIOMMU_CMD_PASID */
};

/*
 * ik_softiommu_exec - execute one command; it has taken full effect when the
 * call returns (an IOTLB walk in flight cannot re-insert what it dropped).
 * Errors: -EINVAL (s or cmd NULL, unknown op, an event op, range size 0 or
 * iova + size overflow, unknown flags, both flags, flags on an op that takes
 * none); nothing changes.  Cost: INV_RANGE probes the sets the range can
 * occupy, or scans the IOTLB when that is fewer (and always once a nested
 * stream has been attached); the others scan the IOTLB (O(entries)).
 */
IK_API int ik_softiommu_exec(struct ik_softiommu *s, const struct ik_softiommu_cmd *cmd);

/*
 * ik_softiommu_note - add a driver event (IK_SOFTIOMMU_EV_MAP or _UNMAP of
 * [iova, iova + size) under `tag`) to the history, so that a stale report
 * shows what the driver did.  Page-table hooks call it.  Changes no cache.
 * Errors: -EINVAL (s NULL, other op).  O(1).
 */
IK_API int ik_softiommu_note(struct ik_softiommu *s, ik_u32 op, ik_u32 tag, ik_u64 iova,
			     ik_u64 size);

/* ik_softiommu_set_flags - replace the behaviour flags (IK_SOFTIOMMU_CHECK).
 * Errors: -EINVAL (s NULL, unknown bit).  O(1). */
IK_API int ik_softiommu_set_flags(struct ik_softiommu *s, ik_u32 flags);

/* struct ik_softiommu_fault - one fault record. */
struct ik_softiommu_fault {
	ik_u64 iova;	/* the faulting input address */
	ik_u64 seq;   /* history sequence number when it happened */
	ik_u32 sid;	/* the stream */
	ik_u32 tag;   /* 0 for BAD_STREAM; nested: the stage-1 tag */
	ik_u32 type;  /* enum ik_softiommu_fault_type */
	ik_u32 access; /* IK_SOFTIOMMU_READ or _WRITE */
	ik_u32 level;  /* walk level where it was found (of `stage`) */
	/* Nested streams (0 otherwise), as in struct ik_softiommu_xlate: */
	ik_u32 stage;    /* IK_SOFTIOMMU_STAGE_1 or _2 (ONLY: not nested) */
	ik_u32 s2_class; /* stage 2: IK_SOFTIOMMU_S2_TT or _IN */
	ik_u32 tag2;     /* the stage-2 tag (VMID / DID) */
	ik_u64 ipa;      /* the IPA stage 1 produced, or stage 2 failed on */
};

/* ik_softiommu_fault_pop - oldest queued fault into *out; -ENOENT when the
 * queue is empty, -EINVAL for NULL arguments.  O(1). */
IK_API int ik_softiommu_fault_pop(struct ik_softiommu *s, struct ik_softiommu_fault *out);

/* One history entry. */
struct ik_softiommu_event {
	ik_u64 seq; /* 1, 2, ... in the order the soft IOMMU saw them */
	ik_u64 iova;	/* first address of a range op or driver event */
	ik_u64 size;	/* bytes of a range op or driver event */
	ik_u32 op; /* IK_SOFTIOMMU_OP_* or IK_SOFTIOMMU_EV_* */
	ik_u32 tag;	/* the tag it applied to */
};

#define IK_SOFTIOMMU_REPORT_HIST 16	/* history entries a stale report carries */

/*
 * struct ik_softiommu_stale - a stale-translation report (checking mode).
 *   cached: the IOTLB's answer (oa, lg2_size, prot), or for a walk-cache
 *           report (walk_cache true) the cached leaf_table.
 *   fresh:  what the tables say now (possibly a fault).
 *   hist[0..nhist): the most recent events, oldest first, ending at `seq`.
 */
struct ik_softiommu_stale {
	ik_u64 iova;	/* the input address whose translation was stale */
	ik_u64 seq;	/* history sequence number of the access */
	ik_u32 sid;	/* the stream */
	ik_u32 tag;	/* the context's tag */
	ik_u32 access;	/* IK_SOFTIOMMU_READ or _WRITE */
	bool walk_cache;	/* a walk-cache report (else an IOTLB one) */
	struct ik_softiommu_xlate cached;
	struct ik_softiommu_xlate fresh;
	ik_u32 nhist;	/* valid entries of hist */
	struct ik_softiommu_event hist[IK_SOFTIOMMU_REPORT_HIST]; /* the most recent events,
								     oldest first, ending at seq */
};

/* ik_softiommu_stale_pop - oldest stale report into *out; -ENOENT when
 * none, -EINVAL for NULL arguments.  O(1). */
IK_API int ik_softiommu_stale_pop(struct ik_softiommu *s, struct ik_softiommu_stale *out);

/*
 * ik_softiommu_history - copy up to `max` most recent events, oldest first,
 * into ev[]; returns how many (>= 0) or -EINVAL (s NULL, or ev NULL with
 * max > 0; ev may be NULL when max is 0).  O(max).
 */
IK_API int ik_softiommu_history(struct ik_softiommu *s, struct ik_softiommu_event *ev,
				ik_u32 max);

/* Counters since create (or the last ik_softiommu_stats_reset). */
struct ik_softiommu_stats {
	ik_u64 accesses;     /* translations asked for (one per block a DMA crosses) */
	ik_u64 bytes;        /* bytes transferred by dma_read/dma_write */
	ik_u64 iotlb_hits, iotlb_misses;	/* IOTLB lookups that hit / missed */
	ik_u64 iotlb_fills, iotlb_evictions;	/* entries inserted / evicted to make room */
	ik_u64 iotlb_inv_entries; /* entries dropped by invalidations */
	ik_u64 walks;        /* walker calls (misses, and checks) */
	ik_u64 walk_cache_hits, walk_cache_misses;	/* walk-cache lookups that hit / missed */
	ik_u64 fill_races;   /* walk results not cached because an invalidation overtook them */
	ik_u64 faults, faults_dropped;	/* faults queued / dropped on a full fault queue */
	ik_u64 stale, stale_dropped;	/* stale reports queued / dropped on a full queue */
	ik_u64 cmds;         /* commands executed (syncs included) */
	ik_u64 syncs;	/* IK_SOFTIOMMU_OP_SYNC commands */
	ik_u64 nops;	/* IK_SOFTIOMMU_OP_NOP commands */
	ik_u64 inv_all, inv_tag, inv_range; /* invalidations by op: INV_ALL, INV_TAG, INV_RANGE */
	ik_u64 inv_s2_tag, inv_s2_range;	/* invalidations by op: INV_S2_TAG, INV_S2_RANGE */
};

/* ik_softiommu_stats - snapshot the counters (taken under the lock, so
 * consistent with each other); -EINVAL for NULL.  O(1). */
IK_API int ik_softiommu_stats(struct ik_softiommu *s, struct ik_softiommu_stats *out);
/* ik_softiommu_stats_reset - set every counter to 0 (caches, queues and the
 * history are kept).  NULL is ignored.  O(1). */
IK_API void ik_softiommu_stats_reset(struct ik_softiommu *s);

/* ------------------------------------------------------------ command queues */

/*
 * ik_softiommu_exec_smmu - execute one decoded SMMUv3 command:
 *   TLBI_NH_VA      INV_RANGE of tag ASID, combined entries of (ASID, VMID)
 *                   (IK_SOFTIOMMU_CMD_VMID), over
 *                   [addr, addr + (NUM+1) << (SCALE + granule)) with range
 *                   fields, or the entries holding addr without (TG = 0);
 *                   Leaf keeps the walk cache;
 *   TLBI_S2_IPA     INV_S2_RANGE of tag VMID over that range (combined
 *                   entries: the whole VMID);
 *   TLBI_NH_ASID    INV_TAG(ASID, VMID);  TLBI_S12_VMALL  INV_S2_TAG(VMID);
 *   TLBI_NH_ALL, TLBI_NSNH_ALL  INV_ALL;  CMD_SYNC  SYNC;
 *   CFGI_*, ATC_INV, PRI_RESP, TLBI_EL2_ALL
 *                   NOP (no configuration cache, ATC or EL2 regime here).
 * So a stage-1 context is attached with tag = its ASID, a stage-2 context
 * with tag = its VMID.  Errors: -EINVAL (NULL, an opcode not listed, a range
 * that overflows); nothing changes.  Cost: as ik_softiommu_exec().
 */
IK_API int ik_softiommu_exec_smmu(struct ik_softiommu *s, const struct ik_smmu_cmd *c);

/*
 * ik_softiommu_exec_vtd - execute one decoded VT-d descriptor: IOTLB global
 * -> INV_ALL; IOTLB domain-selective -> INV_S2_TAG(DID); IOTLB
 * page-selective (G = 3) -> INV_S2_RANGE(DID, ADDR, 4 KiB << AM) (combined
 * entries: every one of the DID); PASID-based "all of a PASID" ->
 * INV_TAG(DID, PASID) and page-selective -> INV_RANGE(DID, PASID, ADDR,
 * 4 KiB << AM) (IK_SOFTIOMMU_CMD_PASID); IH is the leaf hint (ADDR must be
 * aligned to the size); invalidation wait -> SYNC;
 * context-cache, PASID-cache and device-TLB -> NOP.  Contexts are attached with tag = DID.
 * Errors: -EINVAL (NULL, other types or granularities, misaligned ADDR).
 */
IK_API int ik_softiommu_exec_vtd(struct ik_softiommu *s, const struct ik_vtd_desc *d);

/*
 * ik_softiommu_exec_riscv - execute one decoded RISC-V IOMMU command.  The
 * tag of an IOTINVAL is its PSCID when PSCV is set, else its GSCID when GV
 * is set: attach a first-stage context with tag = PSCID, a G-stage-only one
 * with tag = GSCID.
 *   IOTINVAL.VMA/GVMA  with a tag: AV -> INV_RANGE(tag) of the entries
 *                   holding ADDR (any page size), leaf only: the walk cache
 *                   is kept, as the specification lets an IOMMU keep
 *                   non-leaf entries on AV = 1 (after freeing a table, only
 *                   AV = 0 is enough); else INV_TAG(tag);
 *                   without one (every address space): INV_ALL;
 *   IOFENCE.C       SYNC (the consumer then writes DATA at ADDR if AV);
 *   IODIR.*         NOP (no device or process context cache here).
 * Errors: -EINVAL (NULL, an opcode or function not listed); nothing changes.
 */
IK_API int ik_softiommu_exec_riscv(struct ik_softiommu *s, const struct ik_riscv_cmd *c);

/*
 * ik_softiommu_exec_amd - execute one decoded AMD command:
 * INVALIDATE_IOMMU_PAGES -> INV_RANGE(DomainID, the range Address and S name,
 * see ik_amd_inv_decode()) with !PDE as the leaf hint, or INV_TAG(DomainID)
 * when that range is the whole space; INVALIDATE_IOMMU_ALL -> INV_ALL;
 * COMPLETION_WAIT -> SYNC; INVALIDATE_DEVTAB_ENTRY and INVALIDATE_IOTLB_PAGES
 * (no device table cache or ATC in this model) -> NOP.  Contexts are
 * attached with tag = DomainID.  GN (PASID) invalidations are executed by
 * DomainID alone (more than asked, never less).  Errors: -EINVAL (NULL,
 * another opcode).
 */
IK_API int ik_softiommu_exec_amd(struct ik_softiommu *s, const struct ik_amd_cmd *c);

/*
 * struct ik_softiommu_cq - the soft IOMMU's end of one command queue: the
 * command unit's software consumer (struct ik_cmdq_sw) whose handler decodes
 * each entry (SMMUv3, VT-d, RISC-V or AMD, by the queue's entry format) and
 * executes it here.
 * An entry the decoder or ik_softiommu_exec_*() rejects stops the consumer
 * with CERROR_ILL, which the producer side repairs (see <iommukit/cmdq.h>).
 *
 * Set-up, for a queue built by the driver with ik_cmdq_init()/create():
 *   1. ik_softiommu_cq_init(&cq, s, &cfg) with the ring memory the queue will
 *      use (cfg.ring, cfg.ring_dma) and its entry format, size and flags;
 *   2. give the queue regs = &ik_softiommu_cq_regs and regs_ctx = &cq,
 *   3. choose who consumes:
 *      - inline: nothing more.  The PROD write's doorbell drains the queue
 *        on the producing thread, as an emulator runs its device model when
 *        the guest writes PROD; a sync has completed when issue() returns.
 *      - a thread: a host thread runs ik_softiommu_cq_run() until told to
 *        stop (the IOMMU working asynchronously, as hardware does);
 *      - polled: ik_softiommu_cq_poll() from any thread.
 *      The three may be mixed: one lock per queue makes one of them drain at
 *      a time (K1/K2 in src/soft/softiommu_cmdq.c: a doorbell that finds the lock
 *      taken leaves, and the holder looks again after unlocking).
 * Fields: sw (for ik_cmdq_sw_inject() / ik_cmdq_sw_error(), called with no
 * consumer running; sw.completions_refused counts completion stores not
 * performed), executed/rejected (counters); the rest private.
 */
struct ik_softiommu_cq_config {
	const struct ik_cmdq_fmt *fmt; /* &ik_cmdq_fmt_smmuv3, _vtd128, _vtd256, _riscv or _amd */
	unsigned log2_entries;	/* log2 of the ring's entries */
	unsigned flags;       /* IK_CMDQ_CFG_NO_WRAP as the queue's */
	void *ring;	/* the ring's host address */
	ik_u64 ring_dma;	/* the ring's device address */
	/* Completion writes outside the ring (the address is the submitter's:
	 * a guest's in a VMM).  NULL (the default): not performed, counted in
	 * sw.completions_refused; the sync still completes, no error.
	 * ik_softiommu_host_write32: a release store at the host address equal
	 * to the device address (trusted; see "Host memory" above). */
	void (*write32)(void *ctx, ik_u64 addr, ik_u32 val);
	void *write_ctx;
	/* VT-d only, optional: the unit's rules (copied); a descriptor that
	 * ik_vtd_desc_validate() refuses under them stops the consumer with
	 * CERROR_ILL, as the unit would set FSTS.IQE (e.g. the rules of QEMU
	 * 7.2, ik_vtd_desc_rules_qemu72()).  NULL: only the encoding and what
	 * ik_softiommu_exec_vtd() can execute are checked. */
	const struct ik_vtd_desc_rules *vtd_rules;
};

/* The consumer state (ik_softiommu_cq_init()); see struct ik_softiommu_cq_config for the fields. */
struct ik_softiommu_cq {
	struct ik_cmdq_sw sw; /* the software consumer; ik_cmdq_sw_inject() / ik_cmdq_sw_error()
				 with none running */
	struct ik_softiommu *s;	/* private: the soft IOMMU the commands run on */
	ik_lock_t lock;     /* one consumer at a time */
	ik_u32 prod;        /* last PROD written through ik_softiommu_cq_regs */
	unsigned vtd_words; /* 0: SMMUv3, RISC-V or AMD; 2 or 4: VT-d descriptor words */
	bool riscv;         /* RISC-V commands (ik_cmdq_fmt_riscv) */
	bool amd;           /* AMD command buffer */
	void (*write32)(void *ctx, ik_u64 addr, ik_u32 val); /* private: the config's completion
								write */
	void *write_ctx;	/* private: its context */
	bool have_rules;	/* private: rules is set */
	struct ik_vtd_desc_rules rules;	/* private: the config's vtd_rules, copied */
	ik_u64 executed, rejected; /* commands run / refused (atomic: ik_load_relaxed) */
};

/*
 * The queue's register hooks for a soft IOMMU consumer (regs_ctx = the
 * struct ik_softiommu_cq): CONS and PROD in memory as ik_cmdq_sw_regs, plus
 * a doorbell that drains the queue inline, and an error acknowledgement that
 * resumes it.  (A queue may also use ik_cmdq_sw_regs with regs_ctx = &cq.sw;
 * it then needs a thread or polling to make progress.)
 */
IK_API extern const struct ik_cmdq_regs ik_softiommu_cq_regs;

/* ik_softiommu_cq_init - see above.  Errors: -EINVAL (NULL, no ring, vtd_rules
 * with unknown flags or on an SMMUv3 or AMD queue, an entry format other than
 * the five (ik_cmdq_fmt_smmuv3, _vtd128, _vtd256, _riscv, _amd), or what
 * ik_cmdq_sw_init() rejects).  No allocation. */
IK_API int ik_softiommu_cq_init(struct ik_softiommu_cq *cq, struct ik_softiommu *s,
				const struct ik_softiommu_cq_config *cfg);

/*
 * ik_softiommu_cq_poll - consume up to `budget` published entries in order,
 * executing each and writing sync completions.  Returns the number consumed,
 * -EAGAIN while stopped on an unacknowledged error, -EINVAL.  Waits for the
 * queue's consumer lock if another thread is draining it.
 */
IK_API int ik_softiommu_cq_poll(struct ik_softiommu_cq *cq, unsigned budget);

/*
 * ik_softiommu_cq_run - the consumer loop for a host thread ("the IOMMU on
 * its own thread"): polls cqs[0..n) until *stop becomes non-zero (store it
 * with release), spinning briefly then IK_ENV_YIELD() when idle, and drains
 * what is published at that point before returning 0.  A queue whose lock
 * is held (drained inline at that moment) is skipped for that round.
 * -EINVAL for bad arguments.  The thread itself is the host's (the core
 * creates none).
 */
IK_API int ik_softiommu_cq_run(struct ik_softiommu_cq *const *cqs, unsigned n, const int *stop);

/* ik_softiommu_fault_name / op_name - short static names for printing
 * ("translation", "inv-range", ...; "unknown" for other values).  O(1). */
IK_API const char *ik_softiommu_fault_name(ik_u32 type);
IK_API const char *ik_softiommu_op_name(ik_u32 op);

IK_END_DECLS

#endif /* IOMMUKIT_SOFTIOMMU_H */
