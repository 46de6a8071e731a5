/*
 * methods.h - the persistence methods ckpt-bench-workload can run behind the
 * same model server and the same mutation stream (`--method`), for ckpt-bench.
 *
 *   lmdb      this project: hooks -> store (ckpt_workload.c's own code path)
 *   fwrite    PDC's close_server today: nothing during the workload; at close
 *             PDC-sized structs are fwrite()n, one file per rank; restart
 *             reads it all and rebuilds the tables
 *   bulki     a full BULKI snapshot of the tables at close, decoded and
 *             rebuilt at restart
 *   sqlite    the store's records and keys, one row per entry, incrementally
 *   rocksdb   the same, one key per entry
 *   lmdb-raw  the same bytes with raw mdb_put and no hooks: the floor
 *
 * ckpt-bench-workload (bench_workload.c) is ckpt-workload with these; every
 * method but lmdb is driven by method_common.c's write and restart, which
 * print the same `result:` lines as ckpt-workload's lmdb path.
 */
#ifndef PDC_CKPT_BENCH_METHODS_H
#define PDC_CKPT_BENCH_METHODS_H

#include <stddef.h>
#include <stdint.h>

#include "workload_cli.h"

/* The methods' table for wl_main (workload_cli.h): every method but lmdb,
 * driven by bench_write()/bench_restart() (method_common.c). */
extern const struct wl_methods bench_methods;

/* ---- for the method implementations ---- */

/* Times a method's close reports, per rank (seconds). */
struct bench_close_times {
    double close_s;             /* what the method's close costs */
    double fsync_s;             /* extra fsync after a close that does not sync (else 0) */
};

struct bench_method {
    const char *name;
    int has_map;                /* has a restart that only opens (no rebuild) */
    /* Path of rank's store under root (file or directory). */
    void (*path)(char *out, size_t n, const char *root, int rank);
    /* Prepare a fresh store for writing. *sink gets the model's sink, or
     * stays zeroed (snapshot methods: nothing during the workload). */
    int (*open)(void **ctx, const char *root, int rank, int nranks, struct model_sink *sink);
    /* Commit at close: everything the tables hold must be in the store when
     * this returns (durable, unless t->fsync_s is measured separately).
     * Releases ctx, also on failure. */
    int (*close)(void *ctx, model_server *m, struct bench_close_times *t);
    /* Release an open ctx without committing (write failed). */
    void (*discard)(void *ctx);
    /* Restart by opening only (has_map); *ctx released by release(). */
    int (*map)(void **ctx, const char *root, int rank, int nranks);
    void (*release)(void *ctx);
    /* Restart by a full read: refill m's tables (m has no sink). */
    int (*rebuild)(model_server *m, const char *root, int rank, int nranks,
                   struct ckpt_rebuild_stats *st);
};

extern const struct bench_method bench_method_fwrite, bench_method_bulki, bench_method_sqlite,
    bench_method_rocksdb, bench_method_lmdb_raw;

/* ---- helpers shared by the methods (method_common.c) ---- */

/* mkdir -p (mode 0700). 0 or CKPT_E_*, message set. */
int bench_mkdirs(const char *path);
/* rm -rf of a file or a directory tree (no error if missing). */
void bench_remove(const char *path);
/* fsync a file or directory by path. 0 or CKPT_E_IO, message set. */
int bench_fsync_path(const char *path);
/* Monotonic seconds. */
double bench_now(void);

/* A bump allocator for copies of views (snapshot methods). */
struct bench_arena {
    struct bench_chunk *head;
};
void *bench_arena_alloc(struct bench_arena *a, size_t n);
char *bench_arena_str(struct bench_arena *a, const char *s);
void bench_arena_free(struct bench_arena *a);

/* The record-per-entry methods (sqlite, rocksdb, lmdb-raw) share one sink:
 * it encodes every mutation as the store's records under the store's keys
 * (docs/STORE.md) and hands them to a key-value backend, committing every
 * BENCH_KV_BATCH mutations as the store does by default. */
#define BENCH_KV_BATCH 1000u

struct bench_kv_ops {
    /* put key -> val in database db (enum ckpt_db) of the open batch */
    int (*put)(void *b, int db, const void *k, size_t klen, const void *v, size_t vlen);
    /* commit the open batch */
    int (*commit)(void *b);
};

struct bench_kv {
    const struct bench_kv_ops *ops;
    void *backend;
    int rank;
    uint64_t next_seq;
    unsigned staged;
};

/* kv over the backend b (its ops) of rank, and the sink over kv (kv must
 * outlive the model). */
void bench_kv_init(struct bench_kv *kv, const struct bench_kv_ops *ops, void *b, int rank,
                   struct model_sink *sink);
/* Put the meta entry (rank, nranks, next id) into the open batch. */
int bench_kv_put_meta(struct bench_kv *kv, int nranks);

/* Decode one entry of db (key, value as stored) and hand it to the model's
 * rebuild callbacks. */
int bench_kv_rebuild_entry(model_server *m, int db, const void *k, size_t klen, const void *v,
                           size_t vlen, struct ckpt_rebuild_stats *st);
/* Databases in rebuild order (containers, objects, kvtags, members,
 * regions). */
extern const int bench_kv_rebuild_order[5];

#endif
