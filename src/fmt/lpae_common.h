/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/fmt/lpae_common.h - ARM LPAE facts shared by the format
 * (src/fmt/lpae.h) and the register helpers (src/fmt/lpae_regs.c).  Not API.
 *
 * Engine level L is ARM lookup level 3 - L (a 4K LPA2 stage 1 with ias > 48
 * has a level-4 root: lookup level -1, which holds only table descriptors).
 * Block levels (Arm ARM, VMSAv8-64 block descriptors): 4K granule lookup
 * levels 2 and 1, and 0 with DS; 16K level 2, and 1 with DS; 64K level 2,
 * and 1 with 52-bit PAs (FEAT_LPA).
 */
#ifndef IK_LPAE_COMMON_H
#define IK_LPAE_COMMON_H

#include <iommukit/fmt/lpae.h>

/* The LPA2 layout (DS = 1) is in effect: 4K and 16K granules only. */
static inline bool lpae_ds(unsigned lg2_granule, ik_u64 fmt_flags)
{
	return (fmt_flags & IK_LPAE_FLAG_LPA2) && lg2_granule != 16;
}

/* May engine level lvl hold a block (lvl > 0) or page (lvl == 0)? */
static inline bool lpae_leaf_level(unsigned lg2_granule, bool ds, ik_u32 oas, unsigned lvl)
{
	switch (lg2_granule) {
	case 12:
		return lvl <= 2 || (lvl == 3 && ds);
	case 14:
		return lvl <= 1 || (lvl == 2 && ds);
	default:
		return lvl <= 1 || (lvl == 2 && oas == 52);
	}
}

/* Start-level check of a stage-2 geometry of nlevels (ARM start level
 * 4 - nlevels): SL0 encodes 4K levels 0..2 (level -1 needs SL2, which the
 * library does not build: it concatenates level-0 tables instead), 16K
 * levels 1..3 and level 0 with DS, 64K levels 1..3. */
static inline bool lpae_s2_start_ok(unsigned lg2_granule, bool ds, unsigned nlevels)
{
	if (nlevels < 1 || nlevels > 4)
		return false;
	if (lg2_granule == 12)
		return nlevels >= 2;
	return nlevels <= 3 || (lg2_granule == 14 && ds);
}

#endif /* IK_LPAE_COMMON_H */
