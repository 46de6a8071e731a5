/*
 * method_rocksdb.c - RocksDB used incrementally: one database directory per
 * rank, one key per entry (a byte naming the store database, then the
 * store's key), the store's records as values, one WriteBatch per
 * BENCH_KV_BATCH mutations written without sync (the WAL is written, not
 * synced). RocksDB's default options otherwise (64 MiB memtable, two
 * background jobs, its default compression).
 *
 * Close writes the last batch with sync=true (fsyncs the WAL: everything is
 * durable) and closes; memtables are not flushed (RocksDB does not flush at
 * close while the WAL holds the data). Restart (map): rocksdb_open, which
 * replays the WAL written since the last memtable flush. Restart (rebuild):
 * that, then an iterator walk of each database's key range in rebuild order.
 */
#include <rocksdb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods.h"

#define KEY_MAX (1 + 8 + CKPT_NAMEKEY_MAX + 8)

struct rk {
    rocksdb_t *db;
    rocksdb_options_t *opts;
    rocksdb_writeoptions_t *wo;
    rocksdb_writebatch_t *batch;
    struct bench_kv kv;
    int nranks;
    char path[4200];
};

static void rk_path(char *out, size_t n, const char *root, int rank)
{
    snprintf(out, n, "%s/rank-%d.rocksdb", root, rank);
}

static int rerr(struct rk *r, const char *what, char *err)
{
    int rc = ckpt_error(CKPT_E_IO, "%s: %s: %s", r->path, what, err ? err : "?");
    rocksdb_free(err);
    return rc;
}

static void rk_free(struct rk *r)
{
    if (r->batch)
        rocksdb_writebatch_destroy(r->batch);
    if (r->db)
        rocksdb_close(r->db);
    if (r->wo)
        rocksdb_writeoptions_destroy(r->wo);
    if (r->opts)
        rocksdb_options_destroy(r->opts);
    free(r);
}

static int rk_opendb(struct rk *r, int create)
{
    char *err = NULL;
    r->opts = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(r->opts, create);
    r->db = rocksdb_open(r->opts, r->path, &err);
    return err ? rerr(r, "open", err) : 0;
}

static int rk_put(void *b, int db, const void *k, size_t klen, const void *v, size_t vlen)
{
    struct rk *r = b;
    char key[KEY_MAX];
    if (klen + 1 > sizeof key)
        return ckpt_error(CKPT_E_NAMETOOLONG, "key of %zu bytes", klen);
    key[0] = (char)db;
    memcpy(key + 1, k, klen);
    rocksdb_writebatch_put(r->batch, key, klen + 1, v, vlen);
    return 0;
}

static int write_batch(struct rk *r, int sync)
{
    char *err = NULL;
    rocksdb_writeoptions_set_sync(r->wo, (unsigned char)sync);
    rocksdb_write(r->db, r->wo, r->batch, &err);
    rocksdb_writebatch_clear(r->batch);
    return err ? rerr(r, "write", err) : 0;
}

static int rk_commit(void *b)
{
    return write_batch(b, 0);
}

static const struct bench_kv_ops rk_ops = {rk_put, rk_commit};

static int rk_open(void **ctx, const char *root, int rank, int nranks, struct model_sink *sink)
{
    struct rk *r = calloc(1, sizeof *r);
    int rc;
    if (r == NULL)
        return CKPT_E_NOMEM;
    rk_path(r->path, sizeof r->path, root, rank);
    r->nranks = nranks;
    if ((rc = rk_opendb(r, 1)) != 0) {
        rk_free(r);
        return rc;
    }
    r->wo = rocksdb_writeoptions_create();
    r->batch = rocksdb_writebatch_create();
    bench_kv_init(&r->kv, &rk_ops, r, rank, sink);
    *ctx = r;
    return 0;
}

static void rk_discard(void *ctx)
{
    rk_free(ctx);
}

static int rk_close(void *ctx, model_server *m, struct bench_close_times *t)
{
    struct rk *r = ctx;
    int rc;
    double t0 = bench_now();
    (void)m;
    if ((rc = bench_kv_put_meta(&r->kv, r->nranks)) == 0)
        rc = write_batch(r, 1);
    rk_free(r);
    t->close_s = bench_now() - t0;
    t->fsync_s = 0;
    return rc;
}

static int rk_map(void **ctx, const char *root, int rank, int nranks)
{
    struct rk *r = calloc(1, sizeof *r);
    int rc;
    (void)nranks;
    if (r == NULL)
        return CKPT_E_NOMEM;
    rk_path(r->path, sizeof r->path, root, rank);
    if ((rc = rk_opendb(r, 0)) != 0) {
        rk_free(r);
        return rc;
    }
    *ctx = r;
    return 0;
}

static void rk_release(void *ctx)
{
    rk_free(ctx);
}

static int rk_rebuild(model_server *m, const char *root, int rank, int nranks,
                      struct ckpt_rebuild_stats *st)
{
    struct rk *r = NULL;
    int rc = rk_map((void **)&r, root, rank, nranks);
    if (rc)
        return rc;
    rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
    rocksdb_iterator_t *it = rocksdb_create_iterator(r->db, ro);
    for (int i = 0; i < 5 && rc == 0; i++) {
        int db = bench_kv_rebuild_order[i];
        char p = (char)db;
        for (rocksdb_iter_seek(it, &p, 1); rc == 0 && rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
            size_t klen, vlen;
            const char *k = rocksdb_iter_key(it, &klen), *v = rocksdb_iter_value(it, &vlen);
            if (klen < 1 || k[0] != p)
                break;
            rc = bench_kv_rebuild_entry(m, db, k + 1, klen - 1, v, vlen, st);
        }
        char *err = NULL;
        rocksdb_iter_get_error(it, &err);
        if (rc == 0 && err)
            rc = rerr(r, "scan", err);
        else
            rocksdb_free(err);
    }
    rocksdb_iter_destroy(it);
    rocksdb_readoptions_destroy(ro);
    rk_free(r);
    return rc;
}

const struct bench_method bench_method_rocksdb = {
    "rocksdb", 1, rk_path, rk_open, rk_close, rk_discard, rk_map, rk_release, rk_rebuild,
};
