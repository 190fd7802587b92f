/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * vfe_logic.h - the pure logic of vfio-edu (examples/vfio-edu/vfio-edu.c),
 * kept apart from the ioctls so that a host-side unit test
 * (tests/test_vfio_edu.c, run by make check) covers it on any machine:
 *
 *   - parsing the capability chain of VFIO_IOMMU_GET_INFO for the usable
 *     IOVA ranges (VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE).  The buffer comes
 *     from the kernel, but it is parsed as hostile input all the same: every
 *     offset and count is bounds-checked without overflow, and a chain that
 *     loops or points outside the buffer is an error, not a hang;
 *   - building an ik_iova domain from those ranges, with every pfn outside
 *     them (the MSI window on x86, reserved regions) reserved;
 *   - parsing a PCI address argument.
 *
 * The layout of the VFIO structures is spelled out here in byte offsets
 * (the kernel's UAPI, <linux/vfio.h>, which vfio-edu.c checks against these
 * numbers at compile time), so this file builds without Linux headers.
 */
#ifndef VFE_LOGIC_H
#define VFE_LOGIC_H

#include <stddef.h>
#include <stdint.h>
#include <iommukit/iova.h>

/* struct vfio_iommu_type1_info: argsz u32 @0, flags u32 @4,
 * iova_pgsizes u64 @8, cap_offset u32 @16; 24 bytes with padding. */
#define VFE_INFO_FLAGS_OFF 4u
#define VFE_INFO_CAP_OFFSET_OFF 16u
#define VFE_INFO_MIN_SIZE 20u		/* through cap_offset */
#define VFE_INFO_FLAG_CAPS 0x2u		/* VFIO_IOMMU_INFO_CAPS */
/* struct vfio_info_cap_header: id u16 @0, version u16 @2, next u32 @4. */
#define VFE_CAP_HDR_SIZE 8u
#define VFE_CAP_IOVA_RANGE 1u		/* VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE */
/* struct vfio_iommu_type1_info_cap_iova_range: header, nr_iovas u32 @8,
 * reserved u32 @12, then nr_iovas x { start u64, end u64 } from @16. */
#define VFE_IOVA_CAP_NR_OFF 8u
#define VFE_IOVA_CAP_RANGES_OFF 16u
#define VFE_IOVA_RANGE_SIZE 16u

/* One usable IOVA range, inclusive: [start, end] in bytes. */
struct vfe_range {
	uint64_t start, end;
};

/*
 * vfe_parse_iova_ranges - find the IOVA_RANGE capability in the `size`
 * bytes of a VFIO_IOMMU_GET_INFO answer and copy its ranges to out[0..max).
 * *nr gets the number of ranges.
 * Returns 0; -ENOENT when the answer has no capability chain or no IOVA_RANGE
 * capability (a kernel before 5.4); -EINVAL when the answer is malformed: a
 * capability header or the range array outside `size`, a chain that does
 * not move forward (next <= this offset: a loop), a capability version other
 * than 1, no range, a range with start > end, or ranges not in ascending
 * order without overlap; -E2BIG when there are more than `max` ranges.
 * On error *nr and out are not written.  Cost: O(capabilities + ranges).
 */
int vfe_parse_iova_ranges(const void *info, size_t size, struct vfe_range *out, size_t max,
			  size_t *nr);

/*
 * vfe_iova_domain_init - initialise `d` (granule bytes per pfn, a power of
 * two) to cover the pfns from the first whole page of ranges[0] to the last
 * whole page of ranges[n-1], and reserve (ik_iova_reserve) every pfn that is
 * not wholly inside one of the ranges: the gaps between them, and the pages
 * a range covers only in part.  Ranges must be sorted and disjoint (as
 * vfe_parse_iova_ranges returns them).  *reserved (may be NULL) gets the
 * number of reservations made.
 * Returns 0, or a negative errno with `d` not initialised (destroyed again
 * on a late failure): -EINVAL (n == 0, granule not a power of two, ranges
 * unsorted or overlapping, no whole page in any range, or what ik_iova_init
 * refuses), -ENOMEM.
 * Cost: O(n log n) (one reservation per gap).
 */
int vfe_iova_domain_init(struct ik_iova_domain *d, const struct vfe_range *ranges, size_t n,
			 uint64_t granule, unsigned *reserved);

/*
 * vfe_parse_pci_addr - accept "DDDD:BB:DD.F" or "BB:DD.F" (hexadecimal,
 * device <= 0x1f, function <= 7) and write the canonical sysfs name
 * "dddd:bb:dd.f" (lower case, 12 characters and a NUL) to out[13].
 * Returns 0, or -EINVAL (anything else, out not written).
 */
int vfe_parse_pci_addr(const char *s, char out[13]);

#endif /* VFE_LOGIC_H */
