/*
 * keysort.c - a stable sort of keys in byte order, for the sorts a commit
 * and a merge do per entry (apply.c's run of kvtag puts, the tag-index
 * delta's collapse in tagidx_delta.c), where glibc's qsort called a
 * comparison function and memcmp per comparison.
 *
 * Each key carries its first 16 bytes as two big-endian numbers, zero past
 * its end. They order as the bytes do: where two padded prefixes first
 * differ inside both keys, the bytes differ there; past the shorter key's
 * end its zero is below the longer key's byte (which differs from it, so
 * is not zero), and the shorter key is a prefix of the longer, which sorts
 * it first as well. Equal prefixes go to the bytes after the 16th, then to
 * the length. The sort merges the runs the input already has, pairwise,
 * until one is left: a server's keys come mostly in runs (an object's
 * tags in name order), so it takes fewer passes than a sort from scratch.
 *
 * Many runs over few prefixes (a merge's tag-index entries: each object's
 * names in order, object after object, so one run per object over the
 * same few names) first go into buckets by their first 8 bytes, stably:
 * one pass to count, one to place; inside a bucket they are then mostly
 * one run already. At most BUCKET_RUNS runs, more than BUCKET_MAX
 * distinct prefixes, or fewer than BUCKET_PER entries a bucket, and the
 * merge does it all.
 */
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "store_int.h"

static uint64_t be_prefix(const uint8_t *p, size_t len)
{
    if (len >= 8)
        return ckpt_be64_get(p);
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++)
        v |= (uint64_t)p[i] << (56 - 8 * i);
    return v;
}

void ckpt_skey_set(struct ckpt_skey *s, const uint8_t *key, size_t klen, size_t idx)
{
    s->k0 = be_prefix(key, klen);
    s->k1 = klen > 8 ? be_prefix(key + 8, klen - 8) : 0;
    s->key = key;
    s->klen = (uint32_t)klen;
    s->idx = (uint32_t)idx;
}

static inline int less(const struct ckpt_skey *a, const struct ckpt_skey *b)
{
    if (a->k0 != b->k0)
        return a->k0 < b->k0;
    if (a->k1 != b->k1)
        return a->k1 < b->k1;
    size_t la = a->klen, lb = b->klen;
    if (la > 16 && lb > 16) {
        int c = memcmp(a->key + 16, b->key + 16, (la < lb ? la : lb) - 16);
        if (c)
            return c < 0;
    }
    return la < lb;
}

int ckpt_skey_less(const struct ckpt_skey *a, const struct ckpt_skey *b)
{
    return less(a, b);
}

/* The natural merge sort: s ends sorted, tmp (n entries) is scratch. */
static void merge_sort(struct ckpt_skey *s, struct ckpt_skey *tmp, size_t n)
{
    size_t first = 1;
    while (first < n && !less(&s[first], &s[first - 1]))
        first++;
    if (first >= n)
        return; /* one run: sorted already */
    struct ckpt_skey *src = s, *dst = tmp;
    for (;;) {
        size_t i = 0, runs = 0;
        while (i < n) {
            size_t m = i + 1, e;
            while (m < n && !less(&src[m], &src[m - 1]))
                m++;
            for (e = m < n ? m + 1 : m; e < n && !less(&src[e], &src[e - 1]); e++)
                ;
            /* merge [i, m) and [m, e) into dst + i; ties from the left */
            size_t a = i, b = m, o = i;
            while (a < m && b < e)
                dst[o++] = less(&src[b], &src[a]) ? src[b++] : src[a++];
            while (a < m)
                dst[o++] = src[a++];
            while (b < e)
                dst[o++] = src[b++];
            runs++;
            i = e;
        }
        struct ckpt_skey *t = src;
        src = dst;
        dst = t;
        if (runs <= 1)
            break;
    }
    if (src != s)
        memcpy(s, src, n * sizeof *s);
}

#define BUCKET_MIN 1024u  /* fewer entries: the merge alone */
#define BUCKET_MAX 1024u  /* distinct prefixes at most */
#define BUCKET_SLOTS 2048u /* hash slots, a power of two above BUCKET_MAX */
#define BUCKET_PER 16u    /* entries a bucket, at least, on average */
#define BUCKET_RUNS 8u    /* runs in the input, more than */

struct bucket {
    uint64_t k0;
    uint32_t n; /* entries; then where the next one goes */
    uint32_t used;
};

static struct bucket *bucket_of(struct bucket *tab, uint64_t k0)
{
    size_t i = (size_t)((k0 * 0x9e3779b97f4a7c15ull) >> 53) & (BUCKET_SLOTS - 1);
    while (tab[i].used && tab[i].k0 != k0)
        i = (i + 1) & (BUCKET_SLOTS - 1);
    return &tab[i];
}

static int k0_cmp(const void *pa, const void *pb)
{
    const struct bucket *a = *(struct bucket *const *)pa, *b = *(struct bucket *const *)pb;
    return (a->k0 > b->k0) - (a->k0 < b->k0);
}

/* Bucket by k0 (stable), then merge-sort each bucket. 0 when s is
 * sorted, -1 when the input does not suit (s is then unchanged). */
static int bucket_sort(struct ckpt_skey *s, struct ckpt_skey *tmp, size_t n)
{
    struct bucket *tab = calloc(BUCKET_SLOTS, sizeof *tab);
    struct bucket **order = malloc(BUCKET_MAX * sizeof *order);
    size_t nb = 0;
    int rc = -1;
    if (tab == NULL || order == NULL)
        goto out;
    for (size_t i = 0; i < n; i++) {
        struct bucket *b = bucket_of(tab, s[i].k0);
        if (!b->used) {
            if (nb == BUCKET_MAX)
                goto out;
            b->used = 1;
            b->k0 = s[i].k0;
            order[nb++] = b;
        }
        b->n++;
    }
    if (nb * BUCKET_PER > n)
        goto out;
    qsort(order, nb, sizeof *order, k0_cmp);
    uint32_t at = 0;
    for (size_t j = 0; j < nb; j++) {
        uint32_t c = order[j]->n;
        order[j]->n = at;
        at += c;
    }
    for (size_t i = 0; i < n; i++)
        tmp[bucket_of(tab, s[i].k0)->n++] = s[i];
    memcpy(s, tmp, n * sizeof *s);
    /* each bucket now ends where the next begins */
    for (size_t j = 0, start = 0; j < nb; j++) {
        size_t end = order[j]->n;
        merge_sort(s + start, tmp + start, end - start);
        start = end;
    }
    rc = 0;
out:
    free(tab);
    free(order);
    return rc;
}

void ckpt_skey_sort(struct ckpt_skey *s, struct ckpt_skey *tmp, size_t n)
{
    if (n >= BUCKET_MIN) {
        size_t runs = 1; /* a few runs merge in a few passes: no buckets */
        for (size_t i = 1; i < n && runs <= BUCKET_RUNS; i++)
            runs += less(&s[i], &s[i - 1]);
        if (runs == 1 || (runs > BUCKET_RUNS && bucket_sort(s, tmp, n) == 0))
            return; /* sorted already, or by buckets */
    }
    merge_sort(s, tmp, n);
}
