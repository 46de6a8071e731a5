/*
 * samename_store - writes a 1-rank store holding a same-name group, through
 * the hooks PDC's server calls (server_hooks/pdc/pdc_ckpt_server.c does the
 * same on a create), for test_inspect_samename.sh:
 *
 *   container "sc"
 *   "results" ts 0, app "appA", user 1001, kvtag "who" = "A"   (first: PDC's answer)
 *   "results" ts 0, app "appB", user 1001, kvtag "who" = "B"
 *   "results" ts 0, app "appA", user 1002, kvtag "who" = "C"
 *   "results" ts 0, app "appD", user 1003                      (deleted again)
 *   "results" ts 1, app "appA", user 1001                      (alone at ts 1)
 *   "single"  ts 0, app "appA", user 1001
 *
 * Every object of ts 0 "results" gets its same-name entry, as the server
 * records them. Prints the ids, one per line, in that order.
 *   usage: samename_store ROOT
 */
#include <stdio.h>
#include <string.h>

#include "ckpt_hooks.h"

static int put_obj(ckpt_hooks *h, uint64_t cont, const char *name, const char *app, uint32_t user,
                   int32_t ts, uint64_t *id)
{
    struct ckpt_obj o;
    memset(&o, 0, sizeof o);
    if (ckpt_hook_new_id(id, h) != 0)
        return -1;
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

static int put_tag(ckpt_hooks *h, uint64_t owner, const char *value)
{
    struct ckpt_kvtag t = {"who", 16 /* PDC_STRING */, (uint32_t)strlen(value) + 1, value};
    return ckpt_hook_kvtag_put(h, owner, &t);
}

int main(int argc, char **argv)
{
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    ckpt_hooks *h;
    uint64_t cont, id[6];
    static const char *const app[4] = {"appA", "appB", "appA", "appD"};
    static const uint32_t user[4] = {1001, 1001, 1002, 1003};
    static const char *const who[3] = {"A", "B", "C"};
    int rc;
    if (argc != 2) {
        fprintf(stderr, "usage: samename_store ROOT\n");
        return 2;
    }
    o.store_root = argv[1];
    if (ckpt_hooks_open(&h, &o) != 0) {
        fprintf(stderr, "samename_store: %s\n", ckpt_errmsg());
        return 1;
    }
    struct ckpt_cont cn = {0, "sc", ""};
    rc = ckpt_hook_new_id(&cont, h);
    cn.cont_id = cont;
    if (rc == 0)
        rc = ckpt_hook_cont_create(h, &cn);
    for (int i = 0; rc == 0 && i < 4; i++) {
        rc = put_obj(h, cont, "results", app[i], user[i], 0, &id[i]);
        if (rc == 0 && i < 3)
            rc = put_tag(h, id[i], who[i]);
        /* the server marks the earlier ones when the second arrives, then each new one */
        if (rc == 0 && i == 1)
            rc = ckpt_hook_same_name_put(h, "results", 0, id[0]);
        if (rc == 0 && i >= 1)
            rc = ckpt_hook_same_name_put(h, "results", 0, id[i]);
    }
    if (rc == 0)
        rc = ckpt_hook_obj_delete(h, id[3]);
    if (rc == 0)
        rc = put_obj(h, cont, "results", "appA", 1001, 1, &id[4]);
    if (rc == 0)
        rc = put_obj(h, cont, "single", "appA", 1001, 0, &id[5]);
    if (rc != 0) {
        fprintf(stderr, "samename_store: %s\n", ckpt_errmsg());
        ckpt_hooks_discard(h);
        return 1;
    }
    if (ckpt_hooks_close(h) != 0) {
        fprintf(stderr, "samename_store: close: %s\n", ckpt_errmsg());
        return 1;
    }
    for (int i = 0; i < 6; i++)
        printf("%llu\n", (unsigned long long)id[i]);
    return 0;
}
