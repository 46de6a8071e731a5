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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bulki.h"

#define PROG "bulki-bench"

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

#define NFIELDS 10

/* The description of r; pairs[] must have NFIELDS entries. */
static void describe(bulki_doc *doc, bulki_pair *pairs, const struct record *r)
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
static int load(struct record *out, const uint8_t *buf, size_t len, int onepass)
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
        while (f.n < NFIELDS && (rc = bulki_map_next(&it, &k, &e)) == 1) {
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

static uint64_t checksum_record(const struct record *r)
{
    uint64_t h = r->obj_id ^ (r->cont_id << 1) ^ (uint64_t)r->create_time;
    h += (uint64_t)(uint32_t)r->user_id + (uint64_t)(uint32_t)r->time_step +
         (uint64_t)(uint32_t)r->data_type + (uint64_t)(uint32_t)r->ndim;
    h += r->dims[0] + r->dims[1] * 3 + r->dims[2] * 7;
    h += (uint8_t)r->obj_name[0] + strlen(r->obj_name) + strlen(r->app_name);
    return h;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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

static void report(const char *what, double *rate, size_t runs, size_t bytes)
{
    double med = median(rate, runs); /* sorts: rate[0] min, rate[runs-1] max */
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
    size_t n = 1000000, runs = 5;
    int opt;
    static const struct option lo[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    while ((opt = getopt_long(argc, argv, "n:r:h", lo, NULL)) != -1) {
        switch (opt) {
        case 'n':
            if (parse_count(optarg, &n) != 0) {
                fprintf(stderr, PROG ": -n needs a positive integer, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'r':
            if (parse_count(optarg, &runs) != 0) {
                fprintf(stderr, PROG ": -r needs a positive integer, not '%s'\n", optarg);
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
        fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }

    struct record rec = {
        .obj_id = 1000001,
        .obj_name = "/climate/run42/temperature_0001",
        .cont_id = 1000000,
        .user_id = 1001,
        .app_name = "vpic",
        .time_step = 17,
        .data_type = 9,
        .ndim = 3,
        .dims = {1024, 2048, 4096},
        .create_time = 1717171717000000LL,
    };
    bulki_pair pairs[NFIELDS];
    bulki_doc doc;
    describe(&doc, pairs, &rec);

    size_t cap = 0, len = 0;
    int rc = bulki_doc_encoded_len(&cap, &doc);
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
    struct record back;
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
            sum += checksum_record(&back);
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
            sum += checksum_record(&back);
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
