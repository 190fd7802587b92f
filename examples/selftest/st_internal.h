/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * st_internal.h - what the self-test's case files share; not API.
 *
 * A case is a function taking a struct ik_st *.  It checks with ST_CHECK(),
 * which records the first failure and returns from the case, or with
 * ST_CHECK_GOTO(), which jumps to the case's cleanup label.  Memory a unit
 * allocates goes through t->alloc (pass &t->alloc.a as the unit's allocator),
 * which counts live allocations and can fail the n-th one; the runner fails a
 * case that returns with anything still allocated.
 */
#ifndef IK_ST_INTERNAL_H
#define IK_ST_INTERNAL_H

#include "ik_selftest.h"

/* A counting, fault-injecting allocator over the env's IK_ENV_ALLOC. */
struct ik_st_alloc {
	struct ik_allocator a;
	long calls;		/* allocations attempted since the last arm */
	long fail_at;		/* 1-based index of the allocation to refuse; 0: none */
	long live;		/* allocations not yet freed */
	long failures;		/* allocations refused */
};

struct ik_st {
	const struct ik_selftest_host *host;
	struct ik_st_alloc alloc;
	long pages_live;	/* table pages from ik_st_page_alloc() not yet freed */
	ik_u64 cleans;		/* calls of host->clean */
	ik_u64 rng;		/* splitmix64 state, reseeded per case */
	bool failed;
	const char *file;
	int line;
	const char *expr;
};

#ifdef __FILE_NAME__
#define ST_FILE __FILE_NAME__
#else
#define ST_FILE __FILE__
#endif

/* Record the first failure of the running case. */
void ik_st_fail(struct ik_st *t, const char *file, int line, const char *expr);

#define ST_CHECK(t, cond)							\
	do {									\
		if (IK_UNLIKELY(!(cond))) {					\
			ik_st_fail((t), ST_FILE, __LINE__, #cond);		\
			return;							\
		}								\
	} while (0)

#define ST_CHECK_GOTO(t, cond, label)						\
	do {									\
		if (IK_UNLIKELY(!(cond))) {					\
			ik_st_fail((t), ST_FILE, __LINE__, #cond);		\
			goto label;						\
		}								\
	} while (0)

/* Make the n-th allocation from now fail (0: none); resets the call count. */
void ik_st_alloc_arm(struct ik_st *t, long n);
/* Count one allocation attempt made outside t->alloc (a table page hook):
 * true if it is the armed one and must fail. */
bool ik_st_alloc_fault(struct ik_st *t);

/* splitmix64; ik_st_below(t, n) is uniform in [0, n), n > 0. */
ik_u64 ik_st_rand(struct ik_st *t);
ik_u64 ik_st_below(struct ik_st *t, ik_u64 n);

/* Table pages through the host (or the env): `size` bytes aligned to size,
 * zeroed; *dma gets the device-visible address.  NULL on failure. */
void *ik_st_page_alloc(struct ik_st *t, ik_size size, ik_u64 *dma);
void ik_st_page_free(struct ik_st *t, void *va, ik_u64 dma, ik_size size);
/* Clean through the host, counting calls; a no-op (still counted) without one. */
void ik_st_clean(struct ik_st *t, const void *p, ik_size len);

/* One case. */
struct ik_st_case {
	const char *name;
	void (*fn)(struct ik_st *t);
};

/* Each unit's file defines its table and count; a unit the library does not
 * have (its header is missing: __has_include) defines a count of 0. */
extern const struct ik_st_case ik_st_core_cases[];
extern const unsigned ik_st_core_ncases;
extern const struct ik_st_case ik_st_iova_cases[];
extern const unsigned ik_st_iova_ncases;
extern const struct ik_st_case ik_st_pgtable_cases[];
extern const unsigned ik_st_pgtable_ncases;
extern const struct ik_st_case ik_st_cmdq_cases[];
extern const unsigned ik_st_cmdq_ncases;

#endif /* IK_ST_INTERNAL_H */
