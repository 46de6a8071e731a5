/*
 * test_store_keysort.c - the key sort of commits and merges
 * (store/keysort.c): against a reference (insertion sort of the bytes,
 * then the length, then the input position) on inputs shaped to take each
 * path: already sorted, a few runs (the merge), many runs over few
 * prefixes (the buckets), too many prefixes or too few entries a prefix
 * (back to the merge), prefixes equal in their first 8 or 16 bytes, keys
 * shorter than 8 bytes, repeated keys (the sort is stable).
 */
#include "store_test_util.h"
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MAX 40

struct keys {
    size_t n;
    uint8_t (*k)[KEY_MAX];
    size_t *len;
};

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static void keys_alloc(struct keys *ks, size_t n)
{
    ks->n = n;
    ks->k = calloc(n ? n : 1, sizeof *ks->k);
    ks->len = calloc(n ? n : 1, sizeof *ks->len);
    assert_non_null(ks->k);
    assert_non_null(ks->len);
}

static void keys_free(struct keys *ks)
{
    free(ks->k);
    free(ks->len);
}

/* Entry i: the name `names[i % nnames]` (a tag-index key: prefix, the
 * name, NUL) then the owner i / nnames, big-endian: object after object,
 * each object's names in the order given. */
static void index_keys(struct keys *ks, size_t n, const char *prefix, size_t nnames)
{
    keys_alloc(ks, n);
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s%zu", prefix, i % nnames);
        size_t l = strlen(name) + 1;
        memcpy(ks->k[i], name, l);
        uint64_t owner = 1000 + i / nnames;
        for (int b = 0; b < 8; b++)
            ks->k[i][l + b] = (uint8_t)(owner >> (56 - 8 * b));
        ks->len[i] = l + 8;
    }
}

static int ref_less(const struct keys *ks, size_t a, size_t b)
{
    size_t la = ks->len[a], lb = ks->len[b];
    int c = memcmp(ks->k[a], ks->k[b], la < lb ? la : lb);
    if (c != 0)
        return c < 0;
    if (la != lb)
        return la < lb;
    return a < b;
}

/* Sort with ckpt_skey_sort and compare the order with the reference. */
static void check_sort(const struct keys *ks)
{
    size_t n = ks->n;
    struct ckpt_skey *s = malloc(2 * (n ? n : 1) * sizeof *s);
    size_t *ref = malloc((n ? n : 1) * sizeof *ref);
    assert_non_null(s);
    assert_non_null(ref);
    for (size_t i = 0; i < n; i++) {
        ckpt_skey_set(&s[i], ks->k[i], ks->len[i], i);
        ref[i] = i;
    }
    /* binary insertion sort: fine for the sizes here */
    for (size_t i = 1; i < n; i++) {
        size_t v = ref[i], lo = 0, hi = i;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (ref_less(ks, v, ref[mid]))
                hi = mid;
            else
                lo = mid + 1;
        }
        memmove(ref + lo + 1, ref + lo, (i - lo) * sizeof *ref);
        ref[lo] = v;
    }
    ckpt_skey_sort(s, s + n, n);
    for (size_t i = 0; i < n; i++) {
        if (s[i].idx != ref[i])
            fail_msg("n %zu: position %zu holds entry %u, the reference has %zu", n, i,
                     (unsigned)s[i].idx, ref[i]);
        assert_ptr_equal(s[i].key, ks->k[s[i].idx]);
        assert_int_equal(s[i].klen, ks->len[s[i].idx]);
    }
    free(s);
    free(ref);
}

/* The merge's shape: objects after objects, each over the same names. */
static void test_keysort_index_shape(void **state)
{
    (void)state;
    static const size_t names[] = {1, 3, 10, 100, 1000, 1100};
    static const size_t sizes[] = {0, 1, 2, 17, 1023, 1024, 1025, 5000, 12000};
    for (size_t a = 0; a < sizeof names / sizeof *names; a++)
        for (size_t b = 0; b < sizeof sizes / sizeof *sizes; b++) {
            struct keys ks;
            index_keys(&ks, sizes[b], "tag", names[a]);
            check_sort(&ks);
            keys_free(&ks);
            /* names alike in their first 8 and 16 bytes: one bucket */
            index_keys(&ks, sizes[b], "user_attribute_", names[a]);
            check_sort(&ks);
            keys_free(&ks);
        }
}

/* Random keys of 0 to KEY_MAX bytes over a small alphabet (many equal
 * keys and shared prefixes), sorted and reversed inputs among them. */
static void test_keysort_random(void **state)
{
    (void)state;
    static const size_t sizes[] = {3, 100, 1024, 3000, 12000};
    for (size_t b = 0; b < sizeof sizes / sizeof *sizes; b++)
        for (unsigned alpha = 2; alpha <= 256; alpha *= 8) {
            struct keys ks;
            keys_alloc(&ks, sizes[b]);
            for (size_t i = 0; i < ks.n; i++) {
                ks.len[i] = next_rand() % (KEY_MAX + 1);
                for (size_t j = 0; j < ks.len[i]; j++)
                    ks.k[i][j] = (uint8_t)(next_rand() % alpha);
            }
            check_sort(&ks);
            keys_free(&ks);
        }
}

/* Few prefixes, each in many short runs: buckets, then runs in each. */
static void test_keysort_few_prefixes(void **state)
{
    (void)state;
    for (unsigned prefixes = 1; prefixes <= 64; prefixes *= 4) {
        struct keys ks;
        keys_alloc(&ks, 4096);
        for (size_t i = 0; i < ks.n; i++) {
            uint32_t p = next_rand() % prefixes;
            for (int j = 0; j < 8; j++)
                ks.k[i][j] = (uint8_t)(p >> (j % 4));
            ks.len[i] = 8 + next_rand() % 12;
            for (size_t j = 8; j < ks.len[i]; j++)
                ks.k[i][j] = (uint8_t)(next_rand() % 3);
        }
        check_sort(&ks);
        keys_free(&ks);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keysort_index_shape),
        cmocka_unit_test(test_keysort_random),
        cmocka_unit_test(test_keysort_few_prefixes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
