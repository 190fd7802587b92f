/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/batch.h - turn page lists into the fewest, largest mappings.
 *
 * A DMA layer often holds the pages of a buffer as an array of page frame
 * numbers (pfns) or as a scatter-gather list.  Mapping each page separately
 * costs one page-table request (and one IOTLB notification) per page; these
 * helpers find the physically contiguous runs, so that one
 * ik_pgtable_map_sg() request maps the whole buffer and the engine can use
 * block entries where the alignment allows.
 *
 * Glossary:
 *   pfn      page frame number: physical address >> page shift.
 *   run      a maximal sequence of consecutive array elements whose pfns are
 *            consecutive ({1,5,6,7,9} has runs {1}, {5,6,7}, {9}).
 *   segment  a physically contiguous byte range (paddr, len); a segment list
 *            is mapped back to back in IOVA space by ik_pgtable_map_sg().
 *
 * Userspace drivers that map virtual ranges (VFIO type1) rather than physical
 * pages use ik_iovec_segs(): buffers in, page-aligned virtual segments out.
 *
 * All functions are O(n) in their input, allocate nothing, and touch only the
 * arrays passed in.
 *
 * Synchronization: none needed; the functions are pure over caller memory.
 * Concurrent calls on disjoint arrays are safe; the caller serialises calls
 * that share an output array.
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_BATCH_H
#define IOMMUKIT_BATCH_H

#include <iommukit/env.h>

IK_BEGIN_DECLS

/* A run of pfns: pfns[first .. first + count - 1] are pfn .. pfn + count - 1. */
struct ik_pfn_run {
	ik_u64 pfn;	/* first pfn of the run */
	ik_size first;	/* index of the run's first element in the input array */
	ik_size count;	/* number of pages in the run, >= 1 */
};

/* A physically contiguous segment. */
struct ik_seg {
	ik_u64 paddr;	/* physical (output) address of the first byte */
	ik_u64 len;	/* length in bytes */
};

/*
 * ik_pfn_runs - split pfns[0..n-1] into maximal runs of consecutive pfns.
 *
 * Writes at most `max_runs` runs to `runs` and returns the number of runs the
 * input has (which may exceed max_runs: then only the first max_runs were
 * written; call again with room for the returned count).  n == 0 returns 0.
 * `runs` may be NULL when max_runs is 0 (a call that only counts).
 * A pfn followed by pfn + 1 extends the run; anything else (including a
 * repeated or decreasing pfn, or the wrap from IK_U64_MAX) starts a new one.
 * Cost: one pass, n comparisons.
 */
IK_API ik_size ik_pfn_runs(const ik_u64 *pfns, ik_size n, struct ik_pfn_run *runs,
			   ik_size max_runs);

/*
 * ik_segs_from_runs - one segment per run: paddr = pfn << page_shift,
 * len = count << page_shift.  `segs` has room for `nruns` entries (it may be
 * the same memory as nothing else).  Returns nruns, or -EINVAL (as ik_s64)
 * when runs or segs is NULL (nothing written), page_shift > 63 or a run's
 * address or length overflows 64 bits, in which case `segs` may hold partial
 * output.  Cost: O(nruns).
 */
IK_API ik_s64 ik_segs_from_runs(const struct ik_pfn_run *runs, ik_size nruns,
				unsigned page_shift, struct ik_seg *segs);

/*
 * ik_segs_coalesce - merge, in place, neighbouring segments that are
 * physically contiguous (segs[i].paddr + segs[i].len == segs[i+1].paddr,
 * computed without wrapping: a segment that reaches or wraps past 2^64 is
 * never merged with anything, so the result covers exactly the input's
 * bytes).  Empty segments (len 0) are dropped.  Returns the new count (<= n).
 * Cost: one pass.
 */
IK_API ik_size ik_segs_coalesce(struct ik_seg *segs, ik_size n);

/*
 * A byte range of a virtual address space, as a struct iovec describes one
 * (iov_base, iov_len) but in fixed-width integers: the input and the output
 * of ik_iovec_segs().
 */
struct ik_iovec {
	ik_u64 base;	/* address of the first byte */
	ik_u64 len;	/* length in bytes */
};

/*
 * ik_iovec_segs - the fewest page-aligned virtual segments that cover a list
 * of buffers, for interfaces that map virtual ranges one call per range
 * (VFIO's VFIO_IOMMU_MAP_DMA takes a page-aligned vaddr, iova and size; a
 * userspace driver maps each segment at an IOVA range of its own, and finds
 * each buffer's IOVA from its offset in its segment).
 *
 * Each non-empty iov[i] covers [base rounded down to page_size, base + len
 * rounded up to page_size).  The buffers are taken in order, never sorted:
 * a buffer whose aligned range starts inside or right after the current
 * segment, and not below the segment's start, extends that segment (two
 * buffers sharing a page, or one starting on the page after the other
 * ends, need one segment); any other buffer starts a new segment.  Sort the
 * buffers by address first for the fewest segments; buffers that overlap
 * out of order get overlapping segments (which VFIO accepts: one page may
 * be mapped at several IOVAs).  Empty buffers (len 0) are skipped.
 *
 * seg_of, when not NULL, has room for n entries: seg_of[i] is the index of
 * the segment that holds iov[i] (iov[i] starts iov[i].base - segs[k].base
 * bytes into segment k), or (ik_size)-1 for an empty buffer.
 *
 * Writes at most `max_segs` segments to `segs` and returns the number of
 * segments the input needs (which may exceed max_segs: then only the first
 * max_segs were written; call again with room for the returned count).
 * `segs` may be NULL when max_segs is 0 (a call that only counts).
 *
 * Errors (as a negative ik_s64; nothing is written to segs or seg_of):
 * -EINVAL when page_size is not a power of two, iov is NULL with n > 0, segs
 * is NULL with max_segs > 0, a buffer wraps past 2^64 (base + len > 2^64),
 * or a segment would cover all 2^64 bytes (its length does not fit).
 * Cost: two passes over iov (one validates, one writes), O(n).
 */
IK_API ik_s64 ik_iovec_segs(const struct ik_iovec *iov, ik_size n, ik_u64 page_size,
			    struct ik_iovec *segs, ik_size max_segs, ik_size *seg_of);

IK_END_DECLS

#endif /* IOMMUKIT_BATCH_H */
