/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Internal (not API): a table-driven bit-field codec shared by the SMMUv3 and
 * VT-d command encoders.  A field is a piece of a struct member placed at
 * bits [lsb, lsb + width) of an entry of up to four 64-bit words; the piece
 * holds the member's bits [shift, shift + width).  A member may have several
 * pieces (VT-d's PFSID), or one piece that drops low bits (addresses).
 */
#ifndef IK_SRC_CMD_CODEC_H
#define IK_SRC_CMD_CODEC_H

#include <iommukit/env.h>

struct ik_field {
	ik_u8 op;	/* the opcode / descriptor type the field belongs to */
	ik_u8 off;	/* offsetof(member) */
	ik_u8 sz;	/* sizeof(member): 1, 2, 4 or 8 */
	ik_u8 lsb;	/* first bit in the entry */
	ik_u8 width;	/* bits, 1..64 */
	ik_u8 shift;	/* low bits of the member dropped by this piece */
};

#define IK_FMASK(w) ((w) >= 64 ? ~(ik_u64)0 : (((ik_u64)1 << (w)) - 1))

static inline ik_u64 ik_member_get(const void *base, const struct ik_field *f)
{
	const char *p = (const char *)base + f->off;

	switch (f->sz) {
	case 1: return *(const ik_u8 *)(const void *)p;
	case 2: return *(const ik_u16 *)(const void *)p;
	case 4: return *(const ik_u32 *)(const void *)p;
	default: return *(const ik_u64 *)(const void *)p;
	}
}

static inline void ik_member_or(void *base, const struct ik_field *f, ik_u64 v)
{
	char *p = (char *)base + f->off;

	switch (f->sz) {
	case 1: *(ik_u8 *)(void *)p = (ik_u8)(*(ik_u8 *)(void *)p | v); break;
	case 2: *(ik_u16 *)(void *)p = (ik_u16)(*(ik_u16 *)(void *)p | v); break;
	case 4: *(ik_u32 *)(void *)p = (ik_u32)(*(ik_u32 *)(void *)p | v); break;
	default: *(ik_u64 *)(void *)p |= v; break;
	}
}

/* Bits [lsb, lsb + width) of w[]; a field never straddles a 64-bit word. */
static inline ik_u64 ik_bits_get(const ik_u64 *w, unsigned lsb, unsigned width)
{
	return (w[lsb / 64] >> (lsb % 64)) & IK_FMASK(width);
}

static inline void ik_bits_set(ik_u64 *w, unsigned lsb, unsigned width, ik_u64 v)
{
	w[lsb / 64] |= (v & IK_FMASK(width)) << (lsb % 64);
}

/*
 * Encode the fields of opcode `op` from struct `base` into w[0..nw) (which
 * the caller zeroed and into which it already put the opcode).  Every member
 * named by a field must be representable by its pieces; every member of
 * `all_members` (offset/size pairs given as fields with op 0xff) not used by
 * `op` must be zero.  Returns 0 or -EINVAL.
 */
int ik_codec_encode(const struct ik_field *tab, unsigned n, unsigned op, const void *base,
		     ik_u64 *w);
/* Decode; `base` zeroed by the caller.  -EINVAL if w has a bit outside the
 * opcode's fields and `opmask` (the bits of the opcode itself). */
int ik_codec_decode(const struct ik_field *tab, unsigned n, unsigned op, const ik_u64 *w,
		     unsigned nw, const ik_u64 *opmask, void *base);

#endif
