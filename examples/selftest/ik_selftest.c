/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The self-test's runner: the case tables of every landed unit, the counting
 * allocator, and the hooks' defaults.  Freestanding: <iommukit/...> only.
 */
#include "st_internal.h"

struct ik_st_unit {
	const char *name;
	const struct ik_st_case *cases;
	const unsigned *ncases;
};

static const struct ik_st_unit units[] = {
	{ "env atomic lock rbtree", ik_st_core_cases, &ik_st_core_ncases },
	{ "iova", ik_st_iova_cases, &ik_st_iova_ncases },
	{ "pgtable", ik_st_pgtable_cases, &ik_st_pgtable_ncases },
	{ "cmdq", ik_st_cmdq_cases, &ik_st_cmdq_ncases },
};

const char *ik_selftest_units(void)
{
	static char buf[128];
	ik_size n = 0;
	unsigned i;
	const char *p;

	if (buf[0])
		return buf;
	for (i = 0; i < IK_ARRAY_SIZE(units); i++) {
		if (!*units[i].ncases)
			continue;
		if (n && n + 1 < sizeof(buf))
			buf[n++] = ' ';
		for (p = units[i].name; *p && n + 1 < sizeof(buf); p++)
			buf[n++] = *p;
	}
	buf[n] = '\0';
	return buf;
}

unsigned ik_selftest_count(void)
{
	unsigned i, n = 0;

	for (i = 0; i < IK_ARRAY_SIZE(units); i++)
		n += *units[i].ncases;
	return n;
}

void ik_st_fail(struct ik_st *t, const char *file, int line, const char *expr)
{
	if (t->failed)
		return;
	t->failed = true;
	t->file = file;
	t->line = line;
	t->expr = expr;
}

static bool st_fault(struct ik_st_alloc *a)
{
	a->calls++;
	if (a->fail_at && a->calls == a->fail_at) {
		a->failures++;
		return true;
	}
	return false;
}

bool ik_st_alloc_fault(struct ik_st *t)
{
	return st_fault(&t->alloc);
}

static void *st_alloc(void *ctx, ik_size size, ik_size align)
{
	struct ik_st_alloc *a = (struct ik_st_alloc *)ctx;
	void *p;

	if (st_fault(a))
		return NULL;
	p = IK_ENV_ALLOC(size, align);
	if (p)
		a->live++;
	return p;
}

static void st_free(void *ctx, void *ptr, ik_size size)
{
	struct ik_st_alloc *a = (struct ik_st_alloc *)ctx;

	a->live--;
	IK_ENV_FREE(ptr, size);
}

void ik_st_alloc_arm(struct ik_st *t, long n)
{
	t->alloc.calls = 0;
	t->alloc.fail_at = n;
}

ik_u64 ik_st_rand(struct ik_st *t)
{
	ik_u64 z = (t->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

ik_u64 ik_st_below(struct ik_st *t, ik_u64 n)
{
	return ik_st_rand(t) % n;
}

void *ik_st_page_alloc(struct ik_st *t, ik_size size, ik_u64 *dma)
{
	const struct ik_selftest_host *h = t->host;
	void *p;

	if (h->page_alloc) {
		p = h->page_alloc(h->ctx, size, dma);
	} else {
		p = IK_ENV_ALLOC(size, size);
		if (p) {
			IK_ENV_MEMSET(p, 0, size);
			*dma = (ik_u64)(ik_uptr)p;
		}
	}
	if (p)
		t->pages_live++;
	return p;
}

void ik_st_page_free(struct ik_st *t, void *va, ik_u64 dma, ik_size size)
{
	const struct ik_selftest_host *h = t->host;

	t->pages_live--;
	if (h->page_free)
		h->page_free(h->ctx, va, dma, size);
	else
		IK_ENV_FREE(va, size);
}

void ik_st_clean(struct ik_st *t, const void *p, ik_size len)
{
	const struct ik_selftest_host *h = t->host;

	t->cleans++;
	if (h->clean)
		h->clean(h->ctx, p, len);
}

static void run_case(struct ik_st *t, const struct ik_st_case *c, unsigned index)
{
	t->failed = false;
	t->file = NULL;
	t->line = 0;
	t->expr = NULL;
	t->alloc.calls = 0;
	t->alloc.fail_at = 0;
	t->alloc.live = 0;
	t->alloc.failures = 0;
	t->pages_live = 0;
	t->rng = 0x1f0e3d2c4b5a6978ull ^ ((ik_u64)index << 32);
	c->fn(t);
	if (!t->failed && t->alloc.live != 0)
		ik_st_fail(t, ST_FILE, __LINE__, "no allocation left live after the case");
	if (!t->failed && t->pages_live != 0)
		ik_st_fail(t, ST_FILE, __LINE__, "no table page left live after the case");
	t->host->report(t->host->ctx, index, c->name, !t->failed, t->file, t->line, t->expr);
}

int ik_selftest_run(const struct ik_selftest_host *host, struct ik_selftest_result *res)
{
	struct ik_st t;
	unsigned u, i, index = 0, passed = 0, failed = 0;

	if (!host || !host->report || (host->page_alloc && !host->page_free))
		return -EINVAL;
	IK_ENV_MEMSET(&t, 0, sizeof(t));
	t.host = host;
	t.alloc.a.alloc = st_alloc;
	t.alloc.a.free = st_free;
	t.alloc.a.ctx = &t.alloc;
	for (u = 0; u < IK_ARRAY_SIZE(units); u++) {
		for (i = 0; i < *units[u].ncases; i++) {
			run_case(&t, &units[u].cases[i], ++index);
			if (t.failed)
				failed++;
			else
				passed++;
		}
	}
	if (res) {
		res->passed = passed;
		res->failed = failed;
		res->cleans = t.cleans;
	}
	return failed ? -EIO : 0;
}
