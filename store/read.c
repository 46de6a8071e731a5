/*
 * read.c - read transactions and lookups. Everything returned points into
 * LMDB's map and is valid until ckpt_rtxn_end() of its transaction.
 *
 * Damaged pages (guard.c): every LMDB call here runs under a guard. After
 * a fault the read transaction is abandoned where LMDB was: no further
 * LMDB call is made in it except mdb_txn_abort() at ckpt_rtxn_end(), which
 * for a read-only transaction only releases its reader slot (MDB_NOTLS:
 * the slot belongs to the transaction) and frees it; a cursor of a
 * read-only transaction is not linked into it and is only freed. The store
 * is marked failed, so nothing reads the damaged map through this handle
 * again. Every key and value handed out is checked to lie inside the
 * committed part of the map, so a damaged node cannot make the caller
 * fault either.
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

int ckpt_rtxn_begin(ckpt_rtxn **out, ckpt_store *st)
{
    ckpt_rtxn *tx;
    struct ckpt_guard g;
    volatile int locked = 0, begun = 0;
    MDB_envinfo ei;
    int rc;
    if (out == NULL || st == NULL)
        return CKPT_E_INVAL;
    *out = NULL;
    if ((rc = ckpt_store_check_failed(st)) != 0)
        return rc;
    ckpt_bg_ensure(st); /* a writer's first read: its thread merges what reads overlay */
    if ((tx = malloc(sizeof *tx)) == NULL)
        return CKPT_E_NOMEM;
    tx->st = st;
    tx->view = NULL;
    tx->view_built = 0;
    tx->damage_cb = NULL;
    tx->damage_arg = NULL;
    tx->damage_what[0] = 0;
    ckpt_guard_push(&g);
    if (sigsetjmp(g.jb, 0) != 0) {
        /* a transaction begun is ended (read-only: that only releases its
         * reader slot); one LMDB was beginning is left to mdb_env_close */
        ckpt_guard_pop(&g);
        if (begun)
            mdb_txn_abort(tx->txn);
        if (locked)
            pthread_rwlock_unlock(&st->grow);
        free(tx);
        return ckpt_store_faulted(st, &g, "beginning a read transaction");
    }
    for (int tries = 0;; tries++) {
        pthread_rwlock_rdlock(&st->grow);
        locked = 1;
        rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &tx->txn);
        begun = rc == 0;
        if (rc != MDB_MAP_RESIZED || tries > 3)
            break;
        /* another process grew the map: adopt its size, with no
         * transaction of ours active */
        pthread_rwlock_unlock(&st->grow);
        pthread_rwlock_wrlock(&st->grow);
        mdb_env_set_mapsize(st->env, 0);
        st->map_base = NULL; /* remapped */
        pthread_rwlock_unlock(&st->grow);
        locked = 0;
    }
    tx->map_lo = tx->map_hi = NULL;
    if (rc == 0 && mdb_env_info(st->env, &ei) == 0) {
        /* the newest commit's last page bounds this transaction's pages */
        size_t used = ((size_t)ei.me_last_pgno + 1) * st->psize;
        const char *base = ckpt_map_base(st, tx->txn, st->dbi[CKPT_DB_META], ei.me_last_pgno);
        if (base != NULL) {
            tx->map_lo = base;
            tx->map_hi = base + (used < ei.me_mapsize ? used : ei.me_mapsize);
        }
    }
    ckpt_guard_pop(&g);
    if (rc) {
        pthread_rwlock_unlock(&st->grow);
        free(tx);
        return ckpt_seterr(st, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cannot begin a read transaction",
                           st->path);
    }
    *out = tx;
    return 0;
}

/* An LMDB error of a read: "<rank>/data.mdb: <what> <db>" with LMDB's text.
 * MDB_BAD_TXN in a read transaction only follows an earlier failure in the
 * same transaction (LMDB marks the transaction failed when a read hits a
 * damaged page), so it is reported as damage, not as an LMDB misuse. */
static int read_failed(ckpt_rtxn *tx, int rc, const char *what, int db)
{
    if (rc == MDB_BAD_TXN)
        return ckpt_seterr(tx->st, CKPT_E_CORRUPT, rc,
                           "%s/data.mdb: %s %s: damaged (an earlier read in this transaction hit a "
                           "damaged page)",
                           tx->st->path, what, ckpt_db_name(db));
    return ckpt_seterr(tx->st, ckpt_map_lmdb(rc), rc, "%s/data.mdb: %s %s", tx->st->path, what,
                       ckpt_db_name(db));
}

/* A database this reader's store was written without (schema.c): it
 * reads as empty. */
static int absent(const ckpt_rtxn *tx, int db)
{
    return (tx->st->absent >> db) & 1u;
}

static int outside_map(ckpt_rtxn *tx, int db, const char *what, const MDB_val *v)
{
    return ckpt_seterr(tx->st, CKPT_E_CORRUPT, 0, "%s/data.mdb: reading %s: a %s of %zu bytes that "
                       "lies outside the file's committed pages: a page of the database is damaged",
                       tx->st->path, ckpt_db_name(db), what, v->mv_size);
}

/* ---- format 4's checksums (csum.h) ---- */

/* unseal's error, apart: the check of every record read stays a few
 * instructions around the CRC */
__attribute__((noinline, cold)) static int unseal_failed(ckpt_rtxn *tx, int db, const MDB_val *k,
                                                         const MDB_val *v)
{
    uint32_t s, c;
    ckpt_csum_check(k->mv_data, k->mv_size, v->mv_data, v->mv_size, &s, &c);
    return ckpt_csum_error(tx->st, ckpt_db_name(db), k->mv_data, k->mv_size, v->mv_size, s, c,
                           tx->damage_what, sizeof tx->damage_what);
}

/* A value LMDB returned: check and strip its checksum. 0, or
 * CKPT_E_CORRUPT with the message set. */
static inline int unseal(ckpt_rtxn *tx, int db, const MDB_val *k, MDB_val *v)
{
    if (!ckpt_csum_holds(k->mv_data, k->mv_size, v->mv_data, v->mv_size))
        return unseal_failed(tx, db, k, v);
    v->mv_size -= CKPT_CSUM_LEN;
    return 0;
}

void ckpt_rtxn_on_damage(ckpt_rtxn *tx, ckpt_damage_cb cb, void *arg)
{
    if (tx == NULL)
        return;
    tx->damage_cb = cb;
    tx->damage_arg = arg;
}

int ckpt_store_has_checksums(const ckpt_store *st)
{
    return st != NULL && st->csum;
}

static int lookup(ckpt_val *val, ckpt_rtxn *tx, int db, const void *key, size_t klen);

/* Format 4's tag index has no checksum of its own: an entry namekey .
 * owner must be backed by the kvtag record owner . namekey it is derived
 * from (whose checksum the lookup checks). 0, or CKPT_E_CORRUPT. */
static int tagidx_backed(ckpt_rtxn *tx, const uint8_t *lkey, size_t klen)
{
    uint8_t kk[CKPT_NAMEKEY_MAX + 8];
    ckpt_val x;
    char kt[200];
    if (klen <= 8 || klen > sizeof kk)
        return 0; /* malformed: the callers say so */
    memcpy(kk, lkey + klen - 8, 8);
    memcpy(kk + 8, lkey, klen - 8);
    int rc = lookup(&x, tx, CKPT_DB_KVTAG, kk, klen);
    if (rc != CKPT_E_NOTFOUND)
        return rc;
    ckpt_key_text(kt, sizeof kt, lkey, klen);
    snprintf(tx->damage_what, sizeof tx->damage_what, "points nowhere: owner %llu has no such "
             "kvtag", (unsigned long long)ckpt_key_get_u64(lkey + klen - 8));
    return ckpt_seterr(tx->st, CKPT_E_CORRUPT, 0, "%s/data.mdb: rank %d, database kvtag_name, key "
                       "%s: %s: the index entry is damaged and is not returned", tx->st->path,
                       tx->st->opts.rank, kt, tx->damage_what);
}

void ckpt_rtxn_end(ckpt_rtxn *tx)
{
    if (tx == NULL)
        return;
    mdb_txn_abort(tx->txn);
    pthread_rwlock_unlock(&tx->st->grow);
    ckpt_tagidx_view_free(tx->view);
    free(tx);
}

static int lookup(ckpt_val *val, ckpt_rtxn *tx, int db, const void *key, size_t klen)
{
    MDB_val k = {klen, (void *)key}, v;
    MDB_cursor *volatile cur = NULL;
    struct ckpt_guard g;
    char where[64], why[160];
    int rc;
    ckpt_guard_push(&g);
    if (sigsetjmp(g.jb, 0) != 0) {
        ckpt_guard_pop(&g);
        if (cur != NULL)
            mdb_cursor_close(cur); /* a read-only txn's cursor: only freed */
        snprintf(where, sizeof where, "reading %s", ckpt_db_name(db));
        return ckpt_store_faulted(tx->st, &g, where);
    }
    if (absent(tx, db)) {
        ckpt_guard_pop(&g);
        return CKPT_E_NOTFOUND;
    }
    if (db == CKPT_DB_TAG_INDEX) {
        /* logical key namekey . owner (tagidx.c); its value is always empty */
        rc = ckpt_tagidx_get(tx, &cur, key, klen);
        v.mv_size = 0;
        v.mv_data = "";
    } else {
        MDB_cursor *c;
        rc = mdb_get(tx->txn, tx->st->dbi[db], &k, &v);
        if (rc == MDB_NOTFOUND && (rc = mdb_cursor_open(tx->txn, tx->st->dbi[db], &c)) == 0) {
            cur = c; /* closed below, after a fault too */
            rc = ckpt_rtxn_absent_checked(tx, c, &k, why, sizeof why);
        }
    }
    ckpt_guard_pop(&g);
    if (cur != NULL)
        mdb_cursor_close(cur);
    if (rc == CKPT_TAGIDX_REPORTED)
        return CKPT_E_CORRUPT;
    if (rc == CKPT_LOOKUP_DAMAGED)
        return ckpt_rtxn_missed(tx, db, "a lookup", why);
    if (rc == 0 && !ckpt_rtxn_in_map(tx, &v))
        return outside_map(tx, db, "value", &v);
    if (rc == MDB_NOTFOUND)
        return CKPT_E_NOTFOUND;
    if (rc)
        return read_failed(tx, rc, "reading", db);
    if (tx->st->csum) {
        if (db != CKPT_DB_TAG_INDEX && (rc = unseal(tx, db, &k, &v)) != 0)
            return rc;
        if (db == CKPT_DB_TAG_INDEX && (rc = tagidx_backed(tx, key, klen)) != 0)
            return rc;
    }
    val->data = v.mv_data;
    val->len = v.mv_size;
    return 0;
}

int ckpt_get_raw(ckpt_val *val, ckpt_rtxn *tx, int db, const void *key, size_t klen)
{
    if (val == NULL || tx == NULL || db < 0 || db >= CKPT_DB_COUNT || key == NULL || klen == 0 ||
        klen > 511)
        return CKPT_E_INVAL;
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

/* For hashed (long) names, the record must carry exactly the asked name:
 * 0 if it does, CKPT_E_NOTFOUND if it names another, CKPT_E_INVAL when the
 * store has no keys function to read the record's name with. */
static int name_matches(ckpt_rtxn *tx, int db, const ckpt_val *rec, const char *name, size_t nlen)
{
    struct ckpt_rec_keys k;
    int rc = ckpt_stored_keys(tx->st, &k, db, rec->data, rec->len);
    if (rc == CKPT_E_INVAL && tx->st->opts.rec_keys == NULL)
        return ckpt_seterr(tx->st, CKPT_E_INVAL, 0, "%s: lookup of a %zu-byte name: a name this "
                           "long is stored hashed, and the store was opened without a record-keys "
                           "function (ckpt_store_opts.rec_keys) to check the record's name",
                           tx->st->path, nlen);
    return rc == 0 && k.name != NULL && k.nlen == nlen && memcmp(k.name, name, nlen) == 0
               ? 0 : CKPT_E_NOTFOUND;
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
    if (hashed && tx->st->keys) {
        /* format 5: the name the record was put with, from obj_keys/cont_keys */
        ckpt_val kv;
        struct ckpt_rec_keys rk;
        const int kdb = is_obj ? CKPT_DB_OBJ_KEYS : CKPT_DB_CONT_KEYS;
        if ((rc = lookup(&kv, tx, kdb, v.data, 8)) != 0 ||
            ckpt_keys_decode(&rk, kdb, kv.data, kv.len) != 0 || rk.nlen != nlen ||
            memcmp(rk.name, name, nlen) != 0)
            return rc == CKPT_E_NOTFOUND || rc == 0 ? CKPT_E_NOTFOUND : rc;
    } else if (hashed &&
               (rc = name_matches(tx, is_obj ? CKPT_DB_OBJ : CKPT_DB_CONT, &r, name, nlen)) != 0) {
        return rc;
    }
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
    if (hashed)
        return name_matches(tx, CKPT_DB_KVTAG, rec, name, nlen);
    return 0;
}

/* Format 4's iteration of the tag index: each entry in increasing key
 * order and backed by its kvtag (tagidx_backed), or it is damaged. */
struct tagged_check {
    ckpt_rtxn *tx;
    ckpt_iter_cb cb;
    void *payload;
    uint8_t prev[CKPT_NAMEKEY_MAX + 8];
    size_t prev_len;
};

static int tagged_cb(const ckpt_val *key, const ckpt_val *val, void *p)
{
    struct tagged_check *t = p;
    ckpt_rtxn *tx = t->tx;
    int rc = 0;
    if (t->prev_len > 0) {
        size_t n = key->len < t->prev_len ? key->len : t->prev_len;
        int c = memcmp(key->data, t->prev, n);
        if (c < 0 || (c == 0 && key->len <= t->prev_len)) {
            char kt[200];
            ckpt_key_text(kt, sizeof kt, key->data, key->len);
            snprintf(tx->damage_what, sizeof tx->damage_what, "out of order after the entry "
                     "before it: the index is damaged");
            rc = ckpt_seterr(tx->st, CKPT_E_CORRUPT, 0, "%s/data.mdb: rank %d, database "
                             "kvtag_name, key %s: out of order after the entry before it: the "
                             "index is damaged", tx->st->path, tx->st->opts.rank, kt);
        }
    }
    if (key->len <= sizeof t->prev) {
        memcpy(t->prev, key->data, key->len);
        t->prev_len = key->len;
    }
    if (rc == 0)
        rc = tagidx_backed(tx, key->data, key->len);
    if (rc == 0)
        return t->cb(key, val, t->payload);
    if (rc != CKPT_E_CORRUPT || tx->damage_cb == NULL)
        return rc;
    tx->damage_cb(CKPT_DB_TAG_INDEX, key, tx->damage_what, tx->damage_arg);
    return 0;
}

int ckpt_iter(ckpt_rtxn *tx, int db, const void *prefix, size_t plen, ckpt_iter_cb cb,
              void *payload)
{
    MDB_cursor *volatile cur = NULL;
    MDB_val k, v;
    struct ckpt_guard g;
    int rc;
    if (tx == NULL || cb == NULL || db < 0 || db >= CKPT_DB_COUNT || (plen > 0 && prefix == NULL) ||
        plen > 511)
        return CKPT_E_INVAL;
    if (absent(tx, db))
        return 0; /* nothing to visit */
    /* one recovery point for the LMDB calls; the callback runs outside it */
    ckpt_guard_push(&g);
    if (sigsetjmp(g.jb, 0) != 0) {
        char where[64];
        ckpt_guard_pop(&g);
        if (cur != NULL)
            mdb_cursor_close(cur); /* a read-only txn's cursor: only freed */
        snprintf(where, sizeof where, "iterating %s", ckpt_db_name(db));
        return ckpt_store_faulted(tx->st, &g, where);
    }
    MDB_cursor *c;
    MDB_stat ms;
    /* mdb_stat first: it reads the database's root record (when the
     * transaction has not yet) with a cursor on the stack, so a damaged
     * page faults there and not inside mdb_cursor_open, which would leak
     * the cursor it allocated */
    if ((rc = mdb_stat(tx->txn, tx->st->dbi[db], &ms)) != 0 ||
        (rc = mdb_cursor_open(tx->txn, tx->st->dbi[db], &c)) != 0) {
        ckpt_guard_pop(&g);
        return read_failed(tx, rc, "cursor on", db);
    }
    cur = c;
    if (db == CKPT_DB_TAG_INDEX) {
        /* its own layout (tagidx.c), under the same recovery point;
         * format 4: every entry checked against its kvtag (tagged_cb) */
        int cb_rc;
        struct tagged_check tc = {tx, cb, payload, {0}, 0};
        if (tx->st->csum)
            rc = ckpt_tagidx_iter(tx, cur, &g, prefix, plen, tagged_cb, &tc, &cb_rc);
        else
            rc = ckpt_tagidx_iter(tx, cur, &g, prefix, plen, cb, payload, &cb_rc);
        ckpt_guard_pop(&g);
        mdb_cursor_close(cur);
        if (rc == 0)
            return cb_rc;
        if (rc == CKPT_TAGIDX_REPORTED)
            return CKPT_E_CORRUPT;
        return read_failed(tx, rc, "iterating", db);
    }
    k.mv_size = plen;
    k.mv_data = (void *)prefix;
    rc = mdb_cursor_get(cur, &k, &v, plen ? MDB_SET_RANGE : MDB_FIRST);
    if (plen > 0 &&
        (rc == MDB_NOTFOUND || (rc == 0 && ckpt_rtxn_in_map(tx, &k) &&
                                (k.mv_size < plen || memcmp(k.mv_data, prefix, plen) != 0)))) {
        /* no key with the prefix: believed only if the search's leaf is sound */
        char why[160];
        MDB_val pk = {plen, (void *)prefix};
        rc = ckpt_rtxn_absent_checked(tx, cur, &pk, why, sizeof why);
        ckpt_guard_pop(&g);
        mdb_cursor_close(cur);
        if (rc == CKPT_LOOKUP_DAMAGED)
            return ckpt_rtxn_missed(tx, db, "a scan", why);
        if (rc != 0 && rc != MDB_NOTFOUND)
            return read_failed(tx, rc, "iterating", db);
        return 0;
    }
    while (rc == 0) {
        /* plen 0: prefix may be NULL, which memcmp must not get */
        if (!ckpt_rtxn_in_map(tx, &k) || !ckpt_rtxn_in_map(tx, &v)) {
            ckpt_guard_pop(&g);
            mdb_cursor_close(cur);
            int kin = ckpt_rtxn_in_map(tx, &k);
            return outside_map(tx, db, kin ? "value" : "key", kin ? &v : &k);
        }
        if (plen > 0 && (k.mv_size < plen || memcmp(k.mv_data, prefix, plen) != 0))
            break;
        ckpt_guard_pop(&g);
        int r = 0;
        if (tx->st->csum && (r = unseal(tx, db, &k, &v)) != 0 && tx->damage_cb != NULL) {
            /* skip-and-report: the record is left out, and said so */
            ckpt_val ck = {k.mv_size, k.mv_data};
            tx->damage_cb(db, &ck, tx->damage_what, tx->damage_arg);
            r = 0;
        } else if (r == 0) {
            ckpt_val ck = {k.mv_size, k.mv_data}, cv = {v.mv_size, v.mv_data};
            r = cb(&ck, &cv, payload);
        }
        if (r != 0) {
            mdb_cursor_close(cur);
            return r;
        }
        ckpt_guard_push(&g); /* the recovery point above is still live */
        rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    ckpt_guard_pop(&g);
    mdb_cursor_close(cur);
    if (rc != 0 && rc != MDB_NOTFOUND)
        return read_failed(tx, rc, "iterating", db);
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

/* The tag index (format 3): its logical entries, delta included, and the
 * pages of kvtag_name and of its delta. */
int ckpt_db_stat(uint64_t *entries, uint64_t *bytes, ckpt_rtxn *tx, int db)
{
    MDB_stat ms, ds = {0};
    MDB_cursor *volatile cur = NULL;
    struct ckpt_guard g;
    uint64_t n;
    if (tx == NULL || db < 0 || db >= CKPT_DB_COUNT)
        return CKPT_E_INVAL;
    if (absent(tx, db)) {
        if (entries)
            *entries = 0;
        if (bytes)
            *bytes = 0;
        return 0;
    }
    ckpt_guard_push(&g);
    if (sigsetjmp(g.jb, 0) != 0) {
        char where[64];
        ckpt_guard_pop(&g);
        if (cur != NULL)
            mdb_cursor_close(cur); /* a read-only txn's cursor: only freed */
        snprintf(where, sizeof where, "stat of %s", ckpt_db_name(db));
        return ckpt_store_faulted(tx->st, &g, where);
    }
    int rc = mdb_stat(tx->txn, tx->st->dbi[db], &ms);
    n = ms.ms_entries;
    if (rc == 0 && db == CKPT_DB_TAG_INDEX && tx->st->delta.on &&
        (rc = mdb_stat(tx->txn, tx->st->delta.dbi, &ds)) == 0)
        rc = ckpt_tagidx_count(tx, &cur, ms.ms_entries, &n);
    ckpt_guard_pop(&g);
    if (cur != NULL)
        mdb_cursor_close(cur);
    if (rc == CKPT_TAGIDX_REPORTED)
        return CKPT_E_CORRUPT;
    if (rc)
        return read_failed(tx, rc, "stat of", db);
    if (entries)
        *entries = n;
    if (bytes)
        *bytes = (uint64_t)(ms.ms_branch_pages + ms.ms_leaf_pages + ms.ms_overflow_pages +
                            ds.ms_branch_pages + ds.ms_leaf_pages + ds.ms_overflow_pages) *
                 ms.ms_psize;
    return 0;
}
