/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit-bench - the benchmark tool: one subcommand per unit.
 *
 *   iommukit-bench [--json] [--quick] [--seed N] [--threads N] [SUBCOMMAND [options]]
 *
 * Global options may appear anywhere; everything else goes to the subcommand.
 * With no subcommand it runs the default summary.  Bad options: a one-line
 * message on stderr and exit status 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <iommukit/env.h>
#include "bench.h"

struct subcmd {
	const char *name;
	int (*fn)(int argc, char **argv, const struct bench_opts *o);
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
};

#define DEFAULT_SUBCMD "rbtree"

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
		"\n"
		"subcommands (default: %s):\n",
		ik_version(), DEFAULT_SUBCMD);
	for (size_t i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		fprintf(f, "  %-10s %s\n", subcmds[i].name, subcmds[i].help);
}

int main(int argc, char **argv)
{
	struct bench_opts o = { .json = false, .quick = false, .threads = 0, .seed = 1 };
	char **rest = calloc((size_t)argc + 1, sizeof(*rest));
	const struct subcmd *cmd = NULL;
	int nrest = 0, rc;
	bool help = false;

	if (!rest)
		return 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		uint64_t v;

		if (!strcmp(a, "--json")) {
			o.json = true;
		} else if (!strcmp(a, "--quick")) {
			o.quick = true;
		} else if (!strcmp(a, "--seed") || !strcmp(a, "--threads")) {
			if (i + 1 >= argc || !bench_parse_u64(argv[i + 1], &v))
				return free(rest), bench_usage_error(NULL, "%s needs a number", a);
			if (a[2] == 's')
				o.seed = v;
			else if (v == 0 || v > 1024)
				return free(rest), bench_usage_error(NULL, "--threads must be 1..1024");
			else
				o.threads = (unsigned)v;
			i++;
		} else if (!cmd && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
			help = true;
		} else if (!cmd && a[0] != '-') {
			for (size_t k = 0; k < sizeof(subcmds) / sizeof(subcmds[0]); k++)
				if (!strcmp(a, subcmds[k].name))
					cmd = &subcmds[k];
			if (!cmd)
				return free(rest), bench_usage_error(NULL, "unknown subcommand '%s'", a);
			rest[nrest++] = argv[i];
		} else if (!cmd) {
			return free(rest), bench_usage_error(NULL, "unknown option '%s'", a);
		} else {
			rest[nrest++] = argv[i];
		}
	}
	if (help) {
		usage(stdout);
		free(rest);
		return 0;
	}
	if (!cmd) {
		for (size_t k = 0; k < sizeof(subcmds) / sizeof(subcmds[0]); k++)
			if (!strcmp(DEFAULT_SUBCMD, subcmds[k].name))
				cmd = &subcmds[k];
		rest[nrest++] = (char *)DEFAULT_SUBCMD;
	}
	rc = cmd->fn(nrest, rest, &o);
	free(rest);
	return rc;
}
