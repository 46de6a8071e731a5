/*
 * test_model.c - the model PDC server with hooks: a mixed workload, close,
 * then a rebuild restart gives a model equal to the original (and the
 * rebuilt server keeps logging); a map restart finds every object by id and
 * by name with equal fields; model_equal() notices differences and says
 * which.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bulki.h"
#include "hooks_test_util.h"
#include "model_server.h"

enum { NCONT = 4, NTAG = 6, NCTAG = 2, NGEOM = 4 };

/* What the workload did, to know what the store must hold. */
struct wl {
    int nobj;
    uint64_t *ids;
    char (*names)[48];
    int32_t *ts;
    int *dead;
    unsigned *tagmask;     /* kvtags t0..t5 of each object */
    unsigned *regmask;     /* region geometries 0..3 of each object */
    unsigned char (*member)[NCONT];
    uint64_t conts[NCONT];
    int cont_dead[NCONT];
    unsigned ctagmask[NCONT];
    uint64_t seed;
};

static void wl_init(struct wl *w, int nobj, uint64_t seed)
{
    memset(w, 0, sizeof *w);
    w->nobj = nobj;
    w->seed = seed;
    w->ids = calloc((size_t)nobj, sizeof *w->ids);
    w->names = calloc((size_t)nobj, sizeof *w->names);
    w->ts = calloc((size_t)nobj, sizeof *w->ts);
    w->dead = calloc((size_t)nobj, sizeof *w->dead);
    w->tagmask = calloc((size_t)nobj, sizeof *w->tagmask);
    w->regmask = calloc((size_t)nobj, sizeof *w->regmask);
    w->member = calloc((size_t)nobj, sizeof *w->member);
    assert_true(w->ids && w->names && w->ts && w->dead && w->tagmask && w->regmask && w->member);
}

static void wl_free(struct wl *w)
{
    free(w->ids);
    free(w->names);
    free(w->ts);
    free(w->dead);
    free(w->tagmask);
    free(w->regmask);
    free(w->member);
}

static unsigned popcount(unsigned x)
{
    unsigned n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

static struct ckpt_rebuild_stats wl_expect(const struct wl *w)
{
    struct ckpt_rebuild_stats s = {0, 0, 0, 0, 0};
    for (int c = 0; c < NCONT; c++)
        if (!w->cont_dead[c]) {
            s.conts++;
            s.kvtags += popcount(w->ctagmask[c]);
        }
    for (int i = 0; i < w->nobj; i++) {
        for (int c = 0; c < NCONT; c++)
            s.members += w->member[i][c];
        if (w->dead[i])
            continue;
        s.objs++;
        s.kvtags += popcount(w->tagmask[i]);
        s.regions += popcount(w->regmask[i]);
    }
    return s;
}

/* ---- the workload's mutations ---- */

static void put_tag(model_server *m, struct wl *w, int i, int k, unsigned version)
{
    char name[16];
    snprintf(name, sizeof name, "t%d", k);
    int32_t iv = (int32_t)(i * 100 + k + (int)version);
    double dv = i * 0.25 + version;
    char sv[40];
    int32_t arr[4];
    uint8_t raw[6], b2 = 2;
    struct ckpt_kvtag t = {name, 0, 0, NULL};
    switch (k) {
    case 0:
        t.type = BULKI_T_INT, t.size = 4, t.value = &iv;
        break;
    case 1:
        t.type = BULKI_T_DOUBLE, t.size = 8, t.value = &dv;
        break;
    case 2:
        snprintf(sv, sizeof sv, "value-%d-v%u", i, version);
        t.type = BULKI_T_STRING, t.size = (uint32_t)strlen(sv) + 1, t.value = sv;
        break;
    case 3:
        for (int j = 0; j < 4; j++)
            arr[j] = i * j - (int)version;
        t.type = BULKI_T_INT, t.size = 4u * (uint32_t)(1 + i % 4), t.value = arr;
        break;
    case 4:
        for (int j = 0; j < 6; j++)
            raw[j] = (uint8_t)(i + j + version);
        t.type = BULKI_T_INT, t.size = 6, t.value = raw; /* not a multiple of 4 */
        break;
    default:
        t.type = BULKI_T_BOOLEAN, t.size = 1, t.value = &b2;
        break;
    }
    HTU_OK(model_kvtag_put(m, w->ids[i], &t));
    w->tagmask[i] |= 1u << k;
}

static void put_region(model_server *m, struct wl *w, int i, int k, unsigned version)
{
    struct ckpt_region g;
    double range[2 * 6];
    uint64_t bins[6];
    memset(&g, 0, sizeof g);
    g.obj_id = w->ids[i];
    g.ndim = (uint32_t)k + 1;
    for (uint32_t d = 0; d < g.ndim; d++) {
        g.start[d] = (uint64_t)i * 10 + d;
        g.count[d] = (uint64_t)k + d + 1;
    }
    g.data_size = 1000u * (unsigned)i + version;
    g.unit_size = 8;
    g.data_loc_type = k % 3;
    g.storage_location = version ? "/data/v2" : "/data/v1";
    g.offset = (uint64_t)i << 12;
    g.cache_location = (i + k) % 3 ? "" : "/dev/shm/c";
    g.cache_offset = (uint64_t)k;
    if ((i + k + (int)version) % 2 == 0) {
        int32_t nb = 1 + i % 6;
        for (int b = 0; b < nb; b++) {
            range[2 * b] = b * 1.5 - i;
            range[2 * b + 1] = (b + 1) * 1.5 - i;
            bins[b] = (uint64_t)(i * 7 + b) + version;
        }
        g.has_hist = 1;
        g.hist.dtype = BULKI_T_DOUBLE;
        g.hist.nbin = nb;
        g.hist.range = range;
        g.hist.bin = bins;
        g.hist.incr = 1.5;
    }
    HTU_OK(model_region_put(m, &g));
    w->regmask[i] |= 1u << k;
}

static void create_obj(model_server *m, struct wl *w, int i)
{
    struct ckpt_obj o;
    int c = i % NCONT;
    memset(&o, 0, sizeof o);
    snprintf(w->names[i], sizeof w->names[i], "/cont-%d/obj-%05d", c, i);
    w->ts[i] = i % 5 - 1; /* includes a negative time step */
    o.obj_id = 0;         /* the model asks for a new id */
    o.cont_id = w->conts[c];
    o.obj_name = w->names[i];
    o.app_name = i % 3 ? "vpic" : "";
    o.data_location = i % 2 ? "/lustre/x" : "";
    o.tags = i % 4 ? "" : "legacy=1";
    o.time_step = w->ts[i];
    o.user_id = 1000 + i % 7;
    o.data_type = 1 + i % 14;
    o.transform_state = i % 2;
    o.create_time = 1700000000000ll + i;
    o.last_modified_time = o.create_time + 5;
    o.data_server_id = (uint32_t)(i % 3);
    o.region_partition = (uint8_t)(i % 4);
    o.consistency = (uint8_t)(i % 2);
    o.ndim = (uint32_t)(i % (CKPT_MAX_DIM + 1));
    for (uint32_t d = 0; d < o.ndim; d++)
        o.dims[d] = (uint64_t)(tu_rand(&w->seed) % 100000) + 1;
    HTU_OK(model_obj_create(m, &o, &w->ids[i]));
    assert_true(w->ids[i] != 0);
    HTU_OK(model_cont_add(m, w->conts[c], &w->ids[i], 1));
    w->member[i][c] = 1;
}

static void delete_obj(model_server *m, struct wl *w, int i)
{
    HTU_OK(model_obj_delete(m, w->ids[i]));
    w->dead[i] = 1;
    w->tagmask[i] = 0;
    w->regmask[i] = 0;
    /* the object leaves its own container (cont_id), as the store does */
    w->member[i][i % NCONT] = 0;
}

/* A mixed workload; the same seed gives the same mutations. */
static void run_workload(model_server *m, struct wl *w)
{
    for (int c = 0; c < NCONT; c++) {
        char name[16];
        snprintf(name, sizeof name, "/cont-%d", c);
        HTU_OK(model_cont_create(m, name, &w->conts[c]));
        for (int k = 0; k < NCTAG; k++) {
            char tn[16], tv[24];
            snprintf(tn, sizeof tn, "ct%d", k);
            snprintf(tv, sizeof tv, "cont%d", c);
            struct ckpt_kvtag t = {tn, BULKI_T_STRING, (uint32_t)strlen(tv) + 1, tv};
            HTU_OK(model_kvtag_put(m, w->conts[c], &t));
            w->ctagmask[c] |= 1u << k;
        }
    }
    for (int i = 0; i < w->nobj; i++) {
        create_obj(m, w, i);
        for (int k = 0; k < NTAG; k++)
            if (tu_rand(&w->seed) % 3 != 0)
                put_tag(m, w, i, k, 0);
        for (int k = 0; k < NGEOM; k++)
            if (tu_rand(&w->seed) % 2 == 0)
                put_region(m, w, i, k, 0);
    }
    /* replace some tags and regions (same name / same geometry) */
    for (int n = 0; n < w->nobj / 5; n++) {
        int i = (int)(tu_rand(&w->seed) % (uint64_t)w->nobj);
        put_tag(m, w, i, (int)(tu_rand(&w->seed) % NTAG), 1);
        put_region(m, w, i, (int)(tu_rand(&w->seed) % NGEOM), 1);
    }
    /* cross memberships: objects added to a second container */
    for (int i = 1; i < w->nobj; i += 9) {
        int c = (i + 1) % NCONT;
        HTU_OK(model_cont_add(m, w->conts[c], &w->ids[i], 1));
        w->member[i][c] = 1;
    }
    /* delete some tags */
    for (int i = 0; i < w->nobj; i += 4)
        for (int k = 0; k < NTAG; k += 2)
            if (w->tagmask[i] & (1u << k)) {
                char name[16];
                snprintf(name, sizeof name, "t%d", k);
                HTU_OK(model_kvtag_delete(m, w->ids[i], name));
                w->tagmask[i] &= ~(1u << k);
            }
    HTU_OK(model_kvtag_delete(m, w->conts[1], "ct0"));
    w->ctagmask[1] &= ~1u;
    /* remove some objects from their containers */
    for (int i = 2; i < w->nobj; i += 11) {
        int c = i % NCONT;
        HTU_OK(model_cont_remove(m, w->conts[c], &w->ids[i], 1));
        w->member[i][c] = 0;
    }
    /* delete some objects (with their tags and regions) */
    for (int i = 3; i < w->nobj; i += 10)
        delete_obj(m, w, i);
    /* delete a container: its member list and tags go, its objects stay */
    HTU_OK(model_cont_delete(m, w->conts[3]));
    w->cont_dead[3] = 1;
    w->ctagmask[3] = 0;
    for (int i = 0; i < w->nobj; i++)
        w->member[i][3] = 0;
}

static struct ckpt_hooks_opts model_opts(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    o.rank = 1;
    o.nranks = 2;
    o.commit_every = 16;
    o.commit_ms = 20;
    o.map_size = (size_t)1 << 20; /* grows during the workload */
    return o;
}

static void assert_equal_models(model_server *a, model_server *b)
{
    char why[256] = "";
    if (!model_equal(a, b, why, sizeof why))
        fail_msg("models differ: %s", why);
}

/* Every live object of the workload is found by id and by (name, ts) in a
 * map restart, with the model's fields and tags; deleted ones are not. */
static void check_map(void **state, model_server *m, const struct wl *w)
{
    struct ckpt_hooks_opts o = model_opts(state);
    ckpt_hooks *h;
    ckpt_hooks_read *r;
    HTU_OK(ckpt_hooks_restart_map(&h, &o));
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    for (int i = 0; i < w->nobj; i++) {
        struct ckpt_obj got;
        if (w->dead[i]) {
            HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_obj(&got, r, w->ids[i]));
            HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_obj_by_name(&got, r, w->names[i], w->ts[i]));
            assert_null(model_find_obj(m, w->ids[i]));
            continue;
        }
        const struct ckpt_obj *mo = model_find_obj(m, w->ids[i]);
        assert_non_null(mo);
        assert_ptr_equal(mo, model_find_obj_by_name(m, w->names[i], w->ts[i]));
        HTU_OK(ckpt_hooks_get_obj(&got, r, w->ids[i]));
        htu_assert_obj_eq(mo, &got);
        HTU_OK(ckpt_hooks_get_obj_by_name(&got, r, w->names[i], w->ts[i]));
        htu_assert_obj_eq(mo, &got);
        for (int k = 0; k < NTAG; k++) {
            char name[16];
            struct ckpt_kvtag t;
            snprintf(name, sizeof name, "t%d", k);
            const struct ckpt_kvtag *mt = model_find_kvtag(m, w->ids[i], name);
            if (w->tagmask[i] & (1u << k)) {
                assert_non_null(mt);
                HTU_OK(ckpt_hooks_get_kvtag(&t, r, w->ids[i], name));
                htu_assert_kvtag_eq(mt, &t);
            } else {
                assert_null(mt);
                HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_kvtag(&t, r, w->ids[i], name));
            }
        }
    }
    for (int c = 0; c < NCONT; c++) {
        struct ckpt_cont cg;
        char name[16];
        snprintf(name, sizeof name, "/cont-%d", c);
        if (w->cont_dead[c]) {
            HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_cont(&cg, r, w->conts[c]));
            HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_cont_by_name(&cg, r, name));
        } else {
            HTU_OK(ckpt_hooks_get_cont_by_name(&cg, r, name));
            assert_int_equal(cg.cont_id, w->conts[c]);
        }
    }
    ckpt_hooks_read_end(r);
    HTU_OK(ckpt_hooks_close(h));
}

/* ------------------------------------------------------------------ */

static void test_rebuild_restart_reproduces_the_model(void **state)
{
    struct ckpt_hooks_opts o = model_opts(state);
    struct wl w;
    wl_init(&w, 1200, 42); /* past the model's 1024 buckets: tables grow */
    ckpt_hooks *h;
    model_server *m, *m2;
    HTU_OK(ckpt_hooks_open(&h, &o));
    HTU_OK(model_create(&m, o.rank, o.nranks, h));
    run_workload(m, &w);
    struct ckpt_rebuild_stats want = wl_expect(&w);
    assert_int_equal(model_count_objs(m), want.objs);
    for (int i = 0; i < w.nobj; i++)
        assert_true(w.ids[i] >= 2000000000ull && w.ids[i] < 3000000000ull); /* rank 1 */
    HTU_OK(ckpt_hooks_close(h));

    check_map(state, m, &w);

    struct ckpt_rebuild_stats st;
    ckpt_hooks *h2 = NULL;
    HTU_OK(model_restart_rebuild(&m2, &h2, &o, &st));
    assert_non_null(h2);
    assert_int_equal(st.conts, want.conts);
    assert_int_equal(st.objs, want.objs);
    assert_int_equal(st.kvtags, want.kvtags);
    assert_int_equal(st.members, want.members);
    assert_int_equal(st.regions, want.regions);
    print_message("rebuilt: %llu containers, %llu objects, %llu kvtags, %llu members, %llu regions\n",
                  (unsigned long long)st.conts, (unsigned long long)st.objs,
                  (unsigned long long)st.kvtags, (unsigned long long)st.members,
                  (unsigned long long)st.regions);
    assert_int_equal(model_count_objs(m2), want.objs);
    assert_equal_models(m, m2);
    assert_equal_models(m2, m);
    model_destroy(m);

    /* the rebuilt server keeps logging: more work, close, rebuild again */
    uint64_t maxid = 0;
    for (int i = 0; i < w.nobj; i++)
        if (w.ids[i] > maxid)
            maxid = w.ids[i];
    struct ckpt_obj extra;
    memset(&extra, 0, sizeof extra);
    extra.obj_name = "/after-restart";
    extra.ndim = 1;
    extra.dims[0] = 5;
    uint64_t xid;
    HTU_OK(model_obj_create(m2, &extra, &xid));
    assert_true(xid > maxid);
    struct ckpt_kvtag t = {"t9", BULKI_T_STRING, 3, "ok"};
    HTU_OK(model_kvtag_put(m2, xid, &t));
    for (int i = 5; i < w.nobj; i += 50)
        if (!w.dead[i]) {
            HTU_OK(model_obj_delete(m2, w.ids[i]));
            w.dead[i] = 1;
        }
    HTU_OK(ckpt_hooks_close(h2));
    model_server *m3;
    ckpt_hooks *h3;
    HTU_OK(model_restart_rebuild(&m3, &h3, &o, &st));
    assert_equal_models(m2, m3);
    assert_non_null(model_find_obj_by_name(m3, "/after-restart", 0));
    HTU_OK(ckpt_hooks_close(h3));
    model_destroy(m2);
    model_destroy(m3);
    wl_free(&w);
}

static void test_model_equal_names_the_first_difference(void **state)
{
    (void)state;
    struct wl wa, wb;
    model_server *a, *b;
    char why[256];
    wl_init(&wa, 120, 7);
    wl_init(&wb, 120, 7);
    HTU_OK(model_create(&a, 0, 1, NULL));
    HTU_OK(model_create(&b, 0, 1, NULL));
    run_workload(a, &wa);
    run_workload(b, &wb);
    assert_equal_models(a, b);
    assert_equal_models(a, a);

    /* pick a live object */
    int i = 0;
    while (wb.dead[i])
        i++;
    uint64_t id = wb.ids[i];
    char idstr[32];
    snprintf(idstr, sizeof idstr, "%llu", (unsigned long long)id);

    /* one extra tag */
    struct ckpt_kvtag extra = {"extra", BULKI_T_STRING, 2, "x"};
    HTU_OK(model_kvtag_put(b, id, &extra));
    why[0] = 0;
    assert_int_equal(model_equal(a, b, why, sizeof why), 0);
    if (strstr(why, "kvtag") == NULL || strstr(why, idstr) == NULL)
        fail_msg("why = \"%s\" should name the kvtags of object %s", why, idstr);
    assert_int_equal(model_equal(b, a, why, sizeof why), 0);
    HTU_OK(model_kvtag_delete(b, id, "extra"));
    assert_equal_models(a, b);

    /* a tag with another value */
    struct ckpt_kvtag t0a = {"same", BULKI_T_STRING, 2, "1"}, t0b = {"same", BULKI_T_STRING, 2, "2"};
    HTU_OK(model_kvtag_put(a, id, &t0a));
    HTU_OK(model_kvtag_put(b, id, &t0b));
    why[0] = 0;
    assert_int_equal(model_equal(a, b, why, sizeof why), 0);
    if (strstr(why, "same") == NULL)
        fail_msg("why = \"%s\" should name kvtag \"same\"", why);
    HTU_OK(model_kvtag_put(b, id, &t0a));
    assert_equal_models(a, b);

    /* a region with another size */
    struct ckpt_region g;
    memset(&g, 0, sizeof g);
    g.obj_id = id;
    g.ndim = 1;
    g.count[0] = 3;
    g.data_size = 10;
    HTU_OK(model_region_put(a, &g));
    g.data_size = 11;
    HTU_OK(model_region_put(b, &g));
    why[0] = 0;
    assert_int_equal(model_equal(a, b, why, sizeof why), 0);
    if (strstr(why, "region") == NULL)
        fail_msg("why = \"%s\" should name a region", why);
    g.data_size = 10;
    HTU_OK(model_region_put(b, &g));
    assert_equal_models(a, b);

    /* a membership */
    HTU_OK(model_cont_remove(b, wb.conts[0], &wb.ids[0], 1));
    why[0] = 0;
    assert_int_equal(model_equal(a, b, why, sizeof why), 0);
    if (strstr(why, "member") == NULL)
        fail_msg("why = \"%s\" should name the members", why);
    HTU_OK(model_cont_add(b, wb.conts[0], &wb.ids[0], 1));
    assert_equal_models(a, b);

    /* an object less */
    HTU_OK(model_obj_delete(b, id));
    why[0] = 0;
    assert_int_equal(model_equal(a, b, why, sizeof why), 0);
    if (strstr(why, "object") == NULL)
        fail_msg("why = \"%s\" should name the objects", why);

    model_destroy(a);
    model_destroy(b);
    wl_free(&wa);
    wl_free(&wb);
}

#define T(f) cmocka_unit_test_setup_teardown(f, htu_setup, htu_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_rebuild_restart_reproduces_the_model),
        T(test_model_equal_names_the_first_difference),
    };
    return cmocka_run_group_tests_name("hooks model", tests, NULL, NULL);
}
