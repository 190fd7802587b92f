/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/pgtable_tmpl.h - the page-table engine, instantiated once per format.
 * Not API.  A format's source file defines IKPT_FMT, IKPT_OPS, IKPT_NAME,
 * includes its fmt_*.h (the contract in src/pgtable_internal.h) and then this
 * file, which defines `const struct _ik_pt_ops IKPT_OPS`.  Include once per
 * translation unit.
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
 *   counted and pooled before anything is written.
 */
#ifndef IKPT_FMT
#error "define IKPT_FMT, IKPT_OPS and IKPT_NAME, include the format header, then pgtable_tmpl.h"
#endif
#ifndef IKPT_HAS_DIRTY
#define IKPT_HAS_DIRTY 0
#endif

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

static inline struct _ik_pt_tbl *pt_child(const struct _ik_pt_tbl *t, ik_u32 idx)
{
	/* Ordered by the acquire load of the entry (C1 before C2). */
	return ik_atomic_load(&t->child[idx], IK_MO_RELAXED);
}

/* ------------------------------------------------------------ clean runs */

struct pt_run {
	struct _ik_pt_tbl *t;
	ik_u32 lo, hi;
};

struct pt_ctx {
	struct ik_pgtable *pt;
	const struct ik_pt_geometry *g;
	bool clean;	/* non-coherent: cleans needed */
	struct pt_run run[IK_PT_MAX_LEVELS];
};

static void pt_ctx_init(struct pt_ctx *c, struct ik_pgtable *pt)
{
	unsigned i;

	c->pt = pt;
	c->g = &pt->geom;
	c->clean = !pt->cfg.coherent;
	for (i = 0; i < IK_PT_MAX_LEVELS; i++)
		c->run[i].t = NULL;
}

static void pt_clean_entries(struct ik_pgtable *pt, struct _ik_pt_tbl *t, ik_u32 lo, ik_u32 n)
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

static inline void pt_run_add(struct pt_ctx *c, unsigned lvl, struct _ik_pt_tbl *t, ik_u32 lo,
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

/* ------------------------------------------------------------ pieces */

struct pt_iter {
	const struct ik_seg *segs;
	ik_size n, i;
	ik_u64 iova, pa, rem;
	ik_u64 pgsize;	/* forced page size, or 0 */
};

struct pt_piece {
	ik_u64 iova, pa;
	unsigned lvl;
	ik_u32 count;
};

static void pt_iter_init(struct pt_iter *it, ik_u64 iova, const struct ik_seg *segs, ik_size n,
			 ik_u64 pgsize)
{
	it->segs = segs;
	it->n = n;
	it->i = 0;
	it->iova = iova;
	it->pa = 0;
	it->rem = 0;
	it->pgsize = pgsize;
}

static inline bool pt_iter_next(const struct ik_pt_geometry *g, struct pt_iter *it,
				struct pt_piece *p)
{
	unsigned lvl;
	ik_u64 cnt, left;

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
		lvl = ((unsigned)__builtin_ctzll(it->pgsize) - g->lg2_granule) / g->bits;
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
	cnt = it->rem >> pt_shift(g, lvl);
	left = (1ull << pt_nbits(g, lvl)) - pt_index(g, it->iova, lvl);
	if (cnt > left)
		cnt = left;
	p->iova = it->iova;
	p->pa = it->pa;
	p->lvl = lvl;
	p->count = (ik_u32)cnt;
	it->iova += cnt << pt_shift(g, lvl);
	it->pa += cnt << pt_shift(g, lvl);
	it->rem -= cnt << pt_shift(g, lvl);
	return true;
}

/* ------------------------------------------------------------ map */

struct pt_map {
	struct pt_ctx c;
	ik_u64 attrs;
	ik_u64 stamp;
	struct _ik_pt_pool pool;
	/* the private subtree being filled, and where it will be installed */
	struct _ik_pt_tbl *pend;
	struct _ik_pt_tbl *pend_parent;
	ik_u32 pend_idx;
	ik_u64 pend_base, pend_last;
	struct _ik_pt_tbl *priv;	/* every private table, via ->next */
	bool replace;			/* pass 1 found empty tables to replace */
	struct _ik_pt_tbl *cur_t;	/* cursor: last visible table written */
	ik_u64 cur_base, cur_mask;
	struct _ik_pt_tbl *dead;	/* the replaced tables, via ->next */
};

static void pt_collect_dead(struct pt_map *m, struct _ik_pt_tbl *t)
{
	ik_u32 i;

	if (t->level) {
		for (i = 0; i < t->nent; i++)
			if (t->child[i])
				pt_collect_dead(m, t->child[i]);
	}
	t->next = m->dead;
	m->dead = t;
}

/* Does the subtree below t hold no leaf at all? */
static bool pt_subtree_empty(const struct ik_pt_geometry *g, const struct _ik_pt_tbl *t)
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
			  ik_size n, ik_u64 pgsize, ik_u64 *need_upper, ik_u64 *need_leaf,
			  bool *replace)
{
	const struct ik_pt_geometry *g = &pt->geom;
	ik_u64 last_key[IK_PT_MAX_LEVELS];
	struct pt_iter it;
	struct pt_piece p;
	unsigned i;
	const struct _ik_pt_tbl *cur_t = NULL;
	ik_u64 cur_base = 0, cur_mask = 0;

	for (i = 0; i < IK_PT_MAX_LEVELS; i++)
		last_key[i] = IK_U64_MAX;
	*need_upper = *need_leaf = 0;
	pt_iter_init(&it, iova, segs, n, pgsize);
	while (pt_iter_next(g, &it, &p)) {
		const struct _ik_pt_tbl *t = pt->root;
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
		/* Plain loads (vectorisable): only this request writes these
		 * entries (disjoint ranges), and reads do not race reads. */
		for (k = 0; k < p.count; k++)
			acc |= t->cpu[idx + k];
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

static struct _ik_pt_tbl *pt_newtbl(struct pt_map *m, unsigned lvl)
{
	struct ik_pgtable *pt = m->c.pt;
	struct _ik_pt_tbl **list = lvl ? &m->pool.upper : &m->pool.leaf;
	struct _ik_pt_tbl *t = *list;

	if (t)
		*list = t->next;
	else
		t = _ik_pt_tbl_get(pt, lvl, NULL);	/* only when racing with an overlap */
	if (!t)
		return NULL;
	t->level = lvl;
	t->nleaf = 0;
	ik_store_relaxed(&t->stamp, m->stamp);
	IK_ENV_MEMSET(t->cpu, 0, (ik_size)t->nent * 8u);
	t->next = m->priv;
	m->priv = t;
	return t;
}

static void pt_install(struct pt_map *m, struct _ik_pt_tbl *parent, ik_u32 idx, unsigned lvl,
		       struct _ik_pt_tbl *n);

/* Move the entries of private table n into the visible table w (same level,
 * same span; the entries are disjoint by contract), then give n back. */
static void pt_merge(struct pt_map *m, struct _ik_pt_tbl *w, struct _ik_pt_tbl *n)
{
	const struct ik_pt_geometry *g = m->c.g;
	unsigned lvl = n->level;
	ik_u32 i, leaves = 0;

	for (i = 0; i < n->nent; i++) {
		ik_u64 e = n->cpu[i];

		if (!e)
			continue;
		if (fmt_is_table(g, e, lvl)) {
			struct _ik_pt_tbl *c = n->child[i];

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
	n->next = lvl ? m->pool.upper : m->pool.leaf;
	if (lvl)
		m->pool.upper = n;
	else
		m->pool.leaf = n;
}

/* Make n (already cleaned) the child of entry idx (level lvl) of parent. */
static void pt_install(struct pt_map *m, struct _ik_pt_tbl *parent, ik_u32 idx, unsigned lvl,
		       struct _ik_pt_tbl *n)
{
	const struct ik_pt_geometry *g = m->c.g;
	struct _ik_pt_tbl *cur = NULL;
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
static void pt_finalize(struct pt_map *m)
{
	struct _ik_pt_tbl *t;

	if (!m->pend)
		return;
	if (m->c.clean) {
		for (t = m->priv; t; t = t->next)
			pt_clean_entries(m->c.pt, t, 0, t->nent);
	}
	m->priv = NULL;
	pt_install(m, m->pend_parent, m->pend_idx, m->pend->level + 1, m->pend);
	m->pend = NULL;
}

static void pt_map_piece(struct pt_map *m, const struct pt_piece *p)
{
	const struct ik_pt_geometry *g = m->c.g;
	struct _ik_pt_tbl *t;
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
		struct _ik_pt_tbl *n;

		idx = pt_index(g, p->iova, l);
		if (!priv) {
			ik_u64 v = pt_load_acq(&t->cpu[idx]);

			if (v && fmt_is_table(g, v, l)) {
				t = pt_child(t, idx);
				l--;
				continue;
			}
			n = pt_newtbl(m, l - 1);
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
			n = pt_newtbl(m, l - 1);
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
		for (k = 0; k < p->count; k++, pa += sz)
			e[k] = fmt_mk_leaf(g, attrs, pa, l);
		t->nleaf += p->count;
	} else if (IK_UNLIKELY(m->replace)) {
		for (k = 0; k < p->count; k++, pa += sz) {
			ik_u64 old = pt_load(&e[k]);

			pt_store(&e[k], fmt_mk_leaf(g, attrs, pa, l));
			if (old && fmt_is_table(g, old, l)) {
				pt_collect_dead(m, t->child[idx + k]);
				ik_store_relaxed(&t->child[idx + k], NULL);
			}
		}
		ik_atomic_fetch_add(&t->nleaf, p->count, IK_MO_RELAXED);
		pt_run_add(&m->c, l, t, idx, idx + p->count - 1);
	} else {
		/* fmt_mk_leaf is linear in the output address (contract). */
		ik_u64 v = fmt_mk_leaf(g, attrs, pa, l);

		for (k = 0; k + 4 <= p->count; k += 4, v += 4 * sz) {
			pt_store(&e[k], v);
			pt_store(&e[k + 1], v + sz);
			pt_store(&e[k + 2], v + 2 * sz);
			pt_store(&e[k + 3], v + 3 * sz);
		}
		for (; k < p->count; k++, v += sz)
			pt_store(&e[k], v);
		ik_atomic_fetch_add(&t->nleaf, p->count, IK_MO_RELAXED);
		if (!(m->c.pt->cfg.quirks & IK_PT_QUIRK_DEFER_LEAF_CLEAN))
			pt_run_add(&m->c, l, t, idx, idx + p->count - 1);
	}
}

/* IK_PT_QUIRK_DEFER_LEAF_CLEAN: clean the leaf runs of the request in tables
 * this request did not create (those were cleaned whole). */
static void pt_map_deferred_cleans(struct pt_map *m, ik_u64 iova, const struct ik_seg *segs,
				   ik_size n, ik_u64 pgsize)
{
	const struct ik_pt_geometry *g = m->c.g;
	struct pt_iter it;
	struct pt_piece p;

	pt_iter_init(&it, iova, segs, n, pgsize);
	while (pt_iter_next(g, &it, &p)) {
		struct _ik_pt_tbl *t = m->c.pt->root;
		unsigned l = pt_top(g);
		ik_u32 idx;

		while (l > p.lvl) {
			t = pt_child(t, pt_index(g, p.iova, l));
			l--;
		}
		if (!t || ik_load_relaxed(&t->stamp) == m->stamp)
			continue;
		idx = pt_index(g, p.iova, l);
		pt_run_add(&m->c, l, t, idx, idx + p.count - 1);
	}
}

static int pt_map(struct ik_pgtable *pt, ik_u64 iova, const struct ik_seg *segs, ik_size n,
		  ik_u64 pgsize, unsigned prot)
{
	const struct ik_pt_geometry *g = &pt->geom;
	struct pt_map m;
	struct pt_iter it;
	struct pt_piece p;
	ik_u64 need_upper, need_leaf, total = 0;
	ik_size i;
	int ret;

	ret = fmt_prot_attrs(g, prot, &m.attrs);
	if (ret)
		return ret;
	m.replace = false;
	m.dead = NULL;
	ret = pt_map_prepare(pt, iova, segs, n, pgsize, &need_upper, &need_leaf, &m.replace);
	if (ret)
		return ret;
	m.pool.upper = m.pool.leaf = NULL;
	if (need_upper || need_leaf) {
		ret = _ik_pt_pool_fill(pt, &m.pool, need_upper, need_leaf);
		if (ret)
			return ret;
	}
	pt_ctx_init(&m.c, pt);
	m.stamp = ik_atomic_fetch_add(&pt->seq, 1, IK_MO_RELAXED) + 1;
	m.pend = NULL;
	m.cur_t = NULL;
	m.priv = NULL;
	pt_iter_init(&it, iova, segs, n, pgsize);
	while (pt_iter_next(g, &it, &p))
		pt_map_piece(&m, &p);
	pt_finalize(&m);
	if (m.c.clean && (pt->cfg.quirks & IK_PT_QUIRK_DEFER_LEAF_CLEAN))
		pt_map_deferred_cleans(&m, iova, segs, n, pgsize);
	pt_run_flush_all(&m.c);
	_ik_pt_pool_drain(pt, &m.pool);
	for (i = 0; i < n; i++)
		total += segs[i].len;
	if (m.dead) {
		/* Empty tables replaced by leaves: walk caches may still hold
		 * them; invalidate, then free. */
		if (pt->hooks.flush_walk)
			pt->hooks.flush_walk(pt->cfg.cookie, iova, total, pt_esize(g, 0));
		else if (pt->hooks.flush_all)
			pt->hooks.flush_all(pt->cfg.cookie);
		while (m.dead) {
			struct _ik_pt_tbl *t = m.dead;

			m.dead = t->next;
			_ik_pt_tbl_put(pt, t);
		}
	}
	if (pt->hooks.iotlb_sync_map)
		pt->hooks.iotlb_sync_map(pt->cfg.cookie, iova, total);
	return 0;
}

/* ------------------------------------------------------------ unmap */

struct pt_unmap {
	struct pt_ctx c;
	struct _ik_pt_pool pool;
	ik_u64 bytes;
	ik_u64 lo, hi;		/* cleared span [lo, hi) */
	ik_u64 granule;
	bool walk;
	struct _ik_pt_tbl *freed;
	struct _ik_pt_tbl *freed_tail;
	ik_u32 nfreed;
	struct _ik_pt_tbl *priv;	/* private split tables, via ->next */
};

/* [s, e) needs invalidating (granule: its smallest leaf); `bytes` of it
 * were mapped. */
static inline void pt_unmap_note(struct pt_unmap *u, ik_u64 s, ik_u64 e, ik_u64 gran,
				 ik_u64 bytes)
{
	if (s < u->lo)
		u->lo = s;
	if (e > u->hi)
		u->hi = e;
	if (u->granule == 0 || gran < u->granule)
		u->granule = gran;
	u->bytes += bytes;
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
		ik_u64 s = base + (ik_u64)j * sz, e = s + sz;
		bool inside = s >= rs && e <= re;
		bool outside = e <= rs || s >= re;

		if (inside)
			continue;
		if (outside && (g->leaf_levels & (1u << lvl)))
			continue;
		pt_split_count(g, lvl - 1, s, rs, re, up, leaf);
	}
}

/* Pass 1 of unmap: tables needed by splits.  Only the first and last entry
 * of each table in range can be partly covered. */
static void pt_unmap_count(const struct ik_pt_geometry *g, const struct _ik_pt_tbl *t,
			   unsigned l, ik_u64 start, ik_u64 end, ik_u64 *up, ik_u64 *leaf)
{
	ik_u32 first = pt_index(g, start, l), last = pt_index(g, end - 1, l);
	ik_u64 esz = pt_esize(g, l);
	unsigned k;

	for (k = 0; k < 2; k++) {
		ik_u32 idx = k ? last : first;
		ik_u64 es, rs, re, e;

		if (k && last == first)
			break;
		es = (k ? end - 1 : start) & ~(esz - 1);
		rs = start > es ? start : es;
		re = end < es + esz ? end : es + esz;
		if (rs == es && re == es + esz)
			continue;
		e = pt_load_acq(&t->cpu[idx]);
		if (!e)
			continue;
		if (fmt_is_table(g, e, l))
			pt_unmap_count(g, pt_child(t, idx), l - 1, rs, re, up, leaf);
		else
			pt_split_count(g, l - 1, es, rs, re, up, leaf);
	}
}

static struct _ik_pt_tbl *pt_unmap_newtbl(struct pt_unmap *u, unsigned lvl)
{
	struct _ik_pt_tbl **list = lvl ? &u->pool.upper : &u->pool.leaf;
	struct _ik_pt_tbl *t = *list;

	if (t)
		*list = t->next;
	else
		t = _ik_pt_tbl_get(u->c.pt, lvl, NULL);
	if (!t)
		return NULL;
	t->level = lvl;
	t->nleaf = 0;
	IK_ENV_MEMSET(t->cpu, 0, (ik_size)t->nent * 8u);
	t->next = u->priv;
	u->priv = t;
	return t;
}

/* Build the private table of level lvl replacing a leaf of level lvl + 1 at
 * [base, ...) -> oa with `attrs`, without the hole [rs, re). */
static struct _ik_pt_tbl *pt_split_build(struct pt_unmap *u, unsigned lvl, ik_u64 base,
					 ik_u64 oa, ik_u64 attrs, ik_u64 rs, ik_u64 re)
{
	const struct ik_pt_geometry *g = u->c.g;
	struct _ik_pt_tbl *n = pt_unmap_newtbl(u, lvl);
	ik_u64 sz = pt_esize(g, lvl);
	ik_u32 j;

	if (!n)
		return NULL;
	for (j = 0; j < n->nent; j++) {
		ik_u64 s = base + (ik_u64)j * sz, e = s + sz;
		bool inside = s >= rs && e <= re;
		bool outside = e <= rs || s >= re;
		struct _ik_pt_tbl *c;

		if (inside)
			continue;
		if (outside && (g->leaf_levels & (1u << lvl))) {
			n->cpu[j] = fmt_mk_leaf(g, attrs, oa + (s - base), lvl);
			n->nleaf++;
			continue;
		}
		c = pt_split_build(u, lvl - 1, s, oa + (s - base), attrs, rs, re);
		if (!c)
			return NULL;
		n->cpu[j] = fmt_mk_table(g, c->iommu, lvl);
		n->child[j] = c;
	}
	return n;
}

static void pt_unmap_tbl(struct pt_unmap *u, struct _ik_pt_tbl *t, unsigned l, ik_u64 start,
			 ik_u64 end);

/* Give back a private subtree that was never visible. */
static void pt_unmap_giveback(struct pt_unmap *u, struct _ik_pt_tbl *n)
{
	ik_u32 i;

	if (n->level) {
		for (i = 0; i < n->nent; i++) {
			if (n->child[i]) {
				pt_unmap_giveback(u, n->child[i]);
				n->child[i] = NULL;
			}
		}
		n->next = u->pool.upper;
		u->pool.upper = n;
	} else {
		n->next = u->pool.leaf;
		u->pool.leaf = n;
	}
}

static void pt_split(struct pt_unmap *u, struct _ik_pt_tbl *t, ik_u32 idx, unsigned l, ik_u64 e,
		     ik_u64 es, ik_u64 rs, ik_u64 re)
{
	const struct ik_pt_geometry *g = u->c.g;
	struct _ik_pt_tbl *n, *cur = NULL, *p;
	ik_u64 attrs = fmt_leaf_attrs(g, e, l), oa = fmt_leaf_addr(g, e, l);

	u->priv = NULL;
	n = pt_split_build(u, l - 1, es, oa, attrs, rs, re);
	if (!n) {
		/* Pool exhausted: only when racing with an overlapping
		 * request (undefined result, but nothing leaks). */
		while (u->priv) {
			p = u->priv;
			u->priv = p->next;
			if (p->level)
				IK_ENV_MEMSET(p->child, 0, (ik_size)p->nent * sizeof(*p->child));
			p->next = p->level ? u->pool.upper : u->pool.leaf;
			if (p->level)
				u->pool.upper = p;
			else
				u->pool.leaf = p;
		}
		return;
	}
	if (u->c.clean) {
		for (p = u->priv; p; p = p->next)
			pt_clean_entries(u->c.pt, p, 0, p->nent);
	}
	u->priv = NULL;
	/* C1 then C2, as in pt_install(). */
	if (ik_atomic_cas(&t->child[idx], &cur, n, IK_MO_RELAXED, IK_MO_RELAXED)) {
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
	pt_unmap_giveback(u, n);
	pt_unmap_tbl(u, cur, l - 1, rs, re);
}

/* Queue a whole unlinked subtree; returns the bytes it mapped. */
static ik_u64 pt_queue_subtree(struct pt_unmap *u, struct _ik_pt_tbl *t)
{
	const struct ik_pt_geometry *g = u->c.g;
	ik_u64 bytes = (ik_u64)ik_load_relaxed(&t->nleaf) << pt_shift(g, t->level);
	ik_u32 i;

	t->next = NULL;
	if (u->freed_tail)
		u->freed_tail->next = t;
	else
		u->freed = t;
	u->freed_tail = t;
	u->nfreed++;
	if (t->level) {
		for (i = 0; i < t->nent; i++) {
			struct _ik_pt_tbl *c = ik_load_relaxed(&t->child[i]);

			if (c)
				bytes += pt_queue_subtree(u, c);
		}
	}
	return bytes;
}

/* Level 0: every entry in range is whole and a leaf or empty; the hot loop
 * of page unmaps. */
static void pt_unmap_leaves(struct pt_unmap *u, struct _ik_pt_tbl *t, ik_u64 start, ik_u64 end)
{
	const struct ik_pt_geometry *g = u->c.g;
	unsigned sh = g->lg2_granule;
	ik_u32 idx = pt_index(g, start, 0), last = pt_index(g, end - 1, 0);
	ik_u32 run_lo = 0, run_n = 0, cleared = 0, lo = 0, hi = 0;
	ik_u64 *e = t->cpu;

	for (; idx <= last; idx++) {
		/* Fast path: four mapped entries at once. */
		while (idx + 3 <= last && pt_load(&e[idx]) && pt_load(&e[idx + 1]) &&
		       pt_load(&e[idx + 2]) && pt_load(&e[idx + 3])) {
			pt_store(&e[idx], 0);
			pt_store(&e[idx + 1], 0);
			pt_store(&e[idx + 2], 0);
			pt_store(&e[idx + 3], 0);
			if (!cleared)
				lo = idx;
			if (!run_n)
				run_lo = idx;
			cleared += 4;
			run_n += 4;
			idx += 4;
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

static void pt_unmap_tbl(struct pt_unmap *u, struct _ik_pt_tbl *t, unsigned l, ik_u64 start,
			 ik_u64 end)
{
	const struct ik_pt_geometry *g = u->c.g;
	ik_u64 esz = pt_esize(g, l);
	ik_u32 idx = pt_index(g, start, l), last = pt_index(g, end - 1, l);
	ik_u64 es = start & ~(esz - 1);
	ik_u32 cleared = 0, run_lo = 0, run_n = 0;

	if (l == 0) {
		pt_unmap_leaves(u, t, start, end);
		return;
	}
	for (; idx <= last; idx++, es += esz) {
		ik_u64 e = pt_load_acq(&t->cpu[idx]);
		ik_u64 rs = start > es ? start : es;
		ik_u64 re = end < es + esz ? end : es + esz;
		bool whole = rs == es && re == es + esz;

		if (!e)
			continue;
		if (fmt_is_table(g, e, l)) {
			struct _ik_pt_tbl *c = pt_child(t, idx);

			if (!whole) {
				pt_unmap_tbl(u, c, l - 1, rs, re);
				continue;
			}
			/* Unlink: one entry, the leaves below stay untouched
			 * until the gather is synced. */
			pt_store(&t->cpu[idx], 0);
			ik_store_relaxed(&t->child[idx], NULL);
			u->walk = true;
			pt_unmap_note(u, es, es + esz, pt_esize(g, 0), pt_queue_subtree(u, c));
		} else if (whole) {
			pt_store(&t->cpu[idx], 0);
			cleared++;
			pt_unmap_note(u, es, es + esz, esz, esz);
		} else {
			pt_split(u, t, idx, l, e, es, rs, re);
			continue;
		}
		/* a cleared entry: extend the local run */
		if (run_n && run_lo + run_n == idx) {
			run_n++;
		} else {
			if (run_n)
				pt_run_add(&u->c, l, t, run_lo, run_lo + run_n - 1);
			run_lo = idx;
			run_n = 1;
		}
	}
	if (run_n)
		pt_run_add(&u->c, l, t, run_lo, run_lo + run_n - 1);
	if (cleared)
		ik_atomic_fetch_sub(&t->nleaf, cleared, IK_MO_RELAXED);
}

static ik_s64 pt_unmap(struct ik_pgtable *pt, ik_u64 iova, ik_u64 size, struct ik_gather *gather)
{
	const struct ik_pt_geometry *g = &pt->geom;
	struct pt_unmap u;
	ik_u64 up = 0, leaf = 0;

	pt_unmap_count(g, pt->root, pt_top(g), iova, iova + size, &up, &leaf);
	u.pool.upper = u.pool.leaf = NULL;
	if (up || leaf) {
		int ret = _ik_pt_pool_fill(pt, &u.pool, up, leaf);

		if (ret)
			return ret;
	}
	pt_ctx_init(&u.c, pt);
	u.bytes = 0;
	u.lo = IK_U64_MAX;
	u.hi = 0;
	u.granule = 0;
	u.walk = false;
	u.freed = u.freed_tail = NULL;
	u.nfreed = 0;
	u.priv = NULL;
	pt_unmap_tbl(&u, pt->root, pt_top(g), iova, iova + size);
	pt_run_flush_all(&u.c);
	_ik_pt_pool_drain(pt, &u.pool);
	if (u.nfreed) {
		gather->pt = pt;
		u.freed_tail->next = gather->tables;
		gather->tables = u.freed;
		gather->nr_tables += u.nfreed;
	}
	if (u.walk)
		gather->walk = true;
	if (u.hi > u.lo) {
		if (pt->hooks.gather_add)
			pt->hooks.gather_add(pt->cfg.cookie, gather, u.lo, u.hi - u.lo, u.granule);
		else
			ik_gather_add(gather, u.lo, u.hi - u.lo, u.granule);
	}
	return (ik_s64)u.bytes;
}

/* ------------------------------------------------------------ lookups */

static int pt_iova_to_phys(const struct ik_pgtable *pt, ik_u64 iova, ik_u64 *pa, ik_u64 *pgsize)
{
	const struct ik_pt_geometry *g = &pt->geom;
	const struct _ik_pt_tbl *t = pt->root;
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

/* Merging dump state, shared by the engine's dump. */
struct pt_dump {
	ik_pt_range_fn fn;
	void *ctx;
	struct ik_pt_range cur;
	bool have;
	int ret;
};

static void pt_dump_emit(struct pt_dump *d, ik_u64 iova, ik_u64 oa, ik_u64 size, ik_u64 pgsize,
			 unsigned prot, ik_u64 attr)
{
	struct ik_pt_range *c = &d->cur;

	if (d->ret)
		return;
	if (d->have && c->iova + c->size == iova && c->oa + c->size == oa && c->prot == prot &&
	    c->attr == attr) {
		c->size += size;
		if (pgsize < c->pgsize)
			c->pgsize = pgsize;
		return;
	}
	if (d->have) {
		d->ret = d->fn(d->ctx, c);
		if (d->ret)
			return;
	}
	c->iova = iova;
	c->oa = oa;
	c->size = size;
	c->pgsize = pgsize;
	c->prot = prot;
	c->attr = attr;
	d->have = true;
}

static void pt_dump_tbl(const struct ik_pgtable *pt, struct pt_dump *d, const struct _ik_pt_tbl *t,
			unsigned l, ik_u64 start, ik_u64 end, const struct fmt_walk_state *st)
{
	const struct ik_pt_geometry *g = &pt->geom;
	ik_u64 esz = pt_esize(g, l);
	ik_u32 idx = pt_index(g, start, l), last = pt_index(g, end - 1, l);
	ik_u64 es = start & ~(esz - 1);

	for (; idx <= last && !d->ret; idx++, es += esz) {
		ik_u64 e = pt_load_acq(&t->cpu[idx]);
		ik_u64 rs = start > es ? start : es;
		ik_u64 re = end < es + esz ? end : es + esz;

		if (!e)
			continue;
		if (fmt_is_table(g, e, l)) {
			struct fmt_walk_state st2 = *st;

			(void)fmt_walk_table(g, &st2, e, l);
			pt_dump_tbl(pt, d, pt_child(t, idx), l - 1, rs, re, &st2);
		} else {
			struct ik_pt_walk_result r;
			ik_u64 nv;

			r.attr = 0;
			r.prot = 0;
			r.dirty = false;
			(void)fmt_walk_leaf(g, st, e, l, 0, &r, &nv);
			pt_dump_emit(d, rs, fmt_leaf_addr(g, e, l) + (rs - es), re - rs, esz, r.prot,
				     r.attr);
		}
	}
}

static int pt_dump(const struct ik_pgtable *pt, ik_u64 iova, ik_u64 size, ik_pt_range_fn fn,
		   void *ctx)
{
	struct pt_dump d;
	struct fmt_walk_state st;

	d.fn = fn;
	d.ctx = ctx;
	d.have = false;
	d.ret = 0;
	fmt_walk_init(&pt->geom, &st);
	pt_dump_tbl(pt, &d, pt->root, pt_top(&pt->geom), iova, iova + size, &st);
	if (d.have && !d.ret)
		d.ret = fn(ctx, &d.cur);
	return d.ret;
}

/* ------------------------------------------------------------ dirty */

#if IKPT_HAS_DIRTY
struct pt_dirty {
	struct pt_ctx c;
	ik_u64 base;
	ik_u64 *bitmap;
	unsigned lg2_page;
	bool clear;
	ik_s64 count;
	ik_u64 lo, hi, granule;
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

static void pt_dirty_tbl(struct pt_dirty *d, struct _ik_pt_tbl *t, unsigned l, ik_u64 start,
			 ik_u64 end)
{
	const struct ik_pt_geometry *g = d->c.g;
	ik_u64 esz = pt_esize(g, l);
	ik_u32 idx = pt_index(g, start, l), last = pt_index(g, end - 1, l);
	ik_u64 es = start & ~(esz - 1);

	for (; idx <= last; idx++, es += esz) {
		ik_u64 e = pt_load_acq(&t->cpu[idx]);
		ik_u64 rs = start > es ? start : es;
		ik_u64 re = end < es + esz ? end : es + esz;

		if (!e)
			continue;
		if (fmt_is_table(g, e, l)) {
			pt_dirty_tbl(d, pt_child(t, idx), l - 1, rs, re);
			continue;
		}
		if (!fmt_leaf_dirty(g, e, l))
			continue;
		d->count++;
		/* Every page of 2^lg2_page bytes the leaf's in-range part
		 * touches: a leaf smaller than a page still sets its page's bit. */
		pt_set_bits(d->bitmap, (rs - d->base) >> d->lg2_page,
			    ((re - 1 - d->base) >> d->lg2_page) - ((rs - d->base) >> d->lg2_page) + 1);
		if (!d->clear)
			continue;
		/* The IOMMU may update the entry concurrently (access flag,
		 * dirty state): clear with a CAS, retrying on its updates. */
		while (!ik_atomic_cas(&t->cpu[idx], &e, fmt_leaf_mkclean(g, e, l), IK_MO_RELAXED,
				      IK_MO_RELAXED)) {
			if (!e || fmt_is_table(g, e, l))
				break;
		}
		pt_run_add(&d->c, l, t, idx, idx);
		if (es < d->lo)
			d->lo = es;
		if (es + esz > d->hi)
			d->hi = es + esz;
		if (d->granule == 0 || esz < d->granule)
			d->granule = esz;
	}
}

static ik_s64 pt_dirty(struct ik_pgtable *pt, ik_u64 iova, ik_u64 size, unsigned flags,
		       ik_u64 *bitmap, unsigned lg2_page, struct ik_gather *gather)
{
	struct pt_dirty d;

	pt_ctx_init(&d.c, pt);
	d.base = iova;
	d.bitmap = bitmap;
	d.lg2_page = lg2_page;
	d.clear = !(flags & IK_DIRTY_NO_CLEAR);
	d.count = 0;
	d.lo = IK_U64_MAX;
	d.hi = 0;
	d.granule = 0;
	pt_dirty_tbl(&d, pt->root, pt_top(&pt->geom), iova, iova + size);
	pt_run_flush_all(&d.c);
	if (gather && d.hi > d.lo) {
		if (pt->hooks.gather_add)
			pt->hooks.gather_add(pt->cfg.cookie, gather, d.lo, d.hi - d.lo, d.granule);
		else
			ik_gather_add(gather, d.lo, d.hi - d.lo, d.granule);
	}
	return d.count;
}
#endif

/* ------------------------------------------------------------ walker */

static int pt_walk(const struct ik_pt_walker *w, const struct ik_pt_mem *mem, ik_u64 iova,
		   unsigned access, struct ik_pt_walk_result *res)
{
	const struct ik_pt_geometry *g = &w->geom;
	struct fmt_walk_state st;
	ik_u64 table = w->root;
	unsigned l = pt_top(g);

	IK_ENV_MEMSET(res, 0, sizeof(*res));
	res->level = l;
	if (g->ias < 64 && (iova >> g->ias)) {
		res->fault = IK_PT_FAULT_TRANSLATION;
		return 0;
	}
	fmt_walk_init(g, &st);
	for (;;) {
		ik_u64 addr = table + (ik_u64)pt_index(g, iova, l) * 8u, e, nv;
		enum ik_pt_fault f;

		res->level = l;
		res->pte_addr = addr;
		if (mem->read64(mem->ctx, addr, &e)) {
			res->fault = IK_PT_FAULT_EXTERNAL;
			return 0;
		}
		res->pte = e;
		if (!fmt_is_valid(g, e, l)) {
			res->fault = IK_PT_FAULT_TRANSLATION;
			return 0;
		}
		if (l > 0 && fmt_is_table(g, e, l)) {
			f = fmt_walk_table(g, &st, e, l);
			if (f) {
				res->fault = f;
				return 0;
			}
			table = fmt_table_addr(g, e, l);
			if (g->oas < 64 && (table >> g->oas)) {
				res->fault = IK_PT_FAULT_ADDR_SIZE;
				return 0;
			}
			l--;
			continue;
		}
		res->pgsize = pt_esize(g, l);
		res->oa = fmt_leaf_addr(g, e, l);
		if (g->oas < 64 && (res->oa >> g->oas)) {
			res->fault = IK_PT_FAULT_ADDR_SIZE;
			return 0;
		}
		res->oa += iova & (res->pgsize - 1);
		f = fmt_walk_leaf(g, &st, e, l, access, res, &nv);
		res->fault = f;
		if (nv != e && mem->cas64) {
			/* The hardware's own update (access flag, dirty state);
			 * walk again if the entry changed under us. */
			int r = mem->cas64(mem->ctx, addr, e, nv);

			if (r == -EAGAIN)
				return pt_walk(w, mem, iova, access, res);
			if (r == 0) {
				struct ik_pt_walk_result r2 = *res;
				ik_u64 nv2;

				(void)fmt_walk_leaf(g, &st, nv, l, 0, &r2, &nv2);
				res->pte = nv;
				res->dirty = r2.dirty;
			}
		}
		return 0;
	}
}

/* ------------------------------------------------------------ ops */

const struct _ik_pt_ops IKPT_OPS = {
	IKPT_FMT,
	IKPT_NAME,
	fmt_geometry,
	pt_map,
	pt_unmap,
	pt_iova_to_phys,
#if IKPT_HAS_DIRTY
	pt_dirty,
#else
	NULL,
#endif
	pt_walk,
	pt_dump,
};
