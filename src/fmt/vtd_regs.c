/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/fmt/vtd_regs.c - Intel VT-d helpers around the generic engine: a config
 * from the unit's capability registers, the context / PASID entry values a
 * driver programs, and walkers built from such entries (for emulators).
 * The formats themselves are src/fmt/vtd.h, instantiated by
 * src/fmt/vtd_sl.c and src/fmt/vtd_fl.c.
 */
#include "../pgtable/pgtable_internal.h"
#include <iommukit/fmt/vtd.h>

#define VTD_PTR_MASK IK_VTD_ADDR_MASK	/* bits 51:12 of a table pointer */

IK_API int ik_vtd_cfg_init(struct ik_pgtable_cfg *cfg, enum ik_pt_fmt fmt,
			   const struct ik_vtd_caps *caps, ik_u32 ias, ik_u32 quirks)
{
	struct ik_pgtable_cfg c;
	struct ik_pt_geometry g;
	ik_u64 cap, ecap;
	int ret;

	if (!cfg || !caps || (fmt != IK_PT_VTD_SL && fmt != IK_PT_VTD_FL))
		return -EINVAL;
	cap = caps->cap;
	ecap = caps->ecap;
	/* MGAW bounds second-level input addresses; first-level ones are
	 * bounded by the paging mode alone. */
	if (fmt == IK_PT_VTD_SL && ias > IK_VTD_CAP_MGAW(cap))
		return -EINVAL;
	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.fmt = fmt;
	c.ias = ias;
	c.oas = caps->haw;
	c.quirks = quirks;
	c.pgsize_bitmap = ((ik_u64)1 << 12) | ((ik_u64)1 << 21) | ((ik_u64)1 << 30);
	c.coherent = (ecap & (caps->scalable ? IK_VTD_ECAP_SMPWC : IK_VTD_ECAP_C)) != 0;
	/* ias, haw and quirks as the format accepts them; the levels they need */
	ret = ik_pt_geometry_init(&g, &c);
	if (ret)
		return ret;
	if (fmt == IK_PT_VTD_SL) {
		if (!(IK_VTD_CAP_SAGAW(cap) & (1u << IK_VTD_AW_FROM_LEVELS(g.nlevels))))
			return -EOPNOTSUPP;
		if (caps->scalable && !(ecap & IK_VTD_ECAP_SLTS))
			return -EOPNOTSUPP;
		/* A/D of second-level entries exist only in scalable mode. */
		if ((quirks & IK_PT_QUIRK_DIRTY) &&
		    (!caps->scalable || !(ecap & IK_VTD_ECAP_SLADS)))
			return -EOPNOTSUPP;
		if (IK_VTD_CAP_SLLPS(cap) & IK_VTD_SLLPS_2M)
			c.fmt_flags |= IK_VTD_FLAG_SP_2M;
		if (IK_VTD_CAP_SLLPS(cap) & IK_VTD_SLLPS_1G)
			c.fmt_flags |= IK_VTD_FLAG_SP_1G;
		if (ecap & IK_VTD_ECAP_SC)
			c.fmt_flags |= IK_VTD_FLAG_SC;
	} else {
		if (!caps->scalable || !(ecap & IK_VTD_ECAP_FLTS))
			return -EOPNOTSUPP;
		if (g.nlevels == 5 && !(cap & IK_VTD_CAP_FL5LP))
			return -EOPNOTSUPP;
		if (cap & IK_VTD_CAP_FL1GP)
			c.fmt_flags |= IK_VTD_FLAG_SP_1G;
	}
	*cfg = c;
	return 0;
}

IK_API int ik_vtd_get_regs(const struct ik_pgtable *pt, ik_u16 did, struct ik_vtd_regs *r)
{
	const struct ik_pt_geometry *g;
	ik_u64 root;

	if (!pt || !r)
		return -EINVAL;
	g = &pt->geom;
	if (g->fmt != IK_PT_VTD_SL && g->fmt != IK_PT_VTD_FL)
		return -EINVAL;
	root = pt->root->iommu;
	IK_ENV_MEMSET(r, 0, sizeof(*r));
	r->ptptr = root;
	r->aw = IK_VTD_AW_FROM_LEVELS(g->nlevels);
	r->pasid[0] = IK_VTD_PE_P | ((ik_u64)r->aw << IK_VTD_PE_AW_SHIFT);
	r->pasid[1] = (ik_u64)did;
	if (pt->cfg.coherent)
		r->pasid[1] |= IK_VTD_PE_PWSNP;
	if (g->fmt == IK_PT_VTD_SL) {
		r->context[0] = IK_VTD_CTX_P | (0ull << IK_VTD_CTX_TT_SHIFT) | root;
		r->context[1] = ((ik_u64)r->aw << IK_VTD_CTX_AW_SHIFT) |
				((ik_u64)did << IK_VTD_CTX_DID_SHIFT);
		r->pasid[0] |= ((ik_u64)IK_VTD_PGTT_SL << IK_VTD_PE_PGTT_SHIFT) | root;
		if (g->quirks & IK_PT_QUIRK_DIRTY)
			r->pasid[0] |= IK_VTD_PE_SLADE;
	} else {
		r->flpm = g->nlevels == 5 ? 1 : 0;
		r->pasid[0] |= (ik_u64)IK_VTD_PGTT_FL << IK_VTD_PE_PGTT_SHIFT;
		r->pasid[2] = root | ((ik_u64)r->flpm << IK_VTD_PE_FLPM_SHIFT) | IK_VTD_PE_NXE;
	}
	return 0;
}

/* The walker for `fmt` with `levels` levels at `root`. */
static int vtd_walker(struct ik_pt_walker *w, enum ik_pt_fmt fmt, unsigned levels, ik_u64 root,
		      ik_u64 fmt_flags, ik_u32 haw, ik_u32 quirks)
{
	struct ik_pgtable_cfg c;

	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.fmt = fmt;
	/* The unit's full input width for that many levels. */
	c.ias = fmt == IK_PT_VTD_SL ? 12 + 9 * levels : 11 + 9 * levels;
	c.oas = haw;
	c.pgsize_bitmap = ((ik_u64)1 << 12) | ((ik_u64)1 << 21) | ((ik_u64)1 << 30);
	c.coherent = true;
	c.quirks = quirks;
	c.fmt_flags = fmt_flags;
	return ik_pt_walker_init(w, &c, root);
}

IK_API int ik_vtd_walker_from_context(struct ik_pt_walker *w, const ik_u64 ctx[2],
				      ik_u64 fmt_flags, ik_u32 haw)
{
	unsigned tt, aw;

	if (!w || !ctx || !(ctx[0] & IK_VTD_CTX_P))
		return -EINVAL;
	tt = (unsigned)(ctx[0] >> IK_VTD_CTX_TT_SHIFT) & 3;
	aw = (unsigned)(ctx[1] >> IK_VTD_CTX_AW_SHIFT) & 7;
	if (tt > 1 || aw < 1 || aw > 3)
		return -EINVAL;	/* pass-through, reserved TT, reserved AW */
	return vtd_walker(w, IK_PT_VTD_SL, aw + 2, ctx[0] & VTD_PTR_MASK, fmt_flags, haw, 0);
}

IK_API int ik_vtd_walker_from_pasid(struct ik_pt_walker *w, const ik_u64 pe[8],
				    ik_u64 fmt_flags, ik_u32 haw)
{
	unsigned pgtt, aw, flpm;

	if (!w || !pe || !(pe[0] & IK_VTD_PE_P))
		return -EINVAL;
	pgtt = (unsigned)(pe[0] >> IK_VTD_PE_PGTT_SHIFT) & 7;
	if (pgtt == IK_VTD_PGTT_SL) {
		aw = (unsigned)(pe[0] >> IK_VTD_PE_AW_SHIFT) & 7;
		if (aw < 1 || aw > 3)
			return -EINVAL;
		return vtd_walker(w, IK_PT_VTD_SL, aw + 2, pe[0] & VTD_PTR_MASK, fmt_flags, haw,
				  (pe[0] & IK_VTD_PE_SLADE) ? IK_PT_QUIRK_DIRTY : 0);
	}
	if (pgtt == IK_VTD_PGTT_FL) {
		flpm = (unsigned)(pe[2] >> IK_VTD_PE_FLPM_SHIFT) & 3;
		if (flpm > 1)
			return -EINVAL;
		/* First-level A/D are always kept by the unit. */
		return vtd_walker(w, IK_PT_VTD_FL, flpm ? 5 : 4, pe[2] & VTD_PTR_MASK,
				  fmt_flags & (IK_VTD_FLAG_SP_2M | IK_VTD_FLAG_SP_1G), haw, 0);
	}
	return -EINVAL;
}
