/*
 * ckpt_hooks.h - the hooks a PDC metadata server calls: one per mutation,
 * checkpoint, close, and restart (map or rebuild). docs/PDC_INTEGRATION.md
 * says where each call goes in PDC's server.
 *
 * Every hook encodes its record as BULKI (the record layouts are in
 * docs/STORE.md) and stages it in the rank's store; the store commits on its
 * policy, on ckpt_hooks_checkpoint() and on ckpt_hooks_close(). So close is
 * one commit of the last batch plus a sync, and restart is opening the map.
 *
 * Thread safety: all hooks may be called from several server threads at
 * once on one handle.
 *
 * Return values: 0, or a negative CKPT_E* code (ckpt_store.h);
 * ckpt_errmsg() says what failed and where (the calling thread's last
 * failure, any handle or none: ckpt_store.h, "Errors"). A hook that returns an
 * error from a failed commit (CKPT_E_NOSPACE, CKPT_E_IO) has still staged
 * its mutation: it is kept and committed by the next commit that succeeds.
 * CKPT_E_BACKLOG means the opposite: commits kept failing until 256 MiB were
 * staged, and this mutation was refused (not staged); call it again later.
 *
 * Views: structs filled by the read functions and passed to rebuild
 * callbacks point into the store's memory map (strings are NUL-terminated
 * there). They are valid until the read ends: ckpt_hooks_read_end() for
 * lookups, the return of the callback for rebuild.
 */
#ifndef PDC_CKPT_HOOKS_H
#define PDC_CKPT_HOOKS_H

#include "ckpt_export.h"

#include <stddef.h>
#include <stdint.h>

#include "ckpt_store.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CKPT_MAX_DIM 4

/* Persistent fields of PDC's pdc_metadata_t. */
struct ckpt_obj {
    uint64_t obj_id;
    uint64_t cont_id;
    const char *obj_name;
    const char *app_name;       /* "" if unset */
    const char *data_location;  /* "" if unset */
    const char *tags;           /* PDC's legacy tag string; "" if unset */
    int32_t time_step;
    int32_t user_id;
    int32_t data_type;          /* PDC type code */
    int32_t transform_state;
    int64_t create_time;
    int64_t last_modified_time;
    uint32_t data_server_id;
    uint8_t region_partition;
    uint8_t consistency;
    uint32_t ndim;              /* 0..CKPT_MAX_DIM */
    uint64_t dims[CKPT_MAX_DIM];
};

/* A kvtag (PDC's pdc_kvtag_t): value is `size` bytes of `type` (a
 * PDC_STRING value includes its NUL, as PDC stores it). */
struct ckpt_kvtag {
    const char *name;
    int8_t type;
    uint32_t size;
    const void *value;
};

struct ckpt_cont {
    uint64_t cont_id;
    const char *cont_name;
    const char *tags;           /* legacy tag string; "" if unset */
};

/* Histogram of a region. range and bin are arrays in host order (2*nbin
 * doubles, nbin uint64s). In a decoded view they point into the record and
 * may be unaligned: read them with memcpy (ckpt_hist_range/ckpt_hist_bin). */
struct ckpt_hist {
    int32_t dtype;
    int32_t nbin;
    const void *range;
    const void *bin;
    double incr;
};
CKPT_API double ckpt_hist_range(const struct ckpt_hist *h, size_t i);
CKPT_API uint64_t ckpt_hist_bin(const struct ckpt_hist *h, size_t i);

/* Persistent fields of PDC's region_list_t. A region is identified by its
 * object and geometry (ndim, start, count): putting the same geometry
 * again replaces it. */
struct ckpt_region {
    uint64_t obj_id;
    uint32_t ndim;              /* 1..CKPT_MAX_DIM */
    uint64_t start[CKPT_MAX_DIM];
    uint64_t count[CKPT_MAX_DIM];
    uint64_t data_size;
    uint64_t unit_size;
    int32_t data_loc_type;
    const char *storage_location; /* "" if unset */
    uint64_t offset;
    const char *cache_location;   /* "" if unset */
    uint64_t cache_offset;
    int has_hist;
    struct ckpt_hist hist;        /* when has_hist */
};

struct ckpt_hooks_opts {
    /* sizeof(struct ckpt_hooks_opts) as the caller was built
     * (CKPT_HOOKS_OPTS_INIT sets it), as in struct ckpt_store_opts: fields
     * past it take their defaults; an unknown size is CKPT_E_INVAL. */
    size_t size;
    const char *store_root;     /* the store's root directory */
    int rank;
    int nranks;
    unsigned commit_every;      /* K: commit every K mutations (0: off) */
    unsigned commit_ms;         /* T: commit when the batch is T ms old (0: off) */
    int sync_mode;              /* enum ckpt_sync_mode */
    unsigned sync_ms;           /* background sync period */
    size_t map_size;            /* initial map size (it grows by itself) */
    /* Node-local store with a shared copy (SCR/VeloC style): when set, the
     * live store is store_root (e.g. node-local SSD or tmpfs), and
     * checkpoint and close also publish a consistent copy of this rank's
     * environment to shared_root (e.g. the parallel file system). A restart
     * whose local environment is gone (node replaced) starts from the
     * shared copy. NULL: off. */
    const char *shared_root;
    unsigned sync_kb;           /* background sync every sync_kb KiB committed */
    /* Progress of long operations (re-homing: old environments read by
     * this rank so far, of how many), called between environments; the
     * library itself never prints. NULL: off. */
    void (*progress)(void *progress_arg, uint64_t done, uint64_t total);
    void *progress_arg;
    /* merge the tag index's delta once this many entries are pending
     * (ckpt_store_opts.tagidx_merge; 0: the default) */
    unsigned tagidx_merge;
    /* 1: no power-loss guard (ckpt_store_opts.no_powerloss_guard) */
    int no_powerloss_guard;
    /* Re-homing placement (ckpt_hooks_restart_elastic; docs/ELASTIC.md):
     * 0 puts every record at its name's home and leaves an id directory
     * (the model server); 1 puts every record at its id's home
     * (ckpt_id_dir_rank) and a name alias (CKPT_PDC_ALIAS_OBJ / _CONT) at
     * its name's home when that is another rank (PDC's server, whose
     * unmodified clients route ids and names on their own). */
    int rehome_by_id;
};
/* Bytes of the first version (size through no_powerloss_guard): the
 * smallest size field accepted */
#define CKPT_HOOKS_OPTS_SIZE_V1                                                 \
    (offsetof(struct ckpt_hooks_opts, no_powerloss_guard) + sizeof(int))
#define CKPT_HOOKS_OPTS_INIT                                                    \
    {.size = sizeof(struct ckpt_hooks_opts), .store_root = NULL, .rank = 0,     \
     .nranks = 1, .commit_every = 1000u, .commit_ms = 100u,                     \
     .sync_mode = CKPT_SYNC_CLOSE, .sync_ms = 1000u, .map_size = (size_t)64 << 20, \
     .shared_root = NULL, .sync_kb = CKPT_SYNC_KB_DEFAULT, .progress = NULL,    \
     .progress_arg = NULL, .tagidx_merge = 0u, .no_powerloss_guard = 0,        \
     .rehome_by_id = 0}

/*
 * Fill opts from the environment, PDC style (unset variables keep the
 * values already in *opts):
 *   PDC_CKPT_DIR          store root (default: $PDC_TMPDIR/pdc-ckpt, and
 *                         PDC_TMPDIR defaults to ./pdc_tmp as in PDC)
 *   PDC_CKPT_COMMIT_EVERY K
 *   PDC_CKPT_COMMIT_MS    T
 *   PDC_CKPT_SYNC         sync | interval | close
 *   PDC_CKPT_SYNC_MS      background sync period
 *   PDC_CKPT_SYNC_KB      background sync also every this many KiB committed
 *                         (0: only every PDC_CKPT_SYNC_MS)
 *   PDC_CKPT_SHARED_DIR   shared_root: publish copies there (node-local mode)
 *   PDC_CKPT_POWERLOSS_GUARD on | off (off: no_powerloss_guard)
 * `root_buf` (PATH_MAX bytes) holds the root string. Returns CKPT_E_INVAL
 * naming the variable if a value does not parse.
 */
CKPT_API int ckpt_hooks_opts_from_env(struct ckpt_hooks_opts *opts, char *root_buf, size_t root_len);

typedef struct ckpt_hooks ckpt_hooks;

/* Open (creating if needed) this rank's store for logging mutations. */
CKPT_API int ckpt_hooks_open(ckpt_hooks **out, const struct ckpt_hooks_opts *opts);
/* Open an existing store read-only, for lookups only (tools, verifiers):
 * takes no write lock, changes nothing, works while a server writes. */
CKPT_API int ckpt_hooks_open_readonly(ckpt_hooks **out, const struct ckpt_hooks_opts *opts);
/* Commit now; with shared_root, then publish the shared copy (this costs a
 * copy of the rank's whole environment). */
CKPT_API int ckpt_hooks_checkpoint(ckpt_hooks *h);
/* Commit, make durable, mark clean, release. On error the handle stays
 * open and nothing is lost (ckpt_store_close). close(NULL) is a no-op.
 * Returns once durable; the LMDB map is unmapped on a thread of the store
 * that the next open, a fork and process exit wait for
 * (ckpt_store_wait_closed, docs/STORE.md "Unmapping on a thread"). */
CKPT_API int ckpt_hooks_close(ckpt_hooks *h);
/* Release without committing (tests; what a crash would do). */
CKPT_API void ckpt_hooks_discard(ckpt_hooks *h);
CKPT_API ckpt_store *ckpt_hooks_store(ckpt_hooks *h);

/* A new object/container id from the persisted sequence; never repeats,
 * also across restarts and crashes. */
CKPT_API int ckpt_hook_new_id(uint64_t *id, ckpt_hooks *h);

/* ---- one hook per mutation ---- */
CKPT_API int ckpt_hook_obj_create(ckpt_hooks *h, const struct ckpt_obj *obj);
CKPT_API int ckpt_hook_obj_update(ckpt_hooks *h, const struct ckpt_obj *obj);
CKPT_API int ckpt_hook_obj_delete(ckpt_hooks *h, uint64_t obj_id);
/* owner: an object or a container id */
CKPT_API int ckpt_hook_kvtag_put(ckpt_hooks *h, uint64_t owner, const struct ckpt_kvtag *tag);
CKPT_API int ckpt_hook_kvtag_delete(ckpt_hooks *h, uint64_t owner, const char *name);
CKPT_API int ckpt_hook_cont_create(ckpt_hooks *h, const struct ckpt_cont *cont);
CKPT_API int ckpt_hook_cont_delete(ckpt_hooks *h, uint64_t cont_id);
CKPT_API int ckpt_hook_cont_add_objs(ckpt_hooks *h, uint64_t cont_id, const uint64_t *obj_ids, size_t n);
CKPT_API int ckpt_hook_cont_remove_objs(ckpt_hooks *h, uint64_t cont_id, const uint64_t *obj_ids, size_t n);
CKPT_API int ckpt_hook_region_put(ckpt_hooks *h, const struct ckpt_region *region);
CKPT_API int ckpt_hook_region_delete(ckpt_hooks *h, uint64_t obj_id, uint32_t ndim, const uint64_t *start,
                                     const uint64_t *count);

/* ---- restart, form 1: map. Open the store and look records up in place;
 * O(1) in the size of the store. Both restart forms need an existing
 * store: a missing one is CKPT_E_NOSTORE, never a fresh store. ---- */
CKPT_API int ckpt_hooks_restart_map(ckpt_hooks **out, const struct ckpt_hooks_opts *opts);

typedef struct ckpt_hooks_read ckpt_hooks_read;
CKPT_API int ckpt_hooks_read_begin(ckpt_hooks_read **out, ckpt_hooks *h);
CKPT_API void ckpt_hooks_read_end(ckpt_hooks_read *r);
CKPT_API int ckpt_hooks_get_obj(struct ckpt_obj *obj, ckpt_hooks_read *r, uint64_t obj_id);
CKPT_API int ckpt_hooks_get_obj_by_name(struct ckpt_obj *obj, ckpt_hooks_read *r, const char *name,
                                        int32_t time_step);
/* tag->name is `name` itself unless the name is long (then the record's). */
CKPT_API int ckpt_hooks_get_kvtag(struct ckpt_kvtag *tag, ckpt_hooks_read *r, uint64_t owner,
                                  const char *name);
CKPT_API int ckpt_hooks_get_cont(struct ckpt_cont *cont, ckpt_hooks_read *r, uint64_t cont_id);
CKPT_API int ckpt_hooks_get_cont_by_name(struct ckpt_cont *cont, ckpt_hooks_read *r, const char *name);
/* Callbacks return 0 to go on, > 0 to stop (returned), < 0 an error. */
typedef int (*ckpt_kvtag_cb)(uint64_t owner, const struct ckpt_kvtag *tag, void *payload);
typedef int (*ckpt_member_cb)(uint64_t cont_id, uint64_t obj_id, void *payload);
typedef int (*ckpt_region_cb)(const struct ckpt_region *region, void *payload);
typedef int (*ckpt_id_cb)(uint64_t id, void *payload);
CKPT_API int ckpt_hooks_foreach_kvtag(ckpt_hooks_read *r, uint64_t owner, ckpt_kvtag_cb cb, void *payload);
CKPT_API int ckpt_hooks_foreach_member(ckpt_hooks_read *r, uint64_t cont_id, ckpt_member_cb cb,
                                       void *payload);
CKPT_API int ckpt_hooks_foreach_region(ckpt_hooks_read *r, uint64_t obj_id, ckpt_region_cb cb,
                                       void *payload);
/* Every object id (containers == 0) or every container id (containers !=
 * 0), ascending: what a server that faults records in on first use walks
 * when it must answer a whole-table scan. */
CKPT_API int ckpt_hooks_foreach_id(ckpt_hooks_read *r, int containers, ckpt_id_cb cb, void *payload);
/* Owners (objects or containers) that carry a kvtag called `name`. */
CKPT_API int ckpt_hooks_foreach_tagged(ckpt_hooks_read *r, const char *name, ckpt_id_cb cb, void *payload);

/* Where an id-based lookup goes. A server receiving a request for `id`
 * asks the directory rank ckpt_id_dir_rank(id, nranks) (the id's own rank
 * while the rank count never changed); there ckpt_hooks_id_home() says
 * which rank holds the record now: the same rank if the record is there,
 * else the rank recorded when a re-homing moved it. CKPT_E_NOTFOUND if the
 * id is unknown. */
CKPT_API int ckpt_id_dir_rank(uint64_t id, int nranks);
CKPT_API int ckpt_hooks_id_home(int *home, ckpt_hooks_read *r, uint64_t id);

/* ---- restart, form 2: rebuild. Visit every record once, in this order:
 * containers, objects, kvtags, memberships, regions. Any callback may be
 * NULL. A record that does not decode stops the walk with CKPT_E_RECORD and
 * a message naming the database and key. ---- */
struct ckpt_rebuild_cbs {
    int (*cont)(const struct ckpt_cont *cont, void *payload);
    int (*obj)(const struct ckpt_obj *obj, void *payload);
    ckpt_kvtag_cb kvtag;
    ckpt_member_cb member;
    ckpt_region_cb region;
};
/* Counts of what a rebuild visited. */
struct ckpt_rebuild_stats {
    uint64_t conts, objs, kvtags, members, regions;
};
CKPT_API int ckpt_hooks_restart_rebuild(ckpt_hooks **out, const struct ckpt_hooks_opts *opts,
                                        const struct ckpt_rebuild_cbs *cbs, void *payload,
                                        struct ckpt_rebuild_stats *stats);

/* ---- a PDC server's own region tables (database pdc_server) ----
 * What PDC's region transfers need besides the metadata, logged as it
 * changes and read back at restart (docs/PDC_INTEGRATION.md):
 *   data regions: PDC's data-server region table (dataserver_region_g):
 *     for an object whose bytes this rank stores, where each region's bytes
 *     are in the rank's data file. A struct ckpt_region (obj_id is the
 *     object's id; the object may belong to another rank), keyed like a
 *     metadata region by (object, geometry): the same geometry again
 *     replaces it.
 *   transfer regions: PDC's transfer-request table (the metadata server's
 *     record of which data server holds each region it was told of). */
struct ckpt_xfer_region {
    uint64_t obj_id;
    uint32_t ndim;              /* 1..CKPT_MAX_DIM */
    uint64_t start[CKPT_MAX_DIM];
    uint64_t count[CKPT_MAX_DIM];
    uint32_t data_server_id;
    uint64_t unit_size;
};
CKPT_API int ckpt_hook_data_region_put(ckpt_hooks *h, const struct ckpt_region *region);
CKPT_API int ckpt_hook_data_region_delete(ckpt_hooks *h, uint64_t obj_id, uint32_t ndim,
                                          const uint64_t *start, const uint64_t *count);
CKPT_API int ckpt_hook_xfer_region_put(ckpt_hooks *h, const struct ckpt_xfer_region *x);
typedef int (*ckpt_xfer_cb)(const struct ckpt_xfer_region *x, void *payload);
/* Every data region (ascending object id, then geometry) / every transfer
 * region of the store. A store written before these tables existed has
 * none. */
CKPT_API int ckpt_hooks_foreach_data_region(ckpt_hooks_read *r, ckpt_region_cb cb, void *payload);
CKPT_API int ckpt_hooks_foreach_xfer_region(ckpt_hooks_read *r, ckpt_xfer_cb cb, void *payload);
/* Key of a pdc_server entry: tag ('d' data region, 'x' transfer region),
 * object id (8 bytes, big-endian), region key (ckpt_key_region); returns
 * its length (at most 9 + CKPT_REGIONKEY_MAX), or 0 if ndim is out of
 * range. */
#define CKPT_PDC_DATA_REGION 'd'
#define CKPT_PDC_XFER_REGION 'x'
CKPT_API size_t ckpt_key_pdc_region(uint8_t *out, int tag, uint64_t obj_id, uint32_t ndim,
                                    const uint64_t *start, const uint64_t *count);

/* Same-name objects. PDC tells objects apart by name, time step, user id
 * and app name (PDC_metadata_cmp), so several objects may share a name and
 * time step; the store's name index (obj_name) keeps one id per name and
 * time step. A server records every object that shares its name and time
 * step with another (ckpt_hook_same_name_put: entry `n` . namekey . time
 * step . id in pdc_server, empty value), and a lookup by name visits them
 * all (ckpt_hooks_foreach_same_name, ascending ids: creation order) besides
 * the index's id. An entry of a deleted object stays; its id is never
 * reused, so it names no other object. */
#define CKPT_PDC_SAME_NAME 'n'
CKPT_API int ckpt_hook_same_name_put(ckpt_hooks *h, const char *name, int32_t time_step, uint64_t obj_id);
CKPT_API int ckpt_hooks_foreach_same_name(ckpt_hooks_read *r, const char *name, int32_t time_step,
                                          ckpt_id_cb cb, void *payload);
/* Key of a same-name entry; 0 if the name is too long or holds a NUL. At
 * most 13 + CKPT_NAMEKEY_MAX bytes. */
CKPT_API size_t ckpt_key_pdc_same_name(uint8_t *out, const char *name, int32_t time_step, uint64_t obj_id);

/* Name aliases, written by a re-homing with rehome_by_id: where an
 * object's or container's name home is not its id home, the name home
 * holds a copy of its record (without kvtags, regions or members) so that
 * a lookup by name finds it: entry `a` . namekey . time step . id (object)
 * or `c` . namekey . id (container) in pdc_server, the record as value. A
 * re-homing drops them and writes those of the new count. */
#define CKPT_PDC_ALIAS_OBJ 'a'
#define CKPT_PDC_ALIAS_CONT 'c'
/* Keys of the aliases; 0 if the name is too long or holds a NUL. At most
 * 13 + CKPT_NAMEKEY_MAX bytes. */
CKPT_API size_t ckpt_key_pdc_alias_obj(uint8_t *out, const char *name, int32_t time_step, uint64_t obj_id);
CKPT_API size_t ckpt_key_pdc_alias_cont(uint8_t *out, const char *name, uint64_t cont_id);
typedef int (*ckpt_obj_cb)(const struct ckpt_obj *obj, void *payload);
typedef int (*ckpt_cont_cb)(const struct ckpt_cont *cont, void *payload);
/* The object aliases of one name and time step (ascending ids), or with
 * name NULL every object alias of the store. */
CKPT_API int ckpt_hooks_foreach_obj_alias(ckpt_hooks_read *r, const char *name, int32_t time_step,
                                          ckpt_obj_cb cb, void *payload);
/* The container aliases of one name, or with name NULL every one. */
CKPT_API int ckpt_hooks_foreach_cont_alias(ckpt_hooks_read *r, const char *name, ckpt_cont_cb cb,
                                           void *payload);

/* PDC's DART (IDIOMS) index. PDC's server keeps it in memory only (its
 * own persistence is a file per virtual node, written at close); a server
 * with the store logs each entry its DART RPCs insert or delete
 * (ckpt_hook_dart_put / _delete: entry `i` in pdc_server) and replays them
 * into the index at restart (ckpt_hooks_foreach_dart). An entry is what
 * one insert RPC gave the server: attribute key, value bytes and type,
 * object reference, and whether the key is a suffix the client inserts for
 * suffix search; the virtual node and client are kept as PDC had them.
 * The key of an entry is `i` . flags . attribute key . NUL . type
 * (ckpt_key_i32) . value . object reference (8 bytes, big-endian), where
 * flags is 1 for a
 * suffix key; so the same entry inserted again is one entry, and a delete
 * removes it. An entry whose key would pass the store's 511-byte limit is
 * keyed by the first bytes of that body, its 64-bit FNV-1a hash and the
 * object reference (flags | 2). String values (string_value) are keyed as PDC's index
 * keys them (the bytes before the first NUL, one pair of surrounding
 * double quotes removed), so a delete finds the insert it undoes. */
#define CKPT_PDC_DART 'i'
struct ckpt_dart_entry {
    const char *key;        /* attribute key, NUL-terminated */
    const void *value;      /* value bytes as sent */
    uint32_t value_len;
    int32_t type;           /* PDC's pdc_c_var_type_t */
    uint64_t obj_ref;       /* the object reference the client indexed */
    uint32_t vnode_id;      /* DART virtual node */
    uint32_t src_client_id;
    uint8_t is_suffix;      /* 1: a suffix of the attribute key */
    uint8_t string_value;   /* 1: PDC indexes the value as a string */
};
/* Longest key of a DART entry. */
#define CKPT_PDC_DART_KEY_MAX 511u
/* Key of an entry into out (at least CKPT_PDC_DART_KEY_MAX bytes); returns
 * its length, or 0 if the entry has no key. */
CKPT_API size_t ckpt_key_pdc_dart(uint8_t *out, const struct ckpt_dart_entry *e);
CKPT_API int ckpt_hook_dart_put(ckpt_hooks *h, const struct ckpt_dart_entry *e);
CKPT_API int ckpt_hook_dart_delete(ckpt_hooks *h, const struct ckpt_dart_entry *e);
/* Every DART entry of the store, in key order (pointers valid during the
 * callback only; entry->key is NUL-terminated). A record that does not
 * decode stops the walk with CKPT_E_RECORD naming its key. */
typedef int (*ckpt_dart_cb)(const struct ckpt_dart_entry *e, void *payload);
CKPT_API int ckpt_hooks_foreach_dart(ckpt_hooks_read *r, ckpt_dart_cb cb, void *payload);

/* ---- record codecs (BULKI), shared with the tools ---- */
/* The index keys of a stored object (CKPT_DB_OBJ: obj_name, time_step,
 * cont_id), container (CKPT_DB_CONT: cont_name) or kvtag record
 * (CKPT_DB_KVTAG: its name when long, else NULL): the ckpt_rec_keys_fn the
 * hooks give the store (ckpt_store_opts.rec_keys). Whoever opens a store
 * holding the hooks' records with ckpt_store_open (tools, tests) sets it
 * too. CKPT_E_RECORD if the record does not decode. */
CKPT_API int ckpt_rec_keys(struct ckpt_rec_keys *keys, int db, const void *rec, size_t len);
/* Encoded length of a record, then encode into buf (cap >= that length). */
CKPT_API int ckpt_rec_obj_encode(size_t *len, uint8_t *buf, size_t cap, const struct ckpt_obj *obj);
CKPT_API int ckpt_rec_obj_decode(struct ckpt_obj *obj, const void *rec, size_t len, size_t *err_off);
CKPT_API int ckpt_rec_kvtag_encode(size_t *len, uint8_t *buf, size_t cap, const struct ckpt_kvtag *tag);
/* A kvtag record names its tag only when the name is too long for the key
 * (docs/STORE.md): then tag->name is NULL after ckpt_rec_kvtag_decode, and
 * ckpt_rec_kvtag_decode_entry takes it from the store key (owner . namekey)
 * the record was read under; with either, tag->name points into the bytes
 * given. */
CKPT_API int ckpt_rec_kvtag_decode(struct ckpt_kvtag *tag, const void *rec, size_t len, size_t *err_off);
CKPT_API int ckpt_rec_kvtag_decode_entry(struct ckpt_kvtag *tag, const void *key, size_t klen,
                                         const void *rec, size_t len, size_t *err_off);
CKPT_API int ckpt_rec_cont_encode(size_t *len, uint8_t *buf, size_t cap, const struct ckpt_cont *cont);
CKPT_API int ckpt_rec_cont_decode(struct ckpt_cont *cont, const void *rec, size_t len, size_t *err_off);
CKPT_API int ckpt_rec_region_encode(size_t *len, uint8_t *buf, size_t cap, const struct ckpt_region *reg);
CKPT_API int ckpt_rec_region_decode(struct ckpt_region *reg, const void *rec, size_t len, size_t *err_off);
CKPT_API int ckpt_rec_xfer_encode(size_t *len, uint8_t *buf, size_t cap, const struct ckpt_xfer_region *x);
CKPT_API int ckpt_rec_xfer_decode(struct ckpt_xfer_region *x, const void *rec, size_t len, size_t *err_off);
CKPT_API int ckpt_rec_dart_encode(size_t *len, uint8_t *buf, size_t cap, const struct ckpt_dart_entry *e);
CKPT_API int ckpt_rec_dart_decode(struct ckpt_dart_entry *e, const void *rec, size_t len, size_t *err_off);

/* PDC's routing: home rank of an object / a container. */
CKPT_API uint32_t ckpt_djb2(const char *s);
CKPT_API int ckpt_home_obj(const char *name, int32_t time_step, int nranks);
CKPT_API int ckpt_home_cont(const char *name, int nranks);

#ifdef __cplusplus
}
#endif
#endif /* PDC_CKPT_HOOKS_H */
