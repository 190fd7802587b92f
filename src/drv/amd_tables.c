/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * AMD IOMMU driver core (<iommukit/drv/amd.h>): device table entries, the
 * device table and its update order, GCR3 tables.
 *
 * Layouts (AMD pub. 48882): the device table is an array of 32-byte DTEs
 * indexed by DeviceID, 4 KiB aligned, a whole number of 4 KiB pages (the
 * base register's Size field is pages - 1).  A GCR3 table of GLX + 1 levels
 * is indexed by PASID, 9 bits a level from the top: level k (0 = last)
 * takes PASID bits [9k + 8 : 9k]; each entry is V [0] | address [51:12].
 *
 * Every function checks its arguments and obtains all memory before the
 * first store into a table the IOMMU may read.
 */
#include <iommukit/drv/amd.h>
#include <iommukit/atomic.h>
#include "drv_int.h"

#define PAGE 4096u
#define DTE_WORDS 4
#define DTE_BYTES 32u
#define ADDR52 0x000ffffffffff000ull
#define GCR3_A_MASK ((ik_u64)7 << IK_AMD_DTE0_GCR3_A_SHIFT)

/* A zeroed, cleaned, 4 KiB aligned table of `size` bytes below 2^oas. */
static int page_get(const struct ik_dma_mem *d, ik_size size, unsigned oas, ik_u64 **cpu,
		    ik_u64 *dma)
{
	void *p;
	int err = ik_drv_dma_alloc_below(d, size, PAGE, oas, &p, dma);

	if (err)
		return err;
	*cpu = (ik_u64 *)p;
	return 0;
}

static void publish(const struct ik_dma_mem *d, const void *cpu, ik_u64 dma, ik_size size)
{
	ik_dma_wmb();
	ik_dma_clean(d, cpu, dma, size);
}

/* ================================================================ DTE */

IK_API int ik_amd_dte_build(const struct ik_amd_dte_config *c, ik_u64 dte[4])
{
	ik_u64 w[DTE_WORDS] = { 0, 0, 0, 0 };

	if (!c || !dte || (c->prot & ~(IK_PROT_READ | IK_PROT_WRITE)) ||
	    c->domid > IK_AMD_MAX_DOMID || (c->flags & ~IK_AMD_DTE_FLAGS_ALL) ||
	    (c->intr & ~IK_AMD_DTE2_INTR_MASK))
		return -EINVAL;
	w[0] = IK_AMD_DTE0_V | IK_AMD_DTE0_TV;
	if (c->pt) {
		struct ik_pgtable_info info;

		ik_pgtable_get_info(c->pt, &info);
		if (info.geom.fmt != IK_PT_AMD_V1 || info.geom.nlevels < 1 ||
		    info.geom.nlevels > 6 || (info.root_iommu & ~ADDR52))
			return -EINVAL;
		w[0] |= (ik_u64)info.geom.nlevels << IK_AMD_DTE0_MODE_SHIFT | info.root_iommu;
		if (info.geom.quirks & IK_PT_QUIRK_DIRTY)
			w[0] |= IK_AMD_DTE0_HAD_MASK;
	}
	if (c->gcr3_root) {
		ik_u64 g = c->gcr3_root;

		if ((g & ~ADDR52) || c->glx > 2 || (c->gpt_levels != 4 && c->gpt_levels != 5))
			return -EINVAL;
		w[0] |= IK_AMD_DTE0_GV | (ik_u64)c->glx << IK_AMD_DTE0_GLX_SHIFT |
			((g >> 12) & 7) << IK_AMD_DTE0_GCR3_A_SHIFT;
		w[1] |= ((g >> 15) & 0xffff) << IK_AMD_DTE1_GCR3_B_SHIFT |
			((g >> 31) & 0x1fffff) << IK_AMD_DTE1_GCR3_C_SHIFT;
		if (c->gpt_levels == 5)
			w[2] |= (ik_u64)1 << IK_AMD_DTE2_GPT_LEVEL_SHIFT;
	} else if (c->glx || c->gpt_levels || (c->flags & IK_AMD_DTE_GIOV)) {
		return -EINVAL;
	}
	if (c->prot & IK_PROT_READ)
		w[0] |= IK_AMD_DTE0_IR;
	if (c->prot & IK_PROT_WRITE)
		w[0] |= IK_AMD_DTE0_IW;
	if (c->flags & IK_AMD_DTE_GIOV)
		w[0] |= IK_AMD_DTE0_GIOV;
	if (c->flags & IK_AMD_DTE_PPR)
		w[0] |= IK_AMD_DTE0_PPR;
	w[1] |= c->domid;
	if (c->flags & IK_AMD_DTE_IOTLB)
		w[1] |= IK_AMD_DTE1_I;
	if (c->flags & IK_AMD_DTE_SE)
		w[1] |= IK_AMD_DTE1_SE;
	if (c->flags & IK_AMD_DTE_SA)
		w[1] |= IK_AMD_DTE1_SA;
	w[2] |= c->intr;
	for (unsigned i = 0; i < DTE_WORDS; i++)
		dte[i] = w[i];
	return 0;
}

IK_API int ik_amd_dte_decode(const ik_u64 dte[4], struct ik_amd_dte *out)
{
	struct ik_amd_dte d;
	ik_u64 w0, w1, w2;

	if (!dte || !out)
		return -EINVAL;
	w0 = dte[0];
	w1 = dte[1];
	w2 = dte[2];
	if ((w0 & IK_AMD_DTE0_RSVD) || (w2 & IK_AMD_DTE2_RSVD) || (dte[3] & IK_AMD_DTE3_RSVD))
		return -EINVAL;
	IK_ENV_MEMSET(&d, 0, sizeof(d));
	d.v = w0 & IK_AMD_DTE0_V;
	d.tv = (w0 & IK_AMD_DTE0_TV) != 0;
	d.had = (ik_u8)((w0 & IK_AMD_DTE0_HAD_MASK) >> IK_AMD_DTE0_HAD_SHIFT);
	d.mode = (ik_u8)((w0 & IK_AMD_DTE0_MODE_MASK) >> IK_AMD_DTE0_MODE_SHIFT);
	d.root = w0 & IK_AMD_DTE0_ROOT_MASK;
	d.ppr = (w0 & IK_AMD_DTE0_PPR) != 0;
	d.gprp = (w0 & IK_AMD_DTE0_GPRP) != 0;
	d.giov = (w0 & IK_AMD_DTE0_GIOV) != 0;
	d.gv = (w0 & IK_AMD_DTE0_GV) != 0;
	d.glx = (ik_u8)((w0 >> IK_AMD_DTE0_GLX_SHIFT) & 3);
	d.gcr3_root = ((w0 >> IK_AMD_DTE0_GCR3_A_SHIFT) & 7) << 12 |
		      ((w1 >> IK_AMD_DTE1_GCR3_B_SHIFT) & 0xffff) << 15 |
		      ((w1 >> IK_AMD_DTE1_GCR3_C_SHIFT) & 0x1fffff) << 31;
	d.prot = ((w0 & IK_AMD_DTE0_IR) ? IK_PROT_READ : 0) |
		 ((w0 & IK_AMD_DTE0_IW) ? IK_PROT_WRITE : 0);
	d.domid = (ik_u16)(w1 & IK_AMD_DTE1_DOMID_MASK);
	d.iotlb = (w1 & IK_AMD_DTE1_I) != 0;
	d.se = (w1 & IK_AMD_DTE1_SE) != 0;
	d.sa = (w1 & IK_AMD_DTE1_SA) != 0;
	d.ioctl = (ik_u8)((w1 >> 35) & 3);
	d.cache = (w1 >> 37) & 1;
	d.sd = (w1 >> 38) & 1;
	d.ex = (w1 >> 39) & 1;
	d.sysmgt = (ik_u8)((w1 >> 40) & 3);
	d.gpt_level = (ik_u8)((w2 & IK_AMD_DTE2_GPT_LEVEL_MASK) >> IK_AMD_DTE2_GPT_LEVEL_SHIFT);
	d.intr = w2 & IK_AMD_DTE2_INTR_MASK;
	d.word3 = dte[3];
	if (d.mode == 7 || d.glx == 3)
		return -EINVAL;
	*out = d;
	return 0;
}

IK_API int ik_amd_walker_from_dte(struct ik_pt_walker *w, const ik_u64 dte[4], unsigned oas)
{
	struct ik_pgtable_cfg c;
	struct ik_amd_dte d;

	if (!w || ik_amd_dte_decode(dte, &d) || !d.v || !d.tv || !d.mode || oas < 32 || oas > 52)
		return -EINVAL;
	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.fmt = IK_PT_AMD_V1;
	c.ias = d.mode == 6 ? 63 : 12 + 9 * (unsigned)d.mode;
	c.oas = oas;
	c.pgsize_bitmap = ((ik_u64)1 << 12) | ((ik_u64)1 << 21) | ((ik_u64)1 << 30);
	c.coherent = true;
	c.quirks = d.had == 3 ? IK_PT_QUIRK_DIRTY : 0;
	return ik_pt_walker_init(w, &c, d.root);
}

/* ================================================================ device table */

IK_API int ik_amd_devtab_init(struct ik_amd_devtab *t, const struct ik_amd_devtab_config *c)
{
	struct ik_amd_devtab n;
	unsigned oas;
	ik_size bytes;
	int err;

	if (!t || !c || !c->dma || !c->dma->alloc || !c->dma->free || c->max_devid > IK_AMD_MAX_DEVID)
		return -EINVAL;
	oas = c->oas ? c->oas : 52;
	if (oas < 32 || oas > 52)
		return -EINVAL;
	IK_ENV_MEMSET(&n, 0, sizeof(n));
	n.dma = c->dma;
	n.entries = (c->max_devid + 128) & ~(ik_u32)127;
	bytes = (ik_size)n.entries * DTE_BYTES;
	err = page_get(c->dma, bytes, oas, &n.base, &n.base_dma);
	if (err)
		return err;
	for (ik_u32 i = 0; i < n.entries; i++)
		n.base[(ik_size)i * DTE_WORDS] = IK_AMD_DTE0_V | IK_AMD_DTE0_TV;
	publish(c->dma, n.base, n.base_dma, bytes);
	*t = n;
	return 0;
}

IK_API void ik_amd_devtab_fini(struct ik_amd_devtab *t)
{
	if (!t || !t->base)
		return;
	ik_dma_free(t->dma, t->base, t->base_dma, (ik_size)t->entries * DTE_BYTES);
	IK_ENV_MEMSET(t, 0, sizeof(*t));
}

IK_API ik_u64 ik_amd_devtab_reg(const struct ik_amd_devtab *t)
{
	IK_ASSERT(t && t->base);
	return (t->base_dma & ADDR52) | ((ik_u64)(t->entries / 128) - 1);
}

IK_API ik_u32 ik_amd_devtab_entries(const struct ik_amd_devtab *t)
{
	IK_ASSERT(t);
	return t->entries;
}

#define DTE0_GRANTS (IK_AMD_DTE0_MODE_MASK | IK_AMD_DTE0_GV | IK_AMD_DTE0_IR | IK_AMD_DTE0_IW)

/* The entry may let DMA through or have translations cached: anything but
 * an invalid entry (nothing to cache) and the blocked one. */
static bool dte_active(ik_u64 w0)
{
	if (!(w0 & IK_AMD_DTE0_V))
		return false;
	return !(w0 & IK_AMD_DTE0_TV) || (w0 & DTE0_GRANTS);
}

/* Word 0 is the blocked entry, whatever words 1..3 say. */
static bool dte_blocks(ik_u64 w0)
{
	return (w0 & IK_AMD_DTE0_V) && (w0 & IK_AMD_DTE0_TV) && !(w0 & DTE0_GRANTS);
}

/* The entry translates through a table (host or guest): the IOMMU may
 * cache translations tagged with its DomainID. */
static bool dte_tables(ik_u64 w0)
{
	return (w0 & IK_AMD_DTE0_V) && (w0 & IK_AMD_DTE0_TV) &&
	       (w0 & (IK_AMD_DTE0_MODE_MASK | IK_AMD_DTE0_GV));
}

/* What selects the tables a DTE translates through: word 0's Mode, root,
 * GV, GLX, GIoV and GCR3 bits, word 1's GCR3 bits. */
static void dte_table(const ik_u64 *w, ik_u64 *a, ik_u64 *b)
{
	*a = w[0] & (IK_AMD_DTE0_MODE_MASK | IK_AMD_DTE0_ROOT_MASK | IK_AMD_DTE0_GV |
		     (3ull << IK_AMD_DTE0_GLX_SHIFT) | GCR3_A_MASK | IK_AMD_DTE0_GIOV);
	*b = w[1] & IK_AMD_DTE1_GCR3_MASK;
}

static void put_words(ik_u64 *dst, const ik_u64 *src, unsigned from, unsigned to)
{
	for (unsigned i = to; i-- > from;)
		if (ik_load_relaxed(&dst[i]) != src[i])
			ik_store_relaxed(&dst[i], src[i]); /* single-copy atomic */
}

static int issue_one(ik_amd_issue_fn fn, void *ctx, const struct ik_amd_change *chg)
{
	struct ik_amd_plan p;
	int err;

	if (!fn)
		return 0;
	err = ik_amd_plan_change(chg, &p);
	return err ? err : fn(ctx, &p);
}

IK_API int ik_amd_devtab_write(struct ik_amd_devtab *t, ik_u32 devid, const ik_u64 dte[4],
			       ik_amd_issue_fn fn, void *ctx, struct ik_amd_change *chg)
{
	struct ik_amd_change c;
	struct ik_amd_dte nd;
	ik_u64 old[DTE_WORDS], *e, dma, oa, ob, na, nb;
	unsigned ndiff = 0;
	int err;

	if (!t || !dte || !t->base || devid >= t->entries || ik_amd_dte_decode(dte, &nd))
		return -EINVAL;
	e = t->base + (ik_size)devid * DTE_WORDS;
	dma = t->base_dma + (ik_u64)devid * DTE_BYTES;
	for (unsigned i = 0; i < DTE_WORDS; i++) {
		old[i] = ik_load_relaxed(&e[i]);
		ndiff += old[i] != dte[i];
	}
	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.kind = IK_AMD_CHANGE_DTE;
	c.devid = (ik_u16)devid;
	c.domid = (ik_u16)(old[1] & IK_AMD_DTE1_DOMID_MASK);
	if (dte_tables(old[0])) {
		/* The device leaves (DomainID, tables): what the IOMMU cached
		 * under that tag came from tables it no longer names. */
		dte_table(old, &oa, &ob);
		dte_table(dte, &na, &nb);
		c.flush_domain = !dte_tables(dte[0]) || c.domid != nd.domid || oa != na || ob != nb;
	}
	c.ats = dte_active(old[0]) && (old[1] & IK_AMD_DTE1_I);
	if (chg)
		*chg = c;
	if (!ndiff)
		return 0;
	if (dte_blocks(dte[0])) {
		/* Becoming blocked: word 0 first, then the rest (which the
		 * IOMMU no longer uses). */
		ik_store_release(&e[0], dte[0]);
		publish(t->dma, e, dma, DTE_BYTES);
		put_words(e, dte, 1, DTE_WORDS);
		publish(t->dma, e, dma, DTE_BYTES);
		return issue_one(fn, ctx, &c);
	}
	if (dte_active(old[0]) && ndiff > 1 && fn) {
		/* Break: word 0 alone blocks the device, whatever words 1..3
		 * say; the old entry's invalidations complete while it is
		 * blocked, the new entry then needs only its own. */
		ik_store_release(&e[0], IK_AMD_DTE0_V | IK_AMD_DTE0_TV);
		publish(t->dma, e, dma, DTE_BYTES);
		err = issue_one(fn, ctx, &c);
		if (err)
			return err;
		IK_ENV_MEMSET(&c, 0, sizeof(c));
		c.kind = IK_AMD_CHANGE_DTE;
		c.devid = (ik_u16)devid;
	}
	put_words(e, dte, 1, DTE_WORDS);
	publish(t->dma, e, dma, DTE_BYTES);
	ik_store_release(&e[0], dte[0]);
	publish(t->dma, e, dma, DTE_BYTES);
	return issue_one(fn, ctx, &c);
}

IK_API int ik_amd_devtab_read(const struct ik_amd_devtab *t, ik_u32 devid, ik_u64 dte[4])
{
	const ik_u64 *e;

	if (!t || !dte || !t->base || devid >= t->entries)
		return -EINVAL;
	e = t->base + (ik_size)devid * DTE_WORDS;
	for (unsigned i = 0; i < DTE_WORDS; i++)
		dte[i] = ik_load_relaxed(&e[i]);
	return 0;
}

/* ================================================================ GCR3 tables */

/*
 * Bookkeeping of lower tables: GLX 1: slots 0 .. 2^(bits-9) - 1, the last
 * level by PASID >> 9.  GLX 2: the same for the last level, then the middle
 * tables by PASID >> 18 at slots nlast .. nlast + 2^(bits-18) - 1.
 */
static ik_u32 n_last(unsigned bits)
{
	return bits > 9 ? (ik_u32)1 << (bits - 9) : 0;
}

static ik_u32 n_mid(unsigned bits)
{
	return bits > 18 ? (ik_u32)1 << (bits - 18) : 0;
}

IK_API int ik_amd_gcr3tab_init(struct ik_amd_gcr3tab *t, const struct ik_amd_gcr3tab_config *c)
{
	struct ik_amd_gcr3tab n;
	unsigned oas, lv;
	int err;

	if (!t || !c || !c->dma || !c->dma->alloc || !c->dma->free || c->pasid_bits < 1 ||
	    c->pasid_bits > 20)
		return -EINVAL;
	lv = c->gpt_levels ? c->gpt_levels : 4;
	oas = c->oas ? c->oas : 52;
	if ((lv != 4 && lv != 5) || oas < 32 || oas > 52)
		return -EINVAL;
	IK_ENV_MEMSET(&n, 0, sizeof(n));
	n.dma = c->dma;
	n.alloc = c->alloc;
	n.pasid_bits = (ik_u8)c->pasid_bits;
	n.glx = (ik_u8)((c->pasid_bits + 8) / 9 - 1);
	n.gpt_levels = (ik_u8)lv;
	n.oas = (ik_u8)oas;
	n.nsub = n_last(c->pasid_bits) + n_mid(c->pasid_bits);
	if (n.nsub) {
		ik_size sz = (ik_size)n.nsub * (sizeof(ik_u64 *) + sizeof(ik_u64));
		void *p = ik_alloc(c->alloc, sz, 8);

		if (!p)
			return -ENOMEM;
		IK_ENV_MEMSET(p, 0, sz);
		n.sub = (ik_u64 **)p;
		n.sub_dma = (ik_u64 *)(void *)((ik_u8 *)p + (ik_size)n.nsub * sizeof(ik_u64 *));
	}
	err = page_get(c->dma, PAGE, oas, &n.root, &n.root_dma);
	if (err) {
		if (n.sub)
			ik_free(c->alloc, n.sub,
				(ik_size)n.nsub * (sizeof(ik_u64 *) + sizeof(ik_u64)));
		return err;
	}
	publish(c->dma, n.root, n.root_dma, PAGE);
	n.tables = 1;
	*t = n;
	return 0;
}

IK_API void ik_amd_gcr3tab_fini(struct ik_amd_gcr3tab *t)
{
	if (!t || !t->root)
		return;
	for (ik_u32 i = 0; i < t->nsub; i++)
		if (t->sub[i])
			ik_dma_free(t->dma, t->sub[i], t->sub_dma[i], PAGE);
	if (t->sub)
		ik_free(t->alloc, t->sub, (ik_size)t->nsub * (sizeof(ik_u64 *) + sizeof(ik_u64)));
	ik_dma_free(t->dma, t->root, t->root_dma, PAGE);
	IK_ENV_MEMSET(t, 0, sizeof(*t));
}

IK_API void ik_amd_gcr3tab_dte(const struct ik_amd_gcr3tab *t, struct ik_amd_dte_config *c)
{
	IK_ASSERT(t && c);
	c->gcr3_root = t->root_dma;
	c->glx = t->glx;
	c->gpt_levels = t->gpt_levels;
}

/* The last-level table holding pasid's entry (NULL if not allocated), its
 * device address in *dma. */
static ik_u64 *last_table(const struct ik_amd_gcr3tab *t, ik_u32 pasid, ik_u64 *dma)
{
	ik_u32 i;

	if (t->glx == 0) {
		*dma = t->root_dma;
		return t->root;
	}
	i = pasid >> 9;
	*dma = t->sub_dma[i];
	return t->sub[i];
}

/* Allocate what is missing on pasid's path (nothing is linked yet):
 * *mid / *last the new pages (NULL where present). */
static int path_alloc(struct ik_amd_gcr3tab *t, ik_u32 pasid, ik_u64 **mid, ik_u64 *mid_dma,
		      ik_u64 **last, ik_u64 *last_dma)
{
	int err;

	*mid = *last = NULL;
	if (t->glx == 0)
		return 0;
	if (!t->sub[pasid >> 9]) {
		err = page_get(t->dma, PAGE, t->oas, last, last_dma);
		if (err)
			return err;
	}
	if (t->glx == 2 && !t->sub[n_last(t->pasid_bits) + (pasid >> 18)]) {
		err = page_get(t->dma, PAGE, t->oas, mid, mid_dma);
		if (err) {
			if (*last)
				ik_dma_free(t->dma, *last, *last_dma, PAGE);
			*last = NULL;
			return err;
		}
	}
	return 0;
}

/* Link a new zeroed table: cleaned first, then the entry naming it. */
static void link_table(struct ik_amd_gcr3tab *t, ik_u64 *parent, ik_u64 parent_dma, unsigned idx,
		       ik_u64 *tbl, ik_u64 tbl_dma, ik_u32 slot)
{
	publish(t->dma, tbl, tbl_dma, PAGE);
	t->sub[slot] = tbl;
	t->sub_dma[slot] = tbl_dma;
	t->tables++;
	ik_store_release(&parent[idx], (tbl_dma & IK_AMD_GCR3_ADDR_MASK) | IK_AMD_GCR3_V);
	publish(t->dma, &parent[idx], parent_dma + (ik_u64)idx * 8, 8);
}

static void chg_gcr3(struct ik_amd_change *chg, ik_u32 pasid)
{
	if (!chg)
		return;
	IK_ENV_MEMSET(chg, 0, sizeof(*chg));
	chg->kind = IK_AMD_CHANGE_GCR3;
	chg->pasid = pasid;
}

IK_API int ik_amd_gcr3tab_set(struct ik_amd_gcr3tab *t, ik_u32 pasid, const struct ik_pgtable *pt,
			      struct ik_amd_change *chg)
{
	struct ik_pgtable_info info;
	ik_u64 *mid, *last, *tbl, mid_dma = 0, last_dma = 0, tdma;
	unsigned idx = pasid & 511;
	int err;

	if (!t || !pt || !t->root || pasid >> t->pasid_bits)
		return -EINVAL;
	ik_pgtable_get_info(pt, &info);
	if (info.geom.fmt != IK_PT_AMD_V2 || info.geom.nlevels != t->gpt_levels ||
	    (info.root_iommu & ~IK_AMD_GCR3_ADDR_MASK))
		return -EINVAL;
	tbl = last_table(t, pasid, &tdma);
	if (tbl && (ik_load_relaxed(&tbl[idx]) & IK_AMD_GCR3_V))
		return -EBUSY;
	err = path_alloc(t, pasid, &mid, &mid_dma, &last, &last_dma);
	if (err)
		return err;
	/* Top down would expose a path ending in a zeroed table, which is
	 * harmless (not valid); bottom up keeps each link to a cleaned page. */
	if (t->glx == 2) {
		ik_u32 ms = n_last(t->pasid_bits) + (pasid >> 18);

		if (mid)
			link_table(t, t->root, t->root_dma, pasid >> 18, mid, mid_dma, ms);
		if (last)
			link_table(t, t->sub[ms], t->sub_dma[ms], (pasid >> 9) & 511, last, last_dma,
				   pasid >> 9);
	} else if (t->glx == 1 && last) {
		link_table(t, t->root, t->root_dma, pasid >> 9, last, last_dma, pasid >> 9);
	}
	tbl = last_table(t, pasid, &tdma);
	ik_store_release(&tbl[idx], info.root_iommu | IK_AMD_GCR3_V);
	publish(t->dma, &tbl[idx], tdma + (ik_u64)idx * 8, 8);
	chg_gcr3(chg, pasid);
	return 0;
}

IK_API int ik_amd_gcr3tab_clear(struct ik_amd_gcr3tab *t, ik_u32 pasid, struct ik_amd_change *chg)
{
	ik_u64 *tbl, tdma;
	unsigned idx = pasid & 511;

	if (!t || !t->root || pasid >> t->pasid_bits)
		return -EINVAL;
	tbl = last_table(t, pasid, &tdma);
	if (!tbl || !(ik_load_relaxed(&tbl[idx]) & IK_AMD_GCR3_V))
		return -ENOENT;
	ik_store_release(&tbl[idx], (ik_u64)0);
	publish(t->dma, &tbl[idx], tdma + (ik_u64)idx * 8, 8);
	chg_gcr3(chg, pasid);
	return 0;
}

IK_API int ik_amd_gcr3tab_read(const struct ik_amd_gcr3tab *t, ik_u32 pasid, ik_u64 *entry)
{
	const ik_u64 *tbl;
	ik_u64 tdma;

	if (!t || !entry || !t->root || pasid >> t->pasid_bits)
		return -EINVAL;
	tbl = last_table(t, pasid, &tdma);
	*entry = tbl ? ik_load_relaxed(&tbl[pasid & 511]) : 0;
	return 0;
}
