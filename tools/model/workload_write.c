/*
 * workload_write.c - ckpt-workload write (workload_cli.h): this rank's
 * stream applied to the model server with hooks on this project's store,
 * closed, and timed against one small fsync'd commit on the same disk.
 *
 * A store that is replaced (write --force, demo --force) is replaced only
 * once the new one is complete: it is written beside the old one
 * (ROOT.new-PID), under the old store's lock (ckpt_root_lock: refused
 * while any process has it open for writing), then renamed into place.
 */
#include <errno.h>
#include <lmdb.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "ckpt_fs.h"
#include "workload_cli.h"

/* Where a replacing write builds its store: ROOT.new-PID, beside ROOT
 * (same file system, so that it can be renamed into place). */
static int sibling_root(char *out, size_t n, const char *root)
{
    size_t len = strlen(root);
    while (len > 1 && root[len - 1] == '/')
        len--;
    int w = snprintf(out, n, "%.*s.new-%ld", (int)len, root, (long)getpid());
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* Put the new rank-<rank> (complete, closed) in place of the old one. */
static int swap_rank(const char *root, const char *newroot, int rank)
{
    char cur[4200], nw[4200], old[4200];
    struct stat sb;
    snprintf(cur, sizeof cur, "%s/rank-%d", root, rank);
    snprintf(nw, sizeof nw, "%s/rank-%d", newroot, rank);
    snprintf(old, sizeof old, "%s/rank-%d.old", newroot, rank);
    if (lstat(cur, &sb) == 0 && rename(cur, old) != 0)
        return wl_fail("moving the old %s aside to %s: %s", cur, old, strerror(errno));
    if (rename(nw, cur) != 0)
        return wl_fail("moving the new %s into place at %s: %s (the old store is in %s)", nw, cur,
                    strerror(errno), old);
    return 0;
}

/* Rank 0, after every rank swapped: old ranks beyond this job's count go
 * too (they belonged to the replaced store), then the old layout. */
static int finish_replace(const char *root, const char *newroot)
{
    DIR *d = opendir(root);
    struct dirent *de;
    char a[4200], b[4200];
    int rc = 0;
    while (d && (de = readdir(d)) != NULL) {
        int r = ckpt_rank_of_name(de->d_name);
        if (r < wl_size)
            continue;
        if (snprintf(a, sizeof a, "%s/rank-%d", root, r) >= (int)sizeof a ||
            snprintf(b, sizeof b, "%s/rank-%d.old", newroot, r) >= (int)sizeof b)
            continue;
        if (rename(a, b) != 0)
            rc = wl_fail("moving the old %s aside: %s", a, strerror(errno));
    }
    if (d)
        closedir(d);
    if (rc == 0 && ckpt_fs_fsync(root) != 0)
        rc = wl_fail("%s: fsync: %s", root, strerror(errno));
    if (rc == 0 && ckpt_fs_rmtree(newroot) != 0)
        rc = wl_fail("removing the replaced store in %s: %s", newroot, strerror(errno));
    return rc;
}

/* ------------------------------------------------------------------ */
/* write                                                               */
/* ------------------------------------------------------------------ */

struct apply {
    model_server *m;
    int keep_ids;       /* records keep the stream's ids (re-homed tables) */
    int home, nranks;   /* with keep_ids: apply only what is homed on `home` */
    uint64_t *members;
    size_t nmem, capmem;
    uint64_t cont;
    long muts;
};

static int flush_members(struct apply *ap)
{
    int rc = 0;
    if (ap->nmem)
        rc = model_cont_add(ap->m, ap->cont, ap->members, ap->nmem);
    ap->nmem = 0;
    return rc;
}

static int apply_mut(const struct wl_mut *mu, void *arg)
{
    struct apply *ap = arg;
    uint64_t id = 0;
    int rc = 0;
    if (ap->keep_ids) {
        if (wl_home(mu, ap->nranks) != ap->home)
            return 0;
        if (mu->kind == WL_CONT)
            return model_cont_create_id(ap->m, &mu->cont);
        if (mu->kind == WL_OBJ)
            return model_obj_create(ap->m, &mu->obj, &id);
    }
    ap->muts++;
    switch (mu->kind) {
    case WL_CONT:
        rc = model_cont_create(ap->m, mu->cont.cont_name, &id);
        if (rc == 0 && id != mu->id)
            return ckpt_error(CKPT_E_EXISTS, "container got id %llu, expected %llu: is the store "
                              "fresh?", (unsigned long long)id, (unsigned long long)mu->id);
        break;
    case WL_CONT_TAG:
    case WL_TAG:
        rc = model_kvtag_put(ap->m, mu->owner, &mu->tag);
        break;
    case WL_OBJ: {
        struct ckpt_obj o = mu->obj;
        o.obj_id = 0;
        rc = model_obj_create(ap->m, &o, &id);
        if (rc == 0 && id != mu->id)
            return ckpt_error(CKPT_E_EXISTS, "%s got id %llu, expected %llu: is the store fresh?",
                              o.obj_name, (unsigned long long)id, (unsigned long long)mu->id);
        break;
    }
    case WL_REGION:
        rc = model_region_put(ap->m, &mu->region);
        break;
    case WL_MEMBER:
        if (ap->nmem == ap->capmem) {
            size_t nc = ap->capmem ? ap->capmem * 2 : 1024;
            uint64_t *nm = realloc(ap->members, nc * sizeof *nm);
            if (nm == NULL)
                return CKPT_E_NOMEM;
            ap->members = nm;
            ap->capmem = nc;
        }
        ap->cont = mu->owner;
        ap->members[ap->nmem++] = mu->id;
        if (ap->nmem == 1024)
            rc = flush_members(ap);
        break;
    }
    return rc;
}

/* The tables this rank holds after a re-homing from p->nranks = P_old
 * ranks to `nranks`: every old rank's stream, filtered by new home. */
int wl_run_streams_homed(const struct wl_params *p, int nranks, int me, model_server *m)
{
    struct apply ap = {m, 1, me, nranks, NULL, 0, 0, 0, 0};
    struct wl_params q = *p;
    int rc = 0;
    for (q.rank = 0; rc == 0 && q.rank < q.nranks; q.rank++) {
        rc = wl_stream(&q, apply_mut, &ap);
        if (rc == 0)
            rc = flush_members(&ap);
    }
    free(ap.members);
    return rc;
}

/* Apply this rank's stream to model m (hooks or not). */
int wl_run_stream(const struct wl_params *p, model_server *m, long *muts)
{
    struct apply ap = {m, 0, 0, 0, NULL, 0, 0, 0, 0};
    int rc = wl_stream(p, apply_mut, &ap);
    if (rc == 0)
        rc = flush_members(&ap);
    free(ap.members);
    if (muts)
        *muts = ap.muts;
    return rc;
}

/* For tests that need a writer certainly live (test_destructive_live.sh):
 * while the file CKPT_WORKLOAD_HOLD names exists, the ranks keep the store
 * open after their workload, before close; neither phase's time counts it. */
static void hold_open(void)
{
    const char *f = getenv("CKPT_WORKLOAD_HOLD");
    struct timespec ts = {0, 10 * 1000 * 1000};
    for (int i = 0; f != NULL && *f != '\0' && i < 60000 && access(f, F_OK) == 0; i++)
        nanosleep(&ts, NULL);
}

int wl_cmd_write(struct wl_args *a, int quiet)
{
    ckpt_hooks *h = NULL;
    model_server *m = NULL;
    struct ckpt_hooks_opts ho = a->hopts;
    char newroot[4200] = "";
    long muts = 0;
    int rc = 0, replace = 0, lockfd = -1;
    double t0, t1, tc, t2;

    /* A store there already is refused, or with --force replaced: the new
     * one is written beside it while rank 0 holds the old one's lock (no
     * writer can open it; refused if one has it open), and only a complete
     * new store is renamed into place. */
    if (wl_rank == 0) {
        replace = wl_holds_ranks(a->root);
        if (replace && !a->force)
            rc = wl_fail("%s: a store is already there; remove it or add --force", a->root);
        else if (replace && ckpt_root_lock(&lockfd, a->root) != 0)
            rc = wl_fail("%s%s", ckpt_errmsg(), a->force ? "; nothing was replaced" : "");
        else if (replace && sibling_root(newroot, sizeof newroot, a->root) != 0)
            rc = wl_fail("%s: path too long", a->root);
        else if (replace && wl_holds_ranks(newroot))
            rc = wl_fail("%s is in the way (left by an interrupted replace?); remove it", newroot);
    }
    if (wl_any_failed(rc != 0)) {
        ckpt_root_unlock(lockfd);
        return 1;
    }
    MPI_Bcast(&replace, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(newroot, sizeof newroot, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (replace)
        ho.store_root = newroot;
    if ((rc = ckpt_hooks_open(&h, &ho)) != 0 || (rc = model_create(&m, wl_rank, wl_size, h)) != 0)
        wl_fail("open: %s", ckpt_errmsg());
    if (wl_any_failed(rc != 0)) {
        ckpt_hooks_discard(h);
        if (replace && wl_rank == 0)
            ckpt_fs_rmtree(newroot);
        ckpt_root_unlock(lockfd);
        return 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if ((rc = wl_run_stream(&a->p, m, &muts)) != 0)
        wl_fail("workload: %s (%s)", ckpt_errmsg(), ckpt_strerror(rc));
    t1 = MPI_Wtime();
    hold_open();
    tc = MPI_Wtime();
    if (rc == 0 && (rc = ckpt_hooks_close(h)) != 0)
        wl_fail("close: %s", ckpt_errmsg());
    t2 = MPI_Wtime();
    /* close returned with everything durable; the environment's unmapping
     * goes on on its own thread (ckpt_store_close): timed apart */
    ckpt_store_wait_closed();
    double unmap = MPI_Wtime() - t2;
    if (rc)
        ckpt_hooks_discard(h);
    model_destroy(m);
    /* what close is measured against: one small fsync'd commit on the same
     * file system, now, under the same load */
    double fs = rc == 0 ? wl_fsync_commit_s(a->root, wl_rank, 11) : 0;
    double wmax = wl_max_all(t1 - t0), cmax = wl_max_all(t2 - tc), fsmax = wl_max_all(fs);
    double umax = wl_max_all(unmap);
    long total = wl_sum_all(muts), rss = wl_peak_rss_kb();
    if (replace && wl_any_failed(rc != 0)) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (wl_rank == 0) {
            ckpt_fs_rmtree(newroot); /* the old store was not touched */
            wl_fail("%s was left as it was", a->root);
        }
        ckpt_root_unlock(lockfd);
        return 1;
    }
    if (replace) {
        rc = wl_any_failed(swap_rank(a->root, newroot, wl_rank));
        if (rc == 0 && wl_rank == 0)
            rc = finish_replace(a->root, newroot);
        ckpt_root_unlock(lockfd);
        if (wl_any_failed(rc != 0))
            return 1;
    }
    if (wl_any_failed(rc != 0))
        return 1;
    if (wl_rank == 0 && !quiet) {
        printf("write: %d ranks, %ld objects x %ld tags, %ld tagged, %ld mutations, store %s\n",
               wl_size, a->p.objects, a->p.tags_per_object, a->p.tagged, total, a->root);
        printf("  workload %.6f s, close %.6f s (then unmapping %.6f s on its thread), one small "
               "fsync'd commit %.6f s (max over ranks)\n", wmax, cmax, umax, fsmax);
        printf("result: phase=write ranks=%d mutations=%ld workload_s=%.9f close_s=%.9f "
               "unmap_s=%.9f fsync_commit_s=%.9f peak_rss_kb=%ld method=lmdb\n", wl_size, total,
               wmax, cmax, umax, fsmax, rss);
    } else if (wl_rank == 0) {
        printf("  write    %ld mutations on %d ranks: workload %.6f s, close %.6f s\n", total, wl_size,
               wmax, cmax);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* one small fsync'd commit: the floor close is measured against        */
/* ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double wl_fsync_commit_s(const char *root, int rank, int n)
{
    char dir[4200];
    double t[64], res = -1;
    MDB_env *env = NULL;
    MDB_dbi dbi;
    int rc, done = 0;
    if (n < 1 || n > 64 || snprintf(dir, sizeof dir, "%s.fsync-probe-%d", root, rank) >= (int)sizeof dir)
        return -1;
    ckpt_fs_rmtree(dir);
    if (ckpt_fs_mkdirs(dir) != 0 || mdb_env_create(&env) != 0 ||
        mdb_env_set_mapsize(env, (size_t)1 << 20) != 0 || mdb_env_open(env, dir, 0, 0600) != 0)
        goto done;
    for (int i = 0; i < n; i++) {
        MDB_txn *txn;
        uint8_t k[8], v[100];
        struct timespec a, b;
        memset(v, i, sizeof v);
        memcpy(k, &i, sizeof i);
        memset(k + sizeof i, 0, sizeof k - sizeof i);
        MDB_val key = {sizeof k, k}, val = {sizeof v, v};
        clock_gettime(CLOCK_MONOTONIC, &a);
        if ((rc = mdb_txn_begin(env, NULL, 0, &txn)) != 0)
            goto done;
        if ((rc = mdb_dbi_open(txn, NULL, 0, &dbi)) != 0 || (rc = mdb_put(txn, dbi, &key, &val, 0)) != 0) {
            mdb_txn_abort(txn);
            goto done;
        }
        if (mdb_txn_commit(txn) != 0)
            goto done;
        clock_gettime(CLOCK_MONOTONIC, &b);
        t[done++] = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    }
    qsort(t, (size_t)done, sizeof t[0], cmp_double);
    res = t[done / 2];
done:
    if (env)
        mdb_env_close(env);
    ckpt_fs_rmtree(dir);
    return res;
}
