/*
 * bench_util.h - small helpers shared by the benchmark programs: medians
 * and count arguments. (Results are CPU or wall times measured by each
 * program; these only summarise and parse.)
 */
#ifndef PDC_CKPT_BENCH_UTIL_H
#define PDC_CKPT_BENCH_UTIL_H

#include <stddef.h>
#include <stdio.h>

/* Median of v[0..n) (n >= 1); sorts v, so v[0] is the minimum and
 * v[n-1] the maximum afterwards. */
double bench_median(double *v, size_t n);
/* A positive decimal count (no sign, no suffix, at most SIZE_MAX / 2) into
 * *out; 0, or -1 if s is not one. */
int bench_parse_count(const char *s, size_t *out);
/* The options every codec benchmark takes: -n RECORDS, -r RUNS, -h or
 * --help (usage on stdout); no operands (docs/TOOLS.md, "Command-line
 * conventions"). *n and *runs hold the defaults on entry. Returns
 * -1 to go on, or the exit status to return: 0 after -h, 2 on bad usage
 * (said on stderr, prefixed with prog). */
int bench_args(int argc, char **argv, const char *prog, void (*usage)(FILE *), size_t *n,
               size_t *runs);

#endif
