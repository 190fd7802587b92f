/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/sizes.h - named page sizes, and conversions between the units the
 * APIs speak.
 *
 * Units, header by header:
 *   bytes      <iommukit/pgtable.h>, <iommukit/fmt/...>, <iommukit/batch.h>
 *              segments, <iommukit/softiommu.h>, <iommukit/flushq.h>, the
 *              command encoders and the driver cores: addresses, lengths,
 *              page sizes, and pgsize_bitmap (bit n set: 2^n bytes, so
 *              IK_SZ_4K | IK_SZ_2M | IK_SZ_1G).
 *   pages      <iommukit/iova.h>: pfns and page counts of the domain's
 *              granule (iova = pfn * granule); <iommukit/batch.h> pfn arrays.
 *
 * The IK_SZ_* constants are the page and block sizes the formats offer, as
 * ik_u64 values (usable in constant expressions, not in #if).  The helpers
 * convert between the two units for a granule that is a power of two
 * (IK_SZ_4K, or ik_iova_domain's granule); each is O(1), pure, and total:
 * a result that does not exist (a granule that is not a power of two of at
 * least 2, or a product past 64 bits) is IK_U64_MAX, which the page-table
 * calls refuse as an address or a size (it is a multiple of no granule) and
 * ik_iova_alloc() as a page count (more than any space), all with -EINVAL.
 *
 * Synchronization: none needed (no state).
 */
#ifndef IOMMUKIT_SIZES_H
#define IOMMUKIT_SIZES_H

#include <iommukit/env.h>

IK_BEGIN_DECLS

#define IK_SZ_4K ((ik_u64)1 << 12)	/* 4 KiB: the 4K granule */
#define IK_SZ_16K ((ik_u64)1 << 14)	/* 16 KiB: the LPAE 16K granule */
#define IK_SZ_64K ((ik_u64)1 << 16)	/* 64 KiB: the LPAE 64K granule */
#define IK_SZ_2M ((ik_u64)1 << 21)	/* 2 MiB: a level-1 block of the 4K granule */
#define IK_SZ_32M ((ik_u64)1 << 25)	/* 32 MiB: a block of the LPAE 16K granule */
#define IK_SZ_512M ((ik_u64)1 << 29)	/* 512 MiB: a block of the LPAE 64K granule */
#define IK_SZ_1G ((ik_u64)1 << 30)	/* 1 GiB: a level-2 block of the 4K granule */
#define IK_SZ_64G ((ik_u64)1 << 36)	/* 64 GiB: a 52-bit LPAE 16K block */
#define IK_SZ_512G ((ik_u64)1 << 39)	/* 512 GiB: a level-3 block of the 4K granule */
#define IK_SZ_4T ((ik_u64)1 << 42)	/* 4 TiB: a 52-bit LPAE 64K block */

/* Internal: granule is a power of two of at least 2 (a 1-byte "granule"
 * would make IK_U64_MAX an aligned value). */
static inline bool ik_sz_granule_ok_(ik_u64 granule)
{
	return granule >= 2 && (granule & (granule - 1)) == 0;
}

/*
 * ik_pfn_to_addr - the address of page frame `pfn` at `granule` bytes per
 * page: pfn * granule (an IOVA from ik_iova_alloc()'s pfn, for the
 * page-table calls).  IK_U64_MAX when granule is not a power of two >= 2 or
 * the address does not fit 64 bits.
 */
static inline ik_u64 ik_pfn_to_addr(ik_u64 pfn, ik_u64 granule)
{
	if (!ik_sz_granule_ok_(granule) || pfn > IK_U64_MAX / granule)
		return IK_U64_MAX;
	return pfn * granule;
}

/*
 * ik_addr_to_pfn - the page frame that holds byte address `addr`:
 * addr / granule, rounded down.  IK_U64_MAX when granule is not a power of
 * two >= 2.
 */
static inline ik_u64 ik_addr_to_pfn(ik_u64 addr, ik_u64 granule)
{
	return ik_sz_granule_ok_(granule) ? addr / granule : IK_U64_MAX;
}

/*
 * ik_bytes_to_pages - the pages of `granule` bytes that `bytes` bytes need:
 * bytes / granule, rounded up (the npages of ik_iova_alloc() for a buffer).
 * IK_U64_MAX when granule is not a power of two >= 2.
 */
static inline ik_u64 ik_bytes_to_pages(ik_u64 bytes, ik_u64 granule)
{
	if (!ik_sz_granule_ok_(granule))
		return IK_U64_MAX;
	return bytes / granule + (bytes % granule != 0);
}

/*
 * ik_pages_to_bytes - the length of `npages` pages of `granule` bytes:
 * npages * granule (the size for the page-table calls).  IK_U64_MAX when
 * granule is not a power of two >= 2 or the length does not fit 64 bits.
 */
static inline ik_u64 ik_pages_to_bytes(ik_u64 npages, ik_u64 granule)
{
	return ik_pfn_to_addr(npages, granule);
}

IK_END_DECLS

#endif /* IOMMUKIT_SIZES_H */
