/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * IOVA allocator: the tree.  See <iommukit/iova.h> for the API.
 *
 * Representation.  Each node stores gap_lo (the first pfn of the free gap
 * just below its range) and lo (the first pfn of its range).  Its last pfn is
 * not stored: it is the next node's gap_lo - 1, or d->last_hi for the highest
 * node.  So a node's own gap, [gap_lo, lo - 1], is known from the node alone,
 * and the augmented values are functions of a node and its two children, as
 * the foundation's rbtree wants.  Inserting a range into the gap below node S
 * moves S.gap_lo up; erasing a range moves its successor's gap_lo down: in
 * both cases the successor is propagated too.
 *
 * Augmented values (over the subtree): max_gap, the largest gap; max_afit,
 * the largest "aligned fit".  For a gap [a, b] let B be the order of the
 * largest naturally aligned block inside it, and R the length of [s, b] where
 * s is the lowest multiple of 2^(B+1) >= a (0 if none; R < 2^(B+1), or a
 * 2^(B+1) block would fit).  A size-aligned request of n pages, with
 * 2^(k-1) < n <= 2^k, fits iff k <= B, or k == B + 1 and n <= R (for k >=
 * B + 2 even 2^(k-1) would have to fit).  As n determines k, the requests
 * that fit are exactly n <= afit = max(2^B, R): one number per gap, and the
 * subtree maximum answers "does any gap below here fit?" exactly.  A request
 * without alignment fits iff n <= gap.  Bit 63 of max_afit (never set in a
 * value, since a domain covers at most 2^63 pfns) marks a reservation.
 *
 * Allocation (top-down, limit L).  The top gap, cut at L, is the highest
 * place of all; if the limit reaches it and it does not fit, the root's
 * summary says at once whether anything else does.  Otherwise walk from the
 * root toward L.  A node with lo > L: its right subtree lies above L; go
 * left, remembering it as the possible "straddling" node (the lowest node
 * above L owns the only gap that can cross L).  A node with lo <= L: its own
 * gap and its left subtree lie wholly below L, and everything deeper on the
 * walk is higher; push it and go right.  A child whose summary does not fit
 * ends the walk early: no gap there fits, not even cut at L.  Then the
 * straddling gap, cut at L, is tried first; else the pushed nodes from the
 * deepest up: the first whose own gap fits, or whose left subtree's
 * summary fits, holds the answer (its left subtree is only loaded when its
 * own gap does not fit).  A descent into that subtree takes the right
 * child if its summary fits, else the own gap, else the left child.  Nodes
 * visited: the walk, the left children checked on the way back, and one
 * descent: at most about three tree heights, and usually one (W1 measures
 * it).  A ring keeps the deepest 16 pushed nodes; older ones are found again
 * by parent pointers, so that the stack stays small (kernel frames are
 * bounded: tests/frame_size.sh checks them).
 *
 * The hint (d->hint: the owner of the gap last freed into or allocated
 * from).  When the limit lies above every range, the hint's own gap holds
 * the answer iff it fits and nothing above it does, which one climb to the
 * root decides (hint_search()).  The climb is cheaper than the descent per
 * level: its checks almost never succeed, so their branches are predicted,
 * and its only serial work is loading the parent, where the descent must
 * wait for each child's summary to choose its way (measured: a mispredicted
 * turn per level cost more than the rest of the step).  The climb records
 * the path, so the update after it recomputes ancestors from an array with
 * the new values carried in registers (propagate_path()).  A climb that
 * fails stops the hint until one in about 64 searches tries it again; the
 * search then starts from the root as above.
 *
 * The kept node (d->tomb, see drop_tomb()): a free next to its successor
 * leaves its node in the tree with an empty range, and an allocation at the
 * top of that gap gives it a range again.  When the hint is the kept node
 * and the request goes at the top of its gap, nothing but that node
 * changes, so the climb also writes the new summaries on its way up
 * (hint_reuse()).  A free followed by an allocation of the same place (W1;
 * a driver that unmaps and maps again without an rcache) then costs a
 * descent and a propagation for the free and one climb for the allocation:
 * no rebalancing, no node allocated or freed.
 */
#include <iommukit/iova.h>
#include "iova_int.h"

typedef struct ik_iova_node node_t;

/* The memory per live range that iova.h documents and `iommukit-bench iova`
 * reports (bytes_per_range, node_bytes): 56 bytes on 64-bit hosts. */
_Static_assert(sizeof(void *) != 8 || sizeof(node_t) == 56, "an IOVA node is 56 bytes on 64-bit");
/* ik_iova_probe_stats()'s counters sit in what were padding holes of the
 * domain (abi/accepted.abignore says where): the members around them keep
 * their offsets. */
#define IK_IOVA_OFF_(m) __builtin_offsetof(struct ik_iova_domain, m)
_Static_assert(sizeof(void *) != 8 ||
	       (IK_IOVA_OFF_(probe_hits) == 52 && IK_IOVA_OFF_(last_hi) == 56 &&
		IK_IOVA_OFF_(probe_misses) == 220 && IK_IOVA_OFF_(rc_mags) == 224),
	       "struct ik_iova_domain: the probe counters must stay in the old padding");

#define RESV_BIT ((ik_u64)1 << 63)

static inline node_t *N(const struct ik_rb_node *rb)
{
	return rb ? ik_rb_entry(rb, node_t, rb) : NULL;
}

static inline ik_u64 node_afit(const node_t *n)
{
	return n->max_afit & ~RESV_BIT;
}

bool ik_iova_node_reserved(const node_t *n)
{
	return (n->max_afit & RESV_BIT) != 0;
}

/* afit of the non-empty gap [a, b], b - a < 2^63 (see the top comment). */
static inline ik_u64 gap_afit(ik_u64 a, ik_u64 b)
{
	ik_u64 size = b - a + 1;
	unsigned k = (unsigned)IK_ILOG2_64(size);
	ik_u64 blk = (ik_u64)1 << k, m = blk - 1;
	ik_u64 s = (a + m) & ~m; /* a + m <= b: no overflow */
	ik_u64 pm, r = 0;

	if (b - s < m) /* no 2^k block; a 2^(k-1) one always fits (k >= 1 here) */
		blk >>= 1;
	pm = (blk << 1) - 1;
	if ((a & pm) == 0)
		s = a;
	else if ((a | pm) != IK_U64_MAX)
		s = (a | pm) + 1;
	else
		return blk;
	if (s <= b)
		r = b - s + 1;
	return r > blk ? r : blk;
}

/* The node's own gap size and afit. */
static inline void own_values(const node_t *n, ik_u64 *gap, ik_u64 *afit)
{
	*gap = n->lo - n->gap_lo;
	*afit = *gap ? gap_afit(n->gap_lo, n->lo - 1) : 0;
}

/* Stands in for a missing child: an empty subtree, nothing fits in it. */
static const node_t nil_node;

static inline const node_t *child(const struct ik_rb_node *c)
{
	return c ? N(c) : &nil_node;
}

static inline void compute(const node_t *n, ik_u64 *gap, ik_u64 *afit)
{
	const node_t *l = child(n->rb.left), *r = child(n->rb.right);
	ik_u64 g, f;

	own_values(n, &g, &f);
	g = IK_MAX(g, l->max_gap);
	g = IK_MAX(g, r->max_gap);
	f = IK_MAX(f, node_afit(l));
	f = IK_MAX(f, node_afit(r));
	*gap = g;
	*afit = f;
}

/* Two augmented fields (and a flag bit to keep), so the callbacks are written
 * out rather than generated by IK_RB_DECLARE_CALLBACKS. */
/* Whether n's subtree summaries are (gap, afit). */
static inline bool summary_is(const node_t *n, ik_u64 gap, ik_u64 afit)
{
	return n->max_gap == gap && node_afit(n) == afit;
}

/* Store n's subtree summaries, keeping its reservation mark. */
static inline void set_summary(node_t *n, ik_u64 gap, ik_u64 afit)
{
	n->max_gap = gap;
	n->max_afit = afit | (n->max_afit & RESV_BIT);
}

/* The child of p that is not n (n is a child of p), or the nil node; chosen
 * without a branch: which side n hangs on is a coin toss. */
static inline const node_t *sibling(const struct ik_rb_node *p, const struct ik_rb_node *n)
{
	ik_uptr m = (ik_uptr)0 - (ik_uptr)(p->left == n);

	return child((const struct ik_rb_node *)(((ik_uptr)p->right & m) |
						 ((ik_uptr)p->left & ~m)));
}

/*
 * Recompute rb and its ancestors, up to but not including `stop` (NULL: the
 * root): always up to and including `must` (rb or an ancestor of it), then
 * only while values change, counting the nodes computed (the last one
 * included when its values had not changed) in d->summary_updates.  Every
 * level in full: used where values mostly go down (an allocation shrinks a
 * gap), where update_grow()'s shortcut rarely applies and its checks only
 * add to each level (measured).
 */
static void update_up(struct ik_iova_domain *d, struct ik_rb_node *rb,
		      const struct ik_rb_node *stop, const struct ik_rb_node *must)
{
	bool forced = true;
	unsigned k = 0;

	while (rb != stop) {
		node_t *n = N(rb);
		ik_u64 g, f;

		compute(n, &g, &f);
		k++;
		if (!forced && summary_is(n, g, f))
			break;
		if (rb == must)
			forced = false;
		set_summary(n, g, f);
		rb = ik_rb_parent(rb);
	}
	d->summary_updates += k;
}

/*
 * update_up(d, rb, stop, rb) for frees and the tree's callbacks.  Only rb's
 * own data (gap, children) changed; every other node's summary is the
 * maximum of its own values and its children's stored summaries.  So above
 * a node whose summary went from old to new, the parent's becomes max(its
 * old, new), without recomputing its own gap's afit, unless a value went
 * down that was the parent's maximum: then the parent is computed in full.
 * Counts the nodes updated or checked, as update_up() does.
 */
static void update_grow(struct ik_iova_domain *d, struct ik_rb_node *rb,
			const struct ik_rb_node *stop)
{
	node_t *n = N(rb);
	ik_u64 og = n->max_gap, of = node_afit(n), ng, nf;
	unsigned k = 1;

	if (rb == stop)
		return;
	compute(n, &ng, &nf);
	set_summary(n, ng, nf);
	for (rb = ik_rb_parent(rb); rb != stop; rb = ik_rb_parent(rb)) {
		ik_u64 pg, pf, g, f;

		k++;
		n = N(rb);
		pg = n->max_gap;
		pf = node_afit(n);
		if ((ng < og && og == pg) || (nf < of && of == pf)) {
			compute(n, &g, &f);
		} else {
			g = IK_MAX(pg, ng);
			f = IK_MAX(pf, nf);
		}
		if (pg == g && pf == f)
			break;
		set_summary(n, g, f);
		og = pg;
		of = pf;
		ng = g;
		nf = f;
	}
	d->summary_updates += k;
}

/* The tree's callbacks; ctx is the domain, which counts the nodes computed. */
static void aug_propagate(struct ik_rb_node *rb, struct ik_rb_node *stop, void *ctx)
{
	update_grow((struct ik_iova_domain *)ctx, rb, stop);
}

/* An allocation's update of one node's own gap and its ancestors. */
static void shrunk_propagate(struct ik_iova_domain *d, struct ik_rb_node *rb)
{
	update_up(d, rb, NULL, rb);
}

/*
 * The nodes from rb up to, not including, `stop` (NULL: the root) gained a
 * gap whose values are (g, f) in their subtrees and lost nothing: each one's
 * summaries become the maximum of theirs and (g, f), without looking at its
 * own gap or its children, and once one's do not change, none above it up to
 * `stop` changes either.  Returns the nodes counted.
 */
static unsigned update_gained(struct ik_rb_node *rb, const struct ik_rb_node *stop, ik_u64 g,
			      ik_u64 f)
{
	unsigned k = 0;

	for (; rb != stop; rb = ik_rb_parent(rb)) {
		node_t *n = N(rb);

		k++;
		if (n->max_gap >= g && node_afit(n) >= f)
			break;
		set_summary(n, IK_MAX(n->max_gap, g), IK_MAX(node_afit(n), f));
	}
	return k;
}

static void aug_copy(struct ik_rb_node *from, struct ik_rb_node *to, void *ctx)
{
	node_t *f = N(from), *t = N(to);

	(void)ctx;
	set_summary(t, f->max_gap, node_afit(f));
}

static void aug_rotate(struct ik_rb_node *old, struct ik_rb_node *top, void *ctx)
{
	struct ik_iova_domain *d = (struct ik_iova_domain *)ctx;
	node_t *o = N(old);
	ik_u64 g, f;

	aug_copy(old, top, ctx);
	compute(o, &g, &f);
	set_summary(o, g, f);
	d->summary_updates++;
}

static const struct ik_rb_augment iova_aug = { aug_propagate, aug_copy, aug_rotate };

/* ---- requests ---- */

struct req {
	ik_u64 n;	/* pages */
	ik_u64 mask;	/* alignment - 1 */
	ik_u64 limit;	/* <= end_pfn */
	bool aligned;
};

/* Whether q fits where the largest gap is `gap` and the largest afit `afit`. */
static inline bool fits(ik_u64 gap, ik_u64 afit, const struct req *q)
{
	return q->aligned ? q->n <= afit : q->n <= gap;
}

static inline bool sub_fits(const node_t *x, const struct req *q)
{
	return fits(x->max_gap, node_afit(x), q);
}

/* Whether q fits in x's own gap, the limit aside. */
static inline bool sub_fits_own(const node_t *x, const struct req *q)
{
	ik_u64 gap, afit;

	own_values(x, &gap, &afit);
	return fits(gap, afit, q);
}


/* Highest placement of q inside [a, b] (b already cut at the limit). */
static inline bool place(ik_u64 a, ik_u64 b, const struct req *q, ik_u64 *out)
{
	ik_u64 s;

	if (b < a || b - a < q->n - 1)
		return false;
	s = (b - (q->n - 1)) & ~q->mask;
	if (s < a)
		return false;
	*out = s;
	return true;
}

static inline bool own_place(const node_t *x, ik_u64 limit, const struct req *q, ik_u64 *out)
{
	if (x->lo == x->gap_lo)
		return false;
	return place(x->gap_lo, IK_MIN(x->lo - 1, limit), q, out);
}

static inline ik_u64 hi_of(const struct ik_iova_domain *d, const node_t *x, const node_t *next)
{
	(void)x;
	return next ? next->gap_lo - 1 : d->last_hi;
}

/* ---- tree updates ---- */

/*
 * How many nodes of the hint's climb struct path records.  A red-black tree
 * of n nodes is at most 2 * log2(n + 1) deep, so 32 covers every path of a
 * tree of fewer than 2^16 ranges and, as the depth of a tree from the
 * allocator's inserts stays near log2(n), nearly every one of larger trees;
 * the update after a longer climb goes by parent pointers instead.  The
 * array is on the stack of ik_iova_alloc() (8 bytes a node on 64-bit),
 * whose frame stays under 1024 bytes for 32-bit kernels
 * (tests/frame_size.sh).  tests/test_iova_shallow builds the allocator with
 * a value of 1 to take the fallback all the time.
 */
#ifndef IK_IOVA_PATH_MAX
#define IK_IOVA_PATH_MAX 32
#endif
_Static_assert(IK_IOVA_PATH_MAX >= 1 && IK_IOVA_PATH_MAX <= 128, "IK_IOVA_PATH_MAX: 1..128");
/* Likewise, how many of its turns to the right the search from the root
 * keeps (search()); a power of two. */
#ifndef IK_IOVA_TURNS_KEPT
#define IK_IOVA_TURNS_KEPT 16
#endif
_Static_assert(IK_IOVA_TURNS_KEPT >= 1 && IK_IOVA_TURNS_KEPT <= 128 &&
	       (IK_IOVA_TURNS_KEPT & (IK_IOVA_TURNS_KEPT - 1)) == 0,
	       "IK_IOVA_TURNS_KEPT: a power of two, 1..128");

/*
 * The nodes from the owner of the chosen gap (n[0]) up to the root
 * (n[len - 1]), as the hint's climb found them: the update recomputes them
 * from this array rather than by following parent pointers.  len is 0 when
 * the climb found no answer or a path longer than IK_IOVA_PATH_MAX.
 */
struct path {
	node_t *n[IK_IOVA_PATH_MAX + 1]; /* + a spare slot for hint_search() */
	unsigned len;
	bool done; /* hint_reuse() has already given the kept node its range */
};

/*
 * Recompute the first node of the path (its own gap changed) and then its
 * ancestors, stopping at the first whose values do not change.  The new
 * values climb in registers and each node's other child is read through the
 * array, so the loads of all levels can be in flight at once; following
 * parent pointers would wait for each load in turn.
 */
static void propagate_path(struct ik_iova_domain *d, const struct path *pa)
{
	node_t *n = pa->n[0];
	ik_u64 g, f;
	unsigned i;

	compute(n, &g, &f);
	set_summary(n, g, f);
	for (i = 1; i < pa->len; i++) {
		node_t *p = pa->n[i];
		const node_t *sib = sibling(&p->rb, &n->rb);
		ik_u64 pg, pf;

		own_values(p, &pg, &pf);
		pg = IK_MAX(pg, IK_MAX(g, sib->max_gap));
		pf = IK_MAX(pf, IK_MAX(f, node_afit(sib)));
		if (summary_is(p, pg, pf))
			break;
		set_summary(p, pg, pf);
		g = pg;
		f = pf;
		n = p;
	}
	d->summary_updates += i < pa->len ? i + 1 : i;
}

/*
 * Link the new node nn for [lo, hi] into the gap below `owner` (NULL: the top
 * gap).  The range must lie inside that gap.  O(log n).
 */
static void link_range(struct ik_iova_domain *d, node_t *nn, node_t *owner, ik_u64 lo,
		       ik_u64 hi, const struct path *pa)
{
	struct ik_rb_node *parent, **link;
	ik_u64 gap, afit;

	nn->lo = lo;
	if (owner) {
		nn->gap_lo = owner->gap_lo;
		owner->gap_lo = hi + 1;
		if (!owner->rb.left) {
			parent = &owner->rb;
			link = &parent->left;
		} else {
			parent = owner->rb.left;
			while (parent->right)
				parent = parent->right;
			link = &parent->right;
		}
	} else {
		if (d->last) {
			nn->gap_lo = d->last_hi + 1;
			parent = &d->last->rb;
			link = &parent->right;
		} else {
			nn->gap_lo = d->start_pfn;
			parent = NULL;
			link = &d->root.node;
		}
		d->last = nn;
		d->last_hi = hi;
	}
	ik_rb_link_node(&nn->rb, parent, link);
	/* A leaf: its summaries are its own gap's. */
	own_values(nn, &gap, &afit);
	set_summary(nn, gap, afit);
	/*
	 * Two things changed: owner's gap shrank, and nn (with the part of that
	 * gap below the new range) hangs in owner's left subtree.  An empty gap
	 * under nn changes nothing above it, so owner's path alone is
	 * recomputed; otherwise one pass from nn's parent, carried through
	 * owner whatever the values do on the way, covers both.
	 */
	if (owner && nn->lo == nn->gap_lo) {
		if (pa && pa->len)
			propagate_path(d, pa);
		else
			shrunk_propagate(d, &owner->rb);
	} else if (owner) {
		/* The nodes between nn and owner (the right spine of owner's
		 * left subtree) only gained nn's gap: a maximum per node, up
		 * to the first that does not change, where a pass from nn's
		 * parent computed each one in full (measured: about 4% of a
		 * W3 allocation).  Then owner, whose own gap shrank, and
		 * above it while values change, in full (update_up()). */
		if (parent != &owner->rb)
			d->summary_updates += update_gained(parent, &owner->rb, gap, afit);
		update_up(d, &owner->rb, NULL, &owner->rb);
	} else if (parent) {
		/* the top gap: every node above only gained nn's gap */
		d->summary_updates += update_gained(parent, NULL, gap, afit);
	}
	ik_rb_insert_fix_(&nn->rb, &d->root, &iova_aug, d);
	d->nr_ranges++;
	d->nr_pages += hi - lo + 1;
}

/* Unlink x (range [x->lo, hi], successor next).  Does not free it. */
static void unlink_range(struct ik_iova_domain *d, node_t *x, node_t *next, ik_u64 hi)
{
	if (d->hint == x)
		d->hint = NULL;
	if (next) {
		/* next's gap grows over x's range and gap.  The erase below
		 * recomputes, forced, the first node of its own propagation and
		 * then climbs while values change: when that node is next (x
		 * has two children: next, its successor, takes x's place; or x
		 * has no right child and is next's left child: the climb
		 * starts at next), next's change rides on that one pass and a
		 * pass of its own would only repeat it. */
		next->gap_lo = x->gap_lo;
		if (!(x->rb.left && x->rb.right) &&
		    !(!x->rb.right && ik_rb_parent(&x->rb) == &next->rb))
			aug_propagate(&next->rb, NULL, d);
	} else {
		node_t *prev = N(ik_rb_prev(&x->rb));

		d->last = prev;
		d->last_hi = prev ? x->gap_lo - 1 : 0;
	}
	ik_rb_erase_augmented_ctx(&x->rb, &d->root, &iova_aug, d);
	d->nr_ranges--;
	d->nr_pages -= hi - x->lo + 1;
	if (ik_iova_node_reserved(x)) {
		d->nr_reserved--;
		d->reserved_pages -= hi - x->lo + 1;
	}
}

static void node_free(struct ik_iova_domain *d, node_t *n);

/*
 * The kept node (d->tomb): a free leaves the node of a range whose successor
 * S starts right after it (S's own gap is empty) in the tree, with its range
 * emptied and its own gap grown over it, instead of erasing it: no
 * rebalancing and no node freed.  The next allocation at the top of that gap
 * gives the node its range back, again without touching the tree's shape or
 * the allocator (a free followed by an allocation of the same place is what
 * W1 and every rcache miss do).  At most one such node exists; it is never
 * the last node and never reported as a range.  Its lo equals S's (S's gap
 * is empty), and a descent by pfn, which ends at the last node in order with
 * lo <= pfn, always finds S rather than it.  Anything that would give S a
 * gap or look at ranges one by one erases it first (drop_tomb).
 */
static void drop_tomb(struct ik_iova_domain *d)
{
	node_t *t = d->tomb, *s;

	if (!t)
		return;
	d->tomb = NULL;
	s = N(ik_rb_next(&t->rb));
	IK_ASSERT(s && s->gap_lo == t->lo);
	d->nr_ranges++; /* unlink_range counts it out; its range is empty */
	unlink_range(d, t, s, t->lo - 1);
	node_free(d, t);
}

/*
 * Nodes.  The domain keeps one freed node (d->spare) for the next
 * allocation: in a churn of frees and allocations (every rcache miss, W3)
 * each operation then skips a call into the allocator (measured: about 6%
 * of a W3 free and of a W3 allocation).  One node, so the memory held
 * beyond the ranges stays constant.
 */
static node_t *node_alloc(struct ik_iova_domain *d)
{
	node_t *n = d->spare;

	if (n)
		d->spare = NULL;
	else
		n = (node_t *)ik_alloc(d->alloc, sizeof(node_t), sizeof(void *));
	if (n)
		n->max_afit = 0;
	return n;
}

static void node_free(struct ik_iova_domain *d, node_t *n)
{
	if (!d->spare)
		d->spare = n;
	else
		ik_free(d->alloc, n, sizeof(node_t));
}

/* Start loading what a walk by pfn reads of rb's node (nothing if NULL). */
static inline void prefetch_walk(const struct ik_rb_node *rb)
{
	if (rb) {
		__builtin_prefetch(rb);
		__builtin_prefetch(&N(rb)->lo);
	}
}

/* The same for a walk that also reads the node's summaries (allocation). */
static inline void prefetch_node(const struct ik_rb_node *rb)
{
	if (rb) {
		__builtin_prefetch(rb);
		__builtin_prefetch(&N(rb)->max_afit);
	}
}

/*
 * The node with the largest lo <= pfn (NULL: none) and, in *next, its
 * successor (the last node where the descent turned left).
 */
static node_t *floor_node(const struct ik_iova_domain *d, ik_u64 pfn, node_t **next)
{
	struct ik_rb_node *rb = d->root.node;
	node_t *best = NULL, *succ = NULL;

	while (rb) {
		node_t *x = N(rb);

		/* Both children, before the comparison decides: the loads of
		 * the next level start while this one's branch resolves (a
		 * coin toss, mispredicted half the time).  The fields the walk
		 * reads, rb and lo, may straddle two cache lines. */
		prefetch_walk(rb->left);
		prefetch_walk(rb->right);
		if (x->lo <= pfn) {
			best = x;
			rb = rb->right;
		} else {
			succ = x;
			rb = rb->left;
		}
	}
	*next = succ;
	return best;
}

node_t *ik_iova_lookup_start(struct ik_iova_domain *d, ik_u64 pfn, ik_u64 *hi)
{
	node_t *next, *x = floor_node(d, pfn, &next);

	if (!x || x->lo != pfn)
		return NULL;
	*hi = hi_of(d, x, next);
	return x;
}

/* ---- lifetime ---- */

int ik_iova_init(struct ik_iova_domain *d, const struct ik_iova_config *cfg)
{
	int err;

	if (!d || !cfg || !IK_IS_POW2(cfg->granule) || cfg->start_pfn > cfg->end_pfn ||
	    cfg->end_pfn - cfg->start_pfn > IK_IOVA_MAX_PAGES - 1 ||
	    (cfg->flags & ~(IK_IOVA_CFG_NO_RCACHE | IK_IOVA_CFG_LOCKED_RCACHE)))
		return -EINVAL;
#ifdef IK_DEBUG
	/* Re-initialising a live domain would leak its nodes and arrays.  Only
	 * checked in debug builds: `d` may be uninitialised memory, which a
	 * release build must not read (valgrind would rightly object). */
	if (d->live == IK_IOVA_LIVE)
		return -EBUSY;
#endif
	IK_ENV_MEMSET(d, 0, sizeof(*d));
	ik_lock_init(&d->lock);
	d->root.node = NULL;
	d->last = NULL;
	d->hint = NULL;
	d->tomb = NULL;
	d->start_pfn = cfg->start_pfn;
	d->end_pfn = cfg->end_pfn;
	d->granule = cfg->granule;
	d->alloc = cfg->allocator;
	err = ik_iova_rcache_init(d, cfg);
	if (err) {
		ik_lock_destroy(&d->lock);
		return err;
	}
	d->live = IK_IOVA_LIVE;
	return 0;
}

void ik_iova_destroy(struct ik_iova_domain *d)
{
	struct ik_rb_node *rb, *nx;

	if (!d)
		return;
	ik_iova_rcache_destroy(d);
	for (rb = ik_rb_first_postorder(&d->root); rb; rb = nx) {
		nx = ik_rb_next_postorder(rb);
		ik_free(d->alloc, N(rb), sizeof(node_t));
	}
	if (d->spare)
		ik_free(d->alloc, d->spare, sizeof(node_t));
	d->spare = NULL;
	d->root.node = NULL;
	d->last = NULL;
	d->hint = NULL;
	d->tomb = NULL;
	d->nr_ranges = d->nr_pages = d->nr_reserved = d->reserved_pages = 0;
	ik_lock_destroy(&d->lock);
	d->live = 0;
}

/* ---- allocation ---- */

/*
 * The hint, used when the limit lies above every range: the answer is in
 * the hint node H's own gap iff that gap fits and no gap above it does.
 * The gaps above H's are those of H's right subtree and, for every ancestor
 * A that holds H in its left subtree, A's own gap and A's right subtree:
 * one climb to the root, whose checks almost never succeed (so their
 * branches are predicted) and whose only serial work is the parent pointer,
 * where the descent from the root waits on each child's summary before it
 * can choose its way.  The climb records the path for propagate_path().
 * It stops at the first higher fit, and the caller searches from the root.
 */
static bool hint_search(node_t *h, const struct req *q, ik_u64 *pfn, ik_u64 *visits,
			struct path *pa)
{
	struct ik_rb_node *n = &h->rb, *p;
	unsigned k = 0;
	bool higher;

	if (!own_place(h, q->limit, q, pfn))
		return false;
	higher = sub_fits(child(h->rb.right), q);
	pa->n[k++] = h;
	while (!higher && (p = ik_rb_parent(n))) {
		node_t *a = N(p);
		/* The sibling is read on both sides (the right one is what
		 * counts), so that propagate_path() finds it loaded. */
		bool sib_fits = sub_fits(sibling(p, n), q);

		/* Past the array's end the climb goes on unrecorded (into
		 * the spare slot). */
		pa->n[IK_MIN(k, (unsigned)IK_IOVA_PATH_MAX)] = a;
		k++;
		higher = (p->left == n) & (sib_fits | (a->lo != a->gap_lo && sub_fits_own(a, q)));
		n = p;
	}
	*visits = k;
	/* A path longer than the array: the update climbs by parent pointers. */
	pa->len = higher || k > IK_IOVA_PATH_MAX ? 0 : k;
	return !higher;
}

/*
 * hint_search() for the kept node t when q goes at the top of its gap, at
 * pfn s: the allocation then changes no node but t (its range comes back),
 * so the climb that proves nothing above fits also writes the new summaries
 * of t and of its ancestors, up to the first that does not change, from the
 * values it has loaded anyway: one pass instead of a climb and then a
 * propagation.  If the climb finds a higher fit, the summaries it wrote are
 * recomputed from the tree (which it did not change) and false is returned.
 */
static bool hint_reuse(struct ik_iova_domain *d, node_t *t, const struct req *q, ik_u64 s,
		       ik_u64 *visits)
{
	struct ik_rb_node *n = &t->rb, *p, *stored = NULL;
	const node_t *l = child(t->rb.left), *r = child(t->rb.right);
	ik_u64 g, f, k = 1, u = 1;
	bool higher = sub_fits(r, q), storing = true;

	if (higher) {
		*visits = k;
		return false;
	}
	/* t's summaries once it holds [s, lo - 1]: its gap is [gap_lo, s - 1] */
	g = s - t->gap_lo;
	f = g ? gap_afit(t->gap_lo, s - 1) : 0;
	g = IK_MAX(g, IK_MAX(l->max_gap, r->max_gap));
	f = IK_MAX(f, IK_MAX(node_afit(l), node_afit(r)));
	if (summary_is(t, g, f)) {
		storing = false;
	} else {
		set_summary(t, g, f);
		stored = n;
	}
	while (!higher && (p = ik_rb_parent(n))) {
		node_t *a = N(p);
		const node_t *sib = sibling(p, n);
		bool sib_fits = sub_fits(sib, q), own_fits;
		ik_u64 og, of;

		k++;
		own_values(a, &og, &of);
		own_fits = fits(og, of, q);
		higher = (p->left == n) & (sib_fits | own_fits);
		if (storing) {
			u++;
			og = IK_MAX(og, IK_MAX(g, sib->max_gap));
			of = IK_MAX(of, IK_MAX(f, node_afit(sib)));
			if (summary_is(a, og, of)) {
				storing = false;
			} else {
				set_summary(a, og, of);
				g = og;
				f = of;
				stored = p;
			}
		}
		n = p;
	}
	*visits = k;
	d->summary_updates += u;
	if (higher) {
		/* Put back what was written: recompute from t up to `stored`
		 * (nothing above it was written, so the pass stops there). */
		if (stored)
			update_up(d, &t->rb, NULL, stored);
		return false;
	}
	t->lo = s;
	return true;
}

/* What search_top() found. */
enum top_result { TOP_FOUND, TOP_NONE, TOP_DESCEND };

/*
 * search(), step 1, when the limit reaches the top gap (every range at or
 * below L): the top gap itself, the highest place of all; then the root's
 * summary decides whether anything fits; then the hint.  *v counts the
 * nodes the hint visits (also when it fails: the descent adds to it).
 */
IK_ALWAYS_INLINE enum top_result search_top(struct ik_iova_domain *d, const struct req *q,
					    node_t **owner, ik_u64 *pfn, ik_u64 *v,
					    ik_u64 *visits, struct path *pa)
{
	struct ik_rb_node *rb = d->root.node;
	ik_u64 L = q->limit, a = d->last ? d->last_hi + 1 : d->start_pfn;
	node_t *h = d->hint;
	bool ok;

	if ((!d->last || d->last_hi < L) && place(a, L, q, pfn)) {
		*owner = NULL;
		*visits = 0;
		return TOP_FOUND;
	}
	if (!rb || !sub_fits(N(rb), q)) {
		*visits = rb ? 1 : 0;
		return TOP_NONE;
	}
	/* The hint earns its tries: a success allows the next try, a failure
	 * stops them, and without credit it is tried about one search in 64
	 * (when the running visit count is a multiple of 64) to notice when it
	 * would pay again. */
	if (!h || (!d->hint_credit && (d->visits & 63) != 0))
		return TOP_DESCEND;
	if (h == d->tomb && own_place(h, L, q, pfn) && *pfn + q->n == h->lo) {
		ok = hint_reuse(d, h, q, *pfn, v);
		pa->done = ok;
	} else {
		ok = hint_search(h, q, pfn, v, pa);
	}
	if (!ok) {
		d->hint_credit = 0;
		d->probe_misses++;
		return TOP_DESCEND;
	}
	d->hint_credit = 1;
	d->probe_hits++;
	*owner = h;
	*visits = *v;
	return TOP_FOUND;
}

/* search(), last step: inside cand's subtree every gap lies below L and one
 * fits: the highest, right first.  Adds the nodes visited to *v. */
IK_ALWAYS_INLINE const node_t *search_below(const node_t *cand, const struct req *q, ik_u64 *pfn,
					    ik_u64 *v)
{
	for (;;) {
		prefetch_node(cand->rb.left);
		prefetch_node(cand->rb.right);
		if (cand->rb.right && sub_fits(N(cand->rb.right), q)) {
			cand = N(cand->rb.right);
			(*v)++;
		} else if (own_place(cand, q->limit, q, pfn)) {
			return cand;
		} else {
			IK_ASSERT(cand->rb.left);
			cand = N(cand->rb.left);
			(*v)++;
		}
	}
}

/*
 * Find the highest placement for q.  Returns the owner of the gap (NULL for
 * the top gap) through *owner and the start through *pfn; false if none.
 * Counts visited nodes in *visits.  When the hint answers, *pa holds the
 * path from the owner up to the root (or pa->done is set); else pa->len is
 * 0.
 */
static bool search(struct ik_iova_domain *d, const struct req *q, node_t **owner,
		   ik_u64 *pfn, ik_u64 *visits, struct path *pa)
{
	/* The deepest turns to the right (see below), in a ring. */
	const node_t *ring[IK_IOVA_TURNS_KEPT];
	struct ik_rb_node *rb = d->root.node;
	const node_t *x = NULL, *cand = NULL, *strad = NULL;
	ik_u64 L = q->limit, v = 0;
	unsigned turns = 0, k;

	pa->len = 0;
	pa->done = false;
	if (!d->last || d->last_hi <= L) {
		enum top_result r = search_top(d, q, owner, pfn, &v, visits, pa);

		if (r != TOP_DESCEND)
			return r == TOP_FOUND;
		/* Every gap lies below L and the root's summary fits: the walk
		 * below would turn right at every node and end where the
		 * descent from the root ends, so descend at once (measured:
		 * about 1.5% of a W3 allocation). */
		v++;
		*owner = (node_t *)search_below(N(rb), q, pfn, &v);
		*visits = v;
		return true;
	}
	/* Descend towards L, counting the turns to the right. */
	while (rb) {
		x = N(rb);
		v++;
		prefetch_node(rb->left);
		prefetch_node(rb->right);
		if (x->lo > L) {
			strad = x;
			rb = rb->left;
		} else {
			ring[turns++ % IK_IOVA_TURNS_KEPT] = x;
			rb = rb->right;
		}
		if (rb && !sub_fits(N(rb), q))
			break; /* nothing below fits, not even cut at L */
	}
	if (strad && own_place(strad, L, q, pfn)) {
		*owner = (node_t *)strad;
		*visits = v;
		return true;
	}
	/* The deepest turn whose own gap or left subtree fits.  The ring holds
	 * the deepest IK_IOVA_TURNS_KEPT turns; older ones are the ancestors at
	 * or below L of the oldest kept, found again by parent pointers (the
	 * walk loaded them: they are not counted as visits twice). */
	for (k = turns; k > 0; k--) {
		if (turns - k < IK_IOVA_TURNS_KEPT) {
			x = ring[(k - 1) % IK_IOVA_TURNS_KEPT];
		} else {
			do
				x = N(ik_rb_parent(&x->rb));
			while (x->lo > L);
		}
		if (own_place(x, L, q, pfn)) {
			*owner = (node_t *)x;
			*visits = v;
			return true;
		}
		if (x->rb.left) {
			v++;
			if (sub_fits(N(x->rb.left), q)) {
				cand = N(x->rb.left);
				break;
			}
		}
	}
	*visits = v;
	if (!cand)
		return false;
	*owner = (node_t *)search_below(cand, q, pfn, visits);
	return true;
}

static int alloc_locked(struct ik_iova_domain *d, const struct req *q, ik_u64 *pfn)
{
	struct path pa;
	node_t *owner, *nn;
	ik_u64 v, s = 0;

	bool found = search(d, q, &owner, &s, &v, &pa);

	d->last_visits = v;
	d->visits += v;
	if (v > d->max_visits)
		d->max_visits = v;
	if (!found)
		return -ENOSPC;
	if (owner && owner == d->tomb && (pa.done || s + q->n == owner->lo)) {
		/* The kept node takes the range at the top of its gap. */
		d->tomb = NULL;
		if (!pa.done) { /* found from the root: no path recorded */
			owner->lo = s;
			shrunk_propagate(d, &owner->rb);
		}
		d->nr_ranges++;
		d->nr_pages += q->n;
		d->hint = owner;
		*pfn = s;
		return 0;
	}
	nn = node_alloc(d);
	if (!nn)
		return -ENOMEM;
	link_range(d, nn, owner, s, s + q->n - 1, &pa);
	d->hint = owner;
	*pfn = s;
	return 0;
}

int ik_iova_alloc(struct ik_iova_domain *d, ik_u64 npages, ik_u64 limit, unsigned flags,
		  ik_u64 *pfn)
{
	struct req q;
	int err;

	if (!d || !pfn || npages == 0 || npages - 1 > d->end_pfn - d->start_pfn ||
	    limit < d->start_pfn || (flags & ~(IK_IOVA_SIZE_ALIGNED | IK_IOVA_NO_FLUSH)))
		return -EINVAL;
	q.n = npages;
	q.aligned = (flags & IK_IOVA_SIZE_ALIGNED) != 0;
	q.mask = q.aligned ? ((ik_u64)1 << IK_ILOG2_64_UP(npages)) - 1 : 0;
	q.limit = IK_MIN(limit, d->end_pfn);
	ik_lock(&d->lock);
	err = alloc_locked(d, &q, pfn);
	ik_unlock(&d->lock);
	if (err == -ENOSPC && !(flags & IK_IOVA_NO_FLUSH) &&
	    ik_load_relaxed(&d->rc_maybe_cached)) {
		ik_iova_flush_all(d);
		ik_lock(&d->lock);
		d->nr_flushes++;
		err = alloc_locked(d, &q, pfn);
		ik_unlock(&d->lock);
	}
	return err;
}

/* ---- free, find, iterate ---- */

int ik_iova_free_locked(struct ik_iova_domain *d, ik_u64 pfn)
{
	node_t *next, *x = floor_node(d, pfn, &next);
	ik_u64 hi;

	if (!x || x->lo != pfn || ik_iova_node_reserved(x))
		return -ENOENT;
	if (d->tomb && d->tomb->lo == x->lo)
		drop_tomb(d); /* x follows the kept node: x's gap is about to grow */
	hi = hi_of(d, x, next);
	if (!d->tomb && next && next->gap_lo == next->lo) {
		/* Keep x, empty: its own gap grows over its range. */
		x->lo = next->lo;
		/* In full, reading each sibling on the way: the allocation that
		 * usually follows (W1: a driver without an rcache) climbs this
		 * path from the kept node and finds them loaded (update_grow()
		 * here moved misses into that allocation, measured). */
		update_up(d, &x->rb, NULL, &x->rb);
		d->tomb = x;
		d->hint = x;
		d->nr_ranges--;
		d->nr_pages -= hi - pfn + 1;
		return 0;
	}
	unlink_range(d, x, next, hi);
	node_free(d, x);
	d->hint = next; /* its gap now holds the freed range */
	return 0;
}

int ik_iova_free(struct ik_iova_domain *d, ik_u64 pfn)
{
	int err;

	if (IK_UNLIKELY(!d))
		return -EINVAL;
	ik_lock(&d->lock);
	err = ik_iova_free_locked(d, pfn);
	ik_unlock(&d->lock);
	return err;
}

int ik_iova_find(struct ik_iova_domain *d, ik_u64 pfn, struct ik_iova_range *r)
{
	node_t *next, *x;
	int err = -ENOENT;

	if (!d || !r)
		return -EINVAL;
	ik_lock(&d->lock);
	x = floor_node(d, pfn, &next);
	if (x && pfn <= hi_of(d, x, next)) {
		r->lo = x->lo;
		r->hi = hi_of(d, x, next);
		r->reserved = ik_iova_node_reserved(x);
		err = 0;
	}
	ik_unlock(&d->lock);
	return err;
}

int ik_iova_next(struct ik_iova_domain *d, ik_u64 from, struct ik_iova_range *r)
{
	node_t *next, *x;
	int err = -ENOENT;

	if (!d || !r)
		return -EINVAL;
	ik_lock(&d->lock);
	x = floor_node(d, from, &next);
	if (!x || x->lo != from)
		x = next;
	if (x && x == d->tomb)
		x = N(ik_rb_next(&x->rb)); /* not a range: its successor starts there */
	if (x) {
		r->lo = x->lo;
		r->hi = hi_of(d, x, N(ik_rb_next(&x->rb)));
		r->reserved = ik_iova_node_reserved(x);
		err = 0;
	}
	ik_unlock(&d->lock);
	return err;
}

int ik_iova_for_each(struct ik_iova_domain *d,
		     int (*fn)(void *ctx, const struct ik_iova_range *r), void *ctx)
{
	struct ik_rb_node *rb, *nx;
	int ret = 0;

	if (!d || !fn)
		return -EINVAL;
	ik_lock(&d->lock);
	for (rb = ik_rb_first(&d->root); rb; rb = nx) {
		struct ik_iova_range r;

		nx = ik_rb_next(rb);
		if (N(rb) == d->tomb)
			continue;
		r.lo = N(rb)->lo;
		r.hi = hi_of(d, N(rb), N(nx));
		r.reserved = ik_iova_node_reserved(N(rb));
		ret = fn(ctx, &r);
		if (ret)
			break;
	}
	ik_unlock(&d->lock);
	return ret;
}

int ik_iova_largest_free(struct ik_iova_domain *d, ik_u64 limit, ik_u64 *pages)
{
	struct ik_rb_node *rb;
	const node_t *strad = NULL;
	ik_u64 L, best = 0;

	if (!d || !pages || limit < d->start_pfn)
		return -EINVAL;
	L = IK_MIN(limit, d->end_pfn);
	ik_lock(&d->lock);
	rb = d->root.node;
	while (rb) {
		const node_t *x = N(rb);

		if (x->lo > L) {
			strad = x;
			rb = rb->left;
		} else {
			best = IK_MAX(best, x->lo - x->gap_lo);
			if (rb->left)
				best = IK_MAX(best, N(rb->left)->max_gap);
			rb = rb->right;
		}
	}
	if (strad) {
		if (strad->lo > strad->gap_lo && strad->gap_lo <= L)
			best = IK_MAX(best, IK_MIN(strad->lo - 1, L) - strad->gap_lo + 1);
	} else if (!d->last) {
		best = L - d->start_pfn + 1;
	} else if (d->last_hi < L) {
		best = IK_MAX(best, L - d->last_hi);
	}
	ik_unlock(&d->lock);
	*pages = best;
	return 0;
}

/* ---- reserve ---- */

int ik_iova_reserve(struct ik_iova_domain *d, ik_u64 lo, ik_u64 hi)
{
	node_t *x, *next, *first = NULL, *nn = NULL, *after;
	ik_u64 qlo, qhi, ulo = lo, uhi = hi, xhi, nmerge = 0;

	if (!d || lo > hi || lo < d->start_pfn || hi > d->end_pfn)
		return -EINVAL;
	qlo = lo > d->start_pfn ? lo - 1 : lo;
	qhi = hi < d->end_pfn ? hi + 1 : hi;
	ik_lock(&d->lock);
	/*
	 * Pass 1: every range touching [qlo, qhi]; refuse overlapping
	 * allocations.  The kept node is not a range: skipped here, and only
	 * dropped once the reservation cannot fail any more, so that an error
	 * (-EBUSY, -ENOMEM) leaves the domain as it was, its memory included.
	 */
	x = floor_node(d, qlo, &next);
	if (!x || hi_of(d, x, next) < qlo)
		x = next;
	for (; x && x->lo <= qhi; x = N(ik_rb_next(&x->rb))) {
		if (x == d->tomb)
			continue;
		xhi = hi_of(d, x, N(ik_rb_next(&x->rb)));
		if (!ik_iova_node_reserved(x)) {
			if (x->lo <= hi && xhi >= lo) {
				ik_unlock(&d->lock);
				return -EBUSY;
			}
			continue;
		}
		if (!first)
			first = x;
		nmerge++;
		ulo = IK_MIN(ulo, x->lo);
		uhi = IK_MAX(uhi, xhi);
	}
	if (!first) {
		/* A new range in the gap below the first node above hi. */
		nn = node_alloc(d);
		if (!nn) {
			ik_unlock(&d->lock);
			return -ENOMEM;
		}
		drop_tomb(d); /* the new range may take (part of) its gap */
		floor_node(d, hi, &next);
		nn->max_afit = RESV_BIT;
		link_range(d, nn, next, lo, hi, NULL);
		d->nr_reserved++;
		d->reserved_pages += hi - lo + 1;
		ik_unlock(&d->lock);
		return 0;
	}
	/* Merge: keep `first`, drop the other reservations, then widen first.
	 * The walk below goes range by range: the kept node goes first. */
	drop_tomb(d);
	while (nmerge-- > 1) {
		/* The reservations touching [lo, hi] are consecutive: an
		 * allocation can only touch it from outside, at either end. */
		x = N(ik_rb_next(&first->rb));
		IK_ASSERT(x && ik_iova_node_reserved(x));
		next = N(ik_rb_next(&x->rb));
		unlink_range(d, x, next, hi_of(d, x, next));
		node_free(d, x);
	}
	after = N(ik_rb_next(&first->rb));
	xhi = hi_of(d, first, after);
	d->nr_pages -= xhi - first->lo + 1;
	d->reserved_pages -= xhi - first->lo + 1;
	first->lo = ulo;
	aug_propagate(&first->rb, NULL, d);
	if (after) {
		after->gap_lo = uhi + 1;
		aug_propagate(&after->rb, NULL, d);
	} else {
		d->last_hi = uhi;
	}
	d->nr_pages += uhi - ulo + 1;
	d->reserved_pages += uhi - ulo + 1;
	ik_unlock(&d->lock);
	return 0;
}

/* ---- stats and checker ---- */

void ik_iova_stats(struct ik_iova_domain *d, struct ik_iova_stats *st)
{
	ik_u64 cr, cp, nodes;

	IK_ASSERT(d && st);
	IK_ENV_MEMSET(st, 0, sizeof(*st));
	ik_iova_rcache_count(d, &cr, &cp);
	ik_lock(&d->lock);
	st->ranges = d->nr_ranges;
	st->pages = d->nr_pages;
	st->reserved_ranges = d->nr_reserved;
	st->reserved_pages = d->reserved_pages;
	st->flushes = d->nr_flushes;
	st->trims = d->nr_trims;
	st->visits = d->visits;
	st->last_visits = d->last_visits;
	st->max_visits = d->max_visits;
	st->summary_updates = d->summary_updates;
	st->node_bytes = sizeof(node_t);
	/* the kept node and the spare hold memory too */
	nodes = d->nr_ranges + (d->tomb ? 1 : 0) + (d->spare ? 1 : 0);
	if (!d->last)
		st->largest_gap = d->end_pfn - d->start_pfn + 1;
	else
		st->largest_gap = IK_MAX(N(d->root.node)->max_gap, d->end_pfn - d->last_hi);
	ik_unlock(&d->lock);
	st->cached_ranges = cr;
	st->cached_pages = cp;
	st->magazines = ik_load_relaxed(&d->rc_mags);
	st->bytes = nodes * sizeof(node_t) + st->magazines * sizeof(struct ik_iova_mag) +
		    (ik_u64)d->rc_classes * d->rc_ncpus * sizeof(struct ik_iova_cpu) +
		    (ik_u64)d->rc_classes * sizeof(struct ik_iova_depot);
}

int ik_iova_probe_stats(struct ik_iova_domain *d, ik_u32 *hits, ik_u32 *misses)
{
	if (!d || !hits || !misses)
		return -EINVAL;
	ik_lock(&d->lock);
	*hits = d->probe_hits;
	*misses = d->probe_misses;
	ik_unlock(&d->lock);
	return 0;
}

static int node_cmp(const struct ik_rb_node *a, const struct ik_rb_node *b)
{
	ik_u64 x = N(a)->lo, y = N(b)->lo;

	if (x == y) { /* only the kept node and its successor share a lo */
		x = N(a)->gap_lo;
		y = N(b)->gap_lo;
	}
	return x < y ? -1 : x > y;
}

static bool node_aug_ok(const struct ik_rb_node *rb)
{
	ik_u64 g, f;

	compute(N(rb), &g, &f);
	return N(rb)->max_gap == g && node_afit(N(rb)) == f;
}

static int check_tree(struct ik_iova_domain *d)
{
	struct ik_rb_node *rb;
	ik_u64 ranges = 0, pages = 0, resv = 0, rpages = 0;
	bool hint_seen = !d->hint, tomb_seen = !d->tomb;
	int err = ik_rb_check(&d->root, node_cmp, NULL, NULL, NULL);

	if (err)
		return IK_IOVA_CHECK_RBTREE;
	err = ik_rb_check(&d->root, node_cmp, node_aug_ok, NULL, NULL);
	if (err)
		return IK_IOVA_CHECK_AUGMENT;
	rb = ik_rb_first(&d->root);
	if (!rb) {
		if (d->hint || d->tomb)
			return IK_IOVA_CHECK_HINT;
		return d->last || d->nr_ranges || d->nr_pages || d->nr_reserved || d->reserved_pages
			       ? IK_IOVA_CHECK_COUNTERS
			       : 0;
	}
	if (N(rb)->gap_lo != d->start_pfn)
		return IK_IOVA_CHECK_BOUNDS;
	for (; rb; rb = ik_rb_next(rb)) {
		node_t *x = N(rb), *nx = N(ik_rb_next(rb));
		ik_u64 hi;

		if (x == d->hint)
			hint_seen = true;
		if (x == d->spare) /* the spare is free memory, never a node of the tree */
			return IK_IOVA_CHECK_HINT;
		if (x == d->tomb) {
			/* The kept node: an empty range that its successor starts
			 * right after, with a gap of its own, never reserved. */
			if (!nx || nx->gap_lo != x->lo || nx->lo != x->lo || x->gap_lo >= x->lo ||
			    ik_iova_node_reserved(x))
				return IK_IOVA_CHECK_HINT;
			tomb_seen = true;
			continue;
		}
		if (x->gap_lo > x->lo)
			return IK_IOVA_CHECK_OVERLAP;
		if (nx && nx->gap_lo <= x->lo)
			return IK_IOVA_CHECK_OVERLAP; /* empty range */
		if (!nx && (d->last != x || d->last_hi < x->lo))
			return IK_IOVA_CHECK_OVERLAP;
		hi = hi_of(d, x, nx);
		if (hi > d->end_pfn)
			return IK_IOVA_CHECK_BOUNDS;
		ranges++;
		pages += hi - x->lo + 1;
		if (ik_iova_node_reserved(x)) {
			resv++;
			rpages += hi - x->lo + 1;
		}
	}
	if (!hint_seen || !tomb_seen)
		return IK_IOVA_CHECK_HINT;
	if (ranges != d->nr_ranges || pages != d->nr_pages || resv != d->nr_reserved ||
	    rpages != d->reserved_pages)
		return IK_IOVA_CHECK_COUNTERS;
	return 0;
}

int ik_iova_check(struct ik_iova_domain *d)
{
	int err;

	if (!d)
		return -EINVAL;
	ik_iova_rcache_lock_all(d);
	ik_lock(&d->lock);
	err = check_tree(d);
	if (!err)
		err = ik_iova_rcache_check(d);
	ik_unlock(&d->lock);
	ik_iova_rcache_unlock_all(d);
	return err;
}

const char *ik_iova_check_str(int code)
{
	switch (code) {
	case IK_IOVA_CHECK_OK: return "ok";
	case IK_IOVA_CHECK_RBTREE: return "red-black shape, colour or order broken";
	case IK_IOVA_CHECK_AUGMENT: return "a subtree's cached gap values are wrong";
	case IK_IOVA_CHECK_BOUNDS: return "a range lies outside the domain";
	case IK_IOVA_CHECK_OVERLAP: return "ranges overlap or a range is empty";
	case IK_IOVA_CHECK_COUNTERS: return "range or page counters disagree with the tree";
	case IK_IOVA_CHECK_CACHE: return "a cached pfn is not an allocation of its class size";
	case IK_IOVA_CHECK_CACHE_DUP: return "a pfn is cached twice";
	case IK_IOVA_CHECK_MAGAZINE: return "a magazine or depot exceeds its bound";
	case IK_IOVA_CHECK_HINT: return "the search hint, the kept empty node or the spare is not right";
	case -ENOMEM: return "out of memory for the check";
	default: return "unknown check result";
	}
}
