/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* tests/iova_inline.c: the IK_INLINE_FAST forms, callable from a unit that
 * uses the exported ones. */
#ifndef IK_TEST_IOVA_INLINE_H
#define IK_TEST_IOVA_INLINE_H
#include <iommukit/iova.h>

int t_iova_alloc_fast_inline(struct ik_iova_domain *d, ik_u64 npages, ik_u64 limit, ik_u64 *pfn);
int t_iova_free_fast_inline(struct ik_iova_domain *d, ik_u64 pfn, ik_u64 npages);
#endif
