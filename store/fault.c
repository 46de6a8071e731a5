/*
 * fault.c - after LMDB faulted on a damaged page (guard.c): the handle is
 * marked failed and names its first fault for every later call; an
 * environment whose write transaction faulted is not opened for writing
 * again in this process.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>

#include "store_int.h"

/* "what happened" of a fault on st's map */
void ckpt_describe_fault(char *buf, size_t n, const struct ckpt_guard *g, ckpt_store *st)
{
    MDB_envinfo ei;
    size_t len = 0;
    if (st->env != NULL && mdb_env_info(st->env, &ei) == 0)
        len = ei.me_mapsize;
    ckpt_guard_describe(buf, n, g, __atomic_load_n(&st->map_base, __ATOMIC_ACQUIRE), len, st->psize);
}

int ckpt_store_faulted(ckpt_store *st, const struct ckpt_guard *g, const char *where)
{
    char what[300];
    ckpt_describe_fault(what, sizeof what, g, st);
    if (__atomic_exchange_n(&st->fault.set, 1, __ATOMIC_ACQ_REL) == 0)
        snprintf(st->fault.what, sizeof st->fault.what, "%s/data.mdb: %s: %s", st->path, where, what);
    __atomic_store_n(&st->fault.failed, 1, __ATOMIC_RELEASE);
    return ckpt_seterr(st, CKPT_E_CORRUPT, 0, "%s/data.mdb: %s: %s: a page of the store is "
                       "damaged; this handle does not read it again (close it)", st->path, where, what);
}

int ckpt_store_check_failed(ckpt_store *st)
{
    if (!__atomic_load_n(&st->fault.failed, __ATOMIC_ACQUIRE))
        return 0;
    if (__atomic_load_n(&st->fault.set, __ATOMIC_ACQUIRE))
        return ckpt_seterr(st, CKPT_E_FAILED, 0, "%s/data.mdb: not read again after an earlier "
                           "fault on a damaged page (%s); close the store", st->path, st->fault.what);
    return ckpt_seterr(st, CKPT_E_FAILED, 0, "%s: an earlier LMDB failure requires reopening",
                       st->path);
}

/* Environments whose write transaction faulted in this process: LMDB's
 * writer mutex (in lock.mdb) is still held by the thread that faulted, so
 * a new write transaction from this process would wait for it forever.
 * They are refused for writing until the process ends. Keyed by data.mdb's
 * device and inode. */
static pthread_mutex_t poison_mu = PTHREAD_MUTEX_INITIALIZER;
static struct { dev_t dev; ino_t ino; } poisoned[64];
static size_t npoisoned;

void ckpt_poison_env(const char *dir)
{
    char data[4200];
    struct stat sb;
    snprintf(data, sizeof data, "%s/data.mdb", dir);
    if (stat(data, &sb) != 0)
        return;
    pthread_mutex_lock(&poison_mu);
    if (npoisoned < sizeof poisoned / sizeof poisoned[0]) {
        poisoned[npoisoned].dev = sb.st_dev;
        poisoned[npoisoned].ino = sb.st_ino;
        npoisoned++;
    }
    pthread_mutex_unlock(&poison_mu);
}

int ckpt_is_poisoned(const struct stat *data)
{
    int hit = 0;
    pthread_mutex_lock(&poison_mu);
    for (size_t i = 0; i < npoisoned && !hit; i++)
        hit = poisoned[i].dev == data->st_dev && poisoned[i].ino == data->st_ino;
    pthread_mutex_unlock(&poison_mu);
    return hit;
}
