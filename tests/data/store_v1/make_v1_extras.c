/*
 * make_v1_extras.c - the record of how tests/data/store_v1 was made; NOT
 * built. It was compiled against commit 9af389c (store format 1) and run
 * once, after
 *   ckpt-workload write --store tests/data/store_v1/root --objects 40
 *     --tags-per-object 4 --tagged 6 --region-every 4
 * to add the kvtags the workload does not write: a long (hashed) name, raw
 * bytes that fit no type, a boolean array with a byte above 1, an empty
 * value, an unknown type code, and one deleted tag. The expected values are
 * repeated in tests/store/test_store_v1.c.
 *
 *   cc -std=c11 -Iserver_hooks -Istore make_v1_extras.c build/lib/libckpt_hooks.a
 *      build/lib/libckpt_store.a build/lib/libbulki.a -llmdb -lpthread
 */
#include <stdio.h>
#include <string.h>

#include "ckpt_hooks.h"

int main(int argc, char **argv)
{
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    ckpt_hooks *h;
    char longname[501];
    static const uint8_t odd[3] = {1, 2, 3};
    static const uint8_t bools[3] = {0, 1, 2};
    int32_t v = 7;
    const uint64_t obj = 1000000001ull, cont = 1000000000ull;
    if (argc != 2)
        return 2;
    o.store_root = argv[1];
    if (ckpt_hooks_open(&h, &o) != 0)
        return 1;
    memset(longname, 'L', 500);
    longname[500] = 0;
    struct ckpt_kvtag t[] = {
        {longname, 2, 4, &v},        /* PDC_INT under a 500-byte name */
        {"odd", 2, 3, odd},          /* 3 bytes typed PDC_INT: kept raw */
        {"bools", 17, 3, bools},     /* PDC_BOOLEAN with a 2: kept raw */
        {"empty", 16, 0, NULL},      /* no value at all */
        {"badtype", 99, 4, &v},      /* a type code BULKI does not know */
        {"gone", 2, 4, &v},          /* deleted below */
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (ckpt_hook_kvtag_put(h, obj, &t[i]) != 0)
            return 1;
    if (ckpt_hook_kvtag_put(h, cont, &t[1]) != 0 || ckpt_hook_kvtag_delete(h, obj, "gone") != 0)
        return 1;
    return ckpt_hooks_close(h) != 0;
}
