/*
 * hooks_int.h - private helpers of server_hooks/ shared between its files.
 */
#ifndef PDC_CKPT_HOOKS_INT_H
#define PDC_CKPT_HOOKS_INT_H

#include "ckpt_hooks.h"
#include "ckpt_store.h"

struct ckpt_hooks {
    ckpt_store *st;
    int rank, nranks;
    char *local_root, *shared_root; /* node-local mode, else NULL */
};

struct ckpt_hooks_read {
    ckpt_hooks *h;
    ckpt_rtxn *tx;
};

/* hooks.c: encode with `enc` into `stack` (REC_STACK bytes), or into a
 * *heap buffer for a larger record (the caller frees it); *len its size.
 * 0, or the error, set. */
#define REC_STACK 2048
typedef int (*enc_fn)(uint8_t *, size_t, size_t *, const void *);
int hk_with_record(const char *what, enc_fn enc, const void *arg, uint8_t **heap, uint8_t *stack,
                   size_t *len);
/* hooks.c: CKPT_E_RECORD naming the store, database and key of a record
 * that does not decode (at byte off) */
int hk_bad_record(ckpt_hooks *h, int db, const void *key, size_t klen, size_t off);
/* hooks.c: a region record's encoder, for hk_with_record */
int hk_enc_region(uint8_t *b, size_t c, size_t *l, const void *a);

/* hooks.c: *dst = the caller's options, the fields a smaller (older)
 * struct lacks at their defaults; CKPT_E_INVAL for NULL or an unknown
 * size field. Exported (CKPT_API) only for libckpt_hooks_mpi, as below. */
CKPT_API int ckpt_hooks_opts_get(struct ckpt_hooks_opts *dst, const struct ckpt_hooks_opts *o);

/* pdc_tables.c: the servers of nservers that PDC's DART (dart_core.c,
 * DART_hash of an insert) gives a DART entry: the replicas of the virtual
 * node the entry was inserted at (e->vnode_id), found among the replicas of
 * the base and the alternative virtual node of its key. Fills homes[0..n)
 * (distinct, n <= 3) and returns n; CKPT_E_MISMATCH if the entry's virtual
 * node is none of those (an index PDC's DART did not place). Exported
 * (CKPT_API) only for libckpt_hooks_mpi's re-homing. */
CKPT_API int ckpt_pdc_dart_homes(const struct ckpt_dart_entry *e, int nservers, int homes[3]);

/* shared.c: node-local store with a shared copy */
int ckpt_shared_publish(ckpt_store *st, const char *shared_root, int rank);
/* Exported (CKPT_API) only because libckpt_hooks_mpi's re-homing calls it;
 * not in an installed header. */
CKPT_API int ckpt_shared_restore(const char *local_root, const char *shared_root, int rank);

#endif
