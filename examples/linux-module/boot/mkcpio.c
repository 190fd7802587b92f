// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * mkcpio OUT NAME=PATH...: write a "newc" cpio archive (the initramfs format)
 * holding /dev, /dev/console and each PATH as /NAME (mode 0755), so that
 * `make boot` needs neither cpio nor root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned ino = 1;

static void entry(FILE *out, const char *name, unsigned mode, const void *data, size_t size,
		  unsigned rmaj, unsigned rmin)
{
	static const char zero[4];
	size_t nlen = strlen(name) + 1;

	fprintf(out, "070701%08X%08X%08X%08X%08X%08X%08lX%08X%08X%08X%08X%08lX%08X", ino++, mode,
		0u, 0u, 1u, 0u, (unsigned long)size, 0u, 0u, rmaj, rmin, (unsigned long)nlen, 0u);
	fwrite(name, 1, nlen, out);
	fwrite(zero, 1, (4 - (110 + nlen) % 4) % 4, out);
	if (size) {
		fwrite(data, 1, size, out);
		fwrite(zero, 1, (4 - size % 4) % 4, out);
	}
}

int main(int argc, char **argv)
{
	FILE *out;
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: mkcpio OUT NAME=PATH...\n");
		return 2;
	}
	out = fopen(argv[1], "wb");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	entry(out, "dev", 040755, NULL, 0, 0, 0);
	entry(out, "dev/console", 020600, NULL, 0, 5, 1);
	for (i = 2; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		FILE *in;
		char *buf;
		long n;

		if (!eq) {
			fprintf(stderr, "mkcpio: %s: expected NAME=PATH\n", argv[i]);
			return 2;
		}
		*eq = '\0';
		in = fopen(eq + 1, "rb");
		if (!in || fseek(in, 0, SEEK_END) != 0 || (n = ftell(in)) < 0 ||
		    fseek(in, 0, SEEK_SET) != 0) {
			perror(eq + 1);
			return 1;
		}
		buf = malloc(n ? (size_t)n : 1);
		if (!buf || fread(buf, 1, (size_t)n, in) != (size_t)n) {
			perror(eq + 1);
			return 1;
		}
		fclose(in);
		entry(out, argv[i], 0100755, buf, (size_t)n, 0, 0);
		free(buf);
	}
	entry(out, "TRAILER!!!", 0, NULL, 0, 0, 0);
	return fclose(out) == 0 ? 0 : 1;
}
