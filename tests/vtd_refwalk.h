/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A reference walker for VT-d tables, written for the tests straight from
 * the specification's entry layouts (see the comment in
 * <iommukit/fmt/vtd.h>), sharing no code with the library: it reads table
 * memory through a callback and decodes it the way the remapping unit does,
 * faults included.  The tests compare the library's walker against it.
 */
#ifndef IK_TEST_VTD_REFWALK_H
#define IK_TEST_VTD_REFWALK_H

#include <stdbool.h>
#include <stdint.h>

enum rw_fault {
	RW_OK = 0,
	RW_NOT_PRESENT,	/* an entry on the path is not present */
	RW_PERMISSION,	/* present, but the access is not allowed */
	RW_RESERVED,	/* a reserved bit is set (bad PS, bit 62, low address bits) */
	RW_ADDR,	/* a reserved address bit (>= HAW) is set */
	RW_INPUT_RANGE,	/* the iova is beyond the table's input width */
};

enum { RW_READ = 1, RW_WRITE = 2, RW_USER = 4, RW_EXEC = 8 };

struct rw_result {
	enum rw_fault fault;
	unsigned level;		/* level of the leaf, or of the faulting entry (0 = 4K) */
	uint64_t pa;		/* translated address (ok) */
	uint64_t pgsize;	/* size of the leaf */
	bool r, w, x, user, snp; /* effective permissions, snoop (SL) */
	uint64_t leaf;		/* the raw leaf entry */
};

struct rw_tables {
	/* Returns the CPU view of the 4 KiB table at physical address pa. */
	const uint64_t *(*table_at)(void *ctx, uint64_t pa);
	void *ctx;
	uint64_t root;	/* physical address of the top table */
	unsigned levels; /* 3..5 */
	unsigned haw;	/* host address width */
	bool sl;	/* second-level (else first-level) */
	bool big2m, big1g; /* superpages the unit supports (SLLPS / FL1GP) */
	bool nxe;	/* FL: XD is a permission bit (else reserved) */
};

static inline uint64_t rw_bits(unsigned hi, unsigned lo)
{
	return (hi >= 63 ? ~0ull : ((1ull << (hi + 1)) - 1)) & ~((1ull << lo) - 1);
}

static inline struct rw_result rw_walk(const struct rw_tables *t, uint64_t iova, unsigned access)
{
	struct rw_result res = { RW_OK, 0, 0, 0, true, true, true, true, false, 0 };
	unsigned width = 12 + 9 * t->levels;
	uint64_t table = t->root;
	uint64_t rsvd_addr = rw_bits(51, t->haw);

	if (!t->sl)
		width--; /* lower canonical half only */
	if (width < 64 && (iova >> width)) {
		res.fault = RW_INPUT_RANGE;
		res.level = t->levels - 1;
		return res;
	}
	for (int lvl = (int)t->levels - 1; lvl >= 0; lvl--) {
		unsigned shift = 12 + 9 * (unsigned)lvl;
		const uint64_t *tp = t->table_at(t->ctx, table);
		uint64_t e = tp[(iova >> shift) & 511];
		bool leaf;

		res.level = (unsigned)lvl;
		if (t->sl) {
			if (!(e & 3)) {
				res.fault = RW_NOT_PRESENT;
				return res;
			}
			if (e & (1ull << 62)) {
				res.fault = RW_RESERVED;
				return res;
			}
			leaf = lvl == 0;
			if (lvl > 0 && (e & (1ull << 7))) {
				if (lvl > 2 || (lvl == 2 && !t->big1g) || (lvl == 1 && !t->big2m)) {
					res.fault = RW_RESERVED;
					return res;
				}
				leaf = true;
			}
			res.r = res.r && (e & 1);
			res.w = res.w && (e & 2);
			res.x = false;
			res.user = true;
			if (leaf)
				res.snp = (e >> 11) & 1;
		} else {
			if (!(e & 1)) {
				res.fault = RW_NOT_PRESENT;
				return res;
			}
			if (!t->nxe && (e >> 63)) {
				res.fault = RW_RESERVED;
				return res;
			}
			leaf = lvl == 0;
			if (lvl > 0 && (e & (1ull << 7))) {
				if (lvl > 2 || (lvl == 2 && !t->big1g)) {
					res.fault = RW_RESERVED;
					return res;
				}
				leaf = true;
			}
			res.r = true;
			res.w = res.w && (e & 2);
			res.user = res.user && (e & 4);
			res.x = res.x && !(t->nxe && (e >> 63));
		}
		if (e & rsvd_addr) {
			res.fault = RW_ADDR;
			return res;
		}
		if (leaf) {
			uint64_t addr_mask = rw_bits(51, shift);

			/* Large leaves: bits between 12 and the page size are reserved
			 * (first-level: bit 12 is PAT). */
			if (lvl > 0) {
				uint64_t low = rw_bits(shift - 1, t->sl ? 12 : 13);

				if (e & low) {
					res.fault = RW_RESERVED;
					return res;
				}
			}
			res.leaf = e;
			res.pgsize = 1ull << shift;
			res.pa = (e & addr_mask) | (iova & (res.pgsize - 1));
			if (((access & RW_READ) && !res.r) || ((access & RW_WRITE) && !res.w) ||
			    ((access & RW_USER) && !res.user) || ((access & RW_EXEC) && !res.x))
				res.fault = RW_PERMISSION;
			return res;
		}
		table = e & rw_bits(51, 12);
	}
	res.fault = RW_NOT_PRESENT; /* not reached */
	return res;
}

#endif
