/*
 * bench_record.h - the typical PDC object record the codec benchmarks
 * encode and decode (bulki-bench, pdc-serde-bench): 10 keys, ids, two
 * names, four int32s, a 3-element dims array, a timestamp; 254 bytes as
 * BULKI.
 */
#ifndef PDC_CKPT_BENCH_RECORD_H
#define PDC_CKPT_BENCH_RECORD_H

#include <stdint.h>

#include "bulki_fast.h" /* bulki.h and the index API's inline paths */

#define BENCH_NFIELDS 10

struct bench_record {
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

/* The keys, in encoding order, and their lengths. */
extern const char *const bench_field_name[BENCH_NFIELDS];
extern const size_t bench_field_len[BENCH_NFIELDS];

/* The record both benchmarks use. */
void bench_record_sample(struct bench_record *r);
/* The BULKI description of r; pairs[] has BENCH_NFIELDS entries and, like
 * doc, points into r. */
void bench_record_describe(bulki_doc *doc, bulki_pair *pairs, const struct bench_record *r);
/* A checksum of every number and the strings' first bytes: O(1), so that
 * a benchmark's loop has a result without adding much to it. */
uint64_t bench_record_checksum(const struct bench_record *r);

#endif
