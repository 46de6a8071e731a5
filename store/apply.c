/*
 * apply.c - applying the staged batch's operations (store_int.h, enum
 * op_kind) inside a write transaction: records, their name indexes, the
 * cascades of a delete, and the tag index's entries, which go to the
 * delta (tagidx.c). The commit (commit.c) runs them over the whole log.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

static int put_app(ckpt_store *st, MDB_txn *txn, MDB_dbi dbi, const void *k, size_t klen,
                   const void *v, size_t vlen)
{
    MDB_val key = {klen, (void *)k}, val = {vlen, (void *)v};
    return ckpt_put_rec(st, txn, dbi, &key, &val, 0);
}

/* A value read inside a write transaction, without its checksum. */
static void unseal(const ckpt_store *st, MDB_val *v)
{
    if (st->csum)
        v->mv_size = v->mv_size >= CKPT_CSUM_LEN ? v->mv_size - CKPT_CSUM_LEN : 0;
}

/* The tag index's logical key of a kvtag key: owner . namekey -> namekey .
 * owner (tagidx.c stores it). */
static size_t tagidx_key(uint8_t *out, const uint8_t *kv, size_t klen)
{
    memcpy(out, kv + 8, klen - 8);
    memcpy(out + klen - 8, kv, 8);
    return klen;
}

/* Delete every key of dbi starting with prefix; kvtag deletions also drop
 * their tag-index entries. */
static int del_prefix(ckpt_store *st, MDB_txn *txn, int db, const uint8_t *prefix, size_t plen)
{
    MDB_cursor *cur;
    MDB_val k, v;
    uint8_t ik[CKPT_NAMEKEY_MAX + 8];
    int rc = mdb_cursor_open(txn, st->dbi[db], &cur);
    if (rc)
        return rc;
    for (;;) {
        k.mv_size = plen;
        k.mv_data = (void *)prefix;
        rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
        if (rc == MDB_NOTFOUND) {
            rc = 0;
            break;
        }
        if (rc)
            break;
        if (k.mv_size < plen || memcmp(k.mv_data, prefix, plen) != 0)
            break;
        if (db == CKPT_DB_KVTAG && k.mv_size > 8 && k.mv_size <= sizeof ik) {
            size_t n = tagidx_key(ik, k.mv_data, k.mv_size);
            if ((rc = ckpt_tagidx_log(st, TAGIDX_OP_DEL, ik, n)) != 0)
                break;
        }
        if ((rc = mdb_cursor_del(cur, 0)) != 0)
            break;
    }
    mdb_cursor_close(cur);
    return rc;
}

/* Delete the name-index entry `ikey` only if it still names `id`. */
static int del_index_if(ckpt_store *st, MDB_txn *txn, MDB_dbi dbi, const uint8_t *ikey,
                        size_t ilen, const uint8_t id8[8])
{
    MDB_val k = {ilen, (void *)ikey}, v;
    int rc = mdb_get(txn, dbi, &k, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return rc;
    unseal(st, &v);
    if (v.mv_size == 8 && memcmp(v.mv_data, id8, 8) == 0)
        return mdb_del(txn, dbi, &k, NULL);
    return 0;
}

/* The keys an object or container record already stored was put with:
 * format 5 keeps them in obj_keys/cont_keys; before it, the caller's
 * rec_keys reads them from the record (rec, unsealed; NULL: read it). *have
 * is 0 when there are none (no record, or keys that do not decode). 0, or
 * an LMDB error. */
static int stored_keys(int *have, struct ckpt_rec_keys *rk, ckpt_store *st, MDB_txn *txn,
                       int is_obj, const uint8_t id8[8], const MDB_val *rec)
{
    MDB_val k = {8, (void *)id8}, v;
    const int kdb = is_obj ? CKPT_DB_OBJ_KEYS : CKPT_DB_CONT_KEYS;
    int rc;
    *have = 0;
    if (st->keys) {
        rc = mdb_get(txn, st->dbi[kdb], &k, &v);
        if (rc == MDB_NOTFOUND)
            return 0;
        if (rc)
            return rc;
        unseal(st, &v);
        *have = ckpt_keys_decode(rk, kdb, v.mv_data, v.mv_size) == 0;
        return 0;
    }
    if (rec == NULL) {
        rc = mdb_get(txn, st->dbi[is_obj ? CKPT_DB_OBJ : CKPT_DB_CONT], &k, &v);
        if (rc == MDB_NOTFOUND)
            return 0;
        if (rc)
            return rc;
        unseal(st, &v);
        rec = &v;
    }
    *have = ckpt_stored_keys(st, rk, is_obj ? CKPT_DB_OBJ : CKPT_DB_CONT, rec->mv_data,
                             rec->mv_size) == 0 && rk->name != NULL;
    return 0;
}

/* Put a name-index entry ikey -> id (its record's name: name). For hashed
 * (long) names, an entry that names another id whose record carries a
 * different name is a hash collision: refuse rather than overwrite it. */
static int put_index(ckpt_store *st, MDB_txn *txn, int is_obj, const uint8_t *ikey, size_t ilen,
                     const uint8_t id8[8], const struct ckpt_rec_keys *name)
{
    MDB_dbi dbi = st->dbi[is_obj ? CKPT_DB_OBJ_NAME : CKPT_DB_CONT_NAME];
    MDB_val k = {ilen, (void *)ikey}, v = {8, (void *)id8};
    int hashed = 0;
    int rc = ckpt_put_rec(st, txn, dbi, &k, &v, MDB_NOOVERWRITE);
    if (rc != MDB_KEYEXIST)
        return rc;
    ckpt_key_name_len(ikey, ilen, &hashed);
    if (hashed && v.mv_size >= 8 && memcmp(v.mv_data, id8, 8) != 0) {
        uint8_t other[8];
        struct ckpt_rec_keys ok;
        int have;
        memcpy(other, v.mv_data, 8);
        if ((rc = stored_keys(&have, &ok, st, txn, is_obj, other, NULL)) != 0)
            return rc;
        if (have && (ok.nlen != name->nlen || memcmp(ok.name, name->name, ok.nlen) != 0))
            return -1; /* collision, reported by the caller */
    }
    v.mv_size = 8;
    v.mv_data = (void *)id8;
    return ckpt_put_sealed(st, txn, dbi, &k, &v, 0);
}

/* Put an object or container record with the keys it was staged with
 * (aux: ckpt_keys_encode's bytes); drop the old record's name-index entry
 * if its name changed; then index the new name. */
static int put_named(ckpt_store *st, MDB_txn *txn, int is_obj, const uint8_t *k,
                     const uint8_t *a, size_t alen, const uint8_t *v, size_t vlen)
{
    MDB_dbi dbi = st->dbi[is_obj ? CKPT_DB_OBJ : CKPT_DB_CONT];
    MDB_dbi idbi = st->dbi[is_obj ? CKPT_DB_OBJ_NAME : CKPT_DB_CONT_NAME];
    MDB_val key = {8, (void *)k}, val = {vlen, (void *)v};
    const int kdb = is_obj ? CKPT_DB_OBJ_KEYS : CKPT_DB_CONT_KEYS;
    uint8_t ik[CKPT_NAMEKEY_MAX + 4], old[CKPT_NAMEKEY_MAX + 4];
    struct ckpt_rec_keys nk, ok;
    size_t in, on = 0;
    int have = 0;
    if (ckpt_keys_decode(&nk, kdb, a, alen) != 0 ||
        (in = ckpt_keys_index_key(ik, is_obj, &nk)) == 0)
        return EINVAL; /* stage.c encoded them: a damaged batch */
    int rc = ckpt_put_rec(st, txn, dbi, &key, &val, MDB_NOOVERWRITE);
    if (rc == MDB_KEYEXIST) {
        MDB_val orec = val;
        unseal(st, &orec);
        if ((rc = stored_keys(&have, &ok, st, txn, is_obj, k, &orec)) != 0)
            return rc;
        if (have)
            on = ckpt_keys_index_key(old, is_obj, &ok);
        if (on > 0 && (on != in || memcmp(old, ik, on) != 0) &&
            (rc = del_index_if(st, txn, idbi, old, on, k)) != 0)
            return rc;
        val.mv_size = vlen;
        val.mv_data = (void *)v;
        rc = ckpt_put_sealed(st, txn, dbi, &key, &val, 0);
    }
    if (rc)
        return rc;
    if (st->keys) {
        MDB_val kv = {alen, (void *)a};
        if ((rc = ckpt_put_rec(st, txn, st->dbi[kdb], &key, &kv, 0)) != 0)
            return rc;
    }
    return put_index(st, txn, is_obj, ik, in, k, &nk);
}

static int del_named(ckpt_store *st, MDB_txn *txn, int is_obj, const uint8_t *k)
{
    MDB_dbi dbi = st->dbi[is_obj ? CKPT_DB_OBJ : CKPT_DB_CONT];
    const int kdb = is_obj ? CKPT_DB_OBJ_KEYS : CKPT_DB_CONT_KEYS;
    struct ckpt_rec_keys rk;
    int have, rc = stored_keys(&have, &rk, st, txn, is_obj, k, NULL);
    if (rc)
        return rc;
    if (have) {
        uint8_t ik[CKPT_NAMEKEY_MAX + 4], mk[16];
        size_t n = ckpt_keys_index_key(ik, is_obj, &rk);
        if (n > 0 &&
            (rc = del_index_if(st, txn, st->dbi[is_obj ? CKPT_DB_OBJ_NAME : CKPT_DB_CONT_NAME], ik,
                               n, k)) != 0)
            return rc;
        if (is_obj && rk.cont_id != 0) {
            ckpt_key_u64(mk, rk.cont_id);
            memcpy(mk + 8, k, 8);
            if ((rc = ckpt_del_quiet(txn, st->dbi[CKPT_DB_CONT_OBJ], mk, 16)) != 0)
                return rc;
        }
    }
    if (st->keys && (rc = ckpt_del_quiet(txn, st->dbi[kdb], k, 8)) != 0)
        return rc;
    if ((rc = ckpt_del_quiet(txn, dbi, k, 8)) != 0)
        return rc;
    if ((rc = del_prefix(st, txn, CKPT_DB_KVTAG, k, 8)) != 0)
        return rc;
    return del_prefix(st, txn, is_obj ? CKPT_DB_REGION : CKPT_DB_CONT_OBJ, k, 8);
}

int ckpt_apply_op(ckpt_store *st, MDB_txn *txn, const struct op_hdr *h, const uint8_t *k,
                  const uint8_t *a, const uint8_t *v)
{
    uint8_t ik[CKPT_NAMEKEY_MAX + 8];
    int rc;
    switch (h->kind) {
    case OP_PUT:
        if (h->db == CKPT_DB_TAG_INDEX)
            return ckpt_tagidx_log(st, TAGIDX_OP_PUT, k, h->klen);
        return put_app(st, txn, st->dbi[h->db], k, h->klen, v, h->vlen);
    case OP_DEL:
        if (h->db == CKPT_DB_TAG_INDEX)
            return ckpt_tagidx_log(st, TAGIDX_OP_DEL, k, h->klen);
        return ckpt_del_quiet(txn, st->dbi[h->db], k, h->klen);
    case OP_PUT_OBJ:
        return put_named(st, txn, 1, k, a, h->alen, v, h->vlen);
    case OP_DEL_OBJ:
        return del_named(st, txn, 1, k);
    case OP_PUT_CONT:
        return put_named(st, txn, 0, k, a, h->alen, v, h->vlen);
    case OP_DEL_CONT:
        return del_named(st, txn, 0, k);
    case OP_PUT_KVTAG:
        if ((rc = put_app(st, txn, st->dbi[CKPT_DB_KVTAG], k, h->klen, v, h->vlen)) != 0)
            return rc;
        return ckpt_tagidx_log(st, TAGIDX_OP_PUT, ik, tagidx_key(ik, k, h->klen));
    case OP_DEL_KVTAG:
        if ((rc = ckpt_del_quiet(txn, st->dbi[CKPT_DB_KVTAG], k, h->klen)) != 0)
            return rc;
        return ckpt_tagidx_log(st, TAGIDX_OP_DEL, ik, tagidx_key(ik, k, h->klen));
    default:
        return EINVAL;
    }
}

size_t ckpt_op_size(const struct op_hdr *h)
{
    return (sizeof *h + h->klen + h->alen + h->vlen + 7) & ~(size_t)7;
}

struct run_ent {
    const struct op_hdr *h;
    size_t seq;
};

static int run_cmp(const void *pa, const void *pb)
{
    const struct run_ent *a = pa, *b = pb;
    size_t n = a->h->klen < b->h->klen ? a->h->klen : b->h->klen;
    int c = memcmp(a->h + 1, b->h + 1, n);
    if (c == 0)
        c = a->h->klen < b->h->klen ? -1 : a->h->klen > b->h->klen;
    if (c == 0)
        c = a->seq < b->seq ? -1 : 1; /* equal keys keep their order: the last put wins */
    return c;
}

/* Sort a run by key, stable (keysort.c; qsort when there is no memory for
 * it); equal keys keep their order in the log. */
static void sort_run(struct run_ent *run, size_t n)
{
    struct ckpt_skey *s = malloc(2 * n * sizeof *s);
    if (s == NULL) {
        qsort(run, n, sizeof *run, run_cmp);
        return;
    }
    for (size_t i = 0; i < n; i++)
        ckpt_skey_set(&s[i], (const uint8_t *)(run[i].h + 1), run[i].h->klen, i);
    ckpt_skey_sort(s, s + n, n);
    for (size_t i = 0; i < n; i++) {
        run[i].h = (const struct op_hdr *)s[i].key - 1;
        run[i].seq = s[i].idx;
    }
    free(s);
}

/* Apply the run of consecutive kvtag puts starting at st->batch.log + *off (at
 * most `left` ops) in key order. Puts of distinct keys commute and puts of
 * one key keep their order, so the result is the same as in log order; but
 * a server adds an object's tags in its own order ("tag0", "tag1", "tag10",
 * ...), and sorted they append to the kvtag database (full pages, see
 * ckpt_put_append). Advances *off and *done past the run. */
int ckpt_apply_kvtag_run(ckpt_store *st, MDB_txn *txn, size_t *off, size_t *done, size_t left)
{
    size_t n = 0, o = *off;
    while (n < left && ((const struct op_hdr *)(st->batch.log + o))->kind == OP_PUT_KVTAG) {
        const struct op_hdr *h = (const struct op_hdr *)(st->batch.log + o);
        if (n == st->batch.run_cap) {
            size_t ncap = st->batch.run_cap ? 2 * st->batch.run_cap : 256;
            struct run_ent *nr = realloc(st->batch.run, ncap * sizeof *nr);
            if (nr == NULL)
                break; /* apply what was gathered, sorted; the rest comes next */
            st->batch.run = nr;
            st->batch.run_cap = ncap;
        }
        st->batch.run[n].h = h;
        st->batch.run[n].seq = n;
        n++;
        o += ckpt_op_size(h);
    }
    if (n == 0) { /* no memory for even one entry: apply it unsorted */
        const struct op_hdr *h = (const struct op_hdr *)(st->batch.log + o);
        const uint8_t *k = (const uint8_t *)(h + 1);
        *off = o + ckpt_op_size(h);
        (*done)++;
        return ckpt_apply_op(st, txn, h, k, k + h->klen, k + h->klen + h->alen);
    }
    if (n > 1)
        sort_run(st->batch.run, n);
    for (size_t i = 0; i < n; i++) {
        const struct op_hdr *h = st->batch.run[i].h;
        const uint8_t *k = (const uint8_t *)(h + 1);
        int rc = put_app(st, txn, st->dbi[CKPT_DB_KVTAG], k, h->klen, k + h->klen + h->alen,
                         h->vlen);
        if (rc)
            return rc;
    }
    /* Then their tag-index entries, to the delta (tagidx.c; the merge
     * puts them in the index's order). A writer always has the delta: its
     * open creates it. */
    uint8_t ik[CKPT_NAMEKEY_MAX + 8];
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct op_hdr *h = st->batch.run[i].h;
        rc = ckpt_tagidx_log(st, TAGIDX_OP_PUT, ik, tagidx_key(ik, (const uint8_t *)(h + 1), h->klen));
    }
    if (rc)
        return rc;
    *off = o;
    *done += n;
    return 0;
}
