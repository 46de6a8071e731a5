/*
 * test_util.h - the helpers every C test shares (library ckpt_test_util,
 * tests/common/): a deterministic PRNG, temporary directories, whole
 * files. The helpers of one area (codec vectors, hooks records, legacy
 * files, damage) stay in that area's own utility library, which links this.
 */
#ifndef PDC_CKPT_TEST_UTIL_H
#define PDC_CKPT_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Deterministic PRNG (splitmix64): the next value of the stream *state. */
uint64_t tu_rand(uint64_t *state);
/* Uniform-ish in [0, n) (0 if n is 0). */
uint64_t tu_below(uint64_t *state, uint64_t n);

/* A fresh directory $TMPDIR/ckpt-TAG-XXXXXX (/tmp without TMPDIR) into buf.
 * 0, or -1 with errno set. */
int tu_mkdtemp(char *buf, size_t len, const char *tag);
/* rm -rf path (no error if missing). 0, or -1 with errno set. */
int tu_rmtree(const char *path);

/* A test case's temporary directory and DIR/store, the store root handed to
 * the code under test: tu_case_new(&state-slot, tag) in a cmocka setup
 * (0, or -1 on failure), tu_case_free in the teardown (removes the tree). */
#define TU_DIR_LEN 512
struct tu_case {
    char dir[TU_DIR_LEN];
    char root[600];
};
int tu_case_new(void **state, const char *tag);
int tu_case_free(void **state);

/* A test's own fixture: a zeroed struct of `size` bytes whose first member
 * is `char dir[TU_DIR_LEN]`, holding a fresh temporary directory (NULL on
 * failure, said on stderr); tu_fixture_free removes the directory's tree
 * and frees the fixture (a cmocka teardown). */
void *tu_fixture_new(size_t size, const char *tag);
int tu_fixture_free(void **state);

/* Exact-size heap copy of n bytes (n may be 0; NULL if out of memory), so
 * that AddressSanitizer catches a read past the end. */
uint8_t *tu_dup(const void *p, size_t n);

/* Whole file into a malloc'ed buffer of exactly its size (NULL if it
 * cannot be read; errno set). */
uint8_t *tu_read_file(const char *path, size_t *len);
/* path := data. 0, or -1 with errno set. */
int tu_write_file(const char *path, const void *data, size_t len);
/* 1 if path exists (lstat). */
int tu_exists(const char *path);
/* Entries of a directory but . and .. (-1 if it cannot be opened). */
int tu_dir_entries(const char *path);

#endif
