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
 *              PDC: BULKI_init, BULKI_ENTITY for key and value + BULKI_put
 *              per field, BULKI_serialize, free. pdc-ckpt: describe (each
 *              time) + bulki_encode_doc into a reused buffer.
 *   by key     decode, then look every field up by its name and read it.
 *              PDC: BULKI_deserialize, BULKI_get per field (key entities
 *              built once, outside the timing), free. pdc-ckpt:
 *              bulki_decode_index (validates the whole record once) and
 *              bulki_index_find per field (key lengths known, as PDC's
 *              key entities know theirs; the view in place, not copied).
 *   one pass   decode, then read the fields in one walk over the pairs.
 *              PDC: BULKI_deserialize and its keys[i]/values[i] arrays.
 *              pdc-ckpt: bulki_decode_index and its fields[i] array.
 *              Both name each key with the same field_of() (lengths,
 *              then bytes).
 *
 * Reading a field: PDC checks the entity's type (and the array's count
 * and length) and copies the value; pdc-ckpt's decodes from the index use
 * the typed getters straight from the pair (bulki_field_*_inline; the
 * 3-element dims array with bulki_field_u64_array_inline, one header
 * check and three elements, as PDC checks dims once and copies it), the
 * walks the getters on the view (dims element by element).
 *
 * Two more lines show pdc-ckpt's API before bulki_decode_index, with no
 * PDC counterpart: by key (walk), bulki_decode_doc + bulki_map_get per
 * field; one pass (next), bulki_decode_doc + a bulki_map_next walk.
 *
 * Every decode copies every field into a struct bench_record and checks it is
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

#include "bench_record.h" /* the record, pdc-ckpt's codec */
#include "bench_util.h"
#include "pdc_serde_util.h" /* PDC's BULKI_serialize, ...; pdcs_free */

#define PROG "pdc-serde-bench"
#define NFIELDS BENCH_NFIELDS
#define NOINLINE __attribute__((noinline))


/* The record's fields in encoding order. */
enum field { F_OBJ_ID, F_OBJ_NAME, F_CONT_ID, F_USER_ID, F_APP_NAME, F_TIME_STEP,
             F_DATA_TYPE, F_NDIM, F_DIMS, F_CREATE_TIME };

/* ==================================================================== */
/* pdc-ckpt                                                              */
/* ==================================================================== */


/* Where a field's value is: an indexed pair of ix (the index's readers:
 * the typed getters straight from the pair) or, with ix NULL, a view (the
 * walks of the API before the index: the getters on the view). ck_field
 * is inlined into each decoder, where ix is NULL or not at compile time,
 * so each reads its values one way, with no test at run time. */
struct ck_val {
    const bulki_index *ix;
    const bulki_field *f;
    const bulki_ent *e;
};

static inline int ck_u64(uint64_t *o, struct ck_val v)
{
    return v.ix ? bulki_field_u64_inline(o, v.ix, v.f) : bulki_ent_u64_inline(o, v.e);
}
static inline int ck_i64(int64_t *o, struct ck_val v)
{
    return v.ix ? bulki_field_i64_inline(o, v.ix, v.f) : bulki_ent_i64_inline(o, v.e);
}
static inline int ck_str(const char **s, size_t *n, struct ck_val v)
{
    return v.ix ? bulki_field_str_inline(s, n, v.ix, v.f) : bulki_ent_str_inline(s, n, v.e);
}
/* The first n elements of an array: from a pair, all at once (one
 * header check, as PDC's reader checks the entity once and copies its
 * elements); from a view, one by one. */
static inline int ck_u64_array(uint64_t *o, size_t n, struct ck_val v)
{
    int rc = 0;
    if (v.ix)
        return bulki_field_u64_array_inline(o, n, v.ix, v.f);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = bulki_ent_elem_u64_inline(&o[i], v.e, i);
    return rc;
}

/* Read field f of the record from its value; 0 or a BULKI_E* code. */
__attribute__((always_inline)) static inline int ck_field(struct bench_record *out, enum field f,
                                                         struct ck_val e)
{
    const char *s;
    size_t slen;
    int64_t v;
    int rc = 0;
    switch (f) {
    case F_OBJ_ID:
        return ck_u64(&out->obj_id, e);
    case F_CONT_ID:
        return ck_u64(&out->cont_id, e);
    case F_CREATE_TIME:
        return ck_i64(&out->create_time, e);
    case F_OBJ_NAME:
    case F_APP_NAME: {
        char *dst = f == F_OBJ_NAME ? out->obj_name : out->app_name;
        size_t cap = f == F_OBJ_NAME ? sizeof out->obj_name : sizeof out->app_name;
        if ((rc = ck_str(&s, &slen, e)) != 0)
            return rc;
        if (slen >= cap)
            return BULKI_E_RANGE;
        memcpy(dst, s, slen + 1);
        return 0;
    }
    case F_DIMS:
        return ck_u64_array(out->dims, 3, e);
    default: {
        int32_t *dst = f == F_USER_ID ? &out->user_id
                       : f == F_TIME_STEP ? &out->time_step
                       : f == F_DATA_TYPE ? &out->data_type
                                          : &out->ndim;
        if ((rc = ck_i64(&v, e)) != 0)
            return rc;
        if (v < INT32_MIN || v > INT32_MAX)
            return BULKI_E_RANGE;
        *dst = (int32_t)v;
        return 0;
    }
    }
}

/* Field number of a key of klen bytes, or -1: position `hint` first
 * (records keep their fields in order), then every name; lengths are
 * compared before bytes (bulki.h's short-key compare: words, not a memcmp
 * call, as the index's own lookups). Both codecs' one-pass decodes use it. */
static int field_of(const char *key, size_t klen, int hint)
{
    if (hint < NFIELDS && bench_field_len[hint] == klen &&
        bulki_key_eq_(bench_field_name[hint], key, klen))
        return hint;
    for (int i = 0; i < NFIELDS; i++)
        if (bench_field_len[i] == klen && bulki_key_eq_(bench_field_name[i], key, klen))
            return i;
    return -1;
}

static int ck_encode(size_t *len, uint8_t *buf, size_t cap, const struct bench_record *r)
{
    bulki_pair pairs[NFIELDS];
    bulki_doc doc;
    bench_record_describe(&doc, pairs, r);
    return bulki_encode_doc(len, buf, cap, &doc);
}

static int ck_by_key(struct bench_record *out, const uint8_t *buf, size_t len)
{
    bulki_field fields[NFIELDS];
    bulki_index ix;
    const bulki_field *p;
    int rc;
    if ((rc = bulki_decode_index(&ix, fields, NFIELDS, buf, len, NULL)) != 0)
        return rc;
    for (int f = 0; f < NFIELDS; f++) {
        if ((p = bulki_index_find_inline(&ix, bench_field_name[f], bench_field_len[f])) == NULL)
            return BULKI_E_NOTFOUND;
        if ((rc = ck_field(out, (enum field)f, (struct ck_val){&ix, p, NULL})) != 0)
            return rc;
    }
    return 0;
}

/* The old way, for comparison: bulki_map_get walks from the first pair. */
static int ck_by_key_walk(struct bench_record *out, const uint8_t *buf, size_t len)
{
    bulki_map m;
    bulki_ent e;
    int rc;
    if ((rc = bulki_decode_doc(&m, buf, len, NULL)) != 0)
        return rc;
    for (int f = 0; f < NFIELDS; f++)
        if ((rc = bulki_map_get(&e, &m, bench_field_name[f])) != 0 ||
            (rc = ck_field(out, (enum field)f, (struct ck_val){NULL, NULL, &e})) != 0)
            return rc;
    return 0;
}

static int ck_one_pass(struct bench_record *out, const uint8_t *buf, size_t len)
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
            if ((rc = ck_field(out, (enum field)f, (struct ck_val){&ix, &fields[i], NULL})) != 0)
                return rc;
            seen |= 1 << f;
        }
    }
    return seen == (1 << NFIELDS) - 1 ? 0 : BULKI_E_NOTFOUND;
}

/* The same with bulki_decode_doc and a bulki_map_next walk (which re-reads
 * every entity's header after the validation). */
static int ck_one_pass_next(struct bench_record *out, const uint8_t *buf, size_t len)
{
    bulki_map m;
    bulki_map_iter it;
    bulki_ent k, v;
    int rc, i = 0, seen = 0;
    if ((rc = bulki_decode_doc(&m, buf, len, NULL)) != 0)
        return rc;
    bulki_map_iter_init(&it, &m);
    while ((rc = bulki_map_next(&k, &v, &it)) == 1) {
        if (k.type != BULKI_T_STRING)
            continue;
        int f = field_of((const char *)k.payload, k.payload_len, i++);
        if (f >= 0) {
            if ((rc = ck_field(out, (enum field)f, (struct ck_val){NULL, NULL, &v})) != 0)
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

/* PDC's build + encode of the record described by doc (pdc-ckpt's
 * description of it, built once: the same fields, types, classes and
 * counts, pointing at the record): BULKI_init, then BULKI_ENTITY for the
 * key and the value and BULKI_put per pair, BULKI_serialize, free. */
static void *pdc_encode(size_t *len, const bulki_doc *doc)
{
    BULKI *b = BULKI_init(NFIELDS);
    for (size_t i = 0; i < doc->npairs; i++) {
        const bulki_value *k = &doc->pairs[i].key, *v = &doc->pairs[i].value;
        /* strings are NUL-terminated in the record: PDC takes strlen + 1 */
        pdc_put(b, BULKI_ENTITY((void *)k->u.data, 1, PDC_STRING, PDC_CLS_ITEM),
                BULKI_ENTITY((void *)v->u.data, v->count, (pdc_c_var_type_t)v->type,
                             (pdc_c_var_class_t)v->cls));
    }
    void *buf = BULKI_serialize(b, len);
    pdcs_free(b);
    return buf;
}

/* Read field f from PDC's decoded value entity; 0 or -1. */
static int pdc_field(struct bench_record *out, enum field f, const BULKI_Entity *e)
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

static int pdc_by_key(struct bench_record *out, void *buf, BULKI_Entity **keys)
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

static int pdc_one_pass(struct bench_record *out, void *buf)
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
    struct bench_record rec;        /* the record encoded; obj_id varies */
    uint64_t base_id;
    size_t n;
    uint8_t *ck_buf;          /* pdc-ckpt's output, and the input of decodes */
    size_t ck_cap, len;
    BULKI_Entity *keys[NFIELDS];
    bulki_pair pairs[NFIELDS]; /* the record's description, for PDC's encode */
    bulki_doc doc;
    uint64_t sum;             /* of everything produced, printed */
    int failed;
};

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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
        uint8_t *buf = pdc_encode(&len, &b->doc);
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

/* One decode phase: n decodes of the record by `dec`, each checked and
 * summed. Inlined into each phase_* function, so that each phase is its
 * own function for callgrind and the loop is written once. */
typedef int (*decode_fn)(struct bench_record *out, struct bench *b);
__attribute__((always_inline)) static inline void decode_phase(struct bench *b, decode_fn dec,
                                                              const char *what)
{
    struct bench_record out;
    for (size_t i = 0; i < b->n; i++) {
        if (dec(&out, b) != 0) {
            fail(b, what);
            return;
        }
        b->sum += bench_record_checksum(&out);
    }
}

static int dec_pdc_by_key(struct bench_record *out, struct bench *b)
{
    return pdc_by_key(out, b->ck_buf, b->keys);
}
static int dec_pdc_one_pass(struct bench_record *out, struct bench *b)
{
    return pdc_one_pass(out, b->ck_buf);
}
static int dec_ck_by_key(struct bench_record *out, struct bench *b)
{
    return ck_by_key(out, b->ck_buf, b->len);
}
static int dec_ck_one_pass(struct bench_record *out, struct bench *b)
{
    return ck_one_pass(out, b->ck_buf, b->len);
}
static int dec_ck_by_key_walk(struct bench_record *out, struct bench *b)
{
    return ck_by_key_walk(out, b->ck_buf, b->len);
}
static int dec_ck_one_pass_next(struct bench_record *out, struct bench *b)
{
    return ck_one_pass_next(out, b->ck_buf, b->len);
}

NOINLINE static void phase_pdc_by_key(struct bench *b)
{
    decode_phase(b, dec_pdc_by_key, "PDC decode by key");
}
NOINLINE static void phase_ck_by_key(struct bench *b)
{
    decode_phase(b, dec_ck_by_key, "pdc-ckpt decode by key");
}
NOINLINE static void phase_ck_by_key_walk(struct bench *b)
{
    decode_phase(b, dec_ck_by_key_walk, "pdc-ckpt decode by key (walk)");
}
NOINLINE static void phase_pdc_one_pass(struct bench *b)
{
    decode_phase(b, dec_pdc_one_pass, "PDC one-pass decode");
}
NOINLINE static void phase_ck_one_pass(struct bench *b)
{
    decode_phase(b, dec_ck_one_pass, "pdc-ckpt one-pass decode");
}
NOINLINE static void phase_ck_one_pass_next(struct bench *b)
{
    decode_phase(b, dec_ck_one_pass_next, "pdc-ckpt one-pass decode (map_next)");
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
    struct bench_record back;
    uint8_t *p = pdc_encode(&plen, &b->doc);
    int ok = p != NULL && ck_encode(&clen, b->ck_buf, b->ck_cap, &b->rec) == 0 &&
             plen == clen && memcmp(p, b->ck_buf, clen) == 0;
    free(p);
    if (!ok) {
        fprintf(stderr, PROG ": PDC's and pdc-ckpt's encodings of the record differ\n");
        return -1;
    }
    b->len = clen;
    int (*const ck[4])(struct bench_record *, const uint8_t *, size_t) = {
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



static void usage(FILE *f)
{
    fprintf(f, "usage: " PROG " [-n RECORDS] [-r RUNS] | -h | --help\n"
               "PDC's BULKI serializer against pdc-ckpt's codec on a 10-key object record:\n"
               "encode, decode by key, one-pass decode; RECORDS per run (default 10000),\n"
               "RUNS runs (default 7); CPU time, medians and ratios.\n");
}

int main(int argc, char **argv)
{
    size_t runs = 7;
    struct bench b = {.n = 10000};
    int status = 1;
    double *t[NOPS][2] = {{NULL}};
    int rc = bench_args(argc, argv, PROG, usage, &b.n, &runs);
    if (rc >= 0)
        return rc;

    bench_record_sample(&b.rec);
    bench_record_describe(&b.doc, b.pairs, &b.rec);
    if (bulki_doc_encoded_len(&b.ck_cap, &b.doc) != 0 ||
        (b.ck_buf = malloc(b.ck_cap)) == NULL) {
        fprintf(stderr, PROG ": setup failed\n");
        goto done;
    }
    for (int f = 0; f < NFIELDS; f++)
        b.keys[f] = BULKI_ENTITY((void *)bench_field_name[f], 1, PDC_STRING, PDC_CLS_ITEM);
    for (int o = 0; o < NOPS; o++)
        for (int s = 0; s < 2; s++)
            if ((t[o][s] = calloc(runs, sizeof(double))) == NULL) {
                fprintf(stderr, PROG ": out of memory\n");
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
        double ck = bench_median(t[o][1], runs);
        if (phases[o][0] == NULL) {
            printf("%-14s %20s %10.1f (%7.1f) %10s\n", op_name[o], "-", ck, t[o][1][0], "-");
            continue;
        }
        double pdc = bench_median(t[o][0], runs);
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
