/*
 * commit.c - the commit: one LMDB write transaction applies the whole
 * staged batch (apply.c), appends the tag index's delta (tagidx.c),
 * writes the meta record and commits; a full map is grown and the batch
 * replayed. Also the merge of the delta into the tag index, which runs in
 * transactions of its own, and the policies of when to retry, sync and
 * merge. Everything here runs under st->mu.
 *
 * Why a batch: LMDB binds a write transaction to the thread that began it
 * (its writer lock is a thread-owned mutex), so holding one open across
 * hook calls from several server threads is not possible; staging
 * (stage.c) instead keeps the same all-or-nothing batch while letting
 * whichever thread hits the commit policy (or the background thread,
 * bg.c) commit, and makes "abort, grow the map, replay the batch" a loop.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "store_int.h"

int ckpt_put_meta(ckpt_store *st, MDB_txn *txn, const struct ckpt_store_info *m)
{
    uint8_t buf[512];
    size_t len;
    if (ckpt_meta_encode(&len, buf, sizeof buf, m) != 0)
        return EINVAL;
    MDB_val key = {strlen(CKPT_META_KEY), CKPT_META_KEY}, val = {len, buf};
    return ckpt_put_sealed(st, txn, st->dbi[CKPT_DB_META], &key, &val, 0);
}

static int grow_map(ckpt_store *st)
{
    size_t want = st->map_size * 2;
    while (want < st->map_size + 4 * st->batch.log_len)
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

/* Whether LMDB's free-page list (its database 0) is sound, checked once
 * per handle inside the first write transaction that may write, before
 * anything in it allocates a page (the open's when it creates or converts
 * the store, schema.c's when it creates a database, else the first commit
 * or merge): a restart that only maps the store reads nothing of it. LMDB
 * reads that list, and copies what its records say, at the first page a
 * writer allocates and again at every commit, trusting the sizes on the
 * page: a damaged record there made LMDB copy past a heap buffer (found by
 * AddressSanitizer in reliability_damaged_random: a page of garbage over
 * the list's root). So every record is checked first: an 8-byte key (a
 * transaction id); a value of (n + 1) 8-byte words holding n, then n page
 * numbers, each a page of the file other than the two meta pages; key and
 * value inside the file's pages. A page LMDB reads on the way that faults
 * is caught by the caller's guard. Cost: one read of the list, which LMDB
 * keeps short. 0, or CKPT_E_CORRUPT (every later write transaction of the
 * handle checks again and fails the same way). */
int ckpt_freelist_check(ckpt_store *st)
{
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    MDB_envinfo ei;
    const char *why = NULL;
    uint64_t txnid = 0;
    int rc;
    if (st->fl_checked || st->psize == 0)
        return 0;
    mdb_env_info(st->env, &ei);
    const size_t last = ei.me_last_pgno, ps = st->psize;
    /* LMDB opens no cursor on its free-page list in a write transaction:
     * a read transaction beside it (MDB_NOTLS) sees the same snapshot, the
     * last committed one, which the write transaction started from */
    if ((rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn)) != 0)
        return ckpt_seterr(st, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cannot begin a transaction",
                           st->path);
    /* The map's base bounds every key and value read below: the page of
     * the main database's record of the meta database says where it is.
     * (No mdb_dbi_open here: a handle opened in this read transaction
     * would take the slot of one the write transaction opened and has not
     * committed, which LMDB then refuses, MDB_BAD_DBI.) */
    const char *base = __atomic_load_n(&st->map_base, __ATOMIC_ACQUIRE);
    MDB_val mk = {strlen(ckpt_db_name(CKPT_DB_META)), (void *)ckpt_db_name(CKPT_DB_META)}, mv;
    if (base == NULL && mdb_get(txn, 1 /* LMDB's main database */, &mk, &mv) == 0)
        base = ckpt_map_base_from(st, mv.mv_data, last);
    if (base == NULL) { /* no meta database yet (a store being created), or a damaged page: open_schema says which */
        mdb_txn_abort(txn);
        return 0;
    }
    const char *end = base + (last + 1) * ps;
    if ((rc = mdb_cursor_open(txn, 0, &cur)) != 0) {
        mdb_txn_abort(txn);
        return ckpt_seterr(st, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cannot read LMDB's free-page "
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
        return ckpt_seterr(st, CKPT_E_CORRUPT, 0, "%s/data.mdb: LMDB's free-page list is damaged "
                           "(record of transaction %llu: %s); nothing is written to this store "
                           "(its committed records stay readable)", st->path,
                           (unsigned long long)txnid, why);
    if (rc != MDB_NOTFOUND)
        return ckpt_seterr(st, rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND ? CKPT_E_CORRUPT
                                                                              : ckpt_map_lmdb(rc),
                           rc, "%s/data.mdb: reading LMDB's free-page list: damaged; nothing is "
                           "written to this store", st->path);
    st->fl_checked = 1;
    return 0;
}

int ckpt_before_write(ckpt_store *st)
{
    int rc = ckpt_durable_first_write(st);
    return rc ? rc : ckpt_freelist_check(st);
}

/* Whether enough was committed since the last sync for the background
 * thread to sync now (interval and close modes). */
int ckpt_sync_due(const ckpt_store *st)
{
    return st->opts.sync_kb && st->bg.bytes_since_sync >= (size_t)st->opts.sync_kb << 10;
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
int ckpt_merge_due(const ckpt_store *st, int by_age)
{
    if (!st->delta.on || st->delta.pending == 0)
        return 0;
    uint64_t now = ckpt_mono_ms();
    if (st->delta.merge_err && (st->delta.merge_err == CKPT_E_CORRUPT || now - st->delta.merge_err_ms < 1000))
        return 0;
    if (st->delta.pending >= merge_threshold(st))
        return 1;
    unsigned wait = st->opts.sync_ms ? st->opts.sync_ms : 1000;
    return by_age && now - st->delta.since_ms >= wait;
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
        /* as in ckpt_commit_locked: the transaction is abandoned where it was */
        ckpt_guard_pop(&g);
        ckpt_poison_env(st->path);
        st->delta.merge_err = CKPT_E_CORRUPT;
        st->delta.merge_err_ms = ckpt_mono_ms();
        return ckpt_store_faulted(st, &g, "merging the tag index (a damaged page)");
    }
    for (;;) {
        rc = mdb_txn_begin(st->env, NULL, 0, &txn);
        if (rc)
            break;
        if ((rc = ckpt_before_write(st)) != 0) {
            mdb_txn_abort(txn);
            ckpt_guard_pop(&g);
            st->delta.merge_err = rc;
            st->delta.merge_err_ms = ckpt_mono_ms();
            return rc;
        }
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
            __atomic_store_n(&st->fault.failed, 1, __ATOMIC_RELEASE);
        int code = rc == MDB_CORRUPTED ? CKPT_E_CORRUPT : ckpt_map_lmdb(rc);
        st->delta.merge_err = code;
        st->delta.merge_err_ms = ckpt_mono_ms();
        if (rc == MDB_CORRUPTED && where[0])
            return ckpt_seterr(st, code, 0, "%s/data.mdb: merging the tag index: %s %s: the "
                               "database is damaged; its entries stay unmerged", st->path,
                               CKPT_DELTA_DB, where);
        return ckpt_seterr(st, code, rc, "%s/data.mdb: merging the tag index failed at %s; its "
                           "entries stay in %s", st->path, what, CKPT_DELTA_DB);
    }
    st->delta.merge_err = 0;
    if (*more) {
        st->delta.pending = st->delta.pending > merged ? st->delta.pending - merged : 0;
    } else {
        st->delta.pending = 0;
        st->delta.since_ms = 0;
    }
    st->bg.commits_since_sync++;
    return 0;
}

/* Merge every chunk, a slice at a time, with st->mu held, until *stop
 * rises. With `yield`, st->mu is let go between slices (the background
 * thread: the server's mutations get in). *merged: whether a slice was
 * merged. 0, ECANCELED, or a merge's error (kept in merge_err). */
int ckpt_merge_all_locked(ckpt_store *st, const int *stop, int yield, int *merged)
{
    int more = 1, rc = 0;
    *merged = 0;
    ckpt_tagidx_delta_count_locked(st); /* before anything is merged */
    while (more && st->delta.pending > 0 && !__atomic_load_n(stop, __ATOMIC_ACQUIRE) &&
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
int ckpt_commit_locked(ckpt_store *st, int force)
{
    struct ckpt_store_info m;
    const char *volatile what = "begin";
    char where[160] = "";
    int rc, again;

    struct ckpt_guard g;
    if ((rc = ckpt_store_check_failed(st)) != 0)
        return rc;
    if (st->batch.nops == 0 && !force)
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
        st->commit.last_err = CKPT_E_CORRUPT;
        return ckpt_store_faulted(st, &g, "committing (the write transaction read a damaged page)");
    }
    uint64_t seq = st->delta.seq;
    for (;;) {
        MDB_txn *txn;
        size_t off = 0, done = 0;
        st->delta.buf_len = 0;
        st->delta.buf_n = 0;
        seq = st->delta.seq;
        m = st->meta;
        m.mutations += st->batch.nops;
        m.commits++;
        m.last_commit_ms = (int64_t)ckpt_now_ms();
        what = "mdb_txn_begin";
        rc = mdb_txn_begin(st->env, NULL, 0, &txn);
        if (rc)
            break;
        if ((rc = ckpt_before_write(st)) != 0) {
            mdb_txn_abort(txn);
            ckpt_guard_pop(&g);
            st->commit.last_err = rc;
            st->commit.failed_nops = st->batch.nops;
            st->commit.failed_ms = ckpt_mono_ms();
            return rc;
        }
        what = "apply";
        while (rc == 0 && done < st->batch.nops) {
            const struct op_hdr *h = (const struct op_hdr *)(st->batch.log + off);
            const uint8_t *k = st->batch.log + off + sizeof *h;
            if (h->kind == OP_PUT_KVTAG) {
                rc = ckpt_apply_kvtag_run(st, txn, &off, &done, st->batch.nops - done);
                continue;
            }
            const uint8_t *a = k + h->klen;
            const uint8_t *v = a + h->alen;
            rc = ckpt_apply_op(st, txn, h, k, a, v);
            if (rc == -1) {
                mdb_txn_abort(txn);
                st->commit.last_err = CKPT_E_COLLISION;
                return ckpt_seterr(st, CKPT_E_COLLISION, 0,
                                   "%s: two long names hash to the same key in %s; batch kept",
                                   st->path, h->kind == OP_PUT_OBJ ? "obj_name" : "cont_name");
            }
            off += ckpt_op_size(h);
            done++;
        }
        if (rc == 0 && st->delta.buf_n > 0) {
            /* the handle's first chunk reads the next chunk number first */
            what = "kvtag_delta";
            if ((rc = ckpt_tagidx_delta_load(st, txn, where, sizeof where)) == 0) {
                seq = st->delta.seq;
                rc = ckpt_tagidx_log_flush(st, txn, &seq);
            }
        }
        if (rc == 0) {
            what = "meta";
            rc = ckpt_put_meta(st, txn, &m);
        }
        if ((rc = txn_finish(st, txn, rc, &what, &again)) != 0 || !again)
            break;
    }
    ckpt_guard_pop(&g);
    if (rc) {
        int code = ckpt_map_lmdb(rc);
        char why[160] = "";
        if (rc == MDB_PANIC)
            __atomic_store_n(&st->fault.failed, 1, __ATOMIC_RELEASE);
        if (rc == EIO && short_write_cause(st, why, sizeof why))
            code = CKPT_E_NOSPACE;
        st->commit.last_err = code;
        st->commit.failed_nops = st->batch.nops;
        st->commit.failed_ms = ckpt_mono_ms();
        if (rc == MDB_CORRUPTED && where[0])
            return ckpt_seterr(st, CKPT_E_CORRUPT, rc, "%s/data.mdb: rank %d, commit of %zu staged "
                               "mutations: %s: %s: the database is damaged; they stay staged",
                               st->path, st->opts.rank, st->batch.nops, CKPT_DELTA_DB, where);
        if (st->batch.nops == 0)
            return ckpt_seterr(st, code, rc, "%s/data.mdb: commit of the meta record (the open's "
                               "dirty mark, the id sequence) failed at %s%s", st->path, what, why);
        return ckpt_seterr(st, code, rc, "%s/data.mdb: commit of %zu staged mutations failed at %s; "
                           "they stay staged%s", st->path, st->batch.nops, what, why);
    }
    st->meta = m;
    st->marked = 1;
    st->id_seq_committed = m.id_seq;
    if (st->opts.sync_mode == CKPT_SYNC_EVERY)
        ckpt_lease_synced(st, m.id_seq); /* LMDB synced the commit */
    st->delta.seq = seq;
    if (st->delta.buf_n > 0) {
        st->delta.pending += st->delta.buf_n;
        if (st->delta.since_ms == 0)
            st->delta.since_ms = ckpt_mono_ms();
        ckpt_tagidx_delta_count_locked(st); /* unless the background thread did */
        if (ckpt_merge_due(st, 0)) {
            int merged;
            if (st->commit.closing)
                ; /* close does not merge: the delta stays for the next writer */
            else if (st->bg.running)
                pthread_cond_signal(&st->bg.cv);
            else /* no background thread: here; an error stays in merge_err */
                ckpt_merge_all_locked(st, &no_stop, 0, &merged);
        }
    }
    st->delta.buf_len = 0;
    st->delta.buf_n = 0;
    st->bg.commits_since_sync++;
    st->bg.bytes_since_sync += st->batch.log_len;
    if (st->opts.sync_mode != CKPT_SYNC_EVERY && ckpt_sync_due(st))
        pthread_cond_signal(&st->bg.cv);
    st->batch.log_len = 0;
    st->batch.nops = 0;
    st->commit.last_err = 0;
    return 0;
}

/* Every retry of a failed commit re-applies the whole staged batch, so the
 * commit policy retries only once the batch has doubled or a second has
 * passed (checkpoint and close always retry): on a full disk a mutation
 * then costs O(1) amortized instead of a stall growing with the batch. */
int ckpt_retry_due(const ckpt_store *st)
{
    return st->commit.last_err == 0 || st->batch.nops >= 2 * st->commit.failed_nops ||
           ckpt_mono_ms() - st->commit.failed_ms >= 1000;
}

int ckpt_merge_tags_locked(ckpt_store *st)
{
    int merged;
    st->delta.merge_err = 0; /* asked for: try again even after a failure */
    return ckpt_merge_all_locked(st, &no_stop, 0, &merged);
}

void ckpt_lease_synced(ckpt_store *st, uint64_t id_seq)
{
    if (id_seq + CKPT_ID_CRASH_GAP > st->id_lease)
        st->id_lease = id_seq + CKPT_ID_CRASH_GAP;
}
