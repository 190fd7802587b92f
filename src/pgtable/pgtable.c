/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/pgtable/pgtable.c - the format-independent half of the page-table engine:
 * the format registry, table-page allocation and the freed-table cache,
 * argument checks, gathers, and the walker's range dump.  The per-entry work
 * lives in src/pgtable/pgtable_tmpl.h, instantiated by each format in src/fmt/.
 */
#include "pgtable_internal.h"

/* ---- registry ---- */

#define IK_PT_FORMAT(ops) extern const struct ik_pt_ops ops;
#include "pgtable_formats.h"
#undef IK_PT_FORMAT

static const struct ik_pt_ops *const ik_pt_formats[] = {
#define IK_PT_FORMAT(ops) &ops,
#include "pgtable_formats.h"
#undef IK_PT_FORMAT
};

static const struct ik_pt_ops *pt_ops(enum ik_pt_fmt fmt)
{
	ik_size i;

	for (i = 0; i < IK_ARRAY_SIZE(ik_pt_formats); i++)
		if (ik_pt_formats[i]->info->fmt == fmt)
			return ik_pt_formats[i];
	return NULL;
}

int ik_pt_fmt_get_info(enum ik_pt_fmt fmt, struct ik_pt_fmt_info *info)
{
	const struct ik_pt_ops *o;

	if (!info)
		return -EINVAL;
	o = pt_ops(fmt);
	if (!o)
		return -EOPNOTSUPP;
	*info = *o->info;
	return 0;
}

const char *ik_pt_fmt_name(enum ik_pt_fmt fmt)
{
	const struct ik_pt_ops *o = pt_ops(fmt);

	return o ? o->info->name : NULL;
}

static bool pt_streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

enum ik_pt_fmt ik_pt_fmt_from_name(const char *name)
{
	ik_size i;

	if (!name)
		return IK_PT_FMT_NONE;
	for (i = 0; i < IK_ARRAY_SIZE(ik_pt_formats); i++)
		if (pt_streq(ik_pt_formats[i]->info->name, name))
			return ik_pt_formats[i]->info->fmt;
	return IK_PT_FMT_NONE;
}

unsigned ik_pt_fmt_count(void)
{
	unsigned n = 0;
	ik_size i;

	for (i = 0; i < IK_ARRAY_SIZE(ik_pt_formats); i++)
		if ((unsigned)ik_pt_formats[i]->info->fmt > n)
			n = (unsigned)ik_pt_formats[i]->info->fmt;
	return n;
}

/* What the format's facts say about cfg: its quirks, fmt_flags, widths and
 * granule (the lowest bit of pgsize_bitmap) must be among the format's. */
static bool pt_cfg_fits(const struct ik_pt_fmt_info *fi, const struct ik_pgtable_cfg *cfg)
{
	ik_u64 granule = cfg->pgsize_bitmap & -cfg->pgsize_bitmap;
	unsigned i;

	if ((cfg->quirks & ~fi->quirks) || (cfg->fmt_flags & ~fi->fmt_flags))
		return false;
	if (cfg->ias > 63 || !(fi->ias_widths & (1ull << cfg->ias)) || cfg->oas > 63 ||
	    !(fi->oas_widths & (1ull << cfg->oas)))
		return false;
	for (i = 0; i < IK_PT_FMT_GRANULES && fi->granules[i].size; i++)
		if (granule == fi->granules[i].size)
			return true;
	return false;	/* also for an empty pgsize_bitmap */
}

int ik_pt_geometry_init(struct ik_pt_geometry *g, const struct ik_pgtable_cfg *cfg)
{
	const struct ik_pt_ops *o;
	int ret;

	if (!g || !cfg)
		return -EINVAL;
	o = pt_ops(cfg->fmt);
	if (!o)
		return -EOPNOTSUPP;
	if (!pt_cfg_fits(o->info, cfg))
		return -EINVAL;
	ret = o->geometry(g, cfg);
	if (ret)
		return ret;
	IK_ASSERT(g->nlevels >= 1 && g->nlevels <= IK_PT_MAX_LEVELS);
	return 0;
}

/* ---- table pages ---- */

static ik_size pt_book_bytes(ik_u32 nent, bool upper)
{
	return sizeof(struct ik_pt_tbl) + (upper ? (ik_size)nent * sizeof(struct ik_pt_tbl *) : 0);
}

/* Bytes of a table page: the root's, or the granule-sized one of any other. */
static ik_size pt_tbl_bytes(const struct ik_pgtable *pt, bool root)
{
	return root ? (ik_size)pt->geom.root_size : (ik_size)8u << pt->geom.bits;
}

/* Whether a table page at IOMMU address `iommu` can be pointed to: aligned
 * to its size and inside the output address size (a walker that reads an
 * entry with a wider address takes an address-size fault). */
static bool pt_tbl_addr_ok(const struct ik_pgtable *pt, ik_u64 iommu, ik_size bytes)
{
	return !(iommu & (bytes - 1)) && (pt->geom.oas >= 64 || !(iommu >> pt->geom.oas));
}

/* Allocate the root, or a non-root table with (upper) or without a child
 * array.  NULL with *err = -ENOMEM, or -ERANGE when the page lies beyond
 * the output address size (default allocator) or the hook returned such a
 * page or a misaligned one. */
static struct ik_pt_tbl *pt_tbl_alloc(struct ik_pgtable *pt, bool root, bool upper, int *err)
{
	ik_u32 nent = 1u << (root ? pt->geom.top_bits : pt->geom.bits);
	ik_size bytes = pt_tbl_bytes(pt, root);
	struct ik_pt_tbl *t;

	*err = -ENOMEM;
	t = (struct ik_pt_tbl *)ik_alloc(pt->cfg.allocator, pt_book_bytes(nent, upper), 16);
	if (!t)
		return NULL;
	IK_ENV_MEMSET(t, 0, pt_book_bytes(nent, upper));
	t->child = upper ? (struct ik_pt_tbl **)(void *)(t + 1) : NULL;
	t->nent = nent;
	t->flags = root ? IK_PT_TBL_ROOT : 0;
	if (pt->hooks.alloc_table) {
		ik_u64 iommu = 0;

		t->cpu = (ik_u64 *)pt->hooks.alloc_table(pt->cfg.cookie, bytes, &iommu);
		t->iommu = iommu;
		if (t->cpu && !pt_tbl_addr_ok(pt, iommu, bytes)) {
			/* A hook bug: refuse the page rather than corrupt tables. */
			pt->hooks.free_table(pt->cfg.cookie, t->cpu, iommu, bytes);
			t->cpu = NULL;
			*err = -ERANGE;
		}
	} else {
		if (bytes <= 4096) {
			t->cpu = (ik_u64 *)ik_alloc(pt->cfg.allocator, bytes, bytes);
			t->iommu = (ik_u64)(ik_uptr)t->cpu;
		} else {
			/* The env promises alignment up to 4096 only: over-allocate. */
			t->raw = ik_alloc(pt->cfg.allocator, bytes * 2, 4096);
			if (t->raw) {
				ik_uptr a = ((ik_uptr)t->raw + bytes - 1) & ~(ik_uptr)(bytes - 1);

				t->cpu = (ik_u64 *)(void *)a;
				t->iommu = (ik_u64)a;
			}
		}
		/* The default allocator's pages are at their CPU addresses,
		 * which may lie beyond a small oas: refuse them. */
		if (t->cpu && !pt_tbl_addr_ok(pt, t->iommu, bytes)) {
			if (t->raw)
				ik_free(pt->cfg.allocator, t->raw, bytes * 2);
			else
				ik_free(pt->cfg.allocator, t->cpu, bytes);
			t->cpu = NULL;
			*err = -ERANGE;
		}
	}
	if (!t->cpu) {
		ik_free(pt->cfg.allocator, t, pt_book_bytes(nent, upper));
		return NULL;
	}
	ik_atomic_fetch_add(&pt->st_tables_alloc, 1, IK_MO_RELAXED);
	ik_atomic_fetch_add(&pt->st_tables_live, 1, IK_MO_RELAXED);
	return t;
}

void ik_pt_tbl_release(struct ik_pgtable *pt, struct ik_pt_tbl *t)
{
	ik_size bytes = pt_tbl_bytes(pt, (t->flags & IK_PT_TBL_ROOT) != 0);

	if (pt->hooks.alloc_table)
		pt->hooks.free_table(pt->cfg.cookie, t->cpu, t->iommu, bytes);
	else if (t->raw)
		ik_free(pt->cfg.allocator, t->raw, bytes * 2);
	else
		ik_free(pt->cfg.allocator, t->cpu, bytes);
	ik_free(pt->cfg.allocator, t, pt_book_bytes(t->nent, t->child != NULL));
	ik_atomic_fetch_add(&pt->st_tables_freed, 1, IK_MO_RELAXED);
	ik_atomic_fetch_sub(&pt->st_tables_live, 1, IK_MO_RELAXED);
}

struct ik_pt_tbl *ik_pt_tbl_get(struct ik_pgtable *pt, unsigned level, int *err)
{
	struct ik_pt_tbl *t;
	bool upper = level > 0;
	int e;

	ik_lock(&pt->cache_lock);
	t = ik_pt_pool_pop(&pt->cache, level);
	if (t) {
		if (upper)
			pt->cache_n_upper--;
		else
			pt->cache_n_leaf--;
	}
	ik_unlock(&pt->cache_lock);
	if (t) {
		ik_atomic_fetch_add(&pt->st_cache_hits, 1, IK_MO_RELAXED);
		t->level = level;
		t->next = NULL;
		return t;
	}
	/* Non-root tables are all the same size; level only decides whether a
	 * child array comes with the page. */
	t = pt_tbl_alloc(pt, false, upper, &e);
	if (t)
		t->level = level;
	else if (err)
		*err = e;
	return t;
}

void ik_pt_tbl_put(struct ik_pgtable *pt, struct ik_pt_tbl *t)
{
	bool upper = t->child != NULL;

	if (upper)
		IK_ENV_MEMSET(t->child, 0, (ik_size)t->nent * sizeof(*t->child));
	ik_lock(&pt->cache_lock);
	if ((upper ? pt->cache_n_upper : pt->cache_n_leaf) < IK_PT_CACHE_MAX) {
		ik_pt_pool_push(&pt->cache, t);
		if (upper)
			pt->cache_n_upper++;
		else
			pt->cache_n_leaf++;
		t = NULL;
	}
	ik_unlock(&pt->cache_lock);
	if (t)
		ik_pt_tbl_release(pt, t);
}

void ik_pt_tbl_put_list(struct ik_pgtable *pt, struct ik_pt_tbl *list)
{
	while (list) {
		struct ik_pt_tbl *t = list;

		list = t->next;
		ik_pt_tbl_put(pt, t);
	}
}

int ik_pt_pool_fill(struct ik_pgtable *pt, struct ik_pt_pool *pool, ik_u64 upper, ik_u64 leaf)
{
	while (upper || leaf) {
		unsigned lvl = upper ? 1u : 0u;
		int err = -ENOMEM;
		struct ik_pt_tbl *t = ik_pt_tbl_get(pt, lvl, &err);

		if (!t) {
			ik_pt_pool_drain(pt, pool);
			return err;
		}
		ik_pt_pool_push(pool, t);
		if (lvl)
			upper--;
		else
			leaf--;
	}
	return 0;
}

void ik_pt_pool_drain(struct ik_pgtable *pt, struct ik_pt_pool *pool)
{
	ik_pt_tbl_put_list(pt, pool->upper);
	ik_pt_tbl_put_list(pt, pool->leaf);
	pool->upper = pool->leaf = NULL;
}

ik_u32 ik_pt_subtree_collect_deep(struct ik_pt_tbl *t, struct ik_pt_tbl **list)
{
	ik_u32 i, n = 1;

	for (i = 0; i < t->nent; i++) {
		struct ik_pt_tbl *c = ik_load_relaxed(&t->child[i]);

		if (c)
			n += ik_pt_subtree_collect(c, list);
	}
	t->next = *list;
	*list = t;
	return n;
}

static void pt_release_list(struct ik_pgtable *pt, struct ik_pt_tbl *list)
{
	while (list) {
		struct ik_pt_tbl *t = list;

		list = t->next;
		ik_pt_tbl_release(pt, t);
	}
}

void ik_pgtable_drain_cache(struct ik_pgtable *pt)
{
	struct ik_pt_pool cache;

	IK_ASSERT(pt);
	ik_lock(&pt->cache_lock);
	cache = pt->cache;
	pt->cache.leaf = pt->cache.upper = NULL;
	pt->cache_n_leaf = pt->cache_n_upper = 0;
	ik_unlock(&pt->cache_lock);
	pt_release_list(pt, cache.leaf);
	pt_release_list(pt, cache.upper);
}

/* ---- lifecycle ---- */

int ik_pgtable_create(const struct ik_pgtable_cfg *cfg, struct ik_pgtable **out)
{
	struct ik_pgtable *pt;
	struct ik_pt_geometry g;
	const struct ik_pt_ops *o;
	int ret;

	if (!cfg || !out)
		return -EINVAL;
	*out = NULL;
	ret = ik_pt_geometry_init(&g, cfg);
	if (ret)
		return ret;
	o = pt_ops(cfg->fmt);
	if (cfg->hooks && !cfg->hooks->alloc_table != !cfg->hooks->free_table)
		return -EINVAL;
	pt = (struct ik_pgtable *)ik_alloc(cfg->allocator, sizeof(*pt), 64);
	if (!pt)
		return -ENOMEM;
	IK_ENV_MEMSET(pt, 0, sizeof(*pt));
	pt->geom = g;
	pt->cfg = *cfg;
	if (cfg->hooks)
		pt->hooks = *cfg->hooks;
	pt->ops = o;
	ik_lock_init(&pt->cache_lock);
	pt->root = pt_tbl_alloc(pt, true, g.nlevels > 1, &ret);
	if (!pt->root) {
		ik_lock_destroy(&pt->cache_lock);
		ik_free(cfg->allocator, pt, sizeof(*pt));
		return ret;
	}
	pt->root->level = g.nlevels - 1u;
	IK_ENV_MEMSET(pt->root->cpu, 0, (ik_size)g.root_size);
	if (!cfg->coherent && pt->hooks.clean)
		pt->hooks.clean(cfg->cookie, pt->root->cpu, pt->root->iommu, (ik_size)g.root_size);
	*out = pt;
	return 0;
}

void ik_pgtable_destroy(struct ik_pgtable *pt)
{
	struct ik_pt_tbl *all = NULL;

	if (!pt)
		return;
	ik_pt_subtree_collect(pt->root, &all);
	pt_release_list(pt, all);
	ik_pgtable_drain_cache(pt);
	ik_lock_destroy(&pt->cache_lock);
	ik_free(pt->cfg.allocator, pt, sizeof(*pt));
}

void ik_pgtable_get_info(const struct ik_pgtable *pt, struct ik_pgtable_info *info)
{
	IK_ASSERT(pt && info);
	info->geom = pt->geom;
	info->root_iommu = pt->root->iommu;
	info->root_cpu = pt->root->cpu;
}

void ik_pgtable_get_stats(const struct ik_pgtable *pt, struct ik_pgtable_stats *st)
{
	struct ik_pgtable *p = (struct ik_pgtable *)(ik_uptr)pt;

	IK_ASSERT(pt && st);
	st->tables_alloc = ik_load_relaxed(&p->st_tables_alloc);
	st->tables_freed = ik_load_relaxed(&p->st_tables_freed);
	st->tables_live = ik_load_relaxed(&p->st_tables_live);
	st->cache_hits = ik_load_relaxed(&p->st_cache_hits);
	st->cas_lost = ik_load_relaxed(&p->st_cas_lost);
	st->splits = ik_load_relaxed(&p->st_splits);
	ik_lock(&p->cache_lock);
	st->cache_pages = (ik_u64)p->cache_n_leaf + p->cache_n_upper;
	ik_unlock(&p->cache_lock);
}

/* ---- argument checks ---- */

int ik_pt_check_prot(unsigned prot)
{
	if (prot & ~IK_PROT_ALL)
		return -EINVAL;
	if (!(prot & (IK_PROT_READ | IK_PROT_WRITE)))
		return -EINVAL;
	if ((prot & IK_PROT_CACHE) && (prot & IK_PROT_MMIO))
		return -EINVAL;
	return 0;
}

/* [start, start + len) is non-empty, does not wrap, and fits `bits`. */
static bool pt_range_ok(ik_u64 start, ik_u64 len, ik_u32 bits)
{
	if (len == 0 || start + len < start)
		return false;
	if (bits >= 64)
		return true;
	return start + len - 1 < (1ull << bits);
}

int ik_pgtable_map_pages(struct ik_pgtable *pt, ik_u64 iova, ik_u64 paddr, ik_u64 pgsize,
			 ik_u64 pgcount, unsigned prot)
{
	const struct ik_pt_geometry *g;
	struct ik_seg seg;

	if (!pt || ik_pt_check_prot(prot))
		return -EINVAL;
	g = &pt->geom;
	if (!IK_IS_POW2(pgsize) || !(g->pgsize_bitmap & pgsize) || pgcount == 0)
		return -EINVAL;
	if ((iova | paddr) & (pgsize - 1))
		return -EINVAL;
	if (pgcount > IK_U64_MAX / pgsize)
		return -EINVAL;
	seg.paddr = paddr;
	seg.len = pgsize * pgcount;
	if (!pt_range_ok(iova, seg.len, g->ias) || !pt_range_ok(paddr, seg.len, g->oas))
		return -EINVAL;
	return pt->ops->map(pt, iova, &seg, 1, pgsize, prot);
}

int ik_pgtable_map(struct ik_pgtable *pt, ik_u64 iova, ik_u64 paddr, ik_u64 size, unsigned prot)
{
	const struct ik_pt_geometry *g;
	ik_u64 gmask;
	struct ik_seg seg;

	if (!pt || ik_pt_check_prot(prot))
		return -EINVAL;
	g = &pt->geom;
	gmask = (1ull << g->lg2_granule) - 1;
	if ((iova | paddr | size) & gmask)
		return -EINVAL;
	if (!pt_range_ok(iova, size, g->ias) || !pt_range_ok(paddr, size, g->oas))
		return -EINVAL;
	seg.paddr = paddr;
	seg.len = size;
	return pt->ops->map(pt, iova, &seg, 1, 0, prot);
}

int ik_pgtable_map_sg(struct ik_pgtable *pt, ik_u64 iova, const struct ik_seg *segs, ik_size n,
		      unsigned prot, ik_u64 *mapped)
{
	const struct ik_pt_geometry *g;
	ik_u64 gmask, total = 0;
	ik_size i;
	int ret;

	/* `mapped` reads 0 after any failure, these checks included. */
	if (mapped)
		*mapped = 0;
	if (!pt || !segs || ik_pt_check_prot(prot) || n == 0)
		return -EINVAL;
	g = &pt->geom;
	gmask = (1ull << g->lg2_granule) - 1;
	if (iova & gmask)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if ((segs[i].paddr | segs[i].len) & gmask)
			return -EINVAL;
		if (!pt_range_ok(segs[i].paddr, segs[i].len, g->oas))
			return -EINVAL;
		if (total + segs[i].len < total)
			return -EINVAL;
		total += segs[i].len;
	}
	if (!pt_range_ok(iova, total, g->ias))
		return -EINVAL;
	ret = pt->ops->map(pt, iova, segs, n, 0, prot);
	if (!ret && mapped)
		*mapped = total;
	return ret;
}

ik_s64 ik_pgtable_unmap(struct ik_pgtable *pt, ik_u64 iova, ik_u64 size, struct ik_gather *gather)
{
	const struct ik_pt_geometry *g;
	ik_u64 gmask;

	if (!pt || !gather)
		return -EINVAL;
	g = &pt->geom;
	gmask = (1ull << g->lg2_granule) - 1;
	if (((iova | size) & gmask) || !pt_range_ok(iova, size, g->ias))
		return -EINVAL;
	if (gather->tables && gather->pt != pt)
		return -EINVAL;
	return pt->ops->unmap(pt, iova, size, gather);
}

int ik_pgtable_gather_sync(struct ik_pgtable *pt, struct ik_gather *gather)
{
	if (!gather || (gather->tables && gather->pt != pt))
		return -EINVAL;
	if (pt && pt->hooks.iotlb_sync)
		pt->hooks.iotlb_sync(pt->cfg.cookie, gather);
	ik_pt_tbl_put_list(pt, gather->tables);
	ik_gather_init(gather);
	return 0;
}

void ik_pgtable_flush_all(struct ik_pgtable *pt)
{
	IK_ASSERT(pt);
	if (pt->hooks.flush_all)
		pt->hooks.flush_all(pt->cfg.cookie);
}

int ik_pgtable_iova_to_phys(const struct ik_pgtable *pt, ik_u64 iova, ik_u64 *paddr, ik_u64 *pgsize)
{
	if (!pt || !paddr)
		return -EINVAL;
	if (pt->geom.ias < 64 && (iova >> pt->geom.ias))
		return -EINVAL;
	return pt->ops->iova_to_phys(pt, iova, paddr, pgsize);
}

ik_s64 ik_pgtable_read_and_clear_dirty(struct ik_pgtable *pt, ik_u64 iova, ik_u64 size,
				       unsigned flags, ik_u64 *bitmap, unsigned lg2_page,
				       struct ik_gather *gather)
{
	const struct ik_pt_geometry *g;

	if (!pt || !bitmap)
		return -EINVAL;
	g = &pt->geom;
	if (!pt->ops->dirty || !(g->quirks & IK_PT_QUIRK_DIRTY))
		return -EOPNOTSUPP;
	if (flags & ~IK_DIRTY_NO_CLEAR || lg2_page < g->lg2_granule || lg2_page > 63)
		return -EINVAL;
	if (((iova | size) & ((1ull << lg2_page) - 1)) || !pt_range_ok(iova, size, g->ias))
		return -EINVAL;
	if (gather && gather->tables && gather->pt != pt)
		return -EINVAL;
	return pt->ops->dirty(pt, iova, size, flags, bitmap, lg2_page, gather);
}

int ik_pgtable_dump(const struct ik_pgtable *pt, ik_u64 iova, ik_u64 size, ik_pt_range_fn fn,
		    void *ctx)
{
	if (!pt || !fn || !pt_range_ok(iova, size, pt->geom.ias))
		return -EINVAL;
	return pt->ops->dump(pt, iova, size, fn, ctx);
}

/* ---- merging dump ---- */

void ik_pt_merge_init(struct ik_pt_merge *m, ik_pt_range_fn fn, void *ctx)
{
	m->fn = fn;
	m->ctx = ctx;
	m->have = false;
	m->ret = 0;
}

int ik_pt_merge_add(struct ik_pt_merge *m, ik_u64 iova, ik_u64 oa, ik_u64 size, ik_u64 pgsize,
		    unsigned prot, ik_u64 attr)
{
	struct ik_pt_range *c = &m->cur;

	if (m->ret)
		return m->ret;
	if (m->have && c->iova + c->size == iova && c->oa + c->size == oa && c->prot == prot &&
	    c->attr == attr) {
		c->size += size;
		if (pgsize < c->pgsize)
			c->pgsize = pgsize;
		return 0;
	}
	if (m->have) {
		m->ret = m->fn(m->ctx, c);
		if (m->ret)
			return m->ret;
	}
	c->iova = iova;
	c->oa = oa;
	c->size = size;
	c->pgsize = pgsize;
	c->prot = prot;
	c->attr = attr;
	m->have = true;
	return 0;
}

int ik_pt_merge_end(struct ik_pt_merge *m)
{
	if (m->have && !m->ret)
		m->ret = m->fn(m->ctx, &m->cur);
	return m->ret;
}

/* ---- walker ---- */

int ik_pt_walker_init(struct ik_pt_walker *w, const struct ik_pgtable_cfg *cfg, ik_u64 root)
{
	int ret;

	if (!w)
		return -EINVAL;
	ret = ik_pt_geometry_init(&w->geom, cfg);
	if (ret)
		return ret;
	if (root & (w->geom.root_size - 1))
		return -EINVAL;
	w->root = root;
	return 0;
}

void ik_pgtable_walker(const struct ik_pgtable *pt, struct ik_pt_walker *w)
{
	IK_ASSERT(pt && w);
	w->geom = pt->geom;
	w->root = pt->root->iommu;
}

int ik_pt_walk(const struct ik_pt_walker *w, const struct ik_pt_mem *mem, ik_u64 iova,
	       unsigned access, struct ik_pt_walk_result *res)
{
	const struct ik_pt_ops *o;

	if (!w || !mem || !mem->read64 || !res)
		return -EINVAL;
	o = pt_ops(w->geom.fmt);
	if (!o || w->geom.nlevels < 1 || w->geom.nlevels > IK_PT_MAX_LEVELS)
		return -EINVAL;
	return o->walk(w, mem, iova, access, res);
}

int ik_pt_walker_dump(const struct ik_pt_walker *w, const struct ik_pt_mem *mem, ik_u64 iova,
		      ik_u64 size, ik_pt_range_fn fn, void *ctx)
{
	const struct ik_pt_ops *o;

	if (!w || !mem || !mem->read64 || !fn || !pt_range_ok(iova, size, w->geom.ias))
		return -EINVAL;
	o = pt_ops(w->geom.fmt);
	if (!o || w->geom.nlevels < 1 || w->geom.nlevels > IK_PT_MAX_LEVELS)
		return -EINVAL;
	return o->wdump(w, mem, iova, size, fn, ctx);
}
