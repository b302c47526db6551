/*
 * a2a-bench - MPI alltoall latency/bandwidth benchmark for osmoffset A/B runs
 *
 * Copyright (c) 2026 The osmoffset authors.
 *
 * This software is available to you under the terms of the GNU General
 * Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
 *
 * For every message size (bytes sent from each rank to each other rank) the
 * benchmark runs --warmup untimed and --iters timed exchanges.  Every timed
 * exchange starts after an MPI_Barrier; its time is the largest time any
 * rank needed (the exchange is only finished when the slowest rank is).
 * Over the iterations it reports min, median, mean and max of that time and
 * the per-rank bandwidth: bytes one rank sends to the other ranks divided
 * by the median time.
 *
 * Patterns:
 *   alltoall  one MPI_Alltoall per exchange
 *   shift     ranks-1 rounds of MPI_Sendrecv; in round k rank i sends to
 *             (i + k) mod P and receives from (i - k) mod P.  This is the
 *             traffic model of lft-analyze's simulated alltoall
 *             (shift.base / shift.spread).
 *
 * CSV (--csv FILE, written by rank 0), one header line then one row per size:
 *   pattern,ranks,bytes,iterations,min_us,median_us,mean_us,max_us,bw_MBps
 * times in microseconds, bw_MBps = bytes * (ranks - 1) / median, in 10^6
 * bytes per second per rank.
 *
 * Built with SimGrid's smpicc (SMPI, simulated MPI: scripts/alltoall-ab
 * --simulate) the two message buffers come from SMPI_SHARED_MALLOC: every
 * simulated rank then shares one block of real memory, so hundreds of ranks
 * fit on one machine, but the data are garbage: the data check is off and
 * the buffers are not filled (the header line and --help say so).
 *
 * Exit status: 0 success, 1 data check or memory failure, 2 bad arguments.
 */

#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "a2a-bench"

/* smpicc's mpi.h defines SMPI_SHARED_MALLOC; real MPIs do not. */
#ifdef SMPI_SHARED_MALLOC
#define A2A_SIMULATED 1
#define BUF_ALLOC(n) SMPI_SHARED_MALLOC(n)
#define BUF_FREE(p) SMPI_SHARED_FREE(p)
#else
#define A2A_SIMULATED 0
#define BUF_ALLOC(n) malloc(n)
#define BUF_FREE(p) free(p)
#endif
#define MAX_SIZES 64
#define MAX_MSG (64UL << 20)	/* 64 MiB per peer */

struct opts {
	size_t sizes[MAX_SIZES];
	int nsizes;
	long iters;		/* -1: size dependent default */
	long warmup;		/* -1: size dependent default */
	int shift;
	int check;
	int quiet;
	const char *csv;
};

static int rank, nranks;

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [--sizes LIST] [--iters N] [--warmup N] [--pattern alltoall|shift]\n"
"                 [--csv FILE] [--no-check] [--quiet] [--help]\n"
"  --sizes LIST   comma separated message sizes in bytes per peer, suffix K or M\n"
"                 allowed (default 8,16,...,1M: powers of 2 from 8 B to 1 MiB)\n"
"  --iters N      timed iterations per size (default 100 up to 64K, 20 above)\n"
"  --warmup N     untimed iterations per size (default 10 up to 64K, 2 above)\n"
"  --pattern P    alltoall (MPI_Alltoall, default) or shift (rounds of\n"
"                 MPI_Sendrecv i -> i+k, the model of lft-analyze)\n"
"  --csv FILE     write the results as CSV (rank 0); header:\n"
"                 pattern,ranks,bytes,iterations,min_us,median_us,mean_us,max_us,bw_MBps\n"
"  --no-check     do not verify the received data after each size\n"
"  --quiet        no text table on stdout\n");
	if (A2A_SIMULATED)
		fprintf(f,
"This build runs under SimGrid SMPI: the buffers are shared between the\n"
"simulated ranks (SMPI_SHARED_MALLOC), so the data check is always off.\n");
}

/* Parse a size "8", "4K", "1M"; 0 on error. */
static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return 0;
	if (*end == 'k' || *end == 'K') {
		v <<= 10;
		end++;
	} else if (*end == 'm' || *end == 'M') {
		v <<= 20;
		end++;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v == 0 || v > MAX_MSG)
		return 0;
	return (size_t)v;
}

static long parse_count(const char *s, long min)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > 100000000L)
		return -1;
	return v;
}

/* Returns 0 on success, -1 after printing a message (rank 0). */
static int parse_args(int argc, char **argv, struct opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->iters = -1;
	o->warmup = -1;
	o->check = !A2A_SIMULATED;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;
		const char *eq = NULL;
		char key[32];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			if (rank == 0)
				usage(stdout);
			return 1;
		}
		if (!strcmp(a, "--no-check")) {
			o->check = 0;
			continue;
		}
		if (!strcmp(a, "--quiet")) {
			o->quiet = 1;
			continue;
		}
		if (strncmp(a, "--", 2) || strlen(a) >= sizeof(key)) {
			if (rank == 0)
				fprintf(stderr, PROG ": unknown argument '%s' "
					"(see --help)\n", a);
			return -1;
		}
		eq = strchr(a, '=');
		if (eq) {
			memcpy(key, a, eq - a);
			key[eq - a] = '\0';
			val = eq + 1;
		} else {
			strcpy(key, a);
		}
		if (strcmp(key, "--sizes") && strcmp(key, "--iters") &&
		    strcmp(key, "--warmup") && strcmp(key, "--pattern") &&
		    strcmp(key, "--csv")) {
			if (rank == 0)
				fprintf(stderr, PROG ": unknown option '%s' "
					"(see --help)\n", key);
			return -1;
		}
		if (!val) {
			if (i + 1 >= argc) {
				if (rank == 0)
					fprintf(stderr, PROG ": option %s needs "
						"a value\n", key);
				return -1;
			}
			val = argv[++i];
		}
		if (!strcmp(key, "--sizes")) {
			char buf[1024], *tok, *save = NULL;

			if (strlen(val) >= sizeof(buf) || !*val) {
				if (rank == 0)
					fprintf(stderr, PROG ": --sizes: empty "
						"or too long list\n");
				return -1;
			}
			strcpy(buf, val);
			o->nsizes = 0;
			for (tok = strtok_r(buf, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				size_t sz = parse_size(tok);

				if (!sz) {
					if (rank == 0)
						fprintf(stderr, PROG ": --sizes: "
							"'%s' is not a size from 1 "
							"byte to 64M\n", tok);
					return -1;
				}
				if (o->nsizes == MAX_SIZES) {
					if (rank == 0)
						fprintf(stderr, PROG ": --sizes: "
							"more than %d sizes\n",
							MAX_SIZES);
					return -1;
				}
				o->sizes[o->nsizes++] = sz;
			}
			if (!o->nsizes) {
				if (rank == 0)
					fprintf(stderr, PROG ": --sizes: no "
						"size given\n");
				return -1;
			}
		} else if (!strcmp(key, "--iters") ||
			   !strcmp(key, "--warmup")) {
			int it = !strcmp(key, "--iters");
			long v = parse_count(val, it ? 1 : 0);

			if (v < 0) {
				if (rank == 0)
					fprintf(stderr, PROG ": %s: '%s' is not "
						"a whole number %s\n", key, val,
						it ? ">= 1" : ">= 0");
				return -1;
			}
			if (it)
				o->iters = v;
			else
				o->warmup = v;
		} else if (!strcmp(key, "--pattern")) {
			if (!strcmp(val, "alltoall"))
				o->shift = 0;
			else if (!strcmp(val, "shift"))
				o->shift = 1;
			else {
				if (rank == 0)
					fprintf(stderr, PROG ": --pattern: '%s' "
						"is not alltoall or shift\n", val);
				return -1;
			}
		} else {
			if (!*val) {
				if (rank == 0)
					fprintf(stderr, PROG ": --csv: empty "
						"file name\n");
				return -1;
			}
			o->csv = val;
		}
	}
	if (!o->nsizes) {
		size_t s;

		for (s = 8; s <= (1UL << 20); s <<= 1)
			o->sizes[o->nsizes++] = s;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Byte j of the block rank src sends to rank dst. */
static inline unsigned char pattern_byte(int src, int dst, size_t j)
{
	return (unsigned char)(src * 31 + dst * 7 + j * 13 + 1);
}

static void fill(unsigned char *sbuf, size_t sz)
{
	int d;
	size_t j;

	for (d = 0; d < nranks; d++)
		for (j = 0; j < sz; j++)
			sbuf[(size_t)d * sz + j] = pattern_byte(rank, d, j);
}

/* Number of wrong blocks in rbuf. */
static int verify(const unsigned char *rbuf, size_t sz)
{
	int s, bad = 0;
	size_t j;

	for (s = 0; s < nranks; s++)
		for (j = 0; j < sz; j++)
			if (rbuf[(size_t)s * sz + j] !=
			    pattern_byte(s, rank, j)) {
				bad++;
				break;
			}
	return bad;
}

static void exchange(int shift, unsigned char *sbuf, unsigned char *rbuf,
		     size_t sz)
{
	int k;

	if (!shift) {
		MPI_Alltoall(sbuf, (int)sz, MPI_BYTE, rbuf, (int)sz, MPI_BYTE,
			     MPI_COMM_WORLD);
		return;
	}
	memcpy(rbuf + (size_t)rank * sz, sbuf + (size_t)rank * sz, sz);
	for (k = 1; k < nranks; k++) {
		int to = (rank + k) % nranks;
		int from = (rank - k + nranks) % nranks;

		MPI_Sendrecv(sbuf + (size_t)to * sz, (int)sz, MPI_BYTE, to, k,
			     rbuf + (size_t)from * sz, (int)sz, MPI_BYTE, from,
			     k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
}

int main(int argc, char **argv)
{
	struct opts o;
	FILE *csv = NULL;
	unsigned char *sbuf = NULL, *rbuf = NULL;
	double *t = NULL, *tmax = NULL;
	size_t maxsz = 0;
	long maxit = 0;
	int i, rc, status = 0, bad_total = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);

	rc = parse_args(argc, argv, &o);
	if (rc) {
		MPI_Finalize();
		return rc > 0 ? 0 : 2;
	}
	/* Rank 0 opens the CSV file first, so that a bad path is an argument
	 * error reported before any timing; everyone learns the result. */
	if (rank == 0 && o.csv) {
		csv = fopen(o.csv, "w");
		if (!csv)
			fprintf(stderr, PROG ": --csv %s: %s\n", o.csv,
				strerror(errno));
	}
	rc = (rank == 0 && o.csv && !csv);
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (rc) {
		MPI_Finalize();
		return 2;
	}

	if (nranks < 2) {
		if (rank == 0)
			fprintf(stderr, PROG ": needs at least 2 ranks, got %d\n",
				nranks);
		if (csv) {
			fclose(csv);
			remove(o.csv);
		}
		MPI_Finalize();
		return 2;
	}

	for (i = 0; i < o.nsizes; i++) {
		long it = o.iters > 0 ? o.iters :
			(o.sizes[i] <= 65536 ? 100 : 20);

		if (o.sizes[i] > maxsz)
			maxsz = o.sizes[i];
		if (it > maxit)
			maxit = it;
	}
	if (maxsz > INT_MAX) {
		if (rank == 0)
			fprintf(stderr, PROG ": message size too large\n");
		MPI_Finalize();
		return 2;
	}
	sbuf = BUF_ALLOC(maxsz * nranks);
	rbuf = BUF_ALLOC(maxsz * nranks);
	t = malloc(sizeof(double) * maxit);
	tmax = malloc(sizeof(double) * maxit);
	rc = !(sbuf && rbuf && t && tmax);
	MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rc) {
		if (rank == 0)
			fprintf(stderr, PROG ": cannot allocate 2 x %zu bytes "
				"per rank\n", maxsz * nranks);
		MPI_Finalize();
		return 1;
	}

	if (rank == 0 && !o.quiet) {
		printf("# a2a-bench: pattern %s, %d ranks, time = max over "
		       "ranks per iteration%s\n", o.shift ? "shift" : "alltoall",
		       nranks, A2A_SIMULATED ? " (SimGrid SMPI, shared buffers, "
		       "no data check)" : "");
		printf("# %10s %7s %12s %12s %12s %12s %12s\n", "bytes",
		       "iters", "min(us)", "median(us)", "mean(us)",
		       "max(us)", "MB/s/rank");
		fflush(stdout);
	}
	if (csv)
		fprintf(csv, "pattern,ranks,bytes,iterations,min_us,"
			"median_us,mean_us,max_us,bw_MBps\n");

	for (i = 0; i < o.nsizes; i++) {
		size_t sz = o.sizes[i];
		long it = o.iters > 0 ? o.iters : (sz <= 65536 ? 100 : 20);
		long wu = o.warmup >= 0 ? o.warmup : (sz <= 65536 ? 10 : 2);
		long n;
		int bad;

		/* Shared SMPI buffers hold no data worth filling, and filling
		 * them for hundreds of ranks would dominate the wall time. */
		if (!A2A_SIMULATED) {
			fill(sbuf, sz);
			memset(rbuf, 0, sz * nranks);
		}
		for (n = 0; n < wu; n++)
			exchange(o.shift, sbuf, rbuf, sz);
		for (n = 0; n < it; n++) {
			double t0;

			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
			exchange(o.shift, sbuf, rbuf, sz);
			t[n] = MPI_Wtime() - t0;
		}
		MPI_Reduce(t, tmax, (int)it, MPI_DOUBLE, MPI_MAX, 0,
			   MPI_COMM_WORLD);
		bad = o.check ? verify(rbuf, sz) : 0;
		MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM,
			      MPI_COMM_WORLD);
		if (bad) {
			if (rank == 0)
				fprintf(stderr, PROG ": data check failed at "
					"%zu bytes: %d wrong blocks\n", sz, bad);
			bad_total += bad;
		}
		if (rank == 0) {
			double mn, md, mx, sum = 0.0, bw;
			long k;

			for (k = 0; k < it; k++)
				sum += tmax[k];
			qsort(tmax, it, sizeof(double), cmp_double);
			mn = tmax[0];
			mx = tmax[it - 1];
			md = (it % 2) ? tmax[it / 2] :
				(tmax[it / 2 - 1] + tmax[it / 2]) / 2.0;
			/* a zero timer tick cannot be a bandwidth */
			bw = md > 0 ? (double)sz * (nranks - 1) / md / 1e6 : 0;
			if (!o.quiet) {
				printf("  %10zu %7ld %12.2f %12.2f %12.2f %12.2f "
				       "%12.2f\n", sz, it, mn * 1e6, md * 1e6,
				       sum / it * 1e6, mx * 1e6, bw);
				fflush(stdout);
			}
			if (csv)
				fprintf(csv, "%s,%d,%zu,%ld,%.3f,%.3f,%.3f,"
					"%.3f,%.3f\n",
					o.shift ? "shift" : "alltoall", nranks,
					sz, it, mn * 1e6, md * 1e6,
					sum / it * 1e6, mx * 1e6, bw);
		}
	}
	if (csv && fclose(csv)) {
		fprintf(stderr, PROG ": --csv %s: write error: %s\n", o.csv,
			strerror(errno));
		status = 1;
	}
	if (bad_total)
		status = 1;
	MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (sbuf)
		BUF_FREE(sbuf);
	if (rbuf)
		BUF_FREE(rbuf);
	free(t);
	free(tmax);
	MPI_Finalize();
	return status;
}
