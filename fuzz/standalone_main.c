/*
 * standalone_main.c - replay driver for the fuzz targets without libFuzzer
 * (any compiler, e.g. gcc with or without sanitizers): runs
 * LLVMFuzzerTestOneInput once on every file named on the command line and
 * on every regular file in every directory named there (recursively, in
 * name order; names starting with '.' are skipped, so an empty directory
 * can be kept in git with a .gitkeep). Each input is handed over in a heap
 * buffer of exactly its size, as libFuzzer does, so that ASan sees any read
 * past its end.
 *
 *   fuzz-replay-bulki fuzz/corpus/bulki fuzz/regressions/bulki
 *
 * Exit status 0 if every input ran (a failed check traps instead), 1 on a
 * usage or I/O error, e.g. a path that does not exist.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long g_files;
static unsigned long long g_bytes;
static int g_verbose;

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int err = buf == NULL || ferror(f);
    fclose(f);
    if (err) {
        fprintf(stderr, "%s: read error\n", path);
        free(buf);
        return -1;
    }
    /* an exact-size copy (at least 1 byte allocated, as malloc(0) may
     * return NULL) */
    uint8_t *exact = malloc(len ? len : 1);
    if (exact == NULL) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, len);
    free(buf);
    if (g_verbose)
        fprintf(stderr, "running %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    g_files++;
    g_bytes += len;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path);

static int run_dir(const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            char **nn = realloc(names, ncap * sizeof *nn);
            if (nn == NULL) {
                rc = -1;
                break;
            }
            names = nn;
            cap = ncap;
        }
        size_t plen = strlen(path) + 1 + strlen(de->d_name) + 1;
        if ((names[n] = malloc(plen)) == NULL) {
            rc = -1;
            break;
        }
        snprintf(names[n], plen, "%s/%s", path, de->d_name);
        n++;
    }
    closedir(d);
    if (n > 0)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        if (rc == 0)
            rc = run_path(names[i]);
        free(names[i]);
    }
    free(names);
    return rc;
}

static int run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode))
        return run_dir(path);
    if (S_ISREG(st.st_mode))
        return run_file(path);
    return 0; /* sockets, fifos, ...: not inputs */
}

int main(int argc, char **argv)
{
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "-v") == 0) {
        g_verbose = 1;
        first = 2;
    }
    if (argc <= first) {
        fprintf(stderr,
                "usage: %s [-v] FILE|DIR...\n"
                "Runs the fuzz target once on each file (directories recursively).\n",
                argv[0]);
        return 1;
    }
    for (int i = first; i < argc; i++)
        if (run_path(argv[i]) != 0)
            return 1;
    printf("%s: ran %lu inputs (%llu bytes), all passed\n", argv[0], g_files, g_bytes);
    return 0;
}
