/*
 * pdc-serde-bench - pdc-ckpt's BULKI codec against PDC's own serializer
 * (src/commons/serde/bulki/ of PDC 2e5de75a, compiled unchanged from
 * PDC_CKPT_PDC_SOURCES), side by side in one process, on the 10-key PDC
 * object record of bulki-bench (253 bytes).
 *
 *   pdc-serde-bench [-n RECORDS] [-r RUNS]
 *
 * Three operations, each done RECORDS times per run by both codecs, PDC
 * and pdc-ckpt alternating (which goes first alternates from run to run):
 *
 *   encode     build the record's description and encode it.
 *              PDC: BULKI_init, BULKI_ENTITY + BULKI_put per field,
 *              BULKI_serialize, free. pdc-ckpt: describe + bulki_encode_doc
 *              into a reused buffer.
 *   by key     decode, then look every field up by its name and read it.
 *              PDC: BULKI_deserialize, BULKI_get per field (key entities
 *              built once, outside the timing), free. pdc-ckpt:
 *              bulki_decode_index (validates the whole record once) and
 *              bulki_index_getn per field (key lengths known, as PDC's
 *              key entities know theirs).
 *   one pass   decode, then read the fields in one walk over the pairs.
 *              PDC: BULKI_deserialize and its keys[i]/values[i] arrays.
 *              pdc-ckpt: bulki_decode_index and its fields[i] array.
 *
 * Two more lines show pdc-ckpt's API before bulki_decode_index, with no
 * PDC counterpart: by key (walk), bulki_decode_doc + bulki_map_get per
 * field; one pass (next), bulki_decode_doc + a bulki_map_next walk.
 *
 * Every decode copies every field into a struct record and checks it is
 * the record encoded; both encoders' bytes are compared before the timing
 * and after every run. Times are CPU time (CLOCK_PROCESS_CPUTIME_ID); the
 * output gives, per operation, the median and min ns/record of each codec
 * over the RUNS runs and the ratio of the medians (PDC / pdc-ckpt).
 *
 * Freeing PDC's structures: BULKI_free prints a line per entity, so the
 * benchmark frees them with pdcs_free (the same free() calls, no printing). PDC's
 * BULKI_deserialize leaks one malloc'd BULKI_Entity per key and per value
 * (it copies each into its array and drops the pointer): about 1 KB per
 * record decoded, so keep RECORDS x RUNS moderate (the defaults leak about
 * 140 MB).
 *
 * The phases are separate non-inlined functions (phase_*), so that
 * `valgrind --tool=callgrind` + callgrind_annotate --inclusive=yes gives
 * instruction counts per phase (tools/bench/pdc_serde_callgrind.sh).
 * Defaults: 10,000 records, 7 runs. Exit 0; 1 if a codec fails or the
 * outputs differ; 2 on bad usage.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bulki.h"        /* pdc-ckpt's codec */
#include "pdc_serde_util.h" /* PDC's BULKI_serialize, ...; pdcs_free */

#define PROG "pdc-serde-bench"
#define NFIELDS 10
#define NOINLINE __attribute__((noinline))

struct record {
    uint64_t obj_id;
    char obj_name[64];
    uint64_t cont_id;
    int32_t user_id;
    char app_name[16];
    int32_t time_step;
    int32_t data_type;
    int32_t ndim;
    uint64_t dims[3];
    int64_t create_time;
};

/* The record's fields in encoding order. */
enum field { F_OBJ_ID, F_OBJ_NAME, F_CONT_ID, F_USER_ID, F_APP_NAME, F_TIME_STEP,
             F_DATA_TYPE, F_NDIM, F_DIMS, F_CREATE_TIME };
static const char *const field_name[NFIELDS] = {
    "obj_id", "obj_name", "cont_id", "user_id", "app_name",
    "time_step", "data_type", "ndim", "dims", "create_time"};
/* Their lengths, known up front as PDC's prebuilt key entities know theirs. */
static const size_t field_len[NFIELDS] = {6, 8, 7, 7, 8, 9, 9, 4, 4, 11};

/* ==================================================================== */
/* pdc-ckpt                                                              */
/* ==================================================================== */

static void ck_describe(bulki_doc *doc, bulki_pair *pairs, const struct record *r)
{
#define KEY(s) BULKI_V_STRN((s), sizeof(s) - 1)
    pairs[0] = (bulki_pair){KEY("obj_id"), BULKI_V_ITEM(BULKI_T_UINT64, &r->obj_id)};
    pairs[1] = (bulki_pair){KEY("obj_name"), BULKI_V_STRN(r->obj_name, strlen(r->obj_name))};
    pairs[2] = (bulki_pair){KEY("cont_id"), BULKI_V_ITEM(BULKI_T_UINT64, &r->cont_id)};
    pairs[3] = (bulki_pair){KEY("user_id"), BULKI_V_ITEM(BULKI_T_INT32, &r->user_id)};
    pairs[4] = (bulki_pair){KEY("app_name"), BULKI_V_STRN(r->app_name, strlen(r->app_name))};
    pairs[5] = (bulki_pair){KEY("time_step"), BULKI_V_ITEM(BULKI_T_INT32, &r->time_step)};
    pairs[6] = (bulki_pair){KEY("data_type"), BULKI_V_ITEM(BULKI_T_INT32, &r->data_type)};
    pairs[7] = (bulki_pair){KEY("ndim"), BULKI_V_ITEM(BULKI_T_INT32, &r->ndim)};
    pairs[8] = (bulki_pair){KEY("dims"), BULKI_V_ARRAY(BULKI_T_UINT64, r->dims, 3)};
    pairs[9] = (bulki_pair){KEY("create_time"), BULKI_V_ITEM(BULKI_T_INT64, &r->create_time)};
#undef KEY
    doc->npairs = NFIELDS;
    doc->pairs = pairs;
}

/* Read field f of the record from its value view; 0 or a BULKI_E* code. */
static int ck_field(struct record *out, enum field f, const bulki_ent *e)
{
    const char *s;
    size_t slen;
    int64_t v;
    int rc = 0;
    switch (f) {
    case F_OBJ_ID:
        return bulki_ent_u64(&out->obj_id, e);
    case F_CONT_ID:
        return bulki_ent_u64(&out->cont_id, e);
    case F_CREATE_TIME:
        return bulki_ent_i64(&out->create_time, e);
    case F_OBJ_NAME:
    case F_APP_NAME: {
        char *dst = f == F_OBJ_NAME ? out->obj_name : out->app_name;
        size_t cap = f == F_OBJ_NAME ? sizeof out->obj_name : sizeof out->app_name;
        if ((rc = bulki_ent_str(&s, &slen, e)) != 0)
            return rc;
        if (slen >= cap)
            return BULKI_E_RANGE;
        memcpy(dst, s, slen + 1);
        return 0;
    }
    case F_DIMS:
        for (uint64_t i = 0; i < 3 && rc == 0; i++)
            rc = bulki_ent_elem_u64(&out->dims[i], e, i);
        return rc;
    default: {
        int32_t *dst = f == F_USER_ID ? &out->user_id
                       : f == F_TIME_STEP ? &out->time_step
                       : f == F_DATA_TYPE ? &out->data_type
                                          : &out->ndim;
        if ((rc = bulki_ent_i64(&v, e)) != 0)
            return rc;
        if (v < INT32_MIN || v > INT32_MAX)
            return BULKI_E_RANGE;
        *dst = (int32_t)v;
        return 0;
    }
    }
}

/* Field number of a key, or -1: position `hint` first (records keep their
 * fields in order), then every name. */
static int field_of(const char *key, size_t klen, int hint)
{
    if (hint < NFIELDS && strncmp(field_name[hint], key, klen) == 0 &&
        field_name[hint][klen] == 0)
        return hint;
    for (int i = 0; i < NFIELDS; i++)
        if (strncmp(field_name[i], key, klen) == 0 && field_name[i][klen] == 0)
            return i;
    return -1;
}

static int ck_encode(size_t *len, uint8_t *buf, size_t cap, const struct record *r)
{
    bulki_pair pairs[NFIELDS];
    bulki_doc doc;
    ck_describe(&doc, pairs, r);
    return bulki_encode_doc(len, buf, cap, &doc);
}

static int ck_by_key(struct record *out, const uint8_t *buf, size_t len)
{
    bulki_field fields[NFIELDS];
    bulki_index ix;
    bulki_ent e;
    int rc;
    if ((rc = bulki_decode_index(&ix, fields, NFIELDS, buf, len, NULL)) != 0)
        return rc;
    for (int f = 0; f < NFIELDS; f++)
        if ((rc = bulki_index_getn(&e, &ix, field_name[f], field_len[f])) != 0 ||
            (rc = ck_field(out, (enum field)f, &e)) != 0)
            return rc;
    return 0;
}

/* The old way, for comparison: bulki_map_get walks from the first pair. */
static int ck_by_key_walk(struct record *out, const uint8_t *buf, size_t len)
{
    bulki_map m;
    bulki_ent e;
    int rc;
    if ((rc = bulki_decode_doc(&m, buf, len, NULL)) != 0)
        return rc;
    for (int f = 0; f < NFIELDS; f++)
        if ((rc = bulki_map_get(&e, &m, field_name[f])) != 0 ||
            (rc = ck_field(out, (enum field)f, &e)) != 0)
            return rc;
    return 0;
}

static int ck_one_pass(struct record *out, const uint8_t *buf, size_t len)
{
    bulki_field fields[NFIELDS];
    bulki_index ix;
    int rc, seen = 0;
    if ((rc = bulki_decode_index(&ix, fields, NFIELDS, buf, len, NULL)) != 0)
        return rc;
    for (size_t i = 0; i < ix.n; i++) {
        if (fields[i].key == NULL)
            continue;
        int f = field_of(fields[i].key, fields[i].key_len, (int)i);
        if (f >= 0) {
            if ((rc = ck_field(out, (enum field)f, &fields[i].value)) != 0)
                return rc;
            seen |= 1 << f;
        }
    }
    return seen == (1 << NFIELDS) - 1 ? 0 : BULKI_E_NOTFOUND;
}

/* The same with bulki_decode_doc and a bulki_map_next walk (which re-reads
 * every entity's header after the validation). */
static int ck_one_pass_next(struct record *out, const uint8_t *buf, size_t len)
{
    bulki_map m;
    bulki_map_iter it;
    bulki_ent k, v;
    int rc, i = 0, seen = 0;
    if ((rc = bulki_decode_doc(&m, buf, len, NULL)) != 0)
        return rc;
    bulki_map_iter_init(&it, &m);
    while ((rc = bulki_map_next(&it, &k, &v)) == 1) {
        if (k.type != BULKI_T_STRING)
            continue;
        int f = field_of((const char *)k.payload, k.payload_len, i++);
        if (f >= 0) {
            if ((rc = ck_field(out, (enum field)f, &v)) != 0)
                return rc;
            seen |= 1 << f;
        }
    }
    if (rc < 0)
        return rc;
    return seen == (1 << NFIELDS) - 1 ? 0 : BULKI_E_NOTFOUND;
}

/* ==================================================================== */
/* PDC                                                                   */
/* ==================================================================== */

/* BULKI_put copies the entities into the BULKI; their shells are ours. */
static void pdc_put(BULKI *b, BULKI_Entity *k, BULKI_Entity *v)
{
    BULKI_put(b, k, v);
    free(k);
    free(v);
}

static void *pdc_encode(size_t *len, struct record *r)
{
    BULKI *b = BULKI_init(NFIELDS);
    pdc_put(b, BULKI_ENTITY("obj_id", 1, PDC_STRING, PDC_CLS_ITEM),
            BULKI_ENTITY(&r->obj_id, 1, PDC_UINT64, PDC_CLS_ITEM));
    pdc_put(b, BULKI_ENTITY("obj_name", 1, PDC_STRING, PDC_CLS_ITEM),
            BULKI_ENTITY(r->obj_name, 1, PDC_STRING, PDC_CLS_ITEM));
    pdc_put(b, BULKI_ENTITY("cont_id", 1, PDC_STRING, PDC_CLS_ITEM),
            BULKI_ENTITY(&r->cont_id, 1, PDC_UINT64, PDC_CLS_ITEM));
    pdc_put(b, BULKI_ENTITY("user_id", 1, PDC_STRING, PDC_CLS_ITEM),
            BULKI_ENTITY(&r->user_id, 1, PDC_INT32, PDC_CLS_ITEM));
    pdc_put(b, BULKI_ENTITY("app_name", 1, PDC_STRING, PDC_CLS_ITEM),
            BULKI_ENTITY(r->app_name, 1, PDC_STRING, PDC_CLS_ITEM));
    pdc_put(b, BULKI_ENTITY("time_step", 1, PDC_STRING, PDC_CLS_ITEM),
            BULKI_ENTITY(&r->time_step, 1, PDC_INT32, PDC_CLS_ITEM));
    pdc_put(b, BULKI_ENTITY("data_type", 1, PDC_STRING, PDC_CLS_ITEM),
            BULKI_ENTITY(&r->data_type, 1, PDC_INT32, PDC_CLS_ITEM));
    pdc_put(b, BULKI_ENTITY("ndim", 1, PDC_STRING, PDC_CLS_ITEM),
            BULKI_ENTITY(&r->ndim, 1, PDC_INT32, PDC_CLS_ITEM));
    pdc_put(b, BULKI_ENTITY("dims", 1, PDC_STRING, PDC_CLS_ITEM),
            BULKI_ENTITY(r->dims, 3, PDC_UINT64, PDC_CLS_ARRAY));
    pdc_put(b, BULKI_ENTITY("create_time", 1, PDC_STRING, PDC_CLS_ITEM),
            BULKI_ENTITY(&r->create_time, 1, PDC_INT64, PDC_CLS_ITEM));
    void *buf = BULKI_serialize(b, len);
    pdcs_free(b);
    return buf;
}

/* Read field f from PDC's decoded value entity; 0 or -1. */
static int pdc_field(struct record *out, enum field f, const BULKI_Entity *e)
{
    size_t plen = e->size - sizeof(uint8_t) * 2 - sizeof(uint64_t) * 2;
    switch (f) {
    case F_OBJ_ID:
    case F_CONT_ID:
    case F_CREATE_TIME:
        if (e->pdc_type != (f == F_CREATE_TIME ? PDC_INT64 : PDC_UINT64) || plen != 8)
            return -1;
        memcpy(f == F_OBJ_ID ? (void *)&out->obj_id
               : f == F_CONT_ID ? (void *)&out->cont_id
                                : (void *)&out->create_time,
               e->data, 8);
        return 0;
    case F_OBJ_NAME:
    case F_APP_NAME: {
        char *dst = f == F_OBJ_NAME ? out->obj_name : out->app_name;
        size_t cap = f == F_OBJ_NAME ? sizeof out->obj_name : sizeof out->app_name;
        if (e->pdc_type != PDC_STRING || plen == 0 || plen > cap)
            return -1;
        memcpy(dst, e->data, plen);
        dst[plen - 1] = 0;
        return 0;
    }
    case F_DIMS:
        if (e->pdc_type != PDC_UINT64 || e->count != 3 || plen != sizeof out->dims)
            return -1;
        memcpy(out->dims, e->data, sizeof out->dims);
        return 0;
    default: {
        int32_t *dst = f == F_USER_ID ? &out->user_id
                       : f == F_TIME_STEP ? &out->time_step
                       : f == F_DATA_TYPE ? &out->data_type
                                          : &out->ndim;
        if (e->pdc_type != PDC_INT32 || plen != 4)
            return -1;
        memcpy(dst, e->data, 4);
        return 0;
    }
    }
}

static int pdc_by_key(struct record *out, void *buf, BULKI_Entity **keys)
{
    BULKI *b = BULKI_deserialize(buf);
    int rc = b ? 0 : -1;
    for (int f = 0; f < NFIELDS && rc == 0; f++) {
        BULKI_Entity *e = BULKI_get(b, keys[f]);
        rc = e ? pdc_field(out, (enum field)f, e) : -1;
    }
    pdcs_free(b);
    return rc;
}

static int pdc_one_pass(struct record *out, void *buf)
{
    BULKI *b = BULKI_deserialize(buf);
    int rc = b ? 0 : -1, seen = 0;
    for (uint64_t i = 0; b && i < b->numKeys && rc == 0; i++) {
        const BULKI_Entity *k = &b->header->keys[i];
        if (k->pdc_type != PDC_STRING)
            continue;
        const char *s = k->data;
        int f = field_of(s, strlen(s), (int)i);
        if (f >= 0) {
            rc = pdc_field(out, (enum field)f, &b->data->values[i]);
            seen |= 1 << f;
        }
    }
    pdcs_free(b);
    return rc == 0 && seen == (1 << NFIELDS) - 1 ? 0 : -1;
}

/* ==================================================================== */
/* timing                                                                */
/* ==================================================================== */

enum op { OP_ENCODE, OP_BY_KEY, OP_ONE_PASS, OP_BY_KEY_WALK, OP_ONE_PASS_NEXT, NOPS };
static const char *const op_name[NOPS] = {"encode", "by key", "one pass", "by key (walk)",
                                          "one pass (next)"};

struct bench {
    struct record rec;        /* the record encoded; obj_id varies */
    uint64_t base_id;
    size_t n;
    uint8_t *ck_buf;          /* pdc-ckpt's output, and the input of decodes */
    size_t ck_cap, len;
    BULKI_Entity *keys[NFIELDS];
    uint64_t sum;             /* of everything produced, printed */
    int failed;
};

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t checksum(const struct record *r)
{
    uint64_t h = r->obj_id ^ (r->cont_id << 1) ^ (uint64_t)r->create_time;
    h += (uint64_t)(uint32_t)r->user_id + (uint64_t)(uint32_t)r->time_step +
         (uint64_t)(uint32_t)r->data_type + (uint64_t)(uint32_t)r->ndim;
    h += r->dims[0] + r->dims[1] * 3 + r->dims[2] * 7;
    /* the strings' last bytes: O(1), so the checksum adds little to either
     * side (both decoders are checked field by field in check_same) */
    return h + (uint8_t)r->obj_name[0] + (uint8_t)r->obj_name[30] + (uint8_t)r->app_name[3];
}

static void fail(struct bench *b, const char *what)
{
    if (!b->failed)
        fprintf(stderr, PROG ": %s failed\n", what);
    b->failed = 1;
}

NOINLINE static void phase_pdc_encode(struct bench *b)
{
    for (size_t i = 0; i < b->n; i++) {
        size_t len = 0;
        b->rec.obj_id = b->base_id + i;
        uint8_t *buf = pdc_encode(&len, &b->rec);
        if (buf == NULL || len != b->len) {
            fail(b, "PDC encode");
            free(buf);
            return;
        }
        b->sum += len + buf[len - 1] + buf[9];
        free(buf);
    }
}

NOINLINE static void phase_ck_encode(struct bench *b)
{
    for (size_t i = 0; i < b->n; i++) {
        size_t len = 0;
        b->rec.obj_id = b->base_id + i;
        if (ck_encode(&len, b->ck_buf, b->ck_cap, &b->rec) != 0 || len != b->len) {
            fail(b, "pdc-ckpt encode");
            return;
        }
        b->sum += len + b->ck_buf[len - 1] + b->ck_buf[9];
    }
}

NOINLINE static void phase_pdc_by_key(struct bench *b)
{
    struct record out;
    for (size_t i = 0; i < b->n; i++) {
        if (pdc_by_key(&out, b->ck_buf, b->keys) != 0) {
            fail(b, "PDC decode by key");
            return;
        }
        b->sum += checksum(&out);
    }
}

NOINLINE static void phase_ck_by_key(struct bench *b)
{
    struct record out;
    for (size_t i = 0; i < b->n; i++) {
        if (ck_by_key(&out, b->ck_buf, b->len) != 0) {
            fail(b, "pdc-ckpt decode by key");
            return;
        }
        b->sum += checksum(&out);
    }
}

NOINLINE static void phase_ck_by_key_walk(struct bench *b)
{
    struct record out;
    for (size_t i = 0; i < b->n; i++) {
        if (ck_by_key_walk(&out, b->ck_buf, b->len) != 0) {
            fail(b, "pdc-ckpt decode by key (walk)");
            return;
        }
        b->sum += checksum(&out);
    }
}

NOINLINE static void phase_pdc_one_pass(struct bench *b)
{
    struct record out;
    for (size_t i = 0; i < b->n; i++) {
        if (pdc_one_pass(&out, b->ck_buf) != 0) {
            fail(b, "PDC one-pass decode");
            return;
        }
        b->sum += checksum(&out);
    }
}

NOINLINE static void phase_ck_one_pass(struct bench *b)
{
    struct record out;
    for (size_t i = 0; i < b->n; i++) {
        if (ck_one_pass(&out, b->ck_buf, b->len) != 0) {
            fail(b, "pdc-ckpt one-pass decode");
            return;
        }
        b->sum += checksum(&out);
    }
}

NOINLINE static void phase_ck_one_pass_next(struct bench *b)
{
    struct record out;
    for (size_t i = 0; i < b->n; i++) {
        if (ck_one_pass_next(&out, b->ck_buf, b->len) != 0) {
            fail(b, "pdc-ckpt one-pass decode (map_next)");
            return;
        }
        b->sum += checksum(&out);
    }
}

typedef void (*phase_fn)(struct bench *);
/* [op][0] = PDC, [op][1] = pdc-ckpt; the walk has no PDC twin (NULL). */
static const phase_fn phases[NOPS][2] = {
    {phase_pdc_encode, phase_ck_encode},
    {phase_pdc_by_key, phase_ck_by_key},
    {phase_pdc_one_pass, phase_ck_one_pass},
    {NULL, phase_ck_by_key_walk},
    {NULL, phase_ck_one_pass_next},
};

/* Both encoders produce the same bytes for the current record, and both
 * decoders give back the record. */
static int check_same(struct bench *b)
{
    size_t plen = 0, clen = 0;
    struct record back;
    uint8_t *p = pdc_encode(&plen, &b->rec);
    int ok = p != NULL && ck_encode(&clen, b->ck_buf, b->ck_cap, &b->rec) == 0 &&
             plen == clen && memcmp(p, b->ck_buf, clen) == 0;
    free(p);
    if (!ok) {
        fprintf(stderr, PROG ": PDC's and pdc-ckpt's encodings of the record differ\n");
        return -1;
    }
    b->len = clen;
    int (*const ck[4])(struct record *, const uint8_t *, size_t) = {
        ck_by_key, ck_one_pass, ck_by_key_walk, ck_one_pass_next};
    for (int i = 0; i < 6; i++) {
        memset(&back, 0, sizeof back);
        int rc = i < 4 ? ck[i](&back, b->ck_buf, b->len)
                 : i == 4 ? pdc_by_key(&back, b->ck_buf, b->keys)
                          : pdc_one_pass(&back, b->ck_buf);
        if (rc != 0 || memcmp(&back, &b->rec, sizeof back) != 0) {
            fprintf(stderr, PROG ": decoder %d does not give back the record\n", i);
            return -1;
        }
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: " PROG " [-n RECORDS] [-r RUNS]\n"
               "PDC's BULKI serializer against pdc-ckpt's codec on a 10-key object record:\n"
               "encode, decode by key, one-pass decode; RECORDS per run (default 10000),\n"
               "RUNS runs (default 7); CPU time, medians and ratios.\n");
}

static int parse_count(const char *s, size_t *out)
{
    char *end;
    unsigned long long v;
    if (s[0] < '0' || s[0] > '9')
        return -1;
    v = strtoull(s, &end, 10);
    if (*end != 0 || v == 0 || v > SIZE_MAX / 2)
        return -1;
    *out = (size_t)v;
    return 0;
}

int main(int argc, char **argv)
{
    size_t runs = 7;
    struct bench b = {
        .rec = {.obj_id = 1000001,
                .obj_name = "/climate/run42/temperature_0001",
                .cont_id = 1000000,
                .user_id = 1001,
                .app_name = "vpic",
                .time_step = 17,
                .data_type = 9,
                .ndim = 3,
                .dims = {1024, 2048, 4096},
                .create_time = 1717171717000000LL},
        .n = 10000,
    };
    int opt, status = 1;
    double *t[NOPS][2] = {{NULL}};
    while ((opt = getopt(argc, argv, "n:r:h")) != -1) {
        switch (opt) {
        case 'n':
        case 'r':
            if (parse_count(optarg, opt == 'n' ? &b.n : &runs) != 0) {
                fprintf(stderr, PROG ": -%c needs a positive integer, not '%s'\n", opt, optarg);
                return 2;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }

    bulki_pair pairs[NFIELDS];
    bulki_doc doc;
    ck_describe(&doc, pairs, &b.rec);
    if (bulki_doc_encoded_len(&b.ck_cap, &doc) != 0 ||
        (b.ck_buf = malloc(b.ck_cap)) == NULL) {
        fprintf(stderr, PROG ": setup failed\n");
        goto done;
    }
    for (int f = 0; f < NFIELDS; f++)
        b.keys[f] = BULKI_ENTITY((void *)field_name[f], 1, PDC_STRING, PDC_CLS_ITEM);
    for (int o = 0; o < NOPS; o++)
        for (int s = 0; s < 2; s++)
            if ((t[o][s] = calloc(runs, sizeof(double))) == NULL) {
                fprintf(stderr, PROG ": out of memory\n");
                goto done;
            }
    for (int f = 0; f < NFIELDS; f++)
        if (strlen(field_name[f]) != field_len[f]) {
            fprintf(stderr, PROG ": field_len[%d] is wrong\n", f);
            goto done;
        }
    b.base_id = b.rec.obj_id;
    if (check_same(&b) != 0)
        goto done;

    for (size_t r = 0; r < runs && !b.failed; r++) {
        for (int o = 0; o < NOPS && !b.failed; o++) {
            for (int k = 0; k < 2; k++) {
                int s = (int)((k + r) % 2); /* PDC first in even runs */
                if (phases[o][s] == NULL)
                    continue;
                double t0 = cpu_now();
                phases[o][s](&b);
                t[o][s][r] = (cpu_now() - t0) / (double)b.n * 1e9;
            }
        }
        /* the encodes leave the last record in ck_buf: same bytes? */
        b.rec.obj_id = b.base_id + b.n - 1;
        if (check_same(&b) != 0)
            goto done;
    }
    if (b.failed)
        goto done;

    printf(PROG ": %d-key PDC object record, %zu bytes, identical bytes from both encoders;\n"
           "%zu records x %zu runs, alternating, CPU time (ns/record: median, min)\n",
           NFIELDS, b.len, b.n, runs);
    printf("%-14s %20s %20s %10s\n", "", "PDC serializer", "pdc-ckpt", "PDC/ours");
    for (int o = 0; o < NOPS; o++) {
        double ck = median(t[o][1], runs);
        if (phases[o][0] == NULL) {
            printf("%-14s %20s %10.1f (%7.1f) %10s\n", op_name[o], "-", ck, t[o][1][0], "-");
            continue;
        }
        double pdc = median(t[o][0], runs);
        printf("%-14s %10.1f (%7.1f) %10.1f (%7.1f) %9.2fx\n", op_name[o], pdc, t[o][0][0], ck,
               t[o][1][0], pdc / ck);
    }
    printf("(by key (walk) = bulki_decode_doc + bulki_map_get per field, and one pass (next)\n"
           " = bulki_decode_doc + a bulki_map_next walk: the API before bulki_decode_index)\n");
    printf("checksum %016" PRIx64 "\n", b.sum);
    status = 0;
done:
    for (int o = 0; o < NOPS; o++)
        for (int s = 0; s < 2; s++)
            free(t[o][s]);
    for (int f = 0; f < NFIELDS; f++)
        if (b.keys[f]) {
            free(b.keys[f]->data);
            free(b.keys[f]);
        }
    free(b.ck_buf);
    return status;
}
