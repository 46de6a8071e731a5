/*
 * powerloss_model.h - the deterministic mutation stream of the power-loss
 * test (test_store_powerloss.c) and its in-memory model: the workload
 * (powerloss_workload.c) applies mutation 0, 1, 2, ... of a seed to a
 * store, and the checker replays the first M of them into the model to
 * know what a store that committed M mutations must hold.
 *
 * Mutations: objects of rank 0 (ids CKPT_ID_BASE + k, k < PLM_NOBJ) put
 * (with a padding field: mostly tens of bytes, sometimes kilobytes, so
 * overflow pages come and go) and deleted (with their kvtags), and kvtags
 * "t<j>" (j < PLM_NTAG) of existing objects put and deleted. Every record
 * carries the number of the mutation that wrote it, so a stale page shows.
 */
#ifndef PDC_CKPT_POWERLOSS_MODEL_H
#define PDC_CKPT_POWERLOSS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt_store.h"

enum { PLM_NOBJ = 400, PLM_NTAG = 24 };

struct plm {
    uint64_t seed;
    uint64_t n;                       /* mutations applied */
    int64_t obj[PLM_NOBJ];            /* mutation that put the object, -1: absent */
    int64_t tag[PLM_NOBJ][PLM_NTAG];  /* mutation that put the kvtag, -1: absent */
};

enum plm_kind { PLM_PUT_OBJ = 1, PLM_DEL_OBJ, PLM_PUT_TAG, PLM_DEL_TAG };

struct plm_op {
    int kind;
    unsigned k;   /* object number */
    unsigned j;   /* tag number */
    uint64_t i;   /* mutation number */
};

void plm_init(struct plm *m, uint64_t seed);
/* The next mutation (depends on the model's state), not applied yet. */
void plm_next(const struct plm *m, struct plm_op *op);
void plm_apply(struct plm *m, const struct plm_op *op);
/* Apply op to a store (staged); a CKPT_E_* code. */
int plm_stage(ckpt_store *st, const struct plm_op *op);
/* Replay the first n mutations of seed. */
void plm_replay(struct plm *m, uint64_t seed, uint64_t n);

uint64_t plm_obj_id(unsigned k);
/* Encoded records, as the workload stores them: their length (0: no room) */
size_t plm_obj_rec(uint8_t *buf, size_t cap, unsigned k, uint64_t i);
size_t plm_tag_rec(uint8_t *buf, size_t cap, uint64_t i);

/* Whether the store's committed content (objects, object names, kvtags,
 * the tag index) is exactly the model's: 0, or -1 with why filled. */
int plm_check(ckpt_store *st, const struct plm *m, char *why, size_t wlen);

#endif
