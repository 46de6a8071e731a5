/*
 * bench_util.c - see bench_util.h.
 */
#include "bench_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <getopt.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench_parse_count(const char *s, size_t *out)
{
    char *end;
    unsigned long long v;
    if (s[0] < '0' || s[0] > '9')
        return -1;
    v = strtoull(s, &end, 10);
    if (*end != 0 || v == 0 || v > SIZE_MAX / 2)
        return -1;
    *out = (size_t)v;
    return 0;
}

int bench_args(int argc, char **argv, const char *prog, void (*usage)(FILE *), size_t *n,
               size_t *runs)
{
    static const struct option lo[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "n:r:h", lo, NULL)) != -1) {
        switch (opt) {
        case 'n':
        case 'r':
            if (bench_parse_count(optarg, opt == 'n' ? n : runs) != 0) {
                fprintf(stderr, "%s: -%c needs a positive integer, not '%s'\n", prog, opt,
                        optarg);
                return 2;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
        usage(stderr);
        return 2;
    }
    return -1;
}
