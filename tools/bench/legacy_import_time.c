/*
 * legacy_import_time.c - wall time of importing legacy files into a fresh
 * store, repeated; prints every run and the median.
 *
 *   legacy_import_time [-n NRANKS] [-r RUNS] FILE...
 *
 * Each run imports into <tmp>/store of a new mkdtemp directory (under
 * $TMPDIR or /tmp) and removes it afterwards. The time covers the whole
 * legacy_import() call: reading and checking every file, writing every
 * rank through the hooks, closing (commit + fsync) and the rename.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckpt_fs.h"
#include "legacy.h"

static void rmtree(const char *path)
{
    ckpt_fs_rmtree(path);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int nranks = 1, runs = 5, opt;
    while ((opt = getopt(argc, argv, "n:r:")) != -1) {
        if (opt == 'n')
            nranks = atoi(optarg);
        else if (opt == 'r')
            runs = atoi(optarg);
        else
            goto usage;
    }
    if (optind >= argc || nranks < 1 || runs < 1 || runs > 1000)
        goto usage;
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || *tmp == 0 || strlen(tmp) > 400)
        tmp = "/tmp";
    double *t = calloc((size_t)runs, sizeof *t);
    if (t == NULL)
        return 1;
    struct legacy_import_stats st;
    for (int r = 0; r < runs; r++) {
        char dir[512], root[600], err[1024];
        snprintf(dir, sizeof dir, "%s/ckpt-legacy-time-XXXXXX", tmp);
        if (mkdtemp(dir) == NULL) {
            fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
            return 1;
        }
        snprintf(root, sizeof root, "%s/store", dir);
        double t0 = now_s();
        int rc = legacy_import(root, nranks, (const char *const *)argv + optind,
                               (size_t)(argc - optind), &st, err, sizeof err);
        t[r] = now_s() - t0;
        rmtree(dir);
        if (rc) {
            fprintf(stderr, "import failed: %s\n", err);
            return 1;
        }
        printf("run %d: %.2f ms\n", r + 1, t[r] * 1e3);
    }
    char sum[4096];
    legacy_import_summary(sum, sizeof sum, &st);
    fputs(sum, stdout);
    qsort(t, (size_t)runs, sizeof *t, cmp_d);
    double med = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
    printf("median of %d runs: %.2f ms (min %.2f, max %.2f)\n", runs, med * 1e3, t[0] * 1e3,
           t[runs - 1] * 1e3);
    free(t);
    return 0;
usage:
    fprintf(stderr, "usage: %s [-n NRANKS] [-r RUNS] FILE...\n", argv[0]);
    return 2;
}
