/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Shared helpers for iommukit's Check suites: a seeded PRNG, a size knob for
 * slow runs (valgrind), a fault-injecting allocator, identity table memory
 * for the page-table suites, and DMA memory and table sets for the driver
 * suites.
 *
 * Each suite defines `Suite *ik_test_suite(void)`; tests/tmain.c runs it and
 * prints TAP, which automake's tap-driver turns into one result per test.
 */
#ifndef IK_TESTLIB_H
#define IK_TESTLIB_H

#include <check.h>
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <iommukit/env.h>
#include <iommukit/drv/io.h>
#include <iommukit/pgtable.h>

Suite *ik_test_suite(void);

/* IK_TEST_TSAN: 1 in a ThreadSanitizer build (gcc or clang), else 0; suites
 * scale their model runs down under it. */
#if defined(__SANITIZE_THREAD__)
#define IK_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define IK_TEST_TSAN 1
#endif
#endif
#ifndef IK_TEST_TSAN
#define IK_TEST_TSAN 0
#endif

/*
 * IK_REQUIRE(cond): assert inside hot loops.  Check's ck_assert_*() report
 * every passing assertion's location to the parent process through a pipe
 * (in fork mode), which costs a system call each; IK_REQUIRE only calls into
 * Check when the condition fails.
 */
#define IK_REQUIRE(cond) \
	do { \
		if (!(cond)) \
			ck_abort_msg("%s:%d: requirement failed: %s", __FILE__, __LINE__, #cond); \
	} while (0)
#define IK_REQUIRE_MSG(cond, ...) \
	do { \
		if (!(cond)) \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)

/* IK_TEST_SCALE (environment, default 1.0): multiplies iteration counts, so
 * that a valgrind run can use 0.05.  Never returns less than 1 for n >= 1. */
double ik_test_scale(void);
long ik_test_iters(long n);

/*
 * IK_TEST_TIMEOUT_SCALE (environment, default 1, at least 1, at most 1000):
 * multiplies the bound of a wait that a test expects to complete while
 * another thread (a consumer) must run, for machines so loaded that even a
 * generous bound is not.  ik_test_timeout_ns(ns) returns ns scaled.  A wait
 * that a test expects to expire must not need it: there, nothing may run
 * that could end the wait (a consumer that is never started).
 */
uint64_t ik_test_timeout_ns(uint64_t ns);

/* splitmix64: a small, seedable, reproducible generator. */
struct ik_rng {
	uint64_t s;
};
static inline uint64_t ik_rng_next(struct ik_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
/* Uniform in [0, n), n > 0. */
static inline uint64_t ik_rng_below(struct ik_rng *r, uint64_t n)
{
	return ik_rng_next(r) % n;
}

/*
 * A fault-injecting allocator.  Pass &fa->a wherever a unit takes a
 * struct ik_allocator.  Thread-safe.
 *   fail_at:  the 1-based index of the allocation that fails (0: none);
 *             with fail_every set, every allocation from fail_at on fails.
 *   calls:    allocations attempted so far (failed ones included).
 *   live:     allocations not yet freed; live_bytes likewise.
 *   failures: allocations refused so far.
 */
struct ik_fault_alloc {
	struct ik_allocator a;
	long fail_at;
	int fail_every;
	long calls;
	long live;
	long live_bytes;
	long failures;
};

void ik_fault_alloc_init(struct ik_fault_alloc *fa);
/* Make the n-th allocation from now fail (n >= 1); resets the counters of
 * calls but not of live memory. */
void ik_fault_alloc_fail_nth(struct ik_fault_alloc *fa, long n);
/* No further failures. */
void ik_fault_alloc_disarm(struct ik_fault_alloc *fa);

/*
 * Identity table memory for the page-table suites: table pages from
 * aligned_alloc(size, size) whose IOMMU address is their CPU address, so
 * that the library's walker and a reference walker follow table pointers
 * directly.
 *   ik_test_tables_hooks  alloc_table and free_table, nothing else; the
 *                         config's cookie is a struct ik_test_tables.
 *   ik_test_tables_alloc/_free  the same two hooks, for a suite that adds
 *                         hooks of its own: their cookie is a struct
 *                         ik_test_tables or a struct that begins with one.
 *   allocs, frees         table pages handed out and taken back (atomic).
 *   ik_test_mem           walker memory (struct ik_pt_mem) over those
 *                         addresses: read64 only (no hardware A/D updates);
 *   ik_test_mem_hw        read64 and cas64 (hardware A/D updates).
 * The reads and the compare-and-swap are atomic (relaxed / seq_cst), so a
 * walk may run beside a map.
 */
struct ik_pgtable_hooks;
struct ik_pt_mem;
struct ik_test_tables {
	long allocs, frees;
};

void *ik_test_tables_alloc(void *cookie, ik_size size, ik_u64 *iommu);
void ik_test_tables_free(void *cookie, void *cpu, ik_u64 iommu, ik_size size);
/* A free_table hook for table pages from the C allocator (malloc,
 * posix_memalign, aligned_alloc): free(cpu); cookie, iommu, size unused. */
void ik_test_table_free(void *cookie, void *cpu, ik_u64 iommu, ik_size size);
extern const struct ik_pgtable_hooks ik_test_tables_hooks;
int ik_test_mem_read64(void *ctx, ik_u64 addr, ik_u64 *val);
int ik_test_mem_cas64(void *ctx, ik_u64 addr, ik_u64 old, ik_u64 val);
extern const struct ik_pt_mem ik_test_mem, ik_test_mem_hw;

/*
 * Hand-built tables (a "guest" writes them, not the engine): zeroed 4 KiB
 * pages whose address is their CPU address (ik_test_addr(); ik_test_mem
 * reads them), all freed together by ik_test_pages_free().
 * ik_test_page() fails the test when the set is full or memory runs out.
 * Start from struct ik_test_pages ps = { 0 }.
 */
#define IK_TEST_PAGES_MAX 64
struct ik_test_pages {
	uint64_t *page[IK_TEST_PAGES_MAX];
	int n;
};

uint64_t *ik_test_page(struct ik_test_pages *ps);
void ik_test_pages_free(struct ik_test_pages *ps);
static inline uint64_t ik_test_addr(const void *p)
{
	return (uintptr_t)p;
}

/*
 * A guest's completion command for queue entry format `fmt`, through the
 * command encoders (not the format's own encode_sync): SMMUv3 CMD_SYNC with
 * CS = IRQ (MSI write of data's low 32 bits to addr), VT-d wait with SW = 1
 * (status data = data's low 32 bits; 2 or 4 words by fmt->entry_size),
 * RISC-V IOFENCE.C with AV = 1, AMD COMPLETION_WAIT with S = 1 (all 64 bits
 * of data stored).  Returns the encoder's result: 0 with fmt->entry_size
 * bytes of w written, or -EINVAL with w untouched where the command cannot
 * hold addr (SMMUv3 and AMD at or above 2^52, misaligned addresses), and
 * for an unknown fmt.
 */
struct ik_cmdq_fmt;
int ik_test_wait_encode(const struct ik_cmdq_fmt *fmt, uint64_t addr, uint64_t data, uint64_t *w);

/*
 * DMA memory (struct ik_dma_mem) for the driver suites: buffers from
 * aligned_alloc (at least 4 KiB aligned, sizes rounded up to 4 KiB) whose DMA
 * address is their CPU address, filled with 0xa5 so that a driver that
 * forgets to zero what it uses is caught.  allocs and frees count the
 * buffers handed out and taken back; fail_at = n makes the n-th allocation
 * (1-based, counted in calls) fail, 0 never.  dma_or is ORed into every
 * device address handed out (0: the CPU address; a high bit: memory the
 * IOMMU cannot address).  Not thread-safe.
 * ik_test_dma_init() zeroes *f and points f->d at it.
 */
struct ik_test_dma {
	long allocs, frees, fail_at;
	long calls;
	uint64_t dma_or;
	struct ik_dma_mem d;
};

void ik_test_dma_init(struct ik_test_dma *f);

/*
 * Non-coherent DMA memory (struct ik_dma_mem) for the SMMUv3 suites: every
 * block has a CPU copy, a device copy (at the device address) and a
 * snapshot of the CPU copy as of the last clean.  clean(range) works per
 * 64-byte line like a clean-and-invalidate of a write-back cache: a line
 * the CPU changed since is written back to the device copy, any other is
 * re-read from it (so device writes become visible).  The CPU copy starts
 * as 0x5a bytes and the device copy as garbage (0xa5), so the device sees
 * nothing the CPU did not clean.  free() and clean() fail the test for
 * memory that is not a block's (free: exactly a block, its address and
 * size).  allocs counts allocation calls, fail_at = n makes the n-th fail
 * (1-based, 0 never), as does a full b[]; live counts blocks not yet freed,
 * cleans the clean calls.  Not thread-safe.
 * ik_test_ncdma_init() zeroes *m and points m->d at it.
 * ik_test_nc_find(): the block holding cpu, NULL if none.
 */
struct ik_test_ncblk {
	uint8_t *cpu, *dev, *snap;
	size_t size;
};

struct ik_test_ncdma {
	struct ik_dma_mem d;
	struct ik_test_ncblk b[600];
	int n;
	long cleans, allocs, live;
	long fail_at;
};

void ik_test_ncdma_init(struct ik_test_ncdma *m);
struct ik_test_ncblk *ik_test_nc_find(struct ik_test_ncdma *m, const void *cpu);

/*
 * n domain-selective IOTLB invalidations of domain 3 issued through the
 * VT-d core u, each waited for; every one must return 0 (n above the
 * queue's size: the queue goes round its ring several times).
 */
struct ik_vtd;
void ik_test_vtd_laps(struct ik_vtd *u, int n);

/*
 * A page-table config with the fields given and every other field 0
 * (pgsizes: pgsize_bitmap; h and cookie: hooks and their cookie).
 * ik_test_pt_create(): ik_pgtable_create(c), failing the test (with the
 * format, widths and error) if it fails.
 */
struct ik_pgtable_cfg ik_test_cfg(enum ik_pt_fmt fmt, unsigned ias, unsigned oas, uint64_t pgsizes,
				  uint32_t quirks, uint64_t fmt_flags, bool coherent,
				  const struct ik_pgtable_hooks *h, void *cookie);
struct ik_pgtable *ik_test_pt_create(const struct ik_pgtable_cfg *c);

/*
 * A table set for a driver suite: fmt and ias as given, oas 48, 4K, 2M and
 * 1G pages, coherent, quirks and fmt_flags as given.  h->alloc_table and
 * h->free_table are set to identity table pages that ignore the cookie;
 * h's other hooks (flush_walk, iotlb_sync_map, ...) and cookie are the
 * suite's.  Fails the test if ik_pgtable_create() does.
 */
struct ik_pgtable *ik_test_pt_new(enum ik_pt_fmt fmt, unsigned ias, uint32_t quirks,
				  uint64_t fmt_flags, struct ik_pgtable_hooks *h, void *cookie);

/*
 * The raw entry at level lvl (0: the level of 4 KiB leaves) on the path of
 * iova through pt's tables as they are in memory, for the table-format
 * suites (table pages at host addresses: ik_test_tables or identity
 * hooks); NULL if the path ends above lvl.  Each level is indexed by the 9
 * bits of iova from bit 12 + 9 * level, the root level by root_bits bits;
 * next(e) is the address of the table that entry e points to, 0 where e
 * ends the path.
 */
uint64_t *ik_test_raw_entry(const struct ik_pgtable *pt, uint64_t iova, unsigned lvl,
			    unsigned root_bits, uint64_t (*next)(uint64_t e));

/*
 * Random map/unmap churn of pt checked by a soft IOMMU, for the driver
 * suites' end-to-end tests.  s translates device 0's DMA through pt (the
 * suite attached it) with IK_SOFTIOMMU_CHECK.  iters steps over
 * [iova, iova + span): each picks a random aligned range of 4 KiB..4 MiB
 * (2 MiB blocks where aligned; span a multiple of 4 MiB).  A range with
 * nothing of it mapped is mapped onto buf + its offset and written at both
 * ends through s; otherwise it is unmapped (always where all of it is
 * mapped, else half the time), inval(ctx, g) issues the driver's
 * invalidation of the gather (0 or a negative errno), the gather is synced
 * and a read of it through s must fault.  After every step the
 * stale-translation checker must have nothing to report; at the end every
 * 61st page must read iff it is mapped.  mapped: span >> 12 flags, false on
 * entry; on return, what is mapped.  Fails the test on any departure.
 */
struct ik_softiommu;
struct ik_gather;
typedef int (*ik_test_inval_fn)(void *ctx, struct ik_gather *g);
void ik_test_churn(struct ik_pgtable *pt, struct ik_softiommu *s, uint64_t iova, void *buf,
		   uint64_t span, bool *mapped, long iters, struct ik_rng *rng,
		   ik_test_inval_fn inval, void *ctx);

/*
 * A device for ik_test_churn_dev(): dma(ctx, iova, p, len, write) reads or
 * writes len bytes at iova as the device does, through whatever stands
 * before s (a register model); returns 0, or -EFAULT where the IOMMU
 * faults the access, and then consumes what the fault leaves behind (a
 * fault record) and fails the test if it is missing.
 * ik_test_churn_dev(): ik_test_churn() with its DMA made by dev; s is still
 * the soft IOMMU whose stale-translation checker is read.
 */
struct ik_test_dev {
	int (*dma)(void *ctx, uint64_t iova, void *p, size_t len, bool write);
	void *ctx;
};

void ik_test_churn_dev(struct ik_pgtable *pt, struct ik_softiommu *s, const struct ik_test_dev *dev,
		       uint64_t iova, void *buf, uint64_t span, bool *mapped, long iters,
		       struct ik_rng *rng, ik_test_inval_fn inval, void *ctx);

/*
 * The memory of an ik_test_churn() run: returned, span bytes aligned to
 * 2 MiB (free() it); *mapped, span >> 12 flags, all false (free() it).
 * Fails the test if either allocation does.
 */
void *ik_test_churn_mem(uint64_t span, bool **mapped);

/*
 * A 4 KiB page at iova mapped onto buf and written through s (device 0),
 * then unmapped into *g (initialized here), with no invalidation: the
 * caller's driver then invalidates *g, or does not.  Fails the test if a
 * step fails.
 */
void ik_test_map_unmap(struct ik_pgtable *pt, struct ik_softiommu *s, uint64_t iova, void *buf,
		       struct ik_gather *g);

/*
 * After an unmap and its invalidation: a read at iova through s (device 0)
 * must fault, and the stale-translation checker must have nothing to report.
 */
void ik_test_gone(struct ik_softiommu *s, uint64_t iova);

/*
 * A command queue that a soft IOMMU drains inline, for the driver suites'
 * end-to-end tests: a zeroed ring of 2^log2_entries entries of fmt (at
 * least 4 KiB, 4 KiB aligned; returned, free() it after destroying *q), cq
 * initialized over s with flags and write32 (completion writes: NULL none,
 * ik_softiommu_host_write32 at host addresses), and *q created over it with
 * ik_softiommu_cq_regs and a 20 s timeout.  Fails the test on any error.
 */
struct ik_softiommu_cq;
struct ik_cmdq;
void *ik_test_soft_cmdq(struct ik_softiommu *s, const struct ik_cmdq_fmt *fmt,
			unsigned log2_entries, unsigned flags,
			void (*write32)(void *ctx, ik_u64 addr, ik_u32 val), struct ik_softiommu_cq *cq,
			struct ik_cmdq **q);

/*
 * The control of ik_test_churn(): ik_test_map_unmap() of a 4 KiB page at
 * iova, after which a read through s must fault and the stale-translation
 * checker must report the missing invalidation.  The caller then
 * invalidates (or not) and syncs *g.
 */
void ik_test_stale_control(struct ik_pgtable *pt, struct ik_softiommu *s, uint64_t iova,
			   void *buf, struct ik_gather *g);

#endif
