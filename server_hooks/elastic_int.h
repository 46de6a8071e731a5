/*
 * elastic_int.h - what elastic.c (the re-homing protocol and its exchange
 * rounds) shares with elastic_data.c (PDC's region data on another count).
 */
#ifndef PDC_CKPT_ELASTIC_INT_H
#define PDC_CKPT_ELASTIC_INT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "hooks_int.h"

enum rh_kind { RH_CONT = 1, RH_OBJ, RH_KVTAG, RH_MEMBER, RH_REGION, RH_IDHOME, RH_PDC, RH_ALIAS, RH_DATA };

struct buf {
    uint8_t *p;
    size_t len, cap;
};

struct rh {
    MPI_Comm comm;
    int me, p_new, p_old;
    ckpt_hooks *out;           /* the new store of this rank */
    struct buf *send;          /* one per destination */
    size_t buffered;
    struct buf recv;
    struct buf sendbuf;        /* a round's packed send buffer, kept */
    uint64_t records, moved;
    int env;                   /* old environment being read */
    int by_id;                 /* placement: id home, aliases at name homes */
    ckpt_rtxn *tx;             /* its read transaction */
    int aborted;               /* a round saw a failure: no more rounds */
    int32_t origin;            /* rank count the store was first written with */
    uint64_t cached_owner;     /* owner id -> home cache */
    int cached_home;
    struct rh_data *data;      /* PDC's region data (rh_data_*) */
    const char *root;          /* the store's root (the old layout) */
};

/* Send a record to its new home: applied at once when that is this rank,
 * else queued for the next exchange round (elastic.c's send_rec). */
typedef int (*ckpt_rh_send_fn)(struct rh *x, int dest, int kind, const void *k, size_t klen,
                               const void *v, size_t vlen, int *err);

/* CKPT_E_RECORD: a record of database db in the environment being read
 * does not decode (elastic_data.c; elastic.c's walks use it too). */
int ckpt_rh_bad(struct rh *x, const char *db, const ckpt_val *k);

/* elastic_data.c: PDC's region data (pdc_server `d`). A stored region of
 * the environment being read, cut for the new count and its pieces sent
 * with their bytes through `send`; a received piece appended to this
 * rank's file; the appended files synced (before the new layout is
 * committed); the end of one old environment; and the state freed. */
struct rh_data;
int ckpt_rh_data_region(struct rh *x, const ckpt_val *k, const ckpt_val *v, ckpt_rh_send_fn send,
                        int *err);
int ckpt_rh_data_apply(struct rh *x, const uint8_t *k, size_t klen, const uint8_t *v, size_t vlen);
int ckpt_rh_data_flush(struct rh *x);
void ckpt_rh_data_end_env(struct rh *x);
void ckpt_rh_data_free(struct rh *x);

#endif
