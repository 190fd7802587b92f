/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A reference walker for AMD IOMMU v1 host page tables, written for the tests
 * from the specification's description of the walk ("I/O Page Tables for
 * Host Translations": DTE Mode, PR, NextLevel, skipped levels, next-level-7
 * page sizes, IR/IW ANDed over the walk), sharing no code or header with the
 * library: it reads table memory through a callback and decodes it as the
 * IOMMU does, faults included.  Levels are AMD's (1 = 4 KiB pages).
 */
#ifndef IK_TEST_AMD_REFWALK_H
#define IK_TEST_AMD_REFWALK_H

#include <stdbool.h>
#include <stdint.h>

enum arw_fault {
	ARW_OK = 0,
	ARW_NOT_PRESENT,	/* PR clear, or a skipped level's index is not 0 */
	ARW_PERMISSION,		/* IR/IW (ANDed) deny the access; no execute */
	ARW_RESERVED,		/* NextLevel not below the level, a bad size code,
				 * a page at level 6 */
	ARW_ADDR,		/* a table or page address at or above oas */
	ARW_INPUT_RANGE,	/* iova above what Mode levels cover */
};

enum { ARW_READ = 1, ARW_WRITE = 2, ARW_EXEC = 4 };

struct arw_result {
	enum arw_fault fault;
	unsigned level;		/* AMD level of the page, or of the faulting entry */
	uint64_t pa;
	uint64_t pgsize;
	bool r, w, fc, u;
	uint64_t leaf;
};

struct arw_tables {
	const uint64_t *(*table_at)(void *ctx, uint64_t pa);	/* 4 KiB table at pa */
	void *ctx;
	uint64_t root;
	unsigned mode;		/* 1..6 */
	unsigned oas;
};

/* bits [lo, 63] of a 52-bit physical address field are beyond oas? */
static inline bool arw_beyond(uint64_t a, unsigned oas)
{
	return oas < 64 && (a >> oas) != 0;
}

static inline struct arw_result arw_walk(const struct arw_tables *t, uint64_t iova,
					 unsigned access)
{
	struct arw_result res = { ARW_OK, t->mode, 0, 0, true, true, false, false, 0 };
	const uint64_t field = 0x000ffffffffff000ull; /* bits 51:12 */
	unsigned level = t->mode;
	uint64_t table = t->root;

	/* Mode n covers 12 + 9n input bits; Mode 6 all 64. */
	if (t->mode < 6 && (iova >> (12 + 9 * t->mode))) {
		res.fault = ARW_INPUT_RANGE;
		return res;
	}
	for (;;) {
		unsigned shift = 12 + 9 * (level - 1);
		uint64_t e = t->table_at(t->ctx, table)[(iova >> shift) & 511];
		unsigned next = (unsigned)(e >> 9) & 7;

		res.level = level;
		if (!(e & 1)) {
			res.fault = ARW_NOT_PRESENT;
			return res;
		}
		res.r = res.r && ((e >> 61) & 1);
		res.w = res.w && ((e >> 62) & 1);
		if (next != 0 && next != 7) {
			/* a PDE: NextLevel names a lower level */
			if (next >= level) {
				res.fault = ARW_RESERVED;
				return res;
			}
			if (arw_beyond(e & field, t->oas)) {
				res.fault = ARW_ADDR;
				return res;
			}
			/* skipped levels next + 1 .. level - 1 index with 0 */
			for (unsigned s = next + 1; s < level; s++) {
				if ((iova >> (12 + 9 * (s - 1))) & 511) {
					res.fault = ARW_NOT_PRESENT;
					return res;
				}
			}
			table = e & field;
			level = next;
			continue;
		}
		/* a PTE */
		uint64_t size = 1ull << shift;

		if (next == 7) {
			/* size = 2^(13 + number of ones from bit 12 up) */
			unsigned ones = 0;

			while (ones < 40 && ((e >> (12 + ones)) & 1))
				ones++;
			size = ones >= 40 ? 0 : 1ull << (13 + ones);
			if (!size || size <= (1ull << shift) || size >= (1ull << (shift + 9))) {
				res.fault = ARW_RESERVED;
				return res;
			}
		}
		if (arw_beyond((e & field) & ~(size - 1), t->oas)) {
			res.fault = ARW_ADDR;
			return res;
		}
		if (level == 6) {
			res.fault = ARW_RESERVED;
			return res;
		}
		res.leaf = e;
		res.pgsize = size;
		res.pa = ((e & field) & ~(size - 1)) | (iova & (size - 1));
		res.fc = (e >> 60) & 1;
		res.u = (e >> 59) & 1;
		if (((access & ARW_READ) && !res.r) || ((access & ARW_WRITE) && !res.w) ||
		    (access & ARW_EXEC))
			res.fault = ARW_PERMISSION;
		return res;
	}
}

#endif
