/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A reference walker for ARM VMSAv8-64 tables, written for the tests from
 * the Arm ARM (DDI 0487: TCR_EL1 / VTCR_EL2 / TTBR fields, the block, page
 * and table descriptor formats, FEAT_LPA's and FEAT_LPA2's 52-bit layouts,
 * FEAT_HAFDBS), sharing no code with the library.  It starts from the
 * register values a driver programs (TCR + TTBR0 for stage 1, VTCR + VTTBR
 * for stage 2), reads descriptors through a callback, and decodes them the
 * way an SMMU does: start level, concatenated stage-2 roots, the moved OA
 * bits, which levels may hold blocks, address-size faults, permissions and
 * the hardware access-flag / dirty-state update.
 */
#ifndef IK_TEST_LPAE_REFWALK_H
#define IK_TEST_LPAE_REFWALK_H

#include <stdbool.h>
#include <stdint.h>

enum lr_fault {
	LR_OK = 0,
	LR_TRANSLATION,	/* invalid descriptor, block where none is allowed, iova >= 2^ias */
	LR_ADDR_SIZE,	/* table or output address >= 2^PS */
	LR_ACCESS_FLAG,	/* AF = 0 without HA */
	LR_PERMISSION,
	LR_BAD_REGS,	/* register values no walk can use */
};

enum { LR_READ = 1, LR_WRITE = 2 };

struct lr_result {
	enum lr_fault fault;
	int level;		/* ARM lookup level of the leaf / faulting entry (-1..3) */
	uint64_t pa, pgsize;
	bool r, w, x, priv_only; /* effective permissions (w: now writable, DBM included) */
	bool dirty;		/* DBM leaf that has been written */
	unsigned attr;		/* stage 1: MAIR byte; stage 2: MemAttr */
	uint64_t desc, desc_addr;
};

struct lr_regs {
	unsigned stage;		/* 1: tcr/ttbr are TCR_EL1/TTBR0; 2: VTCR/VTTBR */
	uint64_t tcr, ttbr, mair;
	/* read the 8-byte descriptor at physical address pa; false: abort */
	bool (*read)(void *ctx, uint64_t pa, uint64_t *v);
	bool (*write)(void *ctx, uint64_t pa, uint64_t v); /* hardware updates */
	void *ctx;
};

static inline uint64_t lr_field(uint64_t v, unsigned lo, unsigned n)
{
	return (v >> lo) & ((1ull << n) - 1);
}

/* The walk's shape from the registers. */
struct lr_shape {
	unsigned gshift, stride, ias, ps;
	int start;	/* initial lookup level */
	bool ds, ha, hd;
	uint64_t root;
};

static inline bool lr_shape_of(const struct lr_regs *r, struct lr_shape *s)
{
	static const unsigned pa[7] = { 32, 36, 40, 42, 44, 48, 52 };
	unsigned tg = (unsigned)lr_field(r->tcr, 14, 2), ps, bits_left;
	bool s1 = r->stage == 1;

	s->gshift = tg == 0 ? 12 : tg == 1 ? 16 : tg == 2 ? 14 : 0;
	if (!s->gshift)
		return false;
	s->stride = s->gshift - 3;
	s->ias = 64 - (unsigned)lr_field(r->tcr, 0, 6);
	s->ds = s->gshift != 16 && lr_field(r->tcr, s1 ? 59 : 32, 1);
	ps = (unsigned)lr_field(r->tcr, s1 ? 32 : 16, 3);
	if (ps > 6)
		return false;
	s->ps = pa[ps];
	if (s->ps == 52 && s->gshift != 16 && !s->ds)
		s->ps = 48;
	s->ha = lr_field(r->tcr, s1 ? 39 : 21, 1);
	s->hd = s->ha && lr_field(r->tcr, s1 ? 40 : 22, 1);
	if (s->ias > ((s->gshift == 16 || s->ds) ? 52u : 48u))
		return false;
	if (s1) {
		/* enough levels to resolve ias bits, the last one partial */
		bits_left = s->ias - s->gshift;
		s->start = 4 - (int)((bits_left + s->stride - 1) / s->stride);
	} else {
		unsigned sl0 = (unsigned)lr_field(r->tcr, 6, 2);
		bool sl2 = lr_field(r->tcr, 33, 1);

		if (s->gshift == 12)
			s->start = sl2 ? (sl0 == 0 ? -1 : 9) : (sl0 == 3 ? 9 : 2 - (int)sl0);
		else
			s->start = sl0 == 3 ? (s->ds && s->gshift == 14 ? 0 : 9) : 3 - (int)sl0;
		if (s->start == 9)
			return false;
	}
	/* TTBR: BADDR[47:x] in place, BADDR[51:48] in [5:2] when 52-bit */
	s->root = r->ttbr & 0x0000ffffffffffc0ull;
	if (s->ps == 52)
		s->root |= lr_field(r->ttbr, 2, 4) << 48;
	return true;
}

/* Output / table address of a descriptor. */
static inline uint64_t lr_addr(const struct lr_shape *s, uint64_t d, unsigned lowbits)
{
	uint64_t a;

	if (s->gshift == 16)
		a = (d & 0x0000ffffffff0000ull) | lr_field(d, 12, 4) << 48;
	else if (s->ds)
		a = (d & 0x0003fffffffff000ull) | lr_field(d, 8, 2) << 50;
	else
		a = d & 0x0000fffffffff000ull;
	return a & ~((1ull << lowbits) - 1);
}

/* Block descriptors allowed at this lookup level (Arm ARM: 4K levels 1, 2
 * and 0 with DS; 16K level 2 and 1 with DS; 64K level 2 and 1 with 52-bit
 * PA). */
static inline bool lr_block_ok(const struct lr_shape *s, int level)
{
	switch (s->gshift) {
	case 12: return level == 1 || level == 2 || (level == 0 && s->ds);
	case 14: return level == 2 || (level == 1 && s->ds);
	default: return level == 2 || (level == 1 && s->ps == 52);
	}
}

static inline void lr_leaf_perms(const struct lr_regs *r, const struct lr_shape *s,
				 struct lr_result *res, uint64_t d, bool tbl_ro, bool tbl_xn)
{
	bool dbm = (d >> 51) & 1;

	res->dirty = false;
	if (r->stage == 1) {
		bool ro = (d >> 7) & 1;

		res->r = true;
		res->w = !tbl_ro && (!ro || (dbm && s->hd));
		res->dirty = dbm && !ro;
		res->priv_only = !((d >> 6) & 1);
		res->x = !((d >> 54) & 1) && !((d >> 53) & 1) && !tbl_xn;
		res->attr = (unsigned)lr_field(r->mair, 8 * (unsigned)lr_field(d, 2, 3), 8);
	} else {
		bool wr = (d >> 7) & 1;

		res->r = (d >> 6) & 1;
		res->w = wr || (dbm && s->hd);
		res->dirty = dbm && wr;
		res->priv_only = false;
		res->x = !((d >> 54) & 1);
		res->attr = (unsigned)lr_field(d, 2, 4);
	}
}

/* Check the access; on a write to a writable-clean DBM leaf (with HD) and
 * on AF = 0 (with HA) write the descriptor back as the hardware does. */
static inline void lr_access(const struct lr_regs *r, const struct lr_shape *s,
			     struct lr_result *res, unsigned access)
{
	uint64_t d = res->desc, nd = d;

	if (!((d >> 10) & 1)) {
		if (!s->ha) {
			res->fault = LR_ACCESS_FLAG;
			return;
		}
		nd |= 1ull << 10;
	}
	if (((access & LR_READ) && !res->r) || ((access & LR_WRITE) && !res->w)) {
		res->fault = LR_PERMISSION;
		return;
	}
	if ((access & LR_WRITE) && ((d >> 51) & 1))
		nd = r->stage == 1 ? nd & ~(1ull << 7) : nd | (1ull << 7);
	if (nd != d && r->write) {
		r->write(r->ctx, res->desc_addr, nd);
		res->desc = nd;
		res->dirty = ((nd >> 51) & 1) && (r->stage == 1 ? !((nd >> 7) & 1) : ((nd >> 7) & 1));
	}
}

static inline struct lr_result lr_walk(const struct lr_regs *r, uint64_t iova, unsigned access)
{
	struct lr_result res = { LR_OK, 0, 0, 0, false, false, false, false, false, 0, 0, 0 };
	struct lr_shape s;
	uint64_t table;
	bool tbl_ro = false, tbl_xn = false;

	if (!lr_shape_of(r, &s)) {
		res.fault = LR_BAD_REGS;
		return res;
	}
	if (s.ias < 64 && (iova >> s.ias)) {
		res.fault = LR_TRANSLATION;
		return res;
	}
	table = s.root;
	for (int level = s.start; level <= 3; level++) {
		unsigned shift = s.gshift + (unsigned)(3 - level) * s.stride;
		/* the initial level takes every remaining bit (concatenation) */
		unsigned nbits = level == s.start ? s.ias - shift : s.stride;
		uint64_t idx = (iova >> shift) & ((1ull << nbits) - 1), d;

		res.level = level;
		res.desc_addr = table + idx * 8;
		if (!r->read(r->ctx, res.desc_addr, &d)) {
			res.fault = LR_TRANSLATION;
			return res;
		}
		res.desc = d;
		if (!(d & 1) || (level == 3 && !(d & 2)) || (level < 3 && !(d & 2) && !lr_block_ok(&s, level))) {
			res.fault = LR_TRANSLATION;
			return res;
		}
		if (level < 3 && (d & 2)) {
			table = lr_addr(&s, d, s.gshift);
			if (table >> s.ps) {
				res.fault = LR_ADDR_SIZE;
				return res;
			}
			if (r->stage == 1) {
				tbl_ro |= (d >> 62) & 1;
				tbl_xn |= ((d >> 60) & 1) || ((d >> 59) & 1);
			}
			continue;
		}
		res.pgsize = 1ull << shift;
		res.pa = lr_addr(&s, d, shift);
		if (res.pa >> s.ps) {
			res.fault = LR_ADDR_SIZE;
			return res;
		}
		res.pa |= iova & (res.pgsize - 1);
		lr_leaf_perms(r, &s, &res, d, tbl_ro, tbl_xn);
		lr_access(r, &s, &res, access);
		return res;
	}
	res.fault = LR_TRANSLATION;
	return res;
}

#endif /* IK_TEST_LPAE_REFWALK_H */
