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

IK_END_DECLS

#endif /* IOMMUKIT_BATCH_H */
