/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit-bench: the page-table formats the benchmarks run, one row each.
 * What a format is (its name, widths, granules, leaf sizes) comes from
 * ik_pt_fmt_get_info(); a row says only how the benchmarks configure it and
 * which IOMMU commands go with it.  A new format: one line here.
 */
#include <iommukit/fmt/lpae.h>
#include <iommukit/fmt/vtd.h>
#include "bench.h"

const struct bench_fmt bench_fmts[] = {
	/* fmt            ias oas quirks fmt_flags  smmu   stage2 dma_default riscv variant */
	{ IK_PT_LPAE_S1, 48, 48, 0, 0, true, false, true, false, NULL },
	{ IK_PT_LPAE_S2, 48, 48, 0, 0, true, true, false, false, NULL },
	/* 52-bit FEAT_LPA2 (DS = 1), 4K: stage 1 from lookup level -1 (5
	 * levels), stage 2 with 16 concatenated level-0 tables; 512G blocks */
	{ IK_PT_LPAE_S1, 52, 52, 0, IK_LPAE_FLAG_LPA2, true, false, false, false, "lpae-s1-lpa2" },
	{ IK_PT_LPAE_S2, 52, 52, 0, IK_LPAE_FLAG_LPA2, true, true, false, false, "lpae-s2-lpa2" },
	/* VT-d second-level, 4 levels, 2M + 1G superpages (SLLPS), snoop control */
	{ IK_PT_VTD_SL, 48, 48, 0, IK_VTD_FLAG_SP_2M | IK_VTD_FLAG_SP_1G | IK_VTD_FLAG_SC, false,
	  false, true, false, NULL },
	/* VT-d first-level (x86-64 paging), 4 levels, 1G pages (FL1GP) */
	{ IK_PT_VTD_FL, 47, 48, 0, IK_VTD_FLAG_SP_1G, false, false, false, false, NULL },
	/* RISC-V IOMMU first stage Sv48 and G-stage Sv48x4, with RISC-V
	 * commands (IOTINVAL.VMA of the PSCID / .GVMA of the GSCID) */
	{ IK_PT_RISCV_S1, 47, 48, 0, 0, false, false, false, true, NULL },
	{ IK_PT_RISCV_S2, 50, 48, 0, 0, false, true, false, true, NULL },
};
const size_t bench_nfmts = sizeof(bench_fmts) / sizeof(bench_fmts[0]);
_Static_assert(sizeof(bench_fmts) / sizeof(bench_fmts[0]) <= BENCH_FMTS_MAX, "BENCH_FMTS_MAX");

const struct bench_fmt *bench_fmt_find(enum ik_pt_fmt fmt)
{
	for (size_t i = 0; i < bench_nfmts; i++)
		if (bench_fmts[i].fmt == fmt && !bench_fmts[i].variant)
			return &bench_fmts[i];
	return NULL;
}

uint64_t bench_fmt_leaf_sizes(enum ik_pt_fmt fmt, uint64_t granule)
{
	struct ik_pt_fmt_info fi;

	if (ik_pt_fmt_get_info(fmt, &fi))
		return 0;
	for (unsigned k = 0; k < IK_PT_FMT_GRANULES && fi.granules[k].size; k++)
		if (fi.granules[k].size == granule)
			return fi.granules[k].leaf_sizes;
	return 0;
}
