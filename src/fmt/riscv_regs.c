/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/fmt/riscv_regs.c - RISC-V IOMMU helpers around the generic
 * engine: the iosatp / iohgatp value a driver programs into a device
 * context, and a walker built from such a value (for emulators).  The
 * formats themselves are src/fmt/riscv.h, instantiated by
 * src/fmt/riscv_s1.c and src/fmt/riscv_s2.c.
 */
#include "../pgtable/pgtable_internal.h"
#include <iommukit/fmt/riscv.h>

IK_API int ik_riscv_get_atp(const struct ik_pgtable *pt, ik_u16 gscid, ik_u64 *atp)
{
	const struct ik_pt_geometry *g;
	ik_u64 v;

	if (!pt || !atp)
		return -EINVAL;
	g = &pt->geom;
	if (g->fmt != IK_PT_RISCV_S1 && g->fmt != IK_PT_RISCV_S2)
		return -EINVAL;
	if (g->fmt == IK_PT_RISCV_S1 && gscid)
		return -EINVAL;	/* iosatp has no GSCID field */
	/* 3, 4, 5 levels: MODE 8, 9, 10 in both registers */
	v = (ik_u64)(IK_RISCV_ATP_MODE_SV39 + (g->nlevels - 3u)) << IK_RISCV_ATP_MODE_SHIFT;
	v |= (pt->root->iommu >> 12) & IK_RISCV_ATP_PPN_MASK;
	v |= (ik_u64)gscid << IK_RISCV_ATP_GSCID_SHIFT;
	*atp = v;
	return 0;
}

IK_API int ik_riscv_walker_from_atp(struct ik_pt_walker *w, enum ik_pt_fmt fmt, ik_u64 atp,
				    ik_u32 oas, ik_u32 quirks, ik_u64 fmt_flags)
{
	unsigned mode = (unsigned)(atp >> IK_RISCV_ATP_MODE_SHIFT);
	struct ik_pgtable_cfg c;
	unsigned levels;

	if (!w || (fmt != IK_PT_RISCV_S1 && fmt != IK_PT_RISCV_S2))
		return -EINVAL;
	if (mode < IK_RISCV_ATP_MODE_SV39 || mode > IK_RISCV_ATP_MODE_SV57)
		return -EINVAL;	/* Bare (nothing to walk) or reserved */
	/* iosatp bits 59:44 are reserved */
	if (fmt == IK_PT_RISCV_S1 && (atp & IK_RISCV_ATP_GSCID_MASK))
		return -EINVAL;
	levels = mode - IK_RISCV_ATP_MODE_SV39 + 3;
	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.fmt = fmt;
	/* the mode's whole (lower) input space */
	c.ias = fmt == IK_PT_RISCV_S2 ? 14 + 9 * levels : 11 + 9 * levels;
	c.oas = oas;
	/* the unit takes a leaf at every level */
	c.pgsize_bitmap = ((ik_u64)1 << 12) | ((ik_u64)1 << 21) | ((ik_u64)1 << 30) |
			  ((ik_u64)1 << 39) | ((ik_u64)1 << 48);
	c.coherent = true;
	c.quirks = quirks;
	c.fmt_flags = fmt_flags;
	/* ik_pt_walker_init refuses a G-stage root that is not 16 KiB aligned */
	return ik_pt_walker_init(w, &c, (atp & IK_RISCV_ATP_PPN_MASK) << 12);
}
