/*
 * copy.c - ckpt_store_copy: a consistent copy of a rank's environment,
 * LMDB's plain copy or a compacting one rebuilt through the store's
 * guarded reads (which also converts a store to the current format).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_fs.h"
#include "store_int.h"

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
            if (ckpt_meta_encode(&mlen, mbuf, sizeof mbuf, &m) != 0) {
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

/* ckpt_iter callback of a copy into format 5 from an older store: the
 * keys of each object or container record, read from it by the caller's
 * rec_keys (the store has no other source for them), into obj_keys or
 * cont_keys. */
struct keys_job {
    ckpt_store *st;
    MDB_txn *txn;
    MDB_dbi dbi;
    int db;  /* CKPT_DB_OBJ or CKPT_DB_CONT */
    int rc;   /* an LMDB error */
    int code; /* or a store error code, with the message set */
};

static int keys_put(const ckpt_val *k, const ckpt_val *v, void *p)
{
    struct keys_job *j = p;
    struct ckpt_rec_keys rk;
    uint8_t buf[CKPT_OBJ_KEYS_FIXED + CKPT_NAME_MAX];
    int rc = ckpt_stored_keys(j->st, &rk, j->db, v->data, v->len);
    if (rc != 0 || rk.name == NULL || rk.nlen > CKPT_NAME_MAX) {
        char kt[40];
        ckpt_key_text(kt, sizeof kt, k->data, k->len);
        j->code = ckpt_seterr(j->st, rc == CKPT_E_INVAL && j->st->opts.rec_keys == NULL
                                       ? CKPT_E_INVAL : CKPT_E_CORRUPT, 0,
                            "%s: copying into format %u: the keys of %s record %s cannot be read"
                            "%s", j->st->path, CKPT_FORMAT_VERSION, ckpt_db_name(j->db), kt,
                            j->st->opts.rec_keys == NULL
                                ? " (the store was opened without ckpt_store_opts.rec_keys)" : "");
        return 1;
    }
    MDB_val kk = {k->len, (void *)k->data};
    size_t n = ckpt_keys_encode(buf, j->db == CKPT_DB_OBJ, &rk);
    MDB_val r = {n + CKPT_CSUM_LEN, NULL};
    if ((j->rc = mdb_put(j->txn, j->dbi, &kk, &r, MDB_APPEND | MDB_RESERVE)) != 0)
        return 1;
    memcpy(r.mv_data, buf, n);
    ckpt_csum_seal(kk.mv_data, kk.mv_size, r.mv_data, n);
    return 0;
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
        int r;
        if (seal && !st->keys && (db == CKPT_DB_OBJ_KEYS || db == CKPT_DB_CONT_KEYS)) {
            struct keys_job kj = {st, txn, j.dbi, CKPT_DB_CONT, 0, 0};
            if (db == CKPT_DB_OBJ_KEYS)
                kj.db = CKPT_DB_OBJ;
            r = ckpt_iter(tx, kj.db, NULL, 0, keys_put, &kj);
            if (r >= 0 && kj.code != 0) {
                mdb_txn_abort(txn);
                txn = NULL;
                rc = kj.code; /* the message is set */
                goto done;
            }
            j.rc = kj.rc;
        } else {
            r = ckpt_iter(tx, db, NULL, 0, compact_put, &j);
        }
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
