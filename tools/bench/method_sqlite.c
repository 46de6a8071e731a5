/*
 * method_sqlite.c - SQLite used incrementally, as a PDC user would for
 * kvtags: one database file per rank, one table per store database
 * (`k BLOB PRIMARY KEY, v BLOB` WITHOUT ROWID, so each is one B-tree keyed
 * like the LMDB database), one row per entry (the index entries of the store
 * are rows of their tables, as SQL secondary indexes would be), in
 * transactions of BENCH_KV_BATCH mutations.
 *
 * journal_mode=WAL and synchronous=OFF during the workload (SQLite's fastest
 * durable-at-close setting, like the store's close mode); close commits the
 * last transaction, closes (which checkpoints the WAL into the file) and
 * fsyncs the file and its directory. Restart (map): open and prepare the
 * lookups (reads the schema). Restart (rebuild): a full scan of every table
 * in rebuild order.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods.h"

struct sq {
    sqlite3 *db;
    sqlite3_stmt *ins[CKPT_DB_COUNT];
    sqlite3_stmt *get[CKPT_DB_COUNT];
    int in_txn;
    struct bench_kv kv;
    int nranks;
    char path[4200], dir[4200];
};

static void sq_path(char *out, size_t n, const char *root, int rank)
{
    snprintf(out, n, "%s/rank-%d.sqlite", root, rank);
}

static int serr(struct sq *s, const char *what)
{
    return ckpt_error(CKPT_E_IO, "%s: %s: %s", s->path, what, s->db ? sqlite3_errmsg(s->db) : "no handle");
}

static void sq_free(struct sq *s)
{
    for (int i = 0; i < CKPT_DB_COUNT; i++) {
        sqlite3_finalize(s->ins[i]);
        sqlite3_finalize(s->get[i]);
    }
    if (s->db)
        sqlite3_close(s->db);
    free(s);
}

static int exec(struct sq *s, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        int rc = ckpt_error(CKPT_E_IO, "%s: %s: %s", s->path, sql, msg ? msg : "?");
        sqlite3_free(msg);
        return rc;
    }
    return 0;
}

/* Table name of a store database ("kvtag_name" etc. are valid SQL names). */
static const char *tname(int db)
{
    return ckpt_db_name(db);
}

static int sq_opendb(struct sq *s, int create)
{
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(s->path, &s->db, flags, NULL) != SQLITE_OK)
        return serr(s, "open");
    return exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;");
}

static int sq_put(void *b, int db, const void *k, size_t klen, const void *v, size_t vlen)
{
    struct sq *s = b;
    sqlite3_stmt *st = s->ins[db];
    int rc;
    if (!s->in_txn) {
        if ((rc = exec(s, "BEGIN")) != 0)
            return rc;
        s->in_txn = 1;
    }
    sqlite3_bind_blob(st, 1, k, (int)klen, SQLITE_STATIC);
    sqlite3_bind_blob(st, 2, vlen ? v : "", (int)vlen, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : serr(s, "insert");
}

static int sq_commit(void *b)
{
    struct sq *s = b;
    if (!s->in_txn)
        return 0;
    s->in_txn = 0;
    return exec(s, "COMMIT");
}

static const struct bench_kv_ops sq_ops = {sq_put, sq_commit};

static int sq_open(void **ctx, const char *root, int rank, int nranks, struct model_sink *sink)
{
    struct sq *s = calloc(1, sizeof *s);
    char sql[256];
    int rc;
    if (s == NULL)
        return CKPT_E_NOMEM;
    sq_path(s->path, sizeof s->path, root, rank);
    snprintf(s->dir, sizeof s->dir, "%s", root);
    s->nranks = nranks;
    /* leftovers of a run that did not close */
    char side[4300];
    snprintf(side, sizeof side, "%s-wal", s->path);
    bench_remove(side);
    snprintf(side, sizeof side, "%s-shm", s->path);
    bench_remove(side);
    if ((rc = sq_opendb(s, 1)) != 0)
        goto fail;
    for (int db = 0; db < CKPT_DB_COUNT; db++) {
        snprintf(sql, sizeof sql, "CREATE TABLE %s(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID", tname(db));
        if ((rc = exec(s, sql)) != 0)
            goto fail;
        snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO %s(k, v) VALUES(?, ?)", tname(db));
        if (sqlite3_prepare_v2(s->db, sql, -1, &s->ins[db], NULL) != SQLITE_OK) {
            rc = serr(s, "prepare");
            goto fail;
        }
    }
    bench_kv_init(&s->kv, &sq_ops, s, rank, sink);
    *ctx = s;
    return 0;
fail:
    sq_free(s);
    return rc;
}

static void sq_discard(void *ctx)
{
    sq_free(ctx);
}

static int sq_close(void *ctx, model_server *m, struct bench_close_times *t)
{
    struct sq *s = ctx;
    char path[4200], dir[4200];
    int rc;
    double t0 = bench_now();
    (void)m;
    snprintf(path, sizeof path, "%s", s->path);
    snprintf(dir, sizeof dir, "%s", s->dir);
    if ((rc = bench_kv_put_meta(&s->kv, s->nranks)) == 0)
        rc = sq_commit(s);
    for (int i = 0; i < CKPT_DB_COUNT; i++) {
        sqlite3_finalize(s->ins[i]);
        s->ins[i] = NULL;
    }
    /* the last connection's close checkpoints the WAL into the file */
    if (rc == 0 && sqlite3_close(s->db) != SQLITE_OK)
        rc = serr(s, "close");
    else if (rc == 0)
        s->db = NULL;
    sq_free(s);
    if (rc == 0 && (rc = bench_fsync_path(path)) == 0)
        rc = bench_fsync_path(dir);
    t->close_s = bench_now() - t0;
    t->fsync_s = 0;
    return rc;
}

static int sq_map(void **ctx, const char *root, int rank, int nranks)
{
    struct sq *s = calloc(1, sizeof *s);
    char sql[256];
    int rc;
    (void)nranks;
    if (s == NULL)
        return CKPT_E_NOMEM;
    sq_path(s->path, sizeof s->path, root, rank);
    if ((rc = sq_opendb(s, 0)) != 0)
        goto fail;
    /* ready to serve lookups: every lookup statement prepared */
    for (int db = 0; db < CKPT_DB_COUNT; db++) {
        snprintf(sql, sizeof sql, "SELECT v FROM %s WHERE k = ?", tname(db));
        if (sqlite3_prepare_v2(s->db, sql, -1, &s->get[db], NULL) != SQLITE_OK) {
            rc = serr(s, "prepare");
            goto fail;
        }
    }
    *ctx = s;
    return 0;
fail:
    sq_free(s);
    return rc;
}

static void sq_release(void *ctx)
{
    sq_free(ctx);
}

static int sq_rebuild(model_server *m, const char *root, int rank, int nranks,
                      struct ckpt_rebuild_stats *st)
{
    struct sq *s = NULL;
    char sql[256];
    int rc = sq_map((void **)&s, root, rank, nranks);
    if (rc)
        return rc;
    for (int i = 0; i < 5 && rc == 0; i++) {
        int db = bench_kv_rebuild_order[i], step;
        sqlite3_stmt *q;
        snprintf(sql, sizeof sql, "SELECT k, v FROM %s ORDER BY k", tname(db));
        if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) != SQLITE_OK) {
            rc = serr(s, "prepare");
            break;
        }
        while (rc == 0 && (step = sqlite3_step(q)) == SQLITE_ROW)
            rc = bench_kv_rebuild_entry(m, db, sqlite3_column_blob(q, 0),
                                        (size_t)sqlite3_column_bytes(q, 0), sqlite3_column_blob(q, 1),
                                        (size_t)sqlite3_column_bytes(q, 1), st);
        if (rc == 0 && step != SQLITE_DONE)
            rc = serr(s, "scan");
        sqlite3_finalize(q);
    }
    sq_free(s);
    return rc;
}

const struct bench_method bench_method_sqlite = {
    "sqlite", 1, sq_path, sq_open, sq_close, sq_discard, sq_map, sq_release, sq_rebuild,
};
