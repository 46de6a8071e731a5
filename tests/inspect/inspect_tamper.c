/*
 * inspect_tamper - damages a store on purpose, through the store API, for
 * the ckpt-inspect verify tests. Opens rank RANK writable (the store must
 * not be open for writing elsewhere), stages one raw put, closes.
 *
 *   inspect_tamper ROOT RANK garbage-obj
 *       overwrite the record of the rank's first object with bytes that
 *       are not BULKI; prints the object's id
 *   inspect_tamper ROOT RANK dangling-name NAME ID
 *       add obj_name["NAME", time step 0] -> ID (an id of no object)
 *   inspect_tamper ROOT RANK orphan-tag-index NAME OWNER
 *       add kvtag_name["NAME", OWNER] with no kvtag behind it
 *   inspect_tamper ROOT RANK id-home ID HOME
 *       set id_home[ID] = HOME (the id directory of re-homed stores)
 *
 * Exit 0 on success, 1 on failure (message on stderr), 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_store.h"

static int first_key(const ckpt_val *k, const ckpt_val *v, void *p)
{
    (void)v;
    memcpy(p, k->data, 8);
    return 1; /* stop */
}

int main(int argc, char **argv)
{
    struct ckpt_store_opts o = CKPT_STORE_OPTS_INIT;
    struct ckpt_store_info info;
    ckpt_store *st;
    ckpt_rtxn *tx;
    uint8_t key[CKPT_NAMEKEY_MAX + 8], id8[8];
    size_t n;
    int rc;

    if (argc < 4) {
        fprintf(stderr, "usage: inspect_tamper ROOT RANK garbage-obj | dangling-name NAME ID |"
                        " orphan-tag-index NAME OWNER | id-home ID HOME\n");
        return 2;
    }
    o.root = argv[1];
    o.rank = atoi(argv[2]);
    /* nranks as the store says, so that the writable open's rank check passes */
    o.readonly = 1;
    o.create = 0;
    if ((rc = ckpt_store_open(&st, &o)) != 0 || (rc = ckpt_store_info(&info, st)) != 0) {
        fprintf(stderr, "inspect_tamper: %s\n", ckpt_errmsg());
        return 1;
    }
    if (strcmp(argv[3], "garbage-obj") == 0) {
        if ((rc = ckpt_rtxn_begin(&tx, st)) != 0) {
            fprintf(stderr, "inspect_tamper: %s\n", ckpt_errmsg());
            ckpt_store_close(st);
            return 1;
        }
        rc = ckpt_iter(tx, CKPT_DB_OBJ, NULL, 0, first_key, id8);
        ckpt_rtxn_end(tx);
        if (rc != 1) {
            fprintf(stderr, "inspect_tamper: no object on rank %d\n", o.rank);
            ckpt_store_close(st);
            return 1;
        }
    }
    ckpt_store_close(st);

    o.readonly = 0;
    o.nranks = info.nranks;
    if ((rc = ckpt_store_open(&st, &o)) != 0) {
        fprintf(stderr, "inspect_tamper: %s\n", ckpt_errmsg());
        return 1;
    }
    if (strcmp(argv[3], "garbage-obj") == 0 && argc == 4) {
        static const uint8_t junk[] = {0xff, 0x00, 'n', 'o', 't', ' ', 'b', 'u', 'l', 'k', 'i'};
        rc = ckpt_store_put_raw(st, CKPT_DB_OBJ, id8, 8, junk, sizeof junk);
        printf("%llu\n", (unsigned long long)ckpt_key_get_u64(id8));
    } else if (strcmp(argv[3], "dangling-name") == 0 && argc == 6) {
        n = ckpt_key_name(key, argv[4], strlen(argv[4]));
        ckpt_key_i32(key + n, 0);
        ckpt_key_u64(id8, strtoull(argv[5], NULL, 10));
        rc = ckpt_store_put_raw(st, CKPT_DB_OBJ_NAME, key, n + 4, id8, 8);
    } else if (strcmp(argv[3], "orphan-tag-index") == 0 && argc == 6) {
        n = ckpt_key_name(key, argv[4], strlen(argv[4]));
        ckpt_key_u64(key + n, strtoull(argv[5], NULL, 10));
        rc = ckpt_store_put_raw(st, CKPT_DB_TAG_INDEX, key, n + 8, "", 0);
    } else if (strcmp(argv[3], "id-home") == 0 && argc == 6) {
        uint32_t home = (uint32_t)strtoul(argv[5], NULL, 10);
        uint8_t h[4] = {(uint8_t)(home >> 24), (uint8_t)(home >> 16), (uint8_t)(home >> 8),
                        (uint8_t)home};
        ckpt_key_u64(id8, strtoull(argv[4], NULL, 10));
        rc = ckpt_store_put_raw(st, CKPT_DB_ID_HOME, id8, 8, h, 4);
    } else {
        ckpt_store_discard(st);
        fprintf(stderr, "inspect_tamper: bad arguments\n");
        return 2;
    }
    if (rc != 0) {
        fprintf(stderr, "inspect_tamper: %s\n", ckpt_errmsg());
        ckpt_store_discard(st);
        return 1;
    }
    if (ckpt_store_close(st) != 0) {
        fprintf(stderr, "inspect_tamper: %s\n", ckpt_errmsg());
        return 1;
    }
    return 0;
}
