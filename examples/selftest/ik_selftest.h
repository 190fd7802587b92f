/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ik_selftest.h - a built-in self-test of iommukit, for any host.
 *
 * What it is for: proving that a vendored copy of iommukit works where it was
 * vendored - in a Linux kernel module, in bare-metal firmware, in a hosted
 * program on another architecture - with the same test code everywhere.  The
 * self-test is freestanding: it includes only <iommukit/...> headers and
 * reaches the host only through the env (<iommukit/env.h>) and the few hooks
 * in struct ik_selftest_host below.  It never prints: each result goes to the
 * host's report() callback, and each host prints it its own way (TAP on
 * stdout, printk, a UART).
 *
 * It covers the units that have landed: the env contract (memory, CPU id,
 * time), atomics and the lock, the augmented red-black tree, and - where the
 * library has them - the IOVA allocator with its range caches, the page-table
 * formats and the command queue.  Every test checks that it left no memory
 * allocated (through a counting allocator passed to the units) and, where a
 * unit takes an allocator, that a failure of each allocation in turn is
 * reported and rolled back.
 *
 * Glossary
 *   host       the program embedding the self-test: it supplies the hooks.
 *   case       one named test; it passes or fails, and a failure names the
 *              first check that failed (file, line, expression).
 *   table page memory for page tables: the CPU address and the address the
 *              IOMMU would use (physical, or the identity in a hosted run).
 *
 * Synchronization: ik_selftest_run() is single-threaded; it must not run
 * twice at once.  The hooks are called from the thread that called it.
 */
#ifndef IK_SELFTEST_H
#define IK_SELFTEST_H

#include <iommukit/env.h>

IK_BEGIN_DECLS

/*
 * struct ik_selftest_host - what the host supplies.
 *   report     required: called once per case, in order.  `index` counts from
 *              1; `pass` is the result; on failure `file`, `line` and `expr`
 *              name the first failed check (otherwise NULL, 0, NULL).
 *   page_alloc optional: `size` bytes (a power of two, >= 4096), aligned to
 *              `size`, zeroed, for page tables; stores the address the IOMMU
 *              sees in *dma.  NULL: the env's IK_ENV_ALLOC, with dma equal to
 *              the CPU address.
 *   page_free  frees what page_alloc returned (required if page_alloc is set).
 *   clean      optional: write back the CPU cache lines over [p, p + len) so
 *              that a non-coherent walker sees them (dc cvac + dsb on arm64,
 *              clflush on x86).  NULL: page-table cases run coherent only.
 *   clean_name optional: what `clean` does, for messages (e.g. "dc-cvac").
 *   ctx        passed to every hook.
 */
struct ik_selftest_host {
	void (*report)(void *ctx, unsigned index, const char *name, bool pass,
		       const char *file, int line, const char *expr);
	void *(*page_alloc)(void *ctx, ik_size size, ik_u64 *dma);
	void (*page_free)(void *ctx, void *va, ik_u64 dma, ik_size size);
	void (*clean)(void *ctx, const void *p, ik_size len);
	const char *clean_name;
	void *ctx;
};

/* Totals of one run. */
struct ik_selftest_result {
	unsigned passed;
	unsigned failed;
	ik_u64 cleans;		/* calls of host->clean made by the page-table cases */
};

/*
 * ik_selftest_count - the number of cases ik_selftest_run() will report
 * (for a TAP plan line).  O(1).
 */
unsigned ik_selftest_count(void);

/*
 * ik_selftest_units - a static string naming the units compiled into this
 * self-test, e.g. "env atomic lock rbtree iova pgtable cmdq".
 */
const char *ik_selftest_units(void);

/*
 * ik_selftest_run - run every case, report each through host->report, and
 * fill *res (may be NULL).  Returns 0 if every case passed, -EIO otherwise,
 * -EINVAL if host or host->report is NULL (nothing run).  Allocates through
 * the env and host->page_alloc only while a case runs and frees everything
 * before it returns.  Bounded: a few milliseconds of work on a desktop CPU,
 * a few seconds under an instruction-set emulator.  Stack: under 1 KiB per
 * frame (the kernel's frame limit is 2 KiB).
 */
int ik_selftest_run(const struct ik_selftest_host *host, struct ik_selftest_result *res);

IK_END_DECLS

#endif /* IK_SELFTEST_H */
