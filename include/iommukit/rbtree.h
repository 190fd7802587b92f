/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/rbtree.h - intrusive red-black tree, optionally augmented.
 *
 * Header-only.  A node (struct ik_rb_node) is embedded in the caller's struct;
 * the tree never allocates.  The caller finds the insertion point itself with
 * its own comparison (so keys, duplicates and search order are its business),
 * links the node there with ik_rb_link_node(), then calls ik_rb_insert() to
 * rebalance.  Lookups are plain descents the caller writes.
 *
 * Glossary
 *   link      the child pointer (or root pointer) a new node is stored into.
 *   augmented value
 *             a per-node field computed from the node itself and the values
 *             of its two children, e.g. "largest free gap in this subtree".
 *             The tree keeps it right through inserts, erases and rotations
 *             by calling three callbacks (struct ik_rb_augment), which
 *             IK_RB_DECLARE_CALLBACKS() generates from one compute function.
 *   propagate recompute a node and its ancestors after the node's own data
 *             changed; it stops at the first ancestor whose value did not
 *             change, since nothing above it can change either.
 *
 * Cost: insert and erase are O(log n) with at most 3 rotations; an augmented
 * insert or erase adds O(log n) compute calls (fewer with early stop);
 * first/last/next/prev are O(log n) worst case, O(1) amortised over a walk.
 *
 * Contract (what is checked, what is undefined)
 *   - A node is in at most one tree at a time.  Linking a node that is in a
 *     tree, erasing a node that is not, or mixing plain and augmented calls on
 *     one tree is undefined (not detected).
 *   - Erase during iteration: take ik_rb_next() of a node before erasing it;
 *     the pointer stays valid because other nodes do not move in memory.
 *     A post-order walk (ik_rb_first_postorder/ik_rb_next_postorder) may free
 *     each node it returns if the tree is discarded afterwards (no rebalance).
 *   - ik_rb_check() verifies parent links, order (by the caller's compare,
 *     equal neighbours allowed), no red node with a red child, a black root,
 *     equal black height on every path, and, if asked, every augmented value.
 *     It is O(n) and recursive (depth <= 2 log2(n + 1)).
 *
 * Synchronization: none.  The caller serialises every call on one tree,
 * readers included (a descent concurrent with a rebalance may see a
 * half-rotated tree).
 *
 * Pointer arguments: these primitives are exempt from the NULL rule of
 * <iommukit/env.h> ("Conventions: pointer arguments"); as in the C library,
 * valid pointers are a precondition and nothing checks them.
 */
#ifndef IOMMUKIT_RBTREE_H
#define IOMMUKIT_RBTREE_H

#include <iommukit/env.h>

IK_BEGIN_DECLS

/* Node colours, as ik_rb_color() returns them. */
#define IK_RB_RED 0u
#define IK_RB_BLACK 1u

/* A tree node.  The parent pointer and the colour share one word. */
struct ik_rb_node {
	ik_uptr parent_color_; /* not API: parent | colour bit */
	struct ik_rb_node *left;	/* left child, or NULL */
	struct ik_rb_node *right;	/* right child, or NULL */
} IK_ALIGNED(sizeof(void *));

/* A tree: its root node (NULL when empty).  Initialise with IK_RB_ROOT_INIT or zeroes. */
struct ik_rb_root {
	struct ik_rb_node *node;	/* the root node, or NULL */
};

#define IK_RB_ROOT_INIT { NULL }	/* an empty tree, as an initialiser */

/* The struct of type `type` whose member `member` is the node `ptr`. */
#define ik_rb_entry(ptr, type, member) IK_CONTAINER_OF(ptr, type, member)

/* The parent of n, or NULL for the root.  O(1). */
IK_INLINE struct ik_rb_node *ik_rb_parent(const struct ik_rb_node *n)
{
	return (struct ik_rb_node *)(n->parent_color_ & ~(ik_uptr)1);
}

/* The colour of n: IK_RB_RED or IK_RB_BLACK.  O(1). */
IK_INLINE unsigned ik_rb_color(const struct ik_rb_node *n)
{
	return (unsigned)(n->parent_color_ & 1);
}

/* NULL leaves are black. */
IK_INLINE bool ik_rb_is_red(const struct ik_rb_node *n)
{
	return n && ik_rb_color(n) == IK_RB_RED;
}

/* Whether n is black (true for a NULL leaf).  O(1). */
IK_INLINE bool ik_rb_is_black(const struct ik_rb_node *n)
{
	return !ik_rb_is_red(n);
}

/* Whether the tree has no node.  O(1). */
IK_INLINE bool ik_rb_empty(const struct ik_rb_root *root)
{
	return root->node == NULL;
}

/* ---- internals (not API) ---- */

IK_INLINE void ik_rb_set_parent_(struct ik_rb_node *n, struct ik_rb_node *p)
{
	n->parent_color_ = (ik_uptr)p | (n->parent_color_ & 1);
}

IK_INLINE void ik_rb_set_color_(struct ik_rb_node *n, unsigned color)
{
	n->parent_color_ = (n->parent_color_ & ~(ik_uptr)1) | color;
}

IK_INLINE void ik_rb_set_parent_color_(struct ik_rb_node *n, struct ik_rb_node *p,
				       unsigned color)
{
	n->parent_color_ = (ik_uptr)p | color;
}

/* Make `parent`'s link (or the root) that pointed at `old` point at `new_`. */
IK_INLINE void ik_rb_change_child_(struct ik_rb_node *old, struct ik_rb_node *new_,
				   struct ik_rb_node *parent, struct ik_rb_root *root)
{
	if (!parent)
		root->node = new_;
	else if (parent->left == old)
		parent->left = new_;
	else
		parent->right = new_;
}

/*
 * Callbacks that keep an augmented value right.  Generate them with
 * IK_RB_DECLARE_CALLBACKS(); pass NULL for a plain tree.
 *   propagate(n, stop, ctx): recompute n (always) and then its ancestors, up
 *       to but not including `stop` (NULL: the root), stopping early at the
 *       first ancestor whose value did not change.
 *   copy(from, to, ctx): `to` takes `from`'s place in the tree; copy the value.
 *   rotate(old, top, ctx): a rotation made `top` the parent of `old`, which
 *       held that place before: top takes old's value, old is recomputed.
 * `ctx` is what the caller passed to ik_rb_insert_augmented_ctx() or
 * ik_rb_erase_augmented_ctx() (NULL from the calls without _ctx): the
 * tree's owner, for callbacks that read or count something of their own.
 * The generated callbacks ignore it.
 */
struct ik_rb_augment {
	void (*propagate)(struct ik_rb_node *n, struct ik_rb_node *stop, void *ctx);
	void (*copy)(struct ik_rb_node *from, struct ik_rb_node *to, void *ctx);
	void (*rotate)(struct ik_rb_node *old, struct ik_rb_node *top, void *ctx);
};

/* n's child link on the `right` side (false: the left one).  The
 * rebalancing below is written once for both mirror images with it. */
IK_ALWAYS_INLINE struct ik_rb_node **ik_rb_child_(struct ik_rb_node *n, bool right)
{
	return right ? &n->right : &n->left;
}

/* A rotation towards `right` (false: a left rotation): x's child y on the
 * other side takes x's place, and x becomes y's child on the `right` side;
 * y's inner subtree moves to x. */
IK_ALWAYS_INLINE void ik_rb_rotate_(struct ik_rb_node *x, bool right, struct ik_rb_root *root,
				    const struct ik_rb_augment *aug, void *ctx)
{
	struct ik_rb_node *y = *ik_rb_child_(x, !right);
	struct ik_rb_node *inner = *ik_rb_child_(y, right);
	struct ik_rb_node *p = ik_rb_parent(x);

	*ik_rb_child_(x, !right) = inner;
	if (inner)
		ik_rb_set_parent_(inner, x);
	ik_rb_set_parent_(y, p);
	ik_rb_change_child_(x, y, p, root);
	*ik_rb_child_(y, right) = x;
	ik_rb_set_parent_(x, y);
	if (aug)
		aug->rotate(x, y, ctx);
}

/* One step of ik_rb_insert_fix_() at the red node n under its red parent
 * p, g's child on side pr: the next node to fix (g, recoloured red), or
 * NULL when the tree is right.  The caller passes pr as a constant, so the
 * compiler makes one copy of the step for each side. */
IK_ALWAYS_INLINE struct ik_rb_node *ik_rb_insert_step_(struct ik_rb_node *n, struct ik_rb_node *p,
						       struct ik_rb_node *g, bool pr,
						       struct ik_rb_root *root,
						       const struct ik_rb_augment *aug, void *ctx)
{
	struct ik_rb_node *u = *ik_rb_child_(g, !pr);

	if (ik_rb_is_red(u)) {
		ik_rb_set_color_(p, IK_RB_BLACK);
		ik_rb_set_color_(u, IK_RB_BLACK);
		ik_rb_set_color_(g, IK_RB_RED);
		return g;
	}
	if (n == *ik_rb_child_(p, !pr)) {
		/* the inner grandchild: make it the outer one */
		ik_rb_rotate_(p, pr, root, aug, ctx);
		p = n;
	}
	ik_rb_rotate_(g, !pr, root, aug, ctx);
	ik_rb_set_color_(p, IK_RB_BLACK);
	ik_rb_set_color_(g, IK_RB_RED);
	return NULL;
}

/* Restore the colour invariants after linking the red node `n`. */
IK_ALWAYS_INLINE void ik_rb_insert_fix_(struct ik_rb_node *n, struct ik_rb_root *root,
					const struct ik_rb_augment *aug, void *ctx)
{
	while (n) {
		struct ik_rb_node *p = ik_rb_parent(n), *g;

		if (!p) {
			ik_rb_set_color_(n, IK_RB_BLACK);
			return;
		}
		if (ik_rb_color(p) == IK_RB_BLACK)
			return;
		g = ik_rb_parent(p); /* p is red, so not the root */
		if (p == g->left)
			n = ik_rb_insert_step_(n, p, g, false, root, aug, ctx);
		else
			n = ik_rb_insert_step_(n, p, g, true, root, aug, ctx);
	}
}

/* One step of ik_rb_erase_fix_() for the black *x (maybe NULL), *parent's
 * child on side xr: true when the deficit moved up (*x and *parent are the
 * next pair), false when the tree is right (*x is the root).  xr is a
 * constant at each call, as in ik_rb_insert_step_(). */
IK_ALWAYS_INLINE bool ik_rb_erase_step_(struct ik_rb_node **x, struct ik_rb_node **parent,
					bool xr, struct ik_rb_root *root,
					const struct ik_rb_augment *aug, void *ctx)
{
	struct ik_rb_node *pa = *parent;
	struct ik_rb_node *w = *ik_rb_child_(pa, !xr);	/* x's sibling */

	if (ik_rb_is_red(w)) {
		ik_rb_set_color_(w, IK_RB_BLACK);
		ik_rb_set_color_(pa, IK_RB_RED);
		ik_rb_rotate_(pa, xr, root, aug, ctx);
		w = *ik_rb_child_(pa, !xr);
	}
	if (ik_rb_is_black(w->left) && ik_rb_is_black(w->right)) {
		ik_rb_set_color_(w, IK_RB_RED);
		*x = pa;
		*parent = ik_rb_parent(pa);
		return true;
	}
	if (ik_rb_is_black(*ik_rb_child_(w, !xr))) {
		ik_rb_set_color_(*ik_rb_child_(w, xr), IK_RB_BLACK);
		ik_rb_set_color_(w, IK_RB_RED);
		ik_rb_rotate_(w, !xr, root, aug, ctx);
		w = *ik_rb_child_(pa, !xr);
	}
	ik_rb_set_color_(w, ik_rb_color(pa));
	ik_rb_set_color_(pa, IK_RB_BLACK);
	ik_rb_set_color_(*ik_rb_child_(w, !xr), IK_RB_BLACK);
	ik_rb_rotate_(pa, xr, root, aug, ctx);
	*x = root->node;
	return false;
}

/* Restore the black height after a black node left position x (maybe NULL)
 * below `parent`. */
IK_ALWAYS_INLINE void ik_rb_erase_fix_(struct ik_rb_node *x, struct ik_rb_node *parent,
				       struct ik_rb_root *root,
				       const struct ik_rb_augment *aug, void *ctx)
{
	bool more = true;

	while (more && x != root->node && ik_rb_is_black(x)) {
		if (x == parent->left)
			more = ik_rb_erase_step_(&x, &parent, false, root, aug, ctx);
		else
			more = ik_rb_erase_step_(&x, &parent, true, root, aug, ctx);
	}
	if (x)
		ik_rb_set_color_(x, IK_RB_BLACK);
}

IK_ALWAYS_INLINE void ik_rb_insert_(struct ik_rb_node *n, struct ik_rb_root *root,
				    const struct ik_rb_augment *aug, void *ctx)
{
	if (aug)
		aug->propagate(n, NULL, ctx);
	ik_rb_insert_fix_(n, root, aug, ctx);
}

IK_ALWAYS_INLINE void ik_rb_erase_(struct ik_rb_node *node, struct ik_rb_root *root,
				   const struct ik_rb_augment *aug, void *ctx)
{
	struct ik_rb_node *x, *xparent, *parent = ik_rb_parent(node);
	unsigned removed_color;

	if (!node->left || !node->right) {
		x = node->left ? node->left : node->right;
		removed_color = ik_rb_color(node);
		if (x)
			ik_rb_set_parent_(x, parent);
		ik_rb_change_child_(node, x, parent, root);
		xparent = parent;
		if (aug && parent)
			aug->propagate(parent, NULL, ctx);
	} else {
		/* The successor (leftmost of the right subtree) takes node's place. */
		struct ik_rb_node *succ = node->right;

		while (succ->left)
			succ = succ->left;
		removed_color = ik_rb_color(succ);
		x = succ->right;
		if (succ == node->right) {
			xparent = succ;
		} else {
			xparent = ik_rb_parent(succ);
			xparent->left = x;
			if (x)
				ik_rb_set_parent_(x, xparent);
			succ->right = node->right;
			ik_rb_set_parent_(node->right, succ);
		}
		succ->left = node->left;
		ik_rb_set_parent_(node->left, succ);
		ik_rb_set_parent_color_(succ, parent, ik_rb_color(node));
		ik_rb_change_child_(node, succ, parent, root);
		if (aug) {
			aug->copy(node, succ, ctx);
			if (xparent != succ)
				aug->propagate(xparent, succ, ctx);
			aug->propagate(succ, NULL, ctx);
		}
	}
	if (removed_color == IK_RB_BLACK)
		ik_rb_erase_fix_(x, xparent, root, aug, ctx);
}

/* ---- API ---- */

/*
 * ik_rb_link_node - store `node` at `*link`, a NULL child pointer of `parent`
 * (or the root pointer, with parent NULL), as found by the caller's descent.
 * Follow with ik_rb_insert() or ik_rb_insert_augmented().  O(1).
 */
IK_INLINE void ik_rb_link_node(struct ik_rb_node *node, struct ik_rb_node *parent,
			       struct ik_rb_node **link)
{
	node->parent_color_ = (ik_uptr)parent; /* red */
	node->left = node->right = NULL;
	*link = node;
}

/* ik_rb_insert - rebalance after ik_rb_link_node().  O(log n). */
IK_INLINE void ik_rb_insert(struct ik_rb_node *node, struct ik_rb_root *root)
{
	ik_rb_insert_(node, root, NULL, NULL);
}

/* ik_rb_erase - remove `node` from the tree.  O(log n).  Other nodes keep
 * their addresses; `node` may be freed or reused afterwards. */
IK_INLINE void ik_rb_erase(struct ik_rb_node *node, struct ik_rb_root *root)
{
	ik_rb_erase_(node, root, NULL, NULL);
}

/*
 * ik_rb_insert_augmented - rebalance after ik_rb_link_node(), keeping the
 * augmented values right: computes `node` and propagates to the root
 * (early stop), then rotates.  O(log n) compute calls.
 */
IK_INLINE void ik_rb_insert_augmented(struct ik_rb_node *node, struct ik_rb_root *root,
				      const struct ik_rb_augment *aug)
{
	ik_rb_insert_(node, root, aug, NULL);
}

/* ik_rb_erase_augmented - remove `node`, keeping augmented values right. */
IK_INLINE void ik_rb_erase_augmented(struct ik_rb_node *node, struct ik_rb_root *root,
				     const struct ik_rb_augment *aug)
{
	ik_rb_erase_(node, root, aug, NULL);
}

/*
 * ik_rb_insert_augmented_ctx, ik_rb_erase_augmented_ctx - the same, with
 * `ctx` handed to every callback they make (see struct ik_rb_augment).
 */
IK_INLINE void ik_rb_insert_augmented_ctx(struct ik_rb_node *node, struct ik_rb_root *root,
					  const struct ik_rb_augment *aug, void *ctx)
{
	ik_rb_insert_(node, root, aug, ctx);
}

/* See ik_rb_insert_augmented_ctx(). */
IK_INLINE void ik_rb_erase_augmented_ctx(struct ik_rb_node *node, struct ik_rb_root *root,
					 const struct ik_rb_augment *aug, void *ctx)
{
	ik_rb_erase_(node, root, aug, ctx);
}

/*
 * ik_rb_replace_node - put `new_` where `old` is, with old's colour and
 * children, without rebalancing.  new_ must sort where old does.  In an
 * augmented tree copy old's value into new_ (or call the generated copy) and
 * propagate if new_'s own data differs.  O(1).
 */
IK_INLINE void ik_rb_replace_node(struct ik_rb_node *old, struct ik_rb_node *new_,
				  struct ik_rb_root *root)
{
	struct ik_rb_node *p = ik_rb_parent(old);

	*new_ = *old;
	if (old->left)
		ik_rb_set_parent_(old->left, new_);
	if (old->right)
		ik_rb_set_parent_(old->right, new_);
	ik_rb_change_child_(old, new_, p, root);
}

/* Smallest / largest node, or NULL for an empty tree.  O(log n). */
IK_INLINE struct ik_rb_node *ik_rb_first(const struct ik_rb_root *root)
{
	struct ik_rb_node *n = root->node;

	if (n)
		while (n->left)
			n = n->left;
	return n;
}

/* See ik_rb_first(). */
IK_INLINE struct ik_rb_node *ik_rb_last(const struct ik_rb_root *root)
{
	struct ik_rb_node *n = root->node;

	if (n)
		while (n->right)
			n = n->right;
	return n;
}

/* In-order successor / predecessor, or NULL at the end. */
IK_INLINE struct ik_rb_node *ik_rb_next(const struct ik_rb_node *n)
{
	struct ik_rb_node *p;

	if (n->right) {
		n = n->right;
		while (n->left)
			n = n->left;
		return (struct ik_rb_node *)n;
	}
	while ((p = ik_rb_parent(n)) && n == p->right)
		n = p;
	return p;
}

/* See ik_rb_next(). */
IK_INLINE struct ik_rb_node *ik_rb_prev(const struct ik_rb_node *n)
{
	struct ik_rb_node *p;

	if (n->left) {
		n = n->left;
		while (n->right)
			n = n->right;
		return (struct ik_rb_node *)n;
	}
	while ((p = ik_rb_parent(n)) && n == p->left)
		n = p;
	return p;
}

/* Post-order walk (children before parents), for tearing a tree down. */
IK_INLINE struct ik_rb_node *ik_rb_left_deepest_(struct ik_rb_node *n)
{
	for (;;) {
		if (n->left)
			n = n->left;
		else if (n->right)
			n = n->right;
		else
			return n;
	}
}

/* The first node in post-order (the left-deepest leaf), or NULL for an empty tree.  O(log n). */
IK_INLINE struct ik_rb_node *ik_rb_first_postorder(const struct ik_rb_root *root)
{
	return root->node ? ik_rb_left_deepest_(root->node) : NULL;
}

/* The node after n in post-order, or NULL after the root.  Safe to free n after the call.  O(log
 * n). */
IK_INLINE struct ik_rb_node *ik_rb_next_postorder(const struct ik_rb_node *n)
{
	struct ik_rb_node *p = ik_rb_parent(n);

	if (p && n == p->left && p->right)
		return ik_rb_left_deepest_(p->right);
	return p;
}

/*
 * IK_RB_DECLARE_CALLBACKS - generate augmentation callbacks.
 *   storage  e.g. static
 *   name     prefix: defines name##_propagate/_copy/_rotate and the
 *            const struct ik_rb_augment name (pass &name to the tree calls)
 *   type     the struct embedding the node
 *   rbfield  its struct ik_rb_node member
 *   augfield the augmented member (any type comparable with ==)
 *   compute  a function (const type *) -> value of augfield, computed from the
 *            node's own data and its children's augfield only
 */
#define IK_RB_DECLARE_CALLBACKS(storage, name, type, rbfield, augfield, compute)	\
	storage void name##_propagate(struct ik_rb_node *rb, struct ik_rb_node *stop,	\
				      void *ctx_)					\
	{										\
		bool first_ = true;							\
		(void)ctx_;								\
		while (rb != stop) {							\
			type *n_ = ik_rb_entry(rb, type, rbfield);			\
			__typeof__(n_->augfield) v_ = compute(n_);			\
			if (!first_ && n_->augfield == v_)				\
				break;							\
			first_ = false;							\
			n_->augfield = v_;						\
			rb = ik_rb_parent(rb);						\
		}									\
	}										\
	storage void name##_copy(struct ik_rb_node *from, struct ik_rb_node *to,	\
				 void *ctx_)						\
	{										\
		(void)ctx_;								\
		ik_rb_entry(to, type, rbfield)->augfield =				\
			ik_rb_entry(from, type, rbfield)->augfield;			\
	}										\
	storage void name##_rotate(struct ik_rb_node *old, struct ik_rb_node *top,	\
				   void *ctx_)						\
	{										\
		(void)ctx_;								\
		type *o_ = ik_rb_entry(old, type, rbfield);				\
		ik_rb_entry(top, type, rbfield)->augfield = o_->augfield;		\
		o_->augfield = compute(o_);						\
	}										\
	storage const struct ik_rb_augment name = {					\
		name##_propagate, name##_copy, name##_rotate				\
	}

/*
 * IK_RB_DECLARE_CALLBACKS_MAX - the common case: augfield is the maximum over
 * the subtree of a per-node value own(node).  Also defines
 * name##_compute(const type *).
 */
#define IK_RB_DECLARE_CALLBACKS_MAX(storage, name, type, rbfield, augfield, own)	\
	IK_INLINE __typeof__(((type *)0)->augfield) name##_compute(const type *n)	\
	{										\
		__typeof__(((type *)0)->augfield) m_ = own(n);				\
		if (n->rbfield.left) {							\
			const type *c_ = ik_rb_entry(n->rbfield.left, type, rbfield);	\
			if (c_->augfield > m_)						\
				m_ = c_->augfield;					\
		}									\
		if (n->rbfield.right) {							\
			const type *c_ = ik_rb_entry(n->rbfield.right, type, rbfield);	\
			if (c_->augfield > m_)						\
				m_ = c_->augfield;					\
		}									\
		return m_;								\
	}										\
	IK_RB_DECLARE_CALLBACKS(storage, name, type, rbfield, augfield, name##_compute)

/* ---- invariant checker ---- */

/* What ik_rb_check() returns: IK_RB_OK (0) or the first violation it found. */
enum ik_rb_check_err {
	IK_RB_OK = 0,
	IK_RB_BAD_PARENT = 1,	/* a child's parent link is wrong */
	IK_RB_BAD_ORDER = 2,	/* in-order neighbours compare > 0 */
	IK_RB_RED_RED = 3,	/* a red node has a red child */
	IK_RB_BLACK_HEIGHT = 4,	/* two paths differ in black nodes */
	IK_RB_RED_ROOT = 5,	/* the root is red */
	IK_RB_BAD_AUGMENT = 6,	/* aug_ok() returned false */
};

/* struct ik_rb_check_ctx - not API: ik_rb_check()'s state while it walks the tree. */
struct ik_rb_check_ctx {
	int (*cmp)(const struct ik_rb_node *a, const struct ik_rb_node *b); /* the order to
									       check, or NULL */
	bool (*aug_ok)(const struct ik_rb_node *n);	/* the augmented-value check, or NULL */
	const struct ik_rb_node *prev;	/* the previous node in order */
	const struct ik_rb_node *bad;	/* the node being checked (the offender on failure) */
	ik_size count;	/* nodes visited */
};

IK_INLINE int ik_rb_check_(const struct ik_rb_node *n, const struct ik_rb_node *parent,
			   struct ik_rb_check_ctx *c, int *black_height)
{
	int lh = 0, rh = 0, err;

	if (!n) {
		*black_height = 1;
		return IK_RB_OK;
	}
	c->bad = n;
	if (ik_rb_parent(n) != parent)
		return IK_RB_BAD_PARENT;
	if (ik_rb_is_red(n) && (ik_rb_is_red(n->left) || ik_rb_is_red(n->right)))
		return IK_RB_RED_RED;
	err = ik_rb_check_(n->left, n, c, &lh);
	if (err)
		return err;
	c->bad = n;
	if (c->cmp && c->prev && c->cmp(c->prev, n) > 0)
		return IK_RB_BAD_ORDER;
	if (c->aug_ok && !c->aug_ok(n))
		return IK_RB_BAD_AUGMENT;
	c->prev = n;
	c->count++;
	err = ik_rb_check_(n->right, n, c, &rh);
	if (err)
		return err;
	c->bad = n;
	if (lh != rh)
		return IK_RB_BLACK_HEIGHT;
	*black_height = lh + (ik_rb_is_black(n) ? 1 : 0);
	return IK_RB_OK;
}

/*
 * ik_rb_check - verify every invariant of the tree (see the contract above).
 * `cmp` (may be NULL: order not checked) compares two nodes like strcmp;
 * `aug_ok` (may be NULL) returns whether a node's augmented value is what its
 * compute function gives.  Returns IK_RB_OK (0) or the first violation found;
 * *bad (if not NULL) gets the offending node and *count (if not NULL) the
 * number of nodes visited.  O(n) time, O(height) stack.
 */
IK_INLINE int ik_rb_check(const struct ik_rb_root *root,
			  int (*cmp)(const struct ik_rb_node *a, const struct ik_rb_node *b),
			  bool (*aug_ok)(const struct ik_rb_node *n),
			  const struct ik_rb_node **bad, ik_size *count)
{
	struct ik_rb_check_ctx c = { cmp, aug_ok, NULL, NULL, 0 };
	int h, err;

	if (root->node && ik_rb_is_red(root->node)) {
		c.bad = root->node;
		err = IK_RB_RED_ROOT;
	} else {
		err = ik_rb_check_(root->node, NULL, &c, &h);
	}
	if (bad)
		*bad = err ? c.bad : NULL;
	if (count)
		*count = c.count;
	return err;
}

IK_END_DECLS

#endif /* IOMMUKIT_RBTREE_H */
