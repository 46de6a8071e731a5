/*
 * tagidx_delta.c - format 3's tag-index delta (tagidx_delta.h): a
 * commit's log of tag-index puts and deletes, appended as chunks; the
 * chunks' check and decoding; their count at open.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#include "bytes.h"
#include "tagidx_delta.h"

int ckpt_tagidx_log(ckpt_store *st, int op, const uint8_t *lkey, size_t klen)
{
    if (klen < DELTA_KEY_MIN || klen > DELTA_KEY_MAX)
        return EINVAL;
    if (st->delta.buf_len + 3 + klen > st->delta.buf_cap) {
        size_t ncap = st->delta.buf_cap ? 2 * st->delta.buf_cap : 64 << 10;
        while (ncap < st->delta.buf_len + 3 + klen)
            ncap *= 2;
        uint8_t *nb = realloc(st->delta.buf, ncap);
        if (nb == NULL)
            return ENOMEM;
        st->delta.buf = nb;
        st->delta.buf_cap = ncap;
    }
    uint8_t *p = st->delta.buf + st->delta.buf_len;
    p[0] = (uint8_t)op;
    p[1] = (uint8_t)(klen >> 8);
    p[2] = (uint8_t)klen;
    memcpy(p + 3, lkey, klen);
    st->delta.buf_len += 3 + klen;
    st->delta.buf_n++;
    return 0;
}

int ckpt_tagidx_log_flush(ckpt_store *st, MDB_txn *txn, uint64_t *seq)
{
    size_t off = 0;
    while (off < st->delta.buf_len) {
        /* whole entries, up to DELTA_CHUNK_MAX bytes (at least one) */
        size_t end = off;
        uint32_t n = 0;
        while (end < st->delta.buf_len) {
            size_t e = 3 + ((size_t)st->delta.buf[end + 1] << 8 | st->delta.buf[end + 2]);
            if (n > 0 && end + e - off > DELTA_CHUNK_MAX)
                break;
            end += e;
            n++;
        }
        uint8_t kb[8];
        ckpt_key_u64(kb, *seq);
        /* format 4: the chunk's checksum after it (csum.h) */
        MDB_val k = {8, kb}, v = {4 + end - off + (st->csum ? CKPT_CSUM_LEN : 0), NULL};
        int rc = mdb_put(txn, st->delta.dbi, &k, &v, MDB_RESERVE | MDB_APPEND);
        if (rc)
            return rc;
        uint8_t *p = v.mv_data;
        p[0] = (uint8_t)(n >> 24);
        p[1] = (uint8_t)(n >> 16);
        p[2] = (uint8_t)(n >> 8);
        p[3] = (uint8_t)n;
        memcpy(p + 4, st->delta.buf + off, end - off);
        if (st->csum)
            ckpt_csum_seal(kb, 8, p, 4 + end - off);
        (*seq)++;
        off = end;
    }
    return 0;
}

/* Check a chunk and append its entries to *ents (grown as needed; ents
 * NULL: only check them); *n is
 * the count so far. 0, ENOMEM, or MDB_CORRUPTED with where = what is wrong. */
int ckpt_delta_chunk_entries(int csum, struct dent **ents, size_t *n, size_t *cap,
                             const MDB_val *key, const MDB_val *val, char *where, size_t wlen)
{
    const uint8_t *p = val->mv_data;
    size_t len = val->mv_size, off = 4;
    uint64_t seq = key->mv_size == 8 ? ckpt_key_get_u64(key->mv_data) : 0;
    uint32_t cs, cc;
    if (csum && ckpt_csum_check(key->mv_data, key->mv_size, p, len, &cs, &cc) != 0) {
        snprintf(where, wlen, "chunk %llu: checksum mismatch (stored %08x, computed %08x)",
                 (unsigned long long)seq, cs, cc);
        return MDB_CORRUPTED;
    }
    if (csum)
        len -= CKPT_CSUM_LEN;
    if (key->mv_size != 8 || len < 4) {
        snprintf(where, wlen, "chunk %llu: %s", (unsigned long long)seq,
                 key->mv_size != 8 ? "a key that is not 8 bytes" : "shorter than its header");
        return MDB_CORRUPTED;
    }
    uint32_t count = ckpt_be32_get(p);
    if (count == 0 || count > (len - 4) / (3 + DELTA_KEY_MIN)) {
        snprintf(where, wlen, "chunk %llu: says %u entries in %zu bytes", (unsigned long long)seq,
                 count, len);
        return MDB_CORRUPTED;
    }
    if (ents == NULL && csum) {
        /* only counted (a reader's open): the checksum held, so these are
         * the bytes a commit wrote; the walk below runs when the entries
         * are read (a merge, a read of the tag index) */
        *n += count;
        return 0;
    }
    if (ents != NULL && *n + count > *cap) {
        size_t ncap = *cap ? *cap : 1024;
        while (ncap < *n + count)
            ncap *= 2;
        struct dent *ne = realloc(*ents, ncap * sizeof *ne);
        if (ne == NULL)
            return ENOMEM;
        *ents = ne;
        *cap = ncap;
    }
    for (uint32_t i = 0; i < count; i++) {
        size_t kl;
        if (off + 3 > len || (p[off] != TAGIDX_OP_PUT && p[off] != TAGIDX_OP_DEL) ||
            (kl = (size_t)p[off + 1] << 8 | p[off + 2]) < DELTA_KEY_MIN || kl > DELTA_KEY_MAX ||
            kl > len - off - 3) {
            snprintf(where, wlen, "chunk %llu: entry %u of %u at byte %zu is damaged",
                     (unsigned long long)seq, i, count, off);
            return MDB_CORRUPTED;
        }
        if (ents != NULL) { /* else only checked (ckpt_tagidx_delta_scan) */
            struct dent *d = &(*ents)[*n + i];
            d->key = p + off + 3;
            d->klen = (uint16_t)kl;
            d->op = p[off];
            d->seq = (uint32_t)(*n + i);
        }
        off += 3 + kl;
    }
    if (off != len) {
        snprintf(where, wlen, "chunk %llu: %zu bytes after its %u entries",
                 (unsigned long long)seq, len - off, count);
        return MDB_CORRUPTED;
    }
    *n += count;
    return 0;
}

static int dent_cmp(const void *pa, const void *pb)
{
    const struct dent *a = pa, *b = pb;
    int c = ckpt_tagidx_key_cmp(a->key, a->klen, b->key, b->klen);
    return c ? c : (a->seq > b->seq) - (a->seq < b->seq);
}

/* Sort by key, then keep only each key's last entry; returns the count. */
size_t ckpt_delta_collapse(struct dent *e, size_t n)
{
    size_t w = 0;
    if (n < 2)
        return n;
    struct ckpt_skey *s = malloc(2 * n * sizeof *s);
    struct dent *c = malloc(n * sizeof *c);
    if (s == NULL || c == NULL) { /* the slower sort needs no memory */
        free(s);
        free(c);
        qsort(e, n, sizeof *e, dent_cmp);
        for (size_t i = 0; i < n; i++) {
            if (i + 1 < n && e[i + 1].klen == e[i].klen &&
                memcmp(e[i + 1].key, e[i].key, e[i].klen) == 0)
                continue;
            e[w++] = e[i];
        }
        return w;
    }
    memcpy(c, e, n * sizeof *c);
    for (size_t i = 0; i < n; i++)
        ckpt_skey_set(&s[i], c[i].key, c[i].klen, i);
    ckpt_skey_sort(s, s + n, n); /* stable: equal keys stay in log order */
    for (size_t i = 0; i < n; i++)
        if (i + 1 == n || ckpt_skey_less(&s[i], &s[i + 1]))
            e[w++] = c[s[i].idx];
    free(s);
    free(c);
    return w;
}

int ckpt_tagidx_delta_scan(ckpt_store *st, MDB_txn *txn, char *where, size_t wlen)
{
    MDB_cursor *cur;
    MDB_val k, v;
    size_t n = 0, last = 0;
    int rc = mdb_cursor_open(txn, st->delta.dbi, &cur);
    if (rc)
        return rc;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if ((rc = ckpt_delta_chunk_entries(st->csum, NULL, &n, NULL, &k, &v, where, wlen)) != 0)
            break;
        last = ckpt_key_get_u64(k.mv_data);
    }
    mdb_cursor_close(cur);
    if (rc != MDB_NOTFOUND)
        return rc;
    st->delta.seq = last + 1;
    st->delta.pending = n;
    return 0;
}

int ckpt_tagidx_delta_load(ckpt_store *st, MDB_txn *txn, char *where, size_t wlen)
{
    MDB_cursor *cur;
    MDB_val k, v;
    if (st->delta.loaded)
        return 0;
    int rc = mdb_cursor_open(txn, st->delta.dbi, &cur);
    if (rc)
        return rc;
    /* the last key only: its leaf page, not the chunk (a value that large
     * lives on pages of its own, which this does not touch) */
    rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
    mdb_cursor_close(cur);
    if (rc == MDB_NOTFOUND) {
        st->delta.seq = 1;
        st->delta.uncounted = 0;
        st->delta.loaded = 1;
        return 0;
    }
    if (rc)
        return rc;
    if (k.mv_size != 8) {
        snprintf(where, wlen, "its last chunk's key is %zu bytes, not a chunk number", k.mv_size);
        return MDB_CORRUPTED;
    }
    st->delta.uncounted = ckpt_key_get_u64(k.mv_data);
    st->delta.seq = st->delta.uncounted + 1;
    st->delta.loaded = 1;
    return 0;
}

void ckpt_tagidx_delta_count_locked(ckpt_store *st)
{
    MDB_txn *txn;
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    volatile uint64_t n = 0;
    uint64_t upto;
    struct ckpt_guard g;
    char where[160];
    if (st->opts.readonly || !st->delta.on || (st->delta.loaded && st->delta.uncounted == 0))
        return;
    /* Where they cannot be read, one entry is counted (once): the merge
     * then reads them itself and says what is wrong. */
    if (mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn) != 0) {
        st->delta.uncounted = 0;
        n = st->delta.pending == 0;
        goto out;
    }
    ckpt_guard_push(&g);
    if (sigsetjmp(g.jb, 0) != 0) {
        /* a damaged page: the merge reads it again and fails with it */
        ckpt_guard_pop(&g);
        n = st->delta.pending == 0 ? n + 1 : n;
        goto out; /* the read transaction is abandoned, not ended */
    }
    if (ckpt_tagidx_delta_load(st, txn, where, sizeof where) != 0) {
        /* a damaged last key: so does the next commit of a kvtag, which
         * loads it again */
        ckpt_guard_pop(&g);
        mdb_txn_abort(txn);
        n = st->delta.pending == 0;
        goto out;
    }
    upto = st->delta.uncounted;
    st->delta.uncounted = 0;
    if (mdb_cursor_open(txn, st->delta.dbi, &cur) == 0) {
        for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
             rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
            if (k.mv_size == 8 && ckpt_key_get_u64(k.mv_data) > upto)
                break; /* committed by this writer: counted by its commit */
            uint32_t count = v.mv_size >= 4 ? ckpt_be32_get(v.mv_data) : 0;
            n += count == 0 || count > v.mv_size / (3 + DELTA_KEY_MIN) ? 1 : count;
        }
        mdb_cursor_close(cur);
    }
    ckpt_guard_pop(&g);
    mdb_txn_abort(txn);
out:
    st->delta.pending += n;
    if (n > 0 && st->delta.since_ms == 0)
        st->delta.since_ms = ckpt_mono_ms();
}
