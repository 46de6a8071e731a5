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
 * Format 3 keeps format 2's kvtag_name and adds a delta of recent entries
 * in front of it (tagidx_delta.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tagidx_delta.h"

struct ckpt_tagidx_view {
    size_t n;
    struct dent e[]; /* sorted by key, the last op of each */
};

static int view_get(ckpt_rtxn *tx, const struct ckpt_tagidx_view **out);
static const struct dent *view_find(const struct ckpt_tagidx_view *view, const uint8_t *key,
                                    size_t klen);
static int view_put_at(const struct ckpt_tagidx_view *view, size_t i, const uint8_t *prefix,
                       size_t plen, const uint8_t **key, size_t *klen, int *put);
static size_t view_lower(const struct ckpt_tagidx_view *view, const uint8_t *key, size_t klen);

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

/* A run of tag-index puts in one write transaction through one cursor
 * (ckpt_tagidx_put_next: the merge, the format 1 migration); end it with
 * ckpt_tagidx_run_end before the transaction ends. */
enum { TAGIDX_NONAME, TAGIDX_EMPTY, TAGIDX_LAST, TAGIDX_UNKNOWN };
struct ckpt_tagidx_run {
    MDB_cursor *cur;
    int state;                      /* of name[]: TAGIDX_* */
    size_t nlen;
    uint8_t name[CKPT_NAMEKEY_MAX]; /* the name key of the last put */
    uint8_t last[8];                /* TAGIDX_LAST: its largest owner */
};
#define CKPT_TAGIDX_RUN_INIT {NULL, TAGIDX_NONAME, 0, {0}, {0}}

/* Make r describe the name k (its largest owner, looked up once while
 * the same name comes again): 0 or an LMDB error. */
static int run_name(struct ckpt_tagidx_run *r, const MDB_val *k)
{
    MDB_val ck, cd;
    /* a name part longer than a name key is not remembered (raw puts refuse
     * one; this stays safe if one ever came) */
    const int keep = k->mv_size <= sizeof r->name;
    if (keep && r->state != TAGIDX_NONAME && r->nlen == k->mv_size &&
        memcmp(r->name, k->mv_data, r->nlen) == 0)
        return 0;
    if (keep)
        memcpy(r->name, k->mv_data, k->mv_size);
    r->nlen = k->mv_size;
    ck = *k;
    int rc = mdb_cursor_get(r->cur, &ck, &cd, MDB_SET_KEY);
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
    return 0;
}

/* Tag-index puts through one cursor, in any order; fastest in logical key
 * order (name key, then owner), as the merge's sorted entries give them.
 * Owners mostly arrive in ascending order: appending to the name's
 * duplicates (MDB_APPENDDUP) then fills their pages, where a plain insert
 * splits them in half. MDB_APPENDDUP is valid only above the name's last
 * duplicate, which is looked up once per name: while the same name comes
 * again, r remembers its largest owner (nothing else writes that name's
 * duplicates in between). */
static int ckpt_tagidx_put_next(ckpt_store *st, MDB_txn *txn, struct ckpt_tagidx_run *r,
                                 const uint8_t *lkey, size_t klen)
{
    MDB_dbi dbi = st->dbi[CKPT_DB_TAG_INDEX];
    MDB_val k, d;
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
    if ((rc = run_name(r, &k)) != 0)
        return rc;
    if (r->state == TAGIDX_LAST && memcmp(d.mv_data, r->last, 8) > 0)
        fl = MDB_APPENDDUP;
    if ((rc = mdb_cursor_put(r->cur, &k, &d, fl)) != 0)
        return rc;
    if (r->state == TAGIDX_EMPTY || fl == MDB_APPENDDUP) {
        memcpy(r->last, d.mv_data, 8);
        r->state = TAGIDX_LAST;
    }
    if (k.mv_size > sizeof r->name)
        r->state = TAGIDX_NONAME;
    return 0;
}

/* Puts of n logical keys of one name, in ascending owner order (the
 * merge's sorted, collapsed entries): when they all go above the name's
 * last owner, one MDB_MULTIPLE put appends them (LMDB looks the name up
 * once, not once per owner), their owners gathered in *buf (grown as
 * needed); otherwise one put each. */
static int put_group(ckpt_store *st, MDB_txn *txn, struct ckpt_tagidx_run *r,
                     const struct dent *e, size_t n, uint8_t **buf, size_t *cap)
{
    MDB_val k, d;
    int rc;
    if (n < 2 || !st->tagidx_dup || split(e[0].key, e[0].klen, &k, &d) != 0 ||
        k.mv_size > sizeof r->name)
        goto each;
    if (r->cur == NULL && (rc = mdb_cursor_open(txn, st->dbi[CKPT_DB_TAG_INDEX], &r->cur)) != 0)
        return rc;
    if ((rc = run_name(r, &k)) != 0)
        return rc;
    if (r->state != TAGIDX_EMPTY && (r->state != TAGIDX_LAST || memcmp(d.mv_data, r->last, 8) <= 0))
        goto each;
    if (n * 8 > *cap) {
        uint8_t *nb = realloc(*buf, n * 8);
        if (nb == NULL)
            goto each;
        *buf = nb;
        *cap = n * 8;
    }
    for (size_t i = 0; i < n; i++)
        memcpy(*buf + 8 * i, e[i].key + e[i].klen - 8, 8);
    MDB_val m[2] = {{8, *buf}, {n, NULL}};
    /* on an empty name the first owner makes the key, the rest append */
    if ((rc = mdb_cursor_put(r->cur, &k, m, MDB_MULTIPLE | MDB_APPENDDUP)) != 0) {
        r->state = TAGIDX_NONAME;
        return rc;
    }
    memcpy(r->last, *buf + 8 * (n - 1), 8);
    r->state = TAGIDX_LAST;
    return 0;
each:
    for (size_t i = 0; i < n; i++)
        if ((rc = ckpt_tagidx_put_next(st, txn, r, e[i].key, e[i].klen)) != 0)
            return rc;
    return 0;
}

static void ckpt_tagidx_run_end(struct ckpt_tagidx_run *r)
{
    if (r->cur != NULL)
        mdb_cursor_close(r->cur);
    r->cur = NULL;
    r->state = TAGIDX_NONAME;
}

static int ckpt_tagidx_del(ckpt_store *st, MDB_txn *txn, const uint8_t *lkey, size_t klen)
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

/* Whether kvtag_name itself holds the logical entry: 0 if it does,
 * MDB_NOTFOUND if not, else an LMDB error. A cursor it opens is left in
 * *curp for the caller to close (also after a fault inside a recovery
 * point, when this function never returns). */
static int main_get(ckpt_store *st, MDB_txn *txn, MDB_cursor *volatile *curp, const uint8_t *lkey,
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
    if (*curp == NULL) {
        /* mdb_stat first: it reads the database's root with a cursor on
         * the stack, so a damaged page faults there, not inside
         * mdb_cursor_open */
        if ((rc = mdb_stat(txn, dbi, &ms)) != 0 || (rc = mdb_cursor_open(txn, dbi, &cur)) != 0)
            return rc;
        *curp = cur;
    }
    return mdb_cursor_get(*curp, &k, &d, MDB_GET_BOTH);
}

/* A miss's check (what: "a lookup", "a scan") found damage: the error is
 * set, and CKPT_TAGIDX_REPORTED; else rc. */
static int miss_checked(ckpt_rtxn *tx, int rc, const char *what, const char *why)
{
    if (rc != CKPT_LOOKUP_DAMAGED)
        return rc;
    ckpt_rtxn_missed(tx, CKPT_DB_TAG_INDEX, what, why);
    return CKPT_TAGIDX_REPORTED;
}

/* 0 if the logical entry exists (the delta's last word on it, else
 * kvtag_name's), MDB_NOTFOUND if not, CKPT_TAGIDX_REPORTED for a damaged
 * delta or a search that ended on a damaged leaf (the error is set), else
 * an LMDB error. A cursor it opens is left in *curp for the caller to
 * close. */
int ckpt_tagidx_get(ckpt_rtxn *tx, MDB_cursor *volatile *curp, const uint8_t *lkey, size_t klen)
{
    const struct ckpt_tagidx_view *view;
    int rc = view_get(tx, &view);
    if (rc)
        return rc;
    const struct dent *d = view_find(view, lkey, klen);
    if (d != NULL)
        return d->op == TAGIDX_OP_PUT ? 0 : MDB_NOTFOUND;
    if ((rc = main_get(tx->st, tx->txn, curp, lkey, klen)) == 0 && tx->st->tagidx_dup) {
        /* found: believed if the owners' page LMDB searched is sound */
        MDB_val nk, it;
        char why[160];
        if ((rc = mdb_cursor_get(*curp, &nk, &it, MDB_GET_CURRENT)) != 0)
            return rc;
        if (ckpt_rtxn_dup_page(tx, *curp, &nk, &it, why, sizeof why) != 0)
            return miss_checked(tx, CKPT_LOOKUP_DAMAGED, "a lookup", why);
        return 0;
    }
    if (rc != MDB_NOTFOUND)
        return rc;
    /* not there: believed only if the pages searched are sound, the name's
     * leaf, and in a DUPSORT index the owners' page when the name is there */
    MDB_val key = {klen, (void *)lkey}, k, v;
    if (tx->st->tagidx_dup) {
        if (*curp == NULL || split(lkey, klen, &k, &v) != 0)
            return MDB_NOTFOUND;
        MDB_val owner = v;
        key = k;
        if ((rc = mdb_cursor_get(*curp, &k, &v, MDB_SET_KEY)) == 0) {
            /* the name is there, the owner not: believed if the owners
             * searched are sound */
            char why[160];
            rc = ckpt_rtxn_dup_absent_checked(tx, *curp, &k, &owner, why, sizeof why);
            return miss_checked(tx, rc, "a lookup", why);
        }
        if (rc != MDB_NOTFOUND)
            return rc;
    } else if (*curp == NULL) {
        MDB_cursor *c;
        if ((rc = mdb_cursor_open(tx->txn, tx->st->dbi[CKPT_DB_TAG_INDEX], &c)) != 0)
            return rc;
        *curp = c;
    }
    char why[160];
    rc = ckpt_rtxn_absent_checked(tx, *curp, &key, why, sizeof why);
    return miss_checked(tx, rc, "a lookup", why);
}

/* kvtag_name's next logical entry with the prefix into lk (*len): 0, or
 * MDB_NOTFOUND past the last one; first: the first seek, else MDB_NEXT. A
 * first seek that finds no name key with the prefix's name part on a
 * damaged leaf is CKPT_TAGIDX_REPORTED, the error set. */
static int main_next(ckpt_rtxn *tx, MDB_cursor *cur, int first, const uint8_t *prefix, size_t plen,
                     uint8_t *lk, size_t *len)
{
    MDB_val k, d;
    int rc, hashed;
    if (!first) {
        rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT);
    } else if (plen == 0) {
        rc = mdb_cursor_get(cur, &k, &d, MDB_FIRST);
    } else {
        size_t n = ckpt_key_name_len(prefix, plen, &hashed);
        MDB_val sk = {n > 0 && n < plen ? n : plen, (void *)prefix};
        k = sk;
        rc = mdb_cursor_get(cur, &k, &d, MDB_SET_RANGE);
        if (rc == MDB_NOTFOUND ||
            (rc == 0 && ckpt_rtxn_in_map(tx, &k) &&
             (k.mv_size < sk.mv_size || memcmp(k.mv_data, sk.mv_data, sk.mv_size) != 0))) {
            /* no name key with the prefix's name part: believed only if
             * the search's leaf is sound */
            char why[160];
            rc = ckpt_rtxn_absent_checked(tx, cur, &sk, why, sizeof why);
            return miss_checked(tx, rc, "a scan", why);
        }
    }
    while (rc == 0) {
        if (k.mv_size + d.mv_size > CKPT_NAMEKEY_MAX + 8 || !ckpt_rtxn_in_map(tx, &k) ||
            !ckpt_rtxn_in_map(tx, &d))
            return MDB_CORRUPTED;
        memcpy(lk, k.mv_data, k.mv_size);
        memcpy(lk + k.mv_size, d.mv_data, d.mv_size);
        *len = k.mv_size + d.mv_size;
        if (plen == 0)
            return 0;
        int c = memcmp(lk, prefix, *len < plen ? *len : plen);
        if (c > 0)
            return MDB_NOTFOUND;
        if (c == 0 && *len >= plen)
            return 0;
        rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT); /* below an owner prefix */
    }
    return rc;
}

/* Every logical entry starting with prefix, in order, through cur (a
 * cursor on the tag index that the caller opened and closes, inside the
 * recovery point g): kvtag_name's entries merged with the delta's (a delta
 * put of a key absent from kvtag_name is added, a delta delete hides one).
 * A callback's non-zero result stops the walk and goes to *cb_rc. The
 * callback runs outside g, as in ckpt_iter. kvtag_name's walk seeks to the
 * first name key >= the prefix's name part, skips entries of that name
 * below an owner prefix and stops at the first entry above the prefix. An
 * entry outside the map's committed pages (a damaged page) is
 * MDB_CORRUPTED. */
int ckpt_tagidx_iter(ckpt_rtxn *tx, MDB_cursor *cur, struct ckpt_guard *g, const uint8_t *prefix,
                     size_t plen, ckpt_iter_cb cb, void *payload, int *cb_rc)
{
    uint8_t lk[CKPT_NAMEKEY_MAX + 8];
    const struct ckpt_tagidx_view *view;
    size_t len = 0, vi;
    int rc;
    *cb_rc = 0;
    if ((rc = view_get(tx, &view)) != 0)
        return rc;
    vi = plen ? view_lower(view, prefix, plen) : 0;
    int mrc = main_next(tx, cur, 1, prefix, plen, lk, &len);
    for (;;) {
        const uint8_t *vk = NULL;
        size_t vlen = 0;
        int vput = 0;
        if (mrc != 0 && mrc != MDB_NOTFOUND)
            return mrc;
        int have_v = view_put_at(view, vi, prefix, plen, &vk, &vlen, &vput) == 0;
        if (mrc == MDB_NOTFOUND && !have_v)
            return 0;
        int c = mrc == MDB_NOTFOUND ? 1 : !have_v ? -1 : ckpt_tagidx_key_cmp(lk, len, vk, vlen);
        const uint8_t *ek = lk;
        size_t elen = len;
        int emit = 1;
        if (c > 0) { /* only in the delta */
            ek = vk;
            elen = vlen;
            emit = vput;
            vi++;
        } else if (c == 0) { /* the delta's word on a kvtag_name entry */
            emit = vput;
            vi++;
        }
        if (emit) {
            ckpt_val ck = {elen, ek}, cv = {0, ""};
            ckpt_guard_pop(g);
            *cb_rc = cb(&ck, &cv, payload);
            ckpt_guard_push(g); /* the caller's recovery point is still live */
            if (*cb_rc != 0)
                return 0;
        }
        if (c <= 0)
            mrc = main_next(tx, cur, 0, prefix, plen, lk, &len);
    }
}

int ckpt_tagidx_count(ckpt_rtxn *tx, MDB_cursor *volatile *curp, uint64_t main_entries,
                      uint64_t *entries)
{
    const struct ckpt_tagidx_view *view;
    int rc;
    *entries = main_entries;
    if ((rc = view_get(tx, &view)) != 0 || view == NULL)
        return rc;
    for (size_t i = 0; i < view->n; i++) {
        const struct dent *d = &view->e[i];
        rc = main_get(tx->st, tx->txn, curp, d->key, d->klen);
        if (rc != 0 && rc != MDB_NOTFOUND)
            return rc;
        if (d->op == TAGIDX_OP_PUT && rc == MDB_NOTFOUND)
            (*entries)++;
        else if (d->op == TAGIDX_OP_DEL && rc == 0)
            (*entries)--;
    }
    return 0;
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

int ckpt_tagidx_merge(ckpt_store *st, MDB_txn *txn, size_t max_entries, const int *stop,
                      uint64_t *merged, int *more, char *where, size_t wlen)
{
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    struct dent *e = NULL;
    size_t n = 0, cap = 0, chunks = 0;
    int rc;
    *merged = 0;
    *more = 0;
    if ((rc = mdb_cursor_open(txn, st->delta.dbi, &cur)) != 0)
        return rc;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (chunks > 0 && n >= max_entries) {
            *more = 1;
            break;
        }
        if (__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
            rc = ECANCELED;
            goto done;
        }
        if ((rc = ckpt_delta_chunk_entries(st->csum, &e, &n, &cap, &k, &v, where, wlen)) != 0)
            goto done;
        chunks++;
    }
    if (rc != 0 && rc != MDB_NOTFOUND)
        goto done;
    size_t m = ckpt_delta_collapse(e, n);
    /* Close raises *stop and waits for st->mu: a merge it finds running is
     * abandoned at the next check (before, during and after its puts), so
     * that close never has to write a merge's pages. */
    if (__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
        rc = ECANCELED;
        goto done;
    }
    struct ckpt_tagidx_run run = CKPT_TAGIDX_RUN_INIT;
    uint8_t *owners = NULL;
    size_t owners_cap = 0, check = 0;
    rc = 0;
    for (size_t i = 0, j; i < m && rc == 0; i = j) {
        if (i >= check) { /* every 512 entries or so */
            if (__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
                rc = ECANCELED;
                break;
            }
            check = i + 512;
        }
        j = i + 1;
        if (e[i].op == TAGIDX_OP_PUT) {
            /* the puts of one name that follow (up to the next check) */
            while (j < m && j < check && e[j].op == TAGIDX_OP_PUT && e[j].klen == e[i].klen &&
                   memcmp(e[j].key, e[i].key, e[i].klen - 8) == 0)
                j++;
            rc = put_group(st, txn, &run, &e[i], j - i, &owners, &owners_cap);
        } else {
            run.state = TAGIDX_NONAME; /* its remembered last owner may be gone */
            rc = ckpt_tagidx_del(st, txn, e[i].key, e[i].klen);
        }
    }
    ckpt_tagidx_run_end(&run);
    free(owners);
    if (rc == 0 && __atomic_load_n(stop, __ATOMIC_ACQUIRE))
        rc = ECANCELED;
    if (rc)
        goto done;
    if (!*more) {
        rc = mdb_drop(txn, st->delta.dbi, 0);
    } else {
        for (size_t i = 0; i < chunks && rc == 0; i++)
            if ((rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST)) == 0)
                rc = mdb_cursor_del(cur, 0);
    }
    if (rc == 0)
        *merged = n;
done:
    mdb_cursor_close(cur);
    free(e);
    return rc;
}

/* ---- reads: the overlay ---- */

void ckpt_tagidx_view_free(struct ckpt_tagidx_view *v)
{
    free(v);
}

/* tx's view of the delta (NULL: empty), built at its first use. Under the
 * caller's recovery point. 0, ENOMEM, or MDB_CORRUPTED after ckpt_seterr. */
static int view_get(ckpt_rtxn *tx, const struct ckpt_tagidx_view **out)
{
    ckpt_store *st = tx->st;
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    struct dent *e = NULL;
    size_t n = 0, cap = 0;
    char where[160] = "";
    int rc;
    *out = tx->view;
    if (tx->view_built || !st->delta.on)
        return 0;
    MDB_stat ms;
    if ((rc = mdb_stat(tx->txn, st->delta.dbi, &ms)) != 0 ||
        (rc = mdb_cursor_open(tx->txn, st->delta.dbi, &cur)) != 0)
        return rc;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (!ckpt_rtxn_in_map(tx, &k) || !ckpt_rtxn_in_map(tx, &v)) {
            snprintf(where, sizeof where, "a chunk that lies outside the file's committed pages");
            rc = MDB_CORRUPTED;
            break;
        }
        if ((rc = ckpt_delta_chunk_entries(tx->st->csum, &e, &n, &cap, &k, &v, where, sizeof where)) != 0)
            break;
    }
    mdb_cursor_close(cur);
    if (rc != MDB_NOTFOUND) {
        free(e);
        if (rc == MDB_CORRUPTED)
            ckpt_seterr(st, CKPT_E_CORRUPT, 0, "%s/data.mdb: rank %d, reading %s: %s: the "
                        "database is damaged", st->path, st->opts.rank, CKPT_DELTA_DB, where);
        return rc == MDB_CORRUPTED ? CKPT_TAGIDX_REPORTED : rc;
    }
    size_t m = ckpt_delta_collapse(e, n);
    struct ckpt_tagidx_view *view = NULL;
    if (m > 0) {
        if ((view = malloc(sizeof *view + m * sizeof view->e[0])) == NULL) {
            free(e);
            return ENOMEM;
        }
        view->n = m;
        memcpy(view->e, e, m * sizeof *e);
    }
    free(e);
    tx->view = view;
    tx->view_built = 1;
    *out = view;
    return 0;
}

/* The view's entry for key, or NULL. */
static const struct dent *view_find(const struct ckpt_tagidx_view *view, const uint8_t *key,
                                    size_t klen)
{
    size_t lo = 0, hi = view ? view->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = ckpt_tagidx_key_cmp(view->e[mid].key, view->e[mid].klen, key, klen);
        if (c == 0)
            return &view->e[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Entry i of the view if it exists and starts with prefix: 0 with its key
 * and whether it is a put, else MDB_NOTFOUND. */
static int view_put_at(const struct ckpt_tagidx_view *view, size_t i, const uint8_t *prefix,
                       size_t plen, const uint8_t **key, size_t *klen, int *put)
{
    if (view == NULL || i >= view->n)
        return MDB_NOTFOUND;
    const struct dent *d = &view->e[i];
    if (plen > 0 && (d->klen < plen || memcmp(d->key, prefix, plen) != 0))
        return MDB_NOTFOUND;
    *key = d->key;
    *klen = d->klen;
    *put = d->op == TAGIDX_OP_PUT;
    return 0;
}

/* The first view entry >= key. */
static size_t view_lower(const struct ckpt_tagidx_view *view, const uint8_t *key, size_t klen)
{
    size_t lo = 0, hi = view ? view->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ckpt_tagidx_key_cmp(view->e[mid].key, view->e[mid].klen, key, klen) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
