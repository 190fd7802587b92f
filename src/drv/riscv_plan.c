/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The RISC-V IOMMU invalidation planner (<iommukit/drv/riscv.h>, the choice
 * tables of ik_riscv_plan_unmap() and ik_riscv_plan_change()): pure
 * functions of what changed, and ik_riscv_plan_issue() to run a plan on an
 * ik_cmdq.
 */
#include <iommukit/drv/riscv.h>

#define PAGE 4096ull

static struct ik_riscv_cmd *plan_next(struct ik_riscv_plan *p, ik_u8 opcode, ik_u8 func3)
{
	struct ik_riscv_cmd *c = &p->c[p->n++];

	IK_ASSERT(p->n <= IK_RISCV_PLAN_MAX);
	IK_ENV_MEMSET(c, 0, sizeof(*c));
	c->opcode = opcode;
	c->func3 = func3;
	return c;
}

/* Check a target; *s2: a G-stage table (.GVMA), *max: the AV = 1 bound. */
static int check_target(const struct ik_riscv_target *t, bool *s2, ik_u32 *max)
{
	struct ik_pgtable_info info;

	if (!t || !t->pt || (t->flags & ~IK_RISCV_TARGET_FLAGS_ALL) ||
	    t->pscid > IK_RISCV_MAX_PSCID || t->gscid > IK_RISCV_MAX_GSCID ||
	    t->max_av > IK_RISCV_PLAN_MAX)
		return -EINVAL;
	ik_pgtable_get_info(t->pt, &info);
	if (info.geom.fmt == IK_PT_RISCV_S1) {
		if (t->gscid && !(t->flags & IK_RISCV_TARGET_GV))
			return -EINVAL;
		*s2 = false;
	} else if (info.geom.fmt == IK_PT_RISCV_S2) {
		if (t->pscid || (t->flags & IK_RISCV_TARGET_GV))
			return -EINVAL;
		*s2 = true;
	} else {
		return -EINVAL;
	}
	*max = t->max_av ? t->max_av : IK_RISCV_PLAN_MAX;
	return 0;
}

/* One IOTINVAL of the target's address space; AV = 1 at addr when av. */
static void plan_inval(const struct ik_riscv_target *t, bool s2, bool av, ik_u64 addr,
		       struct ik_riscv_plan *p)
{
	struct ik_riscv_cmd *c;

	if (s2) {
		c = plan_next(p, IK_RISCV_CMD_IOTINVAL, IK_RISCV_IOTINVAL_GVMA);
		c->gv = 1;
		c->gscid = (ik_u16)t->gscid;
	} else {
		c = plan_next(p, IK_RISCV_CMD_IOTINVAL, IK_RISCV_IOTINVAL_VMA);
		c->pscv = 1;
		c->pscid = t->pscid;
		if (t->flags & IK_RISCV_TARGET_GV) {
			c->gv = 1;
			c->gscid = (ik_u16)t->gscid;
		}
	}
	if (av) {
		c->av = 1;
		c->addr = addr;
	}
}

/* [first, last] (inclusive, non-empty) at `stride`: AV = 1 per step when
 * there are at most max steps and no walk, else AV = 0. */
static void plan_range(const struct ik_riscv_target *t, bool s2, ik_u32 max, ik_u64 first,
		       ik_u64 last, ik_u64 stride, bool walk, struct ik_riscv_plan *p)
{
	ik_u64 base = first & ~(stride - 1);
	ik_u64 steps = ((last - base) / stride) + 1;	/* no overflow: last - base < 2^64 */

	if (walk || steps > max) {
		plan_inval(t, s2, false, 0, p);
	} else {
		for (ik_u64 k = 0; k < steps; k++)
			plan_inval(t, s2, true, base + k * stride, p);
	}
	p->sync = true;
}

IK_API int ik_riscv_plan_unmap(const struct ik_riscv_target *t, const struct ik_gather *g,
			       struct ik_riscv_plan *p)
{
	ik_u64 stride;
	ik_u32 max;
	bool s2;
	int err;

	if (!g || !p)
		return -EINVAL;
	err = check_target(t, &s2, &max);
	if (err)
		return err;
	/* The gather names its table set whenever it holds anything. */
	if (g->pt && g->pt != t->pt)
		return -EINVAL;
	stride = g->granule ? g->granule : PAGE;
	if (g->start < g->end && (stride < PAGE || (stride & (stride - 1))))
		return -EINVAL;
	IK_ENV_MEMSET(p, 0, sizeof(*p));
	if (g->start < g->end)
		plan_range(t, s2, max, g->start, g->end - 1, stride, g->walk, p);
	return 0;
}

IK_API int ik_riscv_plan_range(const struct ik_riscv_target *t, ik_u64 iova, ik_u64 size,
			       bool walk, struct ik_riscv_plan *p)
{
	ik_u32 max;
	bool s2;
	int err;

	if (!p || !size || iova + (size - 1) < iova)
		return -EINVAL;
	err = check_target(t, &s2, &max);
	if (err)
		return err;
	IK_ENV_MEMSET(p, 0, sizeof(*p));
	plan_range(t, s2, max, iova, iova + (size - 1), PAGE, walk, p);
	return 0;
}

IK_API int ik_riscv_plan_change(const struct ik_riscv_change *ch, struct ik_riscv_plan *p)
{
	struct ik_riscv_cmd *c;

	if (!ch || !p || (ch->flags & ~IK_RISCV_CHANGE_FLAGS_ALL) || ch->did > IK_RISCV_MAX_DID ||
	    ch->pid > IK_RISCV_MAX_PID || ch->pscid > IK_RISCV_MAX_PSCID ||
	    ch->gscid > IK_RISCV_MAX_GSCID)
		return -EINVAL;
	if (ch->kind != IK_RISCV_CHANGE_DC && ch->kind != IK_RISCV_CHANGE_PC)
		return -EINVAL;
	if (ch->kind == IK_RISCV_CHANGE_DC && ch->pid)
		return -EINVAL;
	IK_ENV_MEMSET(p, 0, sizeof(*p));
	if (ch->kind == IK_RISCV_CHANGE_DC) {
		c = plan_next(p, IK_RISCV_CMD_IODIR, IK_RISCV_IODIR_INVAL_DDT);
	} else {
		c = plan_next(p, IK_RISCV_CMD_IODIR, IK_RISCV_IODIR_INVAL_PDT);
		c->pid = ch->pid;
	}
	c->dv = 1;
	c->did = ch->did;
	if (ch->flags & IK_RISCV_CHANGE_FLUSH_PSCID) {
		c = plan_next(p, IK_RISCV_CMD_IOTINVAL, IK_RISCV_IOTINVAL_VMA);
		c->pscv = 1;
		c->pscid = ch->pscid;
		if (ch->flags & IK_RISCV_CHANGE_GV) {
			c->gv = 1;
			c->gscid = (ik_u16)ch->gscid;
		}
	}
	if (ch->flags & IK_RISCV_CHANGE_FLUSH_GSCID) {
		c = plan_next(p, IK_RISCV_CMD_IOTINVAL, IK_RISCV_IOTINVAL_GVMA);
		c->gv = 1;
		c->gscid = (ik_u16)ch->gscid;
	}
	p->sync = true;
	return 0;
}

IK_API int ik_riscv_plan_issue(struct ik_cmdq *q, const struct ik_riscv_plan *p)
{
	ik_u64 w[IK_RISCV_PLAN_MAX * 2];

	if (!q || !p || p->n > IK_RISCV_PLAN_MAX)
		return -EINVAL;
	for (unsigned i = 0; i < p->n; i++)
		if (ik_riscv_cmd_encode(&p->c[i], &w[2 * i]))
			return -EINVAL;
	if (!p->n && !p->sync)
		return 0;
	return ik_cmdq_issue(q, w, p->n, p->sync ? IK_CMDQ_SYNC : 0);
}
