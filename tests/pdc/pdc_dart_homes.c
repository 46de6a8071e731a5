/* pdc-ckpt-dart-homes: ckpt_pdc_dart_homes (server_hooks/pdc_tables.c, the
 * servers a re-homing gives a DART entry) against PDC's own DART code
 * (dart_core.c in libpdc_commons): for 1..8 servers and 4,000 keys (fixed
 * ones and random bytes 1..255), every replica virtual node of the key's
 * base and alternative virtual node must map to the servers of its replica
 * set as PDC computes them (get_replica_node_ids, get_server_id_by_vnode_id).
 * PDC does not install dart_core.h: its functions are declared here with
 * the DART state as an opaque buffer larger than PDC's struct. Exit 0 if
 * none differs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_hooks.h"
#include "hooks_int.h"

void dart_space_init(void *dart, int num_server);
uint64_t get_base_virtual_node_id_by_string(void *dart, char *str);
uint64_t get_reconciled_vnode_id_with_power_of_two_choice_rehashing_2(void *dart, uint64_t base,
                                                                      char *word, void *cb);
int get_replica_node_ids(void *dart, uint64_t master, int is_physical, uint64_t **out);
uint64_t get_server_id_by_vnode_id(void *dart, uint64_t vnode_id);

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* the distinct servers of replica set reps[0..n), sorted */
static int servers_of(void *d, const uint64_t *reps, int n, int *out)
{
    int m = 0;
    for (int j = 0; j < n; j++) {
        int s = (int)get_server_id_by_vnode_id(d, reps[j]), seen = 0;
        for (int q = 0; q < m; q++)
            seen |= out[q] == s;
        if (!seen)
            out[m++] = s;
    }
    qsort(out, (size_t)m, sizeof *out, cmp_int);
    return m;
}

int main(void)
{
    static const char *fixed[] = {"dkint", "tnidk", "dk000012q", "q210000kd", "a", "ab", "abc",
                                  "abcd", "Zq", "*", "\xc3\xa9t\xc3\xa9", "~~~~~~", "0"};
    static uint64_t dart[512]; /* PDC's DART struct is far smaller */
    long checks = 0, bad = 0;
    srand(7);
    for (int m = 1; m <= 8; m++) {
        memset(dart, 0, sizeof dart);
        dart_space_init(dart, m);
        for (int t = 0; t < 4000; t++) {
            char key[40];
            if (t < (int)(sizeof fixed / sizeof *fixed))
                snprintf(key, sizeof key, "%s", fixed[t]);
            else {
                int n = 1 + rand() % 20;
                for (int i = 0; i < n; i++)
                    key[i] = (char)(1 + rand() % 255);
                key[n] = '\0';
            }
            uint64_t base = get_base_virtual_node_id_by_string(dart, key), *breps, *areps;
            uint64_t alt = get_reconciled_vnode_id_with_power_of_two_choice_rehashing_2(dart, base, key, NULL);
            int nb = get_replica_node_ids(dart, base, 0, &breps);
            int na = get_replica_node_ids(dart, alt, 0, &areps);
            int wb[3], wa[3], nwb = servers_of(dart, breps, nb, wb), nwa = servers_of(dart, areps, na, wa);
            for (int set = 0; set < 2; set++)
                for (int r = 0; r < (set ? na : nb); r++) {
                    struct ckpt_dart_entry e;
                    int homes[3], n, in_base = 0;
                    memset(&e, 0, sizeof e);
                    e.key = key;
                    e.vnode_id = (uint32_t)(set ? areps[r] : breps[r]);
                    for (int j = 0; j < nb; j++)
                        in_base |= breps[j] == e.vnode_id;
                    /* a virtual node of both sets: the function takes the base set */
                    const int *want = in_base ? wb : wa;
                    int nw = in_base ? nwb : nwa;
                    n = ckpt_pdc_dart_homes(&e, m, homes);
                    if (n > 0)
                        qsort(homes, (size_t)n, sizeof *homes, cmp_int);
                    checks++;
                    if (n != nw || memcmp(homes, want, (size_t)nw * sizeof *want) != 0)
                        if (bad++ < 10)
                            printf("FAIL: %d servers, key of %zu bytes, virtual node %u: %d server(s), "
                                   "PDC's DART %d\n", m, strlen(key), e.vnode_id, n, nw);
                }
            free(breps);
            free(areps);
        }
    }
    printf("pdc-ckpt-dart-homes: %ld checks, %ld differ from PDC's DART\n", checks, bad);
    return bad != 0 || checks == 0;
}
