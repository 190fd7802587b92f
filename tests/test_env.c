/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The env layer: its allocation wrappers, error names, version, CPU and time
 * hooks; and the fault-injecting allocator the other suites rely on. */
#include "testlib.h"
#include <stdio.h>
#include <iommukit/version.h>
#include <iommukit/iova.h>
#include <iommukit/pgtable.h>
#include "config.h" /* PACKAGE_VERSION */

START_TEST(fails_exactly_the_nth_allocation)
{
	struct ik_fault_alloc fa;
	void *p[5];
	int i;

	ik_fault_alloc_init(&fa);
	ik_fault_alloc_fail_nth(&fa, 3);
	for (i = 0; i < 5; i++)
		p[i] = ik_alloc(&fa.a, 32, 16);
	ck_assert_ptr_nonnull(p[0]);
	ck_assert_ptr_nonnull(p[1]);
	ck_assert_ptr_null(p[2]);
	ck_assert_ptr_nonnull(p[3]);
	ck_assert_ptr_nonnull(p[4]);
	ck_assert_int_eq(fa.live, 4);
	ck_assert_int_eq(fa.live_bytes, 4 * 32);
	ck_assert_int_eq(fa.failures, 1);
	for (i = 0; i < 5; i++)
		ik_free(&fa.a, p[i], 32);
	ck_assert_int_eq(fa.live, 0);
	ck_assert_int_eq(fa.live_bytes, 0);
}
END_TEST

START_TEST(fail_every_refuses_from_n_on)
{
	struct ik_fault_alloc fa;
	void *a, *b;

	ik_fault_alloc_init(&fa);
	fa.fail_every = 1;
	ik_fault_alloc_fail_nth(&fa, 2);
	a = ik_alloc(&fa.a, 8, 8);
	b = ik_alloc(&fa.a, 8, 8);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_null(b);
	ck_assert_ptr_null(ik_alloc(&fa.a, 8, 8));
	ik_fault_alloc_disarm(&fa);
	b = ik_alloc(&fa.a, 8, 8);
	ck_assert_ptr_nonnull(b);
	ik_free(&fa.a, a, 8);
	ik_free(&fa.a, b, 8);
	ck_assert_int_eq(fa.live, 0);
}
END_TEST

START_TEST(env_default_allocator_honours_alignment)
{
	void *p = ik_alloc(NULL, 100, 4096);

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq((uintptr_t)p & 4095, 0);
	ik_free(NULL, p, 100);
	ik_free(NULL, NULL, 0); /* NULL is a no-op */
}
END_TEST

START_TEST(strerror_names_library_errors)
{
	ck_assert_str_eq(ik_strerror(-EINVAL), "invalid argument");
	ck_assert_str_eq(ik_strerror(-ENOSPC), "no space left");
	ck_assert_str_eq(ik_strerror(-ETIMEDOUT), "timed out");
	ck_assert_str_eq(ik_strerror(-12345), "unknown error");
	ck_assert_str_eq(ik_strerror(0), "success");
	ck_assert_ptr_nonnull(ik_version());
}
END_TEST

/* The generated <iommukit/version.h> and the library agree, and the
 * numbers are the package version configure was given. */
START_TEST(version_header_matches_the_library)
{
	char buf[32];

	ck_assert_str_eq(ik_version(), IK_VERSION_STRING);
	ck_assert_str_eq(IK_VERSION_STRING, PACKAGE_VERSION);
	snprintf(buf, sizeof(buf), "%d.%d.%d", IK_VERSION_MAJOR, IK_VERSION_MINOR, IK_VERSION_PATCH);
	ck_assert_str_eq(buf, IK_VERSION_STRING);
	ck_assert_int_eq(IK_VERSION_NUMBER,
			 IK_VERSION_MAJOR * 10000 + IK_VERSION_MINOR * 100 + IK_VERSION_PATCH);
#if IK_VERSION_NUMBER < IK_VERSION(0, 1, 0)
	ck_abort_msg("IK_VERSION_NUMBER below the first release");
#endif
}
END_TEST

START_TEST(env_cpu_and_time_hooks_are_sane)
{
	uint64_t t0 = IK_ENV_TIME_NS(), t1;
	unsigned n = IK_ENV_NR_CPUS();
	int i;

	ck_assert_uint_ge(n, 1);
	for (i = 0; i < 1000; i++)
		ck_assert_uint_lt(IK_ENV_CPU_ID(), n);
	t1 = IK_ENV_TIME_NS();
	ck_assert_uint_ge(t1, t0);
	IK_ENV_YIELD();
}
END_TEST

/* <iommukit/sizes.h>: the named sizes, the conversions, and the claim that
 * their "no result" value, IK_U64_MAX, is refused by the calls it feeds. */
START_TEST(sizes_convert_between_bytes_and_pages)
{
	struct ik_iova_config icfg = { .granule = IK_SZ_4K, .start_pfn = 1, .end_pfn = 0xfffff };
	struct ik_pgtable_cfg pcfg = { .fmt = IK_PT_LPAE_S1, .ias = 48, .oas = 48,
				       .pgsize_bitmap = IK_SZ_4K | IK_SZ_2M | IK_SZ_1G, .coherent = true };
	struct ik_iova_domain d;
	struct ik_pgtable *pt;
	uint64_t pfn;

	ck_assert_uint_eq(IK_SZ_4K | IK_SZ_2M | IK_SZ_1G, 0x40201000);
	ck_assert_uint_eq(IK_SZ_16K, 16384);
	ck_assert_uint_eq(IK_SZ_64K, 65536);
	ck_assert_uint_eq(IK_SZ_32M, 32ull << 20);
	ck_assert_uint_eq(IK_SZ_512M, 512ull << 20);
	ck_assert_uint_eq(IK_SZ_64G, 64ull << 30);
	ck_assert_uint_eq(IK_SZ_512G, 512ull << 30);
	ck_assert_uint_eq(IK_SZ_4T, 4ull << 40);

	ck_assert_uint_eq(ik_pfn_to_addr(0xfee00, IK_SZ_4K), 0xfee00000ull);
	ck_assert_uint_eq(ik_pfn_to_addr(0, IK_SZ_64K), 0);
	ck_assert_uint_eq(ik_pfn_to_addr(1ull << 52, IK_SZ_4K), IK_U64_MAX);	/* past 64 bits */
	ck_assert_uint_eq(ik_pfn_to_addr((1ull << 52) - 1, IK_SZ_4K), (IK_U64_MAX >> 12) << 12);
	ck_assert_uint_eq(ik_addr_to_pfn(0xfee00fffull, IK_SZ_4K), 0xfee00);
	ck_assert_uint_eq(ik_addr_to_pfn(IK_U64_MAX, IK_SZ_4K), IK_U64_MAX >> 12);
	ck_assert_uint_eq(ik_bytes_to_pages(0, IK_SZ_4K), 0);
	ck_assert_uint_eq(ik_bytes_to_pages(1, IK_SZ_4K), 1);
	ck_assert_uint_eq(ik_bytes_to_pages(IK_SZ_2M, IK_SZ_4K), 512);
	ck_assert_uint_eq(ik_bytes_to_pages(IK_SZ_2M + 1, IK_SZ_4K), 513);
	ck_assert_uint_eq(ik_bytes_to_pages(IK_U64_MAX, IK_SZ_4K), 1ull << 52);	/* no wrap */
	ck_assert_uint_eq(ik_pages_to_bytes(512, IK_SZ_4K), IK_SZ_2M);
	ck_assert_uint_eq(ik_pages_to_bytes(1ull << 48, IK_SZ_64K), IK_U64_MAX);
	/* Not a power of two of at least 2: no result, never a division by 0. */
	ck_assert_uint_eq(ik_pfn_to_addr(1, 0), IK_U64_MAX);
	ck_assert_uint_eq(ik_pfn_to_addr(1, 1), IK_U64_MAX);
	ck_assert_uint_eq(ik_addr_to_pfn(4096, 0), IK_U64_MAX);
	ck_assert_uint_eq(ik_addr_to_pfn(4096, 3000), IK_U64_MAX);
	ck_assert_uint_eq(ik_bytes_to_pages(4096, 0), IK_U64_MAX);
	ck_assert_uint_eq(ik_pages_to_bytes(1, 6144), IK_U64_MAX);

	/* IK_U64_MAX is refused where the conversions feed it. */
	ck_assert_int_eq(ik_iova_init(&d, &icfg), 0);
	ck_assert_int_eq(ik_iova_alloc(&d, ik_bytes_to_pages(4096, 0), 0xfffff, 0, &pfn), -EINVAL);
	ck_assert_int_eq(ik_iova_alloc(&d, ik_bytes_to_pages(IK_SZ_2M, IK_SZ_4K), 0xfffff,
				       IK_IOVA_SIZE_ALIGNED, &pfn), 0);
	ck_assert_uint_eq(pfn, 0xffe00);
	ck_assert_int_eq(ik_pgtable_create(&pcfg, &pt), 0);
	ck_assert_int_eq(ik_pgtable_map(pt, ik_pfn_to_addr(pfn, 1), 0x80200000, IK_SZ_2M, IK_PROT_READ),
			 -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(pt, ik_pfn_to_addr(pfn, IK_SZ_4K), 0x80200000,
					ik_pages_to_bytes(1ull << 60, IK_SZ_4K), IK_PROT_READ), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(pt, ik_pfn_to_addr(pfn, IK_SZ_4K), 0x80200000,
					ik_pages_to_bytes(512, IK_SZ_4K), IK_PROT_READ), 0);
	uint64_t pa, pgsize;
	ck_assert_int_eq(ik_pgtable_iova_to_phys(pt, 0xffe01234ull, &pa, &pgsize), 0);
	ck_assert_uint_eq(pa, 0x80201234ull);
	ck_assert_uint_eq(pgsize, IK_SZ_2M);
	ik_pgtable_destroy(pt);
	ik_iova_destroy(&d);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("env");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, fails_exactly_the_nth_allocation);
	tcase_add_test(tc, fail_every_refuses_from_n_on);
	tcase_add_test(tc, env_default_allocator_honours_alignment);
	tcase_add_test(tc, strerror_names_library_errors);
	tcase_add_test(tc, version_header_matches_the_library);
	tcase_add_test(tc, env_cpu_and_time_hooks_are_sane);
	tcase_add_test(tc, sizes_convert_between_bytes_and_pages);
	suite_add_tcase(s, tc);
	return s;
}
