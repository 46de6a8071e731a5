/*
 * store_int.h - private state of the LMDB store, shared by its files.
 */
#ifndef PDC_CKPT_STORE_INT_H
#define PDC_CKPT_STORE_INT_H

#include <lmdb.h>
#include <pthread.h>
#include <stdint.h>

#include "ckpt_store.h"

/* Staged operation kinds (in-memory only; never on disk). */
enum op_kind {
    OP_PUT = 1,    /* raw put of key -> val in db */
    OP_DEL,        /* raw delete of key in db */
    OP_PUT_OBJ,    /* key = id, aux = obj_name key, val = record */
    OP_DEL_OBJ,    /* key = id */
    OP_PUT_KVTAG,  /* key = owner . namekey, val = record (+ tag index) */
    OP_DEL_KVTAG,  /* key = owner . namekey */
    OP_PUT_CONT,   /* key = id, aux = cont_name key, val = record */
    OP_DEL_CONT    /* key = id */
};

/* One staged op in the batch log: header, then key, aux and val bytes,
 * padded to 8. */
struct op_hdr {
    uint8_t kind;
    uint8_t db;
    uint16_t pad;
    uint32_t klen;
    uint32_t alen;
    uint32_t vlen;
};

struct ckpt_store {
    struct ckpt_store_opts opts;
    char *path;             /* root/rank-<r> */
    MDB_env *env;
    int writer_fd;          /* flock'ed writer.lock while open for writing, else -1 */
    int root_fd;            /* ROOT/store.lock, flock'ed shared while writing, else -1 */
    MDB_dbi dbi[CKPT_DB_COUNT];
    /* The tag index's layout: 1 (format 2) for a DUPSORT|DUPFIXED database
     * namekey -> owner ids, 0 for format 1's namekey . owner -> "" (a v1
     * store opened read-only). Every read and write of CKPT_DB_TAG_INDEX
     * goes through tagidx.c, which shows both as format 1's logical keys. */
    int tagidx_dup;
    size_t map_size;

    pthread_mutex_t mu;     /* batch, meta, commit */
    pthread_rwlock_t grow;  /* read txns hold it shared; map growth exclusive */

    /* the open batch */
    uint8_t *log;
    size_t log_len, log_cap;
    size_t nops;
    uint64_t batch_start_ms;
    struct run_ent *run;    /* commit: a run of kvtag puts, sorted by key */
    size_t run_cap;

    /* meta, as of the last commit plus in-memory changes */
    struct ckpt_store_info meta;
    uint64_t id_seq_committed; /* meta.id_seq as of the last commit */
    int failed;             /* MDB_PANIC: must reopen */
    int last_commit_err;    /* error of the last commit attempt, 0 if it succeeded */
    size_t failed_nops;     /* staged mutations at the last failed commit */
    uint64_t failed_ms;     /* and when it failed (mono_ms) */

    /* background commit/sync thread */
    pthread_t bg;
    int bg_running;
    int bg_stop;
    pthread_cond_t bg_cv;
    uint64_t commits_since_sync;
    size_t bytes_since_sync; /* staged bytes committed since the last sync */
};

struct ckpt_rtxn {
    ckpt_store *st;
    MDB_txn *txn;
};

/* errors.c */
int ckpt_map_lmdb(int rc);
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
int ckpt_seterr(ckpt_store *st, int code, int orig, const char *fmt, ...);
void ckpt_set_open_err(const char *msg);

/* root.c */
int ckpt_lock_write_pid(int fd);           /* 0 or errno */
long ckpt_lock_read_pid(const char *path); /* 0 if unknown */

/* keys.c */
uint64_t ckpt_now_ms(void);

/* tagidx.c: the tag index under its logical keys (namekey . owner). */
int ckpt_tagidx_put(ckpt_store *st, MDB_txn *txn, const uint8_t *lkey, size_t klen);
int ckpt_tagidx_del(ckpt_store *st, MDB_txn *txn, const uint8_t *lkey, size_t klen);
int ckpt_tagidx_get(ckpt_store *st, MDB_txn *txn, const uint8_t *lkey, size_t klen);
int ckpt_tagidx_iter(ckpt_store *st, MDB_txn *txn, const uint8_t *prefix, size_t plen,
                     ckpt_iter_cb cb, void *payload, int *cb_rc);
/* Format 1 -> 2 inside the open write transaction: rebuild the tag index
 * as DUPSORT from the kvtag database. */
int ckpt_tagidx_migrate_v1(ckpt_store *st, MDB_txn *txn);
#define CKPT_TAGIDX_FLAGS (MDB_DUPSORT | MDB_DUPFIXED)

/* store.c: put that appends (MDB_APPEND, full pages) when the key sorts
 * after every key of the database, else an ordinary put. */
int ckpt_put_append(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *val, unsigned flags);

/* meta.c */
int ckpt_meta_encode(uint8_t *buf, size_t cap, size_t *len, const struct ckpt_store_info *m);
int ckpt_meta_decode(struct ckpt_store_info *m, const void *buf, size_t len, size_t *err_off);
/* Name and time step out of an object record; container name out of a
 * container record; cont_id of an object (0 if absent). */
int ckpt_rec_obj_name(const char **name, size_t *nlen, int32_t *ts, uint64_t *cont_id,
                      const void *rec, size_t len);
int ckpt_rec_cont_name(const char **name, size_t *nlen, const void *rec, size_t len);

#define CKPT_META_KEY "meta"
/* Staged bytes above which new mutations are refused while commits fail. */
#define CKPT_BATCH_MAX_BYTES ((size_t)256 << 20)

#endif
