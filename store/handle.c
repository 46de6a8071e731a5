/*
 * handle.c - a handle's life after its open: checkpoint, the asked-for
 * merge of the tag index, its info, and close (the last commit, marked
 * clean, and its sync; the unmapping handed to a thread, release.c) or
 * discard.
 */
#include <pthread.h>
#include <semaphore.h>
#include <string.h>

#include "store_int.h"

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
    ckpt_drop_locks(st);
    int how = ckpt_release_track(st, st->bg.running);
    if (how == 2) {
        __atomic_store_n(&st->bg.verdict, BG_RELEASE, __ATOMIC_RELEASE);
        sem_post(&st->bg.sem); /* st belongs to the thread now */
    } else if (how == 0) {
        ckpt_bg_stop(st);
        ckpt_release(st);
    }
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
    return ckpt_commit_locked(st, 0);
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
        ckpt_bg_request_stop(st);
        struct ckpt_durable_tok tok;
        pthread_mutex_lock(&st->mu);
        st->meta.clean = 1;
        st->commit.closing = 1;
        rc = ckpt_commit_locked(st, 1);
        st->commit.closing = 0;
        if (rc)
            st->meta.clean = 0;
        else
            ckpt_durable_begin(st, &tok);
        pthread_mutex_unlock(&st->mu);
        if (rc == 0 && (rc = ckpt_durable_end(st, &tok)) != 0)
            rc = ckpt_seterr(st, ckpt_map_lmdb(rc), rc, "%s/data.mdb: sync at close failed", st->path);
        if (rc) {
            ckpt_bg_stop(st);
            ckpt_bg_start(st);
            return rc;
        }
        release_later(st);
        return 0;
    }
    ckpt_release(st);
    return 0;
}

void ckpt_store_discard(ckpt_store *st)
{
    if (st == NULL)
        return;
    ckpt_bg_stop(st);
    ckpt_release(st);
}

const char *ckpt_store_path(const ckpt_store *st)
{
    return st->path;
}

int ckpt_store_merge_tags(ckpt_store *st)
{
    return writer_locked(st, ckpt_merge_tags_locked);
}

int ckpt_store_info(struct ckpt_store_info *info, ckpt_store *st)
{
    MDB_envinfo ei;
    MDB_stat es;
    if (st == NULL || info == NULL)
        return CKPT_E_INVAL;
    pthread_mutex_lock(&st->mu);
    ckpt_tagidx_delta_count_locked(st);
    *info = st->meta;
    uint64_t pending = st->delta.pending;
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
