/*
 * srv_check.c - a PDC client (public API, plus PDC_Client_query_kvtag) that
 * checks the patched server across close_server and restart:
 *
 *   srv_check write N T    container c1 with tags, objects o0..o<N-1> in it,
 *                          T int tags t0..t<T-1> each, o0 also a string, a
 *                          double and a uint64 tag; then deletes tag t0 of o1
 *                          and tag "gone" of c1. Prints "id NAME ID" lines.
 *   srv_check read N T [nofresh]  reads all of that back after a restart, checks
 *                          every value and size, answers a kvtag query, and
 *                          creates object "fresh" whose id must be new
 *                          (ids of the write run on stdin as "id NAME ID").
 *   srv_check query 0      kvtag query s == "hello" must answer o0's id alone
 *                          (ids of the write run on stdin).
 *   srv_check lookup NAME TAG  times opening object NAME and getting TAG.
 *   srv_check loop N       puts tags k<i> = i on object "loop" one by one and
 *                          prints "acked i" after each (SIGKILL test).
 *   srv_check loopread M   checks k0..k<M> on "loop" (M: last acked).
 *
 * Prints one line per failed check and exits 1 if any failed.
 * Written for pdc-ckpt's own checks of server_hooks/pdc; the ctest suite of
 * the pdc label lives in tests/pdc/.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pdc.h"

perr_t PDC_Client_query_kvtag(const pdc_kvtag_t *kvtag, int *n_res, uint64_t **pdc_ids);

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL: " __VA_ARGS__);                                                          \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static uint64_t meta_id(pdcid_t obj)
{
    struct pdc_obj_info *info = PDCobj_get_info(obj);
    return info ? info->meta_id : 0;
}

static uint64_t cont_meta_id(const char *name)
{
    struct pdc_cont_info *info = PDCcont_get_info(name);
    return info ? info->meta_id : 0;
}

static int tag_is(pdcid_t id, int is_cont, const char *name, const void *want, size_t want_size)
{
    void *v = NULL;
    pdc_var_type_t type;
    psize_t size = 0;
    perr_t rc = is_cont ? PDCcont_get_tag(id, (char *)name, &v, &type, &size)
                        : PDCobj_get_tag(id, (char *)name, &v, &type, &size);
    if (rc != SUCCEED || v == NULL)
        return 0;
    return size == want_size && memcmp(v, want, want_size) == 0;
}

static int do_write(pdcid_t pdc, int n, int t)
{
    pdcid_t cprop = PDCprop_create(PDC_CONT_CREATE, pdc);
    pdcid_t cont = PDCcont_create("c1", cprop);
    pdcid_t oprop = PDCprop_create(PDC_OBJ_CREATE, pdc);
    int one = 1;
    CHECK(cont > 0, "PDCcont_create c1");
    CHECK(PDCcont_put_tag(cont, "cstr", "container value", PDC_STRING, 16) == SUCCEED, "cont tag");
    CHECK(PDCcont_put_tag(cont, "cint", &one, PDC_INT, sizeof one) == SUCCEED, "cont int tag");
    CHECK(PDCcont_put_tag(cont, "gone", &one, PDC_INT, sizeof one) == SUCCEED, "cont tag gone");
    CHECK(PDCcont_del_tag(cont, "gone") == SUCCEED, "cont del tag");
    printf("id c1 %" PRIu64 "\n", cont_meta_id("c1"));
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "o%d", i);
        pdcid_t obj = PDCobj_create(cont, name, oprop);
        CHECK(obj > 0, "PDCobj_create %s", name);
        printf("id %s %" PRIu64 "\n", name, meta_id(obj));
        for (int j = 0; j < t; j++) {
            char tn[32];
            int v = i * 1000 + j;
            snprintf(tn, sizeof tn, "t%d", j);
            CHECK(PDCobj_put_tag(obj, tn, &v, PDC_INT, sizeof v) == SUCCEED, "put %s.%s", name, tn);
        }
        if (i == 0) {
            double d = 3.25;
            uint64_t u = 18446744073709551615ull;
            CHECK(PDCobj_put_tag(obj, "s", "hello", PDC_STRING, 6) == SUCCEED, "put s");
            CHECK(PDCobj_put_tag(obj, "d", &d, PDC_DOUBLE, sizeof d) == SUCCEED, "put d");
            CHECK(PDCobj_put_tag(obj, "u", &u, PDC_UINT64, sizeof u) == SUCCEED, "put u");
        }
        if (i == 1 && t > 0)
            CHECK(PDCobj_del_tag(obj, "t0") == SUCCEED, "del o1.t0");
        PDCobj_close(obj);
    }
    PDCcont_close(cont);
    PDCprop_close(oprop);
    PDCprop_close(cprop);
    return 0;
}

static int do_read(pdcid_t pdc, int n, int t, int fresh_too)
{
    uint64_t *old = calloc((size_t)n + 1, sizeof *old);
    char line[256], name[64];
    uint64_t id;
    int one = 1;
    while (fgets(line, sizeof line, stdin) != NULL)
        if (sscanf(line, "id %63s %" SCNu64, name, &id) == 2) {
            if (strcmp(name, "c1") == 0)
                old[n] = id;
            else if (name[0] == 'o' && atoi(name + 1) < n)
                old[atoi(name + 1)] = id;
        }
    CHECK(old[0] != 0 && old[n] != 0, "no ids of the write run on stdin");
    pdcid_t cont = PDCcont_open("c1", pdc);
    CHECK(cont > 0, "PDCcont_open c1");
    CHECK(old[n] == 0 || cont_meta_id("c1") == old[n], "c1 id %" PRIu64 " != %" PRIu64,
          cont_meta_id("c1"), old[n]);
    if (cont > 0) {
        CHECK(tag_is(cont, 1, "cstr", "container value", 16), "c1.cstr");
        CHECK(tag_is(cont, 1, "cint", &one, sizeof one), "c1.cint");
    }
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "o%d", i);
        pdcid_t obj = PDCobj_open(name, pdc);
        CHECK(obj > 0, "PDCobj_open %s", name);
        if (obj <= 0)
            continue;
        CHECK(old[i] == 0 || meta_id(obj) == old[i], "%s id %" PRIu64 " != %" PRIu64, name,
              meta_id(obj), old[i]);
        for (int j = (i == 1 ? 1 : 0); j < t; j++) {
            char tn[32];
            int v = i * 1000 + j;
            snprintf(tn, sizeof tn, "t%d", j);
            CHECK(tag_is(obj, 0, tn, &v, sizeof v), "%s.%s != %d", name, tn, v);
        }
        if (i == 0) {
            double d = 3.25;
            uint64_t u = 18446744073709551615ull;
            CHECK(tag_is(obj, 0, "s", "hello", 6), "o0.s");
            CHECK(tag_is(obj, 0, "d", &d, sizeof d), "o0.d");
            CHECK(tag_is(obj, 0, "u", &u, sizeof u), "o0.u");
        }
        PDCobj_close(obj);
    }
    pdcid_t oprop = PDCprop_create(PDC_OBJ_CREATE, pdc);
    pdcid_t fresh = fresh_too ? PDCobj_create(cont, "fresh", oprop) : 0;
    CHECK(!fresh_too || fresh > 0, "create fresh");
    if (fresh > 0) {
        uint64_t fid = meta_id(fresh);
        printf("id fresh %" PRIu64 "\n", fid);
        for (int i = 0; i <= n; i++)
            CHECK(fid != old[i], "fresh id %" PRIu64 " repeats a restored id", fid);
        PDCobj_close(fresh);
    }
    PDCprop_close(oprop);
    if (cont > 0)
        PDCcont_close(cont);
    free(old);
    return 0;
}

/* kvtag query (PDC scans its tables; this PDC compares query values as
 * strings): s == "hello" is object o0 only */
static int do_query(void)
{
    int nres = 0;
    uint64_t *ids = NULL;
    pdc_kvtag_t q = {"s", 6, PDC_STRING, "hello"};
    uint64_t o0 = 0;
    char line[256], name[64];
    uint64_t id;
    while (fgets(line, sizeof line, stdin) != NULL)
        if (sscanf(line, "id %63s %" SCNu64, name, &id) == 2 && strcmp(name, "o0") == 0)
            o0 = id;
    CHECK(o0 != 0, "no id of o0 on stdin");
    CHECK(PDC_Client_query_kvtag(&q, &nres, &ids) == SUCCEED, "query s");
    CHECK(nres == 1 && ids && ids[0] == o0, "query s=hello: %d results, first %" PRIu64
          " (o0 is %" PRIu64 ")", nres, nres > 0 && ids ? ids[0] : 0, o0);
    return 0;
}

/* Time the first lookup: open object NAME and get its tag TAG. */
static int do_lookup(pdcid_t pdc, const char *name, const char *tag)
{
    struct timespec t0, t1;
    void *v = NULL;
    pdc_var_type_t type;
    psize_t size = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pdcid_t obj = PDCobj_open(name, pdc);
    perr_t rc = obj > 0 ? PDCobj_get_tag(obj, (char *)tag, &v, &type, &size) : FAIL;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK(obj > 0, "open %s", name);
    CHECK(rc == SUCCEED && v != NULL && size > 0, "%s.%s", name, tag);
    printf("lookup_ms %.3f (%s.%s, %u bytes)\n",
           (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6, name, tag,
           (unsigned)size);
    if (obj > 0)
        PDCobj_close(obj);
    return 0;
}

static int do_loop(pdcid_t pdc, int n)
{
    pdcid_t cprop = PDCprop_create(PDC_CONT_CREATE, pdc);
    pdcid_t cont = PDCcont_create("cl", cprop);
    pdcid_t oprop = PDCprop_create(PDC_OBJ_CREATE, pdc);
    pdcid_t obj = PDCobj_create(cont, "loop", oprop);
    CHECK(obj > 0, "create loop");
    for (int i = 0; i < n && obj > 0; i++) {
        char tn[32];
        snprintf(tn, sizeof tn, "k%d", i);
        if (PDCobj_put_tag(obj, tn, &i, PDC_INT, sizeof i) != SUCCEED)
            break;
        printf("acked %d\n", i);
        fflush(stdout);
    }
    return 0;
}

static int do_loopread(pdcid_t pdc, int m)
{
    pdcid_t obj = PDCobj_open("loop", pdc);
    CHECK(obj > 0, "open loop");
    for (int i = 0; i <= m && obj > 0; i++) {
        char tn[32];
        snprintf(tn, sizeof tn, "k%d", i);
        CHECK(tag_is(obj, 0, tn, &i, sizeof i), "loop.%s missing", tn);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: srv_check write|read N T | query 0 | lookup NAME TAG | loop N | loopread M\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    pdcid_t pdc = PDCinit("pdc");
    int n = atoi(argv[2]), t = argc > 3 ? atoi(argv[3]) : 0;
    if (strcmp(argv[1], "write") == 0)
        do_write(pdc, n, t);
    else if (strcmp(argv[1], "read") == 0)
        do_read(pdc, n, t, !(argc > 4 && strcmp(argv[4], "nofresh") == 0));
    else if (strcmp(argv[1], "query") == 0)
        do_query();
    else if (strcmp(argv[1], "lookup") == 0 && argc > 3)
        do_lookup(pdc, argv[2], argv[3]);
    else if (strcmp(argv[1], "loop") == 0)
        do_loop(pdc, n);
    else if (strcmp(argv[1], "loopread") == 0)
        do_loopread(pdc, n);
    PDCclose(pdc);
    printf("srv_check %s: %d check(s) failed\n", argv[1], failures);
    return failures ? 1 : 0;
}
