// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * iommukit_selftest.ko: iommukit's sources, compiled unchanged against
 * ik_env_linux.h, and a module whose init runs the built-in self-test and
 * prints one line per case to the kernel log:
 *
 *   iommukit-selftest: ok 3 - env_cpu_time_yield
 *   iommukit-selftest: not ok 9 - ...   (then a line naming the failed check)
 *   iommukit-selftest: done: 12 passed, 0 failed
 *
 * The module stays loaded (init returns 0 even on failure, so the log can be
 * read and the module removed); its exit does nothing.  Table pages for the
 * page-table cases come from alloc_pages(); their device address is
 * virt_to_phys().  On x86 the clean hook is clflush_cache_range().
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/printk.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <asm/io.h>
#ifdef CONFIG_X86
#include <asm/cacheflush.h>
#endif
#include "ik_selftest.h"

#define IK_MOD_PREFIX "iommukit-selftest: "

static void *ik_mod_page_alloc(void *ctx, ik_size size, ik_u64 *dma)
{
	struct page *pg = alloc_pages(GFP_KERNEL | __GFP_ZERO, get_order(size));
	void *va;

	(void)ctx;
	if (!pg)
		return NULL;
	va = page_address(pg);
	*dma = (ik_u64)virt_to_phys(va);
	return va;
}

static void ik_mod_page_free(void *ctx, void *va, ik_u64 dma, ik_size size)
{
	(void)ctx;
	(void)dma;
	free_pages((unsigned long)va, get_order(size));
}

#ifdef CONFIG_X86
static void ik_mod_clean(void *ctx, const void *p, ik_size len)
{
	(void)ctx;
	clflush_cache_range((void *)p, (unsigned int)len);
}
#define IK_MOD_CLEAN ik_mod_clean
#define IK_MOD_CLEAN_NAME "clflush_cache_range"
#else
#define IK_MOD_CLEAN NULL
#define IK_MOD_CLEAN_NAME NULL
#endif

static void ik_mod_report(void *ctx, unsigned int index, const char *name, bool pass,
			  const char *file, int line, const char *expr)
{
	(void)ctx;
	if (pass) {
		pr_info(IK_MOD_PREFIX "ok %u - %s\n", index, name);
	} else {
		pr_err(IK_MOD_PREFIX "not ok %u - %s\n", index, name);
		pr_err(IK_MOD_PREFIX "# %s:%d: check failed: %s\n", file, line, expr);
	}
}

static int __init ik_mod_init(void)
{
	struct ik_selftest_host host = {
		.report = ik_mod_report,
		.page_alloc = ik_mod_page_alloc,
		.page_free = ik_mod_page_free,
		.clean = IK_MOD_CLEAN,
		.clean_name = IK_MOD_CLEAN_NAME,
	};
	struct ik_selftest_result res = { 0 };
	int rc;

	pr_info(IK_MOD_PREFIX "1..%u\n", ik_selftest_count());
	pr_info(IK_MOD_PREFIX "# iommukit %s, env %s, units: %s, %u CPUs\n", ik_version(),
		IK_ENV_NAME, ik_selftest_units(), IK_ENV_NR_CPUS());
	rc = ik_selftest_run(&host, &res);
	pr_info(IK_MOD_PREFIX "done: %u passed, %u failed, %llu cleans (rc %d)\n", res.passed,
		res.failed, (unsigned long long)res.cleans, rc);
	return 0;
}

static void __exit ik_mod_exit(void)
{
}

module_init(ik_mod_init);
module_exit(ik_mod_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("iommukit built-in self-test, library sources compiled unchanged");
