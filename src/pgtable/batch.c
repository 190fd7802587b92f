/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Batch helpers: pfn runs and segment lists (see <iommukit/batch.h>). */
#include <iommukit/batch.h>

ik_size ik_pfn_runs(const ik_u64 *pfns, ik_size n, struct ik_pfn_run *runs, ik_size max_runs)
{
	ik_size i, nr = 0;

	IK_ASSERT((pfns || !n) && (runs || !max_runs));
	for (i = 0; i < n; i++) {
		if (i > 0 && pfns[i - 1] != IK_U64_MAX && pfns[i] == pfns[i - 1] + 1) {
			if (nr <= max_runs)
				runs[nr - 1].count++;
			continue;
		}
		nr++;
		if (nr <= max_runs) {
			runs[nr - 1].pfn = pfns[i];
			runs[nr - 1].first = i;
			runs[nr - 1].count = 1;
		}
	}
	return nr;
}

ik_s64 ik_segs_from_runs(const struct ik_pfn_run *runs, ik_size nruns, unsigned page_shift,
			 struct ik_seg *segs)
{
	ik_size i;

	if (!runs || !segs || page_shift > 63)
		return -EINVAL;
	for (i = 0; i < nruns; i++) {
		ik_u64 pfn = runs[i].pfn, cnt = runs[i].count;

		if (cnt == 0)
			return -EINVAL;
		if (page_shift && ((pfn >> (64 - page_shift)) || (cnt >> (64 - page_shift))))
			return -EINVAL;
		if ((pfn << page_shift) + (cnt << page_shift) <= (pfn << page_shift))
			return -EINVAL;	/* reaches or wraps past 2^64 */
		segs[i].paddr = pfn << page_shift;
		segs[i].len = cnt << page_shift;
	}
	return (ik_s64)nruns;
}

ik_size ik_segs_coalesce(struct ik_seg *segs, ik_size n)
{
	ik_size i, out = 0;

	IK_ASSERT(segs);
	for (i = 0; i < n; i++) {
		if (segs[i].len == 0)
			continue;
		/* Contiguous only without wrapping past 2^64: neither the
		 * previous segment's end nor the merged one may wrap. */
		if (out > 0 && segs[out - 1].len <= IK_U64_MAX - segs[out - 1].paddr &&
		    segs[out - 1].paddr + segs[out - 1].len == segs[i].paddr &&
		    segs[i].len <= IK_U64_MAX - segs[i].paddr) {
			segs[out - 1].len += segs[i].len;
			continue;
		}
		segs[out++] = segs[i];
	}
	return out;
}

/*
 * One pass of ik_iovec_segs: with write false it only validates (and
 * counts); with write true it fills segs (up to max_segs) and seg_of.
 * Segments are kept as [first, last] byte addresses, so that a segment
 * reaching the top of the space needs no end past 2^64.
 */
static ik_s64 iovec_pass(const struct ik_iovec *iov, ik_size n, ik_u64 mask, bool write,
			 struct ik_iovec *segs, ik_size max_segs, ik_size *seg_of)
{
	ik_u64 first = 0, last = 0;
	ik_size i, nr = 0;

	for (i = 0; i < n; i++) {
		ik_u64 lo, hi;

		if (iov[i].len == 0) {
			if (write && seg_of)
				seg_of[i] = (ik_size)-1;
			continue;
		}
		if (iov[i].len - 1 > IK_U64_MAX - iov[i].base)
			return -EINVAL;	/* wraps past 2^64 */
		lo = iov[i].base & ~mask;
		hi = (iov[i].base + (iov[i].len - 1)) | mask;
		if (nr > 0 && lo >= first && (last == IK_U64_MAX || lo <= last + 1)) {
			if (hi > last)
				last = hi;
		} else {
			if (write && nr > 0 && nr <= max_segs) {
				segs[nr - 1].base = first;
				segs[nr - 1].len = last - first + 1;
			}
			nr++;
			first = lo;
			last = hi;
		}
		if (first == 0 && last == IK_U64_MAX)
			return -EINVAL;	/* 2^64 bytes: the length does not fit */
		if (write && seg_of)
			seg_of[i] = nr - 1;
	}
	if (write && nr > 0 && nr <= max_segs) {
		segs[nr - 1].base = first;
		segs[nr - 1].len = last - first + 1;
	}
	return (ik_s64)nr;
}

ik_s64 ik_iovec_segs(const struct ik_iovec *iov, ik_size n, ik_u64 page_size,
		     struct ik_iovec *segs, ik_size max_segs, ik_size *seg_of)
{
	ik_s64 nr;

	if (page_size == 0 || (page_size & (page_size - 1)) || (!iov && n) || (!segs && max_segs))
		return -EINVAL;
	nr = iovec_pass(iov, n, page_size - 1, false, segs, max_segs, seg_of);
	if (nr < 0)
		return nr;
	return iovec_pass(iov, n, page_size - 1, true, segs, max_segs, seg_of);
}
