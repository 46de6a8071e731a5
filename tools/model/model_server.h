/*
 * model_server.h - a model of a PDC metadata server: in-memory tables
 * shaped like PDC's (objects hashed by djb2(name) + time_step, per-object
 * kvtag lists and region lists, containers with member lists), PDC's
 * routing, and one hook call per mutation. It is the reference integration
 * of the hooks and what the tests and the benchmark drive.
 *
 * All functions are safe to call from several threads on one server.
 */
#ifndef PDC_CKPT_MODEL_SERVER_H
#define PDC_CKPT_MODEL_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt_hooks.h"

typedef struct model_server model_server;

/* A server for `rank` of `nranks`. With hooks == NULL nothing is persisted
 * (ids then come from an in-memory sequence of the same shape). The model
 * does not own hooks. */
int model_create(model_server **out, int rank, int nranks, ckpt_hooks *hooks);

/* Where the model sends each mutation: the pdc-ckpt hooks, or another
 * persistence method behind the same calls (the benchmark's SQLite,
 * RocksDB, raw LMDB). Every function returns 0 or a negative CKPT_E* code;
 * new_id may be NULL (ids then come from the model's own sequence). */
struct model_sink {
    void *ctx;
    int (*new_id)(void *ctx, uint64_t *id);
    int (*obj_put)(void *ctx, const struct ckpt_obj *obj);
    int (*obj_delete)(void *ctx, uint64_t id);
    int (*kvtag_put)(void *ctx, uint64_t owner, const struct ckpt_kvtag *tag);
    int (*kvtag_delete)(void *ctx, uint64_t owner, const char *name);
    int (*cont_put)(void *ctx, const struct ckpt_cont *cont);
    int (*cont_delete)(void *ctx, uint64_t id);
    int (*cont_add)(void *ctx, uint64_t cont, const uint64_t *ids, size_t n);
    int (*cont_remove)(void *ctx, uint64_t cont, const uint64_t *ids, size_t n);
    int (*region_put)(void *ctx, const struct ckpt_region *reg);
};
/* A server whose mutations go to *sink (copied; NULL: nowhere). */
int model_create_sink(model_server **out, int rank, int nranks, const struct model_sink *sink);
/* Visit every record of the tables once, in the rebuild order (containers,
 * objects, kvtags, members, regions): what a full snapshot writes. Views
 * are valid during the callback. */
int model_foreach(model_server *m, const struct ckpt_rebuild_cbs *cbs, void *payload);
void model_destroy(model_server *m);

/* Mutations: update the tables, then call the hook. obj->obj_id == 0 asks
 * for a new id (returned in *id). */
int model_obj_create(model_server *m, const struct ckpt_obj *obj, uint64_t *id);
int model_obj_delete(model_server *m, uint64_t id);
int model_kvtag_put(model_server *m, uint64_t owner, const struct ckpt_kvtag *tag);
int model_kvtag_delete(model_server *m, uint64_t owner, const char *name);
int model_cont_create(model_server *m, const char *name, uint64_t *id);
/* A container with a given id (cont->cont_id != 0), e.g. one re-homed. */
int model_cont_create_id(model_server *m, const struct ckpt_cont *cont);
int model_cont_delete(model_server *m, uint64_t id);
int model_cont_add(model_server *m, uint64_t cont, const uint64_t *ids, size_t n);
int model_cont_remove(model_server *m, uint64_t cont, const uint64_t *ids, size_t n);
int model_region_put(model_server *m, const struct ckpt_region *reg);

/* Lookups in the tables (views valid until the record changes). */
const struct ckpt_obj *model_find_obj(model_server *m, uint64_t id);
const struct ckpt_obj *model_find_obj_by_name(model_server *m, const char *name, int32_t ts);
const struct ckpt_kvtag *model_find_kvtag(model_server *m, uint64_t owner, const char *name);
size_t model_count_objs(model_server *m);

/* Restart: a new server for opts->rank whose tables are refilled from the
 * store by a rebuild restart (every record visited once). *hooks receives
 * the reopened hooks, now logging further mutations. */
int model_restart_rebuild(model_server **out, ckpt_hooks **hooks, const struct ckpt_hooks_opts *opts,
                          struct ckpt_rebuild_stats *stats);

/* Callbacks that fill a model's tables without calling hooks. */
extern const struct ckpt_rebuild_cbs model_rebuild_cbs;

/* 1 if both servers hold the same objects, kvtags, containers, members and
 * regions; else 0 and `why` names the first difference. */
int model_equal(model_server *a, model_server *b, char *why, size_t n);

#endif
