/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * vfio-edu's pure logic (examples/vfio-edu/vfe_logic.h): the IOVA_RANGE
 * capability parser against well-formed and hostile answers of
 * VFIO_IOMMU_GET_INFO, the ik_iova domain built from the ranges, and the PCI
 * address parser.  Runs on any host (no VFIO needed).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <iommukit/iova.h>
#include "vfe_logic.h"
#include "testlib.h"

/* A GET_INFO answer: the fixed part, then caps at the given offsets. */
struct answer {
	unsigned char b[512];
	size_t size;
};

static void put16(unsigned char *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void ans_init(struct answer *a, uint32_t first_cap)
{
	memset(a, 0, sizeof(*a));
	put32(a->b + VFE_INFO_FLAGS_OFF, 0x3); /* PGSIZES | CAPS */
	put64(a->b + 8, 0x40201000ull);
	put32(a->b + VFE_INFO_CAP_OFFSET_OFF, first_cap);
	a->size = 24;
}

static void ans_cap(struct answer *a, size_t off, uint16_t id, uint16_t ver, uint32_t next)
{
	put16(a->b + off, id);
	put16(a->b + off + 2, ver);
	put32(a->b + off + 4, next);
	if (a->size < off + VFE_CAP_HDR_SIZE)
		a->size = off + VFE_CAP_HDR_SIZE;
}

static void ans_ranges(struct answer *a, size_t off, uint32_t nr, const uint64_t (*r)[2])
{
	put32(a->b + off + VFE_IOVA_CAP_NR_OFF, nr);
	for (uint32_t i = 0; i < nr; i++) {
		put64(a->b + off + VFE_IOVA_CAP_RANGES_OFF + i * 16, r[i][0]);
		put64(a->b + off + VFE_IOVA_CAP_RANGES_OFF + i * 16 + 8, r[i][1]);
	}
	if (a->size < off + VFE_IOVA_CAP_RANGES_OFF + nr * 16)
		a->size = off + VFE_IOVA_CAP_RANGES_OFF + nr * 16;
}

/* What an x86 VT-d guest's kernel answers (measured: 6.12, QEMU 7.2 aw 39),
 * behind another capability (DMA_AVAIL, id 3) as 6.x kernels put it. */
static const uint64_t vtd[2][2] = { { 0, 0xfedfffffull }, { 0xfef00000ull, 0x7fffffffffull } };

START_TEST(parses_the_vtd_answer_behind_another_cap)
{
	struct answer a;
	struct vfe_range r[4];
	size_t nr = 99;

	ans_init(&a, 24);
	ans_cap(&a, 24, 3, 1, 40);	/* DMA_AVAIL: header + u32 avail */
	put32(a.b + 32, 65535);
	ans_cap(&a, 40, VFE_CAP_IOVA_RANGE, 1, 0);
	ans_ranges(&a, 40, 2, vtd);
	ck_assert_int_eq(vfe_parse_iova_ranges(a.b, a.size, r, 4, &nr), 0);
	ck_assert_uint_eq(nr, 2);
	ck_assert(r[0].start == 0 && r[0].end == 0xfedfffffull);
	ck_assert(r[1].start == 0xfef00000ull && r[1].end == 0x7fffffffffull);
	/* too little room: -E2BIG, nothing written */
	memset(r, 0x77, sizeof(r));
	nr = 99;
	ck_assert_int_eq(vfe_parse_iova_ranges(a.b, a.size, r, 1, &nr), -E2BIG);
	ck_assert_uint_eq(nr, 99);
	ck_assert_uint_eq(r[0].start, 0x7777777777777777ull);
}
END_TEST

START_TEST(no_caps_is_enoent)
{
	struct answer a;
	struct vfe_range r[4];
	size_t nr = 5;

	ans_init(&a, 0);
	ck_assert_int_eq(vfe_parse_iova_ranges(a.b, a.size, r, 4, &nr), -ENOENT);
	put32(a.b + VFE_INFO_FLAGS_OFF, 0x1); /* no CAPS flag, an offset anyway */
	put32(a.b + VFE_INFO_CAP_OFFSET_OFF, 24);
	ans_cap(&a, 24, VFE_CAP_IOVA_RANGE, 1, 0);
	ans_ranges(&a, 24, 2, vtd);
	ck_assert_int_eq(vfe_parse_iova_ranges(a.b, a.size, r, 4, &nr), -ENOENT);
	/* a chain without IOVA_RANGE */
	ans_init(&a, 24);
	ans_cap(&a, 24, 3, 1, 0);
	ck_assert_int_eq(vfe_parse_iova_ranges(a.b, a.size, r, 4, &nr), -ENOENT);
	ck_assert_uint_eq(nr, 5);
}
END_TEST

/* Hostile answers: each is refused with -EINVAL, out and *nr untouched. */
START_TEST(malformed_answers_are_einval)
{
	struct answer a;
	struct vfe_range r[4], r0[4];
	size_t nr = 42;
	int i;

	memset(r, 0x5a, sizeof(r));
	memcpy(r0, r, sizeof(r));
	for (i = 0; i < 11; i++) {
		ans_init(&a, 24);
		ans_cap(&a, 24, VFE_CAP_IOVA_RANGE, 1, 0);
		ans_ranges(&a, 24, 2, vtd);
		switch (i) {
		case 0: /* cap offset past the end */
			put32(a.b + VFE_INFO_CAP_OFFSET_OFF, 4000);
			break;
		case 1: /* cap header cut by the size */
			a.size = 28;
			break;
		case 2: /* range array cut by the size (one byte short) */
			a.size--;
			break;
		case 3: /* nr_iovas huge: would overflow a multiplication */
			put32(a.b + 24 + VFE_IOVA_CAP_NR_OFF, 0xffffffffu);
			break;
		case 4: /* a loop: the cap points to itself */
			ans_cap(&a, 24, 3, 1, 24);
			break;
		case 5: /* version 2 */
			ans_cap(&a, 24, VFE_CAP_IOVA_RANGE, 2, 0);
			break;
		case 6: /* start > end */
			put64(a.b + 24 + 16, 0x2000);
			put64(a.b + 24 + 24, 0x1000);
			break;
		case 7: /* overlapping */
			put64(a.b + 24 + 32, 0xfedff000ull);
			break;
		case 8: /* no range */
			put32(a.b + 24 + VFE_IOVA_CAP_NR_OFF, 0);
			break;
		case 9: /* a cap offset inside the fixed part */
			put32(a.b + VFE_INFO_CAP_OFFSET_OFF, 8);
			break;
		case 10: /* a chain that goes backwards */
			ans_cap(&a, 24, 3, 1, 80);
			ans_cap(&a, 80, 3, 1, 40);
			break;
		}
		ck_assert_msg(vfe_parse_iova_ranges(a.b, a.size, r, 4, &nr) == -EINVAL, "case %d", i);
		ck_assert_uint_eq(nr, 42);
		ck_assert(memcmp(r, r0, sizeof(r)) == 0);
	}
	/* too small for the fixed part, NULL */
	ck_assert_int_eq(vfe_parse_iova_ranges(a.b, 19, r, 4, &nr), -EINVAL);
	ck_assert_int_eq(vfe_parse_iova_ranges(NULL, 64, r, 4, &nr), -EINVAL);
	ck_assert_int_eq(vfe_parse_iova_ranges(a.b, a.size, r, 4, NULL), -EINVAL);
}
END_TEST

/* Random bytes after a valid header never crash and never hang (ASan/UBSan
 * builds check the reads). */
START_TEST(random_chains_terminate)
{
	struct ik_rng rng = { 99 };
	long it, iters = ik_test_iters(20000);

	for (it = 0; it < iters; it++) {
		struct answer a;
		struct vfe_range r[8];
		size_t nr = 0;
		int ret;

		ans_init(&a, 24 + (uint32_t)ik_rng_below(&rng, 64));
		for (size_t j = 24; j < sizeof(a.b); j++)
			a.b[j] = (unsigned char)ik_rng_next(&rng);
		/* make small ids and offsets likely */
		for (size_t j = 24; j + 8 <= sizeof(a.b); j += 8 + 8 * ik_rng_below(&rng, 4))
			ans_cap(&a, j, (uint16_t)ik_rng_below(&rng, 3), 1,
				(uint32_t)ik_rng_below(&rng, 200));
		a.size = 24 + ik_rng_below(&rng, sizeof(a.b) - 24 + 1);
		ret = vfe_parse_iova_ranges(a.b, a.size, r, 8, &nr);
		IK_REQUIRE(ret == 0 || ret == -EINVAL || ret == -ENOENT || ret == -E2BIG);
		if (ret == 0)
			for (size_t k = 0; k < nr; k++)
				IK_REQUIRE(r[k].start <= r[k].end && (k == 0 || r[k].start > r[k - 1].end));
	}
}
END_TEST

static void expect_range(struct ik_iova_domain *d, uint64_t pfn, uint64_t lo, uint64_t hi)
{
	struct ik_iova_range rr;

	ck_assert_int_eq(ik_iova_find(d, pfn, &rr), 0);
	ck_assert(rr.reserved);
	ck_assert_uint_eq(rr.lo, lo);
	ck_assert_uint_eq(rr.hi, hi);
}

START_TEST(domain_reserves_the_gaps)
{
	struct vfe_range r[2] = { { 0, 0xfedfffffull }, { 0xfef00000ull, 0x7fffffffffull } };
	struct ik_iova_domain d;
	struct ik_iova_range rr;
	unsigned nres = 9;
	ik_u64 pfn;

	ck_assert_int_eq(vfe_iova_domain_init(&d, r, 2, 4096, &nres), 0);
	ck_assert_uint_eq(nres, 1);
	ck_assert_uint_eq(d.start_pfn, 0);
	ck_assert_uint_eq(d.end_pfn, 0x7ffffffull);
	expect_range(&d, 0xfee00, 0xfee00, 0xfeeff);
	ck_assert_int_eq(ik_iova_find(&d, 0xfedff, &rr), -ENOENT);
	ck_assert_int_eq(ik_iova_find(&d, 0xfef00, &rr), -ENOENT);
	/* an allocation under the window's end never lands in it */
	for (int i = 0; i < 300; i++) {
		ck_assert_int_eq(ik_iova_alloc(&d, 1, 0xfeeff, 0, &pfn), 0);
		ck_assert(pfn < 0xfee00);
	}
	ck_assert_int_eq(ik_iova_check(&d), 0);
	ik_iova_destroy(&d);
}
END_TEST

START_TEST(domain_partial_pages_and_errors)
{
	/* [0x1800, 0x4fff]: page 1 only partly (reserved), pages 2-4 whole;
	 * [0x5000, 0x5ffe]: no whole page; [0x9000, 0xa7ff]: page 9 whole,
	 * page 10 partly. */
	struct vfe_range r[3] = { { 0x1800, 0x4fff }, { 0x5000, 0x5ffe }, { 0x9000, 0xa7ff } };
	struct vfe_range bad[2] = { { 0x1000, 0x5fff }, { 0x5000, 0x9fff } };
	struct vfe_range none[1] = { { 0x1001, 0x1ffe } };
	struct vfe_range top[1] = { { 0xfffffffffffff001ull, UINT64_MAX } };
	struct ik_iova_domain d;
	unsigned nres = 0;

	ck_assert_int_eq(vfe_iova_domain_init(&d, r, 3, 4096, &nres), 0);
	ck_assert_uint_eq(d.start_pfn, 2);
	ck_assert_uint_eq(d.end_pfn, 9);
	ck_assert_uint_eq(nres, 1);
	expect_range(&d, 5, 5, 8);
	ck_assert_int_eq(ik_iova_check(&d), 0);
	ik_iova_destroy(&d);
	ck_assert_int_eq(vfe_iova_domain_init(&d, bad, 2, 4096, NULL), -EINVAL);  /* overlap */
	ck_assert_int_eq(vfe_iova_domain_init(&d, none, 1, 4096, NULL), -EINVAL); /* no page */
	ck_assert_int_eq(vfe_iova_domain_init(&d, top, 1, 4096, NULL), -EINVAL);  /* ditto, at 2^64 */
	ck_assert_int_eq(vfe_iova_domain_init(&d, r, 0, 4096, NULL), -EINVAL);
	ck_assert_int_eq(vfe_iova_domain_init(&d, r, 3, 3000, NULL), -EINVAL);
	ck_assert_int_eq(vfe_iova_domain_init(&d, NULL, 3, 4096, NULL), -EINVAL);
	/* the whole 64-bit space at 4 KiB: the last page is whole */
	top[0].start = 0;
	ck_assert_int_eq(vfe_iova_domain_init(&d, top, 1, 4096, NULL), 0);
	ck_assert_uint_eq(d.end_pfn, UINT64_MAX >> 12);
	ik_iova_destroy(&d);
}
END_TEST

START_TEST(pci_addresses)
{
	char out[13] = "unchanged!!!";

	ck_assert_int_eq(vfe_parse_pci_addr("0000:00:03.0", out), 0);
	ck_assert_str_eq(out, "0000:00:03.0");
	ck_assert_int_eq(vfe_parse_pci_addr("00:1F.7", out), 0);
	ck_assert_str_eq(out, "0000:00:1f.7");
	ck_assert_int_eq(vfe_parse_pci_addr("ABCD:ff:00.1", out), 0);
	ck_assert_str_eq(out, "abcd:ff:00.1");
	strcpy(out, "unchanged!!!");
	ck_assert_int_eq(vfe_parse_pci_addr("00:20.0", out), -EINVAL);	/* device > 0x1f */
	ck_assert_int_eq(vfe_parse_pci_addr("00:03.8", out), -EINVAL);	/* function > 7 */
	ck_assert_int_eq(vfe_parse_pci_addr("0:03.0", out), -EINVAL);
	ck_assert_int_eq(vfe_parse_pci_addr("00:03.0x", out), -EINVAL);
	ck_assert_int_eq(vfe_parse_pci_addr("0000-00:03.0", out), -EINVAL);
	ck_assert_int_eq(vfe_parse_pci_addr("0000:00:03:0", out), -EINVAL);
	ck_assert_int_eq(vfe_parse_pci_addr("00:g3.0", out), -EINVAL);
	ck_assert_int_eq(vfe_parse_pci_addr("", out), -EINVAL);
	ck_assert_int_eq(vfe_parse_pci_addr(NULL, out), -EINVAL);
	ck_assert_str_eq(out, "unchanged!!!");
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("vfio_edu");
	TCase *tc = tcase_create("vfio_edu");

	tcase_add_test(tc, parses_the_vtd_answer_behind_another_cap);
	tcase_add_test(tc, no_caps_is_enoent);
	tcase_add_test(tc, malformed_answers_are_einval);
	tcase_add_test(tc, random_chains_terminate);
	tcase_add_test(tc, domain_reserves_the_gaps);
	tcase_add_test(tc, domain_partial_pages_and_errors);
	tcase_add_test(tc, pci_addresses);
	suite_add_tcase(s, tc);
	return s;
}
