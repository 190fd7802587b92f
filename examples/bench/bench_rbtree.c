/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit-bench rbtree: cost of the intrusive red-black tree, plain and
 * augmented (subtree maximum), for random keys: ns per insert, lookup and
 * erase, and augmented-value computations per insert/erase (a count, stable
 * across machines, that shows propagation stopping early).
 */
#include <stdlib.h>
#include <string.h>
#include <iommukit/rbtree.h>
#include "bench.h"

struct bnode {
	struct ik_rb_node rb;
	uint64_t key;
	uint64_t val, max;
};

static uint64_t computes;

static uint64_t bnode_own(const struct bnode *n)
{
	computes++;
	return n->val;
}

IK_RB_DECLARE_CALLBACKS_MAX(static, baug, struct bnode, rb, max, bnode_own);

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static void binsert(struct ik_rb_root *root, struct bnode *n, bool aug)
{
	struct ik_rb_node **link = &root->node, *parent = NULL;

	while (*link) {
		parent = *link;
		link = n->key < ik_rb_entry(parent, struct bnode, rb)->key ? &parent->left
									    : &parent->right;
	}
	ik_rb_link_node(&n->rb, parent, link);
	if (aug)
		ik_rb_insert_augmented(&n->rb, root, &baug);
	else
		ik_rb_insert(&n->rb, root);
}

static struct bnode *bfind(struct ik_rb_root *root, uint64_t key)
{
	struct ik_rb_node *rb = root->node;

	while (rb) {
		struct bnode *c = ik_rb_entry(rb, struct bnode, rb);

		if (key == c->key)
			return c;
		rb = key < c->key ? rb->left : rb->right;
	}
	return NULL;
}

static const struct option rbtree_opts[] = {
	BENCH_OPTS_COMMON, BENCH_OPTS_JSON, BENCH_OPTS_QUICK, BENCH_OPTS_SEED, BENCH_OPTS_END,
};

static void rbtree_help(void)
{
	printf("usage: iommukit-bench rbtree [--quick] [--json] [--seed N]\n"
	       "  insert, lookup and erase of n random keys (n = 1e3, 1e5, 1e6),\n"
	       "  plain and augmented; ns per operation and computes per update.\n");
}

int bench_rbtree(int argc, char **argv, struct bench_opts *o)
{
	size_t sizes[] = { 1000, 100000, 1000000 };
	size_t nsizes;
	struct bench_parse p;

	bench_parse_init(&p, "rbtree", rbtree_opts, rbtree_help, o, argc, argv);
	if (bench_next_opt(&p) < 0)	/* no options of its own */
		return p.status;
	nsizes = o->quick ? 2 : 3;
	if (!o->json)
		printf("rbtree: random keys, ns per operation (computes = augmented-value\n"
		       "computations per insert/erase, a count that shows early stop)\n\n"
		       "%-10s %-9s %10s %10s %10s %12s\n", "n", "tree", "insert", "lookup",
		       "erase", "computes/op");
	for (size_t s = 0; s < nsizes; s++) {
		size_t n = sizes[s];
		struct bnode *nodes = calloc(n, sizeof(*nodes));

		if (!nodes)
			return 1;
		for (int aug = 0; aug < 2; aug++) {
			struct ik_rb_root root = IK_RB_ROOT_INIT;
			uint64_t t0, t1, t2, t3, found = 0, c0;

			for (size_t i = 0; i < n; i++) {
				nodes[i].key = mix(i + o->seed * 0x9e3779b97f4a7c15ull);
				nodes[i].val = mix(nodes[i].key) >> 20;
			}
			computes = 0;
			t0 = bench_now_ns();
			for (size_t i = 0; i < n; i++)
				binsert(&root, &nodes[i], aug);
			t1 = bench_now_ns();
			for (size_t i = 0; i < n; i++)
				found += bfind(&root, nodes[(i * 7919) % n].key) != NULL;
			t2 = bench_now_ns();
			c0 = computes;
			for (size_t i = 0; i < n; i++) {
				if (aug)
					ik_rb_erase_augmented(&nodes[i].rb, &root, &baug);
				else
					ik_rb_erase(&nodes[i].rb, &root);
			}
			t3 = bench_now_ns();
			if (found != n || !ik_rb_empty(&root)) {
				fprintf(stderr, "iommukit-bench rbtree: tree lost nodes\n");
				free(nodes);
				return 1;
			}
			double ci = (double)c0 / (double)n, ins = (double)(t1 - t0) / (double)n,
			       look = (double)(t2 - t1) / (double)n, er = (double)(t3 - t2) / (double)n;
			if (o->json)
				printf("{\"bench\":\"rbtree\",\"n\":%zu,\"tree\":\"%s\",\"insert_ns\":%.1f,"
				       "\"lookup_ns\":%.1f,\"erase_ns\":%.1f,\"computes_per_insert\":%.2f,"
				       "\"computes_per_erase\":%.2f}\n",
				       n, aug ? "augmented" : "plain", ins, look, er, ci,
				       (double)(computes - c0) / (double)n);
			else
				printf("%-10zu %-9s %10.1f %10.1f %10.1f %12.2f\n", n,
				       aug ? "augmented" : "plain", ins, look, er,
				       aug ? (double)computes / (2.0 * (double)n) : 0.0);
		}
		free(nodes);
	}
	return 0;
}
