/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/pgtable/pgtable_tmpl.h - the page-table engine, instantiated once per
 * format.  Not API.  A format's source file (src/fmt/FAMILY_VARIANT.c)
 * defines IKPT_FMT, IKPT_SYM and IKPT_NAME, includes its src/fmt/FAMILY.h
 * (the contract in pgtable_internal.h) and then this file, and defines
 * `const struct ik_pt_ops ik_pt_ops_<IKPT_SYM> = IKPT_OPS;`.  Include once
 * per translation unit.
 *
 * Algorithms (all formats):
 *
 * map (map_pages, map, map_sg): the request is cut into "pieces": runs of
 * leaves of one size inside one table (page-size choice: the largest leaf
 * level the alignment of iova and paddr and the remaining length allow).
 *   pass 1 walks the pieces without writing: any leaf in the way -> -EEXIST;
 *     counts the table pages that are missing (each counted once);
 *   then the pool is filled with that many pages (-ENOMEM: nothing written);
 *   pass 2 writes.  Leaves that go into an existing table are stored and
 *     their index range joins the "run" of that level (one run per level:
 *     requests advance in IOVA, so a run ends when the next write is in
 *     another table or not adjacent; the run is then cleaned with one hook
 *     call).  A missing table starts a private subtree: its pages are filled
 *     (zeroes and leaves) while no walker can see them, subsequent pieces
 *     inside its span go straight into it, and when the request leaves that
 *     span the subtree's pages are cleaned once each, whole, and it is
 *     installed with one entry (compare-and-swap on the bookkeeping pointer,
 *     then a release store of the entry).  A loser of that CAS merges its
 *     private entries into the winner's table and returns its page.
 *   finally the runs are cleaned and iotlb_sync_map is called once.
 *
 * unmap: a recursive descent over the range.  A table whose span is inside
 *   the range is unlinked (one entry cleared) and queued on the gather with
 *   its subtree; leaves inside are cleared in runs; a block that crosses a
 *   boundary of the range is split (a private table with the block's
 *   attributes minus the hole, cleaned, then swapped in).  Splits need pages:
 *   counted and pooled before anything is written.  A range that is a run of
 *   whole entries of one table (pages, a block, a whole last-level table)
 *   cannot need a split: pt_unmap_fast() clears it after one descent.
 *
 * Descents compute a table's child array from its bookkeeping's address
 * (ik_pt_tbl_children()), so a level costs one dependent load.
 *
 * Every recursive descent over a range (unmap and its pass 1, dump, dirty)
 * visits a table's entries with one iterator, struct pt_span.
 */
#if !defined(IKPT_FMT) || !defined(IKPT_SYM) || !defined(IKPT_NAME)
#error "define IKPT_FMT, IKPT_SYM and IKPT_NAME, include the format header, then pgtable_tmpl.h"
#endif
#if !defined(FMT_QUIRKS) || !defined(FMT_FLAGS) || !defined(FMT_IAS_WIDTHS) || \
	!defined(FMT_OAS_WIDTHS) || !defined(FMT_GRANULES) || !defined(FMT_HW_LEVELS_UP)
#error "the format header must define the FMT_* facts (pgtable_internal.h)"
#endif
#ifndef FMT_HAS_DIRTY
#define FMT_HAS_DIRTY 0
#endif
#ifndef FMT_HAS_LEAF_SIZE
#define FMT_HAS_LEAF_SIZE 0
#endif
#ifndef FMT_HAS_SKIP
#define FMT_HAS_SKIP 0
#endif
#ifndef FMT_LEAF_OA_SHIFT
#define FMT_LEAF_OA_SHIFT 0
#endif
#ifndef FMT_LEAF_LINEAR_LG2
#define FMT_LEAF_LINEAR_LG2 64
#endif

/* Does a run of n leaves of size sz from output address pa leave the
 * aligned 2^FMT_LEAF_LINEAR_LG2 window in which fmt_mk_leaf is linear?
 * (Then the run is encoded entry by entry.)  Constant false by default. */
static inline bool pt_leaf_nonlinear(ik_u64 pa, ik_u64 sz, ik_u64 n)
{
#if FMT_LEAF_LINEAR_LG2 < 64
	return ((pa ^ (pa + (n - 1) * sz)) >> FMT_LEAF_LINEAR_LG2) != 0;
#else
	(void)pa;
	(void)sz;
	(void)n;
	return false;
#endif
}

/* ------------------------------------------------------------ names */

/*
 * Per-format symbols (generic_pt's NS()): every out-of-line function below
 * is emitted as NAME_<IKPT_SYM> (pt_map_lpae_s1, pt_walk_vtd_sl, ...), so
 * that backtraces and profiles tell the formats apart.  The code uses the
 * plain names; a new out-of-line function gets a line here.
 */
#define PT_CAT_(a, b) a##_##b
#define PT_CAT(a, b) PT_CAT_(a, b)
#define PT_NS(name) PT_CAT(name, IKPT_SYM)

#define pt_ctx_init PT_NS(pt_ctx_init)
#define pt_clean_entries PT_NS(pt_clean_entries)
#define pt_run_flush PT_NS(pt_run_flush)
#define pt_run_flush_all PT_NS(pt_run_flush_all)
#define pt_newtbl PT_NS(pt_newtbl)
#define pt_priv_giveback PT_NS(pt_priv_giveback)
#define pt_priv_clean PT_NS(pt_priv_clean)
#define pt_iter_init PT_NS(pt_iter_init)
#define pt_iter_keep PT_NS(pt_iter_keep)
#define pt_subtree_empty PT_NS(pt_subtree_empty)
#define pt_map_prepare PT_NS(pt_map_prepare)
#define pt_merge PT_NS(pt_merge)
#define pt_install PT_NS(pt_install)
#define pt_finalize PT_NS(pt_finalize)
#define pt_map_piece PT_NS(pt_map_piece)
#define pt_map_deferred_cleans PT_NS(pt_map_deferred_cleans)
#define pt_map_flush_dead PT_NS(pt_map_flush_dead)
#define pt_map PT_NS(pt_map)
#define pt_map_slow PT_NS(pt_map_slow)
#define pt_split_count PT_NS(pt_split_count)
#define pt_unmap_count PT_NS(pt_unmap_count)
#define pt_split_build PT_NS(pt_split_build)
#define pt_split PT_NS(pt_split)
#define pt_queue_subtree PT_NS(pt_queue_subtree)
#define pt_unmap_leaves PT_NS(pt_unmap_leaves)
#define pt_unmap_tbl PT_NS(pt_unmap_tbl)
#define pt_unmap PT_NS(pt_unmap)
#define pt_unmap_slow PT_NS(pt_unmap_slow)
#define pt_unmap_many_leaves PT_NS(pt_unmap_many_leaves)
#define pt_iova_to_phys PT_NS(pt_iova_to_phys)
#define pt_dump_tbl PT_NS(pt_dump_tbl)
#define pt_dump PT_NS(pt_dump)
#define pt_set_bits PT_NS(pt_set_bits)
#define pt_dirty_tbl PT_NS(pt_dirty_tbl)
#define pt_dirty PT_NS(pt_dirty)
#define pt_walk PT_NS(pt_walk)
#define pt_oa_fits PT_NS(pt_oa_fits)
#define pt_walk_once PT_NS(pt_walk_once)
#define pt_wdump PT_NS(pt_wdump)
#define pt_wdump_tbl PT_NS(pt_wdump_tbl)
#define pt_wdump_known_empty PT_NS(pt_wdump_known_empty)
#define pt_wdump_set_empty PT_NS(pt_wdump_set_empty)

/* ------------------------------------------------------------ geometry */

static inline unsigned pt_shift(const struct ik_pt_geometry *g, unsigned lvl)
{
	return g->lg2_granule + lvl * g->bits;
}

static inline unsigned pt_nbits(const struct ik_pt_geometry *g, unsigned lvl)
{
	return lvl == (unsigned)g->nlevels - 1u ? g->top_bits : g->bits;
}

static inline ik_u32 pt_index(const struct ik_pt_geometry *g, ik_u64 iova, unsigned lvl)
{
	return (ik_u32)((iova >> pt_shift(g, lvl)) & ((1ull << pt_nbits(g, lvl)) - 1));
}

static inline ik_u64 pt_esize(const struct ik_pt_geometry *g, unsigned lvl)
{
	return 1ull << pt_shift(g, lvl);
}

static inline unsigned pt_top(const struct ik_pt_geometry *g)
{
	return (unsigned)g->nlevels - 1u;
}

/* Entry loads: acquire where the entry may lead to a child (pairs with the
 * release store C2 in pt_install / pt_split). */
static inline ik_u64 pt_load_acq(const ik_u64 *p)
{
	return ik_atomic_load((ik_u64 *)(ik_uptr)p, IK_MO_ACQUIRE);
}

static inline ik_u64 pt_load(const ik_u64 *p)
{
	return ik_atomic_load((ik_u64 *)(ik_uptr)p, IK_MO_RELAXED);
}

static inline void pt_store(ik_u64 *p, ik_u64 v)
{
	ik_atomic_store(p, v, IK_MO_RELAXED);
}

static inline struct ik_pt_tbl *pt_child(const struct ik_pt_tbl *t, ik_u32 idx)
{
	/* Ordered by the acquire load of the entry (C1 before C2). */
	return ik_atomic_load(&ik_pt_tbl_children(t)[idx], IK_MO_RELAXED);
}

/* ------------------------------------------------------------ entries of a range */

/*
 * The entries of one table (level l) that [start, end) touches, one at a
 * time; the range lies inside the table's span.  Entry `idx` spans
 * [es, es + esz), and [rs, re) is the part of the range inside it; `whole`
 * when that is all of it.  Only the first and the last entry can be partly
 * covered.
 */
struct pt_span {
	ik_u32 idx, last;
	ik_u64 start, end;
	ik_u64 esz, es;
	ik_u64 rs, re;
	bool whole;
};

static inline void pt_span_clip(struct pt_span *s)
{
	s->rs = s->start > s->es ? s->start : s->es;
	s->re = s->end < s->es + s->esz ? s->end : s->es + s->esz;
	s->whole = s->rs == s->es && s->re == s->es + s->esz;
}

static inline void pt_span_init(struct pt_span *s, const struct ik_pt_geometry *g, unsigned l,
				ik_u64 start, ik_u64 end)
{
	s->esz = pt_esize(g, l);
	s->idx = pt_index(g, start, l);
	s->last = pt_index(g, end - 1, l);
	s->start = start;
	s->end = end;
	s->es = start & ~(s->esz - 1);
	pt_span_clip(s);
}

static inline void pt_span_next(struct pt_span *s)
{
	s->idx++;
	s->es += s->esz;
	pt_span_clip(s);
}

/* Skip to the last entry (the ones between are whole). */
static inline void pt_span_last(struct pt_span *s)
{
	s->idx = s->last;
	s->es = (s->end - 1) & ~(s->esz - 1);
	pt_span_clip(s);
}

#define pt_for_each_span(s, g, l, start, end) \
	for (pt_span_init(&(s), (g), (l), (start), (end)); (s).idx <= (s).last; pt_span_next(&(s)))

/* ------------------------------------------------------------ requests */

struct pt_run {
	struct ik_pt_tbl *t;
	ik_u32 lo, hi;
};

/*
 * What every request that writes entries carries: the clean run of each
 * level, the pool of table pages it obtained before writing, and the
 * private tables it is building (filled while no walker can reach them;
 * linked through ->next).
 */
struct pt_ctx {
	struct ik_pgtable *pt;
	const struct ik_pt_geometry *g;
	bool clean;	/* non-coherent: cleans needed */
	struct pt_run run[IK_PT_MAX_LEVELS];
	struct ik_pt_pool pool;
	struct ik_pt_tbl *priv;
	ik_u64 stamp;	/* stamps the private tables (map: the request's; else 0) */
};

static void pt_ctx_init(struct pt_ctx *c, struct ik_pgtable *pt)
{
	unsigned i;

	c->pt = pt;
	c->g = &pt->geom;
	c->clean = !pt->cfg.coherent;
	for (i = 0; i < IK_PT_MAX_LEVELS; i++)
		c->run[i].t = NULL;
	c->pool.upper = c->pool.leaf = NULL;
	c->priv = NULL;
	c->stamp = 0;
}

static void pt_clean_entries(struct ik_pgtable *pt, struct ik_pt_tbl *t, ik_u32 lo, ik_u32 n)
{
	if (pt->hooks.clean)
		pt->hooks.clean(pt->cfg.cookie, t->cpu + lo, t->iommu + (ik_u64)lo * 8u,
				(ik_size)n * 8u);
}

static void pt_run_flush(struct pt_ctx *c, unsigned lvl)
{
	struct pt_run *r = &c->run[lvl];

	if (r->t) {
		pt_clean_entries(c->pt, r->t, r->lo, r->hi - r->lo + 1);
		r->t = NULL;
	}
}

static inline void pt_run_add(struct pt_ctx *c, unsigned lvl, struct ik_pt_tbl *t, ik_u32 lo,
			      ik_u32 hi)
{
	struct pt_run *r = &c->run[lvl];

	if (!c->clean)
		return;
	if (r->t == t && lo <= r->hi + 1 && hi + 1 >= r->lo) {
		if (lo < r->lo)
			r->lo = lo;
		if (hi > r->hi)
			r->hi = hi;
		return;
	}
	pt_run_flush(c, lvl);
	r->t = t;
	r->lo = lo;
	r->hi = hi;
}

static void pt_run_flush_all(struct pt_ctx *c)
{
	unsigned i;

	if (!c->clean)
		return;
	/* Deepest first: children before the entries that point at them. */
	for (i = 0; i < IK_PT_MAX_LEVELS; i++)
		pt_run_flush(c, i);
}

/* A zeroed private table for `lvl`, from the pool (or, only when racing with
 * an overlapping request, from the cache or the hooks). */
static struct ik_pt_tbl *pt_newtbl(struct pt_ctx *c, unsigned lvl)
{
	struct ik_pt_tbl *t = ik_pt_pool_pop(&c->pool, lvl);

	if (!t)
		t = ik_pt_tbl_get(c->pt, lvl, NULL);
	if (!t)
		return NULL;
	t->level = lvl;
	t->nleaf = 0;
	ik_store_relaxed(&t->stamp, c->stamp);
	IK_ENV_MEMSET(t->cpu, 0, (ik_size)t->nent * 8u);
	t->next = c->priv;
	c->priv = t;
	return t;
}

/* Give back what is left of the pool (usually nothing: no call then). */
static inline void pt_pool_done(struct pt_ctx *c)
{
	if (c->pool.upper || c->pool.leaf)
		ik_pt_pool_drain(c->pt, &c->pool);
}

/* Clean every private table, whole, before it becomes reachable. */
static void pt_priv_clean(struct pt_ctx *c)
{
	struct ik_pt_tbl *t;

	if (c->clean) {
		for (t = c->priv; t; t = t->next)
			pt_clean_entries(c->pt, t, 0, t->nent);
	}
}

/* Give every private table back to the pool (none was ever reachable). */
static void pt_priv_giveback(struct pt_ctx *c)
{
	while (c->priv) {
		struct ik_pt_tbl *t = c->priv;

		c->priv = t->next;
		if (t->child)
			IK_ENV_MEMSET(t->child, 0, (ik_size)t->nent * sizeof(*t->child));
		ik_pt_pool_push(&c->pool, t);
	}
}

/* Add what a request changed to the caller's gather: one range, through the
 * gather_add hook (default ik_gather_add). */
static inline void pt_gather_range(struct ik_pgtable *pt, struct ik_gather *gather,
				   const struct ik_gather *done)
{
	if (done->end <= done->start)
		return;
	/* The gather names its table set whenever it holds a range, so that
	 * an invalidation planner can refuse another's. */
	gather->pt = pt;
	if (pt->hooks.gather_add)
		pt->hooks.gather_add(pt->cfg.cookie, gather, done->start, done->end - done->start,
				     done->granule);
	else
		ik_gather_add(gather, done->start, done->end - done->start, done->granule);
}

/* ------------------------------------------------------------ pieces */

struct pt_iter {
	const struct ik_seg *segs;
	ik_size n, i;
	ik_u64 iova, pa, rem;
	ik_u64 pgsize;	/* forced page size, or 0 */
	/* Keep mode: the table set whose tables no leaf may replace (empty
	 * tables that nothing can invalidate a walk cache for), or NULL. */
	const struct ik_pgtable *keep;
};

struct pt_piece {
	ik_u64 iova, pa;
	unsigned lvl;
	ik_u32 count;
};

static void pt_iter_init(struct pt_iter *it, ik_u64 iova, const struct ik_seg *segs, ik_size n,
			 ik_u64 pgsize, const struct ik_pgtable *keep)
{
	it->segs = segs;
	it->n = n;
	it->i = 0;
	it->iova = iova;
	it->pa = 0;
	it->rem = 0;
	it->pgsize = pgsize;
	it->keep = keep;
}

/* The level whose entries are pgsize bytes (pgsize one of the geometry's
 * page sizes).  A loop, not a division: a variable divide costs more than
 * the few levels there are. */
static inline unsigned pt_pgsize_level(const struct ik_pt_geometry *g, ik_u64 pgsize)
{
	unsigned lvl = 0, sh = (unsigned)ik_ctz64(pgsize);

	while (pt_shift(g, lvl) < sh)
		lvl++;
	return lvl;
}

/* Leaves of level lvl the piece at it->iova can take: what remains, up to
 * the end of the table. */
static inline ik_u64 pt_iter_count(const struct ik_pt_geometry *g, const struct pt_iter *it,
				   unsigned lvl)
{
	ik_u64 cnt = it->rem >> pt_shift(g, lvl);
	ik_u64 left = (1ull << pt_nbits(g, lvl)) - pt_index(g, it->iova, lvl);

	return cnt < left ? cnt : left;
}

/*
 * Keep mode: no leaf goes where a table is.  While the piece's first entry
 * holds a table (an empty one: pass 1 made sure), use the next smaller leaf
 * size; else end the piece before the first entry that holds one.  The
 * entries looked at lie wholly inside the request's range, so only this
 * request changes them.  O(levels + count) per piece; only maps that found
 * empty tables in their way with no hook to invalidate walk caches get here.
 */
static void pt_iter_keep(const struct ik_pt_geometry *g, struct pt_iter *it, struct pt_piece *p)
{
	unsigned *lvl = &p->lvl;
	ik_u64 cnt = p->count, had = cnt << pt_shift(g, p->lvl);

	/* Back to the piece's start, then forward by what it keeps. */
	it->iova = p->iova;
	it->pa = p->pa;
	it->rem += had;
	for (;;) {
		const struct ik_pt_tbl *t = it->keep->root;
		unsigned l = pt_top(g);
		ik_u32 idx, k;
		ik_u64 e;

		for (; l > *lvl; l--) {
			e = pt_load_acq(&t->cpu[pt_index(g, it->iova, l)]);
			if (!e || !fmt_is_table(g, e, l))
				goto out;	/* no table below: nothing in the way */
			t = pt_child(t, pt_index(g, it->iova, l));
		}
		idx = pt_index(g, it->iova, l);
		e = pt_load_acq(&t->cpu[idx]);
		if (!e || !fmt_is_table(g, e, l)) {	/* (never a table at level 0) */
			for (k = 1; k < cnt; k++) {
				e = pt_load_acq(&t->cpu[idx + k]);
				if (e && fmt_is_table(g, e, l)) {
					cnt = k;
					break;
				}
			}
			goto out;
		}
		do
			(*lvl)--;
		while (!(g->leaf_levels & (1u << *lvl)));
		cnt = pt_iter_count(g, it, *lvl);
	}
out:
	p->count = (ik_u32)cnt;
	it->iova += cnt << pt_shift(g, *lvl);
	it->pa += cnt << pt_shift(g, *lvl);
	it->rem -= cnt << pt_shift(g, *lvl);
}

static inline bool pt_iter_next(const struct ik_pt_geometry *g, struct pt_iter *it,
				struct pt_piece *p)
{
	unsigned lvl;
	ik_u64 cnt;

	if (it->rem == 0) {
		if (it->i >= it->n)
			return false;
		it->pa = it->segs[it->i].paddr;
		it->rem = it->segs[it->i].len;
		it->i++;
		/* Coalesce physically contiguous neighbours. */
		while (it->i < it->n && it->segs[it->i].paddr == it->pa + it->rem) {
			it->rem += it->segs[it->i].len;
			it->i++;
		}
	}
	if (it->pgsize) {
		lvl = pt_pgsize_level(g, it->pgsize);
	} else {
		ik_u64 align = it->iova | it->pa;

		lvl = pt_top(g);
		for (;;) {
			ik_u64 sz = pt_esize(g, lvl);

			if ((g->leaf_levels & (1u << lvl)) && it->rem >= sz && !(align & (sz - 1)))
				break;
			if (lvl == 0)
				break;
			lvl--;
		}
	}
	cnt = pt_iter_count(g, it, lvl);
	p->iova = it->iova;
	p->pa = it->pa;
	p->lvl = lvl;
	p->count = (ik_u32)cnt;
	it->iova += cnt << pt_shift(g, lvl);
	it->pa += cnt << pt_shift(g, lvl);
	it->rem -= cnt << pt_shift(g, lvl);
	return true;
}

/* The next piece, in keep mode cut by pt_iter_keep().  (Apart from
 * pt_iter_next() so that its loop stays a leaf function.) */
IK_ALWAYS_INLINE bool pt_piece_next(const struct ik_pt_geometry *g, struct pt_iter *it,
				  struct pt_piece *p)
{
	if (!pt_iter_next(g, it, p))
		return false;
	if (IK_UNLIKELY(it->keep != NULL))
		pt_iter_keep(g, it, p);
	return true;
}

/* ------------------------------------------------------------ map */

struct pt_map_req {
	struct pt_ctx c;
	ik_u64 attrs;
	/* the private subtree being filled, and where it will be installed */
	struct ik_pt_tbl *pend;
	struct ik_pt_tbl *pend_parent;
	ik_u32 pend_idx;
	ik_u64 pend_base, pend_last;
	bool replace;			/* pass 1 found empty tables to replace */
	const struct ik_pgtable *keep;	/* or keeps them (pieces: pt_iter_keep) */
	struct ik_pt_tbl *cur_t;	/* cursor: last visible table written */
	ik_u64 cur_base, cur_mask;
	struct ik_pt_tbl *dead;		/* the replaced tables, via ->next */
};

/* Does the subtree below t hold no leaf at all? */
static bool pt_subtree_empty(const struct ik_pt_geometry *g, const struct ik_pt_tbl *t)
{
	ik_u32 i;

	for (i = 0; i < t->nent; i++) {
		ik_u64 e = pt_load_acq(&t->cpu[i]);

		if (!e)
			continue;
		if (!fmt_is_table(g, e, t->level) || !pt_subtree_empty(g, pt_child(t, i)))
			return false;
	}
	return true;
}

/* Pass 1: conflicts and the number of missing tables.  *replace: a leaf
 * goes where an empty table (left by earlier partial unmaps) is. */
static int pt_map_prepare(struct ik_pgtable *pt, ik_u64 iova, const struct ik_seg *segs,
			  ik_size n, ik_u64 pgsize, const struct ik_pgtable *keep, ik_u64 *need_upper,
			  ik_u64 *need_leaf, bool *replace)
{
	const struct ik_pt_geometry *g = &pt->geom;
	ik_u64 last_key[IK_PT_MAX_LEVELS];
	struct pt_iter it;
	struct pt_piece p;
	unsigned i;
	const struct ik_pt_tbl *cur_t = NULL;
	ik_u64 cur_base = 0, cur_mask = 0;

	for (i = 0; i < IK_PT_MAX_LEVELS; i++)
		last_key[i] = IK_U64_MAX;
	*need_upper = *need_leaf = 0;
	pt_iter_init(&it, iova, segs, n, pgsize, keep);
	while (pt_piece_next(g, &it, &p)) {
		const struct ik_pt_tbl *t = pt->root;
		unsigned l = pt_top(g);
		ik_u64 acc = 0;
		ik_u32 idx, k;

		/* Cursor: the previous piece's table, if this one is in it. */
		if (cur_t && p.lvl == cur_t->level && (p.iova & ~cur_mask) == cur_base) {
			t = cur_t;
			l = p.lvl;
		}
		while (l > p.lvl) {
			ik_u64 e;

			idx = pt_index(g, p.iova, l);
			e = pt_load_acq(&t->cpu[idx]);
			if (e == 0) {
				unsigned lv;

				for (lv = p.lvl; lv < l; lv++) {
					ik_u64 key = p.iova >> (pt_shift(g, lv) + g->bits);

					if (key != last_key[lv]) {
						last_key[lv] = key;
						if (lv)
							(*need_upper)++;
						else
							(*need_leaf)++;
					}
				}
				break;
			}
			if (!fmt_is_table(g, e, l))
				return -EEXIST;
			t = pt_child(t, idx);
			l--;
		}
		if (l > p.lvl)
			continue;
		cur_t = t;
		cur_mask = (1ull << (pt_shift(g, l) + pt_nbits(g, l))) - 1;
		cur_base = p.iova & ~cur_mask;
		idx = pt_index(g, p.iova, l);
		/* Only this request writes these entries (disjoint ranges).
		 * Relaxed atomic loads, not plain ones: the caller's ordering
		 * with the range's previous owner may be one a race detector
		 * cannot see (the IOVA range caches' rseq fast path hands a
		 * freed range to the next thread on that CPU). */
		for (k = 0; k < p.count; k++)
			acc |= pt_load(&t->cpu[idx + k]);
		if (!acc)
			continue;
		for (k = 0; k < p.count; k++) {
			ik_u64 e = pt_load_acq(&t->cpu[idx + k]);

			if (!e)
				continue;
			if (!fmt_is_table(g, e, l) || !pt_subtree_empty(g, pt_child(t, idx + k)))
				return -EEXIST;
			*replace = true;
		}
	}
	return 0;
}

static void pt_install(struct pt_map_req *m, struct ik_pt_tbl *parent, ik_u32 idx, unsigned lvl,
		       struct ik_pt_tbl *n);

/* Move the entries of private table n into the visible table w (same level,
 * same span; the entries are disjoint by contract), then give n back. */
static void pt_merge(struct pt_map_req *m, struct ik_pt_tbl *w, struct ik_pt_tbl *n)
{
	const struct ik_pt_geometry *g = m->c.g;
	unsigned lvl = n->level;
	ik_u32 i, leaves = 0;

	for (i = 0; i < n->nent; i++) {
		ik_u64 e = n->cpu[i];

		if (!e)
			continue;
		if (fmt_is_table(g, e, lvl)) {
			struct ik_pt_tbl *c = n->child[i];

			n->child[i] = NULL;
			pt_install(m, w, i, lvl, c);
		} else {
			pt_store(&w->cpu[i], e);
			pt_run_add(&m->c, lvl, w, i, i);
			leaves++;
		}
	}
	if (leaves)
		ik_atomic_fetch_add(&w->nleaf, leaves, IK_MO_RELAXED);
	ik_pt_pool_push(&m->c.pool, n);
}

/* Make n (already cleaned) the child of entry idx (level lvl) of parent. */
static void pt_install(struct pt_map_req *m, struct ik_pt_tbl *parent, ik_u32 idx, unsigned lvl,
		       struct ik_pt_tbl *n)
{
	const struct ik_pt_geometry *g = m->c.g;
	struct ik_pt_tbl *cur = NULL;
	ik_u64 e;

	/* C1: claim the slot.  Relaxed: the entry store below publishes. */
	if (ik_atomic_cas(&parent->child[idx], &cur, n, IK_MO_RELAXED, IK_MO_RELAXED)) {
		/* C2: release - the table's contents (and its own bookkeeping)
		 * before the entry; pairs with pt_load_acq() in every descent. */
		ik_atomic_store(&parent->cpu[idx], fmt_mk_table(g, n->iommu, lvl), IK_MO_RELEASE);
		pt_run_add(&m->c, lvl, parent, idx, idx);
		return;
	}
	ik_atomic_fetch_add(&m->c.pt->st_cas_lost, 1, IK_MO_RELAXED);
	/* The winner is between C1 and C2: wait for its entry (acquire pairs
	 * with its C2), then merge into its table. */
	for (;;) {
		e = pt_load_acq(&parent->cpu[idx]);
		if (e && fmt_is_table(g, e, lvl))
			break;
		ik_cpu_relax();
	}
	pt_merge(m, cur, n);
}

/* Clean the private subtree and install it. */
static void pt_finalize(struct pt_map_req *m)
{
	if (!m->pend)
		return;
	pt_priv_clean(&m->c);
	m->c.priv = NULL;
	pt_install(m, m->pend_parent, m->pend_idx, m->pend->level + 1, m->pend);
	m->pend = NULL;
}

/* Store n leaves v, v + st, v + 2 st, ... from e on: four per iteration,
 * through a pointer (no index to widen per store). */
IK_ALWAYS_INLINE void pt_store_run(ik_u64 *e, ik_u32 n, ik_u64 v, ik_u64 st)
{
	ik_u64 *end = e + n;

	for (; end - e >= 4; e += 4, v += 4 * st) {
		pt_store(&e[0], v);
		pt_store(&e[1], v + st);
		pt_store(&e[2], v + 2 * st);
		pt_store(&e[3], v + 3 * st);
	}
	for (; e < end; e++, v += st)
		pt_store(e, v);
}

/* Write piece p's leaves into the visible table t at idx (entries empty,
 * only this request writes them) and count them. */
IK_ALWAYS_INLINE void pt_store_leaves(const struct ik_pt_geometry *g, struct ik_pt_tbl *t,
				      ik_u32 idx, const struct pt_piece *p, ik_u64 attrs)
{
	ik_u64 sz = pt_esize(g, p->lvl), *e = t->cpu + idx;
	/* fmt_mk_leaf is linear in the output address within an aligned
	 * 2^FMT_LEAF_LINEAR_LG2 window (contract); one leaf's step is
	 * sz >> FMT_LEAF_OA_SHIFT.  A run leaving the window is encoded entry
	 * by entry. */
	ik_u64 v = fmt_mk_leaf(g, attrs, p->pa, p->lvl), st = sz >> FMT_LEAF_OA_SHIFT;
	ik_u32 k;

	if (IK_UNLIKELY(pt_leaf_nonlinear(p->pa, sz, p->count))) {
		ik_u64 pa = p->pa;

		for (k = 0; k < p->count; k++, pa += sz)
			pt_store(&e[k], fmt_mk_leaf(g, attrs, pa, p->lvl));
	} else {
		pt_store_run(e, p->count, v, st);
	}
	ik_atomic_fetch_add(&t->nleaf, p->count, IK_MO_RELAXED);
}

static void pt_map_piece(struct pt_map_req *m, const struct pt_piece *p)
{
	const struct ik_pt_geometry *g = m->c.g;
	struct ik_pt_tbl *t;
	unsigned l;
	bool priv;
	ik_u32 idx, k;
	ik_u64 sz = pt_esize(g, p->lvl), pa = p->pa, attrs = m->attrs;
	ik_u64 *e;

	if (m->pend && p->iova >= m->pend_base && p->iova <= m->pend_last) {
		t = m->pend;
		priv = true;
	} else {
		pt_finalize(m);
		priv = false;
		if (m->cur_t && p->lvl == m->cur_t->level && (p->iova & ~m->cur_mask) == m->cur_base)
			t = m->cur_t;
		else
			t = m->c.pt->root;
	}
	l = t->level;
	while (l > p->lvl) {
		struct ik_pt_tbl *n;

		idx = pt_index(g, p->iova, l);
		if (!priv) {
			ik_u64 v = pt_load_acq(&t->cpu[idx]);

			if (v && fmt_is_table(g, v, l)) {
				t = pt_child(t, idx);
				l--;
				continue;
			}
			n = pt_newtbl(&m->c, l - 1);
			if (!n)
				return;
			m->pend = n;
			m->pend_parent = t;
			m->pend_idx = idx;
			m->pend_base = p->iova & ~(pt_esize(g, l) - 1);
			m->pend_last = m->pend_base + (pt_esize(g, l) - 1);
			priv = true;
		} else {
			if (t->cpu[idx]) {
				t = t->child[idx];
				l--;
				continue;
			}
			n = pt_newtbl(&m->c, l - 1);
			if (!n)
				return;
			t->cpu[idx] = fmt_mk_table(g, n->iommu, l);
			t->child[idx] = n;
		}
		t = n;
		l--;
	}
	idx = pt_index(g, p->iova, l);
	e = t->cpu + idx;
	if (!priv) {
		m->cur_t = t;
		m->cur_mask = (1ull << (pt_shift(g, l) + pt_nbits(g, l))) - 1;
		m->cur_base = p->iova & ~m->cur_mask;
	}
	if (priv) {
		/* A private table: linear runs by adding, as
		 * pt_store_leaves() (a relaxed store is a plain one). */
		if (IK_UNLIKELY(pt_leaf_nonlinear(pa, sz, p->count))) {
			for (k = 0; k < p->count; k++, pa += sz)
				e[k] = fmt_mk_leaf(g, attrs, pa, l);
		} else {
			pt_store_run(e, p->count, fmt_mk_leaf(g, attrs, pa, l),
				     sz >> FMT_LEAF_OA_SHIFT);
		}
		t->nleaf += p->count;
	} else if (IK_UNLIKELY(m->replace)) {
		for (k = 0; k < p->count; k++, pa += sz) {
			ik_u64 old = pt_load(&e[k]);

			pt_store(&e[k], fmt_mk_leaf(g, attrs, pa, l));
			if (old && fmt_is_table(g, old, l)) {
				ik_pt_subtree_collect(t->child[idx + k], &m->dead);
				ik_store_relaxed(&t->child[idx + k], NULL);
			}
		}
		ik_atomic_fetch_add(&t->nleaf, p->count, IK_MO_RELAXED);
		pt_run_add(&m->c, l, t, idx, idx + p->count - 1);
	} else {
		pt_store_leaves(g, t, idx, p, attrs);
		if (!(m->c.pt->cfg.quirks & IK_PT_QUIRK_DEFER_LEAF_CLEAN))
			pt_run_add(&m->c, l, t, idx, idx + p->count - 1);
	}
}

/* IK_PT_QUIRK_DEFER_LEAF_CLEAN: clean the leaf runs of the request in tables
 * this request did not create (those were cleaned whole). */
static void pt_map_deferred_cleans(struct pt_map_req *m, ik_u64 iova, const struct ik_seg *segs,
				   ik_size n, ik_u64 pgsize)
{
	const struct ik_pt_geometry *g = m->c.g;
	struct pt_iter it;
	struct pt_piece p;

	pt_iter_init(&it, iova, segs, n, pgsize, m->keep);
	while (pt_piece_next(g, &it, &p)) {
		struct ik_pt_tbl *t = m->c.pt->root;
		unsigned l = pt_top(g);
		ik_u32 idx;

		while (l > p.lvl) {
			t = pt_child(t, pt_index(g, p.iova, l));
			l--;
		}
		if (!t || ik_load_relaxed(&t->stamp) == m->c.stamp)
			continue;
		idx = pt_index(g, p.iova, l);
		pt_run_add(&m->c, l, t, idx, idx + p.count - 1);
	}
}

/* Empty tables replaced by leaves: walk caches may still hold them;
 * invalidate, then free. */
static void pt_map_flush_dead(struct pt_map_req *m, ik_u64 iova, ik_u64 size)
{
	struct ik_pgtable *pt = m->c.pt;

	if (pt->hooks.flush_walk)
		pt->hooks.flush_walk(pt->cfg.cookie, iova, size, pt_esize(m->c.g, 0));
	else if (pt->hooks.flush_all)
		pt->hooks.flush_all(pt->cfg.cookie);
	ik_pt_tbl_put_list(pt, m->dead);
	m->dead = NULL;
}

/*
 * The fast path for the commonest request: one segment that is one piece
 * (leaves of one size in one table, e.g. a 4 KiB or 64 KiB buffer of pages)
 * whose tables all exist and whose entries are all empty.  Then one descent
 * finds the table, the leaves are written, their run cleaned once and
 * iotlb_sync_map called: what the general path does for such a request,
 * without its counting pass, table pool, request stamp (the stamp only
 * marks tables a request creates; this one creates none) or run bookkeeping.
 * The leaf size is the one pt_iter_next() would choose for a single piece:
 * the largest leaf level that the alignment of iova, pa and len allows (len
 * a multiple of it, or the request is not one piece).  Returns false,
 * having changed nothing, for anything else (a table missing, an entry in
 * the way, several pieces: the general path then decides, errors
 * included).  O(levels + count).
 */
IK_ALWAYS_INLINE bool pt_map_fast(struct ik_pgtable *pt, ik_u64 iova, ik_u64 pa, ik_u64 len,
				  ik_u64 pgsize, ik_u64 attrs)
{
	const struct ik_pt_geometry *g = &pt->geom;
	struct ik_pt_tbl *t = pt->root;
	unsigned l = pt_top(g), lvl, sh;
	struct pt_piece p;
	ik_u64 acc = 0, cnt;
	const ik_u64 *ents;
	ik_u32 idx, k, n;

	if (pgsize) {
		lvl = pt_pgsize_level(g, pgsize);
	} else {
		unsigned m = (unsigned)ik_ctz64(iova | pa | len);

		for (lvl = l; lvl > 0; lvl--)
			if ((g->leaf_levels & (1u << lvl)) && pt_shift(g, lvl) <= m)
				break;
	}
	sh = pt_shift(g, lvl);
	cnt = len >> sh;
	idx = pt_index(g, iova, lvl);
	/* One piece: whole leaves, all inside one table. */
	if ((cnt << sh) != len || cnt > (1ull << pt_nbits(g, lvl)) - idx)
		return false;
	for (; l > lvl; l--) {
		ik_u32 i = pt_index(g, iova, l);
		/* Acquire: pairs with C2 in pt_install(), as in every descent. */
		ik_u64 e = pt_load_acq(&t->cpu[i]);

		if (!e || !fmt_is_table(g, e, l))
			return false;
		t = pt_child(t, i);
	}
	/* Relaxed loads, as in pass 1: only this request writes these
	 * entries.  Four at a time, ORed as a tree: the chain of ORs, not the
	 * loads, bounds a one-at-a-time loop. */
	ents = t->cpu + idx;
	n = (ik_u32)cnt;
	for (k = 0; k + 4 <= n; k += 4, ents += 4)
		acc |= (pt_load(&ents[0]) | pt_load(&ents[1])) |
		       (pt_load(&ents[2]) | pt_load(&ents[3]));
	for (; k < n; k++, ents++)
		acc |= pt_load(&ents[0]);
	if (acc)
		return false;
	p.iova = iova;
	p.pa = pa;
	p.lvl = lvl;
	p.count = n;
	pt_store_leaves(g, t, idx, &p, attrs);
	if (!pt->cfg.coherent)
		pt_clean_entries(pt, t, idx, p.count);
	if (pt->hooks.iotlb_sync_map)
		pt->hooks.iotlb_sync_map(pt->cfg.cookie, iova, len);
	return true;
}

/* The general path: pass 1, the pool, pass 2 (see the top of this file). */
static IK_NOINLINE int pt_map_slow(struct ik_pgtable *pt, ik_u64 iova, const struct ik_seg *segs,
				   ik_size n, ik_u64 pgsize, ik_u64 attrs)
{
	const struct ik_pt_geometry *g = &pt->geom;
	struct pt_map_req m;
	struct pt_iter it;
	struct pt_piece p;
	ik_u64 need_upper, need_leaf, total = 0;
	ik_size i;
	int ret;

	m.attrs = attrs;
	m.replace = false;
	m.keep = NULL;
	m.dead = NULL;
	for (;;) {
		ret = pt_map_prepare(pt, iova, segs, n, pgsize, m.keep, &need_upper, &need_leaf,
				     &m.replace);
		if (ret)
			return ret;
		if (!m.replace || m.keep || pt->hooks.flush_walk || pt->hooks.flush_all)
			break;
		/* Nothing could invalidate a walk cache that may still point at
		 * the empty tables: keep them and map into them, with smaller
		 * leaves where they are (pass 1 again, to count the tables). */
		m.replace = false;
		m.keep = pt;
	}
	pt_ctx_init(&m.c, pt);
	if (need_upper || need_leaf) {
		ret = ik_pt_pool_fill(pt, &m.c.pool, need_upper, need_leaf);
		if (ret)
			return ret;
	}
	m.c.stamp = ik_atomic_fetch_add(&pt->seq, 1, IK_MO_RELAXED) + 1;
	m.pend = NULL;
	m.cur_t = NULL;
	pt_iter_init(&it, iova, segs, n, pgsize, m.keep);
	while (pt_piece_next(g, &it, &p))
		pt_map_piece(&m, &p);
	pt_finalize(&m);
	if (m.c.clean && (pt->cfg.quirks & IK_PT_QUIRK_DEFER_LEAF_CLEAN))
		pt_map_deferred_cleans(&m, iova, segs, n, pgsize);
	pt_run_flush_all(&m.c);
	pt_pool_done(&m.c);
	for (i = 0; i < n; i++)
		total += segs[i].len;
	if (m.dead)
		pt_map_flush_dead(&m, iova, total);
	if (pt->hooks.iotlb_sync_map)
		pt->hooks.iotlb_sync_map(pt->cfg.cookie, iova, total);
	return 0;
}

/* The entry point: the attributes once, then the fast path or the general
 * one (out of line, so that the fast path pays none of its frame). */
static int pt_map(struct ik_pgtable *pt, ik_u64 iova, const struct ik_seg *segs, ik_size n,
		  ik_u64 pgsize, unsigned prot)
{
	ik_u64 attrs;
	int ret = fmt_prot_attrs(&pt->geom, prot, &attrs);

	if (ret)
		return ret;
	if (n == 1 && pt_map_fast(pt, iova, segs[0].paddr, segs[0].len, pgsize, attrs))
		return 0;
	return pt_map_slow(pt, iova, segs, n, pgsize, attrs);
}

/* ------------------------------------------------------------ unmap */

struct pt_unmap_req {
	struct pt_ctx c;
	ik_u64 bytes;		/* mapped bytes cleared */
	struct ik_gather done;	/* what needs invalidating: [start, end), granule */
	bool walk;
	struct ik_pt_tbl **freed;	/* the gather's list: unlinked tables go there */
	ik_u32 nfreed;
};

/* [s, e) needs invalidating (granule: its smallest leaf); `bytes` of it
 * were mapped. */
static inline void pt_unmap_note(struct pt_unmap_req *u, ik_u64 s, ik_u64 e, ik_u64 gran,
				 ik_u64 bytes)
{
	ik_gather_add(&u->done, s, e - s, gran);
	u->bytes += bytes;
}

/* What a split makes of the entry [s, s + sz) of a new table of level lvl,
 * around the hole [rs, re): nothing (inside the hole), a leaf (outside it,
 * at a level that holds leaves), or a smaller table (it crosses a boundary
 * of the hole, or no leaf of its size is allowed). */
enum pt_split_kind { PT_SPLIT_HOLE, PT_SPLIT_LEAF, PT_SPLIT_TABLE };

static inline enum pt_split_kind pt_split_kind(const struct ik_pt_geometry *g, unsigned lvl,
					       ik_u64 s, ik_u64 sz, ik_u64 rs, ik_u64 re)
{
	ik_u64 e = s + sz;

	if (s >= rs && e <= re)
		return PT_SPLIT_HOLE;
	if ((e <= rs || s >= re) && (g->leaf_levels & (1u << lvl)))
		return PT_SPLIT_LEAF;
	return PT_SPLIT_TABLE;
}

/* Tables needed to split the leaf spanning [base, base + span(lvl + 1)) at
 * level lvl + 1 around the hole [rs, re). */
static void pt_split_count(const struct ik_pt_geometry *g, unsigned lvl, ik_u64 base, ik_u64 rs,
			   ik_u64 re, ik_u64 *up, ik_u64 *leaf)
{
	ik_u64 sz = pt_esize(g, lvl);
	ik_u32 j, n = 1u << g->bits;

	if (lvl)
		(*up)++;
	else
		(*leaf)++;
	for (j = 0; j < n; j++) {
		ik_u64 s = base + (ik_u64)j * sz;

		if (pt_split_kind(g, lvl, s, sz, rs, re) == PT_SPLIT_TABLE)
			pt_split_count(g, lvl - 1, s, rs, re, up, leaf);
	}
}

/* Pass 1 of unmap: tables needed by splits.  Only the first and last entry
 * of each table in range can be partly covered. */
static void pt_unmap_count(const struct ik_pt_geometry *g, const struct ik_pt_tbl *t,
			   unsigned l, ik_u64 start, ik_u64 end, ik_u64 *up, ik_u64 *leaf)
{
	struct pt_span s;
	unsigned k;

	pt_span_init(&s, g, l, start, end);
	for (k = 0; k < 2; k++) {
		ik_u64 e;

		if (k) {
			if (s.last == s.idx)
				break;
			pt_span_last(&s);
		}
		if (s.whole)
			continue;
		e = pt_load_acq(&t->cpu[s.idx]);
		if (!e)
			continue;
		if (fmt_is_table(g, e, l))
			pt_unmap_count(g, pt_child(t, s.idx), l - 1, s.rs, s.re, up, leaf);
		else
			pt_split_count(g, l - 1, s.es, s.rs, s.re, up, leaf);
	}
}

/* Build the private table of level lvl replacing a leaf of level lvl + 1 at
 * [base, ...) -> oa with `attrs`, without the hole [rs, re). */
static struct ik_pt_tbl *pt_split_build(struct pt_unmap_req *u, unsigned lvl, ik_u64 base,
					ik_u64 oa, ik_u64 attrs, ik_u64 rs, ik_u64 re)
{
	const struct ik_pt_geometry *g = u->c.g;
	struct ik_pt_tbl *n = pt_newtbl(&u->c, lvl);
	ik_u64 sz = pt_esize(g, lvl);
	ik_u32 j;

	if (!n)
		return NULL;
	for (j = 0; j < n->nent; j++) {
		ik_u64 s = base + (ik_u64)j * sz;
		struct ik_pt_tbl *c;

		switch (pt_split_kind(g, lvl, s, sz, rs, re)) {
		case PT_SPLIT_HOLE:
			break;
		case PT_SPLIT_LEAF:
			n->cpu[j] = fmt_mk_leaf(g, attrs, oa + (s - base), lvl);
			n->nleaf++;
			break;
		case PT_SPLIT_TABLE:
			c = pt_split_build(u, lvl - 1, s, oa + (s - base), attrs, rs, re);
			if (!c)
				return NULL;
			n->cpu[j] = fmt_mk_table(g, c->iommu, lvl);
			n->child[j] = c;
			break;
		}
	}
	return n;
}

static void pt_unmap_tbl(struct pt_unmap_req *u, struct ik_pt_tbl *t, unsigned l, ik_u64 start,
			 ik_u64 end);

/* Split the leaf e at entry idx of t (level l, spanning [es, ...)) so that
 * the hole [rs, re) can be cleared. */
static void pt_split(struct pt_unmap_req *u, struct ik_pt_tbl *t, ik_u32 idx, unsigned l, ik_u64 e,
		     ik_u64 es, ik_u64 rs, ik_u64 re)
{
	const struct ik_pt_geometry *g = u->c.g;
	struct ik_pt_tbl *n, *cur = NULL;
	ik_u64 attrs = fmt_leaf_attrs(g, e, l), oa = fmt_leaf_addr(g, e, l);

	u->c.priv = NULL;
	n = pt_split_build(u, l - 1, es, oa, attrs, rs, re);
	if (!n) {
		/* Pool exhausted: only when racing with an overlapping
		 * request (undefined result, but nothing leaks). */
		pt_priv_giveback(&u->c);
		return;
	}
	pt_priv_clean(&u->c);
	/* C1 then C2, as in pt_install(). */
	if (ik_atomic_cas(&t->child[idx], &cur, n, IK_MO_RELAXED, IK_MO_RELAXED)) {
		u->c.priv = NULL;
		ik_atomic_store(&t->cpu[idx], fmt_mk_table(g, n->iommu, l), IK_MO_RELEASE);
		ik_atomic_fetch_sub(&t->nleaf, 1, IK_MO_RELAXED);
		pt_run_add(&u->c, l, t, idx, idx);
		ik_atomic_fetch_add(&u->c.pt->st_splits, 1, IK_MO_RELAXED);
		u->walk = true;
		pt_unmap_note(u, rs, re, pt_esize(g, 0), re - rs);
		return;
	}
	/* Another unmap split the same block first (acquire pairs with its
	 * C2): unmap our part from its table. */
	ik_atomic_fetch_add(&u->c.pt->st_cas_lost, 1, IK_MO_RELAXED);
	while (!fmt_is_table(g, pt_load_acq(&t->cpu[idx]), l))
		ik_cpu_relax();
	pt_priv_giveback(&u->c);
	pt_unmap_tbl(u, cur, l - 1, rs, re);
}

/* Queue a whole unlinked subtree; returns the bytes it mapped. */
static ik_u64 pt_queue_subtree(struct pt_unmap_req *u, struct ik_pt_tbl *t)
{
	const struct ik_pt_geometry *g = u->c.g;
	ik_u32 i, n = ik_pt_subtree_collect(t, u->freed);
	ik_u64 bytes = 0;

	for (i = 0, t = *u->freed; i < n; i++, t = t->next)
		bytes += (ik_u64)ik_load_relaxed(&t->nleaf) << pt_shift(g, t->level);
	u->nfreed += n;
	return bytes;
}

/* Clear entries from p on, four at a time, while all four are mapped (the
 * hot loop of page unmaps: no bookkeeping inside it); returns where it
 * stopped: pe, fewer than four entries before it, or a group with an empty
 * entry. */
IK_ALWAYS_INLINE ik_u64 *pt_clear4(ik_u64 *p, ik_u64 *pe)
{
	while (pe - p >= 4 && pt_load(&p[0]) && pt_load(&p[1]) && pt_load(&p[2]) &&
	       pt_load(&p[3])) {
		pt_store(&p[0], 0);
		pt_store(&p[1], 0);
		pt_store(&p[2], 0);
		pt_store(&p[3], 0);
		p += 4;
	}
	return p;
}

/* Level 0: every entry in range is whole and a leaf or empty; the hot loop
 * of page unmaps. */
static IK_NOINLINE void pt_unmap_leaves(struct pt_unmap_req *u, struct ik_pt_tbl *t, ik_u64 start,
					ik_u64 end)
{
	const struct ik_pt_geometry *g = u->c.g;
	unsigned sh = g->lg2_granule;
	ik_u32 idx = pt_index(g, start, 0), last = pt_index(g, end - 1, 0);
	ik_u32 run_lo = 0, run_n = 0, cleared = 0, lo = 0, hi = 0;
	ik_u64 *e = t->cpu;

	for (; idx <= last; idx++) {
		/* Fast path: four mapped entries at once. */
		ik_u32 n = (ik_u32)(pt_clear4(e + idx, e + last + 1) - (e + idx));

		if (n) {
			if (!cleared)
				lo = idx;
			if (!run_n)
				run_lo = idx;
			cleared += n;
			run_n += n;
			idx += n;
			hi = idx - 1;
		}
		if (idx > last)
			break;
		if (!pt_load(&e[idx])) {
			if (run_n) {
				pt_run_add(&u->c, 0, t, run_lo, run_lo + run_n - 1);
				run_n = 0;
			}
			continue;
		}
		pt_store(&e[idx], 0);
		if (!cleared)
			lo = idx;
		hi = idx;
		cleared++;
		if (!run_n)
			run_lo = idx;
		run_n++;
	}
	if (run_n)
		pt_run_add(&u->c, 0, t, run_lo, run_lo + run_n - 1);
	if (cleared) {
		/* The table's base: level 0 may be the root, whose index can
		 * span more bits than a level's (concatenated stage-2 roots). */
		ik_u64 base = start & ~((1ull << (sh + pt_nbits(g, 0))) - 1);

		ik_atomic_fetch_sub(&t->nleaf, cleared, IK_MO_RELAXED);
		pt_unmap_note(u, base + ((ik_u64)lo << sh), base + ((ik_u64)(hi + 1) << sh), 1ull << sh,
			      (ik_u64)cleared << sh);
	}
}

static void pt_unmap_tbl(struct pt_unmap_req *u, struct ik_pt_tbl *t, unsigned l, ik_u64 start,
			 ik_u64 end)
{
	const struct ik_pt_geometry *g = u->c.g;
	struct pt_span s;
	ik_u32 cleared = 0, run_lo = 0, run_n = 0;

	if (l == 0) {
		pt_unmap_leaves(u, t, start, end);
		return;
	}
	pt_for_each_span(s, g, l, start, end) {
		ik_u64 e = pt_load_acq(&t->cpu[s.idx]);

		if (!e)
			continue;
		if (fmt_is_table(g, e, l)) {
			struct ik_pt_tbl *c = pt_child(t, s.idx);

			if (!s.whole) {
				pt_unmap_tbl(u, c, l - 1, s.rs, s.re);
				continue;
			}
			/* Unlink: one entry, the leaves below stay untouched
			 * until the gather is synced. */
			pt_store(&t->cpu[s.idx], 0);
			ik_store_relaxed(&t->child[s.idx], NULL);
			u->walk = true;
			pt_unmap_note(u, s.es, s.es + s.esz, pt_esize(g, 0), pt_queue_subtree(u, c));
		} else if (s.whole) {
			pt_store(&t->cpu[s.idx], 0);
			cleared++;
			pt_unmap_note(u, s.es, s.es + s.esz, s.esz, s.esz);
		} else {
			pt_split(u, t, s.idx, l, e, s.es, s.rs, s.re);
			continue;
		}
		/* a cleared entry: extend the local run */
		if (run_n && run_lo + run_n == s.idx) {
			run_n++;
		} else {
			if (run_n)
				pt_run_add(&u->c, l, t, run_lo, run_lo + run_n - 1);
			run_lo = s.idx;
			run_n = 1;
		}
	}
	if (run_n)
		pt_run_add(&u->c, l, t, run_lo, run_lo + run_n - 1);
	if (cleared)
		ik_atomic_fetch_sub(&t->nleaf, cleared, IK_MO_RELAXED);
}

/*
 * Clear the mapped entries idx..end-1 of level-0 table t (the hot loop of
 * page unmaps, as pt_unmap_leaves(): four mapped entries at once), cleaning
 * each run of cleared entries but the last, which is left in *run_lo,
 * *run_n for the caller.  Returns how many were cleared, the first and the
 * last in *lo and *hi.
 */
IK_ALWAYS_INLINE ik_u32 pt_fast_leaves(struct ik_pgtable *pt, struct ik_pt_tbl *t, ik_u32 idx,
				       ik_u32 end, ik_u32 *lo, ik_u32 *hi, ik_u32 *run_lo,
				       ik_u32 *run_n)
{
	ik_u64 *e = t->cpu;
	ik_u32 rlo = 0, rn = 0, cleared = 0;

	for (; idx < end; idx++) {
		ik_u32 n = (ik_u32)(pt_clear4(e + idx, e + end) - (e + idx));

		if (n) {
			if (!cleared)
				*lo = idx;
			if (!rn)
				rlo = idx;
			cleared += n;
			rn += n;
			idx += n;
			*hi = idx - 1;
		}
		if (idx >= end)
			break;
		if (!pt_load(&e[idx])) {
			if (rn && !pt->cfg.coherent)
				pt_clean_entries(pt, t, rlo, rn);
			rn = 0;
			continue;
		}
		pt_store(&e[idx], 0);
		if (!cleared)
			*lo = idx;
		*hi = idx;
		cleared++;
		if (!rn)
			rlo = idx;
		rn++;
	}
	*run_lo = rlo;
	*run_n = rn;
	return cleared;
}

/* Pages of one level-0 table, many of them: the general path's leaf loop
 * (pt_unmap_leaves(), a leaf function whose loop keeps its variables in
 * registers: measured faster per entry than the loop inlined into
 * pt_unmap_fast()), with the request context it needs.  Same cleans and
 * gather as the inline loop. */
static IK_NOINLINE ik_s64 pt_unmap_many_leaves(struct ik_pgtable *pt, struct ik_pt_tbl *t,
					       ik_u64 iova, ik_u64 size, struct ik_gather *gather)
{
	struct pt_unmap_req u;

	pt_ctx_init(&u.c, pt);
	u.bytes = 0;
	ik_gather_init(&u.done);
	u.walk = false;
	u.freed = &gather->tables;
	u.nfreed = 0;
	pt_unmap_leaves(&u, t, iova, iova + size);
	pt_run_flush_all(&u.c);
	pt_gather_range(pt, gather, &u.done);
	return (ik_s64)u.bytes;
}

/*
 * The one-table fast path: when [iova, iova + size) is a run of whole
 * entries of one table (pages inside one level-0 table; a block; the entry
 * of a whole last-level table; any aligned run of them) reached through
 * table entries only, nothing in the range is a block to split, so no page
 * is needed and the counting pass has nothing to count: one descent finds
 * the table, and the entries are cleared as pt_unmap_tbl() /
 * pt_unmap_leaves() would clear them (a leaf: cleared; a table: unlinked,
 * its subtree queued on the gather; empty: skipped), with one clean per run
 * of cleared entries, then one range added to the gather.  Not this shape
 * (partly covered entries, a leaf on the way down): false, nothing done.
 * A range inside an empty entry: nothing is mapped there, *ret = 0.
 * O(levels + entries in range + tables unlinked).
 */
IK_ALWAYS_INLINE bool pt_unmap_fast(struct ik_pgtable *pt, ik_u64 iova, ik_u64 size,
				    struct ik_gather *gather, ik_s64 *ret)
{
	const struct ik_pt_geometry *g = &pt->geom;
	struct ik_pt_tbl *t = pt->root;
	unsigned l = pt_top(g), sh = pt_shift(g, l);
	/* The range's alignment: whole entries at a level whose shift is at
	 * most this (iova | size is not 0: size is not). */
	unsigned al = (unsigned)ik_ctz64(iova | size);
	ik_u64 esz, es, first = 0, stop = 0, bytes = 0, last = iova + size - 1;
	ik_u32 idx, end, run_lo = 0, run_n = 0, cleared = 0, nfreed = 0;
	ik_u64 imask = (1ull << pt_nbits(g, l)) - 1;	/* the root's index bits */
	bool any = false, tbl = false;

	for (;;) {
		if (al >= sh)
			break;	/* whole entries (always so at level 0) */
		if ((iova ^ last) >> sh)
			return false;	/* partly covered entries: the general path */
		idx = (ik_u32)((iova >> sh) & imask);
		{
			/* Acquire: pairs with C2 in pt_install(), as in every
			 * descent. */
			ik_u64 e = pt_load_acq(&t->cpu[idx]);

			if (!e) {
				*ret = 0;	/* nothing mapped in the range */
				return true;
			}
			if (!fmt_is_table(g, e, l))
				return false;	/* a block to split */
		}
		t = pt_child(t, idx);
		l--;
		sh -= g->bits;
		imask = (1ull << g->bits) - 1;
	}
	esz = 1ull << sh;
	idx = (ik_u32)((iova >> sh) & imask);
	end = idx + (ik_u32)(size >> sh);
	if (l == 0) {
		ik_u32 lo = 0, hi = 0;

		if (end - idx > 16) {
			*ret = pt_unmap_many_leaves(pt, t, iova, size, gather);
			return true;
		}
		cleared = pt_fast_leaves(pt, t, idx, end, &lo, &hi, &run_lo, &run_n);
		if (cleared) {
			any = true;
			first = iova + ((ik_u64)(lo - idx) << sh);
			stop = iova + ((ik_u64)(hi + 1 - idx) << sh);
			bytes = (ik_u64)cleared << sh;
		}
		idx = end;
	}
	es = iova;
	for (; idx < end; idx++, es += esz) {
		{
			/* Acquire: it may be a table (as pt_unmap_tbl()). */
			ik_u64 e = pt_load_acq(&t->cpu[idx]);

			if (!e) {
				if (run_n && !pt->cfg.coherent)
					pt_clean_entries(pt, t, run_lo, run_n);
				run_n = 0;
				continue;
			}
			if (!any)
				first = es;
			any = true;
			stop = es + esz;
			pt_store(&t->cpu[idx], 0);
			if (fmt_is_table(g, e, l)) {
				/* Unlink: one entry, the leaves below stay
				 * untouched until the gather is synced. */
				struct ik_pt_tbl *c = pt_child(t, idx), *q;
				ik_u32 i, n;

				ik_store_relaxed(&ik_pt_tbl_children(t)[idx], NULL);
				n = ik_pt_subtree_collect(c, &gather->tables);
				for (i = 0, q = gather->tables; i < n; i++, q = q->next)
					bytes += (ik_u64)ik_load_relaxed(&q->nleaf)
						 << pt_shift(g, q->level);
				nfreed += n;
				tbl = true;
			} else {
				cleared++;
				bytes += esz;
			}
		}
		if (!run_n)
			run_lo = idx;
		run_n++;
	}
	/* The count before the last clean: a locked update issued after a
	 * cache clean would wait for its write-back. */
	if (cleared)
		ik_atomic_fetch_sub(&t->nleaf, cleared, IK_MO_RELAXED);
	if (run_n && !pt->cfg.coherent)
		pt_clean_entries(pt, t, run_lo, run_n);
	if (nfreed) {
		gather->pt = pt;
		gather->nr_tables += nfreed;
	}
	if (tbl)
		gather->walk = true;
	if (any) {
		/* [first cleared byte, last cleared byte], with the smallest
		 * leaf size cleared (an unlinked table's: the granule). */
		struct ik_gather done;

		done.start = first;
		done.end = stop;
		done.granule = tbl ? pt_esize(g, 0) : esz;
		pt_gather_range(pt, gather, &done);
	}
	*ret = (ik_s64)bytes;
	return true;
}

/* The general path: splits counted and pooled, then the recursive descent. */
static IK_NOINLINE ik_s64 pt_unmap_slow(struct ik_pgtable *pt, ik_u64 iova, ik_u64 size,
					struct ik_gather *gather)
{
	const struct ik_pt_geometry *g = &pt->geom;
	struct pt_unmap_req u;
	ik_u64 up = 0, leaf = 0;

	pt_unmap_count(g, pt->root, pt_top(g), iova, iova + size, &up, &leaf);
	pt_ctx_init(&u.c, pt);
	if (up || leaf) {
		int ret = ik_pt_pool_fill(pt, &u.c.pool, up, leaf);

		if (ret)
			return ret;
	}
	u.bytes = 0;
	ik_gather_init(&u.done);
	u.walk = false;
	u.freed = &gather->tables;	/* nothing fails from here on */
	u.nfreed = 0;
	pt_unmap_tbl(&u, pt->root, pt_top(g), iova, iova + size);
	pt_run_flush_all(&u.c);
	pt_pool_done(&u.c);
	if (u.nfreed) {
		gather->pt = pt;
		gather->nr_tables += u.nfreed;
	}
	if (u.walk)
		gather->walk = true;
	pt_gather_range(pt, gather, &u.done);
	return (ik_s64)u.bytes;
}

static ik_s64 pt_unmap(struct ik_pgtable *pt, ik_u64 iova, ik_u64 size, struct ik_gather *gather)
{
	ik_s64 ret;

	if (pt_unmap_fast(pt, iova, size, gather, &ret))
		return ret;
	return pt_unmap_slow(pt, iova, size, gather);
}

/* ------------------------------------------------------------ lookups */

static int pt_iova_to_phys(const struct ik_pgtable *pt, ik_u64 iova, ik_u64 *pa, ik_u64 *pgsize)
{
	const struct ik_pt_geometry *g = &pt->geom;
	const struct ik_pt_tbl *t = pt->root;
	unsigned l = pt_top(g);

	for (;;) {
		ik_u32 idx = pt_index(g, iova, l);
		ik_u64 e = pt_load_acq(&t->cpu[idx]);

		if (!e)
			return -ENOENT;
		if (fmt_is_table(g, e, l)) {
			t = pt_child(t, idx);
			l--;
			continue;
		}
		*pa = fmt_leaf_addr(g, e, l) + (iova & (pt_esize(g, l) - 1));
		if (pgsize)
			*pgsize = pt_esize(g, l);
		return 0;
	}
}

static void pt_dump_tbl(const struct ik_pgtable *pt, struct ik_pt_merge *d,
			const struct ik_pt_tbl *t, unsigned l, ik_u64 start, ik_u64 end,
			const struct fmt_walk_state *st)
{
	const struct ik_pt_geometry *g = &pt->geom;
	struct pt_span s;

	pt_for_each_span(s, g, l, start, end) {
		ik_u64 e = pt_load_acq(&t->cpu[s.idx]);

		if (d->ret)
			break;
		if (!e)
			continue;
		if (fmt_is_table(g, e, l)) {
			struct fmt_walk_state st2 = *st;

			(void)fmt_walk_table(g, &st2, e, l);
			pt_dump_tbl(pt, d, pt_child(t, s.idx), l - 1, s.rs, s.re, &st2);
		} else {
			struct ik_pt_walk_result r;
			ik_u64 nv;

			r.attr = 0;
			r.prot = 0;
			r.dirty = false;
			(void)fmt_walk_leaf(g, st, e, l, 0, &r, &nv);
			ik_pt_merge_add(d, s.rs, fmt_leaf_addr(g, e, l) + (s.rs - s.es), s.re - s.rs,
					s.esz, r.prot, r.attr);
		}
	}
}

static int pt_dump(const struct ik_pgtable *pt, ik_u64 iova, ik_u64 size, ik_pt_range_fn fn,
		   void *ctx)
{
	struct ik_pt_merge d;
	struct fmt_walk_state st;

	ik_pt_merge_init(&d, fn, ctx);
	fmt_walk_init(&pt->geom, &st);
	pt_dump_tbl(pt, &d, pt->root, pt_top(&pt->geom), iova, iova + size, &st);
	return ik_pt_merge_end(&d);
}

/* ------------------------------------------------------------ dirty */

#if FMT_HAS_DIRTY
struct pt_dirty_req {
	struct pt_ctx c;
	ik_u64 base;
	ik_u64 *bitmap;
	unsigned lg2_page;
	bool clear;
	ik_s64 count;
	struct ik_gather done;	/* leaves made clean again: to invalidate */
};

static void pt_set_bits(ik_u64 *bm, ik_u64 first, ik_u64 n)
{
	while (n) {
		ik_u64 bit = first & 63, take = 64 - bit;

		if (take > n)
			take = n;
		bm[first >> 6] |= (take == 64 ? IK_U64_MAX : ((1ull << take) - 1)) << bit;
		first += take;
		n -= take;
	}
}

static void pt_dirty_tbl(struct pt_dirty_req *d, struct ik_pt_tbl *t, unsigned l, ik_u64 start,
			 ik_u64 end)
{
	const struct ik_pt_geometry *g = d->c.g;
	struct pt_span s;

	pt_for_each_span(s, g, l, start, end) {
		ik_u64 e = pt_load_acq(&t->cpu[s.idx]);

		if (!e)
			continue;
		if (fmt_is_table(g, e, l)) {
			pt_dirty_tbl(d, pt_child(t, s.idx), l - 1, s.rs, s.re);
			continue;
		}
		if (!fmt_leaf_dirty(g, e, l))
			continue;
		d->count++;
		/* Every page of 2^lg2_page bytes the leaf's in-range part
		 * touches: a leaf smaller than a page still sets its page's bit. */
		pt_set_bits(d->bitmap, (s.rs - d->base) >> d->lg2_page,
			    ((s.re - 1 - d->base) >> d->lg2_page) - ((s.rs - d->base) >> d->lg2_page) + 1);
		if (!d->clear)
			continue;
		/* The IOMMU may update the entry concurrently (access flag,
		 * dirty state): clear with a CAS, retrying on its updates. */
		while (!ik_atomic_cas(&t->cpu[s.idx], &e, fmt_leaf_mkclean(g, e, l), IK_MO_RELAXED,
				      IK_MO_RELAXED)) {
			if (!e || fmt_is_table(g, e, l))
				break;
		}
		pt_run_add(&d->c, l, t, s.idx, s.idx);
		ik_gather_add(&d->done, s.es, s.esz, s.esz);
	}
}

static ik_s64 pt_dirty(struct ik_pgtable *pt, ik_u64 iova, ik_u64 size, unsigned flags,
		       ik_u64 *bitmap, unsigned lg2_page, struct ik_gather *gather)
{
	struct pt_dirty_req d;

	pt_ctx_init(&d.c, pt);
	d.base = iova;
	d.bitmap = bitmap;
	d.lg2_page = lg2_page;
	d.clear = !(flags & IK_DIRTY_NO_CLEAR);
	d.count = 0;
	ik_gather_init(&d.done);
	pt_dirty_tbl(&d, pt->root, pt_top(&pt->geom), iova, iova + size);
	pt_run_flush_all(&d.c);
	if (gather)
		pt_gather_range(pt, gather, &d.done);
	return d.count;
}
#endif

/* ------------------------------------------------------------ walker */

/* Does offset `off` into a leaf whose first byte is at `base` give an output
 * address inside oas?  Overflow-safe: a leaf larger than 2^oas (a Sv39 1G or
 * Sv48 512G leaf, an AMD level-4 page, an LPA2 level-0 block under a small
 * oas) must fault for its part beyond oas, not wrap or slip past. */
static inline bool pt_oa_fits(const struct ik_pt_geometry *g, ik_u64 base, ik_u64 off)
{
	if (g->oas >= 64)
		return off <= ~base;
	return !(base >> g->oas) && off < (1ull << g->oas) - base;
}

/* One pass of a walk: fills *res.  Returns true if the hardware would
 * update the leaf (access flag, dirty state) and mem has cas64: *pte_addr,
 * *old and *nv then say how, and *lvl, *st how to decode the new value. */
static bool pt_walk_once(const struct ik_pt_walker *w, const struct ik_pt_mem *mem, ik_u64 iova,
			 unsigned access, struct ik_pt_walk_result *res, ik_u64 *old, ik_u64 *nv,
			 unsigned *lvl, struct fmt_walk_state *st)
{
	const struct ik_pt_geometry *g = &w->geom;
	ik_u64 table = w->root;
	unsigned l = pt_top(g);

	IK_ENV_MEMSET(res, 0, sizeof(*res));
	res->level = l;
	if (g->ias < 64 && (iova >> g->ias)) {
		res->fault = IK_PT_FAULT_TRANSLATION;
		return false;
	}
	fmt_walk_init(g, st);
	for (;;) {
		ik_u64 addr = table + (ik_u64)pt_index(g, iova, l) * 8u, e, base, off;
		enum ik_pt_fault f;

		res->level = l;
		res->pte_addr = addr;
		if (mem->read64(mem->ctx, addr, &e)) {
			res->fault = IK_PT_FAULT_EXTERNAL;
			return false;
		}
		res->pte = e;
		if (!fmt_is_valid(g, e, l)) {
			res->fault = IK_PT_FAULT_TRANSLATION;
			return false;
		}
		if (l > 0 && fmt_is_table(g, e, l)) {
			f = fmt_walk_table(g, st, e, l);
			if (f) {
				res->fault = f;
				return false;
			}
			table = fmt_table_addr(g, e, l);
			if (g->oas < 64 && (table >> g->oas)) {
				res->fault = IK_PT_FAULT_ADDR_SIZE;
				return false;
			}
#if FMT_HAS_SKIP
			{
				/* A table entry that skips levels: the input bits
				 * of the skipped levels must be zero. */
				unsigned nl = fmt_table_level(g, e, l);
				ik_u64 skipped = (pt_esize(g, l) - 1) & ~(pt_esize(g, nl + 1) - 1);

				if (iova & skipped) {
					res->fault = IK_PT_FAULT_TRANSLATION;
					return false;
				}
				l = nl;
			}
#else
			l--;
#endif
			continue;
		}
#if FMT_HAS_LEAF_SIZE
		res->pgsize = fmt_leaf_size(g, e, l);
#else
		res->pgsize = pt_esize(g, l);
#endif
		base = fmt_leaf_addr(g, e, l);
		off = iova & (res->pgsize - 1);
		/* The final output address, not only the leaf's base. */
		if (!pt_oa_fits(g, base, off)) {
			res->fault = IK_PT_FAULT_ADDR_SIZE;
			return false;
		}
		res->oa = base + off;
		res->fault = fmt_walk_leaf(g, st, e, l, access, res, nv);
		*old = e;
		*lvl = l;
		return *nv != e && mem->cas64;
	}
}

static int pt_walk(const struct ik_pt_walker *w, const struct ik_pt_mem *mem, ik_u64 iova,
		   unsigned access, struct ik_pt_walk_result *res)
{
	unsigned lost;

	/* Bounded: a cas that keeps losing (another agent rewriting the entry
	 * the walker updates) ends in a fault, not in an endless retry. */
	for (lost = 0;; lost++) {
		struct fmt_walk_state st;
		struct ik_pt_walk_result r2;
		ik_u64 e, nv, nv2;
		unsigned l;
		int r;

		if (!pt_walk_once(w, mem, iova, access, res, &e, &nv, &l, &st))
			return 0;
		/* The hardware's own update (access flag, dirty state); walk
		 * again if the entry changed under us. */
		r = mem->cas64(mem->ctx, res->pte_addr, e, nv);
		if (r == -EAGAIN && lost < IK_PT_WALK_CAS_RETRIES)
			continue;
		if (r) {
			/* Lost every time, or the update itself failed: the
			 * access cannot be recorded, so it must not proceed. */
			res->fault = IK_PT_FAULT_EXTERNAL;
			return 0;
		}
		r2 = *res;
		(void)fmt_walk_leaf(&w->geom, &st, nv, l, 0, &r2, &nv2);
		res->pte = nv;
		res->dirty = r2.dirty;
		return 0;
	}
}

/*
 * The walker's dump: a depth-first traversal of the tables in memory, each
 * entry read once per path that reaches it, an entry that faults skipped
 * with its whole span.  A table reached through several entries (guest
 * tables may share, even point back to, a page) is read again each time,
 * unless it was found empty before: the empty tables of each level are
 * remembered (the last PT_WDUMP_MEMO of them), so that a page that points
 * to itself costs one pass per level instead of one per path.
 */
#define PT_WDUMP_MEMO 8

struct pt_wdump {
	const struct ik_pt_geometry *g;
	const struct ik_pt_mem *mem;
	struct ik_pt_merge m;
	ik_u64 empty[IK_PT_MAX_LEVELS][PT_WDUMP_MEMO];	/* table addresses */
	unsigned nempty[IK_PT_MAX_LEVELS];
	unsigned next[IK_PT_MAX_LEVELS];	/* round-robin replacement */
};

static bool pt_wdump_known_empty(const struct pt_wdump *d, ik_u64 table, unsigned l)
{
	unsigned i;

	for (i = 0; i < d->nempty[l]; i++)
		if (d->empty[l][i] == table)
			return true;
	return false;
}

static void pt_wdump_set_empty(struct pt_wdump *d, ik_u64 table, unsigned l)
{
	if (d->nempty[l] < PT_WDUMP_MEMO) {
		d->empty[l][d->nempty[l]++] = table;
		return;
	}
	d->empty[l][d->next[l]] = table;
	d->next[l] = (d->next[l] + 1) % PT_WDUMP_MEMO;
}

/* Dump [start, end) of the table at `table`, level l, whose first entry maps
 * `base`; *found is set if anything was reported.  0, or the dump's result
 * (-EIO, fn's non-zero return). */
static int pt_wdump_tbl(struct pt_wdump *d, ik_u64 table, unsigned l, ik_u64 start, ik_u64 end,
			const struct fmt_walk_state *st, bool *found)
{
	const struct ik_pt_geometry *g = d->g;
	struct pt_span s;

	pt_for_each_span(s, g, l, start, end) {
		ik_u64 e, base, off, pgsize, len, nv;
		struct ik_pt_walk_result r;
		enum ik_pt_fault f;

		if (d->mem->read64(d->mem->ctx, table + (ik_u64)s.idx * 8u, &e))
			return -EIO;
		if (!fmt_is_valid(g, e, l))
			continue;
		if (l > 0 && fmt_is_table(g, e, l)) {
			struct fmt_walk_state st2 = *st;
			ik_u64 next = fmt_table_addr(g, e, l), cend = s.re;
			unsigned nl = l - 1;
			bool cfound = false;
			int ret;

			if (fmt_walk_table(g, &st2, e, l) || (g->oas < 64 && (next >> g->oas)))
				continue;
#if FMT_HAS_SKIP
			/* Only the part of the entry's span where the skipped
			 * levels' input bits are zero translates. */
			nl = fmt_table_level(g, e, l);
			if (s.rs - s.es >= pt_esize(g, nl + 1))
				continue;
			if (cend - s.es > pt_esize(g, nl + 1))
				cend = s.es + pt_esize(g, nl + 1);
#endif
			/* A table found empty before, wholly inside the range. */
			if (s.rs == s.es && cend == s.es + pt_esize(g, nl + 1) &&
			    pt_wdump_known_empty(d, next, nl))
				continue;
			ret = pt_wdump_tbl(d, next, nl, s.rs, cend, &st2, &cfound);
			if (ret)
				return ret;
			if (cfound)
				*found = true;
			else if (s.rs == s.es && cend == s.es + pt_esize(g, nl + 1))
				pt_wdump_set_empty(d, next, nl);
			continue;
		}
#if FMT_HAS_LEAF_SIZE
		pgsize = fmt_leaf_size(g, e, l);
#else
		pgsize = pt_esize(g, l);
#endif
		r.attr = 0;
		r.prot = 0;
		r.dirty = false;
		f = fmt_walk_leaf(g, st, e, l, 0, &r, &nv);
		if (f != IK_PT_FAULT_NONE && f != IK_PT_FAULT_ACCESS_FLAG)
			continue;
		base = fmt_leaf_addr(g, e, l);
		off = s.rs & (pgsize - 1);
		if (!pt_oa_fits(g, base, off))
			continue;	/* all of it beyond oas */
		len = s.re - s.rs;
		/* Only the part below 2^oas translates: base + off + len - 1
		 * must fit too. */
		if (g->oas < 64 && !pt_oa_fits(g, base + off, len - 1))
			len = (1ull << g->oas) - (base + off);
		*found = true;
		if (ik_pt_merge_add(&d->m, s.rs, base + off, len, pgsize, r.prot, r.attr))
			return d->m.ret;
	}
	return 0;
}

static int pt_wdump(const struct ik_pt_walker *w, const struct ik_pt_mem *mem, ik_u64 iova,
		    ik_u64 size, ik_pt_range_fn fn, void *ctx)
{
	struct pt_wdump d;
	struct fmt_walk_state st;
	bool found = false;
	int ret;

	d.g = &w->geom;
	d.mem = mem;
	IK_ENV_MEMSET(d.nempty, 0, sizeof(d.nempty));
	IK_ENV_MEMSET(d.next, 0, sizeof(d.next));
	ik_pt_merge_init(&d.m, fn, ctx);
	fmt_walk_init(d.g, &st);
	ret = pt_wdump_tbl(&d, w->root, pt_top(d.g), iova, iova + size, &st, &found);
	if (ret)
		return ret;
	return ik_pt_merge_end(&d.m);
}

/* ------------------------------------------------------------ ops */

static const struct ik_pt_fmt_info pt_info = {
	IKPT_FMT,
	IKPT_NAME,
	FMT_HAS_DIRTY ? IK_PT_CAP_DIRTY : 0u,
	FMT_QUIRKS,
	FMT_FLAGS,
	FMT_IAS_WIDTHS,
	FMT_OAS_WIDTHS,
	FMT_GRANULES,
	FMT_HW_LEVELS_UP,
};

#if FMT_HAS_DIRTY
#define PT_OPS_DIRTY pt_dirty
#else
#define PT_OPS_DIRTY NULL
#endif
/*
 * The initializer of this instantiation's struct ik_pt_ops.  The format's
 * source file defines the object under its full name, so that a plain grep
 * or ctags finds it (and src/pgtable/pgtable_formats.h names it once more):
 *
 *     const struct ik_pt_ops ik_pt_ops_lpae_s1 = IKPT_OPS;
 */
#define IKPT_OPS                                                                 \
	{                                                                        \
		&pt_info, fmt_geometry, pt_map, pt_unmap, pt_iova_to_phys,       \
		PT_OPS_DIRTY, pt_walk, pt_dump, pt_wdump,                        \
	}
