/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* vfe_logic.c - vfio-edu's pure logic (see vfe_logic.h). */
#include <errno.h>
#include <string.h>
#include "vfe_logic.h"

static uint16_t rd16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int vfe_parse_iova_ranges(const void *info, size_t size, struct vfe_range *out, size_t max,
			  size_t *nr)
{
	const unsigned char *b = info;
	size_t off, n, i;

	if (!b || !nr || (max && !out) || size < VFE_INFO_MIN_SIZE)
		return -EINVAL;
	if (!(rd32(b + VFE_INFO_FLAGS_OFF) & VFE_INFO_FLAG_CAPS))
		return -ENOENT;
	off = rd32(b + VFE_INFO_CAP_OFFSET_OFF);
	if (off == 0)
		return -ENOENT;
	for (;;) {
		size_t next;

		/* The header inside the buffer, and past the fixed part. */
		if (off < VFE_INFO_MIN_SIZE || off > size || size - off < VFE_CAP_HDR_SIZE)
			return -EINVAL;
		if (rd16(b + off) == VFE_CAP_IOVA_RANGE)
			break;
		next = rd32(b + off + 4);
		if (next == 0)
			return -ENOENT;
		if (next <= off)
			return -EINVAL;	/* a loop, or going backwards */
		off = next;
	}
	if (rd16(b + off + 2) != 1)
		return -EINVAL;
	if (size - off < VFE_IOVA_CAP_RANGES_OFF)
		return -EINVAL;
	n = rd32(b + off + VFE_IOVA_CAP_NR_OFF);
	if (n == 0 || n > (size - off - VFE_IOVA_CAP_RANGES_OFF) / VFE_IOVA_RANGE_SIZE)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const unsigned char *r = b + off + VFE_IOVA_CAP_RANGES_OFF + i * VFE_IOVA_RANGE_SIZE;
		uint64_t s = rd64(r), e = rd64(r + 8);

		if (s > e)
			return -EINVAL;
		if (i > 0 && s <= rd64(r - VFE_IOVA_RANGE_SIZE + 8))
			return -EINVAL;	/* unsorted or overlapping */
	}
	if (n > max)
		return -E2BIG;
	for (i = 0; i < n; i++) {
		const unsigned char *r = b + off + VFE_IOVA_CAP_RANGES_OFF + i * VFE_IOVA_RANGE_SIZE;

		out[i].start = rd64(r);
		out[i].end = rd64(r + 8);
	}
	*nr = n;
	return 0;
}

/* The whole pfns of [start, end] at granule 1 << shift: [*lo, *hi]; 0 if none. */
static int whole_pages(const struct vfe_range *r, unsigned shift, uint64_t *lo, uint64_t *hi)
{
	uint64_t mask = ((uint64_t)1 << shift) - 1, first, last;

	first = r->start >> shift;
	if (r->start & mask) {
		if (first == UINT64_MAX >> shift)
			return 0;	/* starts inside the last page of the space */
		first++;
	}
	last = r->end >> shift;
	if ((r->end & mask) != mask) {
		if (last == 0)
			return 0;	/* ends inside page 0 */
		last--;
	}
	if (first > last)
		return 0;
	*lo = first;
	*hi = last;
	return 1;
}

int vfe_iova_domain_init(struct ik_iova_domain *d, const struct vfe_range *ranges, size_t n,
			 uint64_t granule, unsigned *reserved)
{
	struct ik_iova_config cfg;
	uint64_t lo, hi, first = 0, last = 0, prev_hi = 0;
	unsigned shift = 0, nres = 0;
	size_t i;
	int have = 0, ret;

	if (!d || !ranges || n == 0 || granule == 0 || (granule & (granule - 1)))
		return -EINVAL;
	while (((uint64_t)1 << shift) != granule)
		shift++;
	for (i = 0; i < n; i++) {
		if (ranges[i].start > ranges[i].end || (i > 0 && ranges[i].start <= ranges[i - 1].end))
			return -EINVAL;
		if (!whole_pages(&ranges[i], shift, &lo, &hi))
			continue;
		if (!have)
			first = lo;
		last = hi;
		have = 1;
	}
	if (!have)
		return -EINVAL;
	memset(&cfg, 0, sizeof(cfg));
	cfg.granule = granule;
	cfg.start_pfn = first;
	cfg.end_pfn = last;
	ret = ik_iova_init(d, &cfg);
	if (ret < 0)
		return ret;
	have = 0;
	for (i = 0; i < n; i++) {
		if (!whole_pages(&ranges[i], shift, &lo, &hi))
			continue;
		if (have && lo > prev_hi + 1) {
			ret = ik_iova_reserve(d, prev_hi + 1, lo - 1);
			if (ret < 0) {
				ik_iova_destroy(d);
				return ret;
			}
			nres++;
		}
		prev_hi = hi;
		have = 1;
	}
	if (reserved)
		*reserved = nres;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Exactly `digits` hex digits at *s, advancing it; -1 if not. */
static long hexfield(const char **s, int digits)
{
	long v = 0;
	int i;

	for (i = 0; i < digits; i++) {
		int h = hexval((*s)[i]);

		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	*s += digits;
	return v;
}

int vfe_parse_pci_addr(const char *s, char out[13])
{
	static const char hex[] = "0123456789abcdef";
	long dom = 0, bus, dev, fn;
	size_t len;

	if (!s || !out)
		return -EINVAL;
	len = strlen(s);
	if (len == 12) {
		dom = hexfield(&s, 4);
		if (dom < 0 || *s++ != ':')
			return -EINVAL;
	} else if (len != 7) {
		return -EINVAL;
	}
	bus = hexfield(&s, 2);
	if (bus < 0 || *s++ != ':')
		return -EINVAL;
	dev = hexfield(&s, 2);
	if (dev < 0 || dev > 0x1f || *s++ != '.')
		return -EINVAL;
	fn = hexfield(&s, 1);
	if (fn < 0 || fn > 7 || *s != '\0')
		return -EINVAL;
	out[0] = hex[(dom >> 12) & 15];
	out[1] = hex[(dom >> 8) & 15];
	out[2] = hex[(dom >> 4) & 15];
	out[3] = hex[dom & 15];
	out[4] = ':';
	out[5] = hex[(bus >> 4) & 15];
	out[6] = hex[bus & 15];
	out[7] = ':';
	out[8] = hex[(dev >> 4) & 15];
	out[9] = hex[dev & 15];
	out[10] = '.';
	out[11] = hex[fn];
	out[12] = '\0';
	return 0;
}
