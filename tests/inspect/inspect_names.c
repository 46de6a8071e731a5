/*
 * inspect_names - writes a 1-rank store whose names and values are not
 * all UTF-8, through the hooks a PDC server calls, for the JSON tests of
 * ckpt-inspect (test_inspect_names.sh):
 *
 *   container "cont\xfe"                         (not UTF-8)
 *   object "obj\xff\xfe" ts 0, app_name "app\xc3" (not UTF-8; cut character)
 *     kvtag "tag\xff" PDC_STRING "v\xe9"          (Latin-1, not UTF-8)
 *     kvtag "caf\xc3\xa9" PDC_STRING "\xe2\x82\xac" (valid: "café" = "€")
 *   object "caf\xc3\xa9" ts 1                      (valid UTF-8)
 *   object of 447 "a", "\xc3\xa9", "z": longer than the 448 bytes a key
 *     holds, so the key's prefix ends inside the "é" (not UTF-8)
 *
 *   usage: inspect_names ROOT     prints the ids, one per line, in that order
 */
#include <stdio.h>
#include <string.h>

#include "ckpt_hooks.h"

static int put_obj(ckpt_hooks *h, uint64_t cont, const char *name, const char *app, int32_t ts,
                   uint64_t *id)
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
    o.ndim = 1;
    o.dims[0] = 8;
    return ckpt_hook_obj_create(h, &o) == 0 && ckpt_hook_cont_add_objs(h, cont, id, 1) == 0 ? 0 : -1;
}

static int put_tag(ckpt_hooks *h, uint64_t owner, const char *name, const char *value)
{
    struct ckpt_kvtag t = {name, 16 /* PDC_STRING */, (uint32_t)strlen(value) + 1, value};
    return ckpt_hook_kvtag_put(h, owner, &t);
}

int main(int argc, char **argv)
{
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    ckpt_hooks *h;
    uint64_t cont, a, b, c;
    char longname[460];
    if (argc != 2) {
        fprintf(stderr, "usage: inspect_names ROOT\n");
        return 2;
    }
    memset(longname, 'a', 447);
    memcpy(longname + 447, "\xc3\xa9z", 4);
    o.store_root = argv[1];
    if (ckpt_hooks_open(&h, &o) != 0) {
        fprintf(stderr, "inspect_names: %s\n", ckpt_errmsg());
        return 1;
    }
    struct ckpt_cont cn = {0, "cont\xfe", ""};
    int rc = ckpt_hook_new_id(&cont, h);
    cn.cont_id = cont;
    if (rc == 0)
        rc = ckpt_hook_cont_create(h, &cn);
    if (rc == 0)
        rc = put_obj(h, cont, "obj\xff\xfe", "app\xc3", 0, &a);
    if (rc == 0)
        rc = put_tag(h, a, "tag\xff", "v\xe9");
    if (rc == 0)
        rc = put_tag(h, a, "caf\xc3\xa9", "\xe2\x82\xac");
    if (rc == 0)
        rc = put_obj(h, cont, "caf\xc3\xa9", "app", 1, &b);
    if (rc == 0)
        rc = put_obj(h, cont, longname, "app", 0, &c);
    if (rc != 0) {
        fprintf(stderr, "inspect_names: %s\n", ckpt_errmsg());
        ckpt_hooks_discard(h);
        return 1;
    }
    if (ckpt_hooks_close(h) != 0) {
        fprintf(stderr, "inspect_names: close: %s\n", ckpt_errmsg());
        return 1;
    }
    printf("%llu\n%llu\n%llu\n%llu\n", (unsigned long long)cont, (unsigned long long)a,
           (unsigned long long)b, (unsigned long long)c);
    return 0;
}
