/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The bare-metal env's functions (see ik_env_baremetal.h): a static page
 * pool with a small-object allocator on top, the C memory functions GCC may
 * call, console helpers, the data-cache clean, and the assertion stop.
 * Freestanding: includes only iommukit headers.
 *
 * Pool layout: IK_BM_POOL_PAGES pages of 4 KiB.  page_tag[i] says what page
 * i is: free, the first page of a run of page_run[i] pages, a continuation
 * page, or a page split into objects of one size class (2^class bytes, 16 to
 * 2048).  Small objects go back to their class's free list (their page stays
 * with the class); runs go back to the pool.  Cost: small alloc/free O(1),
 * page runs O(pool pages) first fit - firmware-sized pools only.
 */
#include <iommukit/env.h>
#include <iommukit/lock.h>

#define BM_TAG_FREE 0u
#define BM_TAG_RUN 1u		/* first page of a run; length in page_run[] */
#define BM_TAG_CONT 2u		/* a later page of a run */
#define BM_TAG_CLASS 16u	/* + log2(object size): a split page */
#define BM_MIN_SHIFT 4u
#define BM_MAX_SHIFT 11u

static ik_u8 pool[IK_BM_POOL_PAGES * IK_BM_PAGE_SIZE] IK_ALIGNED(IK_BM_PAGE_SIZE);
static ik_u8 page_tag[IK_BM_POOL_PAGES];
static ik_u32 page_run[IK_BM_POOL_PAGES];
static void *free_list[BM_MAX_SHIFT + 1];
static ik_lock_t pool_lock;	/* zero is unlocked for the default spinlock */
static unsigned pages_used;
static long live;

/* ---- the C memory functions (GCC may emit calls to them) ---- */
void *memset(void *s, int c, ik_size n);
void *memcpy(void *d, const void *s, ik_size n);
void *memmove(void *d, const void *s, ik_size n);
int memcmp(const void *a, const void *b, ik_size n);

void *memset(void *s, int c, ik_size n)
{
	volatile ik_u8 *p = (volatile ik_u8 *)s;	/* volatile: not turned back into memset */

	while (n--)
		*p++ = (ik_u8)c;
	return s;
}

void *memcpy(void *d, const void *s, ik_size n)
{
	volatile ik_u8 *dp = (volatile ik_u8 *)d;
	const ik_u8 *sp = (const ik_u8 *)s;

	while (n--)
		*dp++ = *sp++;
	return d;
}

void *memmove(void *d, const void *s, ik_size n)
{
	volatile ik_u8 *dp = (volatile ik_u8 *)d;
	const ik_u8 *sp = (const ik_u8 *)s;

	if (dp <= sp || dp >= sp + n)
		return memcpy(d, s, n);
	while (n--)
		dp[n] = sp[n];
	return d;
}

int memcmp(const void *a, const void *b, ik_size n)
{
	const ik_u8 *x = (const ik_u8 *)a, *y = (const ik_u8 *)b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x < *y ? -1 : 1;
	return 0;
}

/* ---- the page pool ---- */
static unsigned page_index(const void *p)
{
	return (unsigned)(((const ik_u8 *)p - pool) / IK_BM_PAGE_SIZE);
}

static bool in_pool(const void *p)
{
	return (const ik_u8 *)p >= pool && (const ik_u8 *)p < pool + sizeof(pool);
}

/* First fit of `n` free pages whose address is a multiple of `align` pages
 * (a power of two).  The pool itself is only page-aligned (where it lands
 * depends on the image), so the first candidate is the first aligned
 * address in it, not page index 0. */
static void *run_alloc(unsigned n, unsigned align)
{
	ik_uptr a = (ik_uptr)align * IK_BM_PAGE_SIZE, base = (ik_uptr)pool;
	unsigned i, j;

	for (i = (unsigned)((((base + a - 1) & ~(a - 1)) - base) / IK_BM_PAGE_SIZE);
	     i + n <= IK_BM_POOL_PAGES; i += align) {
		for (j = 0; j < n && page_tag[i + j] == BM_TAG_FREE; j++)
			;
		if (j == n) {
			page_tag[i] = BM_TAG_RUN;
			page_run[i] = n;
			for (j = 1; j < n; j++)
				page_tag[i + j] = BM_TAG_CONT;
			pages_used += n;
			return pool + (ik_size)i * IK_BM_PAGE_SIZE;
		}
	}
	return NULL;
}

static void run_free(unsigned i)
{
	unsigned j, n = page_run[i];

	for (j = 0; j < n; j++)
		page_tag[i + j] = BM_TAG_FREE;
	page_run[i] = 0;
	pages_used -= n;
}

void *bm_alloc(ik_size size, ik_size align)
{
	unsigned shift = BM_MIN_SHIFT;
	ik_size want = size > align ? size : align;
	void *p;

	if (!size)
		want = 1;
	if (align > IK_BM_PAGE_SIZE || (align & (align - 1)))
		return NULL;
	while (((ik_size)1 << shift) < want && shift <= BM_MAX_SHIFT)
		shift++;
	ik_lock(&pool_lock);
	if (shift > BM_MAX_SHIFT) {
		ik_size n = (size + IK_BM_PAGE_SIZE - 1) / IK_BM_PAGE_SIZE;

		p = n <= IK_BM_POOL_PAGES ? run_alloc((unsigned)n, 1) : NULL;
	} else {
		if (!free_list[shift]) {
			ik_u8 *pg = (ik_u8 *)run_alloc(1, 1);
			ik_size off, obj = (ik_size)1 << shift;

			if (pg) {
				page_tag[page_index(pg)] = (ik_u8)(BM_TAG_CLASS + shift);
				/* Thread the page's objects onto the list. */
				for (off = 0; off < IK_BM_PAGE_SIZE; off += obj) {
					*(void **)(void *)(pg + off) = free_list[shift];
					free_list[shift] = pg + off;
				}
			}
		}
		p = free_list[shift];
		if (p)
			free_list[shift] = *(void **)p;
	}
	if (p)
		live++;
	ik_unlock(&pool_lock);
	return p;
}

void bm_free(void *ptr, ik_size size)
{
	unsigned i, tag;

	(void)size;	/* the page tag knows */
	IK_ENV_ASSERT(in_pool(ptr));
	i = page_index(ptr);
	ik_lock(&pool_lock);
	tag = page_tag[i];
	IK_ENV_ASSERT(tag == BM_TAG_RUN || tag >= BM_TAG_CLASS);
	if (tag == BM_TAG_RUN) {
		IK_ENV_ASSERT(ptr == pool + (ik_size)i * IK_BM_PAGE_SIZE);
		run_free(i);
	} else {
		*(void **)ptr = free_list[tag - BM_TAG_CLASS];
		free_list[tag - BM_TAG_CLASS] = ptr;
	}
	live--;
	ik_unlock(&pool_lock);
}

void *bm_alloc_pages(ik_size size)
{
	unsigned n = (unsigned)((size + IK_BM_PAGE_SIZE - 1) / IK_BM_PAGE_SIZE), align = 1;
	void *p;

	if (!size || size > sizeof(pool))
		return NULL;
	while (align < n)
		align <<= 1;
	ik_lock(&pool_lock);
	p = run_alloc(n, align);
	if (p)
		live++;
	ik_unlock(&pool_lock);
	if (p)
		memset(p, 0, (ik_size)n * IK_BM_PAGE_SIZE);
	return p;
}

void bm_free_pages(void *ptr)
{
	bm_free(ptr, 0);
}

unsigned bm_pool_pages_used(void)
{
	return ik_load_relaxed(&pages_used);
}

long bm_pool_live(void)
{
	return ik_load_relaxed(&live);
}

/* ---- cache maintenance ---- */
void bm_clean_dcache(const void *p, ik_size len)
{
	ik_uptr a, end = (ik_uptr)p + len;
#if defined(__aarch64__)
	ik_u64 ctr, line;

	/* CTR_EL0.DminLine: log2 of the smallest D-cache line, in words. */
	__asm__ __volatile__("mrs %0, ctr_el0" : "=r"(ctr));
	line = 4ull << ((ctr >> 16) & 0xf);
	for (a = (ik_uptr)p & ~(ik_uptr)(line - 1); a < end; a += line)
		__asm__ __volatile__("dc cvac, %0" : : "r"(a) : "memory");
	__asm__ __volatile__("dsb sy" ::: "memory");
#elif defined(__x86_64__)
	for (a = (ik_uptr)p & ~(ik_uptr)63; a < end; a += 64)
		__asm__ __volatile__("clflush (%0)" : : "r"(a) : "memory");
	__asm__ __volatile__("mfence" ::: "memory");
#else
	(void)a;
	(void)end;
	ik_smp_mb();
#endif
}

/* ---- console ---- */
void bm_puts(const char *s)
{
	ik_size n = 0;

	while (s[n])
		n++;
	bm_board_write(s, n);
}

void bm_put_uint(unsigned long long v)
{
	char buf[24];
	int i = (int)sizeof(buf);

	buf[--i] = '\0';
	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	bm_puts(buf + i);
}

void bm_assert_fail(const char *file, int line, const char *expr)
{
	bm_puts("assertion failed: ");
	bm_puts(file);
	bm_puts(":");
	bm_put_uint((unsigned long long)line);
	bm_puts(": ");
	bm_puts(expr);
	bm_puts("\n");
	bm_board_exit(134);
}
