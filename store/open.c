/*
 * open.c - opening a rank's environment: options, ownership and locks
 * (ROOT/store.lock shared, writer.lock), the power-loss recovery before
 * LMDB reads the file (durable.c), LMDB's environment, the schema
 * (schema.c) and, for a new or converted store, the open's commit of its
 * meta record.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_fs.h"
#include "store_int.h"

/* A writer's root (and rank directory), where they exist, must be
 * directories this user owns: metadata must not land in, or be readable
 * through, someone else's directory. */
static int check_owned(const char *path, uid_t uid)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return errno == ENOENT ? 0 : ckpt_seterr(NULL, ckpt_map_lmdb(errno), errno, "%s", path);
    if (!S_ISDIR(sb.st_mode))
        return ckpt_seterr(NULL, CKPT_E_PERM, 0, "%s: store root is not a directory", path);
    if (sb.st_uid != uid)
        return ckpt_seterr(NULL, CKPT_E_PERM, 0, "%s: owned by uid %ld, not by this user (uid %ld); "
                           "refusing to keep a store there", path, (long)sb.st_uid, (long)uid);
    return 0;
}

/* A store that must be there (a reader's, or a writer's that may not
 * create it): data.mdb (its stat ds, NULL if it has none) with something
 * committed. Error set. */
static int check_data(const ckpt_store *st, const struct ckpt_store_opts *o, const char *data,
                      const struct stat *ds)
{
    struct stat sb;
    if (ds == NULL) {
        int e = errno;
        return ckpt_seterr(NULL, CKPT_E_NOSTORE, e, "%s: no store here (%s missing)", o->root,
                           stat(st->path, &sb) != 0 ? "rank directory" : "data.mdb");
    }
    if (ds->st_size == 0)
        /* LMDB would set up a new environment in it (or fail with EBADF
         * when read-only): nothing committed is left */
        return ckpt_seterr(NULL, CKPT_E_CORRUPT, 0, "%s: empty (0 bytes): truncated, or the store's "
                           "creation stopped before anything was committed", data);
    return 0;
}

/* Create and open the LMDB environment, with LMDB's assertions routed to
 * the guards. A reader that cannot create or open lock.mdb (a read-only
 * medium, a directory or lock file without write permission) opens
 * without it (MDB_NOLOCK): LMDB then keeps no reader table, which is safe
 * because no writer can be at work where the lock file cannot be written
 * (a writer needs it). Errors name the file that really failed. */
static int env_open(ckpt_store *st, const struct ckpt_store_opts *o, unsigned flags, const char *data,
                    uint64_t data_size)
{
    int rc;
    /* A writer maps twice its data from the start (open_env): growing the
     * map after mdb_env_open would unmap and map the file again, which in a
     * process with threads costs a TLB shootdown on every core. */
    size_t map = o->map_size ? o->map_size : ((size_t)64 << 20);
    if (!o->readonly && data_size <= SIZE_MAX / 2 && (size_t)data_size * 2 > map)
        map = (size_t)data_size * 2;
    for (;;) {
        if ((rc = mdb_env_create(&st->env)) != 0)
            return ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s: cannot create an LMDB environment",
                               st->path);
        mdb_env_set_assert(st->env, ckpt_guard_on_assert);
        if ((rc = mdb_env_set_maxdbs(st->env, 16)) == 0 &&
            (o->readonly ||
             (rc = mdb_env_set_mapsize(st->env, map)) == 0))
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

/* The LMDB part of ckpt_store_open, run under a guard: on error the
 * caller releases st. ds: data.mdb's stat when the open began (NULL: none
 * yet); a writer holds writer.lock, so nothing has changed it since. */
static int open_env(ckpt_store *st, const struct ckpt_store_opts *o, const char *data,
                    const struct stat *ds)
{
    MDB_txn *txn = NULL;
    int rc, fresh = 0;
    unsigned flags = MDB_NOTLS, disk_version = 0;
    const uint64_t data_size = ds ? (uint64_t)ds->st_size : 0;
    if (o->readonly)
        flags |= MDB_RDONLY;
    else if (o->sync_mode != CKPT_SYNC_EVERY)
        flags |= MDB_NOSYNC;
    /* A reader sets no map size: LMDB then maps the size recorded in the
     * file, so ckpt_store_info reports the writer's map, not 64 MiB (a map
     * a writer grows later is adopted on MDB_MAP_RESIZED, ckpt_rtxn_begin). */
    MDB_envinfo ei;
    rc = env_open(st, o, flags, data, data_size);
    if (rc == 0)
        mdb_env_info(st->env, &ei);
    if (ckpt_durable_deferred(st, rc == 0, rc == 0 ? ei.me_last_txnid : 0)) {
        /* Commits after the last sync (or a header LMDB refused): whether
         * they can be trusted depends on the boot. The power-loss recovery
         * runs in full (it may roll the file back) before LMDB opens it
         * again; LMDB's open read only its two meta pages. */
        if (st->env != NULL)
            mdb_env_close(st->env);
        st->env = NULL;
        if ((rc = ckpt_durable_recover(st, data, ds, 0)) == 0 &&
            (rc = env_open(st, o, flags, data, data_size)) == 0)
            mdb_env_info(st->env, &ei);
    }
    if (rc != 0)
        return rc;
    {
        /* LMDB maps the file and trusts it: a data.mdb cut shorter than its
         * last committed page would fault (SIGBUS) on first touch. (A
         * reader looks again: a writer may have grown it meanwhile; so
         * does a writer whose open just created it.) */
        struct stat now;
        uint64_t need = ((uint64_t)ei.me_last_pgno + 1) * st->psize;
        uint64_t size = data_size;
        if ((o->readonly || size == 0) && stat(data, &now) == 0)
            size = (uint64_t)now.st_size;
        if (size < need) {
            rc = ckpt_seterr(NULL, CKPT_E_CORRUPT, 0, "%s: truncated: %llu bytes, but its last "
                             "committed page ends at byte %llu", data, (unsigned long long)size,
                             (unsigned long long)need);
            return rc;
        }
    }
    if ((rc = ckpt_durable_check_opened(st, ei.me_last_txnid)) != 0)
        return rc;
    if (!o->readonly) {
        /* LMDB raises a map smaller than the data only to exactly the
         * data's size, which leaves no page for a commit (MDB_MAP_FULL):
         * give a writer headroom (env_open sized the map from the file
         * already; this is for a file it could not stat). */
        size_t used = (size_t)(ei.me_last_pgno + 1) * st->psize;
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

    if ((rc = mdb_txn_begin(st->env, NULL, o->readonly ? MDB_RDONLY : 0, &txn)) != 0) {
        int code = ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cannot begin a transaction",
                               st->path);
        return code;
    }
    if ((rc = ckpt_open_schema(st, txn, &fresh, &disk_version)) != 0) {
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
    }
    uint64_t disk_seq = st->meta.id_seq;
    if (!fresh && (!st->meta.clean || st->dur.rolled_back))
        /* (rolled back to the last sync: ids handed out after it were lost
         * with their commits, and may have been seen) */
        st->meta.id_seq += CKPT_ID_CRASH_GAP;
    st->meta.generation++;
    st->meta.clean = 0;
    /* The dirty mark ("open, not clean", the generation): a crash after it
     * is committed is visible at the next open, which then skips
     * CKPT_ID_CRASH_GAP ids. A new store, or one this open converted,
     * commits it now with the rest of the open's transaction. Otherwise
     * the first commit carries it (every commit writes meta), and the first
     * id handed out commits it before (stage.c, renew_lease): until then
     * the store on disk is the one the last writer left, so a crash of the
     * process or the machine costs nothing, and the restart writes nothing
     * before it is ready. */
    st->marked = fresh || st->meta.format_version != disk_version;
    if (st->marked && (rc = ckpt_freelist_check(st)) != 0) {
        mdb_txn_abort(txn);
        return rc;
    }
    if (st->marked) {
        st->meta.last_commit_ms = (int64_t)ckpt_now_ms();
        st->meta.commits++;
        rc = ckpt_put_meta(st, txn, &st->meta);
    }
    if (rc != 0)
        mdb_txn_abort(txn); /* a failed commit frees the txn by itself */
    else
        rc = mdb_txn_commit(txn); /* with nothing written: no I/O */
    if (rc != 0) {
        int code = ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s/data.mdb: cannot write meta at open",
                               st->path);
        return code;
    }
    st->id_seq_committed = st->marked ? st->meta.id_seq : disk_seq;
    if (st->marked && o->sync_mode == CKPT_SYNC_EVERY)
        ckpt_lease_synced(st, st->meta.id_seq); /* LMDB synced the commit */
    return 0;
}

static int store_open(ckpt_store **out, const struct ckpt_store_opts *o)
{
    ckpt_store *st;
    int rc;
    char data[4200];

    if (out == NULL)
        return CKPT_E_INVAL;
    *out = NULL;
    ckpt_store_wait_closed();
    if (o->root == NULL || o->rank < 0 || (!o->readonly && o->nranks < 1) ||
        (!o->readonly && o->rank >= o->nranks) || o->sync_mode < CKPT_SYNC_EVERY ||
        o->sync_mode > CKPT_SYNC_CLOSE)
        return ckpt_seterr(NULL, CKPT_E_INVAL, 0, "store options: need a root, 0 <= rank < nranks "
                           "and a known sync mode");
    if ((st = calloc(1, sizeof *st)) == NULL)
        return ckpt_seterr(NULL, CKPT_E_NOMEM, 0, "out of memory");
    st->opts = *o;
    st->locks.writer_fd = -1;
    st->locks.root_fd = -1;
    ckpt_durable_init(st);
    pthread_mutex_init(&st->mu, NULL);
    pthread_rwlock_init(&st->grow, NULL);
    pthread_cond_init(&st->bg.cv, NULL);
    sem_init(&st->bg.sem, 0, 0);
    size_t plen = strlen(o->root) + 32;
    if (strlen(o->root) > 4000 || (st->path = malloc(plen)) == NULL) {
        ckpt_release(st);
        return ckpt_seterr(NULL, CKPT_E_NAMETOOLONG, 0, "store root too long (%zu bytes)", strlen(o->root));
    }
    snprintf(st->path, plen, "%s/rank-%d", o->root, o->rank);
    snprintf(data, sizeof data, "%s/data.mdb", st->path);

    /* data.mdb's size and inode, for the whole open (a writer's, once it
     * holds writer.lock) */
    struct stat ds;
    int have_data = o->readonly && stat(data, &ds) == 0;
    if (o->readonly && (rc = check_data(st, o, data, have_data ? &ds : NULL)) != 0) {
        ckpt_release(st);
        return rc;
    }
    const uid_t uid = o->readonly ? 0 : geteuid();
    if (o->readonly) {
        /* readers may look at any store */
    } else if ((rc = check_owned(o->root, uid)) != 0 || (rc = check_owned(st->path, uid)) != 0) {
        ckpt_release(st);
        return rc;
    } else if (o->create && (rc = ckpt_fs_mkdirs(st->path)) != 0) {
        int code = ckpt_seterr(NULL, ckpt_map_lmdb(rc), rc, "%s: cannot create the store directory",
                               st->path);
        ckpt_release(st);
        return code;
    }

    if (!o->readonly) {
        /* ROOT/store.lock, shared: an operation that removes or replaces the
         * store (re-homing, a store replaced by a new one) holds it
         * exclusive (root.c). A root where it cannot be created (not
         * writable) has no such operation either. */
        char lk[4200];
        snprintf(lk, sizeof lk, "%s/store.lock", o->root);
        st->locks.root_fd = open(lk, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (st->locks.root_fd >= 0 && flock(st->locks.root_fd, LOCK_SH | LOCK_NB) != 0) {
            int e = errno;
            long pid = ckpt_lock_read_pid(lk);
            char who[48] = "";
            if (pid > 0)
                snprintf(who, sizeof who, " (pid %ld)", pid);
            int code = ckpt_seterr(NULL, e == EWOULDBLOCK ? CKPT_E_BUSY : ckpt_map_lmdb(e), e,
                                   "%s: %s%s", o->root, e == EWOULDBLOCK ?
                                   "the store is locked by another process that replaces or "
                                   "re-homes it" : "cannot lock store.lock", who);
            ckpt_release(st);
            return code;
        }
        /* One writer per rank environment: a second process writing the
         * same store would interleave its batches and meta with ours. Its
         * pid goes into the file, for the messages of those it keeps out. */
        snprintf(lk, sizeof lk, "%s/writer.lock", st->path);
        st->locks.writer_fd = open(lk, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (st->locks.writer_fd < 0 && errno == ENOENT && !o->create) {
            rc = check_data(st, o, data, NULL); /* no rank directory */
            ckpt_release(st);
            return rc;
        }
        if (st->locks.writer_fd < 0 || flock(st->locks.writer_fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            long pid = e == EWOULDBLOCK ? ckpt_lock_read_pid(lk) : 0;
            char who[48] = "";
            if (pid > 0)
                snprintf(who, sizeof who, " (pid %ld)", pid);
            int code = ckpt_seterr(NULL, e == EWOULDBLOCK ? CKPT_E_BUSY : ckpt_map_lmdb(e), e,
                                   "%s: %s%s", st->path, e == EWOULDBLOCK ?
                                   "the store is open for writing by another process" :
                                   "cannot create writer.lock", who);
            ckpt_release(st);
            return code;
        }
        ckpt_lock_write_pid(st->locks.writer_fd);
        /* no other writer changes data.mdb from here on */
        have_data = stat(data, &ds) == 0;
        if (!o->create && (rc = check_data(st, o, data, have_data ? &ds : NULL)) != 0) {
            ckpt_release(st);
            return rc;
        }
    }

    if (!o->readonly && have_data && ckpt_is_poisoned(&ds)) {
        rc = ckpt_seterr(NULL, CKPT_E_FAILED, 0, "%s: a write transaction of this process faulted "
                         "on a damaged page of this store earlier, and LMDB's writer lock stays held "
                         "until the process ends; open it in a new process", data);
        ckpt_release(st);
        return rc;
    }
    /* power loss: roll back to the last synced state, before LMDB reads the
     * file (durable.c) */
    if ((rc = ckpt_durable_recover(st, data, have_data ? &ds : NULL, 1)) != 0) {
        ckpt_release(st);
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
        ckpt_release(st); /* the transaction of the open is abandoned, not ended */
        return rc;
    }
    rc = open_env(st, o, data, have_data ? &ds : NULL);
    ckpt_guard_pop(&g);
    if (rc == 0)
        rc = ckpt_durable_opened(st); /* the pin (a first sync record if needed) */
    if (rc != 0) {
        ckpt_release(st);
        return rc;
    }
    if (!o->readonly)
        st->bg.deferred = 1; /* started at first use (ckpt_bg_ensure) */
    *out = st;
    return 0;
}

int ckpt_store_open(ckpt_store **out, const struct ckpt_store_opts *o)
{
    struct ckpt_store_opts oc = CKPT_STORE_OPTS_INIT;
    if (out != NULL)
        *out = NULL;
    if (o == NULL)
        return ckpt_seterr(NULL, CKPT_E_INVAL, 0, "store options: NULL");
    /* A caller built against an older header passes a smaller struct: the
     * fields it does not have keep CKPT_STORE_OPTS_INIT's values. */
    if (o->size < CKPT_STORE_OPTS_SIZE_V1 || o->size > sizeof oc)
        return ckpt_seterr(NULL, CKPT_E_INVAL, 0, "store options: size field %zu is not the size of "
                           "any version of struct ckpt_store_opts (%zu..%zu bytes): initialize the "
                           "struct with CKPT_STORE_OPTS_INIT", o->size,
                           (size_t)CKPT_STORE_OPTS_SIZE_V1, sizeof oc);
    memcpy(&oc, o, o->size);
    oc.size = sizeof oc;
    return store_open(out, &oc);
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
