/*
 * test_util.c - see test_util.h.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t tu_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t tu_below(uint64_t *state, uint64_t n)
{
    return n ? tu_rand(state) % n : 0;
}

int tu_mkdtemp(char *buf, size_t len, const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || *tmp == 0 || strlen(tmp) > 400)
        tmp = "/tmp";
    int n = snprintf(buf, len, "%s/ckpt-%s-XXXXXX", tmp, tag);
    if (n < 0 || (size_t)n >= len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return mkdtemp(buf) ? 0 : -1;
}

static int rm_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    /* a directory the walk could not read is removed as far as it goes */
    return (type == FTW_DP || type == FTW_DNR ? rmdir(path) : unlink(path)) == 0 || errno == ENOENT
               ? 0
               : -1;
}

int tu_rmtree(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return errno == ENOENT ? 0 : -1;
    /* removed directories may hold read-only ones (a test's chmod) */
    return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void *tu_fixture_new(size_t size, const char *tag)
{
    char *f = calloc(1, size); /* a pointer to the struct is one to its first member, dir */
    if (f == NULL || tu_mkdtemp(f, TU_DIR_LEN, tag) != 0) {
        fprintf(stderr, "tu_fixture_new: a temporary directory: %s\n", strerror(errno));
        free(f);
        return NULL;
    }
    return f;
}

int tu_fixture_free(void **state)
{
    char *dir = *state;
    if (dir != NULL)
        tu_rmtree(dir);
    free(dir);
    *state = NULL;
    return 0;
}

int tu_case_new(void **state, const char *tag)
{
    struct tu_case *c = tu_fixture_new(sizeof *c, tag);
    if (c == NULL)
        return -1;
    snprintf(c->root, sizeof c->root, "%s/store", c->dir);
    *state = c;
    return 0;
}

int tu_case_free(void **state)
{
    return tu_fixture_free(state);
}

uint8_t *tu_dup(const void *p, size_t n)
{
    uint8_t *d = malloc(n ? n : 1);
    if (d != NULL && n > 0)
        memcpy(d, p, n);
    return d;
}

uint8_t *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    if (f == NULL)
        return NULL;
    for (;;) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 4096;
            uint8_t *nb = realloc(buf, ncap);
            if (nb == NULL)
                break;
            buf = nb;
            cap = ncap;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    int bad = n == cap || ferror(f); /* n == cap: out of memory */
    fclose(f);
    uint8_t *exact = bad ? NULL : malloc(n ? n : 1);
    if (exact != NULL) {
        if (n)
            memcpy(exact, buf, n);
        *len = n;
    }
    free(buf);
    return exact;
}

int tu_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    int bad = len && fwrite(data, 1, len, f) != len;
    return fclose(f) != 0 || bad ? -1 : 0;
}

int tu_exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

int tu_dir_entries(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *de;
    int n = 0;
    if (d == NULL)
        return -1;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}
