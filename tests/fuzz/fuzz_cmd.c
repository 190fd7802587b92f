/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fuzz_cmd - the SMMUv3, VT-d and RISC-V command encoders and decoders, the
 * RISC-V fault-record codec, and the TLBI range splitter and the VT-d PSI
 * mask (include/iommukit/cmd/).
 *
 * The model is a second, independent codec written from the layout tables
 * in the public headers (bit positions of every field of every opcode, and
 * the reserved encodings they name).  Each operation of the input:
 *   - a random decoded command: the library's encoder and the reference
 *     must agree on success and on the exact words; a command that encodes
 *     decodes back to every one of its fields;
 *   - random words: the library's decoder and the reference agree on
 *     legality and on every field; a legal entry re-encodes to the exact
 *     words;
 *   - ik_smmu_tlbi_range over a random range, granule and template: the
 *     validity of the request is decided independently; each command
 *     returned encodes, carries the template's fields, and together they
 *     cover exactly [iova, iova + size) once (no gap, no overlap, nothing
 *     outside, the 2^52 stage-2 limit included); -ENOSPC only when more than
 *     `max` commands are really needed;
 *   - ik_vtd_psi_mask: the block holds the range, is aligned, is the
 *     smallest such block, and -EINVAL exactly when it would exceed max_am;
 *   - RISC-V fault records: random records decode exactly when the
 *     reference says they are legal, to the reference's fields, and
 *     re-encode to the same words.
 */
#include <iommukit/cmd/smmuv3.h>
#include <iommukit/cmd/vtd.h>
#include <iommukit/cmd/riscv.h>
#include "fuzzlib.h"

typedef unsigned __int128 u128;

/* ---------------------------------------------------------------- reference */

/* A field: bits [lsb, lsb + width) of the entry hold bits [shift, shift +
 * width) of the member at `off` (size `sz`). */
struct rfield {
	unsigned op, off, sz, lsb, width, shift;
};

#define SM(m) (unsigned)__builtin_offsetof(struct ik_smmu_cmd, m), \
	      (unsigned)sizeof(((struct ik_smmu_cmd *)0)->m)
#define VM(m) (unsigned)__builtin_offsetof(struct ik_vtd_desc, m), \
	      (unsigned)sizeof(((struct ik_vtd_desc *)0)->m)

/* From the layout table of <iommukit/cmd/smmuv3.h>. */
static const struct rfield smmu_ref[] = {
	{ 0x03, SM(ssec), 10, 1, 0 },	 { 0x03, SM(sid), 32, 32, 0 },
	{ 0x03, SM(leaf), 64, 1, 0 },	 { 0x04, SM(ssec), 10, 1, 0 },
	{ 0x04, SM(sid), 32, 32, 0 },	 { 0x04, SM(range), 64, 5, 0 },
	{ 0x05, SM(ssec), 10, 1, 0 },	 { 0x05, SM(ssid), 12, 20, 0 },
	{ 0x05, SM(sid), 32, 32, 0 },	 { 0x05, SM(leaf), 64, 1, 0 },
	{ 0x06, SM(ssec), 10, 1, 0 },	 { 0x06, SM(sid), 32, 32, 0 },
	{ 0x10, SM(vmid), 32, 16, 0 },	 { 0x28, SM(vmid), 32, 16, 0 },
	{ 0x11, SM(vmid), 32, 16, 0 },	 { 0x11, SM(asid), 48, 16, 0 },
	{ 0x12, SM(num), 12, 5, 0 },	 { 0x12, SM(scale), 20, 5, 0 },
	{ 0x12, SM(vmid), 32, 16, 0 },	 { 0x12, SM(asid), 48, 16, 0 },
	{ 0x12, SM(leaf), 64, 1, 0 },	 { 0x12, SM(ttl), 72, 2, 0 },
	{ 0x12, SM(tg), 74, 2, 0 },	 { 0x12, SM(addr), 76, 52, 12 },
	{ 0x2a, SM(num), 12, 5, 0 },	 { 0x2a, SM(scale), 20, 5, 0 },
	{ 0x2a, SM(vmid), 32, 16, 0 },	 { 0x2a, SM(leaf), 64, 1, 0 },
	{ 0x2a, SM(ttl), 72, 2, 0 },	 { 0x2a, SM(tg), 74, 2, 0 },
	{ 0x2a, SM(addr), 76, 40, 12 },	 { 0x40, SM(global), 9, 1, 0 },
	{ 0x40, SM(ssv), 11, 1, 0 },	 { 0x40, SM(ssid), 12, 20, 0 },
	{ 0x40, SM(sid), 32, 32, 0 },	 { 0x40, SM(size), 64, 6, 0 },
	{ 0x40, SM(addr), 76, 52, 12 },	 { 0x41, SM(ssv), 11, 1, 0 },
	{ 0x41, SM(ssid), 12, 20, 0 },	 { 0x41, SM(sid), 32, 32, 0 },
	{ 0x41, SM(prgi), 64, 9, 0 },	 { 0x41, SM(resp), 76, 2, 0 },
	{ 0x46, SM(cs), 12, 2, 0 },	 { 0x46, SM(msh), 22, 2, 0 },
	{ 0x46, SM(msiattr), 24, 4, 0 }, { 0x46, SM(msidata), 32, 32, 0 },
	{ 0x46, SM(msiaddr), 66, 50, 2 },
};

static const unsigned smmu_ops[] = { 0x03, 0x04, 0x05, 0x06, 0x10, 0x11, 0x12,
				     0x20, 0x28, 0x2a, 0x30, 0x40, 0x41, 0x46 };

/* Every member of struct ik_smmu_cmd but op. */
static const struct rfield smmu_members[] = {
	{ 0, SM(ssec), 0, 0, 0 },    { 0, SM(leaf), 0, 0, 0 },	  { 0, SM(ssv), 0, 0, 0 },
	{ 0, SM(global), 0, 0, 0 },  { 0, SM(range), 0, 0, 0 },	  { 0, SM(num), 0, 0, 0 },
	{ 0, SM(scale), 0, 0, 0 },   { 0, SM(tg), 0, 0, 0 },	  { 0, SM(ttl), 0, 0, 0 },
	{ 0, SM(size), 0, 0, 0 },    { 0, SM(resp), 0, 0, 0 },	  { 0, SM(cs), 0, 0, 0 },
	{ 0, SM(msh), 0, 0, 0 },     { 0, SM(msiattr), 0, 0, 0 }, { 0, SM(asid), 0, 0, 0 },
	{ 0, SM(vmid), 0, 0, 0 },    { 0, SM(prgi), 0, 0, 0 },	  { 0, SM(sid), 0, 0, 0 },
	{ 0, SM(ssid), 0, 0, 0 },    { 0, SM(msidata), 0, 0, 0 }, { 0, SM(addr), 0, 0, 0 },
	{ 0, SM(msiaddr), 0, 0, 0 },
};

/* From the layout table of <iommukit/cmd/vtd.h>. */
static const struct rfield vtd_ref[] = {
	{ 0x1, VM(g), 4, 2, 0 },	   { 0x1, VM(did), 16, 16, 0 },
	{ 0x1, VM(sid), 32, 16, 0 },	   { 0x1, VM(fm), 48, 2, 0 },
	{ 0x2, VM(g), 4, 2, 0 },	   { 0x2, VM(dw), 6, 1, 0 },
	{ 0x2, VM(dr), 7, 1, 0 },	   { 0x2, VM(did), 16, 16, 0 },
	{ 0x2, VM(am), 64, 6, 0 },	   { 0x2, VM(ih), 70, 1, 0 },
	{ 0x2, VM(addr), 76, 52, 12 },	   { 0x3, VM(pfsid), 12, 4, 0 },
	{ 0x3, VM(mip), 16, 5, 0 },	   { 0x3, VM(sid), 32, 16, 0 },
	{ 0x3, VM(pfsid), 52, 12, 4 },	   { 0x3, VM(s), 64, 1, 0 },
	{ 0x3, VM(addr), 76, 52, 12 },	   { 0x5, VM(iflag), 4, 1, 0 },
	{ 0x5, VM(sw), 5, 1, 0 },	   { 0x5, VM(fn), 6, 1, 0 },
	{ 0x5, VM(pd), 7, 1, 0 },	   { 0x5, VM(status_data), 32, 32, 0 },
	{ 0x5, VM(status_addr), 66, 62, 2 }, { 0x6, VM(g), 4, 2, 0 },
	{ 0x6, VM(did), 16, 16, 0 },	   { 0x6, VM(pasid), 32, 20, 0 },
	{ 0x6, VM(am), 64, 6, 0 },	   { 0x6, VM(ih), 70, 1, 0 },
	{ 0x6, VM(addr), 76, 52, 12 },	   { 0x7, VM(g), 4, 2, 0 },
	{ 0x7, VM(did), 16, 16, 0 },	   { 0x7, VM(pasid), 32, 20, 0 },
};

static const unsigned vtd_types[] = { 0x1, 0x2, 0x3, 0x5, 0x6, 0x7 };

static const struct rfield vtd_members[] = {
	{ 0, VM(g), 0, 0, 0 },	     { 0, VM(fm), 0, 0, 0 },	{ 0, VM(dw), 0, 0, 0 },
	{ 0, VM(dr), 0, 0, 0 },	     { 0, VM(am), 0, 0, 0 },	{ 0, VM(ih), 0, 0, 0 },
	{ 0, VM(s), 0, 0, 0 },	     { 0, VM(mip), 0, 0, 0 },	{ 0, VM(iflag), 0, 0, 0 },
	{ 0, VM(sw), 0, 0, 0 },	     { 0, VM(fn), 0, 0, 0 },	{ 0, VM(pd), 0, 0, 0 },
	{ 0, VM(did), 0, 0, 0 },     { 0, VM(sid), 0, 0, 0 },	{ 0, VM(pfsid), 0, 0, 0 },
	{ 0, VM(pasid), 0, 0, 0 },   { 0, VM(status_data), 0, 0, 0 },
	{ 0, VM(addr), 0, 0, 0 },    { 0, VM(status_addr), 0, 0, 0 },
};

#define RM(m) (unsigned)__builtin_offsetof(struct ik_riscv_cmd, m), \
	      (unsigned)sizeof(((struct ik_riscv_cmd *)0)->m)
/* RISC-V: op = OPCODE | FUNC3 << 4; from the layout table of
 * <iommukit/cmd/riscv.h>. */
static const struct rfield rv_ref[] = {
	{ 0x01, RM(av), 10, 1, 0 },	 { 0x01, RM(pscid), 12, 20, 0 },
	{ 0x01, RM(pscv), 32, 1, 0 },	 { 0x01, RM(gv), 33, 1, 0 },
	{ 0x01, RM(gscid), 44, 16, 0 },	 { 0x01, RM(addr), 74, 52, 12 },
	{ 0x11, RM(av), 10, 1, 0 },	 { 0x11, RM(gv), 33, 1, 0 },
	{ 0x11, RM(gscid), 44, 16, 0 },	 { 0x11, RM(addr), 74, 52, 12 },
	{ 0x02, RM(av), 10, 1, 0 },	 { 0x02, RM(wsi), 11, 1, 0 },
	{ 0x02, RM(pr), 12, 1, 0 },	 { 0x02, RM(pw), 13, 1, 0 },
	{ 0x02, RM(data), 32, 32, 0 },	 { 0x02, RM(addr), 64, 62, 2 },
	{ 0x03, RM(dv), 33, 1, 0 },	 { 0x03, RM(did), 40, 24, 0 },
	{ 0x13, RM(pid), 12, 20, 0 },	 { 0x13, RM(dv), 33, 1, 0 },
	{ 0x13, RM(did), 40, 24, 0 },
};

static const unsigned rv_ops[] = { 0x01, 0x11, 0x02, 0x03, 0x13 };

static const struct rfield rv_members[] = {
	{ 0, RM(av), 0, 0, 0 },	   { 0, RM(pscv), 0, 0, 0 }, { 0, RM(gv), 0, 0, 0 },
	{ 0, RM(wsi), 0, 0, 0 },   { 0, RM(pr), 0, 0, 0 },   { 0, RM(pw), 0, 0, 0 },
	{ 0, RM(dv), 0, 0, 0 },	   { 0, RM(gscid), 0, 0, 0 }, { 0, RM(pscid), 0, 0, 0 },
	{ 0, RM(pid), 0, 0, 0 },   { 0, RM(did), 0, 0, 0 },  { 0, RM(data), 0, 0, 0 },
	{ 0, RM(addr), 0, 0, 0 },
};

static uint64_t mget(const void *base, unsigned off, unsigned sz)
{
	const unsigned char *p = (const unsigned char *)base + off;
	uint64_t v = 0;

	memcpy(&v, p, sz); /* little-endian host */
	return v;
}

static void mset(void *base, unsigned off, unsigned sz, uint64_t v)
{
	memcpy((unsigned char *)base + off, &v, sz);
}

static uint64_t fmask(unsigned w)
{
	return w >= 64 ? ~0ull : (1ull << w) - 1;
}

static uint64_t bits_get(const uint64_t *w, unsigned lsb, unsigned width)
{
	return (w[lsb / 64] >> (lsb % 64)) & fmask(width);
}

/* Encode the members of `base` for `op` by the table; 0 or -EINVAL. */
static int ref_encode(const struct rfield *tab, size_t n, const struct rfield *mem, size_t nm,
		      unsigned op, const void *base, uint64_t *w, unsigned nw)
{
	memset(w, 0, nw * 8);
	for (size_t m = 0; m < nm; m++) {
		uint64_t v = mget(base, mem[m].off, mem[m].sz), covered = 0;

		for (size_t i = 0; i < n; i++) {
			if (tab[i].op != op || tab[i].off != mem[m].off)
				continue;
			covered |= fmask(tab[i].width) << tab[i].shift;
			w[tab[i].lsb / 64] |= ((v >> tab[i].shift) & fmask(tab[i].width))
					      << (tab[i].lsb % 64);
		}
		if (v & ~covered)
			return -EINVAL; /* does not fit, or not a field of op */
	}
	return 0;
}

/* Decode w by the table for `op` into base (zeroed first); -EINVAL for a bit
 * outside the op's fields (opmask: the opcode's own bits). */
static int ref_decode(const struct rfield *tab, size_t n, unsigned op, const uint64_t *w,
		      unsigned nw, uint64_t opmask, void *base, size_t base_size)
{
	uint64_t defined[4] = { opmask, 0, 0, 0 };

	memset(base, 0, base_size);
	for (size_t i = 0; i < n; i++) {
		uint64_t v;

		if (tab[i].op != op)
			continue;
		defined[tab[i].lsb / 64] |= fmask(tab[i].width) << (tab[i].lsb % 64);
		v = mget(base, tab[i].off, tab[i].sz);
		v |= bits_get(w, tab[i].lsb, tab[i].width) << tab[i].shift;
		mset(base, tab[i].off, tab[i].sz, v);
	}
	for (unsigned i = 0; i < nw; i++)
		if (w[i] & ~defined[i])
			return -EINVAL;
	return 0;
}

static bool smmu_known(unsigned op)
{
	for (size_t i = 0; i < IK_ARRAY_SIZE(smmu_ops); i++)
		if (smmu_ops[i] == op)
			return true;
	return false;
}

static bool vtd_known(unsigned t)
{
	for (size_t i = 0; i < IK_ARRAY_SIZE(vtd_types); i++)
		if (vtd_types[i] == t)
			return true;
	return false;
}

/* The reserved encodings the SMMUv3 header names (and PRI_RESP Resp 3, a
 * reserved response in the architecture). */
static bool smmu_rules_ok(const struct ik_smmu_cmd *c)
{
	if ((c->op == 0x12 || c->op == 0x2a) && c->tg == 0 && (c->num || c->scale || c->ttl))
		return false;
	if (c->op == 0x46 && c->cs == 3)
		return false;
	if (c->op == 0x41 && c->resp == 3)
		return false;
	return true;
}

/* VT-d: G values the header defines, and ADDR aligned to its 2^AM pages. */
static bool vtd_rules_ok(const struct ik_vtd_desc *d)
{
	if ((d->type == 0x1 || d->type == 0x2) && d->g == 0)
		return false;
	if (d->type == 0x6 && d->g < 2)
		return false;
	if (d->type == 0x7 && d->g == 2) /* PASID-cache: G = 2 reserved */
		return false;
	if (d->type == 0x5 && !d->sw && !d->iflag) /* a wait must signal */
		return false;
	if (d->am) {
		/* A block of 2^(am + 12) bytes: from am 52 on it is all of the
		 * 64-bit space, and only address 0 is aligned to it. */
		if (d->am >= 52 ? d->addr != 0 : d->addr % (1ull << (d->am + 12)) != 0)
			return false;
	}
	return true;
}

static int ref_smmu_encode(const struct ik_smmu_cmd *c, uint64_t w[2])
{
	if (!smmu_known(c->op) || !smmu_rules_ok(c))
		return -EINVAL;
	if (ref_encode(smmu_ref, IK_ARRAY_SIZE(smmu_ref), smmu_members,
		       IK_ARRAY_SIZE(smmu_members), c->op, c, w, 2))
		return -EINVAL;
	w[0] |= c->op;
	return 0;
}

static int ref_smmu_decode(const uint64_t w[2], struct ik_smmu_cmd *c)
{
	unsigned op = (unsigned)(w[0] & 0xff);

	if (!smmu_known(op))
		return -EINVAL;
	if (ref_decode(smmu_ref, IK_ARRAY_SIZE(smmu_ref), op, w, 2, 0xff, c, sizeof(*c)))
		return -EINVAL;
	c->op = (ik_u8)op;
	return smmu_rules_ok(c) ? 0 : -EINVAL;
}

static int ref_vtd_encode(const struct ik_vtd_desc *d, uint64_t *w, unsigned nw)
{
	if ((nw != 2 && nw != 4) || !vtd_known(d->type) || !vtd_rules_ok(d))
		return -EINVAL;
	if (ref_encode(vtd_ref, IK_ARRAY_SIZE(vtd_ref), vtd_members, IK_ARRAY_SIZE(vtd_members),
		       d->type, d, w, nw))
		return -EINVAL;
	w[0] |= d->type;
	return 0;
}

static int ref_vtd_decode(const uint64_t *w, unsigned nw, struct ik_vtd_desc *d)
{
	unsigned t = (unsigned)(w[0] & 0xf);

	if ((nw != 2 && nw != 4) || !vtd_known(t))
		return -EINVAL;
	if (ref_decode(vtd_ref, IK_ARRAY_SIZE(vtd_ref), t, w, nw, 0xf, d, sizeof(*d)))
		return -EINVAL;
	d->type = (ik_u8)t;
	return vtd_rules_ok(d) ? 0 : -EINVAL;
}

static bool smmu_equal(const struct ik_smmu_cmd *a, const struct ik_smmu_cmd *b)
{
	if (a->op != b->op)
		return false;
	for (size_t m = 0; m < IK_ARRAY_SIZE(smmu_members); m++)
		if (mget(a, smmu_members[m].off, smmu_members[m].sz) !=
		    mget(b, smmu_members[m].off, smmu_members[m].sz))
			return false;
	return true;
}

static bool vtd_equal(const struct ik_vtd_desc *a, const struct ik_vtd_desc *b)
{
	if (a->type != b->type)
		return false;
	for (size_t m = 0; m < IK_ARRAY_SIZE(vtd_members); m++)
		if (mget(a, vtd_members[m].off, vtd_members[m].sz) !=
		    mget(b, vtd_members[m].off, vtd_members[m].sz))
			return false;
	return true;
}

static bool rv_known(unsigned op)
{
	for (size_t i = 0; i < IK_ARRAY_SIZE(rv_ops); i++)
		if (rv_ops[i] == op)
			return true;
	return false;
}

/* The header's rules beyond the layout: a field needs its valid bit; a PDT
 * invalidation needs DV; addresses aligned (4 KiB / 4 bytes). */
static bool rv_rules_ok(const struct ik_riscv_cmd *c)
{
	unsigned op = c->opcode | (unsigned)c->func3 << 4;

	if ((!c->av && (c->addr || c->data)) || (!c->pscv && c->pscid) || (!c->gv && c->gscid) ||
	    (!c->dv && c->did))
		return false;
	if (op == 0x13 && !c->dv)
		return false;
	if ((c->opcode == 1 && (c->addr & 0xfff)) || (c->opcode == 2 && (c->addr & 3)))
		return false;
	return true;
}

static int ref_rv_encode(const struct ik_riscv_cmd *c, uint64_t w[2])
{
	unsigned op = c->opcode | (unsigned)c->func3 << 4;

	if (c->opcode > 0xf || c->func3 > 7 || !rv_known(op) || !rv_rules_ok(c))
		return -EINVAL;
	if (ref_encode(rv_ref, IK_ARRAY_SIZE(rv_ref), rv_members, IK_ARRAY_SIZE(rv_members), op, c,
		       w, 2))
		return -EINVAL;
	w[0] |= c->opcode | (uint64_t)c->func3 << 7;
	return 0;
}

static int ref_rv_decode(const uint64_t w[2], struct ik_riscv_cmd *c)
{
	unsigned opc = (unsigned)(w[0] & 0x7f), fn = (unsigned)(w[0] >> 7) & 7;

	memset(c, 0, sizeof(*c));
	if (opc > 0xf || !rv_known(opc | fn << 4))
		return -EINVAL;
	if (ref_decode(rv_ref, IK_ARRAY_SIZE(rv_ref), opc | fn << 4, w, 2, 0x3ff, c, sizeof(*c)))
		return -EINVAL;
	c->opcode = (ik_u8)opc;
	c->func3 = (ik_u8)fn;
	return rv_rules_ok(c) ? 0 : -EINVAL;
}

static bool rv_equal(const struct ik_riscv_cmd *a, const struct ik_riscv_cmd *b)
{
	if (a->opcode != b->opcode || a->func3 != b->func3)
		return false;
	for (size_t m = 0; m < IK_ARRAY_SIZE(rv_members); m++)
		if (mget(a, rv_members[m].off, rv_members[m].sz) !=
		    mget(b, rv_members[m].off, rv_members[m].sz))
			return false;
	return true;
}

/* ---------------------------------------------------------------- generators */

/* A value for a member: usually one that fits the op's field (so that most
 * commands encode), sometimes anything. */
static uint64_t gen_value(struct fz *f, const struct rfield *tab, size_t n, unsigned op,
			  unsigned off, unsigned sz)
{
	uint8_t k = fz_u8(f);
	uint64_t covered = 0, v;

	for (size_t i = 0; i < n; i++)
		if (tab[i].op == op && tab[i].off == off)
			covered |= fmask(tab[i].width) << tab[i].shift;
	switch (k & 7) {
	case 0:
	case 1:
		return 0;
	case 2:
		v = fz_edgy(f);
		break;
	case 3:
		v = fz_u64(f); /* anything: usually rejected */
		break;
	default:
		v = fz_u64(f) & covered;
		break;
	}
	return sz == 8 ? v : v & fmask(8 * sz);
}

static void gen_smmu(struct fz *f, struct ik_smmu_cmd *c)
{
	uint8_t k = fz_u8(f);

	memset(c, 0, sizeof(*c));
	c->op = (ik_u8)(k < 240 ? smmu_ops[k % IK_ARRAY_SIZE(smmu_ops)] : fz_u8(f));
	for (size_t m = 0; m < IK_ARRAY_SIZE(smmu_members); m++)
		mset(c, smmu_members[m].off, smmu_members[m].sz,
		     gen_value(f, smmu_ref, IK_ARRAY_SIZE(smmu_ref), c->op, smmu_members[m].off,
			       smmu_members[m].sz));
}

static void gen_vtd(struct fz *f, struct ik_vtd_desc *d)
{
	uint8_t k = fz_u8(f);

	memset(d, 0, sizeof(*d));
	d->type = (ik_u8)(k < 240 ? vtd_types[k % IK_ARRAY_SIZE(vtd_types)] : fz_u8(f));
	for (size_t m = 0; m < IK_ARRAY_SIZE(vtd_members); m++)
		mset(d, vtd_members[m].off, vtd_members[m].sz,
		     gen_value(f, vtd_ref, IK_ARRAY_SIZE(vtd_ref), d->type, vtd_members[m].off,
			       vtd_members[m].sz));
}

static void gen_rv(struct fz *f, struct ik_riscv_cmd *c)
{
	uint8_t k = fz_u8(f);
	unsigned op = k < 240 ? rv_ops[k % IK_ARRAY_SIZE(rv_ops)] : fz_u8(f);

	memset(c, 0, sizeof(*c));
	c->opcode = (ik_u8)(op & 0xf);
	c->func3 = (ik_u8)((op >> 4) & 7);
	if (k >= 250)
		c->opcode = fz_u8(f);
	for (size_t m = 0; m < IK_ARRAY_SIZE(rv_members); m++)
		mset(c, rv_members[m].off, rv_members[m].sz,
		     gen_value(f, rv_ref, IK_ARRAY_SIZE(rv_ref), op, rv_members[m].off,
			       rv_members[m].sz));
	/* valid bits usually set where their fields are */
	if (fz_u8(f) < 200) {
		c->av = c->addr || c->data ? 1 : c->av;
		c->pscv = c->pscid ? 1 : c->pscv;
		c->gv = c->gscid ? 1 : c->gv;
		c->dv = c->did || op == 0x13 ? 1 : c->dv;
		if (fz_u8(f) < 200)
			c->addr &= c->opcode == 1 ? ~0xfffull : ~3ull;
	}
}

/* Words: an encoded random command with some bits flipped, or anything. */
static void gen_words(struct fz *f, uint64_t *w, unsigned nw, bool vtd)
{
	uint8_t k = fz_u8(f);

	memset(w, 0, 4 * 8);
	if (k & 1) {
		for (unsigned i = 0; i < nw; i++)
			w[i] = fz_u64(f);
		if (k & 2) /* a known opcode in the low bits */
			w[0] = (w[0] & ~0xffull) |
			       (vtd ? (w[0] & 0xf0) | vtd_types[(k >> 2) % IK_ARRAY_SIZE(vtd_types)]
				    : smmu_ops[(k >> 2) % IK_ARRAY_SIZE(smmu_ops)]);
		return;
	}
	if (vtd) {
		struct ik_vtd_desc d;

		gen_vtd(f, &d);
		if (ref_vtd_encode(&d, w, nw))
			w[0] = d.type;
	} else {
		struct ik_smmu_cmd c;

		gen_smmu(f, &c);
		if (ref_smmu_encode(&c, w))
			w[0] = c.op;
	}
	/* flip up to two bits */
	for (unsigned i = 0, nflip = (k >> 1) & 3; i < nflip && i < 2; i++) {
		unsigned b = fz_u8(f) % (64 * nw);

		w[b / 64] ^= 1ull << (b % 64);
	}
}

/* ---------------------------------------------------------------- operations */

static void op_rv_cmd(struct fz *f)
{
	struct ik_riscv_cmd c, d;
	uint64_t w[2] = { 0x5a5a, 0xa5a5 }, r[2] = { 0, 0 };
	int err, rerr;

	gen_rv(f, &c);
	err = ik_riscv_cmd_encode(&c, w);
	rerr = ref_rv_encode(&c, r);
	FZ_CHECK(err == rerr, "riscv encode %u/%u: library %d, reference %d", c.opcode, c.func3, err,
		 rerr);
	FZ_CHECK((ik_riscv_cmd_name(c.opcode, c.func3) != NULL) ==
			 (c.opcode <= 0xf && rv_known(c.opcode | (unsigned)c.func3 << 4)),
		 "name of %u/%u", c.opcode, c.func3);
	if (err) {
		FZ_CHECK(w[0] == 0x5a5a && w[1] == 0xa5a5, "failed encode wrote the words");
		return;
	}
	FZ_CHECK(w[0] == r[0] && w[1] == r[1], "riscv %u/%u words %016llx %016llx, expected %016llx %016llx",
		 c.opcode, c.func3, (unsigned long long)w[1], (unsigned long long)w[0],
		 (unsigned long long)r[1], (unsigned long long)r[0]);
	err = ik_riscv_cmd_decode(w, &d);
	FZ_CHECK(err == 0 && rv_equal(&c, &d), "riscv %u/%u: round trip (%d)", c.opcode, c.func3, err);
}

static void op_rv_words(struct fz *f)
{
	uint64_t w[2], w2[2];
	struct ik_riscv_cmd c, r, g;
	uint8_t k = fz_u8(f);
	int err, rerr;

	gen_rv(f, &g);
	if (k & 1 || ref_rv_encode(&g, w)) {
		w[0] = fz_u64(f), w[1] = fz_u64(f);
		if (k & 2)
			w[0] = (w[0] & ~0x3ffull) | rv_ops[(k >> 2) % IK_ARRAY_SIZE(rv_ops)] % 16 |
			       (uint64_t)(rv_ops[(k >> 2) % IK_ARRAY_SIZE(rv_ops)] >> 4) << 7;
	}
	for (unsigned i = 0, nflip = (k >> 5) & 3; i < nflip; i++) {
		unsigned b = fz_u8(f) % 128;

		w[b / 64] ^= 1ull << (b % 64);
	}
	err = ik_riscv_cmd_decode(w, &c);
	rerr = ref_rv_decode(w, &r);
	FZ_CHECK(err == rerr, "riscv decode %016llx %016llx: library %d, reference %d",
		 (unsigned long long)w[1], (unsigned long long)w[0], err, rerr);
	if (err)
		return;
	FZ_CHECK(rv_equal(&c, &r), "riscv decode %016llx %016llx: fields differ",
		 (unsigned long long)w[1], (unsigned long long)w[0]);
	err = ik_riscv_cmd_encode(&c, w2);
	FZ_CHECK(err == 0 && w2[0] == w[0] && w2[1] == w[1], "riscv decode->encode (err %d)", err);
}

/* A fault record: legal exactly as the header's table says. */
static void op_rv_fault(struct fz *f)
{
	uint64_t w[4] = { fz_u64(f), fz_u64(f), fz_u64(f), fz_u64(f) }, back[4];
	uint8_t k = fz_u8(f);
	struct ik_riscv_fault r;
	unsigned cause, t;
	bool legal, cause_ok;
	int err;

	if (k & 1)
		w[1] &= 0xffffffffull;
	if (k & 2)
		w[0] = (w[0] & ~0xfffull) | (fz_u8(f) % 32) | (k & 4 ? 256 : 0);
	if (k & 8)
		w[0] &= ~(0xfffffull << 12);
	if (k & 16)
		w[0] = (w[0] & ~(63ull << 34)) | (uint64_t)(fz_u8(f) % 12) << 34;
	cause = (unsigned)(w[0] & 0xfff);
	t = (unsigned)(w[0] >> 34) & 63;
	cause_ok = cause == 1 || (cause >= 4 && cause <= 7) || cause == 12 || cause == 13 ||
		   cause == 15 || cause == 20 || cause == 21 || cause == 23 ||
		   (cause >= 256 && cause <= 274) || cause >= 2048;
	if (k & 32)	/* PV, PRIV, DID clear more often */
		w[0] &= ~(3ull << 32 | 0xffffffull << 40);
	if (k & 64)
		w[0] |= 1ull << 34;	/* TTYP != 0 */
	t = (unsigned)(w[0] >> 34) & 63;
	legal = !(w[1] >> 32) && cause_ok && t != 4 && (t <= 9 || t >= 32) &&
		((w[0] >> 32 & 1) || !(w[0] & (0xfffffull << 12 | 1ull << 33))) &&
		(t || !(w[0] & (0xffffffull << 40 | 1ull << 32)));
	err = ik_riscv_fault_decode(w, &r);
	FZ_CHECK((err == 0) == legal, "fault record %016llx %016llx: %d, legal %d",
		 (unsigned long long)w[0], (unsigned long long)w[1], err, legal);
	FZ_CHECK((ik_riscv_fault_cause_name(cause) != NULL) == cause_ok, "cause %u name", cause);
	if (err) {
		FZ_CHECK(r.cause == 0 && r.did == 0 && r.iotval == 0, "refused record left fields");
		return;
	}
	FZ_CHECK(r.cause == cause && r.ttyp == t && r.did == (w[0] >> 40) && r.iotval == w[2] &&
			 r.iotval2 == w[3] && r.custom == (uint32_t)w[1] && r.pv == (w[0] >> 32 & 1) &&
			 r.priv == (w[0] >> 33 & 1) && r.pid == ((w[0] >> 12) & 0xfffff),
		 "fault record fields");
	FZ_CHECK(r.guest_page_fault == (cause == 20 || cause == 21 || cause == 23) &&
			 (!r.guest_page_fault || r.gpa == (w[3] & ~3ull)) &&
			 r.implicit == (r.guest_page_fault && (w[3] & 1)) &&
			 r.implicit_write == (r.implicit && (w[3] & 2)),
		 "guest-page fault fields");
	FZ_CHECK(ik_riscv_fault_encode(&r, back) == 0 && !memcmp(back, w, sizeof(w)),
		 "fault record re-encode");
}

static void op_smmu_cmd(struct fz *f)
{
	struct ik_smmu_cmd c, d;
	uint64_t w[2] = { 0x5a5a, 0xa5a5 }, r[2];
	int err = 0, rerr;

	gen_smmu(f, &c);
	err = ik_smmu_cmd_encode(&c, w);
	rerr = ref_smmu_encode(&c, r);
	FZ_CHECK(err == rerr, "smmu encode op %#x: library %d, reference %d", c.op, err, rerr);
	FZ_CHECK((ik_smmu_cmd_name(c.op) != NULL) == smmu_known(c.op), "name of op %#x", c.op);
	if (err) {
		FZ_CHECK(w[0] == 0x5a5a && w[1] == 0xa5a5, "failed encode wrote the words");
		return;
	}
	FZ_CHECK(w[0] == r[0] && w[1] == r[1], "smmu op %#x words %016llx %016llx, expected %016llx %016llx",
		 c.op, (unsigned long long)w[1], (unsigned long long)w[0], (unsigned long long)r[1],
		 (unsigned long long)r[0]);
	err = ik_smmu_cmd_decode(w, &d);
	FZ_CHECK(err == 0, "an encoded smmu command (op %#x) does not decode: %d", c.op, err);
	FZ_CHECK(smmu_equal(&c, &d), "smmu op %#x: a field changed in the round trip", c.op);
}

static void op_smmu_words(struct fz *f)
{
	uint64_t w[4], w2[2];
	struct ik_smmu_cmd c, r;
	int err, rerr;

	gen_words(f, w, 2, false);
	err = ik_smmu_cmd_decode(w, &c);
	rerr = ref_smmu_decode(w, &r);
	FZ_CHECK(err == rerr, "smmu decode %016llx %016llx: library %d, reference %d",
		 (unsigned long long)w[1], (unsigned long long)w[0], err, rerr);
	if (err)
		return;
	FZ_CHECK(smmu_equal(&c, &r), "smmu decode %016llx %016llx: fields differ from the reference",
		 (unsigned long long)w[1], (unsigned long long)w[0]);
	err = ik_smmu_cmd_encode(&c, w2);
	FZ_CHECK(err == 0 && w2[0] == w[0] && w2[1] == w[1],
		 "smmu decode->encode does not reproduce %016llx %016llx (err %d)",
		 (unsigned long long)w[1], (unsigned long long)w[0], err);
}

static void op_vtd_desc(struct fz *f)
{
	struct ik_vtd_desc d, e;
	uint64_t w[4] = { 1, 2, 3, 4 }, r[4];
	unsigned nw = fz_u8(f) & 1 ? 4 : 2;
	int err, rerr;

	if (fz_u8(f) == 0xff)
		nw = fz_u8(f) % 6; /* 0, 1, 3, 5: -EINVAL */
	gen_vtd(f, &d);
	err = ik_vtd_desc_encode(&d, w, nw);
	rerr = ref_vtd_encode(&d, r, nw);
	FZ_CHECK(err == rerr, "vtd encode type %#x (%u words): library %d, reference %d", d.type,
		 nw, err, rerr);
	FZ_CHECK((ik_vtd_desc_name(d.type) != NULL) == vtd_known(d.type), "name of type %#x",
		 d.type);
	if (err) {
		FZ_CHECK(w[0] == 1 && w[1] == 2 && w[2] == 3 && w[3] == 4,
			 "failed encode wrote the words");
		return;
	}
	for (unsigned i = 0; i < nw; i++)
		FZ_CHECK(w[i] == r[i], "vtd type %#x word %u: %016llx, expected %016llx", d.type, i,
			 (unsigned long long)w[i], (unsigned long long)r[i]);
	if (nw == 2)
		FZ_CHECK(w[2] == 3 && w[3] == 4, "a 128-bit encode wrote past two words");
	err = ik_vtd_desc_decode(w, nw, &e);
	FZ_CHECK(err == 0, "an encoded vtd descriptor (type %#x) does not decode: %d", d.type, err);
	FZ_CHECK(vtd_equal(&d, &e), "vtd type %#x: a field changed in the round trip", d.type);
}

static void op_vtd_words(struct fz *f)
{
	uint64_t w[4], w2[4];
	struct ik_vtd_desc d, r;
	unsigned nw = fz_u8(f) & 1 ? 4 : 2;
	int err, rerr;

	gen_words(f, w, nw, true);
	err = ik_vtd_desc_decode(w, nw, &d);
	rerr = ref_vtd_decode(w, nw, &r);
	FZ_CHECK(err == rerr, "vtd decode %016llx %016llx ... (%u words): library %d, reference %d",
		 (unsigned long long)w[1], (unsigned long long)w[0], nw, err, rerr);
	if (err)
		return;
	FZ_CHECK(vtd_equal(&d, &r), "vtd decode %016llx %016llx: fields differ from the reference",
		 (unsigned long long)w[1], (unsigned long long)w[0]);
	err = ik_vtd_desc_encode(&d, w2, nw);
	FZ_CHECK(err == 0, "vtd decode->encode fails: %d", err);
	for (unsigned i = 0; i < nw; i++)
		FZ_CHECK(w2[i] == w[i], "vtd decode->encode word %u: %016llx, was %016llx", i,
			 (unsigned long long)w2[i], (unsigned long long)w[i]);
}

/* An address or size: aligned to the granule most of the time. */
static uint64_t gen_aligned(struct fz *f, unsigned shift)
{
	uint8_t k = fz_u8(f);
	uint64_t v;

	switch (k & 3) {
	case 0:
		v = (uint64_t)fz_u16(f) << shift;
		break;
	case 1:
		v = fz_edgy(f);
		break;
	case 2:
		v = ((uint64_t)fz_u8(f) << (fz_u8(f) % 64)) << shift;
		break;
	default:
		v = fz_u64(f);
		break;
	}
	if (!(k & 0x80))
		v &= ~((1ull << shift) - 1);
	return v;
}

#define TLBI_MAX 256

static void op_tlbi_range(struct fz *f)
{
	static struct ik_smmu_cmd out[TLBI_MAX + 1];
	struct ik_smmu_cmd tmpl;
	uint8_t k = fz_u8(f);
	unsigned shift = (k & 3) == 0 ? 12 : (k & 3) == 1 ? 14 : (k & 3) == 2 ? 16 : fz_u8(f) % 20;
	bool ril = (k >> 2) & 1, valid = true;
	uint64_t iova, size, gran, w[2];
	unsigned max = fz_u8(f) & 1 ? fz_u8(f) % 48 : TLBI_MAX;
	int n;

	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.op = (k >> 3) & 1 ? IK_SMMU_CMD_TLBI_S2_IPA : IK_SMMU_CMD_TLBI_NH_VA;
	if ((k >> 4) == 15)
		tmpl.op = (ik_u8)smmu_ops[fz_u8(f) % IK_ARRAY_SIZE(smmu_ops)];
	tmpl.vmid = fz_u16(f);
	if (tmpl.op == IK_SMMU_CMD_TLBI_NH_VA || fz_u8(f) == 0xee)
		tmpl.asid = fz_u16(f);
	tmpl.leaf = fz_u8(f) & 1;
	tmpl.ttl = fz_u8(f) % 5 == 4 ? fz_u8(f) : 0; /* > 3 sometimes: rejected */
	if (fz_u8(f) == 0xfd)
		tmpl.ssid = fz_u32(f); /* a field TLBI has not */
	/* ignored template fields */
	tmpl.addr = fz_u8(f) == 0xfc ? fz_u64(f) : 0;
	tmpl.num = fz_u8(f) % 8 == 0 ? fz_u8(f) : 0;
	iova = gen_aligned(f, shift < 12 ? 12 : shift);
	size = gen_aligned(f, shift < 12 ? 12 : shift);

	/* Validity, decided from the header's rules. */
	gran = 1ull << shift;
	if (tmpl.op != IK_SMMU_CMD_TLBI_NH_VA && tmpl.op != IK_SMMU_CMD_TLBI_S2_IPA)
		valid = false;
	if (shift != 12 && shift != 14 && shift != 16)
		valid = false;
	if (size == 0 || iova % gran || size % gran || (u128)iova + size > ((u128)1 << 64) - 1)
		valid = false;
	if (tmpl.op == IK_SMMU_CMD_TLBI_S2_IPA && (u128)iova + size > ((u128)1 << 52))
		valid = false;
	if (tmpl.op == IK_SMMU_CMD_TLBI_S2_IPA && tmpl.asid)
		valid = false;
	if (!ril && tmpl.ttl)
		valid = false;
	if (tmpl.ttl > 3 || tmpl.ssid)
		valid = false;

	n = ik_smmu_tlbi_range(&tmpl, iova, size, shift, ril, out, max);
	if (!valid) {
		FZ_CHECK(n == -EINVAL || n == -ENOSPC,
			 "tlbi_range: an invalid request (op %#x iova %#llx size %#llx shift %u ril %d ttl %u) returned %d",
			 tmpl.op, (unsigned long long)iova, (unsigned long long)size, shift, ril,
			 tmpl.ttl, n);
		/* -ENOSPC is allowed only if checking it would need more room;
		 * an invalid request must be -EINVAL once there is room. */
		if (n == -ENOSPC) {
			n = ik_smmu_tlbi_range(&tmpl, iova, size, shift, ril, out, TLBI_MAX);
			FZ_CHECK(n == -EINVAL, "tlbi_range: invalid request returned %d", n);
		}
		return;
	}
	if (n == -ENOSPC) {
		/* Really more than max needed? */
		if (!ril) {
			FZ_CHECK(size / gran > max, "tlbi_range: -ENOSPC for %llu granules, max %u",
				 (unsigned long long)(size / gran), max);
			return;
		}
		/* One command reaches at most 32 << 31 granules (NUM 5 bits,
		 * SCALE 5 bits): a range that needs more than the harness can
		 * hold is not checked further. */
		if (((size / gran) >> 36) + 64 > TLBI_MAX)
			return;
		FZ_CHECK(max < TLBI_MAX, "tlbi_range with ril needs more than %u commands", TLBI_MAX);
		n = ik_smmu_tlbi_range(&tmpl, iova, size, shift, ril, out, TLBI_MAX);
		FZ_CHECK(n > (int)max, "tlbi_range: -ENOSPC with max %u, but %d commands suffice", max, n);
	}
	if (!ril && size / gran > TLBI_MAX) {
		FZ_CHECK(n == -ENOSPC, "tlbi_range: %d for %llu granules and max %u", n,
			 (unsigned long long)(size / gran), max);
		return;
	}
	FZ_CHECK(n > 0, "tlbi_range: valid request (iova %#llx size %#llx shift %u ril %d) returned %d",
		 (unsigned long long)iova, (unsigned long long)size, shift, ril, n);
	FZ_CHECK(!ril || (uint64_t)n <= 64 + ((size / gran) >> 36),
		 "tlbi_range with ril: %d commands for one range", n);
	{
		u128 at = iova, end = (u128)iova + size;

		for (int i = 0; i < n; i++) {
			struct ik_smmu_cmd *c = &out[i], d;
			u128 span;

			FZ_CHECK(ik_smmu_cmd_encode(c, w) == 0, "tlbi_range command %d does not encode", i);
			FZ_CHECK(ik_smmu_cmd_decode(w, &d) == 0 && smmu_equal(c, &d),
				 "tlbi_range command %d does not round-trip", i);
			FZ_CHECK(c->op == tmpl.op && c->asid == tmpl.asid && c->vmid == tmpl.vmid &&
					 c->leaf == tmpl.leaf && c->ttl == tmpl.ttl,
				 "tlbi_range command %d lost a template field", i);
			if (!ril) {
				FZ_CHECK(c->tg == 0 && c->num == 0 && c->scale == 0,
					 "tlbi_range without ril: range fields set");
				span = gran;
			} else {
				FZ_CHECK(c->tg == (shift == 12 ? 1 : shift == 14 ? 2 : 3),
					 "tlbi_range: TG %u for granule shift %u", c->tg, shift);
				span = ((u128)c->num + 1) << (c->scale + shift);
			}
			FZ_CHECK((u128)c->addr == at, "tlbi_range command %d starts at %#llx, expected %#llx",
				 i, (unsigned long long)c->addr, (unsigned long long)at);
			at += span;
			FZ_CHECK(at <= end, "tlbi_range command %d goes past the range", i);
		}
		FZ_CHECK(at == end, "tlbi_range: the commands stop short of the range's end");
	}
}

static void op_psi_mask(struct fz *f)
{
	uint64_t pfn = fz_edgy(f), npages = fz_u8(f) & 1 ? fz_edgy(f) : fz_u16(f), base = 0x1234;
	unsigned max_am = fz_u8(f) % 70, am = 999, a;
	int err = ik_vtd_psi_mask(pfn, npages, max_am, &base, &am);
	u128 last;

	if (npages == 0 || (u128)pfn + npages > ((u128)1 << 64) - 1 || max_am > 63) {
		/* pfn + npages == 2^64 (the range ends at the top) wraps the
		 * library's sum: it is refused too. */
		FZ_CHECK(err == -EINVAL, "psi_mask(%#llx, %#llx, %u) = %d, expected -EINVAL",
			 (unsigned long long)pfn, (unsigned long long)npages, max_am, err);
		return;
	}
	last = (u128)pfn + npages - 1;
	for (a = 0; a < 64; a++)
		if (((u128)pfn >> a) == (last >> a))
			break;
	if (a > max_am) {
		FZ_CHECK(err == -EINVAL, "psi_mask(%#llx, %#llx, %u) = %d, needs am %u",
			 (unsigned long long)pfn, (unsigned long long)npages, max_am, err, a);
		return;
	}
	FZ_CHECK(err == 0, "psi_mask(%#llx, %#llx, %u) = %d", (unsigned long long)pfn,
		 (unsigned long long)npages, max_am, err);
	FZ_CHECK(am == a, "psi_mask(%#llx, %#llx): am %u, smallest is %u", (unsigned long long)pfn,
		 (unsigned long long)npages, am, a);
	FZ_CHECK(base % ((u128)1 << am) == 0, "psi_mask base %#llx not aligned to 2^%u",
		 (unsigned long long)base, am);
	FZ_CHECK(base <= pfn && last < (u128)base + ((u128)1 << am),
		 "psi_mask block [%#llx, +2^%u) misses the range", (unsigned long long)base, am);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f;
	unsigned ops = 0;

	fz_init(&f, data, size);
	while (fz_left(&f) && ops++ < 512) {
		switch (fz_u8(&f) % 9) {
		case 0: op_smmu_cmd(&f); break;
		case 1: op_smmu_words(&f); break;
		case 2: op_vtd_desc(&f); break;
		case 3: op_vtd_words(&f); break;
		case 4: op_tlbi_range(&f); break;
		case 5: op_psi_mask(&f); break;
		case 6: op_rv_cmd(&f); break;
		case 7: op_rv_words(&f); break;
		default: op_rv_fault(&f); break;
		}
	}
	/* NULL arguments, once per input: -EINVAL, nothing written. */
	{
		uint64_t w[4] = { 0, 0, 0, 0 };
		struct ik_smmu_cmd c;
		struct ik_vtd_desc d;
		ik_u64 b;
		unsigned am;

		memset(&c, 0, sizeof(c));
		memset(&d, 0, sizeof(d));
		FZ_CHECK(ik_smmu_cmd_encode(NULL, w) == -EINVAL && ik_smmu_cmd_encode(&c, NULL) == -EINVAL,
			 "smmu encode NULL");
		FZ_CHECK(ik_smmu_cmd_decode(NULL, &c) == -EINVAL && ik_smmu_cmd_decode(w, NULL) == -EINVAL,
			 "smmu decode NULL");
		FZ_CHECK(ik_vtd_desc_encode(NULL, w, 2) == -EINVAL && ik_vtd_desc_decode(NULL, 2, &d) == -EINVAL,
			 "vtd NULL");
		FZ_CHECK(ik_vtd_psi_mask(0, 1, 0, NULL, &am) == -EINVAL &&
				 ik_vtd_psi_mask(0, 1, 0, &b, NULL) == -EINVAL,
			 "psi_mask NULL");
	}
	return 0;
}
