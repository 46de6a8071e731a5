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
 */
#include <string.h>

#include "store_int.h"

static uint64_t be_prefix(const uint8_t *p, size_t len)
{
    if (len >= 8)
        return ckpt_key_get_u64(p);
    uint64_t v = 0;
    for (size_t i = 0; i < 8; i++)
        v = v << 8 | (i < len ? p[i] : 0);
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

void ckpt_skey_sort(struct ckpt_skey *s, struct ckpt_skey *tmp, size_t n)
{
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
