/*
 * bg.c - a writer's background thread: time-based commits, periodic
 * syncs (durable.c) and merges of the tag index's delta (commit.c); after
 * a successful close it releases the handle (release.c).
 */
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <time.h>

#include "store_int.h"

/* A background sync, with st->mu held on entry and exit (not during the
 * fdatasync); returns when it ended (mono ms). */
static uint64_t bg_sync(ckpt_store *st)
{
    struct ckpt_durable_tok tok;
    uint64_t seq = st->id_seq_committed; /* the snapshot's id sequence */
    int marked = st->marked;                /* and whether it has the dirty mark */
    st->bg.commits_since_sync = 0;
    st->bg.bytes_since_sync = 0;
    ckpt_durable_begin(st, &tok); /* the snapshot this sync records (durable.c) */
    pthread_mutex_unlock(&st->mu);
    int rc = ckpt_durable_end(st, &tok); /* fdatasync, then the sync record */
    pthread_mutex_lock(&st->mu);
    if (rc == 0 && marked)
        ckpt_lease_synced(st, seq);
    return ckpt_mono_ms();
}

static void *bg_main(void *arg)
{
    ckpt_store *st = arg;
    uint64_t last_sync = ckpt_mono_ms();
    pthread_mutex_lock(&st->mu);
    ckpt_tagidx_delta_count_locked(st); /* what an earlier writer left unmerged */
    while (!__atomic_load_n(&st->bg.stop, __ATOMIC_ACQUIRE)) {
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
        pthread_cond_timedwait(&st->bg.cv, &st->mu, &ts);
        if (__atomic_load_n(&st->bg.stop, __ATOMIC_ACQUIRE))
            break;
        uint64_t now = ckpt_mono_ms();
        if (st->opts.commit_ms && st->batch.nops && now - st->batch.start_ms >= st->opts.commit_ms &&
            ckpt_retry_due(st))
            ckpt_commit_locked(st, 0); /* an error stays in commit.last_err/errmsg */
        if (st->opts.sync_mode != CKPT_SYNC_EVERY && st->bg.commits_since_sync &&
            (now - last_sync >= st->opts.sync_ms || ckpt_sync_due(st)))
            last_sync = bg_sync(st);
        if (ckpt_merge_due(st, 1)) {
            /* The tag index's delta, a slice at a time (others get st->mu
             * in between); close stops it at once (bg.stop: the slice's
             * transaction is abandoned, its chunks stay for the next
             * merge). Then sync, so that close does not have to write the
             * pages the merge rewrote. */
            int merged;
            ckpt_merge_all_locked(st, &st->bg.stop, 1, &merged); /* an error stays in merge_err */
            if (merged && st->opts.sync_mode != CKPT_SYNC_EVERY &&
                !__atomic_load_n(&st->bg.stop, __ATOMIC_ACQUIRE))
                last_sync = bg_sync(st);
        }
    }
    pthread_mutex_unlock(&st->mu);
    /* Stopped: wait for the verdict. After a successful close the handle
     * is released here, so that close neither waits for this thread's last
     * step nor starts a thread of its own (release_later). */
    while (sem_wait(&st->bg.sem) != 0)
        ; /* EINTR */
    if (__atomic_load_n(&st->bg.verdict, __ATOMIC_ACQUIRE) == BG_RELEASE) {
        /* Woken by the closer, this thread may have taken its CPU: give it
         * back, so that close returns before the unmapping starts. */
        sched_yield();
        ckpt_release_main(st);
    }
    return NULL;
}

void ckpt_bg_start(ckpt_store *st)
{
    if (st->opts.readonly || (st->opts.commit_ms == 0 && st->opts.sync_mode == CKPT_SYNC_EVERY))
        return;
    __atomic_store_n(&st->bg.stop, 0, __ATOMIC_RELEASE);
    if (pthread_create(&st->bg.thread, NULL, bg_main, st) == 0)
        st->bg.running = 1;
}

void ckpt_bg_ensure_locked(ckpt_store *st)
{
    if (__atomic_load_n(&st->bg.deferred, __ATOMIC_ACQUIRE)) {
        ckpt_bg_start(st);
        __atomic_store_n(&st->bg.deferred, 0, __ATOMIC_RELEASE);
    }
}

void ckpt_bg_ensure(ckpt_store *st)
{
    if (!__atomic_load_n(&st->bg.deferred, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&st->mu);
    ckpt_bg_ensure_locked(st);
    pthread_mutex_unlock(&st->mu);
}

/* Ask the background thread to stop; it does once its current step (a
 * commit, or a sync) is over. */
void ckpt_bg_request_stop(ckpt_store *st)
{
    if (!st->bg.running)
        return;
    /* first without st->mu, which a merge holds: it reads bg_stop as it
     * goes and gives up at once */
    __atomic_store_n(&st->bg.stop, 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&st->mu);
    pthread_cond_signal(&st->bg.cv);
    pthread_mutex_unlock(&st->mu);
}

void ckpt_bg_stop(ckpt_store *st)
{
    if (!st->bg.running)
        return;
    ckpt_bg_request_stop(st);
    __atomic_store_n(&st->bg.verdict, BG_EXIT, __ATOMIC_RELEASE);
    sem_post(&st->bg.sem);
    pthread_join(st->bg.thread, NULL);
    st->bg.running = 0;
}
