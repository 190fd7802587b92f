/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The bare-metal image's C entry: run iommukit's self-test on the static
 * page pool and print one TAP line per case through the board's console.
 * start.S calls bm_main() on its own stack and passes the return value to
 * bm_board_exit().  After the run, the pool must be back to empty (no page
 * run or object left allocated): that is one more TAP line.
 */
#include <iommukit/env.h>
#include "ik_selftest.h"

int bm_main(void);

static void *bm_page_alloc(void *ctx, ik_size size, ik_u64 *dma)
{
	void *p = bm_alloc_pages(size);

	(void)ctx;
	if (p)
		*dma = (ik_u64)(ik_uptr)p;	/* identity-mapped: no MMU, or 1:1 */
	return p;
}

static void bm_page_free(void *ctx, void *va, ik_u64 dma, ik_size size)
{
	(void)ctx;
	(void)dma;
	(void)size;
	bm_free_pages(va);
}

static void bm_clean(void *ctx, const void *p, ik_size len)
{
	(void)ctx;
	bm_clean_dcache(p, len);
}

static void bm_report(void *ctx, unsigned index, const char *name, bool pass, const char *file,
		      int line, const char *expr)
{
	(void)ctx;
	bm_puts(pass ? "ok " : "not ok ");
	bm_put_uint(index);
	bm_puts(" - ");
	bm_puts(name);
	bm_puts("\n");
	if (!pass) {
		bm_puts("# ");
		bm_puts(file);
		bm_puts(":");
		bm_put_uint((unsigned long long)line);
		bm_puts(": check failed: ");
		bm_puts(expr);
		bm_puts("\n");
	}
}

int bm_main(void)
{
	struct ik_selftest_host host;
	struct ik_selftest_result res;
	unsigned n = ik_selftest_count();
	bool pool_ok;
	int rc;

	IK_ENV_MEMSET(&host, 0, sizeof(host));
	host.report = bm_report;
	host.page_alloc = bm_page_alloc;
	host.page_free = bm_page_free;
	host.clean = bm_clean;
#if defined(__aarch64__)
	host.clean_name = "dc-cvac";
#else
	host.clean_name = "clflush";
#endif
	bm_puts("1..");
	bm_put_uint(n + 1);
	bm_puts("\n# iommukit ");
	bm_puts(ik_version());
	bm_puts(" bare-metal self-test, env " IK_ENV_NAME ", units: ");
	bm_puts(ik_selftest_units());
	bm_puts(", clean: ");
	bm_puts(host.clean_name);
	bm_puts("\n");
	rc = ik_selftest_run(&host, &res);
	pool_ok = bm_pool_live() == 0;
	bm_puts(pool_ok ? "ok " : "not ok ");
	bm_put_uint(n + 1);
	bm_puts(" - static page pool has no allocation left\n# ");
	bm_put_uint(res.passed + (pool_ok ? 1 : 0));
	bm_puts(" passed, ");
	bm_put_uint(res.failed + (pool_ok ? 0 : 1));
	bm_puts(" failed, ");
	bm_put_uint(res.cleans);
	bm_puts(" cleans, ");
	bm_put_uint(bm_pool_pages_used());
	bm_puts(" pool pages held by size classes\n");
	return rc == 0 && pool_ok ? 0 : 1;
}
