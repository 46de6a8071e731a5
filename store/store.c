/*
 * store.c - opening, staging, committing and closing a rank's environment.
 *
 * The batch: every mutation is appended, in order, to an in-memory log of
 * operations (st->log). A commit opens one LMDB write transaction, applies
 * the whole log, writes the meta record and commits. LMDB binds a write
 * transaction to the thread that began it (its writer lock is a thread-owned
 * mutex), so holding one open across hook calls from several server threads
 * is not possible; staging instead keeps the same all-or-nothing batch while
 * letting whichever thread hits the commit policy (or the background thread)
 * commit, and makes "abort, grow the map, replay the batch" a loop.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "bulki.h"
#include "ckpt_fs.h"
#include "store_int.h"


/* ------------------------------------------------------------------ */
/* Applying staged operations inside a write transaction               */
/* ------------------------------------------------------------------ */

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

/* Index key of an object record (namekey . ts) or container record. */
static size_t rec_index_key(uint8_t *out, int is_obj, const void *rec, size_t len,
                            uint64_t *cont_id)
{
    const char *name;
    size_t nlen, n;
    int32_t ts;
    uint64_t cid = 0;
    if (is_obj) {
        if (ckpt_rec_obj_name(&name, &nlen, &ts, &cid, rec, len) != 0)
            return 0;
    } else if (ckpt_rec_cont_name(&name, &nlen, rec, len) != 0) {
        return 0;
    }
    if ((n = ckpt_key_name(out, name, nlen)) == 0)
        return 0;
    if (is_obj) {
        ckpt_key_i32(out + n, ts);
        n += 4;
    }
    if (cont_id)
        *cont_id = cid;
    return n;
}

/* Put a name-index entry ikey -> id. For hashed (long) names, an entry that
 * names another id whose record carries a different name is a hash
 * collision: refuse rather than overwrite it. */
static int put_index(ckpt_store *st, MDB_txn *txn, int is_obj, const uint8_t *ikey, size_t ilen,
                     const uint8_t id8[8])
{
    MDB_dbi dbi = st->dbi[is_obj ? CKPT_DB_OBJ_NAME : CKPT_DB_CONT_NAME];
    MDB_val k = {ilen, (void *)ikey}, v = {8, (void *)id8};
    int hashed = 0;
    int rc = ckpt_put_rec(st, txn, dbi, &k, &v, MDB_NOOVERWRITE);
    if (rc != MDB_KEYEXIST)
        return rc;
    ckpt_key_name_len(ikey, ilen, &hashed);
    if (hashed && v.mv_size == 8 && memcmp(v.mv_data, id8, 8) != 0) {
        MDB_val ok = {8, v.mv_data}, orec, nk = {8, (void *)id8}, nrec;
        MDB_dbi rdbi = st->dbi[is_obj ? CKPT_DB_OBJ : CKPT_DB_CONT];
        if (mdb_get(txn, rdbi, &ok, &orec) == 0 && mdb_get(txn, rdbi, &nk, &nrec) == 0) {
            const char *n1, *n2;
            unseal(st, &orec);
            unseal(st, &nrec);
            size_t l1, l2;
            int32_t ts;
            uint64_t c;
            int r1 = is_obj ? ckpt_rec_obj_name(&n1, &l1, &ts, &c, orec.mv_data, orec.mv_size)
                            : ckpt_rec_cont_name(&n1, &l1, orec.mv_data, orec.mv_size);
            int r2 = is_obj ? ckpt_rec_obj_name(&n2, &l2, &ts, &c, nrec.mv_data, nrec.mv_size)
                            : ckpt_rec_cont_name(&n2, &l2, nrec.mv_data, nrec.mv_size);
            if (r1 == 0 && r2 == 0 && (l1 != l2 || memcmp(n1, n2, l1) != 0))
                return -1; /* collision, reported by the caller */
        }
    }
    v.mv_size = 8;
    v.mv_data = (void *)id8;
    return ckpt_put_sealed(st, txn, dbi, &k, &v, 0);
}

/* Put obj/cont record; drop the old record's index entry if its name
 * changed; then index the new name. */
static int put_named(ckpt_store *st, MDB_txn *txn, int is_obj, const uint8_t *k,
                     const uint8_t *a, size_t alen, const uint8_t *v, size_t vlen)
{
    MDB_dbi dbi = st->dbi[is_obj ? CKPT_DB_OBJ : CKPT_DB_CONT];
    MDB_dbi idbi = st->dbi[is_obj ? CKPT_DB_OBJ_NAME : CKPT_DB_CONT_NAME];
    MDB_val key = {8, (void *)k}, val = {vlen, (void *)v};
    int rc = ckpt_put_rec(st, txn, dbi, &key, &val, MDB_NOOVERWRITE);
    if (rc == MDB_KEYEXIST) {
        uint8_t old[CKPT_NAMEKEY_MAX + 4];
        size_t on = rec_index_key(old, is_obj, val.mv_data, val.mv_size, NULL);
        if (on > 0 && (on != alen || memcmp(old, a, on) != 0) &&
            (rc = del_index_if(st, txn, idbi, old, on, k)) != 0)
            return rc;
        val.mv_size = vlen;
        val.mv_data = (void *)v;
        rc = ckpt_put_sealed(st, txn, dbi, &key, &val, 0);
    }
    if (rc)
        return rc;
    return put_index(st, txn, is_obj, a, alen, k);
}

static int del_named(ckpt_store *st, MDB_txn *txn, int is_obj, const uint8_t *k)
{
    MDB_dbi dbi = st->dbi[is_obj ? CKPT_DB_OBJ : CKPT_DB_CONT];
    MDB_val key = {8, (void *)k}, val;
    int rc = mdb_get(txn, dbi, &key, &val);
    if (rc == 0) {
        uint8_t ik[CKPT_NAMEKEY_MAX + 4], mk[16];
        unseal(st, &val);
        uint64_t cont_id = 0;
        size_t n = rec_index_key(ik, is_obj, val.mv_data, val.mv_size, &cont_id);
        if (n > 0 &&
            (rc = del_index_if(st, txn, st->dbi[is_obj ? CKPT_DB_OBJ_NAME : CKPT_DB_CONT_NAME], ik,
                               n, k)) != 0)
            return rc;
        if (is_obj && cont_id != 0) {
            ckpt_key_u64(mk, cont_id);
            memcpy(mk + 8, k, 8);
            if ((rc = ckpt_del_quiet(txn, st->dbi[CKPT_DB_CONT_OBJ], mk, 16)) != 0)
                return rc;
        }
        if ((rc = mdb_del(txn, dbi, &key, NULL)) != 0)
            return rc;
    } else if (rc != MDB_NOTFOUND) {
        return rc;
    }
    if ((rc = del_prefix(st, txn, CKPT_DB_KVTAG, k, 8)) != 0)
        return rc;
    return del_prefix(st, txn, is_obj ? CKPT_DB_REGION : CKPT_DB_CONT_OBJ, k, 8);
}

static int apply_op(ckpt_store *st, MDB_txn *txn, const struct op_hdr *h, const uint8_t *k,
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

static size_t op_size(const struct op_hdr *h)
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

/* Apply the run of consecutive kvtag puts starting at st->log + *off (at
 * most `left` ops) in key order. Puts of distinct keys commute and puts of
 * one key keep their order, so the result is the same as in log order; but
 * a server adds an object's tags in its own order ("tag0", "tag1", "tag10",
 * ...), and sorted they append to the kvtag database (full pages, see
 * ckpt_put_append). Advances *off and *done past the run. */
static int apply_kvtag_run(ckpt_store *st, MDB_txn *txn, size_t *off, size_t *done, size_t left)
{
    size_t n = 0, o = *off;
    while (n < left && ((const struct op_hdr *)(st->log + o))->kind == OP_PUT_KVTAG) {
        const struct op_hdr *h = (const struct op_hdr *)(st->log + o);
        if (n == st->run_cap) {
            size_t ncap = st->run_cap ? 2 * st->run_cap : 256;
            struct run_ent *nr = realloc(st->run, ncap * sizeof *nr);
            if (nr == NULL)
                break; /* apply what was gathered, sorted; the rest comes next */
            st->run = nr;
            st->run_cap = ncap;
        }
        st->run[n].h = h;
        st->run[n].seq = n;
        n++;
        o += op_size(h);
    }
    if (n == 0) { /* no memory for even one entry: apply it unsorted */
        const struct op_hdr *h = (const struct op_hdr *)(st->log + o);
        const uint8_t *k = (const uint8_t *)(h + 1);
        *off = o + op_size(h);
        (*done)++;
        return apply_op(st, txn, h, k, k + h->klen, k + h->klen + h->alen);
    }
    if (n > 1)
        qsort(st->run, n, sizeof *st->run, run_cmp);
    for (size_t i = 0; i < n; i++) {
        const struct op_hdr *h = st->run[i].h;
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
        const struct op_hdr *h = st->run[i].h;
        rc = ckpt_tagidx_log(st, TAGIDX_OP_PUT, ik, tagidx_key(ik, (const uint8_t *)(h + 1), h->klen));
    }
    if (rc)
        return rc;
    *off = o;
    *done += n;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Commit                                                              */
/* ------------------------------------------------------------------ */

static int put_meta(ckpt_store *st, MDB_txn *txn, const struct ckpt_store_info *m)
{
    uint8_t buf[512];
    size_t len;
    if (ckpt_meta_encode(buf, sizeof buf, &len, m) != 0)
        return EINVAL;
    MDB_val key = {strlen(CKPT_META_KEY), CKPT_META_KEY}, val = {len, buf};
    return ckpt_put_sealed(st, txn, st->dbi[CKPT_DB_META], &key, &val, 0);
}

static int grow_map(ckpt_store *st)
{
    size_t want = st->map_size * 2;
    while (want < st->map_size + 4 * st->log_len)
        want *= 2;
    pthread_rwlock_wrlock(&st->grow);
    int rc = mdb_env_set_mapsize(st->env, want);
    st->map_base = NULL; /* remapped */
    pthread_rwlock_unlock(&st->grow);
    if (rc == 0) {
        MDB_envinfo ei;
        mdb_env_info(st->env, &ei);
        st->map_size = ei.me_mapsize;
    }
    return rc;
}

/* LMDB reports a short page write as EIO ("short write, filesystem
 * full?"), and on a regular file a short write is the end of the space: a
 * full file system or the file-size limit (a write that fits no byte gets
 * ENOSPC/EFBIG itself). Says which, if either is the case now. */
static int short_write_cause(const ckpt_store *st, char *why, size_t n)
{
    char data[4200];
    struct stat sb;
    struct rlimit rl;
    struct statvfs fs;
    snprintf(data, sizeof data, "%s/data.mdb", st->path);
    if (stat(data, &sb) != 0)
        return 0;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (unsigned long long)sb.st_size >= (unsigned long long)rl.rlim_cur) {
        snprintf(why, n, ": no space left: data.mdb reached the file size limit (RLIMIT_FSIZE) "
                 "of %llu bytes", (unsigned long long)rl.rlim_cur);
        return 1;
    }
    if (statvfs(st->path, &fs) == 0 && (unsigned long long)fs.f_bavail * fs.f_frsize < (1ull << 20)) {
        snprintf(why, n, ": no space left: the file system has %llu bytes free",
                 (unsigned long long)fs.f_bavail * fs.f_frsize);
        return 1;
    }
    return 0;
}

/* Whether enough was committed since the last sync for the background
 * thread to sync now (interval and close modes). */
static int sync_due(const ckpt_store *st)
{
    return st->opts.sync_kb && st->bytes_since_sync >= (size_t)st->opts.sync_kb << 10;
}

/* End a write transaction: abort it after an error (rc), else commit it.
 * The commit's result; when the map was full, it is grown and *again
 * says to run the transaction again. *what names the step that failed. */
static int txn_finish(ckpt_store *st, MDB_txn *txn, int rc, const char *volatile *what, int *again)
{
    *again = 0;
    if (rc) {
        mdb_txn_abort(txn);
    } else {
        *what = "mdb_txn_commit";
        rc = mdb_txn_commit(txn);
    }
    if (rc != MDB_MAP_FULL)
        return rc;
    if ((rc = grow_map(st)) != 0) {
        *what = "mdb_env_set_mapsize";
        return rc;
    }
    *again = 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Tag-index merge (format 3, tagidx.c "Format 3: the delta")          */
/* ------------------------------------------------------------------ */

static const int no_stop = 0;

/* Entries a merge slice takes (whole chunks, so a little more). */
#define MERGE_SLICE 65536u

static unsigned merge_threshold(const ckpt_store *st)
{
    return st->opts.tagidx_merge ? st->opts.tagidx_merge : CKPT_TAGIDX_MERGE_DEFAULT;
}

/* Whether the delta is due for a merge: as many entries as the threshold,
 * or (by_age) any that waited sync_ms (1 s if 0). After a failed merge: a
 * damaged chunk never again (merge_err says why, reads report it), other
 * errors (a full disk) a second later. */
static int merge_due(const ckpt_store *st, int by_age)
{
    if (!st->has_delta || st->delta_pending == 0)
        return 0;
    uint64_t now = ckpt_mono_ms();
    if (st->merge_err && (st->merge_err == CKPT_E_CORRUPT || now - st->merge_err_ms < 1000))
        return 0;
    if (st->delta_pending >= merge_threshold(st))
        return 1;
    unsigned wait = st->opts.sync_ms ? st->opts.sync_ms : 1000;
    return by_age && now - st->delta_since_ms >= wait;
}

/* One merge transaction under st->mu: 0 (*more: chunks remain), ECANCELED
 * when *stop rose (nothing merged), else a CKPT_E_* error, also kept in
 * merge_err. */
static int merge_slice_locked(ckpt_store *st, const int *stop, int *more)
{
    char where[200] = "";
    const char *volatile what = "mdb_txn_begin";
    uint64_t merged = 0;
    int again;
    MDB_txn *txn = NULL;
    struct ckpt_guard g;
    int rc;
    *more = 0;
    if ((rc = ckpt_store_check_failed(st)) != 0)
        return rc;
    ckpt_guard_push(&g);
    if (sigsetjmp(g.jb, 0) != 0) {
        /* as in commit_locked: the transaction is abandoned where it was */
        ckpt_guard_pop(&g);
        ckpt_poison_env(st->path);
        st->merge_err = CKPT_E_CORRUPT;
        st->merge_err_ms = ckpt_mono_ms();
        return ckpt_store_faulted(st, &g, "merging the tag index (a damaged page)");
    }
    for (;;) {
        rc = mdb_txn_begin(st->env, NULL, 0, &txn);
        if (rc)
            break;
        what = "merge";
        rc = ckpt_tagidx_merge(st, txn, MERGE_SLICE, stop, &merged, more, where, sizeof where);
        if ((rc = txn_finish(st, txn, rc, &what, &again)) != 0 || !again)
            break;
    }
    ckpt_guard_pop(&g);
    if (rc == ECANCELED)
        return rc;
    if (rc) {
        if (rc == MDB_PANIC)
            __atomic_store_n(&st->failed, 1, __ATOMIC_RELEASE);
        int code = rc == MDB_CORRUPTED ? CKPT_E_CORRUPT : ckpt_map_lmdb(rc);
        st->merge_err = code;
        st->merge_err_ms = ckpt_mono_ms();
        if (rc == MDB_CORRUPTED && where[0])
            return ckpt_seterr(st, code, 0, "%s/data.mdb: merging the tag index: %s %s: the "
                               "database is damaged; its entries stay unmerged", st->path,
                               CKPT_DELTA_DB, where);
        return ckpt_seterr(st, code, rc, "%s/data.mdb: merging the tag index failed at %s; its "
                           "entries stay in %s", st->path, what, CKPT_DELTA_DB);
    }
    st->merge_err = 0;
    if (*more) {
        st->delta_pending = st->delta_pending > merged ? st->delta_pending - merged : 0;
    } else {
        st->delta_pending = 0;
        st->delta_since_ms = 0;
    }
    st->commits_since_sync++;
    return 0;
}

/* Merge every chunk, a slice at a time, with st->mu held, until *stop
 * rises. With `yield`, st->mu is let go between slices (the background
 * thread: the server's mutations get in). *merged: whether a slice was
 * merged. 0, ECANCELED, or a merge's error (kept in merge_err). */
static int merge_all_locked(ckpt_store *st, const int *stop, int yield, int *merged)
{
    int more = 1, rc = 0;
    *merged = 0;
    while (more && st->delta_pending > 0 && !__atomic_load_n(stop, __ATOMIC_ACQUIRE) &&
           (rc = merge_slice_locked(st, stop, &more)) == 0) {
        *merged = 1;
        if (more && yield) {
            pthread_mutex_unlock(&st->mu);
            pthread_mutex_lock(&st->mu);
        }
    }
    return rc;
}

/* Apply the whole batch and commit it, growing the map as needed. Called
 * with st->mu held. `force` commits even an empty batch (meta changes). */
static int commit_locked(ckpt_store *st, int force)
{
    struct ckpt_store_info m;
    const char *volatile what = "begin";
    int rc, again;

    struct ckpt_guard g;
    if ((rc = ckpt_store_check_failed(st)) != 0)
        return rc;
    if (st->nops == 0 && !force)
        return 0;
    ckpt_guard_push(&g);
    if (sigsetjmp(g.jb, 0) != 0) {
        /* LMDB faulted inside the write transaction: it is abandoned where
         * it was (its cursors may be linked from dead stack frames, so not
         * even mdb_txn_abort is safe), and LMDB's writer mutex stays held by
         * this thread until the process ends. The batch stays staged; the
         * handle is failed, and the environment is not opened for writing
         * again in this process (poison_env). */
        ckpt_guard_pop(&g);
        ckpt_poison_env(st->path);
        st->last_commit_err = CKPT_E_CORRUPT;
        return ckpt_store_faulted(st, &g, "committing (the write transaction read a damaged page)");
    }
    uint64_t seq = st->delta_seq;
    for (;;) {
        MDB_txn *txn;
        size_t off = 0, done = 0;
        st->dbuf_len = 0;
        st->dbuf_n = 0;
        seq = st->delta_seq;
        m = st->meta;
        m.mutations += st->nops;
        m.commits++;
        m.last_commit_ms = (int64_t)ckpt_now_ms();
        what = "mdb_txn_begin";
        rc = mdb_txn_begin(st->env, NULL, 0, &txn);
        if (rc)
            break;
        what = "apply";
        while (rc == 0 && done < st->nops) {
            const struct op_hdr *h = (const struct op_hdr *)(st->log + off);
            const uint8_t *k = st->log + off + sizeof *h;
            if (h->kind == OP_PUT_KVTAG) {
                rc = apply_kvtag_run(st, txn, &off, &done, st->nops - done);
                continue;
            }
            const uint8_t *a = k + h->klen;
            const uint8_t *v = a + h->alen;
            rc = apply_op(st, txn, h, k, a, v);
            if (rc == -1) {
                mdb_txn_abort(txn);
                st->last_commit_err = CKPT_E_COLLISION;
                return ckpt_seterr(st, CKPT_E_COLLISION, 0,
                                   "%s: two long names hash to the same key in %s; batch kept",
                                   st->path, h->kind == OP_PUT_OBJ ? "obj_name" : "cont_name");
            }
            off += op_size(h);
            done++;
        }
        if (rc == 0 && st->dbuf_n > 0) {
            what = "kvtag_delta";
            rc = ckpt_tagidx_log_flush(st, txn, &seq);
        }
        if (rc == 0) {
            what = "meta";
            rc = put_meta(st, txn, &m);
        }
        if ((rc = txn_finish(st, txn, rc, &what, &again)) != 0 || !again)
            break;
    }
    ckpt_guard_pop(&g);
    if (rc) {
        int code = ckpt_map_lmdb(rc);
        char why[160] = "";
        if (rc == MDB_PANIC)
            __atomic_store_n(&st->failed, 1, __ATOMIC_RELEASE);
        if (rc == EIO && short_write_cause(st, why, sizeof why))
            code = CKPT_E_NOSPACE;
        st->last_commit_err = code;
        st->failed_nops = st->nops;
        st->failed_ms = ckpt_mono_ms();
        return ckpt_seterr(st, code, rc, "%s/data.mdb: commit of %zu staged mutations failed at %s; "
                           "they stay staged%s", st->path, st->nops, what, why);
    }
    st->meta = m;
    st->id_seq_committed = m.id_seq;
    st->delta_seq = seq;
    if (st->dbuf_n > 0) {
        st->delta_pending += st->dbuf_n;
        if (st->delta_since_ms == 0)
            st->delta_since_ms = ckpt_mono_ms();
        if (merge_due(st, 0)) {
            int merged;
            if (st->closing)
                ; /* close does not merge: the delta stays for the next writer */
            else if (st->bg_running)
                pthread_cond_signal(&st->bg_cv);
            else /* no background thread: here; an error stays in merge_err */
                merge_all_locked(st, &no_stop, 0, &merged);
        }
    }
    st->dbuf_len = 0;
    st->dbuf_n = 0;
    st->commits_since_sync++;
    st->bytes_since_sync += st->log_len;
    if (st->opts.sync_mode != CKPT_SYNC_EVERY && sync_due(st))
        pthread_cond_signal(&st->bg_cv);
    st->log_len = 0;
    st->nops = 0;
    st->last_commit_err = 0;
    return 0;
}

/* Every retry of a failed commit re-applies the whole staged batch, so the
 * commit policy retries only once the batch has doubled or a second has
 * passed (checkpoint and close always retry): on a full disk a mutation
 * then costs O(1) amortized instead of a stall growing with the batch. */
static int retry_due(const ckpt_store *st)
{
    return st->last_commit_err == 0 || st->nops >= 2 * st->failed_nops ||
           ckpt_mono_ms() - st->failed_ms >= 1000;
}

/* ------------------------------------------------------------------ */
/* Background thread: time-based commits and periodic syncs            */
/* ------------------------------------------------------------------ */

/* A background sync, with st->mu held on entry and exit (not during the
 * fdatasync); returns when it ended (mono ms). */
static uint64_t bg_sync(ckpt_store *st)
{
    struct ckpt_durable_tok tok;
    st->commits_since_sync = 0;
    st->bytes_since_sync = 0;
    ckpt_durable_begin(st, &tok); /* the snapshot this sync records (durable.c) */
    pthread_mutex_unlock(&st->mu);
    ckpt_durable_end(st, &tok);   /* fdatasync, then the sync record */
    pthread_mutex_lock(&st->mu);
    return ckpt_mono_ms();
}

enum { BG_EXIT = 1, BG_RELEASE = 2 };
static void *release_main(void *arg);

static void *bg_main(void *arg)
{
    ckpt_store *st = arg;
    uint64_t last_sync = ckpt_mono_ms();
    pthread_mutex_lock(&st->mu);
    while (!__atomic_load_n(&st->bg_stop, __ATOMIC_ACQUIRE)) {
        unsigned tick = 1000;
        if (st->opts.commit_ms && st->opts.commit_ms < tick)
            tick = st->opts.commit_ms;
        if (st->opts.sync_mode != CKPT_SYNC_EVERY && st->opts.sync_ms && st->opts.sync_ms < tick)
            tick = st->opts.sync_ms;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += tick / 1000;
        ts.tv_nsec += (long)(tick % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&st->bg_cv, &st->mu, &ts);
        if (__atomic_load_n(&st->bg_stop, __ATOMIC_ACQUIRE))
            break;
        uint64_t now = ckpt_mono_ms();
        if (st->opts.commit_ms && st->nops && now - st->batch_start_ms >= st->opts.commit_ms &&
            retry_due(st))
            commit_locked(st, 0); /* an error stays in last_commit_err/errmsg */
        if (st->opts.sync_mode != CKPT_SYNC_EVERY && st->commits_since_sync &&
            (now - last_sync >= st->opts.sync_ms || sync_due(st)))
            last_sync = bg_sync(st);
        if (merge_due(st, 1)) {
            /* The tag index's delta, a slice at a time (others get st->mu
             * in between); close stops it at once (bg_stop: the slice's
             * transaction is abandoned, its chunks stay for the next
             * merge). Then sync, so that close does not have to write the
             * pages the merge rewrote. */
            int merged;
            merge_all_locked(st, &st->bg_stop, 1, &merged); /* an error stays in merge_err */
            if (merged && st->opts.sync_mode != CKPT_SYNC_EVERY &&
                !__atomic_load_n(&st->bg_stop, __ATOMIC_ACQUIRE))
                last_sync = bg_sync(st);
        }
    }
    pthread_mutex_unlock(&st->mu);
    /* Stopped: wait for the verdict. After a successful close the handle
     * is released here, so that close neither waits for this thread's last
     * step nor starts a thread of its own (release_later). */
    while (sem_wait(&st->bg_sem) != 0)
        ; /* EINTR */
    if (__atomic_load_n(&st->bg_verdict, __ATOMIC_ACQUIRE) == BG_RELEASE) {
        /* Woken by the closer, this thread may have taken its CPU: give it
         * back, so that close returns before the unmapping starts. */
        sched_yield();
        release_main(st);
    }
    return NULL;
}

static void bg_start(ckpt_store *st)
{
    if (st->opts.readonly || (st->opts.commit_ms == 0 && st->opts.sync_mode == CKPT_SYNC_EVERY))
        return;
    __atomic_store_n(&st->bg_stop, 0, __ATOMIC_RELEASE);
    if (pthread_create(&st->bg, NULL, bg_main, st) == 0)
        st->bg_running = 1;
}

/* Ask the background thread to stop; it does once its current step (a
 * commit, or a sync) is over. */
static void bg_request_stop(ckpt_store *st)
{
    if (!st->bg_running)
        return;
    /* first without st->mu, which a merge holds: it reads bg_stop as it
     * goes and gives up at once */
    __atomic_store_n(&st->bg_stop, 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&st->mu);
    pthread_cond_signal(&st->bg_cv);
    pthread_mutex_unlock(&st->mu);
}

static void bg_stop(ckpt_store *st)
{
    if (!st->bg_running)
        return;
    bg_request_stop(st);
    __atomic_store_n(&st->bg_verdict, BG_EXIT, __ATOMIC_RELEASE);
    sem_post(&st->bg_sem);
    pthread_join(st->bg, NULL);
    st->bg_running = 0;
}

/* ------------------------------------------------------------------ */
/* Open / close                                                        */
/* ------------------------------------------------------------------ */

/* Drop writer.lock and store.lock (closing their descriptors drops the
 * flocks); a second call does nothing. */
static void drop_locks(ckpt_store *st)
{
    if (st->writer_fd >= 0)
        close(st->writer_fd);
    if (st->root_fd >= 0)
        close(st->root_fd);
    st->writer_fd = st->root_fd = -1;
}

static void release(ckpt_store *st)
{
    ckpt_durable_release(st);
    if (st->env)
        mdb_env_close(st->env);
    drop_locks(st);
    pthread_mutex_destroy(&st->mu);
    pthread_rwlock_destroy(&st->grow);
    pthread_cond_destroy(&st->bg_cv);
    sem_destroy(&st->bg_sem);
    free(st->log);
    free(st->run);
    free(st->dbuf);
    free(st->path);
    free(st);
}

/* Closed writers whose environment a thread is still unmapping
 * (release_later). Every open waits for them first, as LMDB must not have
 * one environment open twice in a process (its fcntl locks are per
 * process); so do fork (a child would wait for threads it does not have)
 * and process exit (atexit), and ckpt_store_wait_closed on request. The
 * threads are joined there, never detached, so that none is left running
 * into a fork or an exit. */
static pthread_mutex_t rel_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rel_cv = PTHREAD_COND_INITIALIZER;
static pthread_t rel_threads[64]; /* started, not joined yet */
static unsigned rel_n;
static unsigned rel_pending;      /* releases not finished yet */
static pthread_once_t rel_once = PTHREAD_ONCE_INIT;

void ckpt_store_wait_closed(void)
{
    pthread_mutex_lock(&rel_mu);
    while (rel_n > 0) {
        pthread_t t = rel_threads[--rel_n];
        pthread_mutex_unlock(&rel_mu);
        pthread_join(t, NULL);
        pthread_mutex_lock(&rel_mu);
    }
    while (rel_pending) /* popped by a concurrent caller, still running */
        pthread_cond_wait(&rel_cv, &rel_mu);
    pthread_mutex_unlock(&rel_mu);
}

static void rel_prefork(void)
{
    pthread_mutex_lock(&rel_mu);
    while (rel_n || rel_pending) { /* a close on another thread may add one */
        pthread_mutex_unlock(&rel_mu);
        ckpt_store_wait_closed();
        pthread_mutex_lock(&rel_mu);
    }
}
static void rel_postfork(void)
{
    pthread_mutex_unlock(&rel_mu);
}
static void rel_init(void)
{
    (void)pthread_atfork(rel_prefork, rel_postfork, rel_postfork);
    (void)atexit(ckpt_store_wait_closed);
}

static void *release_main(void *arg)
{
    release(arg);
    pthread_mutex_lock(&rel_mu);
    if (--rel_pending == 0)
        pthread_cond_broadcast(&rel_cv);
    pthread_mutex_unlock(&rel_mu);
    return NULL;
}

/* Release a writer whose last commit is durable. Unmapping the
 * environment costs about 0.1 us per page the process touched (2 ms for
 * a 64 MB store) and is not needed for anything close promises, so a
 * thread does it while the caller goes on: the writer's background
 * thread, which close asked to stop (no thread to start, no wait for the
 * step it is finishing), or else a new one. The locks other processes
 * wait for, writer.lock and store.lock, are dropped here first: another
 * process may then open the environment while this one still maps it,
 * which LMDB allows (no transaction of this process is left). Inline if
 * no thread can take it. */
static void release_later(ckpt_store *st)
{
    int how = 0; /* 1: a new thread, 2: the background thread */
    drop_locks(st);
    pthread_once(&rel_once, rel_init);
    pthread_mutex_lock(&rel_mu);
    if (rel_n < sizeof rel_threads / sizeof rel_threads[0]) {
        if (st->bg_running) {
            rel_threads[rel_n] = st->bg;
            how = 2;
        } else if (pthread_create(&rel_threads[rel_n], NULL, release_main, st) == 0) {
            how = 1;
        }
        if (how) {
            rel_n++;
            rel_pending++;
        }
    }
    pthread_mutex_unlock(&rel_mu);
    if (how == 2) {
        __atomic_store_n(&st->bg_verdict, BG_RELEASE, __ATOMIC_RELEASE);
        sem_post(&st->bg_sem); /* st belongs to the thread now */
    } else if (how == 0) {
        bg_stop(st);
        release(st);
    }
}

/* Open the databases and read/create meta inside txn. */
static int open_schema(ckpt_store *st, MDB_txn *txn, int *fresh)
{
    const int rdonly = st->opts.readonly;
    MDB_val k = {strlen(CKPT_META_KEY), CKPT_META_KEY}, v;
    int rc = mdb_dbi_open(txn, "meta", 0, &st->dbi[CKPT_DB_META]);
    *fresh = 0;
    if (rc == MDB_NOTFOUND || rc == MDB_INCOMPATIBLE) {
        MDB_stat ms;
        MDB_dbi main_dbi;
        int empty = rc == MDB_NOTFOUND && mdb_dbi_open(txn, NULL, 0, &main_dbi) == 0 &&
                    mdb_stat(txn, main_dbi, &ms) == 0 && ms.ms_entries == 0;
        if (empty && !rdonly && st->opts.create) {
            *fresh = 1;
            rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &st->dbi[CKPT_DB_META]);
            if (rc)
                return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s: cannot create database meta", st->path);
        } else if (empty) {
            /* a writer killed between LMDB's setup and the store's first
             * commit: not another program's file, and no store either */
            return ckpt_seterr(NULL, CKPT_E_NOSTORE, 0, "%s/data.mdb: an empty LMDB environment: the "
                               "store's creation stopped before its first commit, so nothing was "
                               "committed", st->path);
        } else {
            return ckpt_seterr(NULL, CKPT_E_NOTSTORE, 0,
                               "%s/data.mdb: an LMDB environment without pdc-ckpt's meta database: "
                               "not a pdc-ckpt store", st->path);
        }
    } else if (rc) {
        return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cannot open database meta", st->path);
    }

    if (!*fresh) {
        size_t off = 0;
        rc = mdb_get(txn, st->dbi[CKPT_DB_META], &k, &v);
        if (rc == MDB_NOTFOUND) {
            /* format 4: a record there whose checksum holds for the key
             * "meta" is the meta record under a damaged key */
            MDB_cursor *mc;
            MDB_val dk, dv;
            int damaged = 0;
            if (mdb_cursor_open(txn, st->dbi[CKPT_DB_META], &mc) == 0) {
                for (int r = mdb_cursor_get(mc, &dk, &dv, MDB_FIRST); r == 0 && !damaged;
                     r = mdb_cursor_get(mc, &dk, &dv, MDB_NEXT))
                    damaged = ckpt_csum_check(k.mv_data, k.mv_size, dv.mv_data, dv.mv_size, NULL,
                                              NULL) == 0;
                mdb_cursor_close(mc);
            }
            if (damaged)
                return ckpt_seterr(NULL, CKPT_E_CORRUPT, 0, "%s/data.mdb: rank %d, database meta: "
                                   "the meta record is stored under a damaged key (its checksum "
                                   "holds for the key \"meta\")", st->path, st->opts.rank);
            return ckpt_seterr(NULL, CKPT_E_NOTSTORE, 0, "%s/data.mdb: meta database has no \"meta\" record: "
                               "not a pdc-ckpt store", st->path);
        }
        if (rc)
            return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/data.mdb: reading meta", st->path);
        /* Format 4's meta record ends with its checksum; an older one does
         * not (csum.h). One whose checksum holds is format 4 or later; one
         * whose checksum does not hold must decode whole as format 1 to 3
         * (a format 4 record with a damaged checksum does not: 4 bytes
         * trail its BULKI document, or it says 4). */
        uint32_t cs_stored = 0, cs_comp = 0;
        int sealed = ckpt_csum_check(k.mv_data, k.mv_size, v.mv_data, v.mv_size, &cs_stored,
                                     &cs_comp) == 0;
        int code = ckpt_meta_decode(&st->meta, v.mv_data, v.mv_size - (sealed ? CKPT_CSUM_LEN : 0),
                                    &off);
        if (code == 0 && st->meta.format_version <= CKPT_FORMAT_VERSION &&
            sealed != (st->meta.format_version >= CKPT_FORMAT_CSUM)) {
            if (!sealed)
                return ckpt_csum_error(st, "meta", k.mv_data, k.mv_size, v.mv_size, cs_stored,
                                       cs_comp, NULL, 0);
            return ckpt_seterr(NULL, CKPT_E_CORRUPT, 0, "%s/data.mdb: the meta record carries a "
                               "checksum but says format %u, which has none: it is damaged",
                               st->path, st->meta.format_version);
        }
        if (code != 0 && code != CKPT_E_NOTSTORE && !sealed && v.mv_size > CKPT_CSUM_LEN &&
            ckpt_meta_decode(&st->meta, v.mv_data, v.mv_size - CKPT_CSUM_LEN, &off) == 0 &&
            st->meta.format_version >= CKPT_FORMAT_CSUM &&
            st->meta.format_version <= CKPT_FORMAT_VERSION)
            /* a format 4 record whose bytes or checksum changed */
            return ckpt_csum_error(st, "meta", k.mv_data, k.mv_size, v.mv_size, cs_stored,
                                   cs_comp, NULL, 0);
        st->csum = sealed;
        if (code == CKPT_E_NOTSTORE)
            return ckpt_seterr(NULL, code, 0, "%s/data.mdb: meta record lacks the \"%s\" magic: "
                               "not a pdc-ckpt store", st->path, CKPT_FORMAT_MAGIC);
        if (code)
            return ckpt_seterr(NULL, CKPT_E_CORRUPT, 0, "%s/data.mdb: rank %d, database meta: "
                               "meta record is damaged (near byte %zu of %zu%s)", st->path,
                               st->opts.rank, off, v.mv_size,
                               sealed ? "" : "; no checksum holds for it");
        if (st->meta.format_version > CKPT_FORMAT_VERSION)
            return ckpt_seterr(NULL, CKPT_E_VERSION, 0, "%s: store format version %u is newer than "
                               "this build's version %u; use a newer pdc-ckpt", st->path,
                               st->meta.format_version, CKPT_FORMAT_VERSION);
        if (st->meta.format_version < 1)
            /* version 1 is the first: anything older was never written
             * by pdc-ckpt */
            return ckpt_seterr(NULL, CKPT_E_VERSION, 0, "%s: store format version %u is older than "
                               "this build's version %u and no migration exists for it", st->path,
                               st->meta.format_version, CKPT_FORMAT_VERSION);
        if (st->opts.check_rank && !rdonly &&
            (st->meta.rank != st->opts.rank || st->meta.nranks != st->opts.nranks))
            return ckpt_seterr(NULL, CKPT_E_MISMATCH, 0, "%s: store was written as rank %d of %d, "
                               "opened as rank %d of %d", st->path, st->meta.rank, st->meta.nranks,
                               st->opts.rank, st->opts.nranks);
    }
    /* Format 1's tag index is a plain database; format 2's is DUPSORT
     * (store/tagidx.c). */
    if (*fresh)
        st->csum = ckpt_csum_enabled();
    const unsigned version = *fresh ? (st->csum ? CKPT_FORMAT_VERSION : CKPT_FORMAT_CSUM - 1)
                                    : st->meta.format_version;
    for (int db = CKPT_DB_META + 1; db < CKPT_DB_COUNT; db++) {
        unsigned flags = rdonly ? 0 : MDB_CREATE;
        if (db == CKPT_DB_TAG_INDEX && version >= 2)
            flags |= CKPT_TAGIDX_FLAGS;
        rc = mdb_dbi_open(txn, ckpt_db_name(db), flags, &st->dbi[db]);
        if (rc == MDB_NOTFOUND && rdonly && db == CKPT_DB_PDC_SERVER) {
            /* written before pdc_server existed: no PDC server state */
            st->pdc_absent = 1;
            st->dbi[db] = st->dbi[CKPT_DB_META];
            continue;
        }
        if (rc)
            return ckpt_seterr(NULL, rc == MDB_NOTFOUND ? CKPT_E_CORRUPT : ckpt_map_lmdb(rc), rc,
                               "%s/data.mdb: cannot open database %s", st->path, ckpt_db_name(db));
    }
    unsigned tf = 0;
    if ((rc = mdb_dbi_flags(txn, st->dbi[CKPT_DB_TAG_INDEX], &tf)) != 0)
        return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cannot read the flags of "
                           "database kvtag_name", st->path);
    st->tagidx_dup = (tf & MDB_DUPSORT) != 0;
    if (st->tagidx_dup != (version >= 2))
        return ckpt_seterr(NULL, CKPT_E_CORRUPT, 0, "%s/data.mdb: database kvtag_name is %s, but "
                           "the store says format %u", st->path,
                           st->tagidx_dup ? "DUPSORT" : "not DUPSORT", version);
    /* Older formats: a reader reads them as they are; a writer (which holds
     * writer.lock) converts them here, in the open transaction, so the
     * conversion and the new version commit together or not at all. */
    if (!rdonly && version == 1) {
        if ((rc = ckpt_tagidx_migrate_v1(st, txn)) != 0)
            return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/data.mdb: converting the store "
                               "from format 1 to %u failed at the tag index; nothing was changed",
                               st->path, CKPT_FORMAT_CSUM - 1);
        st->meta.format_version = CKPT_FORMAT_CSUM - 1;
    }
    /* Format 3's tag-index delta (tagidx.c): a writer creates it in a
     * format 2 store (an empty delta is format 2's index as it is) and
     * counts what an earlier writer left unmerged; a reader of format 3
     * overlays it on every read of the tag index. */
    if (!rdonly || version >= 3) {
        rc = mdb_dbi_open(txn, CKPT_DELTA_DB, rdonly ? 0 : MDB_CREATE, &st->delta_dbi);
        if (rc == MDB_NOTFOUND && rdonly)
            return 0; /* none: empty (LMDB's compacting copy leaves out an empty one) */
        if (rc)
            return ckpt_seterr(NULL, rc == MDB_NOTFOUND ? CKPT_E_CORRUPT : ckpt_map_lmdb(rc), rc,
                               "%s/data.mdb: cannot open database %s", st->path, CKPT_DELTA_DB);
        st->has_delta = 1;
        char where[160] = "";
        rc = ckpt_tagidx_delta_scan(st, txn, where, sizeof where);
        if (rc == MDB_CORRUPTED && rdonly)
            rc = 0; /* a reader may still read the rest; reads of the tag index say what is wrong */
        if (rc != 0)
            return ckpt_seterr(NULL, rc == MDB_CORRUPTED ? CKPT_E_CORRUPT : ckpt_map_lmdb(rc), rc,
                               "%s/data.mdb: rank %d, reading %s: %s%s", st->path, st->opts.rank,
                               CKPT_DELTA_DB, where[0] ? where : "",
                               where[0] ? ": the database is damaged" : "");
        if (st->delta_pending > 0)
            st->delta_since_ms = ckpt_mono_ms();
        /* A writer of a store without checksums converts it to format 3
         * and no further: format 4 would need every record rewritten
         * (ckpt-inspect copy does that); a format 3 store stays readable
         * by the builds before format 4. */
        if (!rdonly)
            st->meta.format_version = st->csum ? CKPT_FORMAT_VERSION : CKPT_FORMAT_CSUM - 1;
    }
    return 0;
}

/* A writer's root (and rank directory), where they exist, must be
 * directories this user owns: metadata must not land in, or be readable
 * through, someone else's directory. */
static int check_owned(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return errno == ENOENT ? 0 : ckpt_seterr(NULL, ckpt_map_lmdb(errno), errno, "%s", path);
    if (!S_ISDIR(sb.st_mode))
        return ckpt_seterr(NULL, CKPT_E_PERM, 0, "%s: store root is not a directory", path);
    if (sb.st_uid != geteuid())
        return ckpt_seterr(NULL, CKPT_E_PERM, 0, "%s: owned by uid %ld, not by this user (uid %ld); "
                           "refusing to keep a store there", path, (long)sb.st_uid, (long)geteuid());
    return 0;
}

/* Create and open the LMDB environment, with LMDB's assertions routed to
 * the guards. A reader that cannot create or open lock.mdb (a read-only
 * medium, a directory or lock file without write permission) opens
 * without it (MDB_NOLOCK): LMDB then keeps no reader table, which is safe
 * because no writer can be at work where the lock file cannot be written
 * (a writer needs it). Errors name the file that really failed. */
static int env_open(ckpt_store *st, const struct ckpt_store_opts *o, unsigned flags, const char *data)
{
    int rc;
    for (;;) {
        if ((rc = mdb_env_create(&st->env)) != 0)
            return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s: cannot create an LMDB environment",
                               st->path);
        mdb_env_set_assert(st->env, ckpt_guard_on_assert);
        if ((rc = mdb_env_set_maxdbs(st->env, 16)) == 0 &&
            (o->readonly ||
             (rc = mdb_env_set_mapsize(st->env, o->map_size ? o->map_size : ((size_t)64 << 20))) == 0))
            rc = mdb_env_open(st->env, st->path, flags, 0600);
        if (rc == 0)
            break;
        mdb_env_close(st->env);
        st->env = NULL;
        if (rc == EACCES || rc == EPERM || rc == EROFS) {
            /* which file: data.mdb itself, or LMDB's lock file? */
            int fd = open(data, (o->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC);
            int e = errno;
            if (fd < 0)
                return ckpt_seterr(NULL, ckpt_map_lmdb(e), e, "%s: cannot open it%s", data,
                                   o->readonly ? "" : " for writing");
            close(fd);
            if (o->readonly && !(flags & MDB_NOLOCK)) {
                flags |= MDB_NOLOCK;
                continue;
            }
            return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/lock.mdb: cannot create or open "
                               "LMDB's lock file", st->path);
        }
        int code = rc == MDB_INVALID ? CKPT_E_CORRUPT : ckpt_map_lmdb(rc);
        return ckpt_seterr(NULL, code, rc, "%s/data.mdb: cannot open the LMDB environment%s",
                           st->path, rc == MDB_INVALID ? ": not an LMDB file, or its header is damaged"
                                                       : "");
    }
    st->nolock = (flags & MDB_NOLOCK) != 0;
    MDB_stat es;
    mdb_env_stat(st->env, &es);
    st->psize = es.ms_psize;
    return 0;
}

/* Whether LMDB's free-page list (its database 0) is sound, before a
 * writer's first write transaction. LMDB reads that list, and copies what
 * its records say, at the first page a writer allocates and again at every
 * commit, trusting the sizes on the page: a damaged record there made
 * LMDB copy past a heap buffer (found by AddressSanitizer in
 * reliability_damaged_random: a page of garbage over the list's root). So
 * every record is checked first: an 8-byte key (a transaction id); a value
 * of (n + 1) 8-byte words holding n, then n page numbers, each a page of
 * the file other than the two meta pages; key and value inside the file's
 * pages. A page LMDB reads on the way that faults is caught by the
 * caller's guard. Cost: one read of the list, which LMDB keeps short. */
static int check_freelist(ckpt_store *st, const MDB_envinfo *ei)
{
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    const size_t last = ei->me_last_pgno, ps = st->psize;
    const char *why = NULL;
    uint64_t txnid = 0;
    int rc;
    if (ps == 0)
        return 0;
    if ((rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn)) != 0)
        return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cannot begin a transaction",
                           st->path);
    /* the map's base bounds every key and value read below */
    const char *base = NULL;
    MDB_dbi mdbi;
    if (mdb_dbi_open(txn, ckpt_db_name(CKPT_DB_META), 0, &mdbi) == 0)
        base = ckpt_map_base(st, txn, mdbi, last);
    if (base == NULL) { /* no meta record yet (a store being created), or a damaged one: open_schema says which */
        mdb_txn_abort(txn);
        return 0;
    }
    const char *end = base + (last + 1) * ps;
    if ((rc = mdb_cursor_open(txn, 0, &cur)) != 0) {
        mdb_txn_abort(txn);
        return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cannot read LMDB's free-page "
                           "list", st->path);
    }
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && why == NULL;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        uint64_t n = 0;
        /* nothing is read from a key or value before it is known to lie in
         * the file's pages past the two meta pages */
        if (k.mv_size != 8 || (const char *)k.mv_data < base + 2 * ps ||
            (const char *)k.mv_data > end - 8) {
            why = "a record whose key is not a transaction id";
            break;
        }
        memcpy(&txnid, k.mv_data, 8);
        if ((const char *)v.mv_data < base + 2 * ps || (const char *)v.mv_data > end ||
            v.mv_size > (size_t)(end - (const char *)v.mv_data) || v.mv_size < 8 ||
            v.mv_size % 8 != 0) {
            why = "a record outside the file's pages, or of a size that is no page list";
            break;
        }
        memcpy(&n, v.mv_data, 8);
        if (n != v.mv_size / 8 - 1) {
            why = "a page list whose count does not match its size";
            break;
        }
        for (uint64_t i = 1; i <= n; i++) {
            uint64_t pg;
            memcpy(&pg, (const char *)v.mv_data + 8 * i, 8);
            if (pg < 2 || pg > last) {
                why = "a free page number outside the file";
                break;
            }
        }
    }
    mdb_cursor_close(cur);
    mdb_txn_abort(txn);
    if (why != NULL)
        return ckpt_seterr(NULL, CKPT_E_CORRUPT, 0, "%s/data.mdb: LMDB's free-page list is damaged "
                           "(record of transaction %llu: %s); not opened for writing", st->path,
                           (unsigned long long)txnid, why);
    if (rc != MDB_NOTFOUND)
        return ckpt_seterr(NULL, rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND ? CKPT_E_CORRUPT
                                                                                : ckpt_map_lmdb(rc),
                           rc, "%s/data.mdb: reading LMDB's free-page list: damaged", st->path);
    return 0;
}

/* The LMDB part of ckpt_store_open, run under a guard: on error the
 * caller releases st. */
static int open_env(ckpt_store *st, const struct ckpt_store_opts *o, const char *data)
{
    MDB_txn *txn = NULL;
    int rc, fresh = 0;
    unsigned flags = MDB_NOTLS;
    if (o->readonly)
        flags |= MDB_RDONLY;
    else if (o->sync_mode != CKPT_SYNC_EVERY)
        flags |= MDB_NOSYNC;
    /* A reader sets no map size: LMDB then maps the size recorded in the
     * file, so ckpt_store_info reports the writer's map, not 64 MiB (a map
     * a writer grows later is adopted on MDB_MAP_RESIZED, ckpt_rtxn_begin). */
    if ((rc = env_open(st, o, flags, data)) != 0)
        return rc;
    MDB_envinfo ei;
    mdb_env_info(st->env, &ei);
    {
        /* LMDB maps the file and trusts it: a data.mdb cut shorter than its
         * last committed page would fault (SIGBUS) on first touch. */
        MDB_stat es;
        struct stat ds;
        mdb_env_stat(st->env, &es);
        uint64_t need = ((uint64_t)ei.me_last_pgno + 1) * es.ms_psize;
        if (stat(data, &ds) == 0 && (uint64_t)ds.st_size < need) {
            rc = ckpt_seterr(NULL, CKPT_E_CORRUPT, 0, "%s: truncated: %lld bytes, but its last "
                             "committed page ends at byte %llu", data, (long long)ds.st_size,
                             (unsigned long long)need);
            return rc;
        }
    }
    if (!o->readonly) {
        /* LMDB raises a map smaller than the data only to exactly the
         * data's size, which leaves no page for the meta commit below
         * (MDB_MAP_FULL at open): give a writer headroom first. */
        MDB_stat es;
        mdb_env_stat(st->env, &es);
        size_t used = (size_t)(ei.me_last_pgno + 1) * es.ms_psize;
        if (ei.me_mapsize < 2 * used) {
            if ((rc = mdb_env_set_mapsize(st->env, 2 * used)) != 0) {
                int code = ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cannot grow the "
                                       "map at open", st->path);
                return code;
            }
            mdb_env_info(st->env, &ei);
        }
    }
    st->map_size = ei.me_mapsize;

    if (!o->readonly && (rc = check_freelist(st, &ei)) != 0)
        return rc;
    if ((rc = mdb_txn_begin(st->env, NULL, o->readonly ? MDB_RDONLY : 0, &txn)) != 0) {
        int code = ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cannot begin a transaction",
                               st->path);
        return code;
    }
    if ((rc = open_schema(st, txn, &fresh)) != 0) {
        mdb_txn_abort(txn);
        return rc;
    }
    if (o->readonly) {
        /* commit, not abort: handles opened in an aborted transaction
         * are closed again */
        if ((rc = mdb_txn_commit(txn)) != 0) {
            int code = ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cannot open databases",
                                   st->path);
            return code;
        }
        return 0;
    }
    if (fresh) {
        memset(&st->meta, 0, sizeof st->meta);
        st->meta.format_version = st->csum ? CKPT_FORMAT_VERSION : CKPT_FORMAT_CSUM - 1;
        st->meta.rank = o->rank;
        st->meta.nranks = o->nranks;
        st->meta.origin_nranks = o->nranks;
        st->meta.created_ms = (int64_t)ckpt_now_ms();
    } else if (!st->meta.clean || st->dur.rolled_back) {
        /* (rolled back to the last sync: ids handed out after it were lost
         * with their commits, and may have been seen) */
        st->meta.id_seq += CKPT_ID_CRASH_GAP;
    }
    st->meta.generation++;
    st->meta.clean = 0;
    st->meta.last_commit_ms = (int64_t)ckpt_now_ms();
    st->meta.commits++;
    /* This first commit records "open, not clean", so that a crash from now
     * on is visible at the next open. It is as durable as the sync mode
     * makes any commit (in "sync" mode LMDB fsyncs it): a process crash
     * never loses it, and an fsync here would make every restart pay one. */
    if ((rc = put_meta(st, txn, &st->meta)) != 0)
        mdb_txn_abort(txn); /* a failed commit frees the txn by itself */
    else
        rc = mdb_txn_commit(txn);
    if (rc != 0) {
        int code = ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cannot write meta at open",
                               st->path);
        return code;
    }
    st->id_seq_committed = st->meta.id_seq;
    return 0;
}


int ckpt_store_open(ckpt_store **out, const struct ckpt_store_opts *o)
{
    ckpt_store *st;
    struct stat sb;
    int rc;
    char data[4200];

    if (out == NULL)
        return CKPT_E_INVAL;
    *out = NULL;
    ckpt_store_wait_closed();
    if (o == NULL || o->root == NULL || o->rank < 0 || (!o->readonly && o->nranks < 1) ||
        (!o->readonly && o->rank >= o->nranks) || o->sync_mode < CKPT_SYNC_EVERY ||
        o->sync_mode > CKPT_SYNC_CLOSE)
        return ckpt_seterr(NULL, CKPT_E_INVAL, 0, "store options: need a root, 0 <= rank < nranks "
                           "and a known sync mode");
    if ((st = calloc(1, sizeof *st)) == NULL)
        return ckpt_seterr(NULL, CKPT_E_NOMEM, 0, "out of memory");
    st->opts = *o;
    st->writer_fd = -1;
    st->root_fd = -1;
    ckpt_durable_init(st);
    pthread_mutex_init(&st->mu, NULL);
    pthread_rwlock_init(&st->grow, NULL);
    pthread_cond_init(&st->bg_cv, NULL);
    sem_init(&st->bg_sem, 0, 0);
    size_t plen = strlen(o->root) + 32;
    if (strlen(o->root) > 4000 || (st->path = malloc(plen)) == NULL) {
        release(st);
        return ckpt_seterr(NULL, CKPT_E_NAMETOOLONG, 0, "store root too long (%zu bytes)", strlen(o->root));
    }
    snprintf(st->path, plen, "%s/rank-%d", o->root, o->rank);
    snprintf(data, sizeof data, "%s/data.mdb", st->path);

    if (o->readonly || !o->create) {
        if (stat(st->path, &sb) != 0 || stat(data, &sb) != 0) {
            rc = ckpt_seterr(NULL, CKPT_E_NOSTORE, errno, "%s: no store here (%s missing)",
                             o->root, stat(st->path, &sb) != 0 ? "rank directory" : "data.mdb");
            release(st);
            return rc;
        }
        if (sb.st_size == 0) {
            /* LMDB would set up a new environment in it (or fail with
             * EBADF when read-only): nothing committed is left */
            rc = ckpt_seterr(NULL, CKPT_E_CORRUPT, 0, "%s: empty (0 bytes): truncated, or the store's "
                             "creation stopped before anything was committed", data);
            release(st);
            return rc;
        }
    }
    if (o->readonly) {
        /* readers may look at any store */
    } else if ((rc = check_owned(o->root)) != 0 || (rc = check_owned(st->path)) != 0) {
        release(st);
        return rc;
    } else if (o->create && (rc = ckpt_fs_mkdirs(st->path)) != 0) {
        int code = ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s: cannot create the store directory",
                               st->path);
        release(st);
        return code;
    }

    if (!o->readonly) {
        /* ROOT/store.lock, shared: an operation that removes or replaces the
         * store (re-homing, a store replaced by a new one) holds it
         * exclusive (root.c). A root where it cannot be created (not
         * writable) has no such operation either. */
        char lk[4200];
        snprintf(lk, sizeof lk, "%s/store.lock", o->root);
        st->root_fd = open(lk, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (st->root_fd >= 0 && flock(st->root_fd, LOCK_SH | LOCK_NB) != 0) {
            int e = errno;
            long pid = ckpt_lock_read_pid(lk);
            char who[48] = "";
            if (pid > 0)
                snprintf(who, sizeof who, " (pid %ld)", pid);
            int code = ckpt_seterr(NULL, e == EWOULDBLOCK ? CKPT_E_BUSY : ckpt_map_lmdb(e), e,
                                   "%s: %s%s", o->root, e == EWOULDBLOCK ?
                                   "the store is locked by another process that replaces or "
                                   "re-homes it" : "cannot lock store.lock", who);
            release(st);
            return code;
        }
        /* One writer per rank environment: a second process writing the
         * same store would interleave its batches and meta with ours. Its
         * pid goes into the file, for the messages of those it keeps out. */
        snprintf(lk, sizeof lk, "%s/writer.lock", st->path);
        st->writer_fd = open(lk, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (st->writer_fd < 0 || flock(st->writer_fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            long pid = e == EWOULDBLOCK ? ckpt_lock_read_pid(lk) : 0;
            char who[48] = "";
            if (pid > 0)
                snprintf(who, sizeof who, " (pid %ld)", pid);
            int code = ckpt_seterr(NULL, e == EWOULDBLOCK ? CKPT_E_BUSY : ckpt_map_lmdb(e), e,
                                   "%s: %s%s", st->path, e == EWOULDBLOCK ?
                                   "the store is open for writing by another process" :
                                   "cannot create writer.lock", who);
            release(st);
            return code;
        }
        ckpt_lock_write_pid(st->writer_fd);
    }

    if (!o->readonly && ckpt_is_poisoned(data)) {
        rc = ckpt_seterr(NULL, CKPT_E_FAILED, 0, "%s: a write transaction of this process faulted "
                         "on a damaged page of this store earlier, and LMDB's writer lock stays held "
                         "until the process ends; open it in a new process", data);
        release(st);
        return rc;
    }
    /* power loss: roll back to the last synced state, before LMDB reads the
     * file (durable.c) */
    if ((rc = ckpt_durable_recover(st, data)) != 0) {
        release(st);
        return rc;
    }
    struct ckpt_guard g;
    ckpt_guard_push(&g);
    if (sigsetjmp(g.jb, 0) != 0) {
        char what[300];
        ckpt_guard_pop(&g);
        ckpt_describe_fault(what, sizeof what, &g, st);
        if (!o->readonly)
            ckpt_poison_env(st->path);
        rc = ckpt_seterr(NULL, CKPT_E_CORRUPT, 0, "%s: opening it: %s: a page of the store is "
                         "damaged", data, what);
        release(st); /* the transaction of the open is abandoned, not ended */
        return rc;
    }
    rc = open_env(st, o, data);
    ckpt_guard_pop(&g);
    if (rc == 0)
        rc = ckpt_durable_opened(st); /* the pin (a first sync record if needed) */
    if (rc != 0) {
        release(st);
        return rc;
    }
    bg_start(st);
    *out = st;
    return 0;
}

int ckpt_store_open_readonly(ckpt_store **out, const char *root, int rank)
{
    struct ckpt_store_opts o = CKPT_STORE_OPTS_INIT;
    o.root = root;
    o.rank = rank;
    o.readonly = 1;
    o.create = 0;
    o.check_rank = 0;
    return ckpt_store_open(out, &o);
}

/* A writer's call of fn under st->mu. */
static int writer_locked(ckpt_store *st, int (*fn)(ckpt_store *))
{
    if (st == NULL)
        return CKPT_E_INVAL;
    if (st->opts.readonly)
        return CKPT_E_READONLY;
    pthread_mutex_lock(&st->mu);
    int rc = fn(st);
    pthread_mutex_unlock(&st->mu);
    return rc;
}

static int checkpoint_locked(ckpt_store *st)
{
    return commit_locked(st, 0);
}

int ckpt_store_checkpoint(ckpt_store *st)
{
    return writer_locked(st, checkpoint_locked);
}

int ckpt_store_close(ckpt_store *st)
{
    int rc = 0;
    if (st == NULL)
        return 0;
    if (!st->opts.readonly) {
        /* The background thread may be inside a sync: close does not wait
         * for it (both fdatasyncs wait for the same write-out); it stops,
         * and after a successful close releases the handle (release_later). */
        bg_request_stop(st);
        struct ckpt_durable_tok tok;
        pthread_mutex_lock(&st->mu);
        st->meta.clean = 1;
        st->closing = 1;
        rc = commit_locked(st, 1);
        st->closing = 0;
        if (rc)
            st->meta.clean = 0;
        else
            ckpt_durable_begin(st, &tok);
        pthread_mutex_unlock(&st->mu);
        if (rc == 0 && (rc = ckpt_durable_end(st, &tok)) != 0)
            rc = ckpt_seterr(st, ckpt_map_lmdb(rc), rc, "%s/data.mdb: sync at close failed", st->path);
        if (rc) {
            bg_stop(st);
            bg_start(st);
            return rc;
        }
        release_later(st);
        return 0;
    }
    release(st);
    return 0;
}

void ckpt_store_discard(ckpt_store *st)
{
    if (st == NULL)
        return;
    bg_stop(st);
    release(st);
}

const char *ckpt_store_path(const ckpt_store *st)
{
    return st->path;
}

size_t ckpt_store_pending(ckpt_store *st)
{
    pthread_mutex_lock(&st->mu);
    size_t n = st->nops;
    pthread_mutex_unlock(&st->mu);
    return n;
}

static int merge_tags_locked(ckpt_store *st)
{
    int merged;
    st->merge_err = 0; /* asked for: try again even after a failure */
    return merge_all_locked(st, &no_stop, 0, &merged);
}

int ckpt_store_merge_tags(ckpt_store *st)
{
    return writer_locked(st, merge_tags_locked);
}

int ckpt_store_info(struct ckpt_store_info *info, ckpt_store *st)
{
    MDB_envinfo ei;
    MDB_stat es;
    if (st == NULL || info == NULL)
        return CKPT_E_INVAL;
    pthread_mutex_lock(&st->mu);
    *info = st->meta;
    uint64_t pending = st->delta_pending;
    pthread_mutex_unlock(&st->mu);
    if (st->opts.readonly) {
        /* a reader sees the meta of the last commit, re-read now */
        ckpt_rtxn *tx;
        ckpt_val v;
        int rc = ckpt_rtxn_begin(&tx, st);
        if (rc)
            return rc;
        rc = ckpt_get_raw(&v, tx, CKPT_DB_META, CKPT_META_KEY, strlen(CKPT_META_KEY));
        size_t off;
        if (rc == 0 && ckpt_meta_decode(info, v.data, v.len, &off) != 0)
            rc = ckpt_seterr(st, CKPT_E_CORRUPT, 0, "%s/data.mdb: meta record is damaged", st->path);
        ckpt_rtxn_end(tx);
        if (rc)
            return rc;
    }
    info->tagidx_pending = pending; /* a reader: as of its open */
    mdb_env_info(st->env, &ei);
    mdb_env_stat(st->env, &es);
    info->map_size = ei.me_mapsize;
    info->map_used = (size_t)(ei.me_last_pgno + 1) * es.ms_psize;
    return 0;
}

int ckpt_store_next_id(ckpt_store *st, uint64_t *id)
{
    int rc = 0;
    if (st == NULL || id == NULL)
        return CKPT_E_INVAL;
    if (st->opts.readonly)
        return CKPT_E_READONLY;
    pthread_mutex_lock(&st->mu);
    /* A reopen after a crash skips CKPT_ID_CRASH_GAP ids past the last
     * committed sequence, so never hand out that many without a commit
     * (with the commit policy off, nothing else commits): persist the
     * sequence at half the gap, and refuse ids while it cannot be. */
    if (st->meta.id_seq - st->id_seq_committed >= CKPT_ID_CRASH_GAP / 2 &&
        (rc = commit_locked(st, 1)) != 0 &&
        st->meta.id_seq - st->id_seq_committed < CKPT_ID_CRASH_GAP - 1)
        rc = 0; /* still inside the gap: the next call retries the commit */
    if (rc == 0 && st->meta.id_seq >= CKPT_ID_BASE)
        rc = ckpt_seterr(st, CKPT_E_NOSPACE, 0, "%s: id sequence of rank %d exhausted", st->path,
                         st->opts.rank);
    else if (rc == 0)
        *id = ((uint64_t)st->opts.rank + 1) * CKPT_ID_BASE + st->meta.id_seq++;
    pthread_mutex_unlock(&st->mu);
    return rc;
}

int ckpt_store_set_origin(ckpt_store *st, int32_t origin_nranks)
{
    if (st == NULL || origin_nranks < 1)
        return CKPT_E_INVAL;
    if (st->opts.readonly)
        return CKPT_E_READONLY;
    pthread_mutex_lock(&st->mu);
    st->meta.origin_nranks = origin_nranks;
    pthread_mutex_unlock(&st->mu);
    return 0;
}

int ckpt_store_reserve_id(ckpt_store *st, uint64_t id)
{
    uint64_t base = ((uint64_t)st->opts.rank + 1) * CKPT_ID_BASE;
    pthread_mutex_lock(&st->mu);
    if (id >= base && id - base < CKPT_ID_BASE && id - base >= st->meta.id_seq)
        st->meta.id_seq = id - base + 1;
    pthread_mutex_unlock(&st->mu);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Staging                                                             */
/* ------------------------------------------------------------------ */

static int stage(ckpt_store *st, int kind, int db, const void *k, size_t klen, const void *a,
                 size_t alen, const void *v, size_t vlen)
{
    int rc = 0;
    if (st == NULL)
        return CKPT_E_INVAL;
    if (st->opts.readonly)
        return ckpt_seterr(st, CKPT_E_READONLY, 0, "%s: opened read-only", st->path);
    if (klen == 0 || klen > 511 || vlen > UINT32_MAX || (v == NULL && vlen > 0))
        return ckpt_seterr(st, klen > 511 ? CKPT_E_NAMETOOLONG : CKPT_E_INVAL, 0,
                           "%s: %s key of %zu bytes or value of %zu bytes not storable", st->path,
                           ckpt_db_name(db), klen, vlen);
    size_t need = (sizeof(struct op_hdr) + klen + alen + vlen + 7) & ~(size_t)7;
    pthread_mutex_lock(&st->mu);
    if (st->failed) {
        rc = ckpt_seterr(st, CKPT_E_FAILED, 0, "%s: an earlier LMDB failure requires reopening",
                         st->path);
        goto done;
    }
    if (st->last_commit_err && st->log_len + need > CKPT_BATCH_MAX_BYTES) {
        rc = ckpt_seterr(st, CKPT_E_BACKLOG, 0, "%s: commits keep failing (%s) and %zu bytes are "
                         "staged; this mutation was not staged, retry once a commit succeeds",
                         st->path, ckpt_strerror(st->last_commit_err), st->log_len);
        goto done;
    }
    if (st->log_len + need > st->log_cap) {
        size_t ncap = st->log_cap ? st->log_cap : 64 * 1024;
        while (ncap < st->log_len + need)
            ncap *= 2;
        uint8_t *nl = realloc(st->log, ncap);
        if (nl == NULL) {
            rc = ckpt_seterr(st, CKPT_E_NOMEM, 0, "%s: cannot grow the batch to %zu bytes", st->path,
                             ncap);
            goto done;
        }
        st->log = nl;
        st->log_cap = ncap;
    }
    struct op_hdr h = {(uint8_t)kind, (uint8_t)db, 0, (uint32_t)klen, (uint32_t)alen, (uint32_t)vlen};
    uint8_t *p = st->log + st->log_len;
    memcpy(p, &h, sizeof h);
    memcpy(p + sizeof h, k, klen);
    if (alen)
        memcpy(p + sizeof h + klen, a, alen);
    if (vlen)
        memcpy(p + sizeof h + klen + alen, v, vlen);
    st->log_len += need;
    if (st->nops++ == 0)
        st->batch_start_ms = ckpt_mono_ms();
    if (((st->opts.commit_every && st->nops >= st->opts.commit_every) ||
         (st->opts.commit_ms && ckpt_mono_ms() - st->batch_start_ms >= st->opts.commit_ms)) &&
        retry_due(st))
        rc = commit_locked(st, 0);
done:
    pthread_mutex_unlock(&st->mu);
    return rc;
}

static int name_key(ckpt_store *st, uint8_t *out, size_t *n, const char *what, const char *name,
                    size_t nlen)
{
    if (name == NULL)
        return ckpt_seterr(st, CKPT_E_INVAL, 0, "%s: %s name missing", st->path, what);
    if (nlen > CKPT_NAME_MAX)
        return ckpt_seterr(st, CKPT_E_NAMETOOLONG, 0, "%s: %s name of %zu bytes is longer than the "
                           "limit of %u", st->path, what, nlen, CKPT_NAME_MAX);
    if ((*n = ckpt_key_name(out, name, nlen)) == 0)
        return ckpt_seterr(st, CKPT_E_INVAL, 0, "%s: %s name contains a NUL byte", st->path, what);
    return 0;
}

int ckpt_store_put_obj(ckpt_store *st, uint64_t id, const char *name, size_t nlen, int32_t ts,
                       const void *rec, size_t len)
{
    uint8_t k[8], a[CKPT_NAMEKEY_MAX + 4];
    size_t n;
    int rc;
    if (st == NULL)
        return CKPT_E_INVAL;
    if ((rc = name_key(st, a, &n, "object", name, nlen)) != 0)
        return rc;
    ckpt_key_i32(a + n, ts);
    ckpt_key_u64(k, id);
    return stage(st, OP_PUT_OBJ, CKPT_DB_OBJ, k, 8, a, n + 4, rec, len);
}

int ckpt_store_del_obj(ckpt_store *st, uint64_t id)
{
    uint8_t k[8];
    ckpt_key_u64(k, id);
    return stage(st, OP_DEL_OBJ, CKPT_DB_OBJ, k, 8, NULL, 0, NULL, 0);
}

static int kvtag_key(ckpt_store *st, uint8_t *k, size_t *klen, uint64_t owner, const char *name,
                     size_t nlen)
{
    size_t n;
    int rc = name_key(st, k + 8, &n, "kvtag", name, nlen);
    if (rc)
        return rc;
    ckpt_key_u64(k, owner);
    *klen = n + 8;
    return 0;
}

int ckpt_store_put_kvtag(ckpt_store *st, uint64_t owner, const char *name, size_t nlen,
                         const void *rec, size_t len)
{
    uint8_t k[CKPT_NAMEKEY_MAX + 8];
    size_t klen;
    int rc;
    if (st == NULL)
        return CKPT_E_INVAL;
    if ((rc = kvtag_key(st, k, &klen, owner, name, nlen)) != 0)
        return rc;
    return stage(st, OP_PUT_KVTAG, CKPT_DB_KVTAG, k, klen, NULL, 0, rec, len);
}

int ckpt_store_del_kvtag(ckpt_store *st, uint64_t owner, const char *name, size_t nlen)
{
    uint8_t k[CKPT_NAMEKEY_MAX + 8];
    size_t klen;
    int rc;
    if (st == NULL)
        return CKPT_E_INVAL;
    if ((rc = kvtag_key(st, k, &klen, owner, name, nlen)) != 0)
        return rc;
    return stage(st, OP_DEL_KVTAG, CKPT_DB_KVTAG, k, klen, NULL, 0, NULL, 0);
}

int ckpt_store_put_cont(ckpt_store *st, uint64_t id, const char *name, size_t nlen,
                        const void *rec, size_t len)
{
    uint8_t k[8], a[CKPT_NAMEKEY_MAX];
    size_t n;
    int rc;
    if (st == NULL)
        return CKPT_E_INVAL;
    if ((rc = name_key(st, a, &n, "container", name, nlen)) != 0)
        return rc;
    ckpt_key_u64(k, id);
    return stage(st, OP_PUT_CONT, CKPT_DB_CONT, k, 8, a, n, rec, len);
}

int ckpt_store_del_cont(ckpt_store *st, uint64_t id)
{
    uint8_t k[8];
    ckpt_key_u64(k, id);
    return stage(st, OP_DEL_CONT, CKPT_DB_CONT, k, 8, NULL, 0, NULL, 0);
}

static int cont_members(ckpt_store *st, int kind, uint64_t cont, const uint64_t *objs, size_t n)
{
    uint8_t k[16];
    int rc = 0;
    if (n > 0 && objs == NULL)
        return CKPT_E_INVAL;
    ckpt_key_u64(k, cont);
    for (size_t i = 0; i < n && rc == 0; i++) {
        ckpt_key_u64(k + 8, objs[i]);
        rc = stage(st, kind, CKPT_DB_CONT_OBJ, k, 16, NULL, 0, "", 0);
    }
    return rc;
}

int ckpt_store_cont_add(ckpt_store *st, uint64_t cont, const uint64_t *objs, size_t n)
{
    return cont_members(st, OP_PUT, cont, objs, n);
}

int ckpt_store_cont_remove(ckpt_store *st, uint64_t cont, const uint64_t *objs, size_t n)
{
    return cont_members(st, OP_DEL, cont, objs, n);
}

static int region_key(ckpt_store *st, uint8_t *k, size_t *klen, uint64_t obj, uint32_t ndim,
                      const uint64_t *start, const uint64_t *count)
{
    if (ndim == 0 || ndim > CKPT_REGION_MAXDIM || start == NULL || count == NULL)
        return ckpt_seterr(st, CKPT_E_INVAL, 0, "%s: region of object %llu needs 1..%u dimensions",
                           st->path, (unsigned long long)obj, CKPT_REGION_MAXDIM);
    ckpt_key_u64(k, obj);
    *klen = 8 + ckpt_key_region(k + 8, ndim, start, count);
    return 0;
}

int ckpt_store_put_region(ckpt_store *st, uint64_t obj, uint32_t ndim, const uint64_t *start,
                          const uint64_t *count, const void *rec, size_t len)
{
    uint8_t k[8 + CKPT_REGIONKEY_MAX];
    size_t klen = 0;
    int rc;
    if (st == NULL)
        return CKPT_E_INVAL;
    if ((rc = region_key(st, k, &klen, obj, ndim, start, count)) != 0)
        return rc;
    return stage(st, OP_PUT, CKPT_DB_REGION, k, klen, NULL, 0, rec, len);
}

int ckpt_store_del_region(ckpt_store *st, uint64_t obj, uint32_t ndim, const uint64_t *start,
                          const uint64_t *count)
{
    uint8_t k[8 + CKPT_REGIONKEY_MAX];
    size_t klen = 0;
    int rc;
    if (st == NULL)
        return CKPT_E_INVAL;
    if ((rc = region_key(st, k, &klen, obj, ndim, start, count)) != 0)
        return rc;
    return stage(st, OP_DEL, CKPT_DB_REGION, k, klen, NULL, 0, NULL, 0);
}

/* The tag index holds logical keys namekey . owner with empty values
 * (tagidx.c); anything else cannot be stored there, and a longer name
 * part than a name key's could be stored but not read back. */
static int tagidx_raw_ok(ckpt_store *st, int db, size_t klen, size_t vlen)
{
    if (db != CKPT_DB_TAG_INDEX || (klen > 8 && klen <= CKPT_NAMEKEY_MAX + 8 && vlen == 0))
        return 0;
    return ckpt_seterr(st, CKPT_E_INVAL, 0, "%s: kvtag_name entries are a name key (at most %u "
                       "bytes) and an 8-byte owner id with an empty value (got a %zu-byte key, "
                       "%zu-byte value)", st ? st->path : "store", (unsigned)CKPT_NAMEKEY_MAX, klen,
                       vlen);
}

int ckpt_store_put_raw(ckpt_store *st, int db, const void *key, size_t klen, const void *val,
                       size_t vlen)
{
    int rc;
    if (db < 0 || db >= CKPT_DB_COUNT)
        return CKPT_E_INVAL;
    if ((rc = tagidx_raw_ok(st, db, klen, vlen)) != 0)
        return rc;
    return stage(st, OP_PUT, db, key, klen, NULL, 0, val ? val : "", vlen);
}

int ckpt_store_del_raw(ckpt_store *st, int db, const void *key, size_t klen)
{
    int rc;
    if (db < 0 || db >= CKPT_DB_COUNT)
        return CKPT_E_INVAL;
    if ((rc = tagidx_raw_ok(st, db, klen, 0)) != 0)
        return rc;
    return stage(st, OP_DEL, db, key, klen, NULL, 0, NULL, 0);
}

int ckpt_sync_mode_parse(const char *s)
{
    if (s == NULL)
        return -1;
    if (strcmp(s, "sync") == 0)
        return CKPT_SYNC_EVERY;
    if (strcmp(s, "interval") == 0)
        return CKPT_SYNC_INTERVAL;
    if (strcmp(s, "close") == 0)
        return CKPT_SYNC_CLOSE;
    return -1;
}

const char *ckpt_sync_mode_name(int mode)
{
    switch (mode) {
    case CKPT_SYNC_EVERY:
        return "sync";
    case CKPT_SYNC_INTERVAL:
        return "interval";
    case CKPT_SYNC_CLOSE:
        return "close";
    default:
        return "?";
    }
}

/* ckpt_iter callback of the compacting copy: append to the copy. */
struct compact_job {
    MDB_txn *txn;
    MDB_dbi dbi;
    int dup; /* a DUPSORT tag index (format 2): logical keys split again */
    int rc;
    int seal; /* format 4: values get their checksum (csum.h) */
    int meta; /* the meta record: written as format 4's */
};

static int compact_put(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct compact_job *j = p;
    MDB_val kk = {k->len, (void *)k->data}, vv = {v->len, (void *)v->data};
    if (j->dup) {
        /* namekey . owner -> key namekey, duplicate owner (tagidx.c) */
        if (k->len <= 8) {
            j->rc = MDB_CORRUPTED;
            return 1;
        }
        kk.mv_size = k->len - 8;
        vv.mv_size = 8;
        vv.mv_data = (char *)k->data + k->len - 8;
    } else if (j->seal) {
        /* the converting copy: the record (ckpt_iter checked and removed
         * a checksum it had) with a checksum of its own */
        uint8_t mbuf[512];
        struct ckpt_store_info m;
        size_t off, mlen;
        if (j->meta && k->len == strlen(CKPT_META_KEY) &&
            memcmp(k->data, CKPT_META_KEY, k->len) == 0 &&
            ckpt_meta_decode(&m, v->data, v->len, &off) == 0) {
            m.format_version = CKPT_FORMAT_VERSION;
            if (ckpt_meta_encode(mbuf, sizeof mbuf, &mlen, &m) != 0) {
                j->rc = EINVAL;
                return 1;
            }
            vv.mv_data = mbuf;
            vv.mv_size = mlen;
        }
        MDB_val r = {vv.mv_size + CKPT_CSUM_LEN, NULL};
        if ((j->rc = mdb_put(j->txn, j->dbi, &kk, &r, MDB_APPEND | MDB_RESERVE)) != 0)
            return 1;
        memcpy(r.mv_data, vv.mv_data, vv.mv_size);
        ckpt_csum_seal(kk.mv_data, kk.mv_size, r.mv_data, vv.mv_size);
        return 0;
    }
    /* MDB_APPEND(DUP): keys come in order; a damaged source whose keys do
     * not is refused (MDB_KEYEXIST) rather than copied into a broken tree */
    j->rc = mdb_put(j->txn, j->dbi, &kk, &vv, j->dup ? MDB_APPENDDUP : MDB_APPEND);
    return j->rc != 0;
}

/* The compacting copy: every database rebuilt entry by entry, through the
 * store's guarded reads, into a new environment in file. (LMDB's own
 * MDB_CP_COMPACT walks the B-trees with no defence against a damaged
 * page: on one it corrupted the heap or crashed.) */
static int copy_compact(ckpt_store *st, const char *file)
{
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    ckpt_rtxn *tx = NULL;
    MDB_envinfo ei;
    const char *what = "mdb_env_open";
    int rc;
    if ((rc = ckpt_rtxn_begin(&tx, st)) != 0)
        return rc;
    mdb_env_info(st->env, &ei);
    size_t used = ((size_t)ei.me_last_pgno + 1) * st->psize;
    if ((rc = mdb_env_create(&env)) == 0 && (rc = mdb_env_set_maxdbs(env, 16)) == 0 &&
        (rc = mdb_env_set_mapsize(env, 2 * used + ((size_t)1 << 20))) == 0 &&
        (rc = mdb_env_open(env, file, MDB_NOSUBDIR | MDB_NOLOCK | MDB_NOSYNC, 0600)) == 0) {
        what = "mdb_txn_begin";
        rc = mdb_txn_begin(env, NULL, 0, &txn);
    }
    /* With checksums on (ckpt_csum_enabled), the copy is always in the
     * current format: DUPSORT tag index, checksums, meta saying format 4.
     * Without, the same layout as the source (format 1 to 3). */
    const int seal = st->csum || ckpt_csum_enabled();
    for (int db = 0; rc == 0 && db < CKPT_DB_COUNT; db++) {
        int dup = db == CKPT_DB_TAG_INDEX && (st->tagidx_dup || seal);
        struct compact_job j = {txn, 0, dup, 0, seal, db == CKPT_DB_META};
        what = "mdb_dbi_open";
        if ((rc = mdb_dbi_open(txn, ckpt_db_name(db), MDB_CREATE | (dup ? CKPT_TAGIDX_FLAGS : 0),
                               &j.dbi)) != 0)
            break;
        int r = ckpt_iter(tx, db, NULL, 0, compact_put, &j);
        if (r < 0) {
            mdb_txn_abort(txn);
            txn = NULL;
            rc = r; /* the store's error and message */
            goto done;
        }
        if (j.rc != 0) {
            rc = j.rc;
            if (rc == MDB_KEYEXIST || rc == MDB_CORRUPTED) {
                mdb_txn_abort(txn);
                txn = NULL;
                rc = ckpt_seterr(st, CKPT_E_CORRUPT, 0, "%s/data.mdb: iterating %s: keys out of "
                                 "order: a page of the store is damaged", st->path, ckpt_db_name(db));
                goto done;
            }
            what = "mdb_put";
        }
    }
    if (rc == 0) {
        what = "mdb_txn_commit";
        rc = mdb_txn_commit(txn);
        txn = NULL;
    }
    if (rc == 0) {
        what = "fsync";
        rc = mdb_env_sync(env, 1);
    }
    if (rc != 0)
        rc = ckpt_seterr(st, ckpt_map_lmdb(rc), rc, "%s: writing the compacted copy failed at %s",
                         file, what);
done:
    if (txn != NULL)
        mdb_txn_abort(txn);
    if (env != NULL)
        mdb_env_close(env);
    ckpt_rtxn_end(tx);
    return rc;
}

/* LMDB's plain copy (the file up to its last page), under a guard.
 * lmdb_rc: LMDB's code when it failed by itself. */
static int copy_plain(ckpt_store *st, int fd, int *lmdb_rc)
{
    struct ckpt_guard g;
    int rc;
    *lmdb_rc = 0;
    ckpt_guard_push(&g);
    if (sigsetjmp(g.jb, 0) != 0) {
        ckpt_guard_pop(&g);
        pthread_rwlock_unlock(&st->grow);
        return ckpt_store_faulted(st, &g, "copying");
    }
    /* a read transaction inside LMDB: a consistent snapshot of the last
     * commit, taken while writers go on */
    pthread_rwlock_rdlock(&st->grow);
    rc = mdb_env_copyfd2(st->env, fd, 0);
    pthread_rwlock_unlock(&st->grow);
    ckpt_guard_pop(&g);
    *lmdb_rc = rc;
    return 0;
}

int ckpt_store_copy(ckpt_store *st, const char *dest, int compact)
{
    struct stat sb;
    char file[4200];
    int rc, fd = -1, lrc = 0;
    if (st == NULL || dest == NULL)
        return CKPT_E_INVAL;
    if ((rc = ckpt_store_check_failed(st)) != 0)
        return rc;
    if (stat(dest, &sb) == 0)
        return ckpt_seterr(st, CKPT_E_EXISTS, 0, "%s: copy target already exists", dest);
    if ((rc = ckpt_fs_mkdirs(dest)) != 0)
        return ckpt_seterr(st, ckpt_map_lmdb(rc), rc, "%s: cannot create the copy directory", dest);
    snprintf(file, sizeof file, "%s/data.mdb", dest);
    if (compact) {
        rc = copy_compact(st, file);
        goto done;
    }
    /* our own descriptor: mdb_env_copy2 would create data.mdb 0666 & ~umask,
     * and a copy of the metadata must be owner-only like the store */
    for (int tries = 0;; tries++) {
        fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) {
            rc = ckpt_seterr(st, ckpt_map_lmdb(errno), errno, "%s: cannot create the copy", file);
            goto done;
        }
        if ((rc = copy_plain(st, fd, &lrc)) != 0)
            goto done;
        if (lrc != MDB_MAP_RESIZED || tries >= 3)
            break;
        /* a writer in another process grew the map: map the new size,
         * copy again */
        close(fd);
        fd = -1;
        pthread_rwlock_wrlock(&st->grow);
        mdb_env_set_mapsize(st->env, 0);
        st->map_base = NULL; /* remapped */
        pthread_rwlock_unlock(&st->grow);
    }
    if (close(fd) != 0 && lrc == 0)
        lrc = errno;
    fd = -1;
    if (lrc)
        rc = ckpt_seterr(st, ckpt_map_lmdb(lrc), lrc, "%s: copying %s/data.mdb there failed", dest,
                         st->path);
done:
    if (fd >= 0)
        close(fd);
    if (rc != 0)
        ckpt_fs_rmtree(dest); /* a failed copy leaves nothing behind */
    return rc;
}
