/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit-bench - the benchmark tool: one subcommand per unit.
 *
 *   iommukit-bench [--json] [--quick] [--seed N] [--threads N] [SUBCOMMAND [options]]
 *
 * Global options may appear before or after the subcommand; the subcommand
 * parses them all, and refuses those it does not use.  With no subcommand
 * it runs the default one.  Bad options: a one-line message on stderr and
 * exit status 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <iommukit/env.h>
#include "bench.h"

struct subcmd {
	const char *name;
	int (*fn)(int argc, char **argv, struct bench_opts *o);
	const char *help;
};

static const struct subcmd subcmds[] = {
	{ "rbtree", bench_rbtree,
	  "augmented red-black tree: insert/lookup/erase ns per op, plain vs augmented" },
	{ "iova", bench_iova,
	  "IOVA allocator: W1-W3 fragmentation workloads, growth, W4 fast path" },
	{ "cmdq", bench_cmdq,
	  "command queues: cmds/s and latency by producers, batch, sync; shared vs per-CPU" },
	{ "map", bench_map,
	  "IO page tables: map/unmap ns and clean/TLB/sync counts by size, format, coherence" },
	{ "dma", bench_dma,
	  "end-to-end DMA through the soft IOMMU: alloc, map, device access, unmap, invalidate" },
	{ "seed", bench_seed,
	  "ECMDQ seed workload on the SMMUv3 model: map-walk-unmap, shared queue vs ECMDQ" },
	{ "reproduce", bench_reproduce,
	  "the four published comparisons (sync_map, unmap cleans, queues, IOVA tail)" },
};

#define DEFAULT_SUBCMD "dma"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: iommukit-bench [GLOBAL OPTIONS] [SUBCOMMAND [OPTIONS]]\n"
		"\n"
		"Benchmarks for iommukit %s.  Times are noisy on shared machines: compare\n"
		"ratios within one run; the counts printed beside them are stable.\n"
		"\n"
		"global options:\n"
		"  --json         one JSON object per line instead of tables\n"
		"  --quick        smaller runs (a smoke test)\n"
		"  --seed N       random seed (default 1)\n"
		"  --threads N    worker threads, where a subcommand uses them\n"
		"  --help, -h     this text; SUBCOMMAND --help for its options\n"
		"  --version      the library's version\n"
		"(a subcommand refuses the global options it does not use; --opt=V is\n"
		"--opt V)\n"
		"\n"
		"subcommands (default: %s):\n",
		ik_version(), DEFAULT_SUBCMD);
	for (size_t i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		fprintf(f, "  %-10s %s\n", subcmds[i].name, subcmds[i].help);
}

static void main_help(void)
{
	usage(stdout);
}

static const struct subcmd *find_subcmd(const char *name)
{
	for (size_t k = 0; k < sizeof(subcmds) / sizeof(subcmds[0]); k++)
		if (!strcmp(name, subcmds[k].name))
			return &subcmds[k];
	return NULL;
}

/* The options that may stand before the subcommand: every global one. */
static const struct option main_opts[] = {
	BENCH_OPTS_COMMON, BENCH_OPTS_JSON, BENCH_OPTS_QUICK, BENCH_OPTS_SEED, BENCH_OPTS_THREADS,
	BENCH_OPTS_END,
};

int main(int argc, char **argv)
{
	struct bench_opts o = { .json = false, .quick = false, .threads = 0, .seed = 1 };
	char **sub = calloc((size_t)argc + 2, sizeof(*sub));
	const struct subcmd *cmd;
	struct bench_parse p;
	int c, at, nsub = 0, rc;

	if (!sub)
		return 1;
	/* The global options before the subcommand's name (checked here, then
	 * handed on to the subcommand, which may not take them all). */
	bench_parse_init(&p, NULL, main_opts, main_help, &o, argc, argv);
	p.stop_at_arg = true;
	while ((c = bench_next_opt(&p)) > 0)
		; /* only global options: bench_next_opt() checks them */
	if (c < 0)
		return free(sub), p.status;
	at = optind;
	cmd = find_subcmd(at < argc ? argv[at] : DEFAULT_SUBCMD);
	if (!cmd)
		return free(sub), bench_usage_error(NULL, "unknown subcommand '%s'", argv[at]);
	sub[nsub++] = (char *)cmd->name;
	for (int i = 1; i < at; i++)
		sub[nsub++] = argv[i];
	for (int i = at + 1; i < argc; i++)
		sub[nsub++] = argv[i];
	rc = cmd->fn(nsub, sub, &o);
	free(sub);
	return rc;
}
