/*
 * shared.c - node-local store with a copy on shared storage (the way
 * SCR/VeloC-style HPC checkpointing works, and what PDC's
 * PDC_CHECKPOINT_TMPFS approximates).
 *
 * Publishing rank r's copy into SHARED:
 *   1. copy the last commit with LMDB's copy API into SHARED/rank-r.new
 *      (consistent while the server goes on writing), fsync it;
 *   2. SHARED/rank-r -> SHARED/rank-r.old, SHARED/rank-r.new -> SHARED/rank-r,
 *      fsync SHARED, remove rank-r.old.
 * At every moment SHARED holds a complete copy: rank-r, or (between the two
 * renames) rank-r.old. Restoring picks rank-r, else rank-r.old.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_fs.h"
#include "hooks_int.h"

/* Whether SHARED/rank-r opens as a store (a copy cut short does not:
 * the store refuses a data.mdb shorter than its last committed page). */
static int copy_opens(const char *shared, int rank)
{
    ckpt_store *ro;
    if (ckpt_store_open_readonly(&ro, shared, rank) != 0)
        return 0;
    ckpt_store_close(ro);
    return 1;
}

/* Finish an interrupted publish of rank-r, if any: returns whether a
 * complete copy is now at SHARED/rank-r. A publish fsyncs rank-r.new before
 * it renames anything, so when rank-r is missing but rank-r.old exists (a
 * crash between the two renames) rank-r.new is complete and the newer copy;
 * rank-r.new alone is an unfinished first copy and is ignored. Should
 * rank-r.new not open all the same (the file system lost what the fsync
 * promised), the complete rank-r.old is used rather than lost. */
static int settle(const char *shared, int rank, char *cur, size_t n)
{
    char nw[4200], old[4200];
    struct stat sb;
    snprintf(cur, n, "%s/rank-%d", shared, rank);
    snprintf(nw, sizeof nw, "%s/rank-%d.new", shared, rank);
    snprintf(old, sizeof old, "%s/rank-%d.old", shared, rank);
    if (stat(cur, &sb) == 0)
        return 1;
    if (stat(old, &sb) != 0)
        return 0;
    if (stat(nw, &sb) == 0 && rename(nw, cur) == 0) {
        if (copy_opens(shared, rank)) {
            ckpt_fs_fsync(shared);
            return 1;
        }
        ckpt_fs_rmtree(cur);
    }
    if (rename(old, cur) != 0)
        return 0;
    ckpt_fs_fsync(shared);
    return 1;
}

int ckpt_shared_publish(ckpt_store *st, const char *shared, int rank)
{
    char cur[4200], nw[4200], old[4200], data[4300];
    int rc, e;
    if ((e = ckpt_fs_mkdirs(shared)) != 0)
        return ckpt_error(CKPT_E_IO, "%s: cannot create the shared directory: %s", shared, strerror(e));
    settle(shared, rank, cur, sizeof cur);
    snprintf(nw, sizeof nw, "%s/rank-%d.new", shared, rank);
    snprintf(old, sizeof old, "%s/rank-%d.old", shared, rank);
    ckpt_fs_rmtree(nw); /* left by an interrupted copy */
    if ((rc = ckpt_store_copy(st, nw, 0)) != 0)
        return rc;
    snprintf(data, sizeof data, "%s/data.mdb", nw);
    if (ckpt_fs_fsync(data) != 0 || ckpt_fs_fsync(nw) != 0)
        return ckpt_error(CKPT_E_IO, "%s: fsync of the shared copy: %s", nw, strerror(errno));
    struct stat sb;
    if (stat(cur, &sb) == 0) {
        ckpt_fs_rmtree(old);
        if (rename(cur, old) != 0)
            return ckpt_error(CKPT_E_IO, "%s: %s", cur, strerror(errno));
    }
    if (rename(nw, cur) != 0 || ckpt_fs_fsync(shared) != 0)
        return ckpt_error(CKPT_E_IO, "publishing %s: %s", cur, strerror(errno));
    ckpt_fs_rmtree(old);
    return 0;
}

int ckpt_shared_restore(const char *local, const char *shared, int rank)
{
    char ldir[4200], ldata[4300], cur[4200];
    struct stat sb;
    snprintf(ldir, sizeof ldir, "%s/rank-%d", local, rank);
    snprintf(ldata, sizeof ldata, "%s/data.mdb", ldir);
    if (stat(ldata, &sb) == 0)
        return 0; /* the local store is there: use it */
    if (!settle(shared, rank, cur, sizeof cur))
        return 0; /* no shared copy either: a fresh store */
    /* the node was replaced: start from the shared copy */
    ckpt_store *ro;
    int rc, e;
    if ((e = ckpt_fs_mkdirs(local)) != 0)
        return ckpt_error(CKPT_E_IO, "%s: %s", local, strerror(e));
    rmdir(ldir); /* an empty leftover directory */
    if ((rc = ckpt_store_open_readonly(&ro, shared, rank)) != 0)
        return rc;
    rc = ckpt_store_copy(ro, ldir, 0);
    ckpt_store_close(ro);
    return rc;
}
