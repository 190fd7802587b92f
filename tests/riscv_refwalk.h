/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A reference walker for RISC-V IOMMU page tables, written for the tests
 * straight from the privileged specification's "Virtual-Address
 * Translation Process" (Sv39/Sv48/Sv57, and the hypervisor extension's
 * G-stage Sv39x4/Sv48x4/Sv57x4 with its 16 KiB root), sharing no code with
 * the library: it reads table memory through a callback, uses its own bit
 * constants, and decodes entries the way the IOMMU does, faults included.
 * The tests compare what the engine was asked to map, and the library's
 * walker, against it.
 */
#ifndef IK_TEST_RISCV_REFWALK_H
#define IK_TEST_RISCV_REFWALK_H

#include <stdbool.h>
#include <stdint.h>

enum rv_fault {
	RV_OK = 0,
	RV_INVALID,	/* V = 0 on the path */
	RV_RESERVED,	/* reserved bits / encodings, misaligned superpage, a
			 * pointer at the last level */
	RV_PERMISSION,	/* leaf does not allow the access (R/W/X/U) */
	RV_AD,		/* A clear, or D clear on a write, with no A/D updating */
	RV_ACCESS,	/* a table or output address beyond the physical width */
	RV_INPUT,	/* the address is not a valid input (sign / zero extension) */
};

enum { RV_READ = 1, RV_WRITE = 2, RV_EXEC = 4, RV_SMODE = 8 };

struct rv_result {
	enum rv_fault fault;
	int level;		/* i of the leaf or of the faulting entry */
	uint64_t pa;
	uint64_t pgsize;
	bool r, w, x, u, d;
	uint64_t pte;
	uint64_t pte_pa;	/* where the leaf (or faulting entry) is */
	bool updated;		/* A/D were set by the walk (ade) */
};

struct rv_tables {
	/* Read the 8-byte word at physical address pa (false: no memory). */
	bool (*read)(void *ctx, uint64_t pa, uint64_t *val);
	/* Write it back (A/D update); may be NULL when !ade. */
	void (*write)(void *ctx, uint64_t pa, uint64_t val);
	void *ctx;
	uint64_t root;		/* atp.PPN << 12 */
	unsigned levels;	/* 3 (Sv39), 4 (Sv48), 5 (Sv57) */
	bool gstage;		/* x4 second stage */
	unsigned pa_bits;	/* physical address width */
	bool sum;		/* S-mode may read/write U pages (first stage) */
	bool ade;		/* the IOMMU updates A/D (SADE / GADE) */
};

/* The checks and the translation of the leaf pte at level i (step 5 on of
 * the specification's algorithm). */
static inline void rv_leaf(const struct rv_tables *t, uint64_t va, unsigned acc, int i,
			   uint64_t pte, struct rv_result *res)
{
	uint64_t ppn = (pte >> 10) & ((1ull << 44) - 1);
	uint64_t lowmask = (1ull << (9 * (unsigned)i)) - 1;
	bool u = (pte >> 4) & 1;
	bool smode = (acc & RV_SMODE) != 0;

	res->r = (pte >> 1) & 1;
	res->w = (pte >> 2) & 1;
	res->x = (pte >> 3) & 1;
	res->u = u;
	res->d = (pte >> 7) & 1;
	res->pgsize = 1ull << (12 + 9 * (unsigned)i);
	/* permission: G-stage accesses are all user-mode */
	if (t->gstage) {
		smode = false;
		if (!u) {
			res->fault = RV_PERMISSION;
			return;
		}
	}
	if (((acc & RV_READ) && !res->r) || ((acc & RV_WRITE) && !res->w) ||
	    ((acc & RV_EXEC) && !res->x) || (!smode && !u) ||
	    (smode && u && ((acc & RV_EXEC) || !t->sum))) {
		res->fault = RV_PERMISSION;
		return;
	}
	if (i > 0 && (ppn & lowmask)) {	/* misaligned superpage */
		res->fault = RV_RESERVED;
		return;
	}
	if (!((pte >> 6) & 1) || ((acc & RV_WRITE) && !res->d)) {
		if (!t->ade) {
			res->fault = RV_AD;
			return;
		}
		pte |= 1ull << 6;
		if (acc & RV_WRITE)
			pte |= 1ull << 7;
		t->write(t->ctx, res->pte_pa, pte);
		res->pte = pte;
		res->d = (pte >> 7) & 1;
		res->updated = true;
	}
	res->pa = ((ppn & ~lowmask) << 12) | (va & (res->pgsize - 1));
	if (t->pa_bits < 64 && (res->pa >> t->pa_bits)) {
		res->fault = RV_ACCESS;
		return;
	}
}

static inline struct rv_result rv_walk(const struct rv_tables *t, uint64_t va, unsigned acc)
{
	struct rv_result res = { RV_OK, 0, 0, 0, false, false, false, false, false, 0, 0, false };
	unsigned vabits = 12 + 9 * t->levels + (t->gstage ? 2 : 0);
	uint64_t a = t->root, pte = 0;
	int i = (int)t->levels - 1;

	if (t->gstage) {
		if (va >> vabits) {	/* GPA bits above the width must be 0 */
			res.fault = RV_INPUT;
			return res;
		}
	} else {
		int64_t s = (int64_t)(va << (64 - vabits)) >> (64 - vabits);

		if ((uint64_t)s != va) {	/* must be sign-extended */
			res.fault = RV_INPUT;
			return res;
		}
	}
	for (;;) {
		unsigned shift = 12 + 9 * (unsigned)i;
		uint64_t idx = (va >> shift) & (i == (int)t->levels - 1 && t->gstage ? 2047 : 511);
		uint64_t v_, r_, w_, x_;

		res.level = i;
		res.pte_pa = a + idx * 8;
		if (!t->read(t->ctx, res.pte_pa, &pte)) {
			res.fault = RV_ACCESS;
			return res;
		}
		res.pte = pte;
		v_ = pte & 1;
		r_ = (pte >> 1) & 1;
		w_ = (pte >> 2) & 1;
		x_ = (pte >> 3) & 1;
		if (!v_) {
			res.fault = RV_INVALID;
			return res;
		}
		/* W without R; bits 60:54; PBMT (no Svpbmt); N (no Svnapot) */
		if ((!r_ && w_) || (pte >> 54)) {
			res.fault = RV_RESERVED;
			return res;
		}
		if (!r_ && !x_) {	/* pointer to the next level */
			if (i == 0) {
				res.fault = RV_RESERVED;
				return res;
			}
			a = ((pte >> 10) & ((1ull << 44) - 1)) << 12;
			if (t->pa_bits < 64 && (a >> t->pa_bits)) {
				res.fault = RV_ACCESS;
				return res;
			}
			i--;
			continue;
		}
		break;
	}
	rv_leaf(t, va, acc, i, pte, &res);
	return res;
}

#endif
