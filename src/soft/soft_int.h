/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Internal (not API): what the register-level models (softsmmu.c,
 * softvtd.c) share: device memory through the phys_to_host hook, 64-bit
 * registers seen as two 32-bit halves, the struct ik_mmio adapter, and the
 * checks of a DMA call's arguments.  All O(1).
 */
#ifndef IK_SRC_SOFT_INT_H
#define IK_SRC_SOFT_INT_H

#include <iommukit/drv/io.h>

/* The host pointer for [pa, pa + len) from the model's phys_to_host hook,
 * or NULL: the sum is checked, and addresses at or above 2^bits (bits < 64)
 * are not memory. */
static inline void *soft_host(void *(*phys_to_host)(void *ctx, ik_u64 pa, ik_size len), void *ctx,
			      unsigned bits, ik_u64 pa, ik_u64 len)
{
	if (!len || len - 1 > IK_U64_MAX - pa)
		return NULL;
	if (bits < 64 && ((pa + (len - 1)) >> bits))
		return NULL;
	return phys_to_host(ctx, pa, (ik_size)len);
}

/* Copy n bytes between buf and host memory p (NULL: not memory, false). */
static inline bool soft_copy(ik_u8 *p, ik_u8 *buf, ik_size n, bool write)
{
	if (!p)
		return false;
	if (write)
		IK_ENV_MEMCPY(p, buf, n);
	else
		IK_ENV_MEMCPY(buf, p, n);
	return true;
}

/* pa + off without wrapping; false when the sum would wrap. */
static inline bool soft_addr_add(ik_u64 pa, ik_u64 off, ik_u64 *out)
{
	if (off > IK_U64_MAX - pa)
		return false;
	*out = pa + off;
	return true;
}

/* The low and high halves of a 64-bit register, and a write of one half. */
static inline ik_u32 soft_lo32(ik_u64 v)
{
	return (ik_u32)v;
}

static inline ik_u32 soft_hi32(ik_u64 v)
{
	return (ik_u32)(v >> 32);
}

static inline ik_u64 soft_set_half(ik_u64 old, bool high, ik_u32 v)
{
	return high ? (old & 0xffffffffull) | (ik_u64)v << 32 : (old & ~0xffffffffull) | v;
}

/* The arguments of a model's DMA call (model m, len bytes at buf from
 * iova): -EINVAL for a NULL model or buffer, or a range that wraps; 0 for
 * an empty transfer (nothing to do); 1 to go on. */
static inline int soft_dma_args(const void *m, const void *buf, ik_size len, ik_u64 iova)
{
	if (!m || (!buf && len))
		return -EINVAL;
	if (!len)
		return 0;
	if (len - 1 > IK_U64_MAX - iova)
		return -EINVAL;
	return 1;
}

/* Fill *io with 32-bit accessors on ctx (the 64-bit ones NULL: split into
 * halves by <iommukit/drv/io.h>).  -EINVAL for a NULL model or io. */
static inline int soft_mmio(struct ik_mmio *io, void *ctx, ik_u32 (*read32)(void *ctx, ik_u32 off),
			    void (*write32)(void *ctx, ik_u32 off, ik_u32 v))
{
	if (!ctx || !io)
		return -EINVAL;
	IK_ENV_MEMSET(io, 0, sizeof(*io));
	io->read32 = read32;
	io->write32 = write32;
	io->ctx = ctx;
	return 0;
}

#endif /* IK_SRC_SOFT_INT_H */
