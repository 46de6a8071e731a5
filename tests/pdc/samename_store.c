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
#include "../inspect/hooks_gen.h"

int main(int argc, char **argv)
{
    ckpt_hooks *h;
    uint64_t cont, id[6];
    static const char *const app[4] = {"appA", "appB", "appA", "appD"};
    static const uint32_t user[4] = {1001, 1001, 1002, 1003};
    static const char *const who[3] = {"A", "B", "C"};
    int rc = gen_open(&h, argc, argv, "samename_store");
    if (rc != 0)
        return rc;
    rc = gen_cont(h, "sc", &cont);
    for (int i = 0; rc == 0 && i < 4; i++) {
        rc = gen_obj(h, cont, "results", app[i], user[i], 0, &id[i]);
        if (rc == 0 && i < 3)
            rc = gen_tag(h, id[i], "who", who[i]);
        /* the server marks the earlier ones when the second arrives, then each new one */
        if (rc == 0 && i == 1)
            rc = ckpt_hook_same_name_put(h, "results", 0, id[0]);
        if (rc == 0 && i >= 1)
            rc = ckpt_hook_same_name_put(h, "results", 0, id[i]);
    }
    if (rc == 0)
        rc = ckpt_hook_obj_delete(h, id[3]);
    if (rc == 0)
        rc = gen_obj(h, cont, "results", "appA", 1001, 1, &id[4]);
    if (rc == 0)
        rc = gen_obj(h, cont, "single", "appA", 1001, 0, &id[5]);
    if (gen_close(h, rc, "samename_store") != 0)
        return 1;
    for (int i = 0; i < 6; i++)
        printf("%llu\n", (unsigned long long)id[i]);
    return 0;
}
