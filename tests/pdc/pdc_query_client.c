/* pdc-ckpt-query: kvtag queries against a real PDC server (PDC's public
 * API, pdc.h, and PDC_Client_query_kvtag) for the `pdc` tests
 * (test_pdc_query.sh) and tools/bench/pdc_bench.sh.
 *
 *   write --objects N --manifest FILE
 *       container qc (with kvtags qs and qi, which PDC's query never
 *       answers: it scans objects only) and objects q<i>, i < N, with the
 *       kvtags of obj_tags(): qs (PDC_STRING), qi (PDC_INT), qu (PDC_UINT64,
 *       values above INT64_MAX), qx (PDC_INT for even i, PDC_UINT64 for odd
 *       i); qs deleted again on every i % 6 == 1, qi deleted and put again
 *       with another value on every i % 6 == 2, no kvtags on i % 11 == 10,
 *       object deleted on every i % 10 == 9. FILE gets "obj NAME ID" and
 *       "deleted NAME ID" lines.
 *   more --objects N --manifest FILE
 *       (after a restart, or on the same server) objects q<N>..q<N+5> with
 *       the kvtags of obj_tags(); then, on objects written before: q3's qs
 *       deleted, q1's qs put again ("blue_new"), q5 deleted (PDCobj_open +
 *       PDCobj_del). FILE gets the new lines.
 *   query --manifest FILE [--wild 1]
 *       runs the queries of `queries` (exact, prefix, suffix and infix
 *       string patterns; exact, less, greater and between on PDC_INT and
 *       PDC_UINT64; a type that does not match; a tag nobody has; queries
 *       that no server answers with any id) and prints one line per query:
 *       "Q<k> NAME TYPE VALUE: COUNT NAMES", the object names (from FILE)
 *       of the ids answered, sorted; an id FILE does not know prints as
 *       "?ID". --wild 1 adds the queries on a tag name pattern ("W" lines).
 *       Each line is what PDC's client answered; the test compares them
 *       between servers.
 *   bench --name TAG --type u64 --value V [--repeat R]
 *       times PDC_Client_query_kvtag(TAG, V) R times after PDCinit (the
 *       first is the first query of the client), prints
 *       "bench-query: n=COUNT first_ms=X rest_median_ms=Y".
 *
 * The exit status is 1 when a PDC call failed, 2 on bad usage. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pdc.h"
#include "pdc_manifest.h"

/* PDC's client library exports it; pdc.h does not declare it. */
perr_t PDC_Client_query_kvtag(const pdc_kvtag_t *kvtag, int *n_res, uint64_t **pdc_ids);

#define MAX_NAME 64
#define U64_BASE UINT64_C(0xF000000000000000)

static int failed;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ---- manifest (pdc_manifest.h): "obj NAME ID" / "deleted NAME ID" ---- */

static const char *manifest_name(const struct manifest *m, uint64_t id)
{
    for (size_t k = m->n; k > 0; k--)
        if (m->e[k - 1].id == id)
            return m->e[k - 1].name;
    return NULL;
}

/* ---- the workload ---- */

static int put(pdcid_t o, const char *name, const char *tag, pdc_var_type_t type, const void *v,
               size_t size)
{
    if (PDCobj_put_tag(o, (char *)tag, (void *)v, type, (psize_t)size) == SUCCEED)
        return 0;
    fprintf(stderr, "pdc-ckpt-query: put %s [%s] failed\n", name, tag);
    failed = 1;
    return -1;
}

static int del(pdcid_t o, const char *name, const char *tag)
{
    if (PDCobj_del_tag(o, (char *)tag) == SUCCEED)
        return 0;
    fprintf(stderr, "pdc-ckpt-query: delete %s [%s] failed\n", name, tag);
    failed = 1;
    return -1;
}

/* The kvtags of object i, with the deletes and re-puts of `write`. */
static void obj_tags(pdcid_t o, const char *name, int i)
{
    static const char *const color[] = {"red", "green", "blue"};
    char s[48];
    int32_t iv = i % 7 - 3, x = i;
    uint64_t uv = U64_BASE + (uint64_t)i, ux = (uint64_t)i;
    if (i % 11 == 10)
        return;
    snprintf(s, sizeof s, "%s_%d", color[i % 3], i);
    put(o, name, "qs", PDC_STRING, s, strlen(s) + 1);
    put(o, name, "qi", PDC_INT, &iv, sizeof iv);
    put(o, name, "qu", PDC_UINT64, &uv, sizeof uv);
    if (i % 2 == 0)
        put(o, name, "qx", PDC_INT, &x, sizeof x);
    else
        put(o, name, "qx", PDC_UINT64, &ux, sizeof ux);
    if (i % 6 == 1)
        del(o, name, "qs");
    if (i % 6 == 2) {
        iv = 100 + i;
        del(o, name, "qi");
        put(o, name, "qi", PDC_INT, &iv, sizeof iv);
    }
}

static int create_objs(pdcid_t cont, pdcid_t oprop, int from, int to, FILE *mf, int with_deletes)
{
    for (int i = from; i < to; i++) {
        char name[MAX_NAME];
        snprintf(name, sizeof name, "q%d", i);
        pdcid_t o = PDCobj_create(cont, name, oprop);
        struct pdc_obj_info *info = o ? PDCobj_get_info(o) : NULL;
        if (info == NULL || info->meta_id == 0) {
            fprintf(stderr, "pdc-ckpt-query: PDCobj_create(%s) failed\n", name);
            return -1;
        }
        uint64_t id = info->meta_id;
        fprintf(mf, "obj %s %" PRIu64 "\n", name, id);
        obj_tags(o, name, i);
        if (with_deletes && i % 10 == 9) {
            if (PDCobj_del(o) != SUCCEED) {
                fprintf(stderr, "pdc-ckpt-query: PDCobj_del(%s) failed\n", name);
                return -1;
            }
            fprintf(mf, "deleted %s %" PRIu64 "\n", name, id);
        }
        PDCobj_close(o);
    }
    return 0;
}

/* write and more: container qc (created, or the existing one) and an
 * object property, the manifest opened with fopen mode `mode` */
struct wsess {
    pdcid_t pdc, cprop, cont, oprop;
    FILE *mf;
};

/* 0, or -1 when the manifest cannot be opened (then nothing else is made)
 * or PDC's setup failed (said on stderr; end it with wsess_end all the
 * same) */
static int wsess_open(struct wsess *w, const char *cmd, const char *manifest, const char *mode)
{
    memset(w, 0, sizeof *w);
    if ((w->mf = fopen(manifest, mode)) == NULL) {
        fprintf(stderr, "pdc-ckpt-query: %s: %s\n", manifest, strerror(errno));
        return -1;
    }
    w->pdc = PDCinit("pdc");
    w->cprop = PDCprop_create(PDC_CONT_CREATE, w->pdc);
    w->cont = PDCcont_create("qc", w->cprop); /* more: the existing container */
    w->oprop = PDCprop_create(PDC_OBJ_CREATE, w->pdc);
    if (w->pdc == 0 || w->cont == 0 || w->oprop == 0) {
        fprintf(stderr, "pdc-ckpt-query: %s: PDC setup failed\n", cmd);
        return -1;
    }
    return 0;
}

/* the exit status: rc, or 1 when the manifest could not be written */
static int wsess_end(struct wsess *w, int rc)
{
    if (w->mf == NULL || fclose(w->mf) != 0)
        rc = 1;
    if (w->mf != NULL) {
        PDCcont_close(w->cont);
        PDCprop_close(w->oprop);
        PDCprop_close(w->cprop);
        PDCclose(w->pdc);
    }
    return rc;
}

static int cmd_write(int n, const char *manifest)
{
    struct wsess w;
    int32_t zero = 0;
    int rc = 1;
    if (wsess_open(&w, "write", manifest, "w") != 0)
        goto done;
    /* container kvtags of the queried names: PDC's query never answers them */
    if (PDCcont_put_tag(w.cont, "qs", "red_0", PDC_STRING, 6) != SUCCEED ||
        PDCcont_put_tag(w.cont, "qi", &zero, PDC_INT, sizeof zero) != SUCCEED) {
        fprintf(stderr, "pdc-ckpt-query: container kvtags failed\n");
        goto done;
    }
    if (create_objs(w.cont, w.oprop, 0, n, w.mf, 1) != 0)
        goto done;
    rc = failed;
    printf("write: %d objects\n", n);
done:
    return wsess_end(&w, rc);
}

static int cmd_more(int n, const char *manifest)
{
    struct wsess w;
    int rc = 1;
    if (wsess_open(&w, "more", manifest, "a") != 0 ||
        create_objs(w.cont, w.oprop, n, n + 6, w.mf, 0) != 0)
        goto done;
    /* objects written before (not in PDC's tables after a map restart until
     * these open them) */
    pdcid_t o1 = PDCobj_open("q1", w.pdc), o3 = PDCobj_open("q3", w.pdc),
            o5 = PDCobj_open("q5", w.pdc);
    if (o1 == 0 || o3 == 0 || o5 == 0) {
        fprintf(stderr, "pdc-ckpt-query: more: PDCobj_open of q1, q3 or q5 failed\n");
        goto done;
    }
    del(o3, "q3", "qs");
    put(o1, "q1", "qs", PDC_STRING, "blue_new", 9);
    uint64_t id5 = PDCobj_get_info(o5)->meta_id;
    if (PDCobj_del(o5) != SUCCEED) {
        fprintf(stderr, "pdc-ckpt-query: PDCobj_del(q5) failed\n");
        goto done;
    }
    fprintf(w.mf, "deleted q5 %" PRIu64 "\n", id5);
    PDCobj_close(o1);
    PDCobj_close(o3);
    PDCobj_close(o5);
    rc = failed;
    printf("more: objects q%d..q%d, q1/q3 retagged, q5 deleted\n", n, n + 5);
done:
    return wsess_end(&w, rc);
}

/* ---- queries ---- */

struct query {
    const char *name;
    pdc_var_type_t type;
    const char *value; /* PDC's query syntax (query_utils.c) */
    int wild;          /* the name is a pattern: faults everything in */
};

/* "17293822569102704645" is U64_BASE + 5. PDC's comparators (libhl
 * comparators.h) return the difference of the two numbers as an int, so
 * numbers that differ by a multiple of 2^32 compare equal: qu == 5 answers
 * q5 too. The store's answers must be PDC's, so that is kept. */
static const struct query queries[] = {
    {"qs", PDC_STRING, "\"red_3\"", 0},
    {"qs", PDC_STRING, "\"red*\"", 0},
    {"qs", PDC_STRING, "\"*1\"", 0},
    {"qs", PDC_STRING, "\"*ee*\"", 0},
    {"qs", PDC_STRING, "\"blue_new\"", 0},
    {"qs", PDC_STRING, "\"purple*\"", 0}, /* no server answers any id */
    {"qi", PDC_INT, "2", 0},
    {"qi", PDC_INT, "~|0", 0},
    {"qi", PDC_INT, "1~", 0},
    {"qi", PDC_INT, "-2|~|1", 0},
    {"qi", PDC_INT, "100|~", 0},
    {"qu", PDC_UINT64, "17293822569102704645", 0},
    {"qu", PDC_UINT64, "17293822569102704650|~", 0},
    {"qu", PDC_UINT64, "~17293822569102704643", 0},
    {"qu", PDC_UINT64, "5", 0}, /* PDC answers q5: its compare keeps 32 bits of the difference */
    {"qu", PDC_UINT64, "4294967295", 0}, /* no server answers any id */
    {"qx", PDC_INT, "0|~", 0},
    {"qx", PDC_UINT64, "0|~", 0},
    {"nosuch", PDC_INT, "0|~", 0},
    {"q*", PDC_UINT64, "0|~", 1},
    {"*s", PDC_STRING, "\"green*\"", 1},
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *type_name(pdc_var_type_t t)
{
    return t == PDC_STRING ? "string" : t == PDC_INT ? "int" : t == PDC_UINT64 ? "u64" : "?";
}

static int run_query(const struct query *q, int *n, uint64_t **ids)
{
    pdc_kvtag_t k;
    k.name = (char *)q->name;
    k.value = (void *)q->value;
    k.type = q->type;
    k.size = (uint32_t)strlen(q->value) + 1;
    *n = 0;
    *ids = NULL;
    return PDC_Client_query_kvtag(&k, n, ids) == SUCCEED ? 0 : -1;
}

static int cmd_query(const char *manifest, int wild)
{
    struct manifest m = {NULL, 0, 0};
    if (manifest_load(&m, "pdc-ckpt-query", manifest) != 0)
        return 1;
    pdcid_t pdc = PDCinit("pdc");
    int rc = pdc == 0;
    for (size_t k = 0; rc == 0 && k < sizeof queries / sizeof queries[0]; k++) {
        const struct query *q = &queries[k];
        int n;
        uint64_t *ids;
        if (q->wild && !wild)
            continue;
        if (run_query(q, &n, &ids) != 0) {
            fprintf(stderr, "pdc-ckpt-query: query %s %s failed\n", q->name, q->value);
            rc = 1;
            break;
        }
        char **names = calloc((size_t)n + 1, sizeof *names);
        if (names == NULL) {
            free(ids);
            rc = 1;
            break;
        }
        for (int i = 0; i < n; i++) {
            const char *s = manifest_name(&m, ids[i]);
            char buf[40];
            if (s == NULL)
                snprintf(buf, sizeof buf, "?%" PRIu64, ids[i]);
            names[i] = strdup(s ? s : buf);
            if (names[i] == NULL)
                rc = 1;
        }
        if (rc == 0) {
            qsort(names, (size_t)n, sizeof *names, cmp_str);
            printf("%c%zu %s %s %s: %d", q->wild ? 'W' : 'Q', k, q->name, type_name(q->type),
                   q->value, n);
            for (int i = 0; i < n; i++)
                printf(" %s", names[i]);
            printf("\n");
        }
        for (int i = 0; i < n; i++)
            free(names[i]);
        free(names);
        free(ids);
    }
    PDCclose(pdc);
    free(m.e);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmd_bench(const char *tag, const char *value, int repeat)
{
    struct query q = {tag, PDC_UINT64, value, 0};
    pdcid_t pdc = PDCinit("pdc");
    double *t = calloc((size_t)repeat, sizeof *t);
    int n0 = -1, rc = pdc == 0 || t == NULL;
    for (int r = 0; rc == 0 && r < repeat; r++) {
        int n;
        uint64_t *ids;
        double t0 = now_ms();
        if (run_query(&q, &n, &ids) != 0) {
            fprintf(stderr, "pdc-ckpt-query: bench query failed\n");
            rc = 1;
            break;
        }
        t[r] = now_ms() - t0;
        free(ids);
        if (n0 >= 0 && n != n0) {
            fprintf(stderr, "pdc-ckpt-query: bench: %d ids, then %d\n", n0, n);
            rc = 1;
        }
        n0 = n;
    }
    if (rc == 0) {
        double first = t[0], rest = first;
        if (repeat > 1) {
            qsort(t + 1, (size_t)repeat - 1, sizeof *t, cmp_double);
            rest = t[1 + (repeat - 1) / 2];
        }
        printf("bench-query: n=%d first_ms=%.3f rest_median_ms=%.3f\n", n0, first, rest);
    }
    free(t);
    if (pdc)
        PDCclose(pdc);
    return rc;
}

/* ---- main ---- */

static void usage(void)
{
    fprintf(stderr, "usage: pdc-ckpt-query write --objects N --manifest FILE\n"
                    "       pdc-ckpt-query more --objects N --manifest FILE\n"
                    "       pdc-ckpt-query query --manifest FILE [--wild 1]\n"
                    "       pdc-ckpt-query bench --name TAG --value V [--repeat R]\n");
}

int main(int argc, char **argv)
{
    long objects = -1, wild = 0, repeat = 1;
    const char *manifest = NULL, *name = NULL, *value = NULL;
    if (argc < 2) {
        usage();
        return 2;
    }
    for (int a = 2; a < argc; a += 2) {
        const char *opt = argv[a], *val = a + 1 < argc ? argv[a + 1] : NULL;
        long *num = NULL;
        const char **str = NULL;
        if (strcmp(opt, "--objects") == 0)
            num = &objects;
        else if (strcmp(opt, "--wild") == 0)
            num = &wild;
        else if (strcmp(opt, "--repeat") == 0)
            num = &repeat;
        else if (strcmp(opt, "--manifest") == 0)
            str = &manifest;
        else if (strcmp(opt, "--name") == 0)
            str = &name;
        else if (strcmp(opt, "--value") == 0)
            str = &value;
        char *end = NULL;
        if (val == NULL || (num == NULL && str == NULL)) {
            usage();
            return 2;
        }
        if (str != NULL) {
            *str = val;
            continue;
        }
        errno = 0;
        *num = strtol(val, &end, 10);
        if (errno != 0 || *end != '\0' || *num < 0 || *num > 100000000) {
            usage();
            return 2;
        }
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "write") == 0 && objects > 0 && manifest)
        return cmd_write((int)objects, manifest);
    if (strcmp(cmd, "more") == 0 && objects > 0 && manifest)
        return cmd_more((int)objects, manifest);
    if (strcmp(cmd, "query") == 0 && manifest)
        return cmd_query(manifest, wild != 0);
    if (strcmp(cmd, "bench") == 0 && name && value && repeat > 0)
        return cmd_bench(name, value, (int)repeat);
    usage();
    return 2;
}
