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
#include <iommukit/atomic.h>

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
 * The generic codec, straight from the table: the reference the fast path
 * below is tested against (tests/test_cmdq.c, "codec_fast_vs_table"), and
 * its fallback while no plan is built.
 *
 * Encode the fields of opcode `op` from struct `base` into w[0..nw) (which
 * the caller zeroed and into which it already put the opcode).  Every member
 * named by a field of any opcode must be representable by the pieces `op`
 * has for it (zero where `op` has none).  Returns 0 or -EINVAL, with w
 * possibly half written.  O(n^2) in the table's length.
 */
int ik_codec_encode_table(const struct ik_field *tab, unsigned n, unsigned op,
			  const void *base, ik_u64 *w);
/* Decode; `base` zeroed by the caller.  -EINVAL if w has a bit outside the
 * opcode's fields and `opmask` (the bits of the opcode itself).  O(n). */
int ik_codec_decode_table(const struct ik_field *tab, unsigned n, unsigned op,
			  const ik_u64 *w, unsigned nw, const ik_u64 *opmask, void *base);

/*
 * struct ik_codec - a field table with a per-opcode plan, built from the
 * table once (on first use) so that an encode or decode costs O(the
 * opcode's fields + the struct's size / 8) instead of a walk of the table:
 *   - the opcode's pieces, listed together, each as a shift and mask of
 *     one 64-bit word of the struct;
 *   - `forbid`: an image of the decoded struct whose set bits are the
 *     member bits the opcode cannot hold (a member it has no piece for:
 *     every bit; one it has: the bits outside its pieces).  Padding and
 *     members outside the table are clear, so they are never looked at,
 *     exactly as the table walk ignores them;
 *   - `defined`: the entry bits the opcode's fields and the opcode own.
 * Same results as the table functions, bit for bit (the test above).
 * Building is claimed with one compare-and-swap; a caller that finds the
 * plan being built by another thread uses the table functions meanwhile.
 * A table the plan cannot hold (limits below) always uses them.
 */
#define IK_CODEC_MAX_FIELDS 64
#define IK_CODEC_MAX_OPS 16	/* distinct opcodes with fields */
#define IK_CODEC_MAX_SIZE 64	/* bytes of the decoded struct */

/* A field as the plan places it: the member's bits [shift, shift + width)
 * are bits [src, src + popcount(mask)) of 64-bit word `word` of the struct
 * (found by writing the member into an image, so any byte order), and go to
 * bit `dst % 64` of entry word `dst / 64`. */
struct ik_codec_piece {
	ik_u64 mask;		/* IK_FMASK(width), cut to the member's size */
	ik_u8 word, src, dst;
	struct ik_field f;	/* the table's field (decode) */
};

struct ik_codec_op {
	ik_u8 first, count;	/* pieces: piece[first .. first + count) */
	ik_u64 forbid[IK_CODEC_MAX_SIZE / 8];
	ik_u64 defined[4];
};

struct ik_codec {
	const struct ik_field *tab;
	ik_u8 n;		/* fields in tab */
	ik_u8 size;		/* sizeof the decoded struct */
	ik_u8 words;		/* 64-bit words of the entry (2 or 4) */
	ik_u64 opmask[4];	/* the bits of the opcode itself */
	/* the plan: state 0 none, 1 being built, 2 ready, 3 cannot be built */
	int state;
	ik_u8 nops;		/* ops[0] is every opcode without fields */
	ik_u8 slot[256];	/* opcode -> ops[] index */
	struct ik_codec_piece piece[IK_CODEC_MAX_FIELDS];	/* the table, by opcode */
	struct ik_codec_op ops[IK_CODEC_MAX_OPS + 1];
};

#define IK_CODEC_INIT(table, type, nwords, m0, m1) \
	{ .tab = (table), .n = (ik_u8)IK_ARRAY_SIZE(table), .size = (ik_u8)sizeof(type), \
	  .words = (nwords), .opmask = { (m0), (m1), 0, 0 } }

/* As ik_codec_encode_table() on c's table; `op` < 256. */
int ik_codec_encode(struct ik_codec *c, unsigned op, const void *base, ik_u64 *w);
/* As ik_codec_decode_table() on c's table and opmask; nw <= c->words. */
int ik_codec_decode(struct ik_codec *c, unsigned op, const ik_u64 *w, unsigned nw, void *base);
/* Build c's plan now if nobody has: true once it is ready. */
bool ik_codec_build(struct ik_codec *c);
static inline bool ik_codec_ready(struct ik_codec *c)
{
	return IK_LIKELY(ik_load_acquire(&c->state) == 2) || ik_codec_build(c);
}

/* The four command codecs (internal; tests compare them with the tables). */
extern struct ik_codec ik_codec_smmuv3_, ik_codec_vtd_, ik_codec_amd_, ik_codec_riscv_;

#endif
