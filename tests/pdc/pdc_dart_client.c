/* pdc-ckpt-dart: a DART (IDIOMS) client of a real PDC server, for the
 * `pdc` DART tests (test_pdc_dart.sh) and the PDC benchmark
 * (tools/bench/pdc_bench.sh dart). PDC's public API plus its DART client
 * calls, which libpdc exports but does not declare in an installed header.
 *
 * Record k: string key "dk<k>q" (6 digits) = the same string (PDC_STRING)
 * and, unless --strings-only, key "dkint" = k (PDC_INT64), both referring
 * to object DATA(k) = 7000000 + k. The live records are kept in a state
 * file (one k per line), so that each command knows what must be found.
 *
 *   insert  --state F --from A --to B [--strings-only]
 *       insert records A..B-1 and add them to F
 *   delete  --state F --from A --to B --step S
 *       delete the records k in A..B-1 with k % S == 0 and drop them from F
 *   answers --state F --universe U --out FILE
 *       exact (string and integer, for k = 0, U/10+1, ...), prefix
 *       (dk0000*: k < 100), suffix (*5q), integer range (dkint=20|~|60)
 *       searches: each must answer exactly the live records of F it
 *       selects; the sorted answers go to FILE, one line per search, for
 *       comparison with another server's (the warm one before close)
 *   time    --query Q --reps R
 *       the first search Q of this client, then R more: prints
 *       "first_ms=X median_ms=Y n=Z"
 * Exit status 0 if every check passed.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pdc.h"

perr_t PDC_Client_insert_obj_ref_into_dart(int hash_algo, char *attr_key, void *attr_val,
                                           size_t attr_vsize, pdc_c_var_type_t attr_vtype,
                                           int ref_type, uint64_t data);
perr_t PDC_Client_delete_obj_ref_from_dart(int hash_algo, char *attr_key, void *attr_val,
                                           size_t attr_vsize, pdc_c_var_type_t attr_vtype,
                                           int ref_type, uint64_t data);
perr_t PDC_Client_search_obj_ref_through_dart(int hash_algo, char *query_string, int ref_type,
                                              int *n_res, uint64_t **out);
enum { DART_HASH_ALGO = 3 /* DART_HASH */, DART_REF = 1 /* REF_PRIMARY_ID */, KMAX = 1000000 };
#define DATA(k) (UINT64_C(7000000) + (uint64_t)(k))

static int passes, failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond)                                                                                  \
            passes++;                                                                              \
        else {                                                                                     \
            failures++;                                                                            \
            printf("FAIL: " __VA_ARGS__);                                                          \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

static unsigned char *live; /* live[k]: record k is in the index */

static void state_load(const char *path)
{
    FILE *f = fopen(path, "r");
    long k;
    live = calloc(KMAX, 1);
    if (live == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    if (f == NULL)
        return; /* no records yet */
    while (fscanf(f, "%ld", &k) == 1)
        if (k >= 0 && k < KMAX)
            live[k] = 1;
    fclose(f);
}

static int state_save(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    for (long k = 0; k < KMAX; k++)
        if (live[k])
            fprintf(f, "%ld\n", k);
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        return -1;
    return 0;
}

static int dart_op(int insert, long k, int strings_only)
{
    char s[32];
    int64_t v = k;
    snprintf(s, sizeof s, "dk%06ldq", k);
    perr_t (*op)(int, char *, void *, size_t, pdc_c_var_type_t, int, uint64_t) =
        insert ? PDC_Client_insert_obj_ref_into_dart : PDC_Client_delete_obj_ref_from_dart;
    int ok = op(DART_HASH_ALGO, s, s, strlen(s) + 1, PDC_STRING, DART_REF, DATA(k)) >= 0;
    if (ok && !strings_only)
        ok = op(DART_HASH_ALGO, "dkint", &v, sizeof v, PDC_INT64, DART_REF, DATA(k)) >= 0;
    CHECK(ok, "DART %s of record %ld", insert ? "insert" : "delete", k);
    return ok;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* search q: its answers, sorted, into *out (n of them); -1 if it failed */
static int search(const char *q, uint64_t **out, int *n)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", q);
    *out = NULL;
    *n = 0;
    if (PDC_Client_search_obj_ref_through_dart(DART_HASH_ALGO, buf, DART_REF, n, out) < 0)
        return -1;
    if (*n > 0 && *out != NULL)
        qsort(*out, (size_t)*n, sizeof **out, cmp_u64);
    return 0;
}

typedef int (*select_fn)(long k, long arg);
static int sel_one(long k, long arg) { return k == arg; }
static int sel_prefix(long k, long arg) { (void)arg; return k < 100; }
static int sel_suffix(long k, long arg) { (void)arg; return k % 10 == 5; }
static int sel_range(long k, long arg) { (void)arg; return k >= 20 && k <= 60; }

/* search q: it must answer exactly the live records sel selects; its
 * answers go to f */
static void expect(FILE *f, const char *q, select_fn sel, long arg, long universe)
{
    uint64_t *out;
    int n, m = 0, same;
    if (search(q, &out, &n) != 0) {
        CHECK(0, "DART search %s failed", q);
        fprintf(f, "%s: failed\n", q);
        return;
    }
    same = 1;
    for (long k = 0; k < universe; k++)
        if (live[k] && sel(k, arg)) {
            if (m >= n || out[m] != DATA(k))
                same = 0;
            m++;
        }
    CHECK(same && m == n, "DART search %s answered %d record(s), expected %d%s", q, n, m,
          same ? "" : " (others)");
    fprintf(f, "%s:", q);
    for (int j = 0; j < n; j++)
        fprintf(f, " %" PRIu64, out[j]);
    fprintf(f, "\n");
    free(out);
}

static int cmd_answers(long universe, const char *outpath, int strings_only)
{
    FILE *f = fopen(outpath, "w");
    char q[96];
    if (f == NULL) {
        perror(outpath);
        return 1;
    }
    for (long k = 0; k < universe; k += universe / 10 + 1) {
        snprintf(q, sizeof q, "dk%06ldq=\"dk%06ldq\"", k, k);
        expect(f, q, sel_one, k, universe);
        if (!strings_only) {
            snprintf(q, sizeof q, "dkint=%ld", k);
            expect(f, q, sel_one, k, universe);
        }
    }
    expect(f, "dk0000*=\"dk0000*\"", sel_prefix, 0, universe);
    expect(f, "*5q=\"*5q\"", sel_suffix, 0, universe);
    if (!strings_only)
        expect(f, "dkint=20|~|60", sel_range, 0, universe);
    fclose(f);
    return 0;
}

static int cmd_time(const char *q, long reps)
{
    uint64_t *out;
    int n;
    double t0 = now_ms(), first, *ts = calloc((size_t)reps + 1, sizeof *ts);
    if (ts == NULL || search(q, &out, &n) != 0) {
        CHECK(0, "DART search %s failed", q);
        free(ts);
        return 1;
    }
    first = now_ms() - t0;
    free(out);
    for (long r = 0; r < reps; r++) {
        int m;
        t0 = now_ms();
        if (search(q, &out, &m) != 0)
            CHECK(0, "DART search %s failed", q);
        ts[r] = now_ms() - t0;
        free(out);
    }
    for (long i = 1; i < reps; i++) /* insertion sort: a handful */
        for (long j = i; j > 0 && ts[j] < ts[j - 1]; j--) {
            double t = ts[j];
            ts[j] = ts[j - 1];
            ts[j - 1] = t;
        }
    printf("first_ms=%.3f median_ms=%.3f n=%d\n", first, reps > 0 ? ts[reps / 2] : first, n);
    free(ts);
    return 0;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "", *state = NULL, *out = NULL, *query = NULL;
    long from = -1, to = -1, step = 1, universe = -1, reps = 5;
    int strings_only = 0, rc = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--strings-only") == 0) {
            strings_only = 1;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "pdc-ckpt-dart: %s needs a value\n", a);
            return 2;
        }
        i++;
        if (strcmp(a, "--state") == 0)
            state = v;
        else if (strcmp(a, "--out") == 0)
            out = v;
        else if (strcmp(a, "--query") == 0)
            query = v;
        else if (strcmp(a, "--from") == 0)
            from = strtol(v, NULL, 10);
        else if (strcmp(a, "--to") == 0)
            to = strtol(v, NULL, 10);
        else if (strcmp(a, "--step") == 0)
            step = strtol(v, NULL, 10);
        else if (strcmp(a, "--universe") == 0)
            universe = strtol(v, NULL, 10);
        else if (strcmp(a, "--reps") == 0)
            reps = strtol(v, NULL, 10);
        else {
            fprintf(stderr, "pdc-ckpt-dart: unknown option %s\n", a);
            return 2;
        }
    }
    int is_time = strcmp(cmd, "time") == 0;
    if ((!is_time && state == NULL) || (is_time && query == NULL) || step < 1 || reps < 0 ||
        ((strcmp(cmd, "insert") == 0 || strcmp(cmd, "delete") == 0) &&
         (from < 0 || to < from || to > KMAX)) ||
        (strcmp(cmd, "answers") == 0 && (out == NULL || universe < 1 || universe > KMAX))) {
        fprintf(stderr, "usage: pdc-ckpt-dart insert --state F --from A --to B [--strings-only]\n"
                        "       pdc-ckpt-dart delete --state F --from A --to B --step S\n"
                        "       pdc-ckpt-dart answers --state F --universe U --out FILE [--strings-only]\n"
                        "       pdc-ckpt-dart time --query Q [--reps R]\n");
        return 2;
    }
    if (state != NULL)
        state_load(state);
    pdcid_t pdc = PDCinit("pdc");
    CHECK(pdc != 0, "PDCinit");
    if (pdc == 0)
        return 1;
    if (strcmp(cmd, "insert") == 0 || strcmp(cmd, "delete") == 0) {
        int insert = cmd[0] == 'i';
        for (long k = from; k < to; k++) {
            if (!insert && k % step != 0)
                continue;
            if (!dart_op(insert, k, strings_only))
                break;
            live[k] = (unsigned char)insert;
            /* acknowledged: in the state at once, for a kill test */
        }
        if (state_save(state) != 0)
            CHECK(0, "writing the state file %s", state);
    }
    else if (strcmp(cmd, "answers") == 0)
        rc = cmd_answers(universe, out, strings_only);
    else if (is_time)
        rc = cmd_time(query, reps);
    else {
        fprintf(stderr, "pdc-ckpt-dart: unknown command %s\n", cmd);
        rc = 2;
    }
    PDCclose(pdc);
    free(live);
    printf("pdc-ckpt-dart %s: %d check(s) passed, %d failed\n", cmd, passes, failures);
    return rc ? rc : failures ? 1 : 0;
}
