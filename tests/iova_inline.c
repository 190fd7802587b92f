/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The inline forms of ik_iova_alloc_fast()/ik_iova_free_fast() (opt-in with
 * IK_INLINE_FAST), compiled in their own unit so that test_iova.c calls the
 * exported functions and can compare the two.
 */
#define IK_INLINE_FAST 1
#include <iommukit/iova.h>
#include "iova_inline.h"

int t_iova_alloc_fast_inline(struct ik_iova_domain *d, ik_u64 npages, ik_u64 limit, ik_u64 *pfn)
{
	return ik_iova_alloc_fast(d, npages, limit, pfn); /* the macro: the inline body */
}

int t_iova_free_fast_inline(struct ik_iova_domain *d, ik_u64 pfn, ik_u64 npages)
{
	return ik_iova_free_fast(d, pfn, npages);
}
