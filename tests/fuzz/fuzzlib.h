/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Shared helpers for iommukit's libFuzzer harnesses (tests/fuzz/fuzz_*.c).
 *
 * A harness reads its input as a stream of operations: fz_u8(), fz_u64() and
 * friends consume bytes from the front and return 0 once the input is used
 * up, so every input, however short, is a valid (possibly empty) program.
 * After every operation the harness compares the unit with a shadow model
 * and calls FZ_CHECK(), which aborts (a libFuzzer "crash") with a message
 * when they disagree.
 *
 * struct fz_alloc is a fault-injecting allocator: fail_at = n makes the n-th
 * allocation from the last fz_alloc_arm() fail, so a harness can ask for a
 * failure midway through any operation and then check that the operation
 * returned -ENOMEM and changed nothing.  live/live_bytes catch leaks.
 *
 * Harnesses are built and run by tests/fuzz/run.sh (make fuzz-smoke); see
 * tests/fuzz/README.md.
 */
#ifndef IK_FUZZLIB_H
#define IK_FUZZLIB_H

#include <errno.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <iommukit/env.h>

struct fz {
	const uint8_t *p;
	size_t n;
};

static inline void fz_init(struct fz *f, const uint8_t *data, size_t size)
{
	f->p = data;
	f->n = size;
}

static inline size_t fz_left(const struct fz *f)
{
	return f->n;
}

/* Up to `bytes` bytes, little-endian; missing bytes read as 0. */
static inline uint64_t fz_bytes(struct fz *f, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes && f->n; i++, f->p++, f->n--)
		v |= (uint64_t)*f->p << (8 * i);
	return v;
}

/* The shadow models' sorted arrays: the first index i in [0, n) with
 * key(i) >= k (n if none), for keys that do not decrease with i.  O(log n). */
static inline size_t fz_lower(size_t n, uint64_t (*key)(size_t i), uint64_t k)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (key(m) < k)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* A window of guest memory: `size` bytes at guest-physical `base`, held at
 * host `mem`.  The host pointer for [pa, pa + len) when that lies wholly
 * inside the window, else NULL (a phys_to_host hook's bounds check: safe
 * against overflow for any pa and len, as guest-written addresses are). */
static inline void *fz_window(uint8_t *mem, uint64_t base, uint64_t size, uint64_t pa,
			      uint64_t len)
{
	if (pa < base || pa - base >= size || len > size - (pa - base))
		return NULL;
	return mem + (pa - base);
}

static inline uint8_t fz_u8(struct fz *f)
{
	return (uint8_t)fz_bytes(f, 1);
}

static inline uint16_t fz_u16(struct fz *f)
{
	return (uint16_t)fz_bytes(f, 2);
}

static inline uint32_t fz_u32(struct fz *f)
{
	return (uint32_t)fz_bytes(f, 4);
}

static inline uint64_t fz_u64(struct fz *f)
{
	return fz_bytes(f, 8);
}

static inline bool fz_bool(struct fz *f)
{
	return fz_u8(f) & 1;
}

/* In [0, n) for n > 0 (modulo: a fuzzer does not care about bias). */
static inline uint64_t fz_below(struct fz *f, uint64_t n)
{
	uint64_t v = n <= 0x100 ? fz_u8(f) : n <= 0x10000 ? fz_u16(f) :
		     n <= 0x100000000ull ? fz_u32(f) : fz_u64(f);

	return v % n;
}

/* One of the interesting 64-bit values near the edges, or an arbitrary one:
 * what a hostile guest writes into a descriptor field. */
static inline uint64_t fz_edgy(struct fz *f)
{
	static const uint64_t edge[] = {
		0, 1, 2, 3, 4, 0xfff, 0x1000, 0xffffffffull, 0x100000000ull,
		(1ull << 48) - 1, 1ull << 48, (1ull << 52) - 4, 1ull << 52,
		1ull << 63, ~0ull - 7, ~0ull - 3, ~0ull,
	};
	uint8_t k = fz_u8(f);

	if (k < 2 * (sizeof(edge) / sizeof(edge[0])))
		return edge[k % (sizeof(edge) / sizeof(edge[0]))] ^ (k & 1 ? fz_u8(f) : 0);
	return fz_u64(f);
}

/* FZ_TRACE(...): a line on stderr for each operation when the environment
 * has FZ_TRACE set (to replay a finding step by step: see README.md). */
static inline int fz_trace_on(void)
{
	static int on = -1;

	if (on < 0)
		on = getenv("FZ_TRACE") != NULL;
	return on;
}
#define FZ_TRACE(...)                                                                \
	do {                                                                         \
		if (fz_trace_on()) {                                                 \
			fprintf(stderr, "trace: " __VA_ARGS__);                      \
			fprintf(stderr, "\n");                                       \
		}                                                                    \
	} while (0)

#define FZ_CHECK(cond, ...)                                                          \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, \
				#cond);                                              \
			fprintf(stderr, __VA_ARGS__);                                \
			fprintf(stderr, "\n");                                       \
			abort();                                                     \
		}                                                                    \
	} while (0)

/* ---- guarded arenas ---- */

/* A buffer between two guards of FZ_GUARD bytes of FZ_GUARD_BYTE, for
 * memory a unit under test writes into (guest memory, a DMA buffer): buf
 * holds FZ_ARENA_BYTES(size) bytes, the usable ones from buf + FZ_GUARD;
 * base is its guest-physical address (0 where it has none). */
#define FZ_GUARD 128
#define FZ_GUARD_BYTE 0xa7
#define FZ_ARENA_BYTES(size) (FZ_GUARD + (size) + FZ_GUARD)

struct fz_arena {
	uint8_t *buf;
	size_t size;
	uint64_t base;
};

static inline uint8_t *fz_arena_mem(const struct fz_arena *a)
{
	return a->buf + FZ_GUARD;
}

/* Sets the guards and fills the memory from the first n bytes of data,
 * spread over it (n may be 0: the memory is then all FZ_GUARD_BYTE). */
static inline void fz_arena_fill(const struct fz_arena *a, const uint8_t *data, size_t n)
{
	memset(a->buf, FZ_GUARD_BYTE, FZ_ARENA_BYTES(a->size));
	for (size_t i = 0; i < a->size && i < n; i++)
		fz_arena_mem(a)[(i * 4099u) % a->size] = data[i];
}

/* A phys_to_host hook over an arena (ctx: the struct fz_arena). */
static inline void *fz_arena_phys(void *ctx, ik_u64 pa, ik_size len)
{
	const struct fz_arena *a = ctx;

	return fz_window(fz_arena_mem(a), a->base, a->size, pa, len);
}

/* The guest writes 8 bytes of its choice (fz_edgy()) anywhere in the arena. */
static inline void fz_arena_scribble(const struct fz_arena *a, struct fz *f)
{
	uint64_t at = fz_u32(f) % (a->size - 8);
	uint64_t v = fz_edgy(f);

	memcpy(fz_arena_mem(a) + at, &v, 8);
}

/* FZ_CHECKs that no guard byte changed; `what` names the arena. */
static inline void fz_arena_check(const struct fz_arena *a, const char *what)
{
	for (size_t i = 0; i < FZ_GUARD; i++)
		FZ_CHECK(a->buf[i] == FZ_GUARD_BYTE && a->buf[FZ_GUARD + a->size + i] == FZ_GUARD_BYTE,
			 "%s guard %zu", what, i);
}

/* A device access as the register-model harnesses make them: an address
 * (edgy or 32-bit), 0..FZ_DMA_MAX bytes, read or write; traced with sid. */
#define FZ_DMA_MAX 512

struct fz_dma {
	uint64_t iova;
	size_t len;
	bool wr;
};

static inline struct fz_dma fz_dma(struct fz *f, uint32_t sid)
{
	struct fz_dma d;

	d.iova = fz_u8(f) & 1 ? fz_edgy(f) : fz_u32(f);
	d.len = (size_t)fz_below(f, FZ_DMA_MAX + 1);
	d.wr = fz_bool(f);
	FZ_TRACE("dma sid %u iova %#llx len %zu %s", sid, (unsigned long long)d.iova, d.len,
		 d.wr ? "write" : "read");
	return d;
}

/* FZ_CHECKs a DMA result: done, or refused as a bad access, never more. */
#define FZ_CHECK_DMA(r) \
	FZ_CHECK((r) == 0 || (r) == -EFAULT || (r) == -EINVAL, "dma returned %d", (r))

/* ---- fault-injecting allocator ---- */
struct fz_alloc {
	struct ik_allocator a;
	long fail_at;	 /* 1-based index of the failing call since arming; 0: none */
	long calls;	 /* calls since arming */
	long failures;	 /* calls refused since arming */
	long live;	 /* blocks not yet freed */
	long live_bytes;
};

static void *fz_alloc_fn(void *ctx, ik_size size, ik_size align)
{
	struct fz_alloc *fa = (struct fz_alloc *)ctx;
	void *p;

	if (++fa->calls == fa->fail_at) {
		fa->failures++;
		return NULL;
	}
	if (align < sizeof(void *))
		align = sizeof(void *);
	/* C11 aligned_alloc (the harnesses are built with -std=c11, which
	 * hides posix_memalign): the size must be a multiple of align. */
	p = aligned_alloc(align, ((size ? size : 1) + align - 1) & ~(ik_size)(align - 1));
	if (!p)
		return NULL;
	fa->live++;
	fa->live_bytes += (long)size;
	return p;
}

static void fz_free_fn(void *ctx, void *ptr, ik_size size)
{
	struct fz_alloc *fa = (struct fz_alloc *)ctx;

	if (!ptr)
		return;
	FZ_CHECK(fa->live > 0, "free without a live allocation");
	fa->live--;
	fa->live_bytes -= (long)size;
	FZ_CHECK(fa->live_bytes >= 0, "freed more bytes than allocated");
	free(ptr);
}

static inline void fz_alloc_init(struct fz_alloc *fa)
{
	memset(fa, 0, sizeof(*fa));
	fa->a.alloc = fz_alloc_fn;
	fa->a.free = fz_free_fn;
	fa->a.ctx = fa;
}

/* The n-th allocation from now fails (n >= 1); 0 disarms. */
static inline void fz_alloc_arm(struct fz_alloc *fa, long n)
{
	fa->calls = 0;
	fa->failures = 0;
	fa->fail_at = n;
}

#endif
