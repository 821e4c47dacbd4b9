/*
 * fuzz_replay.c — runs inputs through the fuzz harness (fuzz_trace.c) in an
 * ordinary build (gcc, and under make asan with ASan+UBSan), so the saved
 * crash-regression corpus and systematic corruptions run as tests:
 *   fuzz_replay FILE|DIR...            each file as is (directories: every file)
 *   fuzz_replay --truncate FILE        every prefix: cut at every byte
 *   fuzz_replay --bitflip FILE [N]     every bit of the first N bytes (default
 *                                      all) flipped, one at a time
 * A crash, an abort (the harness's contract checks) or a sanitizer report
 * fails the run; otherwise it prints how many inputs ran and exits 0.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_trace.h"

static unsigned char *fr_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	unsigned char *b = malloc(cap);
	size_t r;
	while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			unsigned char *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				b = NULL;
			}
			b = nb;
		}
	}
	fclose(f);
	*len = n;
	return b;
}

static unsigned long fr_runs;

static int fr_one(const unsigned char *d, size_t n)
{
	fr_runs++;
	int rc = gp_fuzz_trace(d, n);
	if (rc) {
		fprintf(stderr, "fuzz_replay: harness could not run (%d)\n", rc);
		return 1;
	}
	return 0;
}

static int fr_file(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "fuzz_replay: %s: cannot stat\n", path);
		return 1;
	}
	if (S_ISDIR(st.st_mode)) {
		DIR *dir = opendir(path);
		struct dirent *e;
		int bad = 0;
		if (!dir)
			return 1;
		while ((e = readdir(dir)))
			if (e->d_name[0] != '.') {
				char p[4096];
				snprintf(p, sizeof p, "%s/%s", path, e->d_name);
				bad |= fr_file(p);
			}
		closedir(dir);
		return bad;
	}
	size_t n;
	unsigned char *d = fr_slurp(path, &n);
	if (!d) {
		fprintf(stderr, "fuzz_replay: %s: cannot read\n", path);
		return 1;
	}
	int bad = fr_one(d, n);
	free(d);
	return bad;
}

int main(int argc, char **argv)
{
	int bad = 0;
	if (argc >= 3 && (!strcmp(argv[1], "--truncate") || !strcmp(argv[1], "--bitflip"))) {
		size_t n;
		unsigned char *d = fr_slurp(argv[2], &n);
		if (!d) {
			fprintf(stderr, "fuzz_replay: %s: cannot read\n", argv[2]);
			return 2;
		}
		if (!strcmp(argv[1], "--truncate")) {
			for (size_t i = 0; i < n && !bad; i++)
				bad = fr_one(d, i);
		} else {
			size_t lim = argc >= 4 ? strtoul(argv[3], NULL, 10) : n;
			for (size_t i = 0; i < n && i < lim && !bad; i++)
				for (int b = 0; b < 8 && !bad; b++) {
					d[i] ^= (unsigned char)(1u << b);
					bad = fr_one(d, n);
					d[i] ^= (unsigned char)(1u << b);
				}
		}
		free(d);
	} else if (argc >= 2) {
		for (int i = 1; i < argc; i++)
			bad |= fr_file(argv[i]);
	} else {
		fprintf(stderr, "usage: fuzz_replay FILE|DIR... | --truncate FILE | --bitflip FILE [N]\n");
		return 2;
	}
	printf("fuzz_replay: %lu inputs, %s\n", fr_runs, bad ? "FAILED" : "ok");
	return bad;
}
