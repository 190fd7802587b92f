/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Internal (not API): the VT-d driver object shared by src/drv/drv_vtd.c
 * (registers, bring-up, queue, faults) and src/drv/vtd_tables.c (root,
 * context and PASID structures).  See <iommukit/drv/vtd.h>.
 */
#ifndef IK_SRC_DRV_VTD_INT_H
#define IK_SRC_DRV_VTD_INT_H

#include <iommukit/drv/vtd.h>
#include <iommukit/atomic.h>

struct vtd_page {
	void *cpu;
	ik_u64 dma;
};

/* One device's PASID directory (scalable mode). */
struct vtd_pdir {
	struct vtd_page dir;	 /* dir_bytes of 8-byte entries */
	ik_size dir_bytes;
	ik_u32 ntables;		 /* usable directory entries (2^(pasid_bits - 6), >= 1) */
	ik_u32 live;		 /* present PASID entries other than PASID 0 */
	struct vtd_page *tables; /* ntables PASID table pages (cpu NULL: none) */
};

/* One context table page: legacy [bus]; scalable [bus * 2 + (devfn >> 7)]. */
struct vtd_ctx {
	struct vtd_page pg;
	struct vtd_pdir **pdir; /* scalable: 128 per-device directories, or NULL */
};

struct ik_vtd {
	struct ik_mmio mmio;
	struct ik_dma_mem dma;
	const struct ik_allocator *alloc;
	struct ik_vtd_hwcaps caps;
	struct ik_vtd_desc_rules rules;
	ik_u32 haw;
	ik_u32 flags;
	bool scalable;
	bool enabled;	 /* this object enabled TE and QI */
	bool stuck;	 /* the unit refused to let go: its memory is never freed */
	unsigned qs;
	unsigned pasid_bits;
	unsigned log2;	 /* queue entries */
	unsigned words;	 /* 2 or 4 */
	ik_u64 timeout;
	struct vtd_page root;
	struct vtd_page ring;
	ik_size ring_bytes;
	struct vtd_page status;
	ik_size status_bytes;
	void *qmem;
	ik_size qmem_size;
	struct ik_cmdq *q;
	struct ik_vtd_qi qi;
	struct ik_vtd_stats st;
	struct vtd_ctx ctx[512];
};

/* Allocate one zeroed page-aligned block of DMA memory below 2^haw
 * (-ENOMEM, -ERANGE); free it. */
int ik_vtd_page_alloc(struct ik_vtd *u, ik_size size, ik_size align, struct vtd_page *pg);
void ik_vtd_page_free(struct ik_vtd *u, struct vtd_page *pg, ik_size size);
/* Clean table memory the unit reads, when it does not snoop (ECAP.C = 0). */
void ik_vtd_tables_clean(const struct ik_vtd *u, const void *cpu, ik_u64 dma, ik_size size);
/* The root table, allocated on first use (*fresh: by this call). */
int ik_vtd_root_get(struct ik_vtd *u, bool *fresh);
/* Free the tables' bookkeeping and, when `pages`, every context, PASID and
 * root table page (destroy; a unit that may still read them keeps them). */
void ik_vtd_tables_free(struct ik_vtd *u, bool pages);

#endif
