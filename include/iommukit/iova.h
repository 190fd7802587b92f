/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/iova.h - IOVA allocator: a domain of page frame numbers from which
 * DMA address ranges are handed out, top-down, in O(log n), with per-CPU range
 * caches (rcaches) in front of it.
 *
 * A domain covers the pfns [start_pfn, end_pfn] at a power-of-two granule (the
 * page size, in bytes; iova = pfn * granule).  The memory for the domain
 * itself is the caller's (struct ik_iova_domain); nodes and magazines come
 * from the domain's allocator.
 * Units: pages - pfns and npages count granules, never bytes; ik_pfn_to_addr()
 * and ik_bytes_to_pages() of <iommukit/sizes.h> convert for the page tables.
 *
 * Glossary
 *   pfn        a page frame number of the IOVA space (an address / granule).
 *   range      [lo, hi] of pfns, inclusive: an allocation or a reservation.
 *   gap        the free pfns between two neighbouring ranges.  Each tree node
 *              owns the gap just below it; the gap above the highest range is
 *              the domain's "top gap".
 *   limit      the highest pfn an allocation may use (its last pfn <= limit).
 *   size-aligned
 *              the start is a multiple of npages rounded up to a power of two
 *              (IK_IOVA_SIZE_ALIGNED); the length stays npages.
 *   afit       of a gap: the largest npages whose size-aligned request fits
 *              in it.  The requests that fit are exactly 1..afit (see
 *              src/iova/iova.c for why one number is enough).
 *   rcache     range cache: for each size class 2^k pages (k = 0 .. log2 of
 *              the bound), a per-CPU pair of magazines and a shared depot.
 *   magazine   a fixed-size stack of cached pfns of one size class.
 *   depot      a per-class list of full magazines shared by all CPUs.
 *   flush      return cached ranges to the tree (they become free).
 *
 * How it works.  Ranges live in an augmented red-black tree ordered by pfn.
 * A node stores where its own gap starts and where its range starts (its
 * range ends where the next node's gap starts), plus, for its subtree, the
 * largest gap and the largest afit.  An allocation walks down the path to
 * the limit once, picks the highest subtree or gap on it that can hold the
 * request (the summaries say so exactly), then descends into it: a bounded
 * number of root-to-leaf paths, never a walk along the tree, also when the
 * space is full or fragmented and the request fails (a failure with the
 * limit above every range is decided at the root).  When the limit is above
 * every range, the gap last freed into or allocated from is tried first: one
 * climb from its node to the root says whether it is the answer.  A free
 * next to its successor keeps its node, with an empty range, until the next
 * allocation there takes it back (at most one such node per domain).  A
 * node is 56 bytes on a 64-bit host.
 *
 * Synchronization
 *   call                                   may run concurrently with
 *   ------------------------------------   --------------------------------
 *   ik_iova_alloc, _free, _reserve,        every call below except _init and
 *   _find, _next, _largest_free, _stats,   _destroy (each takes the domain's
 *   _probe_stats, _check, _for_each,       tree lock inside; _stats, _check
 *   _for_each_cached                       and _for_each_cached also take the
 *                                          rcache locks; the callbacks of
 *                                          _for_each* run under those locks
 *                                          and must not call into the domain)
 *   ik_iova_alloc_fast, _free_fast         everything except _init/_destroy;
 *                                          a hit takes only the per-CPU lock
 *                                          of (size class, IK_ENV_CPU_ID()),
 *                                          so a migrated thread stays correct
 *   ik_iova_flush_cpu, _flush_all          everything except _init/_destroy
 *   ik_iova_init, ik_iova_destroy          nothing (the caller serialises)
 *
 *   Lock order (never the reverse): per-CPU lock -> depot lock -> tree lock.
 *   The allocator callbacks are called with the tree lock held (node
 *   allocation), a per-CPU lock held (magazine allocation), every lock held
 *   (ik_iova_check's scratch array), or none (init); they must not call into
 *   the domain.
 *
 * Errors are negative errno values; on error nothing changes, except that a
 * request that fails with -ENOSPC may first have flushed the rcaches (which
 * changes no allocation, only where free ranges are kept).
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_IOVA_H
#define IOMMUKIT_IOVA_H

#include <iommukit/env.h>
#include <iommukit/atomic.h>
#include <iommukit/lock.h>
#include <iommukit/rbtree.h>
#include <iommukit/sizes.h>

IK_BEGIN_DECLS

/* Allocation flags. */
#define IK_IOVA_SIZE_ALIGNED 0x1u /* start aligned to npages rounded up to 2^k */
#define IK_IOVA_NO_FLUSH 0x2u	  /* on -ENOSPC do not flush the rcaches and retry */

/* Configuration flags. */
#define IK_IOVA_CFG_NO_RCACHE 0x1u /* no range caches: _fast calls go to the tree */
#define IK_IOVA_CFG_LOCKED_RCACHE 0x2u /* per-CPU locks even where the env offers a
					  lockless per-CPU exclusion (see
					  ik_iova_rcache_mode()) */

/*
 * How the range caches keep a CPU's slots to one user at a time
 * (ik_iova_rcache_mode()).  Chosen at ik_iova_init() from what the env
 * offers (see "per-CPU exclusion" in <iommukit/env.h>) and the config.
 */
enum ik_iova_rcache_mode {
	IK_IOVA_RCACHE_NONE = 0,   /* no range caches (IK_IOVA_CFG_NO_RCACHE) */
	IK_IOVA_RCACHE_LOCK = 1,   /* a per-CPU lock: one atomic exchange per hit */
	IK_IOVA_RCACHE_RSEQ = 2,   /* restartable sequences (hosted Linux, x86-64):
				      a hit has no atomic instruction and no lock */
	IK_IOVA_RCACHE_PINNED = 3, /* the env's pinned sections (kernel ports):
				      a hit has no atomic instruction and no lock */
};

/* Defaults. */
#define IK_IOVA_RCACHE_MAX_PAGES 32u /* largest cached size, pages */
#define IK_IOVA_DEPOT_MAX 32u	     /* full magazines kept per size class */
#define IK_IOVA_MAG_SIZE 126u	     /* pfns per magazine (1 KiB magazine) */
#define IK_IOVA_MAX_PAGES ((ik_u64)1 << 63) /* most pfns a domain may cover */

/*
 * A tree node: one allocated or reserved range.  Not API beyond the fact that
 * it exists; use struct ik_iova_range to look at ranges.
 */
struct ik_iova_node {
	struct ik_rb_node rb;	/* not API: the tree link */
	ik_u64 gap_lo;	 /* first pfn of the gap below this range (== lo: none) */
	ik_u64 lo;	 /* first pfn of the range; it ends at next->gap_lo - 1 */
	ik_u64 max_gap;	 /* largest gap in the subtree, pages */
	ik_u64 max_afit; /* largest afit in the subtree; bit 63: reserved range */
};

/* A range as reported to the caller. */
struct ik_iova_range {
	ik_u64 lo, hi;	/* first and last pfn */
	bool reserved;	/* made by ik_iova_reserve(), not by an allocation */
};

/* Counters and sizes, as ik_iova_stats() reports them. */
struct ik_iova_stats {
	ik_u64 ranges;		/* ranges in the tree, reservations and cached included */
	ik_u64 pages;		/* pages they cover */
	ik_u64 reserved_ranges; /* of which reservations */
	ik_u64 reserved_pages;	/* pages they cover */
	ik_u64 largest_gap;	/* largest free range, pages */
	ik_u64 cached_ranges;	/* ranges held in magazines and depots */
	ik_u64 cached_pages;	/* pages they cover */
	ik_u64 magazines;	/* magazines allocated */
	ik_u64 bytes;		/* memory held: nodes (kept and spare ones too), magazines, per-CPU arrays */
	ik_u64 node_bytes;	/* sizeof a node */
	ik_u64 flushes;		/* flush-and-retry events after -ENOSPC */
	ik_u64 trims;		/* magazines returned to the tree by depot trimming */
	ik_u64 visits;		/* tree nodes visited by allocations, in total */
	ik_u64 last_visits;	/* ... by the last tree allocation */
	ik_u64 max_visits;	/* ... by the worst one */
	ik_u64 summary_updates; /* tree nodes whose subtree summaries an update
				   recomputed (or checked and found unchanged,
				   where an early-stopping pass ends), in total:
				   allocations, frees, reservations, rotations */
};

/* struct ik_iova_config - what ik_iova_init() needs. */
struct ik_iova_config {
	ik_u64 granule;		/* bytes per page, a power of two */
	ik_u64 start_pfn;	/* first pfn of the space */
	ik_u64 end_pfn;		/* last pfn, >= start_pfn; at most 2^63 pfns */
	ik_u64 rcache_max_pages; /* largest cached size, a power of two <= 2^20;
				   0: IK_IOVA_RCACHE_MAX_PAGES */
	unsigned depot_max;	/* full magazines per class in the depot; 0: default */
	unsigned flags;		/* IK_IOVA_CFG_* */
	const struct ik_allocator *allocator; /* NULL: the env's */
};

/* ---- rcache internals (not API) ---- */
struct ik_iova_mag {
	ik_u32 n;	/* pfns held */
	ik_u32 _pad;	/* padding */
	struct ik_iova_mag *next; /* in the depot */
	ik_u64 pfn[IK_IOVA_MAG_SIZE];	/* the cached pfns, pfn[0..n) */
};

/*
 * struct ik_iova_cpu - not API: one CPU's magazines of one size class.  In
 * the lockless modes (RSEQ, PINNED) a hit on the slot's own CPU takes no
 * lock: it reads `held` inside its restartable sequence or pinned section
 * and leaves the slot alone when it is set.  Everything else (misses, other
 * CPUs, flushes, stats) takes `lock`, sets `held` and then fences the
 * slot's CPU (see iova_rcache.c).
 */
struct ik_iova_cpu {
	ik_lock_t lock;	/* guards loaded and prev among lockers */
	ik_u32 held;	/* lockless modes: non-zero while a locker works on the slot */
	struct ik_iova_mag *loaded, *prev;	/* the magazine in use and the one before it */
} IK_ALIGNED(IK_CACHELINE);

/* struct ik_iova_depot - not API: the full magazines of one size class, shared by all CPUs. */
struct ik_iova_depot {
	ik_lock_t lock;	/* guards n and head */
	unsigned n;	/* magazines held */
	struct ik_iova_mag *head;	/* a list through ik_iova_mag.next */
} IK_ALIGNED(IK_CACHELINE);

/* The domain.  Caller-owned memory; fields are not API. */
struct ik_iova_domain {
	/* tree (under lock) */
	ik_lock_t lock;
	struct ik_rb_root root;
	struct ik_iova_node *last; /* the highest range, NULL when empty */
	struct ik_iova_node *hint; /* owner of the gap last freed into or allocated from */
	struct ik_iova_node *tomb; /* a freed range's node kept with an empty range */
	struct ik_iova_node *spare; /* a freed node kept for the next allocation, or NULL */
	unsigned hint_credit;	/* 1: the last try of the hint succeeded */
	ik_u32 probe_hits;	/* see ik_iova_probe_stats(); in what was padding */
	ik_u64 last_hi;		/* its last pfn */
	ik_u64 start_pfn, end_pfn, granule;
	const struct ik_allocator *alloc;
	ik_u64 nr_ranges, nr_pages, nr_reserved, reserved_pages;
	ik_u64 nr_flushes, nr_trims, visits, last_visits, max_visits;
	ik_u64 summary_updates;	/* see struct ik_iova_stats */
	/* rcache: read-only after init (what a hit reads comes first) */
	ik_u64 rc_max_pages;	/* 0: no rcache */
	struct ik_iova_cpu *rc_cpu;	 /* [class * rc_ncpus + cpu] */
	unsigned rc_ncpus;	/* slots per class */
	unsigned rc_mode;	/* enum ik_iova_rcache_mode */
	unsigned rc_classes, depot_max; /* size classes; full magazines per depot */
	struct ik_iova_depot *rc_depot; /* [class] */
	/* rcache: written */
	unsigned rc_maybe_cached; /* hint: something may be cached (see iova_rcache.c) */
	ik_u32 probe_misses;	/* see ik_iova_probe_stats(); under the tree lock, in what was padding */
	ik_u64 rc_mags;		/* magazines allocated (atomic) */
	ik_u64 live;		/* IK_IOVA_LIVE between init and destroy */
};

/* What `live` holds while a domain is initialised (debug builds check it). */
#define IK_IOVA_LIVE 0x69766f61646f6dull

/* ---- lifetime ---- */

/*
 * ik_iova_init - set up `d` over cfg's space.  Allocates the per-CPU and depot
 * arrays (IK_ENV_NR_CPUS() x classes cache lines); magazines are allocated
 * when first needed.
 * Errors: -EINVAL (d or cfg NULL, granule not a power of two, start > end,
 * more than 2^63 pfns, rcache bound not a power of two or above 2^20, unknown
 * cfg->flags bits), -ENOMEM.
 * Precondition: `d` is not a live domain (initialised and not destroyed):
 * re-initialising one would leak its ranges and arrays.  Builds with
 * IK_DEBUG detect it and return -EBUSY (changing nothing); release builds do
 * not read `d` before writing it, so it may be uninitialised memory.
 * Cost: O(cpus x classes).  Calls the allocator.
 */
IK_API int ik_iova_init(struct ik_iova_domain *d, const struct ik_iova_config *cfg);

/*
 * ik_iova_destroy - free every node, magazine and array of `d`.  Every range
 * is forgotten.  O(n + cached).  No other call may run on `d`.  NULL, or a
 * domain already destroyed, is ignored; afterwards `d` may be initialised
 * again.
 */
IK_API void ik_iova_destroy(struct ik_iova_domain *d);

/* ---- the tree ---- */

/*
 * ik_iova_alloc - allocate npages pfns, the highest fitting range whose last
 * pfn is <= limit (limit above end_pfn means end_pfn), and store its first
 * pfn in *pfn.  flags: IK_IOVA_SIZE_ALIGNED, IK_IOVA_NO_FLUSH.  When the tree
 * has no fitting range and the rcaches may hold ranges, flushes every rcache
 * and tries once more (unless IK_IOVA_NO_FLUSH).
 * Errors: -EINVAL (d or pfn NULL, npages 0 or more than the space, limit <
 * start_pfn, unknown flags),
 * -ENOSPC (no fitting range), -ENOMEM (node allocation failed).
 * Cost: O(log n) tree steps, failing or not; plus a flush on -ENOSPC.
 * Calls the allocator at most once, under the tree lock (not at all when
 * the range goes where a free just kept an empty node, or when the domain
 * holds a spare node from an earlier free).
 */
IK_API int ik_iova_alloc(struct ik_iova_domain *d, ik_u64 npages, ik_u64 limit,
			 unsigned flags, ik_u64 *pfn);

/*
 * ik_iova_free - free the allocation that starts at pfn.
 * Errors: -EINVAL (d NULL); -ENOENT (no allocation starts at pfn: never
 * allocated, already freed, inside a range, or a reservation).  A range held
 * by an rcache (given to ik_iova_free_fast) must not be freed again here:
 * that is a double free this call cannot see; ik_iova_check() reports it.
 * O(log n).  Frees at most two nodes through the allocator: the domain
 * keeps this range's node (empty) in the tree for the next allocation
 * there when its successor starts right after it, and otherwise keeps one
 * erased node as a spare for the next allocation anywhere; a node that
 * finds the spare taken goes back to the allocator.
 */
IK_API int ik_iova_free(struct ik_iova_domain *d, ik_u64 pfn);

/*
 * ik_iova_reserve - keep [lo, hi] out of every allocation (MSI windows,
 * reserved regions).  A reservation that overlaps or touches other
 * reservations is merged with them into one range.
 * Errors: -EINVAL (d NULL, lo > hi, or not inside [start_pfn, end_pfn]),
 * -EBUSY (it overlaps an allocation), -ENOMEM.  Cost: O((1 + merged) log n).
 */
IK_API int ik_iova_reserve(struct ik_iova_domain *d, ik_u64 lo, ik_u64 hi);

/*
 * ik_iova_find - the range (allocation or reservation) containing pfn.  A
 * range held by an rcache is still allocated in the tree and is reported as
 * an allocation.  Errors: -EINVAL (d or r NULL); -ENOENT (pfn is free or
 * outside the domain).  O(log n).
 */
IK_API int ik_iova_find(struct ik_iova_domain *d, ik_u64 pfn, struct ik_iova_range *r);

/*
 * ik_iova_next - the lowest range whose first pfn is >= from (iteration:
 * start at start_pfn, continue at r.hi + 1 until r.hi == end_pfn or
 * -ENOENT).  Errors: -EINVAL (d or r NULL); -ENOENT (none).  O(log n).
 */
IK_API int ik_iova_next(struct ik_iova_domain *d, ik_u64 from, struct ik_iova_range *r);

/*
 * ik_iova_for_each - call fn for every range in ascending order, under the
 * tree lock; stops and returns fn's value when it is not 0.  -EINVAL (fn
 * never called) when d or fn is NULL; ctx is only passed to fn.  O(n).
 */
IK_API int ik_iova_for_each(struct ik_iova_domain *d,
			    int (*fn)(void *ctx, const struct ik_iova_range *r), void *ctx);

/*
 * ik_iova_largest_free - the size in pages of the largest free range whose
 * last pfn is <= limit, in *pages (0: none).  Errors: -EINVAL (d or pages
 * NULL, limit < start_pfn).  O(log n).
 */
IK_API int ik_iova_largest_free(struct ik_iova_domain *d, ik_u64 limit, ik_u64 *pages);

/* ik_iova_stats - counters, see struct ik_iova_stats.  O(cpus x classes). */
IK_API void ik_iova_stats(struct ik_iova_domain *d, struct ik_iova_stats *st);

/*
 * ik_iova_probe_stats - how often the hint answered an allocation.  When the
 * limit lies above every range, an allocation may first try the gap last
 * freed into or allocated from: one climb from its node to the root says
 * whether that gap is the answer (it fits, and nothing above it does).  A
 * hit skips the descent from the root; a miss (a higher gap fits) is
 * followed by it.  The hint is tried after a hit and otherwise about once
 * in 64 allocations.  Stores the counts since init, modulo 2^32 (they live
 * in what was padding of struct ik_iova_domain, so that its layout stays as
 * it was), in *hits and *misses.  Takes the tree lock.  O(1).
 * Errors: -EINVAL (d, hits or misses NULL).
 */
IK_API int ik_iova_probe_stats(struct ik_iova_domain *d, ik_u32 *hits, ik_u32 *misses);

/*
 * ik_iova_check - verify every invariant: red-black shape, order, augmented
 * values, ranges inside the domain and not overlapping, counters, and rcache
 * contents (each cached pfn starts an allocation of exactly its class size,
 * aligned to it, cached once, magazines and depots within their bounds).
 * Returns 0 or one of IK_IOVA_CHECK_*; -ENOMEM if it could not allocate its
 * scratch array; -EINVAL for a NULL d.  O(n + c log c) for c cached ranges;
 * meant for tests and debug builds.  Takes every lock (in the documented
 * order).
 */
enum {
	IK_IOVA_CHECK_OK = 0,
	IK_IOVA_CHECK_RBTREE = 1,	/* shape, colours or order */
	IK_IOVA_CHECK_AUGMENT = 2,	/* a cached subtree value is wrong */
	IK_IOVA_CHECK_BOUNDS = 3,	/* a range outside [start, end] */
	IK_IOVA_CHECK_OVERLAP = 4,	/* empty or overlapping ranges */
	IK_IOVA_CHECK_COUNTERS = 5,	/* ranges/pages counters disagree */
	IK_IOVA_CHECK_CACHE = 6,	/* a cached pfn is not a matching allocation */
	IK_IOVA_CHECK_CACHE_DUP = 7,	/* a pfn cached twice */
	IK_IOVA_CHECK_MAGAZINE = 8,	/* a magazine or depot over its bound */
	IK_IOVA_CHECK_HINT = 9,		/* the hint or the kept node is not in the tree,
					   or the spare node is */
};
/* ik_iova_check - see above: 0, an IK_IOVA_CHECK_* code, -ENOMEM or -EINVAL. */
IK_API int ik_iova_check(struct ik_iova_domain *d);

/* A one-line description of an IK_IOVA_CHECK_* value. */
IK_API const char *ik_iova_check_str(int code);

/* ---- range caches ---- */

/*
 * ik_iova_flush_cpu - return the ranges in cpu's magazines (every class) to
 * the tree.  cpu < IK_ENV_NR_CPUS(), else -EINVAL; -EINVAL also for a NULL
 * d.  O(cached log n).
 */
IK_API int ik_iova_flush_cpu(struct ik_iova_domain *d, unsigned cpu);

/* ik_iova_flush_all - return every cached range (all CPUs, all depots) to the
 * tree and free the magazines.  O(cached log n). */
IK_API void ik_iova_flush_all(struct ik_iova_domain *d);

/*
 * ik_iova_rcache_mode - how d's range caches exclude other users of a CPU's
 * slots (enum ik_iova_rcache_mode).  ik_iova_init() picks, in this order:
 * NONE with IK_IOVA_CFG_NO_RCACHE; LOCK with IK_IOVA_CFG_LOCKED_RCACHE;
 * PINNED when the env defines IK_ENV_CPU_PIN; RSEQ when the env defines the
 * IK_ENV_RSEQ hooks, the target is x86-64, the initialising thread has an
 * rseq area and IK_ENV_RSEQ_REGISTER() succeeds; LOCK otherwise.  In RSEQ and
 * PINNED modes a hit touches only its CPU's slot and the magazine, with plain
 * loads and stores; misses, ik_iova_flush_cpu() of another CPU, flushes,
 * ik_iova_stats(), ik_iova_check() and ik_iova_for_each_cached() take the
 * slot locks and then fence the CPUs whose slots they hold (RSEQ: a
 * membarrier(2) system call, a few microseconds, skipped when the caller
 * runs on that CPU; PINNED: IK_ENV_CPU_FENCE()).  The range caches are not
 * async-signal-safe in any mode.  A NULL d: IK_IOVA_RCACHE_NONE.  O(1).
 */
IK_API enum ik_iova_rcache_mode ik_iova_rcache_mode(const struct ik_iova_domain *d);

/*
 * ik_iova_for_each_cached - call fn(ctx, pfn, pages) for every cached range,
 * under the rcache locks (not the tree lock).  Stops on fn's non-zero value
 * and returns it.  -EINVAL (fn never called) when d or fn is NULL; ctx is
 * only passed to fn.  O(cached).
 */
IK_API int ik_iova_for_each_cached(struct ik_iova_domain *d,
				   int (*fn)(void *ctx, ik_u64 pfn, ik_u64 pages), void *ctx);

/*
 * ik_iova_alloc_fast - allocate npages, rounded up to a power of two when that
 * is at most the rcache bound, size-aligned, with the last pfn <= limit.
 * A hit pops the loaded magazine of this CPU's slot for the size class,
 * under that slot's lock only (LOCK mode) or with no lock and no atomic
 * instruction (RSEQ and PINNED modes, see ik_iova_rcache_mode()); a cached
 * range ending above the limit is not used.
 * A miss swaps in the previous magazine or a full one from the depot, else
 * allocates from the tree (ik_iova_alloc with IK_IOVA_SIZE_ALIGNED, flushing
 * the rcaches and retrying on -ENOSPC).  Free the range with
 * ik_iova_free_fast() and the same npages (or ik_iova_free()).
 * Errors: as ik_iova_alloc (-EINVAL also when the rounded size exceeds the
 * space).  Cost: O(1) on a hit (a magazine scan of at most IK_IOVA_MAG_SIZE
 * entries on the slow path when the top entries lie above the limit);
 * O(log n) otherwise.  May call the allocator (under the tree lock).
 * Exported; with IK_INLINE_FAST the hit is inlined (see below).
 */
IK_API int ik_iova_alloc_fast(struct ik_iova_domain *d, ik_u64 npages, ik_u64 limit,
			      ik_u64 *pfn);

/*
 * ik_iova_free_fast - give back a range from ik_iova_alloc_fast() (same
 * npages).  Up to the rcache bound the range goes into this CPU's loaded
 * magazine (as for a hit of ik_iova_alloc_fast(): locked or lockless by the
 * mode; it stays allocated in the tree until a flush); when both of the
 * CPU's magazines are full, one moves to the depot, and a depot over its
 * bound is trimmed by returning that magazine's ranges to the tree.  If a
 * new magazine cannot be allocated the range is freed to the tree.  Larger
 * ranges go to ik_iova_free().
 * Errors: -EINVAL (d NULL, npages 0); -ENOENT only where the range goes to
 * the tree and no allocation starts at pfn.  Passing a pfn that is not
 * allocated with this size, or freeing it twice, is undefined (not detected
 * here; ik_iova_check() finds it).  Cost: O(1) on a hit; O(log n) or a trim
 * otherwise.  Exported; with IK_INLINE_FAST the hit is inlined (see below).
 */
IK_API int ik_iova_free_fast(struct ik_iova_domain *d, ik_u64 pfn, ik_u64 npages);

/*
 * Inline fast path (opt-in).  ik_iova_alloc_fast() and ik_iova_free_fast()
 * are ordinary exported functions: a program that calls them depends only on
 * the library's ABI, and FFI or dlsym() users can call them.  A program that
 * defines IK_INLINE_FAST before including this header (as liburcu's
 * _LGPL_SOURCE does) gets the rcache hit inlined instead: the two names
 * become function-like macros for ik_iova_alloc_fast_inline() / ik_iova_free_fast_inline(),
 * which touch the per-CPU slots of struct ik_iova_domain directly and call
 * the exported slow paths below on a miss.  Such a program depends on the
 * layout of struct ik_iova_domain, struct ik_iova_cpu and struct ik_iova_mag,
 * which may change in any release: it must be rebuilt against each new
 * version of the library (or vendor the library, where this is the usual
 * case).  Both forms behave identically and may be mixed on one domain.
 * (name) in parentheses, e.g. (ik_iova_alloc_fast)(d, ...), always calls the
 * exported function.
 */
#ifdef IK_INLINE_FAST
/* Slow paths of the inline forms (not API; ABI for IK_INLINE_FAST users). */
IK_API int ik_iova_alloc_fast_slow_(struct ik_iova_domain *d, ik_u64 npages, ik_u64 limit,
				    ik_u64 *pfn);
IK_API int ik_iova_free_fast_slow_(struct ik_iova_domain *d, ik_u64 pfn, ik_u64 npages);

/* The slot of the current CPU for a size class, from the env's CPU hint
 * (LOCK mode; not API). */
IK_INLINE struct ik_iova_cpu *ik_iova_cpu_slot_(struct ik_iova_domain *d, unsigned cls)
{
	unsigned cpu = IK_ENV_CPU_ID();

	if (IK_UNLIKELY(cpu >= d->rc_ncpus))
		cpu = 0;
	return &d->rc_cpu[cls * d->rc_ncpus + cpu];
}

/*
 * RSEQ mode (not API): a hit is one restartable sequence that finds this
 * CPU's slot from the rseq area's cpu_id, backs off when the slot is held,
 * and commits with the store of the magazine's new count.  Preemption,
 * migration or a signal inside it restarts it from the top.  x86-64 only;
 * on other targets a domain never selects RSEQ mode.
 */
#if defined(IK_ENV_RSEQ_AREA) && defined(__x86_64__) && !defined(IK_IOVA_NO_RSEQ_ASM)
#define IK_IOVA_HAVE_RSEQ_ 1

/* The sequence finds a slot with a shift. */
IK_STATIC_ASSERT((sizeof(struct ik_iova_cpu) & (sizeof(struct ik_iova_cpu) - 1)) == 0,
		 "struct ik_iova_cpu: the size is a power of two");

/* The descriptor and the start: rax = &slot (cpu_id checked), rcx = loaded
 * (non-NULL), edx = its count.  Labels: 1 start, 2 end, 3 descriptor,
 * 4 abort handler (after the signature).  `pre` (may use rdx), `cs` and
 * `cpu` say where the rseq area is: its rseq_cs (offset 8) and cpu_id
 * (offset 4) as assembler operands. */
#define IK_IOVA_RSEQ_HEAD_(pre, cs, cpu)                                      \
	".pushsection __rseq_cs, \"aw\"\n\t"                                  \
	".balign 32\n"                                                        \
	"3:\n\t"                                                              \
	".long 0, 0\n\t"                                                      \
	".quad 1f, 2f - 1f, 4f\n\t"                                           \
	".popsection\n\t"                                                     \
	pre                                                                   \
	"leaq 3b(%%rip), %%rax\n\t"                                           \
	"movq %%rax, " cs "\n"                                                \
	"1:\n\t"                                                              \
	"movl " cpu ", %%eax\n\t"                                             \
	"cmpl %[ncpus], %%eax\n\t"                                            \
	"jae %l[miss]\n\t"                                                    \
	"shlq %[szlog], %%rax\n\t"                                            \
	"addq %[base], %%rax\n\t"                                             \
	"cmpl $0, %c[oheld](%%rax)\n\t"                                       \
	"jne %l[miss]\n\t"                                                    \
	"movq %c[oloaded](%%rax), %%rcx\n\t"                                  \
	"testq %%rcx, %%rcx\n\t"                                              \
	"jz %l[miss]\n\t"                                                     \
	"movl %c[on](%%rcx), %%edx\n\t"
#define IK_IOVA_RSEQ_TAIL_                                                    \
	"2:\n\t"                                                              \
	".pushsection __rseq_failure, \"ax\"\n\t"                             \
	".byte 0x0f, 0xb9, 0x3d\n\t"                                          \
	".long %c[sig]\n"                                                     \
	"4:\n\t"                                                              \
	"jmp %l[again]\n\t"                                                   \
	".popsection\n\t"
#define IK_IOVA_RSEQ_IN_(d, base)                                              \
	[base] "r"(base), [ncpus] "m"((d)->rc_ncpus),                          \
		[szlog] "i"(__builtin_ctzll(sizeof(struct ik_iova_cpu))),       \
		[oheld] "i"(__builtin_offsetof(struct ik_iova_cpu, held)),      \
		[oloaded] "i"(__builtin_offsetof(struct ik_iova_cpu, loaded)),  \
		[on] "i"(__builtin_offsetof(struct ik_iova_mag, n)),            \
		[opfn] "i"(__builtin_offsetof(struct ik_iova_mag, pfn)),        \
		[sig] "i"(IK_ENV_RSEQ_SIG)
/* One whole sequence: HEAD, the operation's `body` (it leaves the new count
 * in edx, or jumps to miss), the commit (the store of edx as the
 * magazine's count), TAIL; `area` is the input operand HEAD's `pre`, `cs`
 * and `cpu` use, `...` the operation's own input operands.  The function
 * around it provides the labels `again` (before it) and `miss`, and the
 * locals d and base. */
#define IK_IOVA_RSEQ_ASM_AT_(pre, cs, cpu, area, body, ...)                   \
	__asm__ goto(IK_IOVA_RSEQ_HEAD_(pre, cs, cpu) body                    \
		     "movl %%edx, %c[on](%%rcx)\n" /* commit */                \
		     IK_IOVA_RSEQ_TAIL_                                       \
		     :                                                        \
		     : area, IK_IOVA_RSEQ_IN_(d, base), __VA_ARGS__           \
		     : "rax", "rcx", "rdx", "memory", "cc"                    \
		     : miss, again)
/* The same, with the rseq area's address in the local `rs`. */
#define IK_IOVA_RSEQ_ASM_(body, ...)                                          \
	IK_IOVA_RSEQ_ASM_AT_("", "8(%[rs])", "4(%[rs])", [rs] "r"(rs), body, __VA_ARGS__)

/* The bodies: pop a pfn <= %[lim] into *%[out]; push %[pfn]. */
#define IK_IOVA_RSEQ_POP_                                                     \
	"testl %%edx, %%edx\n\t"                                              \
	"jz %l[miss]\n\t"                                                     \
	"movq %c[opfn]-8(%%rcx,%%rdx,8), %%rax\n\t"                           \
	"cmpq %[lim], %%rax\n\t"                                              \
	"ja %l[miss]\n\t"                                                     \
	"movq %%rax, (%[out])\n\t"                                            \
	"subl $1, %%edx\n\t"
#define IK_IOVA_RSEQ_PUSH_                                                    \
	"cmpl %[cap], %%edx\n\t"                                              \
	"jae %l[miss]\n\t"                                                    \
	"movq %[pfn], %c[opfn](%%rcx,%%rdx,8)\n\t" /* beyond the count: harmless */ \
	"addl $1, %%edx\n\t"

/* Pop a pfn <= lim (the range's first pfn; its last is <= limit) from this
 * CPU's loaded magazine of class cls: true on a hit (*pfn set). */
IK_INLINE bool ik_iova_rseq_pop_(struct ik_iova_domain *d, unsigned cls, ik_u64 lim, ik_u64 *pfn)
{
	struct ik_iova_cpu *base = &d->rc_cpu[cls * d->rc_ncpus];
	void *rs = IK_ENV_RSEQ_AREA();

	if (IK_UNLIKELY(!rs))
		return false;
again:
	IK_IOVA_RSEQ_ASM_(IK_IOVA_RSEQ_POP_, [lim] "r"(lim), [out] "r"(pfn));
	return true;
miss:
	return false;
}

/* Push pfn on this CPU's loaded magazine of class cls: true on a hit. */
IK_INLINE bool ik_iova_rseq_push_(struct ik_iova_domain *d, unsigned cls, ik_u64 pfn)
{
	struct ik_iova_cpu *base = &d->rc_cpu[cls * d->rc_ncpus];
	void *rs = IK_ENV_RSEQ_AREA();

	if (IK_UNLIKELY(!rs))
		return false;
again:
	IK_IOVA_RSEQ_ASM_(IK_IOVA_RSEQ_PUSH_, [cap] "i"(IK_IOVA_MAG_SIZE), [pfn] "r"(pfn));
	return true;
miss:
	return false;
}
#endif /* RSEQ */

#ifdef IK_ENV_CPU_PIN
/* PINNED mode (not API), called pinned on `cpu`: that CPU's loaded magazine
 * of class cls, or NULL when there is none, the slot is held by a locker or
 * the CPU has no slot. */
IK_INLINE struct ik_iova_mag *ik_iova_pinned_mag_(struct ik_iova_domain *d, unsigned cls,
						  unsigned cpu)
{
	struct ik_iova_cpu *c;

	if (IK_UNLIKELY(cpu >= d->rc_ncpus))
		return NULL;
	c = &d->rc_cpu[cls * d->rc_ncpus + cpu];
	if (IK_UNLIKELY(ik_load_acquire(&c->held)))
		return NULL;
	return c->loaded;
}
#endif

/* A range was cached: see the "maybe cached" protocol in iova_rcache.c. */
IK_INLINE void ik_iova_mark_cached_(struct ik_iova_domain *d)
{
	if (IK_UNLIKELY(!ik_load_relaxed(&d->rc_maybe_cached)))
		ik_store_relaxed(&d->rc_maybe_cached, 1u);
}

/* LOCK mode: this CPU's slot of class cls (*c), locked, and its loaded
 * magazine (maybe NULL).  The caller unlocks (*c)->lock. */
IK_ALWAYS_INLINE struct ik_iova_mag *ik_iova_lock_loaded_(struct ik_iova_domain *d, unsigned cls,
							  struct ik_iova_cpu **c)
{
	*c = ik_iova_cpu_slot_(d, cls);
	ik_lock(&(*c)->lock);
	return (*c)->loaded;
}

/* ik_iova_alloc_fast, inline: the same contract. */
IK_INLINE int ik_iova_alloc_fast_inline(struct ik_iova_domain *d, ik_u64 npages, ik_u64 limit,
					ik_u64 *pfn)
{
	if (IK_UNLIKELY(!d || !pfn))
		return -EINVAL;
	if (npages - 1 < d->rc_max_pages) {
		unsigned cls = (unsigned)IK_ILOG2_64_UP(npages);
		ik_u64 top = ((ik_u64)1 << cls) - 1;

#ifdef IK_IOVA_HAVE_RSEQ_
		if (IK_LIKELY(d->rc_mode == IK_IOVA_RCACHE_RSEQ)) {
			/* The whole cached range, [pfn, pfn + top], must be <= limit. */
			if (IK_LIKELY(limit >= top) && ik_iova_rseq_pop_(d, cls, limit - top, pfn))
				return 0;
			return ik_iova_alloc_fast_slow_(d, npages, limit, pfn);
		}
#endif
#ifdef IK_ENV_CPU_PIN
		if (IK_LIKELY(d->rc_mode == IK_IOVA_RCACHE_PINNED)) {
			struct ik_iova_mag *m = ik_iova_pinned_mag_(d, cls, IK_ENV_CPU_PIN());
			bool hit = m && m->n && m->pfn[m->n - 1] + top <= limit;

			if (IK_LIKELY(hit))
				*pfn = m->pfn[--m->n];
			IK_ENV_CPU_UNPIN();
			return hit ? 0 : ik_iova_alloc_fast_slow_(d, npages, limit, pfn);
		}
#endif
		if (IK_LIKELY(d->rc_mode == IK_IOVA_RCACHE_LOCK)) {
			struct ik_iova_cpu *c;
			struct ik_iova_mag *m = ik_iova_lock_loaded_(d, cls, &c);

			if (IK_LIKELY(m && m->n && m->pfn[m->n - 1] + top <= limit)) {
				*pfn = m->pfn[--m->n];
				ik_unlock(&c->lock);
				return 0;
			}
			ik_unlock(&c->lock);
		}
	}
	/* Misses, larger sizes, and a mode this unit was not built for. */
	return ik_iova_alloc_fast_slow_(d, npages, limit, pfn);
}

/* ik_iova_free_fast, inline: the same contract. */
IK_INLINE int ik_iova_free_fast_inline(struct ik_iova_domain *d, ik_u64 pfn, ik_u64 npages)
{
	if (IK_UNLIKELY(!d))
		return -EINVAL;
	if (npages - 1 < d->rc_max_pages) {
		unsigned cls = (unsigned)IK_ILOG2_64_UP(npages);

#ifdef IK_IOVA_HAVE_RSEQ_
		if (IK_LIKELY(d->rc_mode == IK_IOVA_RCACHE_RSEQ)) {
			if (IK_LIKELY(ik_iova_rseq_push_(d, cls, pfn))) {
				ik_iova_mark_cached_(d);
				return 0;
			}
			return ik_iova_free_fast_slow_(d, pfn, npages);
		}
#endif
#ifdef IK_ENV_CPU_PIN
		if (IK_LIKELY(d->rc_mode == IK_IOVA_RCACHE_PINNED)) {
			struct ik_iova_mag *m = ik_iova_pinned_mag_(d, cls, IK_ENV_CPU_PIN());
			bool hit = m && m->n < IK_IOVA_MAG_SIZE;

			if (IK_LIKELY(hit))
				m->pfn[m->n++] = pfn;
			IK_ENV_CPU_UNPIN();
			if (!hit)
				return ik_iova_free_fast_slow_(d, pfn, npages);
			ik_iova_mark_cached_(d);
			return 0;
		}
#endif
		if (IK_LIKELY(d->rc_mode == IK_IOVA_RCACHE_LOCK)) {
			struct ik_iova_cpu *c;
			struct ik_iova_mag *m = ik_iova_lock_loaded_(d, cls, &c);

			if (IK_LIKELY(m && m->n < IK_IOVA_MAG_SIZE)) {
				m->pfn[m->n++] = pfn;
				/* Under the slot lock: see iova_rcache.c. */
				ik_iova_mark_cached_(d);
				ik_unlock(&c->lock);
				return 0;
			}
			ik_unlock(&c->lock);
		}
	}
	return ik_iova_free_fast_slow_(d, pfn, npages);
}

#define ik_iova_alloc_fast(d, npages, limit, pfn) ik_iova_alloc_fast_inline(d, npages, limit, pfn)
#define ik_iova_free_fast(d, pfn, npages) ik_iova_free_fast_inline(d, pfn, npages)
#endif /* IK_INLINE_FAST */

IK_END_DECLS

#endif /* IOMMUKIT_IOVA_H */
