/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The VT-d invalidation planner (<iommukit/drv/vtd.h>, the choice tables of
 * ik_vtd_plan_unmap() and ik_vtd_plan_change()): pure functions of the
 * unit's capabilities and what changed.
 */
#include <iommukit/drv/vtd.h>
#include <iommukit/pgtable.h>

/* ATS "invalidate everything": S = 1 and every address bit but 63 set. */
#define DEVTLB_ALL 0x7ffffffffffff000ull

static int check_did(const struct ik_vtd_hwcaps *c, ik_u16 did)
{
	return (did >= c->domains || (c->cm && did == 0)) ? -EINVAL : 0;
}

static struct ik_vtd_desc *plan_next(struct ik_vtd_plan *p)
{
	struct ik_vtd_desc *d = &p->d[p->n++];

	IK_ASSERT(p->n <= IK_VTD_PLAN_MAX);
	IK_ENV_MEMSET(d, 0, sizeof(*d));
	return d;
}

static void plan_init(struct ik_vtd_plan *p)
{
	IK_ENV_MEMSET(p, 0, sizeof(*p));
}

/* IOTLB (second-level) or PIOTLB (first-level / pass-through) invalidation:
 * page-selective over 2^am pages at pfn `base` when psi, else all of the
 * domain (IOTLB) or of the PASID in the domain (PIOTLB). */
static void add_iotlb(struct ik_vtd_plan *p, const struct ik_vtd_hwcaps *c, bool fl, ik_u16 did,
		      ik_u32 pasid, bool psi, ik_u64 base, unsigned am, bool ih)
{
	struct ik_vtd_desc *d = plan_next(p);

	d->did = did;
	if (fl) {
		d->type = IK_VTD_DESC_PIOTLB;
		d->pasid = pasid;
		d->g = psi ? IK_VTD_G_PASID_PAGE : IK_VTD_G_PASID;
	} else {
		d->type = IK_VTD_DESC_IOTLB;
		d->g = psi ? IK_VTD_G_PAGE : IK_VTD_G_DOMAIN;
		d->dr = c->drd;
		d->dw = c->dwd;
	}
	if (psi) {
		d->addr = base << 12;
		d->am = (ik_u8)am;
		d->ih = ih;
	}
}

/* Device-TLB invalidation in the ATS encoding: one page (S = 0), 2^am pages
 * (S = 1, address bits 12 .. 12 + am - 2 set), or everything. */
static void add_devtlb(struct ik_vtd_plan *p, ik_u16 sid, ik_u16 pfsid, ik_u8 mip, bool psi,
		       ik_u64 base, unsigned am)
{
	struct ik_vtd_desc *d = plan_next(p);

	d->type = IK_VTD_DESC_DEVTLB;
	d->sid = sid;
	d->pfsid = pfsid;
	d->mip = mip;
	if (psi && am == 0) {
		d->addr = base << 12;
	} else if (psi && am <= 51) {
		d->s = 1;
		d->addr = (base << 12) | ((((ik_u64)1 << (am - 1)) - 1) << 12);
	} else {
		d->s = 1;
		d->addr = DEVTLB_ALL;
	}
}

static void add_pc(struct ik_vtd_plan *p, ik_u16 did, ik_u32 pasid)
{
	struct ik_vtd_desc *d = plan_next(p);

	d->type = IK_VTD_DESC_PC;
	d->g = IK_VTD_G_PC_PASID;
	d->did = did;
	d->pasid = pasid;
}

static void add_cc(struct ik_vtd_plan *p, ik_u16 sid, ik_u16 did)
{
	struct ik_vtd_desc *d = plan_next(p);

	d->type = IK_VTD_DESC_CC;
	d->g = IK_VTD_G_DEVICE;
	d->sid = sid;
	d->did = did;
}

/* Check a target; *fl: first-level table set (PASID-tagged). */
static int check_target(const struct ik_vtd_hwcaps *c, ik_u32 flags,
			const struct ik_vtd_target *t, bool *fl)
{
	struct ik_pgtable_info info;

	if (!c || !t || !t->pt || (flags & ~IK_VTD_PLAN_SCALABLE) ||
	    (t->flags & ~IK_VTD_TARGET_ATS) || t->mip > 31 || t->pasid >= (1u << 20) ||
	    check_did(c, t->did))
		return -EINVAL;
	ik_pgtable_get_info(t->pt, &info);
	if (info.geom.fmt == IK_PT_VTD_FL) {
		if (!(flags & IK_VTD_PLAN_SCALABLE))
			return -EINVAL;
		*fl = true;
	} else if (info.geom.fmt == IK_PT_VTD_SL) {
		if (!(flags & IK_VTD_PLAN_SCALABLE) && t->pasid)
			return -EINVAL;
		*fl = false;
	} else {
		return -EINVAL;
	}
	if ((t->flags & IK_VTD_TARGET_ATS) && t->pasid)
		return -EOPNOTSUPP;
	return 0;
}

/* Page-selective over pfns [first, last]?  Fills base and am when so. */
static bool choose_psi(const struct ik_vtd_hwcaps *c, const struct ik_vtd_target *t,
		       ik_u64 first, ik_u64 last, ik_u64 *base, unsigned *am)
{
	if (!c->psi || ik_vtd_psi_mask(first, last - first + 1, c->mamv, base, am))
		return false;
	return !t->max_psi_pages || (*am < 64 && ((ik_u64)1 << *am) <= t->max_psi_pages);
}

static void plan_range(const struct ik_vtd_hwcaps *c, bool fl, const struct ik_vtd_target *t,
		       ik_u64 first, ik_u64 last, bool walk, struct ik_vtd_plan *p)
{
	ik_u64 base = 0;
	unsigned am = 0;
	bool psi = choose_psi(c, t, first, last, &base, &am);

	add_iotlb(p, c, fl, t->did, t->pasid, psi, base, am, !walk);
	if (t->flags & IK_VTD_TARGET_ATS)
		add_devtlb(p, t->sid, t->pfsid, t->mip, psi, base, am);
	p->sync = true;
}

IK_API int ik_vtd_plan_unmap(const struct ik_vtd_hwcaps *c, ik_u32 flags,
			     const struct ik_vtd_target *t, const struct ik_gather *g,
			     struct ik_vtd_plan *p)
{
	bool fl;
	int err;

	if (!g || !p)
		return -EINVAL;
	err = check_target(c, flags, t, &fl);
	if (err)
		return err;
	/* The gather names its table set whenever it holds anything. */
	if (g->pt && g->pt != t->pt)
		return -EINVAL;
	plan_init(p);
	if (g->start < g->end)
		plan_range(c, fl, t, g->start >> 12, (g->end - 1) >> 12, g->walk, p);
	return 0;
}

/* The start of a plan for [iova, iova + size): the range and the target
 * checked (*fl as check_target sets it), then *p emptied. */
static int plan_start(const struct ik_vtd_hwcaps *c, ik_u32 flags, const struct ik_vtd_target *t,
		      ik_u64 iova, ik_u64 size, struct ik_vtd_plan *p, bool *fl)
{
	int err;

	if (!p || !size || iova + (size - 1) < iova)
		return -EINVAL;
	err = check_target(c, flags, t, fl);
	if (err)
		return err;
	plan_init(p);
	return 0;
}

IK_API int ik_vtd_plan_range(const struct ik_vtd_hwcaps *c, ik_u32 flags,
			     const struct ik_vtd_target *t, ik_u64 iova, ik_u64 size, bool walk,
			     struct ik_vtd_plan *p)
{
	bool fl;
	int err = plan_start(c, flags, t, iova, size, p, &fl);

	if (err)
		return err;
	plan_range(c, fl, t, iova >> 12, (iova + (size - 1)) >> 12, walk, p);
	return 0;
}

IK_API int ik_vtd_plan_map(const struct ik_vtd_hwcaps *c, ik_u32 flags,
			   const struct ik_vtd_target *t, ik_u64 iova, ik_u64 size,
			   struct ik_vtd_plan *p)
{
	ik_u64 base = 0;
	unsigned am = 0;
	bool fl, psi;
	int err = plan_start(c, flags, t, iova, size, p, &fl);

	if (err)
		return err;
	if (!c->cm) {
		p->wbf = c->rwbf;
		return 0;
	}
	psi = choose_psi(c, t, iova >> 12, (iova + (size - 1)) >> 12, &base, &am);
	add_iotlb(p, c, fl, t->did, t->pasid, psi, base, am, false);
	p->sync = true;
	return 0;
}

IK_API int ik_vtd_plan_change(const struct ik_vtd_hwcaps *c, ik_u32 flags,
			      const struct ik_vtd_change *ch, struct ik_vtd_plan *p)
{
	bool scalable = flags & IK_VTD_PLAN_SCALABLE;
	ik_u16 cc_did;

	if (!c || !ch || !p || (flags & ~IK_VTD_PLAN_SCALABLE) || ch->pasid >= (1u << 20) ||
	    ch->did >= c->domains)
		return -EINVAL;
	if (ch->kind == IK_VTD_CHANGE_CONTEXT) {
		if (ch->pasid || (!scalable && ch->first_level))
			return -EINVAL;
	} else if (ch->kind != IK_VTD_CHANGE_PASID || !scalable) {
		return -EINVAL;
	}
	if (!ch->present && ch->ats && ch->pasid)
		return -EOPNOTSUPP;
	plan_init(p);
	p->wbf = c->rwbf;
	if (ch->present && !c->cm)
		return 0; /* nothing cached for a not-present entry */
	/* Under CM the unit caches not-present context entries with DID 0. */
	cc_did = ch->present ? 0 : ch->did;
	if (ch->kind == IK_VTD_CHANGE_CONTEXT)
		add_cc(p, ch->sid, cc_did);
	if (scalable)
		add_pc(p, ch->did, ch->pasid);
	add_iotlb(p, c, scalable && ch->first_level, ch->did, ch->pasid, false, 0, 0, false);
	if (!ch->present && ch->ats)
		add_devtlb(p, ch->sid, 0, 0, false, 0, 0);
	p->sync = true;
	return 0;
}
