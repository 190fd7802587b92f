/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <iommukit/env.h>
#include "bench.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int bench_samples_init(struct bench_samples *s, size_t cap)
{
	s->v = malloc((cap ? cap : 1) * sizeof(*s->v));
	s->n = 0;
	s->cap = cap;
	if (!s->v)
		return -ENOMEM;
	/* Touch every page now: a page fault taken while recording one sample
	 * would also cool the caches and TLB for the next operation timed. */
	memset(s->v, 0, (cap ? cap : 1) * sizeof(*s->v));
	return 0;
}

void bench_samples_free(struct bench_samples *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t pct(const struct bench_samples *s, double p)
{
	size_t i;

	if (!s->n)
		return 0;
	i = (size_t)(p * (double)(s->n - 1) + 0.5);
	return s->v[i < s->n ? i : s->n - 1];
}

void bench_stats_compute(struct bench_samples *s, struct bench_stats *st)
{
	double sum = 0, sq = 0;
	size_t i;

	memset(st, 0, sizeof(*st));
	st->n = s->n;
	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(*s->v), cmp_u64);
	for (i = 0; i < s->n; i++) {
		uint64_t v = s->v[i];

		sum += (double)v;
		st->hist[v ? 63 - __builtin_clzll(v) : 0]++;
	}
	st->mean = sum / (double)s->n;
	for (i = 0; i < s->n; i++) {
		double d = (double)s->v[i] - st->mean;

		sq += d * d;
	}
	st->stddev = s->n > 1 ? sqrt(sq / (double)(s->n - 1)) : 0;
	st->min = s->v[0];
	st->max = s->v[s->n - 1];
	st->p50 = pct(s, 0.50);
	st->p99 = pct(s, 0.99);
	st->p999 = pct(s, 0.999);
}

void bench_print_hist(FILE *f, const struct bench_stats *st)
{
	const char *sep = "";

	fprintf(f, "    log2 ns histogram:");
	for (int k = 0; k < 64; k++) {
		if (!st->hist[k])
			continue;
		fprintf(f, "%s [%llu-%llu] %llu", sep, k ? 1ull << k : 0ull,
			(2ull << k) - 1, (unsigned long long)st->hist[k]);
		sep = " |";
	}
	fprintf(f, "\n");
}

int bench_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "iommukit-bench%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try --help)\n");
	return 2;
}

/* ---- option parsing ---- */

static const struct option bench_globals[] = {
	BENCH_OPTS_JSON, BENCH_OPTS_QUICK, BENCH_OPTS_SEED, BENCH_OPTS_THREADS, BENCH_OPTS_END,
};

void bench_parse_init(struct bench_parse *p, const char *cmd, const struct option *opts,
		      void (*help)(void), struct bench_opts *o, int argc, char **argv)
{
	p->cmd = cmd;
	p->opts = opts;
	p->help = help;
	p->status = 0;
	p->o = o;
	p->argc = argc;
	p->argv = argv;
	p->index = -1;
	p->stop_at_arg = false;
	p->started = false;
}

/* Does `name` (up to '=' or its end) name an option of `opts`? */
static const struct option *bench_find_opt(const struct option *opts, const char *name)
{
	size_t n = strcspn(name, "=");

	for (; opts->name; opts++)
		if (strlen(opts->name) == n && !strncmp(opts->name, name, n))
			return opts;
	return NULL;
}

/* The option getopt_long() could not take: say why. */
static int bench_bad_opt(const struct bench_parse *p, int c)
{
	const char *arg = optind > 0 && optind <= p->argc ? p->argv[optind - 1] : "";
	const struct option *own;
	int len;

	if (strncmp(arg, "--", 2) != 0) {
		if (c == ':')
			return bench_usage_error(p->cmd, "-%c needs a value", optopt);
		return bench_usage_error(p->cmd, "unknown option '-%c'", optopt ? optopt : '?');
	}
	len = (int)strcspn(arg, "=");
	own = bench_find_opt(p->opts, arg + 2);
	if (c == ':')
		return bench_usage_error(p->cmd, "%.*s needs a value", len, arg);
	if (own && own->has_arg == no_argument && arg[len] == '=')
		return bench_usage_error(p->cmd, "%.*s takes no value", len, arg);
	if (p->cmd && bench_find_opt(bench_globals, arg + 2))
		return bench_usage_error(p->cmd, "%.*s is not an option of %s", len, arg, p->cmd);
	return bench_usage_error(p->cmd, "unknown option '%.*s'", len, arg);
}

/* A global option: into *p->o.  0, or 2 (reported). */
static int bench_global_opt(const struct bench_parse *p, int c)
{
	uint64_t v;

	switch (c) {
	case BENCH_OPT_JSON:
		p->o->json = true;
		return 0;
	case BENCH_OPT_QUICK:
		p->o->quick = true;
		return 0;
	case BENCH_OPT_SEED:
		if (!bench_parse_u64(optarg, &v))
			return bench_usage_error(p->cmd, "--seed needs a number");
		p->o->seed = v;
		return 0;
	default: /* BENCH_OPT_THREADS */
		if (!bench_parse_u64(optarg, &v))
			return bench_usage_error(p->cmd, "--threads needs a number");
		if (v == 0 || v > 1024)
			return bench_usage_error(p->cmd, "--threads must be 1..1024");
		p->o->threads = (unsigned)v;
		return 0;
	}
}

int bench_next_opt(struct bench_parse *p)
{
	for (;;) {
		int c;

		if (!p->started) {
			p->started = true;
#ifdef __GLIBC__
			optind = 0;	/* a full re-initialisation */
#else
			optind = 1;
#endif
			opterr = 0;
		}
		p->index = -1;
		c = getopt_long(p->argc, p->argv, p->stop_at_arg ? "+:h" : ":h", p->opts, &p->index);
		switch (c) {
		case -1:
			if (optind < p->argc && !p->stop_at_arg) {
				p->status = bench_usage_error(p->cmd, "unexpected argument '%s'",
							      p->argv[optind]);
				return BENCH_OPT_STOP;
			}
			return BENCH_OPT_END;
		case '?':
		case ':':
			p->status = bench_bad_opt(p, c);
			return BENCH_OPT_STOP;
		case 'h':
			p->help();
			p->status = 0;
			return BENCH_OPT_STOP;
		case BENCH_OPT_VERSION:
			printf("iommukit-bench %s\n", ik_version());
			p->status = 0;
			return BENCH_OPT_STOP;
		case BENCH_OPT_JSON:
		case BENCH_OPT_QUICK:
		case BENCH_OPT_SEED:
		case BENCH_OPT_THREADS:
			p->status = bench_global_opt(p, c);
			if (p->status)
				return BENCH_OPT_STOP;
			continue;
		default:
			return c;
		}
	}
}

bool bench_opt_range(const struct bench_parse *p, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t v;

	if (bench_parse_u64(optarg, &v) && v >= lo && v <= hi) {
		*out = v;
		return true;
	}
	bench_usage_error(p->cmd, "--%s must be %llu..%llu", p->opts[p->index].name,
			  (unsigned long long)lo, (unsigned long long)hi);
	return false;
}

bool bench_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	/* A digit first: strtoull() would also take leading space and a sign
	 * ("-1" is then 2^64 - 1). */
	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || v > UINT64_MAX)
		return false;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end || v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

int bench_parse_list_u64(const char *s, uint64_t *out, int max)
{
	char tok[64];
	int n = 0;

	if (!s)
		return -1;
	for (;;) {
		size_t len = strcspn(s, ",");

		if (n == max || len == 0 || len >= sizeof(tok))
			return -1;
		memcpy(tok, s, len);
		tok[len] = '\0';
		if (!bench_parse_u64(tok, &out[n]))
			return -1;
		n++;
		if (!s[len])
			return n;
		s += len + 1;
	}
}

/* ---- cache clean: the instruction a non-coherent walker's env would use ---- */

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static int x86_clean_insn = -1; /* 0 clflush, 1 clflushopt, 2 clwb */

static void x86_detect(void)
{
	unsigned a, b, c, d;

	x86_clean_insn = 0;
	/* CPUID leaf 7, EBX bit 24: CLWB; bit 23: CLFLUSHOPT. */
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
		if (b & (1u << 24))
			x86_clean_insn = 2;
		else if (b & (1u << 23))
			x86_clean_insn = 1;
	}
}

__attribute__((target("clwb"))) static void clean_clwb(char *p, char *e)
{
	for (; p < e; p += 64)
		__builtin_ia32_clwb(p);
	__builtin_ia32_sfence();
}

__attribute__((target("clflushopt"))) static void clean_clflushopt(char *p, char *e)
{
	for (; p < e; p += 64)
		__builtin_ia32_clflushopt(p);
	__builtin_ia32_sfence();
}

static void clean_clflush(char *p, char *e)
{
	__builtin_ia32_mfence();
	for (; p < e; p += 64)
		__builtin_ia32_clflush(p);
	__builtin_ia32_mfence();
}

const char *bench_clean_insn(void)
{
	if (x86_clean_insn < 0)
		x86_detect();
	return x86_clean_insn == 2 ? "clwb" : x86_clean_insn == 1 ? "clflushopt" : "clflush";
}

void bench_clean(const void *cpu, size_t size)
{
	char *p = (char *)((uintptr_t)cpu & ~(uintptr_t)63), *e = (char *)cpu + size;

	if (x86_clean_insn < 0)
		x86_detect();
	if (x86_clean_insn == 2)
		clean_clwb(p, e);
	else if (x86_clean_insn == 1)
		clean_clflushopt(p, e);
	else
		clean_clflush(p, e);
}
#elif defined(__aarch64__)
const char *bench_clean_insn(void)
{
	return "dc-cvac";
}

void bench_clean(const void *cpu, size_t size)
{
	uintptr_t p = (uintptr_t)cpu & ~(uintptr_t)63, e = (uintptr_t)cpu + size;

	for (; p < e; p += 64)
		__asm__ __volatile__("dc cvac, %0" ::"r"(p) : "memory");
	__asm__ __volatile__("dsb ish" ::: "memory");
}
#else
const char *bench_clean_insn(void)
{
	return NULL;
}

void bench_clean(const void *cpu, size_t size)
{
	(void)cpu;
	(void)size;
}
#endif

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

double bench_median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n ? v[n / 2] : 0;
}
