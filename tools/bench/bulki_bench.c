/*
 * bulki-bench - encode and decode throughput of the BULKI codec on a
 * typical PDC object record (10 keys: ids, names, a dims array).
 *
 *   bulki-bench [-n RECORDS] [-r RUNS]
 *
 * Each run encodes RECORDS records (bulki_encode_doc into a reused buffer,
 * obj_id changing every time), then decodes RECORDS records
 * (bulki_decode_doc, then every field fetched by key with bulki_map_get and
 * read with its typed getter), then, for comparison, runs bulki_decode_doc
 * alone RECORDS times. Prints, for each, the median and the min/max records
 * per second over the RUNS runs (CLOCK_MONOTONIC), and a checksum of
 * everything produced so the work cannot be optimized away.
 * Defaults: 1,000,000 records, 5 runs. Exit 0, 1 on a codec error, 2 on
 * bad usage.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_record.h"
#include "bench_util.h"
#include "bulki.h"

#define PROG "bulki-bench"


#define NFIELDS BENCH_NFIELDS


/* Field lookup: by bulki_map_get (a walk from the first pair per field),
 * or, with onepass, from the pairs collected in one bulki_map_next walk
 * (what pdc-ckpt's record decoders do). */
struct fields {
    bulki_map m;
    int onepass, n;
    const char *key[NFIELDS];
    size_t klen[NFIELDS];
    bulki_ent val[NFIELDS];
};

static int field(struct fields *f, const char *key, bulki_ent *e)
{
    if (!f->onepass)
        return bulki_map_get(e, &f->m, key);
    size_t kl = strlen(key);
    for (int i = 0; i < f->n; i++)
        if (f->klen[i] == kl && memcmp(f->key[i], key, kl) == 0) {
            *e = f->val[i];
            return 0;
        }
    return BULKI_E_NOTFOUND;
}

/* Decode buf and fetch every field into *out; 0 or a BULKI_E* code. */
static int load(struct bench_record *out, const uint8_t *buf, size_t len, int onepass)
{
    struct fields f;
    bulki_map_iter it;
    bulki_ent e, k;
    const char *s;
    size_t slen;
    int64_t v;
    int rc;

    if ((rc = bulki_decode_doc(&f.m, buf, len, NULL)) != 0)
        return rc;
    f.onepass = onepass;
    f.n = 0;
    if (onepass) {
        bulki_map_iter_init(&it, &f.m);
        while (f.n < NFIELDS && (rc = bulki_map_next(&k, &e, &it)) == 1) {
            f.key[f.n] = (const char *)k.payload;
            f.klen[f.n] = k.payload_len;
            f.val[f.n++] = e;
        }
        if (rc < 0)
            return rc;
    }
#define GET(key) \
    if ((rc = field(&f, key, &e)) != 0) \
        return rc
#define GET_I32(key, dst)                           \
    GET(key);                                       \
    if ((rc = bulki_ent_i64(&v, &e)) != 0)          \
        return rc;                                  \
    if (v < INT32_MIN || v > INT32_MAX)             \
        return BULKI_E_RANGE;                       \
    (dst) = (int32_t)v
    GET("obj_id");
    if ((rc = bulki_ent_u64(&out->obj_id, &e)) != 0)
        return rc;
    GET("obj_name");
    if ((rc = bulki_ent_str(&s, &slen, &e)) != 0)
        return rc;
    if (slen >= sizeof out->obj_name)
        return BULKI_E_RANGE;
    memcpy(out->obj_name, s, slen + 1);
    GET("cont_id");
    if ((rc = bulki_ent_u64(&out->cont_id, &e)) != 0)
        return rc;
    GET_I32("user_id", out->user_id);
    GET("app_name");
    if ((rc = bulki_ent_str(&s, &slen, &e)) != 0)
        return rc;
    if (slen >= sizeof out->app_name)
        return BULKI_E_RANGE;
    memcpy(out->app_name, s, slen + 1);
    GET_I32("time_step", out->time_step);
    GET_I32("data_type", out->data_type);
    GET_I32("ndim", out->ndim);
    GET("dims");
    for (uint64_t i = 0; i < 3; i++)
        if ((rc = bulki_ent_elem_u64(&out->dims[i], &e, i)) != 0)
            return rc;
    GET("create_time");
    if ((rc = bulki_ent_i64(&out->create_time, &e)) != 0)
        return rc;
#undef GET
#undef GET_I32
    return 0;
}


static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}



static void report(const char *what, double *rate, size_t runs, size_t bytes)
{
    double med = bench_median(rate, runs); /* sorts: rate[0] min, rate[runs-1] max */
    printf("%-15s median %8.3f M records/s  (min %.3f, max %.3f)  %6.1f ns/record  %7.1f MB/s\n",
           what, med / 1e6, rate[0] / 1e6, rate[runs - 1] / 1e6, 1e9 / med,
           med * (double)bytes / 1e6);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: " PROG " [-n RECORDS] [-r RUNS] | -h | --help\n"
               "encode and decode RECORDS typical PDC object records (default 1000000),\n"
               "RUNS times (default 5); print median and min/max records/s.\n");
}


int main(int argc, char **argv)
{
    size_t n = 1000000, runs = 5;
    int rc = bench_args(argc, argv, PROG, usage, &n, &runs);
    if (rc >= 0)
        return rc;

    struct bench_record rec;
    bench_record_sample(&rec);
    bulki_pair pairs[NFIELDS];
    bulki_doc doc;
    bench_record_describe(&doc, pairs, &rec);

    size_t cap = 0, len = 0;
    rc = bulki_doc_encoded_len(&cap, &doc);
    uint8_t *buf = malloc(cap);
    double *enc_rate = malloc(runs * sizeof *enc_rate);
    double *dec_rate = malloc(runs * sizeof *dec_rate);
    double *val_rate = malloc(runs * sizeof *val_rate);
    double *one_rate = malloc(runs * sizeof *one_rate);
    if (rc != 0 || buf == NULL || enc_rate == NULL || dec_rate == NULL || val_rate == NULL ||
        one_rate == NULL) {
        fprintf(stderr, PROG ": setup failed: %s\n", rc ? bulki_strerror(rc) : "out of memory");
        return 1;
    }

    /* the record survives a round trip */
    struct bench_record back;
    memset(&back, 0, sizeof back);
    rc = bulki_encode_doc(&len, buf, cap, &doc);
    if (rc == 0)
        rc = load(&back, buf, len, 0);
    if (rc == 0 && memcmp(&back, &rec, sizeof rec) == 0) {
        memset(&back, 0, sizeof back);
        rc = load(&back, buf, len, 1);
    }
    if (rc != 0 || memcmp(&back, &rec, sizeof rec) != 0) {
        fprintf(stderr, PROG ": round trip failed: %s\n",
                rc ? bulki_strerror(rc) : "fields differ");
        return 1;
    }

    uint64_t sum = 0;
    const uint64_t base_id = rec.obj_id;
    for (size_t r = 0; r < runs; r++) {
        double t0 = now();
        for (size_t i = 0; i < n; i++) {
            rec.obj_id = base_id + i; /* a different record each time */
            rc = bulki_encode_doc(&len, buf, cap, &doc);
            if (rc != 0) {
                fprintf(stderr, PROG ": encode: %s\n", bulki_strerror(rc));
                return 1;
            }
            sum += len + buf[len - 1] + buf[9];
        }
        double t1 = now();
        for (size_t i = 0; i < n; i++) {
            rc = load(&back, buf, len, 0);
            if (rc != 0) {
                fprintf(stderr, PROG ": decode: %s\n", bulki_strerror(rc));
                return 1;
            }
            sum += bench_record_checksum(&back);
        }
        double t2 = now();
        for (size_t i = 0; i < n; i++) {
            bulki_map m;
            rc = bulki_decode_doc(&m, buf, len, NULL);
            if (rc != 0) {
                fprintf(stderr, PROG ": decode: %s\n", bulki_strerror(rc));
                return 1;
            }
            sum += m.npairs + m.end;
        }
        double t3 = now();
        for (size_t i = 0; i < n; i++) {
            rc = load(&back, buf, len, 1);
            if (rc != 0) {
                fprintf(stderr, PROG ": decode: %s\n", bulki_strerror(rc));
                return 1;
            }
            sum += bench_record_checksum(&back);
        }
        double t4 = now();
        one_rate[r] = (double)n / (t4 - t3 > 0 ? t4 - t3 : 1e-9);
        enc_rate[r] = (double)n / (t1 - t0 > 0 ? t1 - t0 : 1e-9);
        dec_rate[r] = (double)n / (t2 - t1 > 0 ? t2 - t1 : 1e-9);
        val_rate[r] = (double)n / (t3 - t2 > 0 ? t3 - t2 : 1e-9);
    }

    printf(PROG ": %d-key PDC object record, %zu bytes encoded; %zu records x %zu runs\n",
           NFIELDS, len, n, runs);
    report("encode", enc_rate, runs, len);
    report("decode", dec_rate, runs, len);
    report("decode one pass", one_rate, runs, len);
    report("  validate only", val_rate, runs, len);
    printf("(decode = bulki_decode_doc + bulki_map_get and a typed getter per field;\n"
           " decode one pass = bulki_decode_doc + one bulki_map_next walk collecting the\n"
           " pairs, then a getter per field, as pdc-ckpt's record decoders do;\n"
           " validate only = bulki_decode_doc alone, for comparison)\n");
    printf("checksum %016" PRIx64 "\n", sum);
    free(buf);
    free(enc_rate);
    free(dec_rate);
    free(val_rate);
    free(one_rate);
    return 0;
}
