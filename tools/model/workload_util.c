/*
 * workload_util.c - what ckpt-workload's commands share (workload_cli.h):
 * the program's rank, size, name and command line, failure messages, the
 * collectives that combine the ranks' results, and the store-root check.
 */
#include <dirent.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "workload_cli.h"

int wl_rank, wl_size;
const char *wl_prog = "ckpt-workload";
char wl_cmdline[1024];

int wl_fail(const char *fmt, ...)
{
    /* one write per line: stderr is unbuffered, and the lines of several
     * ranks would interleave mid-line (mpiexec forwards what it reads) */
    char line[2048];
    va_list ap;
    int n = snprintf(line, sizeof line, "%s: rank %d: ", wl_prog, wl_rank);
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    strcat(line, "\n");
    fputs(line, stderr);
    return 1;
}

int wl_any_failed(int mine)
{
    int all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

double wl_max_all(double t)
{
    double m = 0;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

long wl_sum_all(long v)
{
    long s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return s;
}

long wl_peak_rss_kb(void)
{
    struct rusage ru;
    long mine = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

int wl_holds_ranks(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int found = 0;
    if (d == NULL)
        return 0;
    while (!found && (de = readdir(d)) != NULL)
        found = strncmp(de->d_name, "rank-", 5) == 0;
    closedir(d);
    return found;
}
