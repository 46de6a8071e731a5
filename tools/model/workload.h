/*
 * workload.h - the deterministic mutation stream of ckpt-workload, per
 * (rank count, seed): what each rank's model server does, in order. The
 * writer applies it; the verifiers replay it to know what must be there.
 */
#ifndef PDC_CKPT_WORKLOAD_H
#define PDC_CKPT_WORKLOAD_H

#include <stdint.h>

#include "ckpt_hooks.h"

struct wl_params {
    int rank, nranks;
    long objects;          /* N: objects obj0..obj<N-1> */
    long tags_per_object;  /* M */
    long tagged;           /* T: the first T objects get "Group" = i */
    unsigned seed;
    long region_every;     /* every k-th object gets a region (0: none) */
};

enum wl_kind { WL_CONT, WL_CONT_TAG, WL_OBJ, WL_TAG, WL_REGION, WL_MEMBER };

/* One mutation. Pointers are valid during the callback only. */
struct wl_mut {
    enum wl_kind kind;
    long i;                /* object index (WL_OBJ, WL_TAG, WL_REGION, WL_MEMBER) */
    uint64_t owner;        /* WL_TAG/WL_CONT_TAG: owner id; WL_MEMBER: container id */
    uint64_t id;           /* WL_OBJ/WL_CONT: the id it gets; WL_MEMBER: member id */
    struct ckpt_obj obj;
    struct ckpt_cont cont;
    struct ckpt_kvtag tag;
    struct ckpt_region region;
};

typedef int (*wl_fn)(const struct wl_mut *m, void *arg);

/* Run fn over this rank's stream in order; stops at the first non-zero
 * return and returns it. Ids are those a fresh store hands out. */
int wl_stream(const struct wl_params *p, wl_fn fn, void *arg);
/* Home rank of a mutation's record under `nranks` server ranks (PDC's
 * routing: objects by name and time step, containers by name; kvtags,
 * regions and members with their owner). */
int wl_home(const struct wl_mut *m, int nranks);
/* Number of mutations in this rank's stream. */
long wl_count(const struct wl_params *p);
/* Name of the container and its home rank. */
#define WL_CONT_NAME "cont0"

#endif
