/*
 * tagidx.c - the tag index ("kvtag_name"): which owners carry tag X.
 *
 * Its logical entries are format 1's keys, namekey . owner (8 bytes BE),
 * with empty values, and that is all the rest of the store, the tools and
 * the API see. Format 2 stores them as a DUPSORT|DUPFIXED database: one key
 * per tag name, its owners as sorted 8-byte duplicates, which LMDB packs
 * without a node header each (8 bytes an entry instead of about 24 plus
 * the name). Because name keys are prefix-free, namekey order then owner
 * order is exactly the logical keys' byte order, so iteration order is the
 * same in both layouts. A format 1 store opened read-only keeps its layout
 * and is read as it is (st->tagidx_dup == 0); a writer converts it at open
 * (ckpt_tagidx_migrate_v1, under the writer lock, in the open transaction).
 */
#include <errno.h>
#include <string.h>

#include "store_int.h"

static int split(const uint8_t *lkey, size_t klen, MDB_val *k, MDB_val *d)
{
    if (klen <= 8)
        return EINVAL;
    k->mv_size = klen - 8;
    k->mv_data = (void *)lkey;
    d->mv_size = 8;
    d->mv_data = (void *)(lkey + klen - 8);
    return 0;
}

/* Tag-index puts through one cursor, in any order; fastest in logical key
 * order (name key, then owner), as a commit's sorted kvtag runs give them.
 * Owners mostly arrive in ascending order: appending to the name's
 * duplicates (MDB_APPENDDUP) then fills their pages, where a plain insert
 * splits them in half. MDB_APPENDDUP is valid only above the name's last
 * duplicate, which is looked up once per name: while the same name comes
 * again, r remembers its largest owner (nothing else writes that name's
 * duplicates in between). */
int ckpt_tagidx_put_next(ckpt_store *st, MDB_txn *txn, struct ckpt_tagidx_run *r,
                         const uint8_t *lkey, size_t klen)
{
    MDB_dbi dbi = st->dbi[CKPT_DB_TAG_INDEX];
    MDB_val k, d, ck, cd;
    unsigned fl = 0;
    int rc;
    if (!st->tagidx_dup) {
        k.mv_size = klen;
        k.mv_data = (void *)lkey;
        d.mv_size = 0;
        d.mv_data = "";
        return ckpt_put_append(txn, dbi, &k, &d, 0);
    }
    if ((rc = split(lkey, klen, &k, &d)) != 0)
        return rc;
    if (r->cur == NULL && (rc = mdb_cursor_open(txn, dbi, &r->cur)) != 0)
        return rc;
    /* a name part longer than a name key is not remembered (raw puts refuse
     * one; this stays safe if one ever came) */
    const int keep = k.mv_size <= sizeof r->name;
    if (!keep || r->state == TAGIDX_NONAME || r->nlen != k.mv_size ||
        memcmp(r->name, k.mv_data, r->nlen) != 0) {
        /* a new name: its largest owner so far */
        if (keep)
            memcpy(r->name, k.mv_data, k.mv_size);
        r->nlen = k.mv_size;
        ck = k;
        rc = mdb_cursor_get(r->cur, &ck, &cd, MDB_SET_KEY);
        if (rc == 0)
            rc = mdb_cursor_get(r->cur, &ck, &cd, MDB_LAST_DUP);
        if (rc == MDB_NOTFOUND) {
            r->state = TAGIDX_EMPTY;
        } else if (rc != 0) {
            r->state = TAGIDX_NONAME;
            return rc;
        } else if (cd.mv_size == 8) {
            memcpy(r->last, cd.mv_data, 8);
            r->state = TAGIDX_LAST;
        } else {
            r->state = TAGIDX_UNKNOWN; /* not an owner id: never append */
        }
    }
    if (r->state == TAGIDX_LAST && memcmp(d.mv_data, r->last, 8) > 0)
        fl = MDB_APPENDDUP;
    if ((rc = mdb_cursor_put(r->cur, &k, &d, fl)) != 0)
        return rc;
    if (r->state == TAGIDX_EMPTY || fl == MDB_APPENDDUP) {
        memcpy(r->last, d.mv_data, 8);
        r->state = TAGIDX_LAST;
    }
    if (!keep)
        r->state = TAGIDX_NONAME;
    return 0;
}

void ckpt_tagidx_run_end(struct ckpt_tagidx_run *r)
{
    if (r->cur != NULL)
        mdb_cursor_close(r->cur);
    r->cur = NULL;
    r->state = TAGIDX_NONAME;
}

int ckpt_tagidx_put(ckpt_store *st, MDB_txn *txn, const uint8_t *lkey, size_t klen)
{
    struct ckpt_tagidx_run r = CKPT_TAGIDX_RUN_INIT;
    int rc = ckpt_tagidx_put_next(st, txn, &r, lkey, klen);
    ckpt_tagidx_run_end(&r);
    return rc;
}

int ckpt_tagidx_del(ckpt_store *st, MDB_txn *txn, const uint8_t *lkey, size_t klen)
{
    MDB_dbi dbi = st->dbi[CKPT_DB_TAG_INDEX];
    MDB_val k, d;
    int rc;
    if (!st->tagidx_dup) {
        k.mv_size = klen;
        k.mv_data = (void *)lkey;
        rc = mdb_del(txn, dbi, &k, NULL);
    } else if ((rc = split(lkey, klen, &k, &d)) == 0) {
        rc = mdb_del(txn, dbi, &k, &d);
    }
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* 0 if the entry exists, MDB_NOTFOUND if not, else an LMDB error. A
 * cursor it opens is left in *curp for the caller to close (also after a
 * fault inside a recovery point, when this function never returns). */
int ckpt_tagidx_get(ckpt_store *st, MDB_txn *txn, MDB_cursor *volatile *curp, const uint8_t *lkey,
                    size_t klen)
{
    MDB_dbi dbi = st->dbi[CKPT_DB_TAG_INDEX];
    MDB_cursor *cur;
    MDB_stat ms;
    MDB_val k, d;
    int rc;
    if (!st->tagidx_dup) {
        k.mv_size = klen;
        k.mv_data = (void *)lkey;
        return mdb_get(txn, dbi, &k, &d);
    }
    if (split(lkey, klen, &k, &d) != 0)
        return MDB_NOTFOUND;
    /* mdb_stat first: it reads the database's root with a cursor on the
     * stack, so a damaged page faults there, not inside mdb_cursor_open */
    if ((rc = mdb_stat(txn, dbi, &ms)) != 0 || (rc = mdb_cursor_open(txn, dbi, &cur)) != 0)
        return rc;
    *curp = cur;
    return mdb_cursor_get(cur, &k, &d, MDB_GET_BOTH);
}

/* Every logical entry starting with prefix, in order, through cur (a
 * cursor on the tag index that the caller opened and closes, inside the
 * recovery point g); a callback's non-zero result stops the walk and goes
 * to *cb_rc. The callback runs outside g, as in ckpt_iter. The seek goes
 * to the first name key >= the prefix's name part; entries of that name
 * below an owner prefix are skipped, and the walk stops at the first entry
 * above the prefix. An entry outside the map's committed pages (a damaged
 * page) is MDB_CORRUPTED. */
int ckpt_tagidx_iter(ckpt_rtxn *tx, MDB_cursor *cur, struct ckpt_guard *g, const uint8_t *prefix,
                     size_t plen, ckpt_iter_cb cb, void *payload, int *cb_rc)
{
    MDB_val k, d;
    uint8_t lk[CKPT_NAMEKEY_MAX + 8];
    int rc, hashed;
    *cb_rc = 0;
    if (plen == 0) {
        rc = mdb_cursor_get(cur, &k, &d, MDB_FIRST);
    } else {
        size_t n = ckpt_key_name_len(prefix, plen, &hashed);
        k.mv_size = n > 0 && n < plen ? n : plen;
        k.mv_data = (void *)prefix;
        rc = mdb_cursor_get(cur, &k, &d, MDB_SET_RANGE);
    }
    while (rc == 0) {
        if (k.mv_size + d.mv_size > sizeof lk || !ckpt_rtxn_in_map(tx, &k) ||
            !ckpt_rtxn_in_map(tx, &d)) {
            rc = MDB_CORRUPTED;
            break;
        }
        memcpy(lk, k.mv_data, k.mv_size);
        memcpy(lk + k.mv_size, d.mv_data, d.mv_size);
        size_t len = k.mv_size + d.mv_size;
        if (plen > 0) {
            int c = memcmp(lk, prefix, len < plen ? len : plen);
            if (c > 0)
                break;
            if (c < 0 || len < plen) {
                rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT);
                continue;
            }
        }
        ckpt_val ck = {len, lk}, cv = {0, ""};
        ckpt_guard_pop(g);
        *cb_rc = cb(&ck, &cv, payload);
        ckpt_guard_push(g); /* the caller's recovery point is still live */
        if (*cb_rc != 0)
            return 0;
        rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT);
    }
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* The open transaction's format 1 tag index (namekey . owner -> "") is
 * dropped and rebuilt as DUPSORT from the kvtag database (owner . namekey
 * -> record), the index's source of truth. Records stay as they are:
 * format 1 records remain readable (server_hooks/records.c). */
int ckpt_tagidx_migrate_v1(ckpt_store *st, MDB_txn *txn)
{
    MDB_dbi old, idx, kv;
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    int rc;
    if ((rc = mdb_dbi_open(txn, ckpt_db_name(CKPT_DB_TAG_INDEX), MDB_CREATE, &old)) != 0 ||
        (rc = mdb_drop(txn, old, 1)) != 0)
        return rc;
    if ((rc = mdb_dbi_open(txn, ckpt_db_name(CKPT_DB_TAG_INDEX), MDB_CREATE | CKPT_TAGIDX_FLAGS,
                           &idx)) != 0 ||
        (rc = mdb_dbi_open(txn, ckpt_db_name(CKPT_DB_KVTAG), MDB_CREATE, &kv)) != 0)
        return rc;
    st->dbi[CKPT_DB_TAG_INDEX] = idx;
    st->tagidx_dup = 1;
    if ((rc = mdb_cursor_open(txn, kv, &cur)) != 0)
        return rc;
    uint8_t lk[CKPT_NAMEKEY_MAX + 8];
    struct ckpt_tagidx_run run = CKPT_TAGIDX_RUN_INIT;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (k.mv_size <= 8 || k.mv_size > sizeof lk)
            continue; /* not a kvtag key: ckpt-inspect verify reports it */
        memcpy(lk, (const uint8_t *)k.mv_data + 8, k.mv_size - 8);
        memcpy(lk + k.mv_size - 8, k.mv_data, 8);
        if ((rc = ckpt_tagidx_put_next(st, txn, &run, lk, k.mv_size)) != 0)
            break;
    }
    ckpt_tagidx_run_end(&run);
    mdb_cursor_close(cur);
    return rc == MDB_NOTFOUND ? 0 : rc;
}
