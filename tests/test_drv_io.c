/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* drv/io: register accessors and DMA memory (<iommukit/drv/io.h>). */
#include <stdlib.h>
#include <string.h>
#include <iommukit/drv/io.h>
#include "testlib.h"

START_TEST(direct_accessors_reach_the_registers_at_their_offsets)
{
	ik_u64 regs[4] = { 0, 0, 0, 0 };
	struct ik_mmio m;

	ck_assert_int_eq(ik_mmio_direct_init(&m, regs), 0);
	ik_mmio_write32(&m, 4, 0xdeadbeefu);
	ck_assert_uint_eq(regs[0], 0xdeadbeef00000000ull);
	ik_mmio_write64(&m, 8, 0x0123456789abcdefull);
	ck_assert_uint_eq(regs[1], 0x0123456789abcdefull);
	ck_assert_uint_eq(ik_mmio_read32(&m, 8), 0x89abcdefu);
	ck_assert_uint_eq(ik_mmio_read32(&m, 12), 0x01234567u);
	ck_assert_uint_eq(ik_mmio_read64(&m, 8), 0x0123456789abcdefull);
	regs[3] = 42;
	ck_assert_uint_eq(ik_mmio_read64(&m, 24), 42);
}
END_TEST

/* A register file that logs every 32-bit access, without 64-bit accessors:
 * the 64-bit helpers must split, low word first. */
struct logged {
	ik_u32 reg[8];
	ik_u32 log[16]; /* off | 0x100 for writes */
	unsigned n;
};

static ik_u32 log_read32(void *ctx, ik_u32 off)
{
	struct logged *l = ctx;

	l->log[l->n++] = off;
	return l->reg[off / 4];
}

static void log_write32(void *ctx, ik_u32 off, ik_u32 val)
{
	struct logged *l = ctx;

	l->log[l->n++] = off | 0x100;
	l->reg[off / 4] = val;
}

START_TEST(missing_64_bit_accessors_split_low_word_first)
{
	struct logged l;
	struct ik_mmio m = { log_read32, log_write32, NULL, NULL, &l };

	memset(&l, 0, sizeof(l));
	ik_mmio_write64(&m, 8, 0x1111111122222222ull);
	ck_assert_uint_eq(l.n, 2);
	ck_assert_uint_eq(l.log[0], 0x108);
	ck_assert_uint_eq(l.log[1], 0x10c);
	ck_assert_uint_eq(l.reg[2], 0x22222222u);
	ck_assert_uint_eq(l.reg[3], 0x11111111u);
	ck_assert_uint_eq(ik_mmio_read64(&m, 8), 0x1111111122222222ull);
	ck_assert_uint_eq(l.log[2], 8);
	ck_assert_uint_eq(l.log[3], 12);
}
END_TEST

START_TEST(default_dma_memory_is_zeroed_aligned_and_identity_mapped)
{
	struct ik_fault_alloc fa;
	struct ik_dma_mem d;
	void *p;
	ik_u64 dma;

	ik_fault_alloc_init(&fa);
	ck_assert_int_eq(ik_dma_mem_default(&d, &fa.a), 0);
	ck_assert_ptr_null(d.clean);
	ck_assert_int_eq(ik_dma_alloc(&d, 8192, 8192, &p, &dma), 0);
	ck_assert_uint_eq(dma, (ik_u64)(uintptr_t)p);
	ck_assert_uint_eq(dma & 8191, 0);
	for (size_t i = 0; i < 8192; i++)
		ck_assert_uint_eq(((unsigned char *)p)[i], 0);
	ik_dma_clean(&d, p, dma, 8192); /* coherent: nothing to do */
	ik_dma_free(&d, p, dma, 8192);
	ik_dma_free(&d, NULL, 0, 8192);
	ck_assert_int_eq(fa.live, 0);
	/* allocation failure */
	ik_fault_alloc_fail_nth(&fa, 1);
	p = (void *)1;
	dma = 1;
	ck_assert_int_eq(ik_dma_alloc(&d, 64, 64, &p, &dma), -ENOMEM);
	ck_assert_ptr_null(p);
	ck_assert_uint_eq(dma, 0);
	ck_assert_int_eq(fa.live, 0);
}
END_TEST

static ik_u64 odd_offset;

static void *odd_alloc(void *ctx, ik_size size, ik_size align, ik_u64 *dma)
{
	void *p = NULL;

	(void)ctx;
	if (posix_memalign(&p, align, size))
		return NULL;
	*dma = (ik_u64)(uintptr_t)p + odd_offset;
	return p;
}

static int odd_frees;

static void odd_free(void *ctx, void *cpu, ik_u64 dma, ik_size size)
{
	(void)ctx;
	(void)dma;
	(void)size;
	odd_frees++;
	free(cpu);
}

START_TEST(misaligned_device_address_is_erange_and_freed)
{
	struct ik_dma_mem d = { odd_alloc, odd_free, NULL, NULL };
	void *p;
	ik_u64 dma;

	odd_offset = 0x800; /* the device sees the block at a 2 KiB offset */
	odd_frees = 0;
	ck_assert_int_eq(ik_dma_alloc(&d, 4096, 4096, &p, &dma), -ERANGE);
	ck_assert_int_eq(odd_frees, 1);
	ck_assert_ptr_null(p);
	ck_assert_int_eq(ik_dma_alloc(&d, 4096, 2048, &p, &dma), 0);
	ck_assert_uint_eq(dma, (ik_u64)(uintptr_t)p + 0x800);
	ik_dma_free(&d, p, dma, 4096);
	ck_assert_int_eq(odd_frees, 2);
}
END_TEST

START_TEST(bad_arguments_are_einval_with_nothing_written)
{
	struct ik_mmio m;
	struct ik_dma_mem d;
	void *p = (void *)1;
	ik_u64 dma = 7;

	memset(&m, 0x5a, sizeof(m));
	ck_assert_int_eq(ik_mmio_direct_init(&m, NULL), -EINVAL);
	ck_assert_uint_eq(((unsigned char *)&m)[0], 0x5a);
	ck_assert_int_eq(ik_mmio_direct_init(NULL, &dma), -EINVAL);
	ck_assert_int_eq(ik_dma_mem_default(NULL, NULL), -EINVAL);
	ck_assert_int_eq(ik_dma_mem_default(&d, NULL), 0);
	ck_assert_int_eq(ik_dma_alloc(NULL, 64, 64, &p, &dma), -EINVAL);
	ck_assert_int_eq(ik_dma_alloc(&d, 64, 64, NULL, &dma), -EINVAL);
	ck_assert_int_eq(ik_dma_alloc(&d, 64, 64, &p, NULL), -EINVAL);
	ck_assert_int_eq(ik_dma_alloc(&d, 0, 64, &p, &dma), -EINVAL);
	ck_assert_int_eq(ik_dma_alloc(&d, 64, 48, &p, &dma), -EINVAL);
	ck_assert_int_eq(ik_dma_alloc(&d, 64, 0, &p, &dma), -EINVAL);
	ck_assert_ptr_eq(p, (void *)1);
	ck_assert_uint_eq(dma, 7);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("drv_io");
	TCase *tc = tcase_create("io");

	tcase_add_test(tc, direct_accessors_reach_the_registers_at_their_offsets);
	tcase_add_test(tc, missing_64_bit_accessors_split_low_word_first);
	tcase_add_test(tc, default_dma_memory_is_zeroed_aligned_and_identity_mapped);
	tcase_add_test(tc, misaligned_device_address_is_erange_and_freed);
	tcase_add_test(tc, bad_arguments_are_einval_with_nothing_written);
	suite_add_tcase(s, tc);
	return s;
}
