/*
 * test_pdc_decode.c - PDC's own BULKI deserializer (src/commons/serde/bulki/
 * of PDC 2e5de75a, compiled unchanged from PDC_CKPT_PDC_SOURCES) decodes
 * every kind of record pdc-ckpt writes: records made by the record encoders
 * (ckpt_rec_obj/kvtag/cont/region_encode) and every record of a real store
 * written through the hooks.
 *
 * The records are produced by the encoders, never written out as bytes
 * here, so the test checks whatever record layout the encoders produce.
 * For each record: BULKI_deserialize succeeds; what PDC decoded equals,
 * entity by entity (type, class, count, notional size, payload bytes, keys,
 * nesting), what pdc-ckpt's own decoder sees in the same bytes; and the
 * values put in (ids, names, dims, tag values, region geometry, histogram)
 * are among the values PDC decoded.
 *
 * PDC's deserializer leaks one BULKI_Entity per entity it decodes (it
 * copies each into its array and drops the pointer); the LeakSanitizer
 * suppression for the ASan build names that function. Everything else is
 * freed (pdcs_free).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bulki.h"
#include "ckpt_store.h"
#include "hooks_test_util.h"
#include "pdc_serde_util.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define ENT_HDR 18u /* PDC's notional header of every entity */

/* ------------------------------------------------------------------ */
/* PDC's view against ours                                             */
/* ------------------------------------------------------------------ */

static void assert_same_doc(const BULKI *p, const bulki_map *m);

/* PDC's decoded entity p and our view e of the same bytes are the same. */
static void assert_same_ent(const BULKI_Entity *p, const bulki_ent *e)
{
    assert_int_equal(p->pdc_type, e->type);
    assert_int_equal(p->pdc_class, e->cls);
    assert_int_equal(p->count, e->count);
    assert_int_equal(p->size, e->size);
    if (e->type == BULKI_T_BULKI) {
        for (uint64_t i = 0; i < e->count; i++) {
            bulki_map sub;
            assert_int_equal(bulki_ent_doc(&sub, e, i), 0);
            const BULKI *ps = e->cls == BULKI_ITEM ? (const BULKI *)p->data
                                                   : (const BULKI *)p->data + i;
            assert_non_null(ps);
            assert_same_doc(ps, &sub);
        }
    } else if (e->type == BULKI_T_BULKI_ENT) {
        for (uint64_t i = 0; i < e->count; i++) {
            bulki_ent sub;
            assert_int_equal(bulki_ent_at(&sub, e, i), 0);
            assert_same_ent((const BULKI_Entity *)p->data + i, &sub);
        }
    } else {
        /* base types: PDC holds size - 18 bytes (a string with its NUL) */
        size_t plen = e->payload_len + (e->type == BULKI_T_STRING);
        assert_int_equal(p->size - ENT_HDR, plen);
        assert_true(plen == 0 || memcmp(p->data, e->payload, plen) == 0);
    }
}

static void assert_same_doc(const BULKI *p, const bulki_map *m)
{
    bulki_map_iter it;
    bulki_ent k, v;
    uint64_t i = 0;
    int rc;
    assert_int_equal(p->numKeys, m->npairs);
    assert_int_equal(p->totalSize, m->total);
    bulki_map_iter_init(&it, m);
    while ((rc = bulki_map_next(&k, &v, &it)) == 1) {
        assert_true(i < p->numKeys);
        assert_same_ent(&p->header->keys[i], &k);
        assert_same_ent(&p->data->values[i], &v);
        i++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(i, p->numKeys);
}

/* 1 if some base-type entity PDC decoded (at any depth) holds exactly
 * bytes[0..len). */
static int pdc_holds_ent(const BULKI_Entity *e, const void *bytes, size_t len);

static int pdc_holds(const BULKI *b, const void *bytes, size_t len)
{
    for (uint64_t i = 0; i < b->numKeys; i++)
        if (pdc_holds_ent(&b->data->values[i], bytes, len))
            return 1;
    return 0;
}

static int pdc_holds_ent(const BULKI_Entity *e, const void *bytes, size_t len)
{
    if (e->pdc_type == PDC_BULKI) {
        for (uint64_t i = 0; i < e->count; i++)
            if (pdc_holds(e->pdc_class == PDC_CLS_ITEM ? (const BULKI *)e->data
                                                       : (const BULKI *)e->data + i,
                          bytes, len))
                return 1;
        return 0;
    }
    if (e->pdc_type == PDC_BULKI_ENT) {
        for (uint64_t i = 0; i < e->count; i++)
            if (pdc_holds_ent((const BULKI_Entity *)e->data + i, bytes, len))
                return 1;
        return 0;
    }
    return e->size - ENT_HDR == len && (len == 0 || memcmp(e->data, bytes, len) == 0);
}

#define HOLDS(b, ptr, len) assert_true(pdc_holds((b), (ptr), (len)))
#define HOLDS_STR(b, s) HOLDS((b), (s), strlen(s) + 1)
#define HOLDS_VAL(b, v) HOLDS((b), &(v), sizeof(v))

/* Decode rec[0..len) with PDC (from an exact-size heap copy, so ASan sees
 * any read past the end), check it against our decoder; the caller checks
 * values and frees with pdcs_free. */
static BULKI *pdc_decode(const void *rec, size_t len)
{
    bulki_map m;
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    memcpy(copy, rec, len);
    assert_int_equal(bulki_decode_doc(&m, copy, len, NULL), 0);
    BULKI *b = BULKI_deserialize(copy);
    assert_non_null(b);
    assert_same_doc(b, &m);
    free(copy);
    return b;
}

/* ------------------------------------------------------------------ */
/* records from the encoders                                           */
/* ------------------------------------------------------------------ */

/* Encode with encoder `fn` into a buffer big enough for every record here,
 * then decode with PDC (from an exact-size copy, in pdc_decode). */
static uint8_t enc_buf[1 << 16];
static size_t enc_len;
#define ENCODE_DECODE(fn, rec)                                                 \
    (HTU_OK(fn(&enc_len, enc_buf, sizeof enc_buf, (rec))), pdc_decode(enc_buf, enc_len))

static void check_obj(const BULKI *b, const struct ckpt_obj *o)
{
    HOLDS_VAL(b, o->obj_id);
    HOLDS_VAL(b, o->cont_id);
    HOLDS_STR(b, o->obj_name);
    HOLDS_STR(b, o->app_name);
    HOLDS_STR(b, o->data_location);
    HOLDS_STR(b, o->tags);
    HOLDS_VAL(b, o->create_time);
    HOLDS_VAL(b, o->last_modified_time);
    if (o->ndim > 0)
        HOLDS(b, o->dims, o->ndim * sizeof o->dims[0]);
}

static void test_obj_records(void **state)
{
    (void)state;
    for (uint32_t ndim = 0; ndim <= CKPT_MAX_DIM; ndim++) {
        struct ckpt_obj o = htu_full_obj(ndim);
        BULKI *b = ENCODE_DECODE(ckpt_rec_obj_encode, &o);
        check_obj(b, &o);
        pdcs_free(b);
    }
    /* empty strings stay decodable */
    struct ckpt_obj o = htu_full_obj(2);
    o.app_name = "";
    o.data_location = "";
    o.tags = "";
    BULKI *b = ENCODE_DECODE(ckpt_rec_obj_encode, &o);
    check_obj(b, &o);
    pdcs_free(b);
}

static void test_kvtag_records(void **state)
{
    (void)state;
    static const char str[] = "New Value After Delete";
    static const int32_t i32 = -2;
    static const double dbl = 3.45;
    static const uint64_t u64s[3] = {1, 0, UINT64_MAX};
    static const char odd[5] = {'a', 0, 'b', 0, 'c'}; /* not a C string */
    uint8_t blob[1000];
    for (size_t i = 0; i < sizeof blob; i++)
        blob[i] = (uint8_t)(i * 7);
    const struct ckpt_kvtag tags[] = {
        {"key1string", BULKI_T_STRING, sizeof str, str},
        {"key2int", BULKI_T_INT, sizeof i32, &i32},
        {"key3double", BULKI_T_DOUBLE, sizeof dbl, &dbl},
        {"Group", BULKI_T_UINT64, sizeof u64s, u64s},
        {"raw", BULKI_T_STRING, sizeof odd, odd},
        {"blob", BULKI_T_UINT8, sizeof blob, blob},
        {"empty", BULKI_T_INT, 0, NULL},
    };
    for (size_t i = 0; i < NELEM(tags); i++) {
        BULKI *b = ENCODE_DECODE(ckpt_rec_kvtag_encode, &tags[i]);
        HOLDS(b, tags[i].value, tags[i].size);
        pdcs_free(b);
    }
}

static void test_cont_records(void **state)
{
    (void)state;
    const struct ckpt_cont conts[] = {
        {1000000001ull, "/containers/c1", "owner=alice"},
        {2000000007ull, "c2", ""},
    };
    for (size_t i = 0; i < NELEM(conts); i++) {
        BULKI *b = ENCODE_DECODE(ckpt_rec_cont_encode, &conts[i]);
        HOLDS_VAL(b, conts[i].cont_id);
        HOLDS_STR(b, conts[i].cont_name);
        HOLDS_STR(b, conts[i].tags);
        pdcs_free(b);
    }
}

static void check_region(const BULKI *b, const struct ckpt_region *g)
{
    HOLDS_VAL(b, g->obj_id);
    HOLDS(b, g->start, g->ndim * sizeof g->start[0]);
    HOLDS(b, g->count, g->ndim * sizeof g->count[0]);
    HOLDS_VAL(b, g->data_size);
    HOLDS_STR(b, g->storage_location);
    HOLDS_STR(b, g->cache_location);
    if (g->has_hist) {
        HOLDS(b, htu_hist_range, sizeof htu_hist_range);
        HOLDS(b, htu_hist_bin, sizeof htu_hist_bin);
        HOLDS_VAL(b, g->hist.incr);
    }
}

static void test_region_records(void **state)
{
    (void)state;
    for (uint32_t ndim = 1; ndim <= CKPT_MAX_DIM; ndim++)
        for (int hist = 0; hist <= 1; hist++) {
            struct ckpt_region g = htu_full_region(ndim, hist);
            BULKI *b = ENCODE_DECODE(ckpt_rec_region_encode, &g);
            check_region(b, &g);
            pdcs_free(b);
        }
}

/* ------------------------------------------------------------------ */
/* every record of a real store                                        */
/* ------------------------------------------------------------------ */

struct walk {
    size_t records;
    int saw_obj, saw_tag, saw_cont, saw_region;
    const struct ckpt_obj *obj;
    const struct ckpt_kvtag *tag;
    const struct ckpt_cont *cont;
    const struct ckpt_region *region;
    int db;
};

static int visit(const ckpt_val *key, const ckpt_val *val, void *payload)
{
    struct walk *w = payload;
    (void)key;
    BULKI *b = pdc_decode(val->data, val->len);
    w->records++;
    switch (w->db) {
    case CKPT_DB_OBJ:
        if (pdc_holds(b, &w->obj->obj_id, sizeof w->obj->obj_id)) {
            check_obj(b, w->obj);
            w->saw_obj = 1;
        }
        break;
    case CKPT_DB_KVTAG:
        if (pdc_holds(b, w->tag->value, w->tag->size))
            w->saw_tag = 1;
        break;
    case CKPT_DB_CONT:
        HOLDS_STR(b, w->cont->cont_name);
        w->saw_cont = 1;
        break;
    case CKPT_DB_REGION:
        check_region(b, w->region);
        w->saw_region = 1;
        break;
    default:
        break;
    }
    pdcs_free(b);
    return 0;
}

static void test_stored_records(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    ckpt_hooks *h = NULL;
    struct ckpt_obj obj = htu_full_obj(3);
    static const char value[] = "stored value";
    const struct ckpt_kvtag tag = {"stored", BULKI_T_STRING, sizeof value, value};
    const struct ckpt_cont cont = {0, "/containers/stored", "k=v"};
    struct ckpt_region region = htu_full_region(2, 1);
    struct ckpt_cont c = cont;
    uint64_t n = 0;

    HTU_OK(ckpt_hooks_open(&h, &o));
    HTU_OK(ckpt_hook_new_id(&c.cont_id, h));
    HTU_OK(ckpt_hook_cont_create(h, &c));
    HTU_OK(ckpt_hook_new_id(&obj.obj_id, h));
    obj.cont_id = c.cont_id;
    HTU_OK(ckpt_hook_obj_create(h, &obj));
    HTU_OK(ckpt_hook_kvtag_put(h, obj.obj_id, &tag));
    for (int i = 0; i < 20; i++) {
        int32_t v = i * 1000;
        char name[32];
        snprintf(name, sizeof name, "tag%02d", i);
        const struct ckpt_kvtag t = {name, BULKI_T_INT32, sizeof v, &v};
        HTU_OK(ckpt_hook_kvtag_put(h, obj.obj_id, &t));
    }
    HTU_OK(ckpt_hook_cont_add_objs(h, c.cont_id, &obj.obj_id, 1));
    region.obj_id = obj.obj_id;
    HTU_OK(ckpt_hook_region_put(h, &region));
    HTU_OK(ckpt_hooks_close(h));

    ckpt_store *st = NULL;
    ckpt_rtxn *tx = NULL;
    struct walk w = {.obj = &obj, .tag = &tag, .cont = &c, .region = &region};
    HTU_OK(ckpt_store_open_readonly(&st, o.store_root, 0));
    HTU_OK(ckpt_rtxn_begin(&tx, st));
    /* every database whose values are BULKI records */
    static const int dbs[] = {CKPT_DB_META, CKPT_DB_OBJ, CKPT_DB_KVTAG, CKPT_DB_CONT,
                              CKPT_DB_REGION};
    for (size_t i = 0; i < NELEM(dbs); i++) {
        w.db = dbs[i];
        HTU_OK(ckpt_db_stat(&n, NULL, tx, dbs[i]));
        size_t before = w.records;
        HTU_OK(ckpt_iter(tx, dbs[i], NULL, 0, visit, &w));
        assert_int_equal(w.records - before, n); /* every record decoded */
        assert_true(n > 0);
    }
    ckpt_rtxn_end(tx);
    HTU_OK(ckpt_store_close(st));
    assert_true(w.saw_obj && w.saw_tag && w.saw_cont && w.saw_region);
    assert_true(w.records >= 1 + 1 + 21 + 1 + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_obj_records),
        cmocka_unit_test(test_kvtag_records),
        cmocka_unit_test(test_cont_records),
        cmocka_unit_test(test_region_records),
        cmocka_unit_test_setup_teardown(test_stored_records, htu_setup, htu_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
