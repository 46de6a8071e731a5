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
#include <string.h>

#include "hooks_gen.h"

/* an object as PDC's create makes it, a member of cont */
static int put_obj(ckpt_hooks *h, uint64_t cont, const char *name, const char *app, int32_t ts,
                   uint64_t *id)
{
    int rc = gen_obj(h, cont, name, app, 0, ts, id);
    return rc != 0 ? rc : ckpt_hook_cont_add_objs(h, cont, id, 1);
}

int main(int argc, char **argv)
{
    ckpt_hooks *h;
    uint64_t cont, a, b, c;
    char longname[460];
    int rc = gen_open(&h, argc, argv, "inspect_names");
    if (rc != 0)
        return rc;
    memset(longname, 'a', 447);
    memcpy(longname + 447, "\xc3\xa9z", 4);
    rc = gen_cont(h, "cont\xfe", &cont);
    if (rc == 0)
        rc = put_obj(h, cont, "obj\xff\xfe", "app\xc3", 0, &a);
    if (rc == 0)
        rc = gen_tag(h, a, "tag\xff", "v\xe9");
    if (rc == 0)
        rc = gen_tag(h, a, "caf\xc3\xa9", "\xe2\x82\xac");
    if (rc == 0)
        rc = put_obj(h, cont, "caf\xc3\xa9", "app", 1, &b);
    if (rc == 0)
        rc = put_obj(h, cont, longname, "app", 0, &c);
    if (gen_close(h, rc, "inspect_names") != 0)
        return 1;
    printf("%llu\n%llu\n%llu\n%llu\n", (unsigned long long)cont, (unsigned long long)a,
           (unsigned long long)b, (unsigned long long)c);
    return 0;
}
