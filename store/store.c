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
/* Open / close                                                        */
/* ------------------------------------------------------------------ */

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
    int how = ckpt_release_track(st, st->bg_running);
    if (how == 2) {
        __atomic_store_n(&st->bg_verdict, BG_RELEASE, __ATOMIC_RELEASE);
        sem_post(&st->bg_sem); /* st belongs to the thread now */
    } else if (how == 0) {
        ckpt_bg_stop(st);
        ckpt_release(st);
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
    if ((rc = ckpt_put_meta(st, txn, &st->meta)) != 0)
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
        ckpt_release(st);
        return ckpt_seterr(NULL, CKPT_E_NAMETOOLONG, 0, "store root too long (%zu bytes)", strlen(o->root));
    }
    snprintf(st->path, plen, "%s/rank-%d", o->root, o->rank);
    snprintf(data, sizeof data, "%s/data.mdb", st->path);

    if (o->readonly || !o->create) {
        if (stat(st->path, &sb) != 0 || stat(data, &sb) != 0) {
            rc = ckpt_seterr(NULL, CKPT_E_NOSTORE, errno, "%s: no store here (%s missing)",
                             o->root, stat(st->path, &sb) != 0 ? "rank directory" : "data.mdb");
            ckpt_release(st);
            return rc;
        }
        if (sb.st_size == 0) {
            /* LMDB would set up a new environment in it (or fail with
             * EBADF when read-only): nothing committed is left */
            rc = ckpt_seterr(NULL, CKPT_E_CORRUPT, 0, "%s: empty (0 bytes): truncated, or the store's "
                             "creation stopped before anything was committed", data);
            ckpt_release(st);
            return rc;
        }
    }
    if (o->readonly) {
        /* readers may look at any store */
    } else if ((rc = check_owned(o->root)) != 0 || (rc = check_owned(st->path)) != 0) {
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
            ckpt_release(st);
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
            ckpt_release(st);
            return code;
        }
        ckpt_lock_write_pid(st->writer_fd);
    }

    if (!o->readonly && ckpt_is_poisoned(data)) {
        rc = ckpt_seterr(NULL, CKPT_E_FAILED, 0, "%s: a write transaction of this process faulted "
                         "on a damaged page of this store earlier, and LMDB's writer lock stays held "
                         "until the process ends; open it in a new process", data);
        ckpt_release(st);
        return rc;
    }
    /* power loss: roll back to the last synced state, before LMDB reads the
     * file (durable.c) */
    if ((rc = ckpt_durable_recover(st, data)) != 0) {
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
    rc = open_env(st, o, data);
    ckpt_guard_pop(&g);
    if (rc == 0)
        rc = ckpt_durable_opened(st); /* the pin (a first sync record if needed) */
    if (rc != 0) {
        ckpt_release(st);
        return rc;
    }
    ckpt_bg_start(st);
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
        st->closing = 1;
        rc = ckpt_commit_locked(st, 1);
        st->closing = 0;
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

size_t ckpt_store_pending(ckpt_store *st)
{
    pthread_mutex_lock(&st->mu);
    size_t n = st->nops;
    pthread_mutex_unlock(&st->mu);
    return n;
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
        (rc = ckpt_commit_locked(st, 1)) != 0 &&
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
        ckpt_retry_due(st))
        rc = ckpt_commit_locked(st, 0);
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
