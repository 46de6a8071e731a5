/*
 * release.c - freeing a handle, and the threads that release closed
 * writers (ckpt_store_close hands the unmapping to one: handle.c). Every
 * open, fork and process exit waits for them.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "store_int.h"

/* Drop writer.lock and store.lock (closing their descriptors drops the
 * flocks); a second call does nothing. */
void ckpt_drop_locks(ckpt_store *st)
{
    if (st->locks.writer_fd >= 0)
        close(st->locks.writer_fd);
    if (st->locks.root_fd >= 0)
        close(st->locks.root_fd);
    st->locks.writer_fd = st->locks.root_fd = -1;
}

void ckpt_release(ckpt_store *st)
{
    ckpt_durable_release(st);
    if (st->env)
        mdb_env_close(st->env);
    ckpt_drop_locks(st);
    pthread_mutex_destroy(&st->mu);
    pthread_rwlock_destroy(&st->grow);
    pthread_cond_destroy(&st->bg.cv);
    sem_destroy(&st->bg.sem);
    free(st->batch.log);
    free(st->batch.run);
    free(st->delta.buf);
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

void *ckpt_release_main(void *arg)
{
    ckpt_release(arg);
    pthread_mutex_lock(&rel_mu);
    if (--rel_pending == 0)
        pthread_cond_broadcast(&rel_cv);
    pthread_mutex_unlock(&rel_mu);
    return NULL;
}

/* Hand st's release to a thread that opens, forks and exits wait for
 * (release_later in handle.c decides when): 2 the background thread, 1 a
 * new one, 0 none. */
int ckpt_release_track(ckpt_store *st, int via_bg)
{
    int how = 0; /* 1: a new thread, 2: the background thread */
    pthread_once(&rel_once, rel_init);
    pthread_mutex_lock(&rel_mu);
    if (rel_n < sizeof rel_threads / sizeof rel_threads[0]) {
        if (via_bg) {
            rel_threads[rel_n] = st->bg.thread;
            how = 2;
        } else if (pthread_create(&rel_threads[rel_n], NULL, ckpt_release_main, st) == 0) {
            how = 1;
        }
        if (how) {
            rel_n++;
            rel_pending++;
        }
    }
    pthread_mutex_unlock(&rel_mu);
    return how;
}
