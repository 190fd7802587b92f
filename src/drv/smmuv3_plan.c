/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * SMMUv3 invalidation planner: an ik_gather -> the fewest commands that
 * invalidate it correctly, then one CMD_SYNC.  The choice table is in
 * <iommukit/drv/smmuv3.h> (ik_smmu_plan_inv).
 */
#include <iommukit/drv/smmuv3.h>

static unsigned lg2(ik_u64 v)
{
	return 63u - (unsigned)ik_clz64(v);
}

/*
 * TTL for the gather: the lookup level (ARM numbering, the last level is 3)
 * of leaves of size `gran`, when every leaf the gather cleared has that
 * size; else 0 (no hint).  Exact when no table entry changed (!walk) and
 * no naturally aligned leaf of the next larger size fits in [start, end):
 * a leaf cleared whole lies inside the range and is aligned to its size.
 */
static ik_u8 plan_ttl(const struct ik_pt_geometry *geo, const struct ik_gather *g, ik_u64 start,
		      ik_u64 end, ik_u64 gran)
{
	unsigned lg = lg2(gran), lvl;
	ik_u64 bigger, first;

	if (g->walk || lg < geo->lg2_granule || (lg - geo->lg2_granule) % geo->bits ||
	    !(geo->pgsize_bitmap & gran))
		return 0;
	lvl = (lg - geo->lg2_granule) / geo->bits;
	if (lvl > 2)
		return 0;
	bigger = geo->pgsize_bitmap & ~((gran << 1) - 1);
	if (bigger) {
		ik_u64 n = bigger & -bigger;

		first = (start + n - 1) & ~(n - 1);
		if (first >= start && first < end && end - first >= n)
			return 0;
	}
	return (ik_u8)(3 - lvl);
}

static void cmd_init(struct ik_smmu_cmd *c, ik_u8 op)
{
	IK_ENV_MEMSET(c, 0, sizeof(*c));
	c->op = op;
}

/* The whole-context fallback: TLBI_NH_ASID / TLBI_S12_VMALL, CMD_SYNC. */
static int plan_all(const struct ik_smmu_inv_target *t, struct ik_smmu_cmd *out)
{
	if (t->stage == 1) {
		cmd_init(&out[0], IK_SMMU_CMD_TLBI_NH_ASID);
		out[0].asid = t->asid;
	} else {
		cmd_init(&out[0], IK_SMMU_CMD_TLBI_S12_VMALL);
	}
	out[0].vmid = t->vmid;
	cmd_init(&out[1], IK_SMMU_CMD_SYNC);
	return 2;
}

IK_API int ik_smmu_plan_inv(const struct ik_smmu_idr *id, const struct ik_pgtable *pt,
			    const struct ik_gather *g, const struct ik_smmu_inv_target *t,
			    struct ik_smmu_cmd *out, unsigned max)
{
	struct ik_pgtable_info info;
	const struct ik_pt_geometry *geo;
	struct ik_smmu_cmd tmpl;
	ik_u64 gran, tg_gran, start, end, w[2];
	unsigned limit, extra, n;
	int r;

	if (!id || !pt || !g || !t || !out)
		return -EINVAL;
	ik_pgtable_get_info(pt, &info);
	geo = &info.geom;
	if (!(geo->fmt == IK_PT_LPAE_S1 && t->stage == 1) &&
	    !(geo->fmt == IK_PT_LPAE_S2 && t->stage == 2))
		return -EINVAL;
	if ((g->pt && g->pt != pt) || (t->nested && t->stage != 2) ||
	    (t->asid > 0xff && !id->asid16) || (t->vmid > 0xff && !id->vmid16) ||
	    (t->stage == 2 && t->asid))
		return -EINVAL;
	if (g->start >= g->end)
		return 0; /* empty: nothing to invalidate, no sync */
	if (geo->ias < 64 && g->end > (1ull << geo->ias))
		return -EINVAL;
	if (g->granule & (g->granule - 1))
		return -EINVAL;
	if (max < 2)
		return -ENOSPC;
	/* The invalidation stride: the gather's smallest leaf, never below
	 * the table set's granule; the range widened to it (a hand-filled
	 * gather may be unaligned; the engine's never is). */
	tg_gran = 1ull << geo->lg2_granule;
	gran = g->granule > tg_gran ? g->granule : tg_gran;
	start = g->start & ~(gran - 1);
	end = g->end + (gran - 1) < g->end ? 0 : (g->end + gran - 1) & ~(gran - 1);
	if (!end || (geo->ias < 64 && end > (1ull << geo->ias)))
		return -EINVAL;

	extra = 1 + (t->nested ? 1 : 0); /* CMD_SYNC, TLBI_NH_ALL */
	if (max < extra + 1)
		return plan_all(t, out);
	limit = max - extra;
	if (t->max_tlbi ? t->max_tlbi < limit : IK_SMMU_PLAN_DEFAULT_MAX_TLBI < limit)
		limit = t->max_tlbi ? t->max_tlbi : IK_SMMU_PLAN_DEFAULT_MAX_TLBI;

	cmd_init(&tmpl, t->stage == 1 ? IK_SMMU_CMD_TLBI_NH_VA : IK_SMMU_CMD_TLBI_S2_IPA);
	tmpl.asid = t->stage == 1 ? t->asid : 0;
	tmpl.vmid = t->vmid;
	tmpl.leaf = !g->walk;
	if (id->ril) {
		/* Range TLBIs in units of the table set's granule (TG must be
		 * the granule the tables use). */
		tmpl.ttl = plan_ttl(geo, g, start, end, gran);
		r = ik_smmu_tlbi_range(&tmpl, start, end - start, geo->lg2_granule, true, out,
				       limit);
		if (r < 0)
			return plan_all(t, out); /* -ENOSPC: more than the limit */
		n = (unsigned)r;
	} else {
		ik_u64 steps = (end - start) / gran;

		if (steps > limit)
			return plan_all(t, out);
		tmpl.addr = start;
		if (ik_smmu_cmd_encode(&tmpl, w))
			return plan_all(t, out);
		for (n = 0; n < (unsigned)steps; n++) {
			out[n] = tmpl;
			out[n].addr = start + (ik_u64)n * gran;
		}
	}
	if (t->nested) {
		/* IPA invalidation does not reach combined S1+S2 entries. */
		cmd_init(&out[n], IK_SMMU_CMD_TLBI_NH_ALL);
		out[n++].vmid = t->vmid;
	}
	cmd_init(&out[n++], IK_SMMU_CMD_SYNC);
	return (int)n;
}
