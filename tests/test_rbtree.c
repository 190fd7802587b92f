/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * rbtree: randomized insert/erase against a reference model, with the
 * invariant checker every few steps; the augmented subtree-max case against
 * brute force; edge cases of the contract in <iommukit/rbtree.h>.
 */
#include <stdlib.h>
#include <string.h>
#include <iommukit/rbtree.h>
#include "testlib.h"

#define KEYS 4096u

struct tnode {
	struct ik_rb_node rb;
	uint32_t key;
	uint32_t val; /* own value */
	uint32_t max; /* augmented: max val in subtree */
};

static long compute_calls;

static uint32_t tnode_own(const struct tnode *n)
{
	compute_calls++;
	return n->val;
}

IK_RB_DECLARE_CALLBACKS_MAX(static, tmax, struct tnode, rb, max, tnode_own);

static struct tnode *T(const struct ik_rb_node *rb)
{
	return rb ? ik_rb_entry(rb, struct tnode, rb) : NULL;
}

static int tcmp(const struct ik_rb_node *a, const struct ik_rb_node *b)
{
	uint32_t x = T(a)->key, y = T(b)->key;

	return x < y ? -1 : x > y;
}

static bool taug_ok(const struct ik_rb_node *rb)
{
	struct tnode *n = T(rb);
	long saved = compute_calls;
	bool ok = tmax_compute(n) == n->max;

	compute_calls = saved;
	return ok;
}

/* Descend by key; link and insert.  Returns false if the key exists. */
static bool tinsert(struct ik_rb_root *root, struct tnode *n, bool aug)
{
	struct ik_rb_node **link = &root->node, *parent = NULL;

	while (*link) {
		struct tnode *cur = T(*link);

		parent = *link;
		if (n->key < cur->key)
			link = &parent->left;
		else if (n->key > cur->key)
			link = &parent->right;
		else
			return false;
	}
	ik_rb_link_node(&n->rb, parent, link);
	if (aug)
		ik_rb_insert_augmented(&n->rb, root, &tmax);
	else
		ik_rb_insert(&n->rb, root);
	return true;
}

static struct tnode *tfind(struct ik_rb_root *root, uint32_t key)
{
	struct ik_rb_node *rb = root->node;

	while (rb) {
		struct tnode *cur = T(rb);

		if (key < cur->key)
			rb = rb->left;
		else if (key > cur->key)
			rb = rb->right;
		else
			return cur;
	}
	return NULL;
}

/* Leftmost node with val >= t, pruning with the augmented max. */
static struct tnode *tfirst_at_least(struct ik_rb_root *root, uint32_t t)
{
	struct ik_rb_node *rb = root->node;

	if (!rb || T(rb)->max < t)
		return NULL;
	for (;;) {
		if (rb->left && T(rb->left)->max >= t)
			rb = rb->left;
		else if (T(rb)->val >= t)
			return T(rb);
		else
			rb = rb->right; /* its max must be >= t */
	}
}

static void check_tree(struct ik_rb_root *root, bool aug, struct tnode *nodes,
		       const bool *present, size_t npresent)
{
	const struct ik_rb_node *bad;
	size_t count = 0;
	int err = ik_rb_check(root, tcmp, aug ? taug_ok : NULL, &bad, &count);
	struct ik_rb_node *rb;
	uint32_t k = 0;

	IK_REQUIRE_MSG(err == IK_RB_OK, "rb_check failed: %d at key %u", err,
		      bad ? T(bad)->key : 0);
	IK_REQUIRE(count == npresent);
	/* Forward walk matches the model. */
	for (rb = ik_rb_first(root); rb; rb = ik_rb_next(rb)) {
		while (k < KEYS && !present[k])
			k++;
		IK_REQUIRE(k < KEYS);
		IK_REQUIRE(T(rb) == &nodes[k]);
		k++;
	}
	while (k < KEYS)
		IK_REQUIRE(!present[k++]);
	/* Backward walk too. */
	k = KEYS;
	for (rb = ik_rb_last(root); rb; rb = ik_rb_prev(rb)) {
		do {
			k--;
		} while (!present[k]);
		IK_REQUIRE(T(rb) == &nodes[k]);
	}
}

static void random_run(uint64_t seed, long ops, bool aug)
{
	struct tnode *nodes = calloc(KEYS, sizeof(*nodes));
	bool *present = calloc(KEYS, sizeof(*present));
	struct ik_rb_root root = IK_RB_ROOT_INIT;
	struct ik_rng rng = { seed };
	size_t npresent = 0;
	long i;

	IK_REQUIRE(nodes != NULL);
	IK_REQUIRE(present != NULL);
	for (uint32_t k = 0; k < KEYS; k++)
		nodes[k].key = k;
	for (i = 0; i < ops; i++) {
		uint32_t k = (uint32_t)ik_rng_below(&rng, KEYS);
		/* Insert if absent, erase if present: the tree hovers near KEYS/2. */
		bool ins = !present[k];

		if (ins) {
			nodes[k].val = (uint32_t)ik_rng_below(&rng, 1u << 20);
			IK_REQUIRE(tinsert(&root, &nodes[k], aug));
			present[k] = true;
			npresent++;
		} else {
			IK_REQUIRE(tfind(&root, k) == &nodes[k]);
			if (aug)
				ik_rb_erase_augmented(&nodes[k].rb, &root, &tmax);
			else
				ik_rb_erase(&nodes[k].rb, &root);
			present[k] = false;
			npresent--;
			IK_REQUIRE(tfind(&root, k) == NULL);
		}
		if (aug && (i & 63) == 0) {
			/* Augmented queries against brute force. */
			uint32_t t = (uint32_t)ik_rng_below(&rng, 1u << 20), best = 0;
			struct tnode *want = NULL;

			for (uint32_t j = 0; j < KEYS; j++) {
				if (!present[j])
					continue;
				if (nodes[j].val > best)
					best = nodes[j].val;
				if (!want && nodes[j].val >= t)
					want = &nodes[j];
			}
			if (npresent)
				IK_REQUIRE(T(root.node)->max == best);
			IK_REQUIRE(tfirst_at_least(&root, t) == want);
		}
		if (i % 4096 == 0)
			check_tree(&root, aug, nodes, present, npresent);
	}
	check_tree(&root, aug, nodes, present, npresent);
	free(nodes);
	free(present);
}

START_TEST(random_plain_matches_model)
{
	/* 4 seeds x 300k operations = 1.2M. */
	random_run(0x1234u + (uint64_t)_i, ik_test_iters(300000), false);
}
END_TEST

START_TEST(random_augmented_matches_brute_force)
{
	random_run(0xabcdu + (uint64_t)_i, ik_test_iters(300000), true);
}
END_TEST

START_TEST(empty_tree)
{
	struct ik_rb_root root = IK_RB_ROOT_INIT;
	size_t count = 99;

	ck_assert(ik_rb_empty(&root));
	ck_assert_ptr_null(ik_rb_first(&root));
	ck_assert_ptr_null(ik_rb_last(&root));
	ck_assert_ptr_null(ik_rb_first_postorder(&root));
	ck_assert_int_eq(ik_rb_check(&root, tcmp, taug_ok, NULL, &count), IK_RB_OK);
	ck_assert_uint_eq(count, 0);
}
END_TEST

START_TEST(one_node_then_erase_root)
{
	struct ik_rb_root root = IK_RB_ROOT_INIT;
	struct tnode n = { .key = 7, .val = 3 };

	ck_assert(tinsert(&root, &n, true));
	ck_assert(!ik_rb_empty(&root));
	ck_assert_ptr_eq(ik_rb_first(&root), &n.rb);
	ck_assert_ptr_eq(ik_rb_last(&root), &n.rb);
	ck_assert_ptr_null(ik_rb_next(&n.rb));
	ck_assert_ptr_null(ik_rb_prev(&n.rb));
	ck_assert(ik_rb_is_black(&n.rb));
	ck_assert_uint_eq(n.max, 3);
	ck_assert_int_eq(ik_rb_check(&root, tcmp, taug_ok, NULL, NULL), IK_RB_OK);
	ik_rb_erase_augmented(&n.rb, &root, &tmax);
	ck_assert(ik_rb_empty(&root));
}
END_TEST

START_TEST(erase_root_repeatedly)
{
	struct tnode nodes[200];
	struct ik_rb_root root = IK_RB_ROOT_INIT;
	bool present[KEYS] = { false };
	size_t n = 200;

	for (uint32_t i = 0; i < 200; i++) {
		nodes[i].key = i * 3;
		nodes[i].val = i;
		ck_assert(tinsert(&root, &nodes[i], true));
	}
	while (!ik_rb_empty(&root)) {
		struct tnode *r = T(root.node);

		ik_rb_erase_augmented(root.node, &root, &tmax);
		n--;
		ck_assert_int_eq(ik_rb_check(&root, tcmp, taug_ok, NULL, NULL), IK_RB_OK);
		(void)r;
	}
	ck_assert_uint_eq(n, 0);
	(void)present;
}
END_TEST

START_TEST(erase_during_iteration)
{
	struct tnode nodes[100];
	struct ik_rb_root root = IK_RB_ROOT_INIT;
	struct ik_rb_node *rb, *next;
	uint32_t seen = 0;
	size_t count;

	for (uint32_t i = 0; i < 100; i++) {
		nodes[i].key = i;
		nodes[i].val = 0;
		ck_assert(tinsert(&root, &nodes[i], false));
	}
	/* Erase every odd key while walking: take next before erasing. */
	for (rb = ik_rb_first(&root); rb; rb = next) {
		next = ik_rb_next(rb);
		ck_assert_uint_eq(T(rb)->key, seen);
		seen++;
		if (T(rb)->key & 1)
			ik_rb_erase(rb, &root);
	}
	ck_assert_uint_eq(seen, 100);
	ck_assert_int_eq(ik_rb_check(&root, tcmp, NULL, NULL, &count), IK_RB_OK);
	ck_assert_uint_eq(count, 50);
	for (rb = ik_rb_first(&root), seen = 0; rb; rb = ik_rb_next(rb), seen += 2)
		ck_assert_uint_eq(T(rb)->key, seen);
}
END_TEST

START_TEST(postorder_visits_children_first)
{
	struct tnode nodes[64];
	struct ik_rb_root root = IK_RB_ROOT_INIT;
	bool visited[64] = { false };
	struct ik_rb_node *rb;
	int n = 0;

	for (uint32_t i = 0; i < 64; i++) {
		nodes[i].key = (i * 37) % 64;
		ck_assert(tinsert(&root, &nodes[i], false));
	}
	for (rb = ik_rb_first_postorder(&root); rb; rb = ik_rb_next_postorder(rb)) {
		if (rb->left)
			ck_assert(visited[T(rb->left) - nodes]);
		if (rb->right)
			ck_assert(visited[T(rb->right) - nodes]);
		visited[T(rb) - nodes] = true;
		n++;
	}
	ck_assert_int_eq(n, 64);
}
END_TEST

START_TEST(replace_keeps_shape)
{
	struct tnode nodes[31], repl = { .key = 15, .val = 0 };
	struct ik_rb_root root = IK_RB_ROOT_INIT;

	for (uint32_t i = 0; i < 31; i++) {
		nodes[i].key = i;
		nodes[i].val = i;
		ck_assert(tinsert(&root, &nodes[i], true));
	}
	repl.val = nodes[15].val;
	ik_rb_replace_node(&nodes[15].rb, &repl.rb, &root);
	tmax_copy(&nodes[15].rb, &repl.rb, NULL);
	ck_assert_ptr_eq(tfind(&root, 15), &repl);
	ck_assert_int_eq(ik_rb_check(&root, tcmp, taug_ok, NULL, NULL), IK_RB_OK);
	/* Changing its own value and propagating keeps the augmentation right. */
	repl.val = 1000;
	tmax_propagate(&repl.rb, NULL, NULL);
	ck_assert_int_eq(ik_rb_check(&root, tcmp, taug_ok, NULL, NULL), IK_RB_OK);
	ck_assert_uint_eq(T(root.node)->max, 1000);
}
END_TEST

/*
 * Callbacks with a context: a wrapper around the generated callbacks that
 * records what ctx each call receives.  The _ctx calls hand their ctx to
 * every callback; the plain calls hand NULL.
 */
struct ctx_log {
	long calls, wrong;
	void *want;
};

static struct ctx_log *ctx_seen;

static void ctx_note(void *ctx)
{
	ctx_seen->calls++;
	if (ctx != ctx_seen->want)
		ctx_seen->wrong++;
}

static void cprop(struct ik_rb_node *n, struct ik_rb_node *stop, void *ctx)
{
	ctx_note(ctx);
	tmax_propagate(n, stop, ctx);
}

static void ccopy(struct ik_rb_node *from, struct ik_rb_node *to, void *ctx)
{
	ctx_note(ctx);
	tmax_copy(from, to, ctx);
}

static void crot(struct ik_rb_node *old, struct ik_rb_node *top, void *ctx)
{
	ctx_note(ctx);
	tmax_rotate(old, top, ctx);
}

static const struct ik_rb_augment ctx_aug = { cprop, ccopy, crot };

/* Insert n with ctx (or with the plain call when plain is set). */
static void cinsert(struct ik_rb_root *root, struct tnode *n, void *ctx, bool plain)
{
	struct ik_rb_node **link = &root->node, *parent = NULL;

	while (*link) {
		parent = *link;
		link = n->key < T(parent)->key ? &parent->left : &parent->right;
	}
	ik_rb_link_node(&n->rb, parent, link);
	if (plain)
		ik_rb_insert_augmented(&n->rb, root, &ctx_aug);
	else
		ik_rb_insert_augmented_ctx(&n->rb, root, &ctx_aug, ctx);
}

START_TEST(callbacks_receive_the_context)
{
	enum { N = 500 };
	struct tnode *nodes = calloc(N, sizeof(*nodes));
	struct ik_rb_root root = IK_RB_ROOT_INIT;
	struct ctx_log log = { 0, 0, NULL };
	int owner;

	ck_assert_ptr_nonnull(nodes);
	ctx_seen = &log;
	log.want = &owner;
	for (uint32_t i = 0; i < N; i++) {
		nodes[i].key = (i * 7919u) % N; /* a permutation: rotations of every kind */
		nodes[i].val = (i * 31u) % 97u;
		cinsert(&root, &nodes[i], &owner, false);
	}
	ck_assert_int_eq(ik_rb_check(&root, tcmp, taug_ok, NULL, NULL), IK_RB_OK);
	for (uint32_t i = 0; i < N; i += 2) /* erases: copy, propagate, rotate */
		ik_rb_erase_augmented_ctx(&nodes[i].rb, &root, &ctx_aug, &owner);
	ck_assert_int_eq(ik_rb_check(&root, tcmp, taug_ok, NULL, NULL), IK_RB_OK);
	ck_assert_int_gt(log.calls, N);
	ck_assert_int_eq(log.wrong, 0);
	/* the plain calls pass NULL */
	log.want = NULL;
	log.calls = 0;
	for (uint32_t i = 0; i < N; i += 2)
		cinsert(&root, &nodes[i], NULL, true);
	for (uint32_t i = 1; i < N; i += 2)
		ik_rb_erase_augmented(&nodes[i].rb, &root, &ctx_aug);
	ck_assert_int_eq(ik_rb_check(&root, tcmp, taug_ok, NULL, NULL), IK_RB_OK);
	ck_assert_int_gt(log.calls, N / 2);
	ck_assert_int_eq(log.wrong, 0);
	ctx_seen = NULL;
	free(nodes);
}
END_TEST

START_TEST(propagation_stops_early)
{
	enum { N = 4000 };
	struct tnode *nodes = calloc(N + 1, sizeof(*nodes));
	struct ik_rb_root root = IK_RB_ROOT_INIT;

	ck_assert_ptr_nonnull(nodes);
	for (uint32_t i = 0; i < N; i++) {
		nodes[i].key = 2 * i + 1;
		nodes[i].val = 100 + i;
		ck_assert(tinsert(&root, &nodes[i], true));
	}
	/*
	 * A new leaf with the smallest value changes no ancestor: the compute
	 * calls are the leaf, its parent, and one per rotation (at most 2),
	 * whatever the height (about 2 log2 N = 24 here).
	 */
	nodes[N].key = 2000;
	nodes[N].val = 0;
	compute_calls = 0;
	ck_assert(tinsert(&root, &nodes[N], true));
	ck_assert_int_le(compute_calls, 3 * 4);
	ck_assert_int_eq(ik_rb_check(&root, tcmp, taug_ok, NULL, NULL), IK_RB_OK);
	free(nodes);
}
END_TEST

START_TEST(checker_catches_broken_trees)
{
	struct tnode nodes[15];
	struct ik_rb_root root = IK_RB_ROOT_INIT;
	const struct ik_rb_node *bad;
	uint32_t k;

	for (uint32_t i = 0; i < 15; i++) {
		nodes[i].key = i;
		nodes[i].val = i;
		ck_assert(tinsert(&root, &nodes[i], true));
	}
	ck_assert_int_eq(ik_rb_check(&root, tcmp, taug_ok, NULL, NULL), IK_RB_OK);

	/* Order: swap two keys. */
	k = nodes[3].key;
	nodes[3].key = nodes[4].key;
	nodes[4].key = k;
	ck_assert_int_eq(ik_rb_check(&root, tcmp, NULL, &bad, NULL), IK_RB_BAD_ORDER);
	nodes[4].key = nodes[3].key;
	nodes[3].key = k;

	/* Augmented value. */
	nodes[5].max += 1000;
	ck_assert_int_eq(ik_rb_check(&root, tcmp, taug_ok, &bad, NULL), IK_RB_BAD_AUGMENT);
	ck_assert_ptr_eq(bad, &nodes[5].rb);
	nodes[5].max -= 1000;

	/* Red root. */
	ik_rb_set_color_(root.node, IK_RB_RED);
	ck_assert_int_eq(ik_rb_check(&root, tcmp, NULL, NULL, NULL), IK_RB_RED_ROOT);
	ik_rb_set_color_(root.node, IK_RB_BLACK);

	/* Black height: recolour one leaf-level black node red where its parent
	 * is black, or a red one black. */
	{
		struct ik_rb_node *leaf = ik_rb_first(&root);
		unsigned c = ik_rb_color(leaf);

		ik_rb_set_color_(leaf, c == IK_RB_RED ? IK_RB_BLACK : IK_RB_RED);
		int err = ik_rb_check(&root, tcmp, NULL, NULL, NULL);

		ck_assert(err == IK_RB_BLACK_HEIGHT || err == IK_RB_RED_RED);
		ik_rb_set_color_(leaf, c);
	}

	/* Parent link. */
	{
		struct ik_rb_node *leaf = ik_rb_last(&root);
		struct ik_rb_node *p = ik_rb_parent(leaf);

		ik_rb_set_parent_(leaf, leaf);
		ck_assert_int_eq(ik_rb_check(&root, tcmp, NULL, NULL, NULL), IK_RB_BAD_PARENT);
		ik_rb_set_parent_(leaf, p);
	}
	ck_assert_int_eq(ik_rb_check(&root, tcmp, taug_ok, NULL, NULL), IK_RB_OK);
}
END_TEST

START_TEST(sequential_inserts_stay_balanced)
{
	enum { N = 1 << 16 };
	struct tnode *nodes = calloc(N, sizeof(*nodes));
	struct ik_rb_root root = IK_RB_ROOT_INIT;
	int depth = 0;
	struct ik_rb_node *rb;

	ck_assert_ptr_nonnull(nodes);
	for (uint32_t i = 0; i < N; i++) {
		nodes[i].key = i;
		ck_assert(tinsert(&root, &nodes[i], false));
	}
	/* Height of a red-black tree <= 2 log2(n + 1). */
	for (rb = ik_rb_last(&root); rb; rb = ik_rb_parent(rb))
		depth++;
	ck_assert_int_le(depth, 2 * 17);
	ck_assert_int_eq(ik_rb_check(&root, tcmp, NULL, NULL, NULL), IK_RB_OK);
	free(nodes);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("rbtree");
	TCase *tc = tcase_create("contract");
	TCase *rnd = tcase_create("random");

	tcase_add_test(tc, empty_tree);
	tcase_add_test(tc, one_node_then_erase_root);
	tcase_add_test(tc, erase_root_repeatedly);
	tcase_add_test(tc, erase_during_iteration);
	tcase_add_test(tc, postorder_visits_children_first);
	tcase_add_test(tc, replace_keeps_shape);
	tcase_add_test(tc, propagation_stops_early);
	tcase_add_test(tc, callbacks_receive_the_context);
	tcase_add_test(tc, checker_catches_broken_trees);
	tcase_add_test(tc, sequential_inserts_stay_balanced);
	suite_add_tcase(s, tc);

	tcase_set_timeout(rnd, 600);
	tcase_add_loop_test(rnd, random_plain_matches_model, 0, 4);
	tcase_add_loop_test(rnd, random_augmented_matches_brute_force, 0, 4);
	suite_add_tcase(s, rnd);
	return s;
}
