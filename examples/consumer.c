/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The smallest program that uses iommukit through pkg-config:
 *
 *   cc consumer.c $(pkg-config --cflags --libs iommukit)
 *
 * It keeps a few IOVA-like ranges in an intrusive red-black tree augmented
 * with "largest range in this subtree", and prints them in order.
 */
#include <stdio.h>
#include <iommukit/rbtree.h>

struct range {
	struct ik_rb_node rb;
	unsigned long lo, hi;
	unsigned long largest; /* augmented: max (hi - lo + 1) in subtree */
};

static unsigned long range_size(const struct range *r)
{
	return r->hi - r->lo + 1;
}

IK_RB_DECLARE_CALLBACKS_MAX(static, range_aug, struct range, rb, largest, range_size);

static void range_insert(struct ik_rb_root *root, struct range *r)
{
	struct ik_rb_node **link = &root->node, *parent = NULL;

	while (*link) {
		parent = *link;
		if (r->lo < ik_rb_entry(parent, struct range, rb)->lo)
			link = &parent->left;
		else
			link = &parent->right;
	}
	ik_rb_link_node(&r->rb, parent, link);
	ik_rb_insert_augmented(&r->rb, root, &range_aug);
}

int main(void)
{
	struct range r[] = {
		{ .lo = 0x1000, .hi = 0x1fff }, { .lo = 0x100, .hi = 0x1ff },
		{ .lo = 0x8000, .hi = 0xffff }, { .lo = 0x400, .hi = 0x403 },
	};
	struct ik_rb_root root = IK_RB_ROOT_INIT;
	struct ik_rb_node *n;
	unsigned i;

	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		range_insert(&root, &r[i]);
	for (n = ik_rb_first(&root); n; n = ik_rb_next(n)) {
		struct range *x = ik_rb_entry(n, struct range, rb);

		printf("[%#lx, %#lx]\n", x->lo, x->hi);
	}
	printf("largest range: %lu pages; iommukit %s; ENOSPC means \"%s\"\n",
	       ik_rb_entry(root.node, struct range, rb)->largest, ik_version(),
	       ik_strerror(-ENOSPC));
	return ik_rb_entry(root.node, struct range, rb)->largest == 0x8000 ? 0 : 1;
}
