/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ik-selftest: the built-in self-test as a hosted program.  Prints TAP (one
 * line per case), so `make check` counts each case, and so does CI when it
 * runs a cross-built copy under qemu-aarch64.  Table pages come from
 * posix_memalign; the cache clean hook is the real instruction of the
 * architecture (dc cvac + dsb on arm64, clflush + mfence on x86-64), which is
 * harmless on a coherent machine and exercises the path a non-coherent IOMMU
 * walker needs.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <iommukit/env.h>
#include "ik_selftest.h"

static void *host_page_alloc(void *ctx, ik_size size, ik_u64 *dma)
{
	void *p;

	(void)ctx;
	if (posix_memalign(&p, size, size) != 0)
		return NULL;
	memset(p, 0, size);
	*dma = (ik_u64)(ik_uptr)p;
	return p;
}

static void host_page_free(void *ctx, void *va, ik_u64 dma, ik_size size)
{
	(void)ctx;
	(void)dma;
	(void)size;
	free(va);
}

#if defined(__aarch64__)
#define HOST_CLEAN_NAME "dc-cvac"
static void host_clean(void *ctx, const void *p, ik_size len)
{
	ik_u64 ctr, line;
	ik_uptr a, end = (ik_uptr)p + len;

	(void)ctx;
	/* CTR_EL0.DminLine (bits 19:16): log2 of the smallest D-cache line in
	 * words.  Linux lets EL0 read CTR_EL0 and clean by VA (SCTLR_EL1.UCT/UCI). */
	__asm__ __volatile__("mrs %0, ctr_el0" : "=r"(ctr));
	line = 4ull << ((ctr >> 16) & 0xf);
	for (a = (ik_uptr)p & ~(ik_uptr)(line - 1); a < end; a += line)
		__asm__ __volatile__("dc cvac, %0" : : "r"(a) : "memory");
	__asm__ __volatile__("dsb ish" ::: "memory");
}
#elif defined(__x86_64__) || defined(__i386__)
#define HOST_CLEAN_NAME "clflush"
static void host_clean(void *ctx, const void *p, ik_size len)
{
	ik_uptr a, end = (ik_uptr)p + len;

	(void)ctx;
	for (a = (ik_uptr)p & ~(ik_uptr)63; a < end; a += 64)
		__asm__ __volatile__("clflush (%0)" : : "r"(a) : "memory");
	__asm__ __volatile__("mfence" ::: "memory");
}
#else
#define HOST_CLEAN_NAME NULL
#define host_clean NULL
#endif

static void report(void *ctx, unsigned index, const char *name, bool pass, const char *file,
		   int line, const char *expr)
{
	(void)ctx;
	if (pass)
		printf("ok %u - %s\n", index, name);
	else
		printf("not ok %u - %s\n# %s:%d: check failed: %s\n", index, name, file, line, expr);
	fflush(stdout);
}

int main(void)
{
	struct ik_selftest_host host;
	struct ik_selftest_result res;
	int rc;

	memset(&host, 0, sizeof(host));
	host.report = report;
	host.page_alloc = host_page_alloc;
	host.page_free = host_page_free;
	host.clean = host_clean;
	host.clean_name = HOST_CLEAN_NAME;
	printf("1..%u\n", ik_selftest_count());
	printf("# iommukit %s self-test, env %s, units: %s, clean: %s\n", ik_version(), IK_ENV_NAME,
	       ik_selftest_units(), HOST_CLEAN_NAME ? HOST_CLEAN_NAME : "none");
	rc = ik_selftest_run(&host, &res);
	printf("# %u passed, %u failed, %llu cleans\n", res.passed, res.failed,
	       (unsigned long long)res.cleans);
	return rc == 0 ? 0 : 1;
}
