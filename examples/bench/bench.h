/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit-bench: shared helpers for the subcommands.
 *
 * A subcommand is `int bench_NAME(int argc, char **argv, struct bench_opts
 * *o)`, registered in main.c's table; it parses argv (the global options it
 * takes included) with bench_next_opt().  It prints a readable table,
 * or with o->json one JSON object per line.  Exit status: 0, 1 when the run
 * itself failed (a fault, an error from the library), 2 for a bad option.
 */
#ifndef IK_BENCH_H
#define IK_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <getopt.h>
#include <iommukit/pgtable.h>

struct bench_opts {
	bool json;	/* --json: one JSON object per line */
	bool quick;	/* --quick: smaller runs (CI smoke test) */
	unsigned threads; /* --threads N (0: subcommand default) */
	uint64_t seed;	/* --seed N */
};

/* Monotonic nanoseconds, and a serialising cycle-ish timestamp. */
uint64_t bench_now_ns(void);

/* Latency samples: fill with bench_samples_add(), then summarise. */
struct bench_samples {
	uint64_t *v;
	size_t n, cap;
};
int bench_samples_init(struct bench_samples *s, size_t cap);
void bench_samples_free(struct bench_samples *s);
static inline void bench_samples_add(struct bench_samples *s, uint64_t ns)
{
	if (s->n < s->cap)
		s->v[s->n++] = ns;
}

struct bench_stats {
	size_t n;
	double mean, stddev;
	uint64_t p50, p99, p999, max, min;
	uint64_t hist[64]; /* hist[k]: samples with floor(log2(ns)) == k (0 ns in [0]) */
};
/* Sorts s->v in place. */
void bench_stats_compute(struct bench_samples *s, struct bench_stats *st);
/* Prints "  log2 histogram: [8-15ns] 12 | ..." on one line, non-empty buckets only. */
void bench_print_hist(FILE *f, const struct bench_stats *st);

/* A one-line error for a bad option; returns 2 (the exit status). */
int bench_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Option parsing: getopt_long over one table per subcommand.  `--opt V` and
 * `--opt=V` are the same.  A subcommand's table lists its own options and
 * the global ones it uses (BENCH_OPTS_* below); bench_next_opt() handles the
 * global ones itself (into *o), --help (the subcommand's help function) and
 * --version too, and reports anything else it cannot take with one line
 * naming the option and the subcommand.  main() hands every global option
 * given before the subcommand on to it, so they meet the same table.
 *
 *	bench_parse_init(&p, "name", name_opts, name_help, o, argc, argv);
 *	while ((c = bench_next_opt(&p)) > 0) {
 *		switch (c) {
 *		case MY_OPT: ... optarg ...
 *		}
 *	}
 *	if (c < 0)
 *		return p.status;
 */
enum {
	BENCH_OPT_END = 0,	/* no more options: run */
	BENCH_OPT_STOP = -1,	/* stop now with exit status p->status: help or
				 * version printed (0), a bad option reported (2) */
	BENCH_OPT_JSON = 0x1000,
	BENCH_OPT_QUICK,
	BENCH_OPT_SEED,
	BENCH_OPT_THREADS,
	BENCH_OPT_VERSION,
	BENCH_OPT_OWN		/* a subcommand's own option values start here */
};
#define BENCH_OPTS_COMMON { "help", no_argument, NULL, 'h' }, \
	{ "version", no_argument, NULL, BENCH_OPT_VERSION }
#define BENCH_OPTS_JSON { "json", no_argument, NULL, BENCH_OPT_JSON }
#define BENCH_OPTS_QUICK { "quick", no_argument, NULL, BENCH_OPT_QUICK }
#define BENCH_OPTS_SEED { "seed", required_argument, NULL, BENCH_OPT_SEED }
#define BENCH_OPTS_THREADS { "threads", required_argument, NULL, BENCH_OPT_THREADS }
#define BENCH_OPTS_END { NULL, 0, NULL, 0 }

struct bench_parse {
	const char *cmd;		/* subcommand name, for messages (NULL: main) */
	const struct option *opts;	/* its table */
	void (*help)(void);		/* prints its --help */
	struct bench_opts *o;		/* global options land here */
	int argc;
	char **argv;
	int index;			/* table index of the option just returned */
	int status;			/* exit status, at BENCH_OPT_STOP */
	bool stop_at_arg;		/* main: stop at the subcommand's name */
	bool started;
};
/* Start parsing argv[1..argc-1] (argv[0]: the subcommand's name). */
void bench_parse_init(struct bench_parse *p, const char *cmd, const struct option *opts,
		      void (*help)(void), struct bench_opts *o, int argc, char **argv);
/* The next own option's value (its optarg in `optarg`), or BENCH_OPT_END /
 * BENCH_OPT_STOP.  Before BENCH_OPT_END an argument that is not an option
 * is reported (BENCH_OPT_STOP) unless stop_at_arg; optind then indexes it. */
int bench_next_opt(struct bench_parse *p);
/* The option just returned takes an integer in [lo, hi]: true with *out,
 * or false having reported "--NAME must be lo..hi". */
bool bench_opt_range(const struct bench_parse *p, uint64_t lo, uint64_t hi, uint64_t *out);

/* Write [cpu, cpu + size) back to memory with the cache-clean instruction a
 * non-coherent walker's env would use (clwb, clflushopt or clflush on x86,
 * dc cvac on AArch64; one per 64-byte line, then the fence), and its name;
 * NULL and a no-op on other targets. */
const char *bench_clean_insn(void);
void bench_clean(const void *cpu, size_t size);

/* Parses an unsigned integer option value (decimal, 0x hex, suffix k/m/g =
 * 2^10/2^20/2^30); false on a malformed value: empty, not starting with a
 * digit (a sign, a space), trailing characters, or beyond 2^64 - 1 (the
 * number itself or with its suffix). */
bool bench_parse_u64(const char *s, uint64_t *out);
/* A comma-separated list of at most `max` such values into out[]: their
 * number, or -1 for an empty list, an empty element, a malformed value or
 * more than `max`. */
int bench_parse_list_u64(const char *s, uint64_t *out, int max);

/* The page-table formats the benchmarks run (bench_fmts.c): how they
 * configure each, and which IOMMU commands go with it. */
struct bench_fmt {
	enum ik_pt_fmt fmt;
	uint32_t ias, oas;	/* bench map's config */
	uint32_t quirks;
	uint64_t fmt_flags;
	bool smmu;		/* SMMUv3 commands (else VT-d descriptors) */
	bool stage2;		/* stage-2 invalidations (TLBI_S2_IPA, TLBI_S12_VMALL) */
	bool dma_default;	/* in bench dma's default matrix */
	bool riscv;		/* RISC-V IOMMU commands (then smmu is false) */
	/* NULL: the format's own row, named as the format; else a variant
	 * of the format with another config, for bench map only (its name,
	 * e.g. "lpae-s1-lpa2"; --fmt selects it by that name) */
	const char *variant;
};
#define BENCH_FMTS_MAX 16	/* rows at most */
extern const struct bench_fmt bench_fmts[];
extern const size_t bench_nfmts;
/* The row of fmt, or NULL. */
const struct bench_fmt *bench_fmt_find(enum ik_pt_fmt fmt);
/* The leaf sizes fmt can map with that granule (ik_pt_fmt_get_info()); 0
 * when the format is not built in or has no such granule. */
uint64_t bench_fmt_leaf_sizes(enum ik_pt_fmt fmt, uint64_t granule);

/* Subcommands. */
int bench_rbtree(int argc, char **argv, struct bench_opts *o);
int bench_iova(int argc, char **argv, struct bench_opts *o);
int bench_cmdq(int argc, char **argv, struct bench_opts *o);
int bench_dma(int argc, char **argv, struct bench_opts *o);
int bench_reproduce(int argc, char **argv, struct bench_opts *o);
int bench_map(int argc, char **argv, struct bench_opts *o);
int bench_seed(int argc, char **argv, struct bench_opts *o);

/* The median of v[0..n) (sorts v in place; 0 for n == 0). */
double bench_median(double *v, unsigned n);

#endif
