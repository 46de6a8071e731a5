/*
 * method_lmdb_raw.c - the floor of the workload phase: the same records under
 * the same keys in the same named databases as the store, put with plain
 * mdb_put into a write transaction committed every BENCH_KV_BATCH
 * mutations, MDB_NOSYNC as the store's default sync mode, and one
 * mdb_env_sync at close. No hooks layer, no staging log, no meta record per
 * commit, no background thread, no overwrite checks.
 *
 * Restart (map): open the environment and its databases. Restart (rebuild):
 * that, then a cursor walk of every database in rebuild order.
 */
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckpt_fs.h"
#include "methods.h"

struct lr {
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi[CKPT_DB_COUNT];
    struct bench_kv kv;
    int nranks;
    char path[4200];
};

static void lr_path(char *out, size_t n, const char *root, int rank)
{
    snprintf(out, n, "%s/rank-%d.lmdb-raw", root, rank);
}

static int lerr(struct lr *l, int rc, const char *what)
{
    return ckpt_error(rc == MDB_MAP_FULL ? CKPT_E_MAP_FULL : CKPT_E_LMDB, "%s: %s: %s", l->path, what,
                      mdb_strerror(rc));
}

static void lr_free(struct lr *l)
{
    if (l->txn)
        mdb_txn_abort(l->txn);
    if (l->env)
        mdb_env_close(l->env);
    free(l);
}

/* Open the environment and every database (created if `create`). */
static int lr_env(struct lr *l, int create)
{
    int rc;
    MDB_txn *txn;
    if ((rc = mdb_env_create(&l->env)) != 0 || (rc = mdb_env_set_maxdbs(l->env, 16)) != 0 ||
        (rc = mdb_env_set_mapsize(l->env, (size_t)64 << 30)) != 0 ||
        (rc = mdb_env_open(l->env, l->path, MDB_NOSYNC, 0600)) != 0)
        return lerr(l, rc, "open");
    if ((rc = mdb_txn_begin(l->env, NULL, 0, &txn)) != 0)
        return lerr(l, rc, "begin");
    for (int db = 0; db < CKPT_DB_COUNT && rc == 0; db++)
        rc = mdb_dbi_open(txn, ckpt_db_name(db), create ? MDB_CREATE : 0, &l->dbi[db]);
    if (rc) {
        mdb_txn_abort(txn);
        return lerr(l, rc, "opening the databases");
    }
    if ((rc = mdb_txn_commit(txn)) != 0)
        return lerr(l, rc, "commit");
    return 0;
}

static int lr_put(void *b, int db, const void *k, size_t klen, const void *v, size_t vlen)
{
    struct lr *l = b;
    MDB_val key = {klen, (void *)k}, val = {vlen, (void *)v};
    int rc;
    if (l->txn == NULL && (rc = mdb_txn_begin(l->env, NULL, 0, &l->txn)) != 0)
        return lerr(l, rc, "begin");
    if ((rc = mdb_put(l->txn, l->dbi[db], &key, &val, 0)) != 0)
        return lerr(l, rc, "mdb_put");
    return 0;
}

static int lr_commit(void *b)
{
    struct lr *l = b;
    int rc = 0;
    if (l->txn) {
        rc = mdb_txn_commit(l->txn);
        l->txn = NULL;
    }
    return rc ? lerr(l, rc, "commit") : 0;
}

static const struct bench_kv_ops lr_ops = {lr_put, lr_commit};

static int lr_open(void **ctx, const char *root, int rank, int nranks, struct model_sink *sink)
{
    struct lr *l = calloc(1, sizeof *l);
    int rc;
    if (l == NULL)
        return CKPT_E_NOMEM;
    lr_path(l->path, sizeof l->path, root, rank);
    l->nranks = nranks;
    if ((rc = bench_mkdirs(l->path)) != 0 || (rc = lr_env(l, 1)) != 0) {
        lr_free(l);
        return rc;
    }
    bench_kv_init(&l->kv, &lr_ops, l, rank, sink);
    *ctx = l;
    return 0;
}

static void lr_discard(void *ctx)
{
    lr_free(ctx);
}

static int lr_close(void *ctx, model_server *m, struct bench_close_times *t)
{
    struct lr *l = ctx;
    int rc;
    double t0 = bench_now();
    (void)m;
    if ((rc = bench_kv_put_meta(&l->kv, l->nranks)) == 0 && (rc = lr_commit(l)) == 0 &&
        (rc = mdb_env_sync(l->env, 1)) != 0)
        rc = lerr(l, rc, "sync");
    lr_free(l);
    t->close_s = bench_now() - t0;
    t->fsync_s = 0;
    return rc;
}

static int lr_map(void **ctx, const char *root, int rank, int nranks)
{
    struct lr *l = calloc(1, sizeof *l);
    int rc;
    (void)nranks;
    if (l == NULL)
        return CKPT_E_NOMEM;
    lr_path(l->path, sizeof l->path, root, rank);
    if ((rc = lr_env(l, 0)) != 0) {
        lr_free(l);
        return rc;
    }
    *ctx = l;
    return 0;
}

static void lr_release(void *ctx)
{
    lr_free(ctx);
}

static int lr_rebuild(model_server *m, const char *root, int rank, int nranks,
                      struct ckpt_rebuild_stats *st)
{
    struct lr *l = NULL;
    MDB_txn *txn;
    int rc = lr_map((void **)&l, root, rank, nranks);
    if (rc)
        return rc;
    if ((rc = mdb_txn_begin(l->env, NULL, MDB_RDONLY, &txn)) != 0) {
        rc = lerr(l, rc, "begin");
        lr_free(l);
        return rc;
    }
    for (int i = 0; i < 5 && rc == 0; i++) {
        int db = bench_kv_rebuild_order[i];
        MDB_cursor *cur;
        MDB_val k, v;
        if ((rc = mdb_cursor_open(txn, l->dbi[db], &cur)) != 0) {
            rc = lerr(l, rc, "cursor");
            break;
        }
        int g = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
        while (g == 0 && rc == 0) {
            rc = bench_kv_rebuild_entry(m, db, k.mv_data, k.mv_size, v.mv_data, v.mv_size, st);
            g = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
        }
        if (rc == 0 && g != MDB_NOTFOUND)
            rc = lerr(l, g, "cursor walk");
        mdb_cursor_close(cur);
    }
    mdb_txn_abort(txn);
    lr_free(l);
    return rc;
}

const struct bench_method bench_method_lmdb_raw = {
    "lmdb-raw", 1, lr_path, lr_open, lr_close, lr_discard, lr_map, lr_release, lr_rebuild,
};
