/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Internal interface between src/iova/iova.c (the tree) and src/iova/iova_rcache.c
 * (the range caches).  Not installed, not API.
 */
#ifndef IK_IOVA_INT_H
#define IK_IOVA_INT_H

#include <iommukit/iova.h>

/* Free the allocation starting at pfn; the tree lock is held.  -ENOENT. */
int ik_iova_free_locked(struct ik_iova_domain *d, ik_u64 pfn);

/* The node starting exactly at pfn (allocation or reservation), its last pfn
 * in *hi; NULL if none.  Tree lock held. */
struct ik_iova_node *ik_iova_lookup_start(struct ik_iova_domain *d, ik_u64 pfn, ik_u64 *hi);

/* Whether a node is a reservation. */
bool ik_iova_node_reserved(const struct ik_iova_node *n);

/* rcache side: set up / tear down the arrays (init, destroy); counts for
 * ik_iova_stats (takes the rcache locks); taking and dropping every rcache
 * lock in the documented order; the cache part of ik_iova_check (every lock
 * held, the tree lock included). */
int ik_iova_rcache_init(struct ik_iova_domain *d, const struct ik_iova_config *cfg);
void ik_iova_rcache_destroy(struct ik_iova_domain *d);
void ik_iova_rcache_count(struct ik_iova_domain *d, ik_u64 *ranges, ik_u64 *pages);
void ik_iova_rcache_lock_all(struct ik_iova_domain *d);
void ik_iova_rcache_unlock_all(struct ik_iova_domain *d);
int ik_iova_rcache_check(struct ik_iova_domain *d);

#endif
