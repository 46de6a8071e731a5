/*
 * hooks_gen.h - the steps of the small programs that write a 1-rank store
 * through the hooks a PDC server calls, for ckpt-inspect's script tests
 * (tests/inspect/inspect_names.c, tests/pdc/samename_store.c). Each
 * returns 0, or the exit status after saying why on stderr.
 */
#ifndef PDC_CKPT_HOOKS_GEN_H
#define PDC_CKPT_HOOKS_GEN_H

#include <stdio.h>
#include <string.h>

#include "ckpt_hooks.h"

/* `PROG ROOT`: opens a fresh store at ROOT into *h (2: usage, 1: open failed) */
static inline int gen_open(ckpt_hooks **h, int argc, char **argv, const char *prog)
{
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    if (argc != 2) {
        fprintf(stderr, "usage: %s ROOT\n", prog);
        return 2;
    }
    o.store_root = argv[1];
    if (ckpt_hooks_open(h, &o) != 0) {
        fprintf(stderr, "%s: %s\n", prog, ckpt_errmsg());
        return 1;
    }
    return 0;
}

/* a new container NAME (id in *id), as PDC's create: 0 or a CKPT_E_* code */
static inline int gen_cont(ckpt_hooks *h, const char *name, uint64_t *id)
{
    struct ckpt_cont cn = {0, name, ""};
    int rc = ckpt_hook_new_id(id, h);
    cn.cont_id = *id;
    return rc != 0 ? rc : ckpt_hook_cont_create(h, &cn);
}

/* a new object NAME of container cont (1-D, 8 elements; id in *id) */
static inline int gen_obj(ckpt_hooks *h, uint64_t cont, const char *name, const char *app,
                          uint32_t user, int32_t ts, uint64_t *id)
{
    struct ckpt_obj o;
    int rc = ckpt_hook_new_id(id, h);
    if (rc != 0)
        return rc;
    memset(&o, 0, sizeof o);
    o.obj_id = *id;
    o.cont_id = cont;
    o.obj_name = name;
    o.app_name = app;
    o.data_location = "";
    o.tags = "";
    o.time_step = ts;
    o.user_id = user;
    o.ndim = 1;
    o.dims[0] = 8;
    return ckpt_hook_obj_create(h, &o);
}

/* kvtag NAME = VALUE (PDC_STRING, with its NUL) on object owner */
static inline int gen_tag(ckpt_hooks *h, uint64_t owner, const char *name, const char *value)
{
    struct ckpt_kvtag t = {name, 16 /* PDC_STRING */, (uint32_t)strlen(value) + 1, value};
    return ckpt_hook_kvtag_put(h, owner, &t);
}

/* the end: rc != 0 (a step failed) discards the store and says why;
 * otherwise the store is closed */
static inline int gen_close(ckpt_hooks *h, int rc, const char *prog)
{
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", prog, ckpt_errmsg());
        ckpt_hooks_discard(h);
        return 1;
    }
    if (ckpt_hooks_close(h) != 0) {
        fprintf(stderr, "%s: close: %s\n", prog, ckpt_errmsg());
        return 1;
    }
    return 0;
}

#endif
