/*
 * read.c - read transactions and lookups. Everything returned points into
 * LMDB's map and is valid until ckpt_rtxn_end() of its transaction.
 */
#include <stdlib.h>
#include <string.h>

#include "bulki.h"
#include "store_int.h"

int ckpt_rtxn_begin(ckpt_rtxn **out, ckpt_store *st)
{
    ckpt_rtxn *tx;
    int rc;
    if (out == NULL || st == NULL)
        return CKPT_E_INVAL;
    *out = NULL;
    if ((tx = malloc(sizeof *tx)) == NULL)
        return CKPT_E_NOMEM;
    tx->st = st;
    for (int tries = 0;; tries++) {
        pthread_rwlock_rdlock(&st->grow);
        rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &tx->txn);
        if (rc != MDB_MAP_RESIZED || tries > 3)
            break;
        /* another process grew the map: adopt its size, with no
         * transaction of ours active */
        pthread_rwlock_unlock(&st->grow);
        pthread_rwlock_wrlock(&st->grow);
        mdb_env_set_mapsize(st->env, 0);
        pthread_rwlock_unlock(&st->grow);
    }
    if (rc) {
        pthread_rwlock_unlock(&st->grow);
        free(tx);
        return ckpt_seterr(st, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cannot begin a read transaction",
                           st->path);
    }
    *out = tx;
    return 0;
}

void ckpt_rtxn_end(ckpt_rtxn *tx)
{
    if (tx == NULL)
        return;
    mdb_txn_abort(tx->txn);
    pthread_rwlock_unlock(&tx->st->grow);
    free(tx);
}

static int lookup(ckpt_val *val, ckpt_rtxn *tx, int db, const void *key, size_t klen)
{
    MDB_val k = {klen, (void *)key}, v;
    int rc = mdb_get(tx->txn, tx->st->dbi[db], &k, &v);
    if (rc == MDB_NOTFOUND)
        return CKPT_E_NOTFOUND;
    if (rc)
        return ckpt_seterr(tx->st, ckpt_map_lmdb(rc), rc, "%s/data.mdb: reading %s", tx->st->path,
                           ckpt_db_name(db));
    val->data = v.mv_data;
    val->len = v.mv_size;
    return 0;
}

int ckpt_get_raw(ckpt_val *val, ckpt_rtxn *tx, int db, const void *key, size_t klen)
{
    if (val == NULL || tx == NULL || db < 0 || db >= CKPT_DB_COUNT || key == NULL || klen == 0 ||
        klen > 511)
        return CKPT_E_INVAL;
    if (db == CKPT_DB_TAG_INDEX) {
        /* logical key namekey . owner; its value is always empty */
        int rc = ckpt_tagidx_get(tx->st, tx->txn, key, klen);
        if (rc == MDB_NOTFOUND)
            return CKPT_E_NOTFOUND;
        if (rc)
            return ckpt_seterr(tx->st, ckpt_map_lmdb(rc), rc, "%s/data.mdb: reading kvtag_name",
                               tx->st->path);
        val->data = "";
        val->len = 0;
        return 0;
    }
    return lookup(val, tx, db, key, klen);
}

static int get_by_id(ckpt_val *rec, ckpt_rtxn *tx, int db, uint64_t id)
{
    uint8_t k[8];
    if (rec == NULL || tx == NULL)
        return CKPT_E_INVAL;
    ckpt_key_u64(k, id);
    return lookup(rec, tx, db, k, 8);
}

int ckpt_get_obj(ckpt_val *rec, ckpt_rtxn *tx, uint64_t id)
{
    return get_by_id(rec, tx, CKPT_DB_OBJ, id);
}

int ckpt_get_cont(ckpt_val *rec, ckpt_rtxn *tx, uint64_t id)
{
    return get_by_id(rec, tx, CKPT_DB_CONT, id);
}

/* A lookup by a name longer than any stored one: say so, as staging does. */
static int name_too_long(ckpt_rtxn *tx, const char *what, size_t nlen)
{
    return ckpt_seterr(tx->st, CKPT_E_NAMETOOLONG, 0, "%s: %s name of %zu bytes is longer than the "
                       "limit of %u", tx->st->path, what, nlen, CKPT_NAME_MAX);
}

/* For hashed (long) names, the record must carry exactly the asked name. */
static int name_matches(int is_obj, const ckpt_val *rec, const char *name, size_t nlen)
{
    const char *n;
    size_t l;
    int32_t ts;
    uint64_t c;
    int rc = is_obj ? ckpt_rec_obj_name(&n, &l, &ts, &c, rec->data, rec->len)
                    : ckpt_rec_cont_name(&n, &l, rec->data, rec->len);
    return rc == 0 && l == nlen && memcmp(n, name, nlen) == 0;
}

static int get_by_name(uint64_t *id, ckpt_val *rec, ckpt_rtxn *tx, int is_obj, const char *name,
                       size_t nlen, int32_t ts)
{
    uint8_t k[CKPT_NAMEKEY_MAX + 4];
    ckpt_val v, r;
    size_t n;
    int rc, hashed = 0;
    if (tx == NULL || name == NULL)
        return CKPT_E_INVAL;
    if (nlen > CKPT_NAME_MAX)
        return name_too_long(tx, is_obj ? "object" : "container", nlen);
    if ((n = ckpt_key_name(k, name, nlen)) == 0)
        return CKPT_E_INVAL;
    ckpt_key_name_len(k, n, &hashed);
    if (is_obj) {
        ckpt_key_i32(k + n, ts);
        n += 4;
    }
    if ((rc = lookup(&v, tx, is_obj ? CKPT_DB_OBJ_NAME : CKPT_DB_CONT_NAME, k, n)) != 0)
        return rc;
    if (v.len != 8)
        return ckpt_seterr(tx->st, CKPT_E_CORRUPT, 0, "%s/data.mdb: %s entry of \"%.*s\" holds %zu "
                           "bytes, not an 8-byte id", tx->st->path, is_obj ? "obj_name" : "cont_name",
                           (int)(nlen > 64 ? 64 : nlen), name, v.len);
    uint64_t got = ckpt_key_get_u64(v.data);
    if ((rc = get_by_id(&r, tx, is_obj ? CKPT_DB_OBJ : CKPT_DB_CONT, got)) != 0)
        return rc;
    if (hashed && !name_matches(is_obj, &r, name, nlen))
        return CKPT_E_NOTFOUND;
    if (id)
        *id = got;
    if (rec)
        *rec = r;
    return 0;
}

int ckpt_get_obj_by_name(uint64_t *id, ckpt_val *rec, ckpt_rtxn *tx, const char *name, size_t nlen,
                         int32_t ts)
{
    return get_by_name(id, rec, tx, 1, name, nlen, ts);
}

int ckpt_get_cont_by_name(uint64_t *id, ckpt_val *rec, ckpt_rtxn *tx, const char *name, size_t nlen)
{
    return get_by_name(id, rec, tx, 0, name, nlen, 0);
}

int ckpt_get_kvtag(ckpt_val *rec, ckpt_rtxn *tx, uint64_t owner, const char *name, size_t nlen)
{
    uint8_t k[CKPT_NAMEKEY_MAX + 8];
    size_t n;
    int rc, hashed = 0;
    if (rec == NULL || tx == NULL || name == NULL)
        return CKPT_E_INVAL;
    if (nlen > CKPT_NAME_MAX)
        return name_too_long(tx, "kvtag", nlen);
    if ((n = ckpt_key_name(k + 8, name, nlen)) == 0)
        return CKPT_E_INVAL;
    ckpt_key_name_len(k + 8, n, &hashed);
    ckpt_key_u64(k, owner);
    if ((rc = lookup(rec, tx, CKPT_DB_KVTAG, k, n + 8)) != 0)
        return rc;
    if (hashed) {
        bulki_map m;
        bulki_ent e;
        const char *s;
        size_t l;
        if (bulki_decode_doc(&m, rec->data, rec->len, NULL) != 0 || bulki_map_get(&e, &m, "name") != 0 ||
            bulki_ent_str(&s, &l, &e) != 0 || l != nlen || memcmp(s, name, nlen) != 0)
            return CKPT_E_NOTFOUND;
    }
    return 0;
}

int ckpt_iter(ckpt_rtxn *tx, int db, const void *prefix, size_t plen, ckpt_iter_cb cb,
              void *payload)
{
    MDB_cursor *cur;
    MDB_val k, v;
    int rc;
    if (tx == NULL || cb == NULL || db < 0 || db >= CKPT_DB_COUNT || (plen > 0 && prefix == NULL) ||
        plen > 511)
        return CKPT_E_INVAL;
    if (db == CKPT_DB_TAG_INDEX) {
        int cb_rc;
        rc = ckpt_tagidx_iter(tx->st, tx->txn, prefix, plen, cb, payload, &cb_rc);
        if (rc == 0)
            return cb_rc;
        return ckpt_seterr(tx->st, ckpt_map_lmdb(rc), rc, "%s/data.mdb: iterating kvtag_name",
                           tx->st->path);
    }
    if ((rc = mdb_cursor_open(tx->txn, tx->st->dbi[db], &cur)) != 0)
        return ckpt_seterr(tx->st, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cursor on %s", tx->st->path,
                           ckpt_db_name(db));
    k.mv_size = plen;
    k.mv_data = (void *)prefix;
    rc = mdb_cursor_get(cur, &k, &v, plen ? MDB_SET_RANGE : MDB_FIRST);
    while (rc == 0) {
        /* plen 0: prefix may be NULL, which memcmp must not get */
        if (plen > 0 && (k.mv_size < plen || memcmp(k.mv_data, prefix, plen) != 0))
            break;
        ckpt_val ck = {k.mv_size, k.mv_data}, cv = {v.mv_size, v.mv_data};
        int r = cb(&ck, &cv, payload);
        if (r != 0) {
            mdb_cursor_close(cur);
            return r;
        }
        rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    mdb_cursor_close(cur);
    if (rc != 0 && rc != MDB_NOTFOUND)
        return ckpt_seterr(tx->st, ckpt_map_lmdb(rc), rc, "%s/data.mdb: iterating %s", tx->st->path,
                           ckpt_db_name(db));
    return 0;
}

static int iter_id(ckpt_rtxn *tx, int db, uint64_t id, ckpt_iter_cb cb, void *payload)
{
    uint8_t k[8];
    ckpt_key_u64(k, id);
    return ckpt_iter(tx, db, k, 8, cb, payload);
}

int ckpt_iter_kvtags(ckpt_rtxn *tx, uint64_t owner, ckpt_iter_cb cb, void *payload)
{
    return iter_id(tx, CKPT_DB_KVTAG, owner, cb, payload);
}

int ckpt_iter_regions(ckpt_rtxn *tx, uint64_t obj, ckpt_iter_cb cb, void *payload)
{
    return iter_id(tx, CKPT_DB_REGION, obj, cb, payload);
}

int ckpt_iter_members(ckpt_rtxn *tx, uint64_t cont, ckpt_iter_cb cb, void *payload)
{
    return iter_id(tx, CKPT_DB_CONT_OBJ, cont, cb, payload);
}

int ckpt_iter_tagged(ckpt_rtxn *tx, const char *name, size_t nlen, ckpt_iter_cb cb, void *payload)
{
    uint8_t k[CKPT_NAMEKEY_MAX];
    size_t n;
    if (tx == NULL || name == NULL)
        return CKPT_E_INVAL;
    if (nlen > CKPT_NAME_MAX)
        return name_too_long(tx, "kvtag", nlen);
    if ((n = ckpt_key_name(k, name, nlen)) == 0)
        return CKPT_E_INVAL;
    return ckpt_iter(tx, CKPT_DB_TAG_INDEX, k, n, cb, payload);
}

int ckpt_db_stat(ckpt_rtxn *tx, int db, uint64_t *entries, uint64_t *bytes)
{
    MDB_stat ms;
    if (tx == NULL || db < 0 || db >= CKPT_DB_COUNT)
        return CKPT_E_INVAL;
    int rc = mdb_stat(tx->txn, tx->st->dbi[db], &ms);
    if (rc)
        return ckpt_seterr(tx->st, ckpt_map_lmdb(rc), rc, "%s/data.mdb: stat of %s", tx->st->path,
                           ckpt_db_name(db));
    if (entries)
        *entries = ms.ms_entries;
    if (bytes)
        *bytes = (uint64_t)(ms.ms_branch_pages + ms.ms_leaf_pages + ms.ms_overflow_pages) * ms.ms_psize;
    return 0;
}
