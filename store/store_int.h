/*
 * store_int.h - private state of the LMDB store, shared by its files.
 */
#ifndef PDC_CKPT_STORE_INT_H
#define PDC_CKPT_STORE_INT_H

#include <lmdb.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ckpt_store.h"
#include "csum.h"

/* Staged operation kinds. The batch's log goes to disk only as a pending
 * file (pending.c, CKPT_PENDING_FORMAT): these values and struct op_hdr
 * are part of that format. */
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

/* durable.c: the sync record and the pinned snapshot of the fast sync
 * modes (power loss; docs/STORE.md, "Power loss"). */
#define CKPT_DUR_META 136u /* LMDB 0.9's MDB_meta on a 64-bit build */
#define CKPT_DUR_BOOT_LEN 48u
#define CKPT_DUR_DEFERRED 2
struct ckpt_durable {
    int fd;                /* ROOT/rank-R/synced.rec (writers), else -1 */
    pthread_mutex_t mu;    /* record writes and the pin */
    int have;              /* a valid record of this data.mdb */
    uint64_t seq;          /* its sequence number */
    uint64_t txnid;        /* the snapshot it records */
    uint32_t flags;        /* 1: sync mode, LMDB's own ordering (no roll-back) */
    uint8_t meta[CKPT_DUR_META]; /* the recorded snapshot's LMDB meta */
    MDB_txn *pin;          /* read transaction keeping the recorded snapshot's pages */
    int sync_at_open;      /* the open must sync and record before going on */
    int boot_recorded;     /* the boot slot names this machine's boot (-1: not known yet) */
    int boot_slot_ok;      /* the boot slot read at open was valid */
    char boot_slot[CKPT_DUR_BOOT_LEN]; /* and the boot id it held */
    int check_opened;      /* 1: ckpt_durable_check_opened compares the newest snapshot;
                            * CKPT_DUR_DEFERRED: ckpt_durable_deferred decides */
    int rolled_back;       /* the open rolled the environment back to the record */
    uint64_t rolled_from;  /* the newest transaction the file had then */
};
/* One sync: begun under st->mu (the snapshot, its meta, a pin on it),
 * ended without it (fdatasync data.mdb, then the record, synced) */
struct ckpt_durable_tok {
    int active, err;
    uint64_t txnid;
    MDB_txn *pin;
    uint8_t meta[CKPT_DUR_META];
};
void ckpt_durable_init(ckpt_store *st);
/* Before LMDB opens data.mdb (a writer holds writer.lock): read the
 * record; roll back to it if the machine restarted since the last writer
 * and the file's newest meta is not the recorded one (a reader refuses
 * with CKPT_E_CORRUPT instead). ds: data.mdb's stat, NULL if there is
 * none. defer: a writer whose record is this file's stops after reading
 * it, and ckpt_durable_deferred says after LMDB's open whether the rest
 * must run (the environment closed again, defer 0). Error set. */
int ckpt_durable_recover(ckpt_store *st, const char *data, const struct stat *ds, int defer);
/* Right after LMDB's open, when recover was deferred: 1 if recover must
 * run in full before LMDB opens the file again, else 0. opened: LMDB's
 * open succeeded (not: a header it refused), with newest transaction
 * last_txnid; anything but the recorded snapshot (commits after the last
 * sync, whose fate depends on the boot) needs the full recovery. */
int ckpt_durable_deferred(ckpt_store *st, int opened, uint64_t last_txnid);
/* Before a writer's first write transaction writes: the boot slot names
 * this boot (the fast modes; read and written at most once per open).
 * Error set. */
int ckpt_durable_first_write(ckpt_store *st);
/* Right after LMDB opened the environment, before any transaction, with
 * its newest transaction: when recover left it to this (the machine did
 * not restart since the last writer, so nothing is rolled back), a newest
 * snapshot that is not the recorded one (commits a crashed process left)
 * is made durable and recorded, as recover does otherwise. Error set. */
int ckpt_durable_check_opened(ckpt_store *st, uint64_t last_txnid);
/* After a writer's open: the boot slot and the pin, or a first record. */
int ckpt_durable_opened(ckpt_store *st);
/* A sync in the fast modes: begin under st->mu, end without it (it
 * fdatasyncs data.mdb in every mode). end returns 0 or an LMDB/errno
 * code. */
int ckpt_durable_begin(ckpt_store *st, struct ckpt_durable_tok *t);
int ckpt_durable_end(ckpt_store *st, struct ckpt_durable_tok *t);
void ckpt_durable_release(ckpt_store *st);

/* The handle's state, a part for each file that keeps it. What is not in
 * a part is set at open and read by all: options, paths, the environment
 * and its schema, the meta record. */
struct ckpt_store {
    struct ckpt_store_opts opts;
    char *path;             /* root/rank-<r> */
    MDB_env *env;
    size_t map_size;
    unsigned psize;         /* LMDB's page size */
    int nolock;             /* opened without lock.mdb (MDB_NOLOCK: read-only media) */
    const char *map_base;   /* where LMDB mapped data.mdb (LMDB does not say;
                             * ckpt_map_base finds it), NULL while unknown;
                             * reset when the map is resized (under grow) */

    pthread_mutex_t mu;     /* batch, meta, commit */
    pthread_rwlock_t grow;  /* read txns hold it shared; map growth exclusive */

    /* schema.c: the databases */
    MDB_dbi dbi[CKPT_DB_COUNT];
    /* The tag index's layout: 1 (format 2) for a DUPSORT|DUPFIXED database
     * namekey -> owner ids, 0 for format 1's namekey . owner -> "" (a v1
     * store opened read-only). Every read and write of CKPT_DB_TAG_INDEX
     * goes through tagidx.c, which shows both as format 1's logical keys. */
    int tagidx_dup;
    /* Format 4: every value carries its record checksum (csum.h); reads
     * check and strip it (read.c), writes append it (ckpt_put_rec) */
    int csum;
    /* Format 5: obj_keys and cont_keys hold the keys each object and
     * container record was put with (apply.c); before, rec_keys reads
     * them from the records */
    int keys;
    unsigned absent;        /* a reader's databases (1u << db) that its store was written
                             * without (CKPT_DBS_ADDED_LATER): they read as empty */

    /* meta, as of the last commit plus in-memory changes */
    struct ckpt_store_info meta;
    uint64_t id_seq_committed; /* meta.id_seq as of the last commit */
    uint64_t id_lease;      /* ids are handed out below it (stage.c): a restart after
                             * any crash starts at or above it; 0 until a commit with
                             * the open's dirty mark is durable */
    int fl_checked;         /* LMDB's free-page list was found sound (commit.c,
                             * ckpt_freelist_check) */
    int marked;             /* the open's dirty mark (clean = 0, generation) is
                             * committed: by the open itself when it creates or
                             * converts the store, else by the first commit */

    /* open.c: the locks a writer holds (release.c drops them) */
    struct {
        int writer_fd;      /* flock'ed writer.lock while open for writing, else -1 */
        int root_fd;        /* ROOT/store.lock, flock'ed shared while writing, else -1 */
    } locks;

    /* stage.c: the open batch, applied by apply.c */
    struct {
        uint8_t *log;
        size_t log_len, log_cap;
        size_t nops;
        uint64_t start_ms;
        struct run_ent *run; /* commit: a run of kvtag puts, sorted by key */
        size_t run_cap;
    } batch;

    /* commit.c: the last commit attempt */
    struct {
        int last_err;       /* its error, 0 if it succeeded */
        size_t failed_nops; /* staged mutations at the last failed commit */
        uint64_t failed_ms; /* and when it failed (mono ms) */
        int closing;        /* close's last commit: no merge from the committing thread */
    } commit;

    /* Format 3: the tag index's recent entries (tagidx_delta.h). A commit
     * logs its tag-index puts and deletes into buf (tagidx_delta.c), then
     * appends them to the kvtag_delta database as chunks; the background
     * thread merges chunks into kvtag_name (commit.c, ckpt_tagidx_merge);
     * every read of the tag index overlays what is still in the delta. */
    struct {
        int on;             /* kvtag_delta is open (format 3) */
        MDB_dbi dbi;
        uint8_t *buf;       /* this commit attempt's tag-index ops */
        size_t buf_len, buf_cap;
        uint32_t buf_n;
        uint64_t seq;       /* key of the next chunk (a writer: once loaded) */
        int loaded;         /* a writer: seq and uncounted read (ckpt_tagidx_delta_load) */
        uint64_t pending;   /* committed entries not yet merged (under mu); those
                             * an earlier writer left are added once counted */
        uint64_t uncounted; /* once loaded: chunks up to this key were left by an
                             * earlier writer and are not counted yet (0: none) */
        uint64_t since_ms;  /* mono ms of the oldest unmerged commit, 0 if none */
        int merge_err;      /* last merge's error (CKPT_E_*), 0 if it succeeded */
        uint64_t merge_err_ms; /* and when it failed (mono ms) */
    } delta;

    /* fault.c */
    struct {
        int failed;         /* MDB_PANIC, or LMDB faulted on a damaged page: must
                             * reopen (read and written with __atomic: a
                             * reader thread sets it without st->mu) */
        int set;            /* what[] is written (first fault only) */
        char what[400];     /* what the first fault was, for later calls */
    } fault;

    /* bg.c: the background commit/sync thread */
    struct {
        pthread_t thread;
        int running;
        int deferred;       /* a writer's open left it to first use (ckpt_bg_ensure);
                             * read without st->mu with __atomic, written under it */
        int stop;
        /* What the stopped thread does next, posted to sem (no mutex: the
         * closer never waits for st->mu held by a thread the scheduler put
         * aside): BG_EXIT return, BG_RELEASE release the handle (a closed
         * writer's environment is unmapped on it: ckpt_store_close) */
        int verdict;
        sem_t sem;
        pthread_cond_t cv;
        uint64_t commits_since_sync;
        size_t bytes_since_sync; /* staged bytes committed since the last sync */
    } bg;

    /* pending.c: the pending file this writer replayed or wrote last
     * (export may replace only that one) */
    struct {
        int have;
        uint64_t dev, ino;
    } pending;

    /* durable.c: the sync record and the pin */
    struct ckpt_durable dur;
};

struct ckpt_rtxn {
    ckpt_store *st;
    MDB_txn *txn;
    /* committed pages of the map as of this transaction: every key and
     * value LMDB returns must lie inside (a damaged node can point
     * anywhere, and the caller would fault reading it) */
    const char *map_lo, *map_hi;
    struct ckpt_tagidx_view *view; /* tagidx.c: the delta's overlay, once read */
    int view_built;
    /* ckpt_rtxn_on_damage: iterations report a record whose checksum
     * fails here and skip it, instead of failing with CKPT_E_CORRUPT */
    ckpt_damage_cb damage_cb;
    void *damage_arg;
    char damage_what[160];  /* what the last damaged record had wrong */
};

/* guard.c: a recovery point for one stretch of LMDB calls. Use:
 *     struct ckpt_guard g;
 *     ckpt_guard_push(&g);
 *     if (sigsetjmp(g.jb, 0) != 0) { ckpt_guard_pop(&g); ...fault... }
 *     ...LMDB calls...
 *     ckpt_guard_pop(&g);
 * sigsetjmp must be called in the frame that stays alive, hence no
 * function. Locals changed between the two and read after a fault must be
 * volatile. */
struct ckpt_guard {
    sigjmp_buf jb;
    struct ckpt_guard *prev;
    volatile int sig;        /* SIGSEGV/SIGBUS, or 0 for an LMDB assertion */
    void *volatile addr;     /* faulting address */
    char what[256];          /* the assertion's text */
};
void ckpt_guard_push(struct ckpt_guard *g);
void ckpt_guard_pop(struct ckpt_guard *g);
void ckpt_guard_on_assert(MDB_env *env, const char *msg);
/* "LMDB assertion failed: ..." or "reading it faulted (SIGSEGV) at page N
 * ..." (the page when the address is inside map[0..map_len)) */
void ckpt_guard_describe(char *buf, size_t n, const struct ckpt_guard *g, const char *map,
                         size_t map_len, unsigned psize);

/* errors.c */
int ckpt_map_lmdb(int rc);
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
int ckpt_seterr(ckpt_store *st, int code, int orig, const char *fmt, ...);
void ckpt_set_open_err(const char *msg);
/* A value's checksum is wrong, or it is too short to hold one:
 * CKPT_E_CORRUPT naming the rank, database and key; what (may be NULL)
 * gets the short reason */
int ckpt_csum_error(ckpt_store *st, const char *db, const void *key, size_t klen, size_t vlen,
                    uint32_t stored, uint32_t computed, char *what, size_t wlen);

/* keys.c */
uint64_t ckpt_now_ms(void);  /* wall clock */
uint64_t ckpt_mono_ms(void); /* CLOCK_MONOTONIC */
/* CLOCK_MONOTONIC_COARSE (a clock tick's resolution, a few ms), where a
 * read per mutation must be cheap: the commit policy's batch age (stage.c).
 * It lags CLOCK_MONOTONIC by at most a tick. */
uint64_t ckpt_mono_coarse_ms(void);
/* "000000003b9aca017461673000 ("....;...tag0.")": up to 32 bytes of a key
 * in hex and as text, for messages */
void ckpt_key_text(char *out, size_t n, const void *key, size_t klen);
/* The index keys of a record stored in db, from the caller's
 * opts.rec_keys (the store never decodes a record itself): 0,
 * CKPT_E_INVAL when the store has no rec_keys, or the function's error. */
int ckpt_stored_keys(const ckpt_store *st, struct ckpt_rec_keys *k, int db, const void *rec,
                     size_t len);

/* keysort.c: a stable sort of keys in byte order (a prefix first). Set
 * each entry (idx: the caller's, for finding its item again), then sort
 * n of them with room for n more in tmp; ckpt_skey_less is the order. */
struct ckpt_skey {
    uint64_t k0, k1;        /* the key's first 16 bytes, big-endian, zero past its end */
    const uint8_t *key;
    uint32_t klen, idx;
};
void ckpt_skey_set(struct ckpt_skey *s, const uint8_t *key, size_t klen, size_t idx);
int ckpt_skey_less(const struct ckpt_skey *a, const struct ckpt_skey *b);
void ckpt_skey_sort(struct ckpt_skey *s, struct ckpt_skey *tmp, size_t n);

/* root.c */
#define CKPT_LOCK_PID_LEN 21                /* "<pid, blank-padded>\n" */
int ckpt_lock_write_pid(int fd);           /* 0 or errno */
long ckpt_lock_read_pid(const char *path); /* 0 if unknown */

/* meta.c */
int ckpt_meta_encode(size_t *len, uint8_t *buf, size_t cap, const struct ckpt_store_info *m);
int ckpt_meta_decode(struct ckpt_store_info *m, const void *buf, size_t len, size_t *err_off);

/* lmdb_util.c: mdb_del that finds nothing is no error; mdb_put of a
 * record with format 4's checksum when st->csum (MDB_NOOVERWRITE and
 * MDB_KEYEXIST: *val is the old value, its checksum left out) */
int ckpt_del_quiet(MDB_txn *txn, MDB_dbi dbi, const void *k, size_t klen);
int ckpt_put_sealed(ckpt_store *st, MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *val,
                    unsigned flags);
/* A put that appends (MDB_APPEND, full pages) when the key sorts
 * after every key of the database, else an ordinary put. */
int ckpt_put_append(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *val, unsigned flags);
/* A put of a record key -> val into database db, with format 4's
 * checksum when st->csum; appends as ckpt_put_append does. With
 * MDB_NOOVERWRITE, on MDB_KEYEXIST *val is the old value, its checksum
 * left out. */
int ckpt_put_rec(ckpt_store *st, MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *val,
                 unsigned flags);
/* Where LMDB mapped data.mdb. LMDB keeps it to itself
 * (MDB_envinfo's me_mapaddr is only set for MDB_FIXEDMAP), so take the
 * page holding the meta record (in database `meta`), whose header starts
 * with its page number. Called under a guard, with no map growth possible
 * meanwhile; cached in st->map_base until the map is resized. NULL if
 * unknown (no meta record yet, or a damaged page). */
const char *ckpt_map_base(ckpt_store *st, MDB_txn *txn, MDB_dbi meta, size_t last_pgno);
/* The same from any key or value LMDB returned from the map (in_page);
 * cached likewise. */
const char *ckpt_map_base_from(ckpt_store *st, const void *in_page, size_t last_pgno);
/* Whether a key or value LMDB returned lies in the map's
 * committed pages */
int ckpt_rtxn_in_map(const ckpt_rtxn *tx, const MDB_val *v);
/* Whether a key LMDB returned (inside the map) is a node of a well-formed
 * leaf page: the page's header names its own number, says leaf, bounds its
 * free space inside the page, and lists the node. 0, or -1 with what is
 * wrong in why. LMDB checks none of this: a damaged page that keeps the
 * leaf bit is searched like any leaf. 0 when the map's bounds are unknown. */
int ckpt_rtxn_leaf_node(const ckpt_rtxn *tx, const MDB_val *key, char *why, size_t n);
/* lmdb_util.c: a search's "not found" (mdb_get's, or a scan's that finds no key
 * with its prefix) is only as good as the leaf page the search ended on: a
 * damaged page that keeps a leaf's flag bit is searched like any leaf, and
 * finds nothing. Before "not found" is believed, the keys LMDB finds
 * around search key k through cursor c (which this moves) must be nodes of
 * well-formed leaves (ckpt_rtxn_leaf_node). Under the caller's guard.
 * MDB_NOTFOUND, CKPT_LOOKUP_DAMAGED with why set, or LMDB's error. */
#define CKPT_LOOKUP_DAMAGED (-30000 + 1) /* below LMDB's codes (MDB_KEYEXIST -30799 on) */
int ckpt_rtxn_absent_checked(const ckpt_rtxn *tx, MDB_cursor *c, const MDB_val *k, char *why,
                             size_t n);
/* The same for an item (an owner id) searched under name, whose node the
 * cursor found (MDB_SET_KEY) in a DUPSORT|DUPFIXED database: the owners
 * LMDB finds around it must pass ckpt_rtxn_dup_page. */
int ckpt_rtxn_dup_absent_checked(const ckpt_rtxn *tx, MDB_cursor *c, const MDB_val *name,
                                 const MDB_val *item, char *why, size_t n);
/* An item cursor c returned (LMDB's pointers, name the name's node key):
 * it lies in the name's sub-page or on a sound packed leaf of its
 * sub-database, and so do all the items of the page the cursor searched
 * (MDB_GET_MULTIPLE; a damaged count makes LMDB search past its page).
 * Moves the cursor. 0, or -1 with why. */
int ckpt_rtxn_dup_page(const ckpt_rtxn *tx, MDB_cursor *c, const MDB_val *name,
                       const MDB_val *item, char *why, size_t n);
/* The error of a search (what: "a lookup", "a scan") that found nothing on
 * a damaged page of db: CKPT_E_CORRUPT, set. */
int ckpt_rtxn_missed(ckpt_rtxn *tx, int db, const char *what, const char *why);

/* fault.c: after a fault the environment is never touched again by this
 * handle: mark it failed (later calls get CKPT_E_FAILED naming the first
 * fault) and return CKPT_E_CORRUPT with "PATH/data.mdb: WHERE: what". */
int ckpt_store_faulted(ckpt_store *st, const struct ckpt_guard *g, const char *where);
/* CKPT_E_FAILED with the first fault's message if st failed, else 0 */
int ckpt_store_check_failed(ckpt_store *st);
/* "what happened" of a fault on st's map */
void ckpt_describe_fault(char *buf, size_t n, const struct ckpt_guard *g, ckpt_store *st);
/* An environment (directory) whose write transaction faulted in this
 * process: LMDB's writer mutex stays held until the process ends, so it
 * is not opened for writing again here. is_poisoned takes data.mdb's
 * stat. */
void ckpt_poison_env(const char *dir);
int ckpt_is_poisoned(const struct stat *data);

/* tagidx_delta.c, format 3's delta (tagidx_delta.h). A commit's
 * tag-index put (TAGIDX_OP_PUT) or delete (TAGIDX_OP_DEL) of a logical key
 * goes to st->delta.buf; 0 or ENOMEM. */
enum { TAGIDX_OP_PUT = 1, TAGIDX_OP_DEL = 2 };
int ckpt_tagidx_log(ckpt_store *st, int op, const uint8_t *lkey, size_t klen);
/* Append st->delta.buf to kvtag_delta in the commit's transaction, as
 * chunks keyed from *seq on (advanced; the caller adopts it once the commit
 * succeeded). */
int ckpt_tagidx_log_flush(ckpt_store *st, MDB_txn *txn, uint64_t *seq);
/* A reader's open: st->delta.pending from kvtag_delta's chunks (each
 * checked); MDB_CORRUPTED, with where filled, for a damaged chunk */
int ckpt_tagidx_delta_scan(ckpt_store *st, MDB_txn *txn, char *where, size_t wlen);
/* A writer, before its first chunk or count (not at open, which then
 * reads no page of the delta): st->delta.seq from the last chunk's key,
 * and the chunks an earlier writer left marked uncounted
 * (st->delta.uncounted), without reading them. Once per handle (loaded);
 * under st->mu. MDB_CORRUPTED, with where filled, for a last key that is
 * not a chunk number. */
int ckpt_tagidx_delta_load(ckpt_store *st, MDB_txn *txn, char *where, size_t wlen);
/* Add the entries of the chunks an earlier writer left to
 * st->delta.pending, from their headers (the background thread when it
 * starts; a commit, a merge or ckpt_store_info first if they come sooner). Under
 * st->mu. A header that does not parse counts as one entry: the merge,
 * which checks every chunk whole, then says what is wrong. */
void ckpt_tagidx_delta_count_locked(ckpt_store *st);

/* tagidx.c: the tag index under its logical keys (namekey . owner). */
int ckpt_tagidx_get(ckpt_rtxn *tx, MDB_cursor *volatile *curp, const uint8_t *lkey, size_t klen);
int ckpt_tagidx_iter(ckpt_rtxn *tx, MDB_cursor *cur, struct ckpt_guard *g, const uint8_t *prefix,
                     size_t plen, ckpt_iter_cb cb, void *payload, int *cb_rc);
/* Reads: the delta's entries as of tx, sorted, the last op of each key;
 * built at the first read of the tag index in tx, freed with tx */
struct ckpt_tagidx_view;
void ckpt_tagidx_view_free(struct ckpt_tagidx_view *v);
/* The tag index's logical entry count: kvtag_name's (main_entries) plus
 * the delta's puts of absent keys, minus its deletes of present ones.
 * Under the caller's recovery point; a cursor it opens is left in *curp
 * for the caller to close. */
int ckpt_tagidx_count(ckpt_rtxn *tx, MDB_cursor *volatile *curp, uint64_t main_entries,
                      uint64_t *entries);
/* A tagidx.c result meaning: a damaged delta, whose error is already set
 * (CKPT_E_CORRUPT) */
#define CKPT_TAGIDX_REPORTED (-29000)
#define CKPT_DELTA_DB "kvtag_delta"
#define CKPT_TAGIDX_FLAGS (MDB_DUPSORT | MDB_DUPFIXED)
/* Format 1 -> 2 inside the open write transaction: rebuild the tag index
 * as DUPSORT from the kvtag database. */
int ckpt_tagidx_migrate_v1(ckpt_store *st, MDB_txn *txn);
/* Merge the oldest chunks of kvtag_delta (at least one, then whole chunks
 * up to about max_entries entries) into kvtag_name and delete them, inside
 * txn. *stop is read now and then: once it is non-zero the merge returns
 * ECANCELED (abort the transaction: nothing was merged). *merged: entries
 * merged; *more: whether chunks remain. MDB_CORRUPTED, with where filled,
 * for a damaged chunk. */
int ckpt_tagidx_merge(ckpt_store *st, MDB_txn *txn, size_t max_entries, const int *stop,
                      uint64_t *merged, int *more, char *where, size_t wlen);

/* apply.c: one staged op (its key k, aux a and value v follow h) inside
 * a write transaction; -1 for a hash collision of two long names in a
 * name index (the caller reports it). ckpt_apply_kvtag_run: the run of
 * consecutive kvtag puts at st->log + *off (at most `left` ops), in key
 * order; advances *off and *done past it. */
int ckpt_apply_op(ckpt_store *st, MDB_txn *txn, const struct op_hdr *h, const uint8_t *k,
                  const uint8_t *a, const uint8_t *v);
int ckpt_apply_kvtag_run(ckpt_store *st, MDB_txn *txn, size_t *off, size_t *done, size_t left);
/* bytes of a staged op in the log: header, key, aux, value, padded to 8 */
size_t ckpt_op_size(const struct op_hdr *h);

/* commit.c, all under st->mu. ckpt_commit_locked: apply the whole batch
 * and commit it, growing the map as needed; `force` commits even an empty
 * batch (meta changes). ckpt_put_meta: the meta record m into txn.
 * ckpt_retry_due: whether the commit policy may retry a failed commit now;
 * ckpt_sync_due: whether enough was committed for a background sync. The
 * tag index's delta: ckpt_merge_due (by_age: also one that waited
 * sync_ms), ckpt_merge_all_locked (every chunk, a slice at a time, until
 * *stop rises; `yield` lets st->mu go between slices), and
 * ckpt_merge_tags_locked (asked for: even after a failed merge). */
int ckpt_commit_locked(ckpt_store *st, int force);
int ckpt_put_meta(ckpt_store *st, MDB_txn *txn, const struct ckpt_store_info *m);
int ckpt_retry_due(const ckpt_store *st);
int ckpt_sync_due(const ckpt_store *st);
int ckpt_merge_due(const ckpt_store *st, int by_age);
int ckpt_merge_all_locked(ckpt_store *st, const int *stop, int yield, int *merged);
int ckpt_merge_tags_locked(ckpt_store *st);
/* Before a write transaction's first write: LMDB's free-page list is
 * sound (once per handle). 0 or CKPT_E_CORRUPT, error set. */
int ckpt_freelist_check(ckpt_store *st);
/* What every write transaction runs before its first write: the boot
 * slot (ckpt_durable_first_write), then ckpt_freelist_check. Error set. */
int ckpt_before_write(ckpt_store *st);
/* rc is a CKPT_E_* code (LMDB's are below -30000, errno values above 0). */
static inline int ckpt_is_code(int rc)
{
    return rc < 0 && rc > -1000;
}
/* A commit with id sequence id_seq (and the open's dirty mark) is durable
 * now: a restart after any crash starts at id_seq + CKPT_ID_CRASH_GAP or
 * above, so ids below that may be handed out (st->id_lease). Under st->mu. */
void ckpt_lease_synced(ckpt_store *st, uint64_t id_seq);

/* schema.c: open the databases and read (or, *fresh, create) the meta
 * record inside the open's transaction; a writer converts older formats
 * there. Error set. */
int ckpt_open_schema(ckpt_store *st, MDB_txn *txn, int *fresh, unsigned *disk_version);

/* bg.c: the background thread of a writer that commits by time or syncs
 * in the background (none otherwise). ckpt_bg_request_stop asks it to
 * stop once its current step is over; ckpt_bg_stop also joins it (it
 * exits: BG_EXIT). A stopped thread waits on bg.sem for its verdict:
 * BG_EXIT, or BG_RELEASE to release the closed handle (release.c). */
enum { BG_EXIT = 1, BG_RELEASE = 2 };
void ckpt_bg_start(ckpt_store *st);
/* A writer's open does not start the thread (creating one costs more than
 * the rest of a restart): the first mutation or id (under st->mu:
 * ckpt_bg_ensure_locked) or the first read transaction (ckpt_bg_ensure)
 * does, as nothing the thread does is due before: it commits and syncs what
 * mutations staged, and merges the delta that reads of the tag index
 * overlay. */
void ckpt_bg_ensure_locked(ckpt_store *st);
void ckpt_bg_ensure(ckpt_store *st);
void ckpt_bg_request_stop(ckpt_store *st);
void ckpt_bg_stop(ckpt_store *st);

/* release.c: ckpt_release frees st (its environment closed, its locks
 * dropped); ckpt_drop_locks drops writer.lock and store.lock alone (a
 * second call does nothing). ckpt_release_track hands st's release to a
 * thread that every open, fork and exit waits for: the background thread
 * when via_bg (2: the caller then posts BG_RELEASE to it), else a new one
 * running ckpt_release_main (1); 0: none can take it, release it inline. */
void ckpt_release(ckpt_store *st);
void ckpt_drop_locks(ckpt_store *st);
int ckpt_release_track(ckpt_store *st, int via_bg);
void *ckpt_release_main(void *st);

/* stage.c: room in the batch log for `need` more bytes (under st->mu);
 * 0, or CKPT_E_NOMEM with the message set */
int ckpt_batch_reserve(ckpt_store *st, size_t need);
/* stage.c: 0, or CKPT_E_INVAL naming ckpt_store_opts.rec_keys when an op of
 * this kind (object/container put or delete) needs it and the store has
 * none */
int ckpt_check_rec_keys(ckpt_store *st, int kind);

/* keys.c: format 5's record keys. obj_keys: id -> ts (ckpt_key_i32) .
 * cont id (8, BE) . name; cont_keys: id -> name. Encode writes them to
 * out (CKPT_OBJ_KEYS_FIXED + nlen bytes for an object, nlen for a
 * container) and returns the length (ckpt_keys_decode: ckpt_store.h). Index key:
 * the name-index key they give (namekey . ts, or namekey), 0 if none. */
#define CKPT_OBJ_KEYS_FIXED 12u
size_t ckpt_keys_encode(uint8_t *out, int is_obj, const struct ckpt_rec_keys *k);
size_t ckpt_keys_index_key(uint8_t *out, int is_obj, const struct ckpt_rec_keys *k);

#define CKPT_META_KEY "meta"
/* Databases added to the schema after stores were written without them
 * (and without a format change): a writer creates one, a reader of such a
 * store reads it as empty (st->absent). pdc_server: PDC's server state. */
#define CKPT_DBS_ADDED_LATER (1u << CKPT_DB_PDC_SERVER)
/* format 5's record keys: absent from older stores, for readers and
 * writers alike (schema.c) */
#define CKPT_FORMAT_KEYS 5u
#define CKPT_DBS_KEYS ((1u << CKPT_DB_OBJ_KEYS) | (1u << CKPT_DB_CONT_KEYS))
/* Staged bytes above which new mutations are refused while commits fail. */
#define CKPT_BATCH_MAX_BYTES ((size_t)256 << 20)

#endif
