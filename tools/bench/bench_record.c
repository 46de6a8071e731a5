/*
 * bench_record.c - see bench_record.h.
 */
#include "bench_record.h"

#include <string.h>

const char *const bench_field_name[BENCH_NFIELDS] = {
    "obj_id", "obj_name", "cont_id", "user_id", "app_name",
    "time_step", "data_type", "ndim", "dims", "create_time"};
const size_t bench_field_len[BENCH_NFIELDS] = {6, 8, 7, 7, 8, 9, 9, 4, 4, 11};

void bench_record_sample(struct bench_record *r)
{
    static const struct bench_record sample = {
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
    *r = sample;
}

void bench_record_describe(bulki_doc *doc, bulki_pair *pairs, const struct bench_record *r)
{
#define KEY(i) BULKI_V_STRN(bench_field_name[i], bench_field_len[i])
    pairs[0] = (bulki_pair){KEY(0), BULKI_V_ITEM(BULKI_T_UINT64, &r->obj_id)};
    pairs[1] = (bulki_pair){KEY(1), BULKI_V_STRN(r->obj_name, strlen(r->obj_name))};
    pairs[2] = (bulki_pair){KEY(2), BULKI_V_ITEM(BULKI_T_UINT64, &r->cont_id)};
    pairs[3] = (bulki_pair){KEY(3), BULKI_V_ITEM(BULKI_T_INT32, &r->user_id)};
    pairs[4] = (bulki_pair){KEY(4), BULKI_V_STRN(r->app_name, strlen(r->app_name))};
    pairs[5] = (bulki_pair){KEY(5), BULKI_V_ITEM(BULKI_T_INT32, &r->time_step)};
    pairs[6] = (bulki_pair){KEY(6), BULKI_V_ITEM(BULKI_T_INT32, &r->data_type)};
    pairs[7] = (bulki_pair){KEY(7), BULKI_V_ITEM(BULKI_T_INT32, &r->ndim)};
    pairs[8] = (bulki_pair){KEY(8), BULKI_V_ARRAY(BULKI_T_UINT64, r->dims, 3)};
    pairs[9] = (bulki_pair){KEY(9), BULKI_V_ITEM(BULKI_T_INT64, &r->create_time)};
#undef KEY
    doc->npairs = BENCH_NFIELDS;
    doc->pairs = pairs;
}

uint64_t bench_record_checksum(const struct bench_record *r)
{
    uint64_t h = r->obj_id ^ (r->cont_id << 1) ^ (uint64_t)r->create_time;
    h += (uint64_t)(uint32_t)r->user_id + (uint64_t)(uint32_t)r->time_step +
         (uint64_t)(uint32_t)r->data_type + (uint64_t)(uint32_t)r->ndim;
    h += r->dims[0] + r->dims[1] * 3 + r->dims[2] * 7;
    return h + (uint8_t)r->obj_name[0] + (uint8_t)r->obj_name[1] + (uint8_t)r->app_name[0];
}
