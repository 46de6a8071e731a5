/*
 * legacy.h - PDC's legacy checkpoint files (`metadata_checkpoint.<rank>`,
 * the full snapshot PDC writes at close) and their import into a pdc-ckpt
 * store.
 *
 * The reader (legacy_reader.c) never trusts a file: it reads it whole, walks
 * it with a cursor that bounds every count and length by the bytes left
 * before using it, bounds every string by its char array (a string without
 * a NUL inside its array is an error), allocates only in proportion to what
 * the file holds, and stops at the first inconsistency with a message naming
 * the file and the byte offset:
 *
 *   metadata_checkpoint.0: byte 1234: kvtag name_len 99999 exceeds the 200 bytes left
 *
 * It never prints, exits or aborts. The file layout is x86-64 (LP64,
 * little-endian); see docs/TOOLS.md for the migration recipe.
 *
 * The parsed form is a set of arrays in file order. Every struct reuses the
 * hooks' record structs (ckpt_hooks.h); their string and byte pointers
 * point into the file image held by the legacy_file (strings are
 * NUL-terminated there), so they live until legacy_file_free().
 *
 * The importer (legacy_import.c) parses every file first, then writes
 * everything through the hooks into a temporary sibling of the store root
 * and renames it into place at the end: a failure at any point leaves no
 * store data behind.
 */
#ifndef PDC_CKPT_LEGACY_H
#define PDC_CKPT_LEGACY_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt_hooks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Struct sizes of the legacy layout (x86-64, gcc). */
#define LEGACY_METADATA_SIZE 5360u /* pdc_metadata_t */
#define LEGACY_REGION_SIZE 3480u   /* region_list_t */
#define LEGACY_CONT_SIZE 3112u     /* pdc_cont_hash_table_entry_t */

/* A container entry: { uint32 hash_key ; pdc_cont_hash_table_entry_t }. */
struct legacy_cont {
    struct ckpt_cont cont;      /* cont_id, cont_name, tags (legacy tag string) */
    uint32_t hash_key;          /* == djb2(cont_name), checked */
    int32_t n_obj, n_deleted, n_allocated; /* as stored (n_obj is 0 in real files) */
    size_t offset;              /* of hash_key */
};

/* pdc_metadata_t's current_state (a transform state; not part of the
 * store's object record). */
struct legacy_state {
    int32_t storage_order;
    int32_t dtype;
    uint64_t ndim;
    uint64_t dims[4];
    int32_t meta_index;
};

/* An object: pdc_metadata_t plus its kvtags and regions. */
struct legacy_obj {
    struct ckpt_obj obj;        /* every persistent field but current_state */
    struct legacy_state current_state;
    size_t bucket;              /* index into legacy_file.buckets */
    size_t first_kvtag, n_kvtag;   /* range of legacy_file.kvtags */
    size_t first_region, n_region; /* range of legacy_file.regions */
    size_t offset;              /* of the pdc_metadata_t */
    size_t off_n_kvtag, off_n_region;
};

/* A hash bucket: { int32 n_obj ; uint32 hash_key ; n_obj objects }. Every
 * object in it has djb2(obj_name) == hash_key (checked). */
struct legacy_bucket {
    uint32_t hash_key;
    size_t first_obj, n_obj;    /* range of legacy_file.objs */
    size_t offset;              /* of n_obj */
};

/* A kvtag as stored: { int32 name_len ; name ; uint32 size ; int8 type ;
 * value }. tag.name points at the NUL-terminated name, tag.value at the
 * `size` value bytes (little-endian elements; a PDC_STRING includes its
 * NUL when the writer stored one). Duplicates are kept as stored. */
struct legacy_kvtag {
    struct ckpt_kvtag tag;
    size_t obj;                 /* index into legacy_file.objs */
    size_t offset;              /* of name_len */
};

/* A region_list_t (+ histogram). reg.obj_id is the struct's own obj_id
 * field as stored (0 in data-server regions: the owner is in front). The
 * histogram arrays point into the file image (unaligned; read them with
 * ckpt_hist_range / ckpt_hist_bin). */
struct legacy_region {
    struct ckpt_region reg;
    size_t owner;               /* object index (per-object) or ds index */
    size_t offset;              /* of the region_list_t */
};

/* A data-server region list: { uint64 obj_id ; int32 n_region ; regions }. */
struct legacy_ds {
    uint64_t obj_id;
    size_t first_region, n_region; /* range of legacy_file.ds_regions */
    size_t offset;              /* of obj_id */
};

struct legacy_file {
    char *name;                 /* the name errors use (the path given) */
    const uint8_t *data;        /* the file image */
    size_t size;

    struct legacy_cont *conts;
    size_t n_conts;
    struct legacy_bucket *buckets;
    size_t n_buckets;
    struct legacy_obj *objs;
    size_t n_objs;
    struct legacy_kvtag *kvtags;
    size_t n_kvtags;
    struct legacy_region *regions;     /* per-object regions */
    size_t n_regions;
    struct legacy_ds *ds;              /* data-server region lists */
    size_t n_ds;
    struct legacy_region *ds_regions;
    size_t n_ds_regions;

    uint64_t tq_size;           /* transfer-query blob, skipped */
    size_t off_n_bucket, off_n_ds, off_tq_size;

    uint8_t *owned;             /* image to free, or NULL if borrowed */
};

/*
 * Read and parse one file. On success *out is the parsed file (free it with
 * legacy_file_free). On failure returns a negative CKPT_E_* code and writes
 * the message ("<path>: byte <n>: ...", or "<path>: <errno text>") into
 * err[0..errlen):
 *   CKPT_E_RECORD  the file is not a consistent legacy checkpoint
 *   CKPT_E_NOSTORE / CKPT_E_PERM / CKPT_E_IO / CKPT_E_SYS  it cannot be read
 *   CKPT_E_NOMEM, CKPT_E_INVAL
 */
int legacy_file_read(struct legacy_file **out, const char *path, char *err, size_t errlen);
/* Parse a file image already in memory. The image is borrowed: it must
 * outlive the result. `name` is what messages call the file. */
int legacy_parse(struct legacy_file **out, const char *name, const void *data, size_t size,
                 char *err, size_t errlen);
void legacy_file_free(struct legacy_file *f);

/* ---- import ---- */

/* Why a record was not written (each is counted in the stats). */
enum legacy_skip {
    LEGACY_SKIP_DUP_KVTAG = 0,  /* an object holds a later tag of the same name: the last wins */
    LEGACY_SKIP_DUP_REGION,     /* an object holds a later region of the same geometry: the last wins */
    LEGACY_SKIP_ORPHAN_REGION,  /* data-server region of an object that is in none of the files */
    LEGACY_SKIP_EMPTY_REGION,   /* region with ndim 0 (no geometry to key it by) */
    LEGACY_SKIP_NO_CONT,        /* membership: the object's cont_id names no container in the files */
    LEGACY_SKIP_COUNT
};
/* One-line reason of a skip kind ("duplicate kvtag name: the last copy wins"). */
const char *legacy_skip_reason(int kind);

struct legacy_import_stats {
    uint64_t files, bytes;      /* files read and their total size */
    uint64_t containers, objects, kvtags, members;
    uint64_t regions;           /* written: obj_regions + ds_regions */
    uint64_t obj_regions, ds_regions;
    uint64_t skipped;           /* sum of skip[] */
    uint64_t skip[LEGACY_SKIP_COUNT];
    char skip_first[LEGACY_SKIP_COUNT][200]; /* where the first of each kind was */
    int nranks;
    double seconds;             /* wall time of the whole import */
};

struct legacy_import_opts {
    const char *store_root;     /* must not exist, or be an empty directory */
    int nranks;                 /* ranks of the new store (1..1048576) */
    unsigned commit_every;      /* store commit policy while importing (0: 4096) */
    /* Tests only: fail with CKPT_E_IO after this many records were staged
     * (0: never), to exercise the rollback. */
    uint64_t test_fail_after;
    /* Progress: ranks of the new store written so far, of nranks; called
     * after each rank. NULL: off. */
    void (*progress)(void *progress_arg, uint64_t done, uint64_t total);
    void *progress_arg;
};

/*
 * Import legacy files into a new store at store_root with nranks ranks.
 *
 * All or nothing: every file is parsed and cross-checked first (duplicate
 * object or container ids, duplicate names, ids shared by an object and a
 * container, tag names longer than CKPT_NAME_MAX are errors); then every
 * rank is written through the hooks into a temporary sibling directory
 * (<root>.import-XXXXXX), made durable, and renamed to store_root. Any
 * failure removes the temporary directory, so store_root is left as it
 * was. A root that already exists and is not an empty directory (e.g. holds
 * a store) is refused with CKPT_E_EXISTS.
 *
 * Routing is PDC's: an object goes to (djb2(obj_name) + time_step) % nranks
 * with its kvtags and regions (data-server regions are attached to their
 * object by obj_id), a container to djb2(cont_name) % nranks with its
 * membership, rebuilt from the objects' cont_id. Ids are kept; each rank's
 * id sequence is moved above every imported id in that rank's id range
 * ((r+1)*1e9 .. (r+2)*1e9-1), wherever the record with that id lives.
 *
 * Returns 0 or a negative CKPT_E_* code with a message in err (also set as
 * the thread's ckpt_errmsg(), which keeps its first 511 bytes):
 *   CKPT_E_RECORD      a file is not a consistent legacy checkpoint
 *                      ("<file>: byte <n>: ...")
 *   CKPT_E_INVAL       bad arguments, a symlink as root, or files that
 *                      contradict each other (duplicate ids or names)
 *   CKPT_E_EXISTS      the root exists and is not an empty directory
 *   CKPT_E_NOSTORE     an input file, or the root's parent, does not exist
 *   CKPT_E_NAMETOOLONG a tag name longer than CKPT_NAME_MAX
 *   other codes        from reading the files or writing the store
 * stats (may be NULL) is filled on success only.
 *
 * Memory: every file is held and parsed at once: about 1.1x their total
 * size for real files (at most ~10x for a file of nothing but tiny tags),
 * plus one rank's staged batch (commit_every records).
 */
int legacy_import(const char *store_root, int nranks, const char *const *files, size_t nfiles,
                  struct legacy_import_stats *stats, char *err, size_t errlen);
int legacy_import_ex(const struct legacy_import_opts *opts, const char *const *files,
                     size_t nfiles, struct legacy_import_stats *stats, char *err, size_t errlen);

/* Multi-line human summary of stats (counts, then one line per skip kind
 * that occurred). Returns what snprintf would. */
int legacy_import_summary(char *buf, size_t len, const struct legacy_import_stats *stats);

#ifdef __cplusplus
}
#endif
#endif /* PDC_CKPT_LEGACY_H */
