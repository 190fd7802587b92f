/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The AMD IOMMU invalidation planner (<iommukit/drv/amd.h>, the choice
 * tables of ik_amd_plan_unmap() and ik_amd_plan_change()): pure functions
 * of what changed, and ik_amd_plan_issue() to run a plan on an ik_cmdq.
 */
#include <iommukit/drv/amd.h>

#define PASID_LIMIT (1u << 20)

static struct ik_amd_cmd *plan_next(struct ik_amd_plan *p, ik_u8 op)
{
	struct ik_amd_cmd *c = &p->c[p->n++];

	IK_ASSERT(p->n <= IK_AMD_PLAN_MAX);
	IK_ENV_MEMSET(c, 0, sizeof(*c));
	c->op = op;
	return c;
}

/* Check a target; *guest: an amd-v2 table (GN = 1 with its PASID). */
static int check_target(const struct ik_amd_target *t, bool *guest)
{
	struct ik_pgtable_info info;

	if (!t || !t->pt || (t->flags & ~IK_AMD_TARGET_ATS) || t->domid > IK_AMD_MAX_DOMID ||
	    t->pasid >= PASID_LIMIT)
		return -EINVAL;
	ik_pgtable_get_info(t->pt, &info);
	if (info.geom.fmt == IK_PT_AMD_V2)
		*guest = true;
	else if (info.geom.fmt == IK_PT_AMD_V1 && !t->pasid)
		*guest = false;
	else
		return -EINVAL;
	/* INVALIDATE_IOTLB_PAGES carries PASID[15:0] only. */
	if ((t->flags & IK_AMD_TARGET_ATS) && t->pasid > 0xffff)
		return -EINVAL;
	return 0;
}

/* INVALIDATE_IOMMU_PAGES (+ INVALIDATE_IOTLB_PAGES) of [first, last], or of
 * everything past the target's threshold; PDE = pde (always 1 for the whole
 * domain: nothing is kept). */
static void plan_range(const struct ik_amd_target *t, bool guest, ik_u64 first, ik_u64 last,
		       bool pde, bool iotlb, struct ik_amd_plan *p)
{
	struct ik_amd_cmd *c;
	ik_u64 addr, lo, hi;
	ik_u8 s;

	(void)ik_amd_inv_encode(first, last - first + 1, &addr, &s);
	(void)ik_amd_inv_decode(addr, s, &lo, &hi);
	if (t->max_inv_bytes && (hi - lo) >= t->max_inv_bytes) {
		addr = IK_AMD_INV_ALL_ADDR;
		s = 1;
	}
	if (addr == IK_AMD_INV_ALL_ADDR && s)
		pde = true;
	c = plan_next(p, IK_AMD_CMD_INV_IOMMU_PAGES);
	c->domid = (ik_u16)t->domid;
	c->addr = addr;
	c->s = s;
	c->pde = pde;
	if (guest) {
		c->gn = 1;
		c->pasid = t->pasid;
	}
	if (iotlb && (t->flags & IK_AMD_TARGET_ATS)) {
		c = plan_next(p, IK_AMD_CMD_INV_IOTLB_PAGES);
		c->devid = t->devid;
		c->maxpend = t->maxpend;
		c->addr = addr;
		c->s = s;
		if (guest) {
			c->gn = 1;
			c->pasid = t->pasid;
		}
	}
	p->sync = true;
}

IK_API int ik_amd_plan_unmap(const struct ik_amd_target *t, const struct ik_gather *g,
			     struct ik_amd_plan *p)
{
	bool guest;
	int err;

	if (!g || !p)
		return -EINVAL;
	err = check_target(t, &guest);
	if (err)
		return err;
	/* The gather names its table set whenever it holds anything. */
	if (g->pt && g->pt != t->pt)
		return -EINVAL;
	IK_ENV_MEMSET(p, 0, sizeof(*p));
	if (g->start < g->end)
		plan_range(t, guest, g->start, g->end - 1, g->walk, true, p);
	return 0;
}

IK_API int ik_amd_plan_range(const struct ik_amd_target *t, ik_u64 iova, ik_u64 size, bool walk,
			     struct ik_amd_plan *p)
{
	bool guest;
	int err;

	if (!p || !size || iova + (size - 1) < iova)
		return -EINVAL;
	err = check_target(t, &guest);
	if (err)
		return err;
	IK_ENV_MEMSET(p, 0, sizeof(*p));
	plan_range(t, guest, iova, iova + (size - 1), walk, true, p);
	return 0;
}

IK_API int ik_amd_plan_map(ik_u32 flags, const struct ik_amd_target *t, ik_u64 iova, ik_u64 size,
			   struct ik_amd_plan *p)
{
	bool guest;
	int err;

	if (!p || !size || iova + (size - 1) < iova || (flags & ~IK_AMD_PLAN_NPCACHE))
		return -EINVAL;
	err = check_target(t, &guest);
	if (err)
		return err;
	IK_ENV_MEMSET(p, 0, sizeof(*p));
	if (flags & IK_AMD_PLAN_NPCACHE)
		plan_range(t, guest, iova, iova + (size - 1), true, false, p);
	return 0;
}

IK_API int ik_amd_plan_change(const struct ik_amd_change *ch, struct ik_amd_plan *p)
{
	struct ik_amd_cmd *c;
	bool gcr3;

	if (!ch || !p)
		return -EINVAL;
	if (ch->kind == IK_AMD_CHANGE_GCR3) {
		if (ch->pasid >= PASID_LIMIT || (ch->ats && ch->pasid > 0xffff))
			return -EINVAL;
		gcr3 = true;
	} else if (ch->kind == IK_AMD_CHANGE_DTE) {
		gcr3 = false;
	} else {
		return -EINVAL;
	}
	IK_ENV_MEMSET(p, 0, sizeof(*p));
	if (!gcr3) {
		c = plan_next(p, IK_AMD_CMD_INV_DEVTAB_ENTRY);
		c->devid = ch->devid;
	}
	if (gcr3 || ch->flush_domain) {
		c = plan_next(p, IK_AMD_CMD_INV_IOMMU_PAGES);
		c->domid = ch->domid;
		c->s = 1;
		c->pde = 1;
		c->addr = IK_AMD_INV_ALL_ADDR;
		if (gcr3) {
			c->gn = 1;
			c->pasid = ch->pasid;
		}
	}
	if (ch->ats) {
		c = plan_next(p, IK_AMD_CMD_INV_IOTLB_PAGES);
		c->devid = ch->devid;
		c->s = 1;
		c->addr = IK_AMD_INV_ALL_ADDR;
		if (gcr3) {
			c->gn = 1;
			c->pasid = ch->pasid;
		}
	}
	p->sync = true;
	return 0;
}

IK_API int ik_amd_plan_issue(struct ik_cmdq *q, const struct ik_amd_plan *p)
{
	ik_u64 w[IK_AMD_PLAN_MAX * 2];

	if (!q || !p || p->n > IK_AMD_PLAN_MAX)
		return -EINVAL;
	for (unsigned i = 0; i < p->n; i++)
		if (ik_amd_cmd_encode(&p->c[i], &w[2 * i]))
			return -EINVAL;
	if (!p->n && !p->sync)
		return 0;
	return ik_cmdq_issue(q, w, p->n, p->sync ? IK_CMDQ_SYNC : 0);
}

IK_API int ik_amd_issue_cmdq(void *ctx, const struct ik_amd_plan *p)
{
	return ik_amd_plan_issue((struct ik_cmdq *)ctx, p);
}
