/*
 * ckpt_store.h - one LMDB environment per PDC server rank, holding PDC's
 * metadata schema (docs/STORE.md has the layout, keys, records, flags and
 * durability contract).
 *
 * Writes are staged: every mutation goes, in order, into the store's open
 * batch (the "write transaction" of the design), which is applied to LMDB
 * and committed atomically on the commit policy (every K mutations or T ms),
 * on ckpt_store_checkpoint() and on ckpt_store_close(). If LMDB's map is
 * full, the commit aborts, grows the map and replays the batch, so callers
 * never see "map full". If a commit fails for another reason (disk full,
 * I/O error), the batch stays staged and the next commit retries it: a
 * failure never drops an accepted mutation. All mutations are idempotent
 * (puts and deletes of keys), so re-issuing one is harmless. Only when
 * 256 MiB are staged behind commits that keep failing is a new mutation
 * refused, with its own code, CKPT_E_BACKLOG: it was NOT staged.
 *
 * Reads go through read transactions (ckpt_rtxn) and see committed data
 * only. Every pointer a read returns points into LMDB's map and stays valid
 * until ckpt_rtxn_end() of the transaction that returned it.
 *
 * Thread safety: every function may be called from several threads at once
 * on one store. A thread that holds a ckpt_rtxn must not stage mutations
 * that could trigger a commit (growing the map waits for readers).
 *
 * Errors: 0 on success, negative CKPT_E* codes on failure. The message of
 * a failure (what, where, and the original LMDB or errno code) is kept per
 * thread, not per handle: ckpt_errmsg() returns the message of the calling
 * thread's last failed call into the library (store, hooks), whatever
 * handle it was made on, and also when there is none (a failed open, an
 * error a callback set with ckpt_error). Read it in the thread that got
 * the error, before that thread's next failing call replaces it; another
 * thread's failure, on the same handle or another, never does.
 *
 * Arguments, here and in ckpt_hooks.h and bulki.h: what a call produces
 * comes first (the handle it opens, the value it reads, the length of what
 * it encodes, then the buffer it encodes into), then the handle it works
 * on, then its inputs; optional reports that may be NULL (a count of what
 * was done, statistics, the offset of a decoding error) come last.
 *
 * Options structs (struct ckpt_store_opts, struct ckpt_hooks_opts) start
 * with their size: initialize them with their _INIT macro, then set
 * fields by name. A library newer than the caller's header gives the
 * fields the caller's struct lacks their defaults; a size it does not know
 * is CKPT_E_INVAL.
 */
#ifndef PDC_CKPT_STORE_H
#define PDC_CKPT_STORE_H

#include "ckpt_export.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ----
 * 0 or a negative CKPT_E_* code in -1..-99; the codec's BULKI_E_* codes are
 * -101..-199 (codec/bulki.h), and ckpt_strerror/ckpt_errname name those
 * too. */
#define CKPT_ERRORS(X)                                                         \
    X(CKPT_OK, 0, "success")                                                   \
    X(CKPT_E_NOTFOUND, -1, "not found")                                        \
    X(CKPT_E_EXISTS, -2, "already exists")                                     \
    X(CKPT_E_MAP_FULL, -3, "store map full")                                   \
    X(CKPT_E_CORRUPT, -4, "store is damaged")                                  \
    X(CKPT_E_VERSION, -5, "store format version not supported")               \
    X(CKPT_E_IO, -6, "I/O error")                                              \
    X(CKPT_E_NOSPACE, -7, "no space left for the store")                       \
    X(CKPT_E_INVAL, -8, "invalid argument")                                    \
    X(CKPT_E_NOMEM, -9, "out of memory")                                       \
    X(CKPT_E_RECORD, -10, "stored record does not decode")                     \
    X(CKPT_E_NAMETOOLONG, -11, "name too long")                                \
    X(CKPT_E_NOSTORE, -12, "no store at this location")                       \
    X(CKPT_E_PERM, -13, "permission denied")                                   \
    X(CKPT_E_BUSY, -14, "store busy")                                          \
    X(CKPT_E_NOTSTORE, -15, "not a pdc-ckpt store")                            \
    X(CKPT_E_READONLY, -16, "store opened read-only")                          \
    X(CKPT_E_MISMATCH, -17, "store belongs to another rank or rank count")     \
    X(CKPT_E_COLLISION, -18, "long-name key collision")                        \
    X(CKPT_E_LMDB, -19, "LMDB error")                                          \
    X(CKPT_E_SYS, -20, "system error")                                         \
    X(CKPT_E_FAILED, -21, "store failed earlier and must be reopened")          \
    X(CKPT_E_BACKLOG, -22, "mutation refused: too much staged behind failing commits")

enum ckpt_err {
#define CKPT_X_ENUM(name, code, msg) name = code,
    CKPT_ERRORS(CKPT_X_ENUM)
#undef CKPT_X_ENUM
};

CKPT_API const char *ckpt_strerror(int err);
CKPT_API const char *ckpt_errname(int err);

/* ---- layout constants ---- */
#define CKPT_FORMAT_MAGIC "pdc-ckpt"
#define CKPT_FORMAT_VERSION 5u
/* Longest object/container/tag name accepted (PDC's own limit is 1023). */
#define CKPT_NAME_MAX 4096u
/* Names up to this many bytes are stored whole in keys; longer ones as a
 * prefix plus a 64-bit hash (docs/STORE.md, "Long names"). */
#define CKPT_NAME_INLINE_MAX 448u
/* Bytes of a name key: inline name + NUL, or prefix + 0x01 + hash. */
#define CKPT_NAMEKEY_MAX (CKPT_NAME_INLINE_MAX + 1u + 8u)
/* Region key suffix: ndim byte + start[ndim] + count[ndim], 8 bytes each. */
#define CKPT_REGION_MAXDIM 4u
#define CKPT_REGIONKEY_MAX (1u + 16u * CKPT_REGION_MAXDIM)

/* The named databases. On-disk names are fixed (docs/STORE.md). */
enum ckpt_db {
    CKPT_DB_META = 0,   /* "meta": "meta" -> BULKI meta record */
    CKPT_DB_OBJ,        /* "obj": id -> BULKI object record */
    CKPT_DB_OBJ_NAME,   /* "obj_name": namekey . ts -> id */
    CKPT_DB_KVTAG,      /* "kvtag": owner id . namekey -> BULKI kvtag record */
    CKPT_DB_TAG_INDEX,  /* "kvtag_name": namekey . owner id -> (empty) */
    CKPT_DB_CONT,       /* "cont": id -> BULKI container record */
    CKPT_DB_CONT_NAME,  /* "cont_name": namekey -> id */
    CKPT_DB_CONT_OBJ,   /* "cont_obj": cont id . obj id -> (empty) */
    CKPT_DB_REGION,     /* "region": obj id . regionkey -> BULKI region record */
    CKPT_DB_ID_HOME,    /* "id_home": id -> home rank (u32 BE), after re-homing */
    /* "pdc_server": a PDC server's own region tables (tag byte . key ->
     * BULKI record; docs/STORE.md, "pdc_server"). A store written before
     * it existed has none: a reader sees it empty, a writer creates it. */
    CKPT_DB_PDC_SERVER,
    /* Format 5: the keys each object or container record was put with
     * (id -> ts . cont id . name for objects, id -> name for containers;
     * ckpt_key_obj_keys), so that a replacement or a delete finds the
     * record's index entries without reading the record. Stores of
     * formats 1 to 4 have none (docs/STORE.md, "Record keys"). */
    CKPT_DB_OBJ_KEYS,
    CKPT_DB_CONT_KEYS,
    CKPT_DB_COUNT
};
CKPT_API const char *ckpt_db_name(int db);
CKPT_API int ckpt_db_by_name(const char *name); /* -1 if unknown */
         
         /* ---- keys (exposed for tools; ids are big-endian so ascending ids append) */
         CKPT_API void ckpt_key_u64(uint8_t out[8], uint64_t v);
CKPT_API uint64_t ckpt_key_get_u64(const uint8_t in[8]);
/* int32 time step as 4 bytes, sign bit flipped so keys sort numerically */
CKPT_API void ckpt_key_i32(uint8_t out[4], int32_t v);
CKPT_API int32_t ckpt_key_get_i32(const uint8_t in[4]);
/* Name key of name[0..len); returns its length (<= CKPT_NAMEKEY_MAX), or 0
 * when len > CKPT_NAME_MAX or the name holds a NUL. */
CKPT_API size_t ckpt_key_name(uint8_t *out, const char *name, size_t len);
/* Length of the name key at the start of key[0..klen), or 0 if none. Sets
 * *is_hashed for long names (then only a prefix of the name is present). */
CKPT_API size_t ckpt_key_name_len(const uint8_t *key, size_t klen, int *is_hashed);
/* Region key suffix for a region geometry; returns its length. */
CKPT_API size_t ckpt_key_region(uint8_t *out, uint32_t ndim, const uint64_t *start,
                                const uint64_t *count);

/* Ids are (rank + 1) * CKPT_ID_BASE + seq. After an unclean close the
 * sequence skips CKPT_ID_CRASH_GAP, so that no id handed out before a crash
 * (committed or not) is handed out again (docs/STORE.md, "Ids"). */
#define CKPT_ID_BASE 1000000000ull
#define CKPT_ID_CRASH_GAP (1ull << 24)

/* ---- options ---- */
enum ckpt_sync_mode {
    CKPT_SYNC_EVERY = 0,  /* "sync": every commit is durable (fsync) */
    CKPT_SYNC_INTERVAL,   /* "interval": durable every sync_ms */
    CKPT_SYNC_CLOSE       /* "close": durable at close (background syncs bound close) */
};
/* "sync" / "interval" / "close" -> mode; -1 if unknown */
CKPT_API int ckpt_sync_mode_parse(const char *s);
CKPT_API const char *ckpt_sync_mode_name(int mode);

/* What the store's indexes need of a stored object, container or kvtag
 * record: the store treats records as opaque bytes and never decodes them.
 * The caller passes these keys with each put (ckpt_store_put_obj's name,
 * time step and container, ...), and the store keeps an object's and a
 * container's (obj_keys, cont_keys) for when it must find the index
 * entries of a record already stored: when a put replaces it (its old name
 * entry goes), when a delete cascades (name entry, and an object's
 * membership in its container), and to tell long (hashed) names apart
 * (docs/STORE.md, "Long names"). Stores of format 1 to 4 keep none: for
 * them, and for a kvtag's long name, the store asks the caller's
 * ckpt_rec_keys_fn. */
struct ckpt_rec_keys {
    const char *name;   /* the record's name; may point into the record */
    size_t nlen;
    int32_t ts;         /* objects: time step */
    uint64_t cont_id;   /* objects: container it belongs to (0: none) */
};
/* Fill *keys from the record rec[0..len) of database db (CKPT_DB_OBJ,
 * CKPT_DB_CONT, or CKPT_DB_KVTAG: name only, and only a long name is in
 * the record). 0, or a negative error when the record does not decode.
 * The hooks' records: ckpt_rec_keys (ckpt_hooks.h). */
typedef int (*ckpt_rec_keys_fn)(struct ckpt_rec_keys *keys, int db, const void *rec, size_t len);
/* Decode a value of obj_keys or cont_keys (db: CKPT_DB_OBJ_KEYS or
 * CKPT_DB_CONT_KEYS; format 5) into *keys, name pointing into v: 0, or -1
 * when it cannot be one (docs/STORE.md, "Record keys"). */
CKPT_API int ckpt_keys_decode(struct ckpt_rec_keys *keys, int db, const void *v, size_t len);

struct ckpt_store_opts {
    /* sizeof(struct ckpt_store_opts) as the caller was built
     * (CKPT_STORE_OPTS_INIT sets it): fields past that size take their
     * defaults, so a caller built against an older, smaller struct keeps
     * working; a size below the first version's (or 0) is CKPT_E_INVAL. */
    size_t size;
    const char *root;        /* store root; the environment is root/rank-<r>/ */
    int rank;                /* this server's rank */
    int nranks;              /* number of server ranks writing the store */
    unsigned commit_every;   /* commit after K staged mutations (0: never by count) */
    unsigned commit_ms;      /* commit when the batch is T ms old (0: never by time) */
    int sync_mode;           /* enum ckpt_sync_mode */
    unsigned sync_ms;        /* background sync period (interval, close modes) */
    size_t map_size;         /* initial LMDB map size; grows by itself */
    int readonly;            /* open an existing store read-only (tools) */
    int create;              /* create the environment if missing */
    int check_rank;          /* refuse a store whose meta names another rank/nranks */
    /* interval and close modes: the background thread also syncs as soon
     * as this many KiB were committed since its last sync, so that close
     * never has much to flush, however fast the server writes
     * (docs/STORE.md, "Sync modes"); 0: only every sync_ms */
    unsigned sync_kb;
    /* Format 3: a commit appends its tag-index entries to a delta, merged
     * into the tag index by the background thread once this many are
     * pending, or once they waited sync_ms (docs/STORE.md, "The tag
     * index's delta"); 0: CKPT_TAGIDX_MERGE_DEFAULT */
    unsigned tagidx_merge;
    /* interval and close modes: 1 turns off the power-loss guard (no
     * pinned snapshot, no sync record, one fdatasync per sync instead of
     * two): cheaper syncs and close, but after a power loss or an OS crash
     * the store can fail to open or hold torn records (docs/STORE.md,
     * "Power loss"). A process crash loses nothing either way. */
    int no_powerloss_guard;
    /* Keys of a stored record (struct ckpt_rec_keys), for what the store
     * does not keep itself: a kvtag's long name on lookup, and, in stores
     * of format 1 to 4, an object's or container's keys on a replacement,
     * a delete or a long-name lookup, and when a copy writes such a store
     * out in format 5. NULL: those are refused (CKPT_E_INVAL, naming this
     * field); everything else works without it. The hooks set
     * ckpt_rec_keys (ckpt_hooks.h). */
    ckpt_rec_keys_fn rec_keys;
};
#define CKPT_TAGIDX_MERGE_DEFAULT 16384u
#define CKPT_SYNC_KB_DEFAULT 64u
/* Bytes of the first version of struct ckpt_store_opts (size through
 * no_powerloss_guard): the smallest size field open accepts */
#define CKPT_STORE_OPTS_SIZE_V1                                                 \
    (offsetof(struct ckpt_store_opts, no_powerloss_guard) + sizeof(int))
#define CKPT_STORE_OPTS_INIT                                                    \
    {.size = sizeof(struct ckpt_store_opts), .root = NULL, .rank = 0, .nranks = 1, \
     .commit_every = 1000u, .commit_ms = 100u, .sync_mode = CKPT_SYNC_CLOSE,     \
     .sync_ms = 1000u, .map_size = (size_t)64 << 20, .readonly = 0, .create = 1,  \
     .check_rank = 1, .sync_kb = CKPT_SYNC_KB_DEFAULT, .tagidx_merge = 0u,       \
     .no_powerloss_guard = 0, .rec_keys = NULL}

/* What meta says about a store (ckpt_store_info). */
struct ckpt_store_info {
    uint32_t format_version;
    int32_t rank, nranks;
    uint64_t id_seq;          /* next id sequence number (ids are (rank+1)*1e9+seq) */
    uint64_t generation;      /* incremented at every open for writing */
    int clean;                /* 1 if the last writer closed cleanly */
    int64_t created_ms;       /* unix time, milliseconds */
    int64_t last_commit_ms;
    uint64_t mutations;       /* mutations committed over the store's life */
    int32_t origin_nranks;    /* rank count the store was first written with; a
                               * re-homing keeps it (meta field "origin_nranks";
                               * stores written before it existed: nranks) */
    uint64_t commits;
    size_t map_size;          /* current LMDB map size */
    size_t map_used;          /* bytes of the map in use (last page * page size) */
    uint64_t tagidx_pending;  /* format 3: tag-index entries committed to the delta
                               * and not merged yet (a reader: as of its open);
                               * every read sees them either way */
};

typedef struct ckpt_store ckpt_store;

/* Open (and with opts->create, create) rank opts->rank's environment. A
 * store of a newer format version is refused with CKPT_E_VERSION. Opening
 * for writing bumps the generation and clears the clean-close flag. */
CKPT_API int ckpt_store_open(ckpt_store **out, const struct ckpt_store_opts *opts);
/* Open root/rank-<rank> read-only: no write lock, nothing changed; the
 * rank and rank count in its meta are not checked. It has no rec_keys, so
 * lookups by long names are refused: for those, ckpt_store_open with
 * readonly = 1, create = 0, check_rank = 0 and rec_keys set. */
CKPT_API int ckpt_store_open_readonly(ckpt_store **out, const char *root, int rank);
/* Commit the staged batch now. */
CKPT_API int ckpt_store_checkpoint(ckpt_store *st);
/* Commit, make everything durable (fsync), mark clean, release. On error
 * the store stays open and nothing staged is lost: fix the cause and call
 * close again, or ckpt_store_discard(). close(NULL) is a no-op.
 * A writer's close returns once its last commit is durable and its locks
 * (writer.lock, store.lock) are dropped; unmapping the LMDB environment
 * (about 2 ms per 64 MB touched) then finishes on a thread of the store.
 * The next ckpt_store_open in the process, a fork and process exit wait
 * for it (the thread is joined, never detached), and so does
 * ckpt_store_wait_closed(). */
CKPT_API int ckpt_store_close(ckpt_store *st);
/* Wait until every store this process closed has unmapped its environment
 * (before opening one with LMDB directly, or to time it). */
CKPT_API void ckpt_store_wait_closed(void);
/* Release without committing the staged batch (as a crash would). */
CKPT_API void ckpt_store_discard(ckpt_store *st);

/* Copy the last commit of the environment into a new directory dest
 * (created 0700; it must not exist), as data.mdb, with LMDB's copy API:
 * consistent while writers go on. compact: leave free pages out. */
CKPT_API int ckpt_store_copy(ckpt_store *st, const char *dest, int compact);
/* The message of the calling thread's last failed call (see "Errors"
 * above); "" before any. Valid until that thread's next failing call. */
CKPT_API const char *ckpt_errmsg(void);
/* Set this thread's error message (for layers above the store and their
 * callbacks); returns code. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
CKPT_API int ckpt_error(int code, const char *fmt, ...);
CKPT_API int ckpt_store_info(struct ckpt_store_info *info, ckpt_store *st);
/* The environment's directory (root/rank-<r>). */
CKPT_API const char *ckpt_store_path(const ckpt_store *st);
/* Mutations staged and not yet committed. */
CKPT_API size_t ckpt_store_pending(ckpt_store *st);
/* Merge the tag index's whole delta now, in the caller's thread (the
 * background thread does it by itself: ckpt_store_opts.tagidx_merge). A
 * writer only: CKPT_E_READONLY for a reader. */
CKPT_API int ckpt_store_merge_tags(ckpt_store *st);

/* Record the rank count the store was first written with (a re-homing
 * carries it over from the old layout); committed with the next commit. */
CKPT_API int ckpt_store_set_origin(ckpt_store *st, int32_t origin_nranks);

/* Next id from the persisted sequence: (rank+1)*1e9 + seq. */
CKPT_API int ckpt_store_next_id(uint64_t *id, ckpt_store *st);
/* Make the sequence continue above id (after an import or a re-homing). */
CKPT_API int ckpt_store_reserve_id(ckpt_store *st, uint64_t id);

/* ---- staged mutations (schema level; records are encoded BULKI) ---- */
/* Object: obj[id] = rec; obj_name[name, ts] = id; obj_keys[id] = (ts,
 * cont_id, name). cont_id: the container the object belongs to (0: none),
 * whose membership entry a delete of the object removes. If an earlier
 * record of this id had another name/ts, its name entry is removed. */
CKPT_API int ckpt_store_put_obj(ckpt_store *st, uint64_t id, const char *name, size_t nlen,
                                int32_t ts, uint64_t cont_id, const void *rec, size_t len);
/* Delete an object with its name entry, kvtags, tag index entries, regions
 * and its membership in its own container (the record's cont_id), when that
 * container's membership list is in this environment. Memberships belong
 * to the container's rank: one in any other container is removed by that
 * container's server (ckpt_store_cont_remove), as in PDC. Deleting a
 * missing id is not an error. */
CKPT_API int ckpt_store_del_obj(ckpt_store *st, uint64_t id);
/* kvtag of an owner (object or container id): rec is a BULKI record. */
CKPT_API int ckpt_store_put_kvtag(ckpt_store *st, uint64_t owner, const char *name, size_t nlen,
                                  const void *rec, size_t len);
CKPT_API int ckpt_store_del_kvtag(ckpt_store *st, uint64_t owner, const char *name, size_t nlen);
CKPT_API int ckpt_store_put_cont(ckpt_store *st, uint64_t id, const char *name, size_t nlen,
                                 const void *rec, size_t len);
/* Delete a container with its name entry, membership list and kvtags (the
 * member objects themselves stay). */
CKPT_API int ckpt_store_del_cont(ckpt_store *st, uint64_t id);
CKPT_API int ckpt_store_cont_add(ckpt_store *st, uint64_t cont, const uint64_t *objs, size_t n);
CKPT_API int ckpt_store_cont_remove(ckpt_store *st, uint64_t cont, const uint64_t *objs, size_t n);
/* Region of an object, keyed by its geometry (ckpt_key_region). */
CKPT_API int ckpt_store_put_region(ckpt_store *st, uint64_t obj, uint32_t ndim, const uint64_t *start,
                                   const uint64_t *count, const void *rec, size_t len);
CKPT_API int ckpt_store_del_region(ckpt_store *st, uint64_t obj, uint32_t ndim, const uint64_t *start,
                                   const uint64_t *count);
/* Raw put/delete of one key in one database (tools, tests, importers). */
CKPT_API int ckpt_store_put_raw(ckpt_store *st, int db, const void *key, size_t klen, const void *val,
                                size_t vlen);
CKPT_API int ckpt_store_del_raw(ckpt_store *st, int db, const void *key, size_t klen);

/* ---- the pending file (pending.c; docs/STORE.md, "The pending file") ----
 * When commits keep failing (full disk) and the writer must go, the staged
 * batch can be kept in a file elsewhere and replayed into the store later.
 * Export writes the whole batch (header: magic, format tag, rank and rank
 * count, mutation count, length, CRC-32C) to a temporary file beside path,
 * fsyncs it, renames it to path and fsyncs the directory; the batch stays
 * staged. It refuses (CKPT_E_EXISTS) to replace a file at path that this
 * handle did not replay or write. A writer only. *nops: mutations written. */
#define CKPT_PENDING_FORMAT 2u
CKPT_API int ckpt_store_pending_export(ckpt_store *st, const char *path, size_t *nops);
/* Replay a pending file into a writer of the same rank that has nothing
 * staged (right after its open): the whole file is checked first (magic,
 * format, CRC, every op; CKPT_E_CORRUPT naming the file and offset, and
 * nothing staged; CKPT_E_MISMATCH for another rank), the id sequence moves
 * past every id in it, then its mutations are staged and committed; only
 * after that commit succeeded is the file removed. A failed commit leaves
 * them staged (retry with ckpt_store_checkpoint; the file stays until a
 * replay succeeds). *nops: mutations replayed. */
CKPT_API int ckpt_store_pending_replay(ckpt_store *st, const char *path, size_t *nops);

/* ---- the store root as a whole (root.c) ---- */
/* Every writer holds ROOT/store.lock shared and ROOT/rank-<r>/writer.lock
 * exclusive (holding its pid) while it has rank r open. An operation that
 * removes or replaces store data takes ROOT/store.lock exclusive first:
 * ckpt_root_lock() sets *fd to the held lock (-1 when root does not exist:
 * nothing to protect), or fails with CKPT_E_BUSY naming the rank and the
 * pid of a writer that has the store open. While it is held, no writer can
 * open any rank of root, in this process either. */
CKPT_API int ckpt_root_lock(int *fd, const char *root);
CKPT_API void ckpt_root_unlock(int fd); /* -1: no-op */
/* Entries of root that are not part of a store of nranks ranks: anything
 * but rank-<N> directories with N < nranks (any N when nranks <= 0),
 * store.lock and a re-homing's .rehome and .rehome-old. cb gets each
 * entry's name and why it does not belong (return non-zero to stop).
 * Returns how many were found, or a negative error. */
typedef int (*ckpt_stray_cb)(const char *name, const char *why, void *payload);
CKPT_API int ckpt_root_strays(const char *root, int nranks, ckpt_stray_cb cb, void *payload);
/* 0, or CKPT_E_EXISTS with a message listing the stray entries and the
 * command that removes them (for restarts and re-homing: nothing changed). */
CKPT_API int ckpt_root_check(const char *root, int nranks);
/* N of a directory name "rank-<N>" (N in canonical decimal, as the store
 * names them); -1 for any other name. */
CKPT_API int ckpt_rank_of_name(const char *name);

/* ---- damaged stores (docs/RELIABILITY.md) ----
 * Every LMDB call of the store runs under a recovery point: when LMDB
 * fails an assertion on a damaged page (it would abort()), the call
 * returns CKPT_E_CORRUPT naming the rank's data.mdb and the database, and
 * the store is marked failed: every later call on that handle returns
 * CKPT_E_FAILED; close or discard it and reopen. This needs nothing.
 *
 * A damaged page can also make LMDB follow a garbage pointer (SIGSEGV, or
 * SIGBUS past the end of the file). Turning those into CKPT_E_CORRUPT
 * needs process-wide SIGSEGV/SIGBUS handlers, which the library installs
 * only when asked: ckpt_fault_guard_install(). A fault outside the store's
 * LMDB calls (or in a thread without one running) goes on to the handler
 * that was installed before, or kills the process as it would have
 * without it. Call it early (before installing your own handlers, which
 * would replace it); ckpt_fault_guard_uninstall() restores the previous
 * handlers. The tools (ckpt-inspect, ckpt-workload) install it. */
CKPT_API int ckpt_fault_guard_install(void);
CKPT_API void ckpt_fault_guard_uninstall(void);
/* Run fn(arg) under the same recovery point: returns 0 when fn returned,
 * or the signal (SIGSEGV, SIGBUS; SIGABRT for an LMDB assertion in a raw
 * LMDB call of fn) that interrupted it. Whatever fn held is abandoned. */
CKPT_API int ckpt_guard_run(void (*fn)(void *), void *arg);

/* ---- reads ---- */
typedef struct ckpt_val {
    size_t len;
    const void *data;
} ckpt_val;

typedef struct ckpt_rtxn ckpt_rtxn;

/* Begin a read transaction on committed data. Views it returns live until
 * ckpt_rtxn_end(). */
CKPT_API int ckpt_rtxn_begin(ckpt_rtxn **out, ckpt_store *st);
CKPT_API void ckpt_rtxn_end(ckpt_rtxn *tx);

CKPT_API int ckpt_get_raw(ckpt_val *val, ckpt_rtxn *tx, int db, const void *key, size_t klen);
CKPT_API int ckpt_get_obj(ckpt_val *rec, ckpt_rtxn *tx, uint64_t id);
CKPT_API int ckpt_get_obj_by_name(uint64_t *id, ckpt_val *rec, ckpt_rtxn *tx, const char *name,
                                  size_t nlen, int32_t ts);
CKPT_API int ckpt_get_kvtag(ckpt_val *rec, ckpt_rtxn *tx, uint64_t owner, const char *name, size_t nlen);
CKPT_API int ckpt_get_cont(ckpt_val *rec, ckpt_rtxn *tx, uint64_t id);
CKPT_API int ckpt_get_cont_by_name(uint64_t *id, ckpt_val *rec, ckpt_rtxn *tx, const char *name,
                                   size_t nlen);
/* Entries in the database's key order. The callback returns 0 to go on, a
 * positive value to stop (returned by the iterator), or a negative error. */
typedef int (*ckpt_iter_cb)(const ckpt_val *key, const ckpt_val *val, void *payload);
/* Every entry of db whose key starts with prefix (plen may be 0). */
CKPT_API int ckpt_iter(ckpt_rtxn *tx, int db, const void *prefix, size_t plen, ckpt_iter_cb cb,
                       void *payload);
/* kvtags of an owner; regions of an object; members of a container (key =
 * cont id . obj id); owners carrying tag `name` (key = namekey . owner). */
CKPT_API int ckpt_iter_kvtags(ckpt_rtxn *tx, uint64_t owner, ckpt_iter_cb cb, void *payload);
CKPT_API int ckpt_iter_regions(ckpt_rtxn *tx, uint64_t obj, ckpt_iter_cb cb, void *payload);
CKPT_API int ckpt_iter_members(ckpt_rtxn *tx, uint64_t cont, ckpt_iter_cb cb, void *payload);
CKPT_API int ckpt_iter_tagged(ckpt_rtxn *tx, const char *name, size_t nlen, ckpt_iter_cb cb,
                              void *payload);
/* Skip-and-report (format 4): from now on, an iteration in tx that meets a
 * record whose checksum does not hold (or a tag-index entry that no kvtag
 * backs, or one out of order) calls cb with its database, its key and what
 * is wrong with it ("checksum mismatch (stored ..., computed ...): the
 * record is damaged"), and goes on with the next entry instead of failing
 * with CKPT_E_CORRUPT: what it skips is exactly those entries. cb NULL
 * restores failing. Lookups (ckpt_get_*) always fail on such a record. */
typedef void (*ckpt_damage_cb)(int db, const ckpt_val *key, const char *what, void *arg);
CKPT_API void ckpt_rtxn_on_damage(ckpt_rtxn *tx, ckpt_damage_cb cb, void *arg);
/* Whether the store's records carry checksums (format >= 4). */
CKPT_API int ckpt_store_has_checksums(const ckpt_store *st);
/* Entries and bytes of one database (ckpt-inspect stat). */
CKPT_API int ckpt_db_stat(uint64_t *entries, uint64_t *bytes, ckpt_rtxn *tx, int db);

#ifdef __cplusplus
}
#endif
#endif /* PDC_CKPT_STORE_H */
