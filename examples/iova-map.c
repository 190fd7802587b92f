/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The IOVA allocator and a page table, together: allocate an IOVA, map it in
 * an ARM LPAE stage-1 table, translate an address through the table, unmap.
 * README.md shows this file from its first #include on, and its output;
 * tests/readme.sh checks that both still match.
 *
 *   cc iova-map.c $(pkg-config --cflags --libs iommukit)
 */
#include <stdio.h>
#include <iommukit/iova.h>
#include <iommukit/pgtable.h>

int main(void)
{
	struct ik_iova_config icfg = { .granule = IK_SZ_4K, .start_pfn = 1, .end_pfn = 0xfffff };
	struct ik_pgtable_cfg pcfg = { .fmt = IK_PT_LPAE_S1, .ias = 48, .oas = 48, .coherent = true,
				       .pgsize_bitmap = IK_SZ_4K | IK_SZ_2M | IK_SZ_1G };
	struct ik_iova_domain dom;  /* pages of 4 KiB below 4 GiB: the IOVA API counts pages */
	struct ik_pgtable *pt;      /* the page-table API counts bytes */
	struct ik_gather g;
	uint64_t pfn, iova, pa, pgsize, buf = 0x80200000;  /* a 2 MiB buffer's physical address */
	int err;

	if (ik_iova_init(&dom, &icfg) || ik_pgtable_create(&pcfg, &pt))
		return 1;
	err = ik_iova_alloc(&dom, ik_bytes_to_pages(IK_SZ_2M, IK_SZ_4K), icfg.end_pfn,
			    IK_IOVA_SIZE_ALIGNED, &pfn);
	iova = ik_pfn_to_addr(pfn, IK_SZ_4K);
	if (!err)
		err = ik_pgtable_map(pt, iova, buf, IK_SZ_2M, IK_PROT_READ | IK_PROT_WRITE);
	if (!err)
		err = ik_pgtable_iova_to_phys(pt, iova + 0x1234, &pa, &pgsize);
	if (!err)
		printf("iova %#llx -> %#llx in a %llu KiB block\n", (unsigned long long)iova + 0x1234,
		       (unsigned long long)pa, (unsigned long long)pgsize >> 10);
	ik_gather_init(&g);
	if (!err && ik_pgtable_unmap(pt, iova, IK_SZ_2M, &g) != (int64_t)IK_SZ_2M)
		err = -EIO;
	/* Here the IOMMU's TLB is invalidated for [g.start, g.end]; then: */
	ik_pgtable_gather_sync(pt, &g);
	if (!err && ik_pgtable_iova_to_phys(pt, iova, &pa, NULL) != -ENOENT)
		err = -EIO;
	if (!err)
		err = ik_iova_free(&dom, pfn);
	printf("%s\n", err ? ik_strerror(err) : "unmapped and freed: ok");
	ik_pgtable_destroy(pt);
	ik_iova_destroy(&dom);
	return err ? 1 : 0;
}
