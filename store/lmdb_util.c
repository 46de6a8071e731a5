/*
 * lmdb_util.c - small LMDB helpers the store's files share: puts that
 * append and seal (format 4's checksum), a quiet delete, and the bounds of
 * the map that reads check what LMDB returns against, the check of the
 * leaf page a key came from, and of a search's "not found". A leaf: it
 * calls nothing of the store but csum.c, keys.c and errors.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bytes.h"
#include "store_int.h"

int ckpt_del_quiet(MDB_txn *txn, MDB_dbi dbi, const void *k, size_t klen)
{
    MDB_val key = {klen, (void *)k};
    int rc = mdb_del(txn, dbi, &key, NULL);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* LMDB splits a full leaf page in half, so keys inserted in ascending order
 * leave every page about half empty; with MDB_APPEND the new key starts a
 * new page and the old one stays full. MDB_APPEND fails (MDB_KEYEXIST, and
 * changes nothing) unless the key sorts after every key of the database;
 * then this is an ordinary put with `flags`. */
int ckpt_put_append(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *val, unsigned flags)
{
    MDB_val v = *val;
    int rc = mdb_put(txn, dbi, key, &v, MDB_APPEND);
    if (rc != MDB_KEYEXIST)
        return rc;
    return mdb_put(txn, dbi, key, val, flags); /* with MDB_NOOVERWRITE: *val = the old value */
}

/* mdb_put of key -> val with format 4's checksum (csum.h) after the value
 * (MDB_RESERVE: the value is written once, in place). */
int ckpt_put_sealed(ckpt_store *st, MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *val,
                    unsigned flags)
{
    if (!st->csum)
        return mdb_put(txn, dbi, key, val, flags);
    MDB_val r = {val->mv_size + CKPT_CSUM_LEN, NULL};
    int rc = mdb_put(txn, dbi, key, &r, flags | MDB_RESERVE);
    if (rc == MDB_KEYEXIST && (flags & MDB_NOOVERWRITE)) {
        /* the old value, without its checksum */
        val->mv_data = r.mv_data;
        val->mv_size = r.mv_size >= CKPT_CSUM_LEN ? r.mv_size - CKPT_CSUM_LEN : 0;
        return rc;
    }
    if (rc)
        return rc;
    memcpy(r.mv_data, val->mv_data, val->mv_size);
    ckpt_csum_seal(key->mv_data, key->mv_size, r.mv_data, val->mv_size);
    return 0;
}

int ckpt_put_rec(ckpt_store *st, MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *val,
                 unsigned flags)
{
    MDB_val v = *val;
    int rc = ckpt_put_sealed(st, txn, dbi, key, &v, MDB_APPEND);
    if (rc != MDB_KEYEXIST)
        return rc;
    return ckpt_put_sealed(st, txn, dbi, key, val, flags);
}

const char *ckpt_map_base_from(ckpt_store *st, const void *in_page, size_t last_pgno)
{
    const char *page = (const char *)((uintptr_t)in_page & ~(uintptr_t)(st->psize - 1));
    uint64_t pgno;
    memcpy(&pgno, page, sizeof pgno); /* MDB_page.mp_pgno */
    if (pgno < 2 || pgno > last_pgno)
        return NULL; /* a damaged page (0 and 1 are LMDB's meta pages): no
                      * bound rather than a wrong one */
    const char *b = page - pgno * st->psize;
    __atomic_store_n(&st->map_base, b, __ATOMIC_RELEASE);
    return b;
}

const char *ckpt_map_base(ckpt_store *st, MDB_txn *txn, MDB_dbi meta, size_t last_pgno)
{
    const char *b = __atomic_load_n(&st->map_base, __ATOMIC_ACQUIRE);
    MDB_val k = {strlen(CKPT_META_KEY), CKPT_META_KEY}, v;
    if (b != NULL || st->psize == 0 || mdb_get(txn, meta, &k, &v) != 0)
        return b;
    return ckpt_map_base_from(st, v.mv_data, last_pgno);
}

/* A key or value LMDB returned lies inside the committed map. */
int ckpt_rtxn_in_map(const ckpt_rtxn *tx, const MDB_val *v)
{
    const char *p = v->mv_data;
    if (v->mv_size == 0 || tx->map_lo == NULL)
        return 1;
    return p >= tx->map_lo && p < tx->map_hi && v->mv_size <= (size_t)(tx->map_hi - p);
}

/* LMDB 0.9's page header (MDB_page): page number (8 bytes), pad (2),
 * flags (2), lower and upper bounds of the free space (2 + 2), then the
 * node offsets; a leaf node is 8 bytes of header (data size, flags, key
 * size) and then its key. */
enum {
    PG_HDR = 16,
    PG_NODE = 8,
    PG_BRANCH = 0x01,
    PG_LEAF = 0x02,
    PG_LEAF2 = 0x20,
    PG_OTHER = 0x04 | 0x08 | PG_LEAF2 | 0x40 /* overflow, meta, LEAF2, sub-page */
};

/* The header of the map's page that holds p: its number in *pgno, the
 * page in *page; 0 if the page names its own number and its free space
 * lies inside it (header <= lower <= upper <= page size), else -1 with
 * why. */
struct pg_hdr {
    uint16_t flags, lower, upper;
};
static int page_hdr(const ckpt_rtxn *tx, const char *p, size_t *pgno, const char **page,
                    struct pg_hdr *h, char *why, size_t n)
{
    uint64_t self;
    *pgno = (size_t)(p - tx->map_lo) / tx->st->psize;
    *page = tx->map_lo + *pgno * tx->st->psize;
    memcpy(&self, *page, 8);
    memcpy(&h->flags, *page + 10, 2);
    memcpy(&h->lower, *page + 12, 2);
    memcpy(&h->upper, *page + 14, 2);
    if (self != *pgno) {
        snprintf(why, n, "page %zu says it is page %llu", *pgno, (unsigned long long)self);
        return -1;
    }
    if (h->lower < PG_HDR || h->lower > h->upper || h->upper > tx->st->psize) {
        snprintf(why, n, "page %zu has free space %u..%u", *pgno, h->lower, h->upper);
        return -1;
    }
    return 0;
}

int ckpt_rtxn_leaf_node(const ckpt_rtxn *tx, const MDB_val *key, char *why, size_t n)
{
    const size_t psize = tx->st->psize;
    const char *node = (const char *)key->mv_data - PG_NODE;
    if (tx->map_lo == NULL || psize < 512 || node < tx->map_lo ||
        (const char *)key->mv_data >= tx->map_hi)
        return 0; /* no bounds known: nothing to check against */
    size_t pgno;
    const char *page;
    struct pg_hdr h;
    if (page_hdr(tx, node, &pgno, &page, &h, why, n) != 0)
        return -1;
    uint16_t off = (uint16_t)(node - page);
    if (!(h.flags & PG_LEAF) || (h.flags & (PG_BRANCH | PG_OTHER))) {
        snprintf(why, n, "page %zu has flags 0x%x, not a leaf's", pgno, h.flags);
        return -1;
    }
    if (off < h.upper || (size_t)off + PG_NODE + key->mv_size > psize) {
        snprintf(why, n, "page %zu has free space %u..%u and a node at %u of %zu key bytes", pgno,
                 h.lower, h.upper, off, key->mv_size);
        return -1;
    }
    for (const char *p = page + PG_HDR; p < page + h.lower; p += 2) {
        uint16_t o;
        memcpy(&o, p, 2);
        if (o == off)
            return 0;
    }
    snprintf(why, n, "page %zu lists no node at %u", pgno, off);
    return -1;
}

/* Whether bytes lo[0..len) lie inside the data of the node whose key is
 * name (a leaf node: 4 bytes of data size, flags, key size, key, data). */
static int in_name_node(const MDB_val *name, const char *lo, size_t len)
{
    size_t dsize = ckpt_le32_get((const uint8_t *)name->mv_data - PG_NODE);
    const char *data = (const char *)name->mv_data + name->mv_size;
    return lo >= data && (size_t)(lo - data) + len <= dsize;
}

/* An item of a DUPFIXED database (8-byte owner ids packed by LMDB): it
 * lies in the sub-page inside its name's node (few items), or on a leaf
 * page of the name's sub-database, whose header names its own number,
 * says leaf and packed (LEAF2, nothing else), and whose item count covers
 * the item's slot. 0, or -1 with what is wrong in why. */
static int dup_item(const ckpt_rtxn *tx, const MDB_val *name, const MDB_val *item, char *why,
                    size_t n)
{
    const size_t psize = tx->st->psize;
    const char *p = item->mv_data;
    if (tx->map_lo == NULL || psize < 512 || item->mv_size == 0)
        return 0;
    if (!ckpt_rtxn_in_map(tx, item) || !ckpt_rtxn_in_map(tx, name)) {
        snprintf(why, n, "an owner id or its name lies outside the file");
        return -1;
    }
    size_t pgno;
    const char *page, *nk = name->mv_data;
    struct pg_hdr h;
    if (page_hdr(tx, p, &pgno, &page, &h, why, n) != 0)
        return -1;
    if (nk >= page && nk < page + psize) { /* a sub-page in the name's node */
        if (ckpt_rtxn_leaf_node(tx, name, why, n) != 0)
            return -1;
        if (!in_name_node(name, p, item->mv_size)) {
            snprintf(why, n, "an owner id lies outside its name's node on page %zu", pgno);
            return -1;
        }
        return 0;
    }
    uint16_t off = (uint16_t)(p - page);
    if (h.flags != (PG_LEAF | PG_LEAF2)) {
        snprintf(why, n, "page %zu has flags 0x%x, not a packed leaf's", pgno, h.flags);
        return -1;
    }
    if (off < PG_HDR || (off - PG_HDR) % item->mv_size != 0 ||
        (off - PG_HDR) / item->mv_size >= (size_t)(h.lower - PG_HDR) / 2) {
        snprintf(why, n, "page %zu has free space %u..%u and an owner id at %u", pgno, h.lower,
                 h.upper, off);
        return -1;
    }
    return 0;
}

/* (store_int.h) An owner LMDB's cursor returned: the item itself
 * (dup_item), and the page the cursor searched. LMDB trusts a packed
 * page's item count, so a damaged count makes it search on past the
 * page's end, into whatever pages follow, and the owner it returns (or
 * the neighbours of one it misses) may lie on a sound page there.
 * MDB_GET_MULTIPLE gives the items of the page the cursor is on: they
 * must lie on that page (its header sound, packed leaf, as many items as
 * its count says and the page holds) or in the name's node (a sub-page),
 * and hold the item. Leaves the cursor on that page's last item. */
int ckpt_rtxn_dup_page(const ckpt_rtxn *tx, MDB_cursor *c, const MDB_val *name,
                       const MDB_val *item, char *why, size_t n)
{
    const size_t psize = tx->st->psize;
    MDB_val k, all = {0, NULL};
    if (tx->map_lo == NULL || psize < 512 || item->mv_size == 0)
        return 0;
    if (dup_item(tx, name, item, why, n) != 0)
        return -1;
    int rc = mdb_cursor_get(c, &k, &all, MDB_GET_MULTIPLE);
    if (rc != 0) {
        snprintf(why, n, "the owners' page of the name cannot be read back (%s)",
                 mdb_strerror(rc));
        return -1;
    }
    if (all.mv_data == NULL)
        return 0; /* LMDB's sub-cursor is not on an item (it says nothing then) */
    const char *lo = all.mv_data, *p = item->mv_data, *nk = name->mv_data;
    if (!ckpt_rtxn_in_map(tx, &all) || all.mv_size % item->mv_size != 0 || p < lo ||
        (size_t)(p - lo) + item->mv_size > all.mv_size || lo - PG_HDR < tx->map_lo) {
        snprintf(why, n, "the owners' page counts %zu bytes of owner ids, not holding the one "
                 "found", all.mv_size);
        return -1;
    }
    const char *sub = lo - PG_HDR;
    size_t pgno = (size_t)(sub - tx->map_lo) / psize;
    const char *page = tx->map_lo + pgno * psize;
    if (sub != page) { /* a sub-page: inside the name's node, checked there */
        if (nk < page || nk >= page + psize) {
            snprintf(why, n, "owner ids on page %zu outside their name's node", pgno);
            return -1;
        }
        if (ckpt_rtxn_leaf_node(tx, name, why, n) != 0)
            return -1;
        if (!in_name_node(name, sub, PG_HDR + all.mv_size)) {
            snprintf(why, n, "owner ids lie outside their name's node on page %zu", pgno);
            return -1;
        }
        return 0;
    }
    struct pg_hdr h;
    if (page_hdr(tx, lo, &pgno, &page, &h, why, n) != 0)
        return -1;
    if (h.flags != (PG_LEAF | PG_LEAF2) ||
        all.mv_size != (size_t)(h.lower - PG_HDR) / 2 * item->mv_size ||
        all.mv_size > psize - PG_HDR) {
        snprintf(why, n, "page %zu (flags 0x%x, free space %u..%u) counts %zu owner ids, more "
                 "than it holds", pgno, h.flags, h.lower, h.upper, all.mv_size / item->mv_size);
        return -1;
    }
    return 0;
}

/* (store_int.h) The owners around the search's: the first at or after it
 * (MDB_GET_BOTH_RANGE, or the name's last), and the one before it. */
int ckpt_rtxn_dup_absent_checked(const ckpt_rtxn *tx, MDB_cursor *c, const MDB_val *name,
                                 const MDB_val *item, char *why, size_t n)
{
    MDB_val k = *name, d = *item;
    int last = 0, rc = mdb_cursor_get(c, &k, &d, MDB_GET_BOTH_RANGE);
    if (rc == MDB_NOTFOUND) {
        k = *name;
        if ((rc = mdb_cursor_get(c, &k, &d, MDB_SET_KEY)) == MDB_NOTFOUND) {
            snprintf(why, n, "the name is found, then not");
            return CKPT_LOOKUP_DAMAGED;
        }
        if (rc == 0)
            rc = mdb_cursor_get(c, &k, &d, MDB_LAST_DUP);
        last = 1;
    }
    if (rc)
        return rc;
    if (ckpt_rtxn_dup_page(tx, c, &k, &d, why, n) != 0)
        return CKPT_LOOKUP_DAMAGED;
    if (d.mv_size == item->mv_size && memcmp(d.mv_data, item->mv_data, d.mv_size) == 0) {
        snprintf(why, n, "a range search finds the owner");
        return CKPT_LOOKUP_DAMAGED;
    }
    if (last)
        return MDB_NOTFOUND;
    /* back to the range search's owner (the page's check moved the
     * cursor), then the one before it */
    k = *name;
    d = *item;
    if ((rc = mdb_cursor_get(c, &k, &d, MDB_GET_BOTH_RANGE)) != 0)
        return rc;
    if ((rc = mdb_cursor_get(c, &k, &d, MDB_PREV_DUP)) == 0 &&
        ckpt_rtxn_dup_page(tx, c, &k, &d, why, n) != 0)
        return CKPT_LOOKUP_DAMAGED;
    return rc == 0 || rc == MDB_NOTFOUND ? MDB_NOTFOUND : rc;
}

/* A key LMDB returned is not a node of a sound leaf page: why says so. */
static int neighbour_damaged(const ckpt_rtxn *tx, const MDB_val *at, char *why, size_t n)
{
    if (!ckpt_rtxn_in_map(tx, at)) {
        snprintf(why, n, "a neighbour key of %zu bytes lies outside the file", at->mv_size);
        return 1;
    }
    return ckpt_rtxn_leaf_node(tx, at, why, n) != 0;
}

/* (store_int.h) The keys around the search key: the first at or after it
 * (MDB_SET_RANGE on cursor c, or the last key), and the key before it, as
 * the search may have run off its leaf onto the next one. The search key
 * itself there means LMDB's two searches disagree. */
int ckpt_rtxn_absent_checked(const ckpt_rtxn *tx, MDB_cursor *c, const MDB_val *k, char *why,
                             size_t n)
{
    MDB_val at = *k, d;
    int last = 0, rc;
    if ((rc = mdb_cursor_get(c, &at, &d, MDB_SET_RANGE)) == MDB_NOTFOUND) {
        rc = mdb_cursor_get(c, &at, &d, MDB_LAST);
        last = 1;
    }
    if (rc)
        return rc; /* MDB_NOTFOUND: an empty database */
    if (neighbour_damaged(tx, &at, why, n))
        return CKPT_LOOKUP_DAMAGED;
    if (at.mv_size == k->mv_size && memcmp(at.mv_data, k->mv_data, k->mv_size) == 0) {
        snprintf(why, n, "a range search finds the key");
        return CKPT_LOOKUP_DAMAGED;
    }
    if (!last && (rc = mdb_cursor_get(c, &at, &d, MDB_PREV)) == 0 &&
        neighbour_damaged(tx, &at, why, n))
        return CKPT_LOOKUP_DAMAGED;
    return rc == 0 || rc == MDB_NOTFOUND ? MDB_NOTFOUND : rc;
}

int ckpt_rtxn_missed(ckpt_rtxn *tx, int db, const char *what, const char *why)
{
    return ckpt_seterr(tx->st, CKPT_E_CORRUPT, 0, "%s/data.mdb: rank %d, database %s: %s found "
                       "nothing on a damaged page (%s): the answer is not given",
                       tx->st->path, tx->st->opts.rank, ckpt_db_name(db), what, why);
}
