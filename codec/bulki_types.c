/*
 * bulki_types.c - the one table of BULKI type codes, names and widths, and
 * the error-code table. Codec, store and tools all read these.
 */
#include "bulki.h"
#include "bulki_int.h"

#include <string.h>

const struct bulki_type_info bulki_type_table[BULKI_NTYPES] = {
    {0, 0, BULKI_KIND_INVALID, NULL},
    {BULKI_T_SHORT, 2, BULKI_KIND_SIGNED, "PDC_SHORT"},
    {BULKI_T_INT, 4, BULKI_KIND_SIGNED, "PDC_INT"},
    {BULKI_T_UINT, 4, BULKI_KIND_UNSIGNED, "PDC_UINT"},
    {BULKI_T_LONG, 8, BULKI_KIND_SIGNED, "PDC_LONG"},
    {BULKI_T_INT8, 1, BULKI_KIND_SIGNED, "PDC_INT8"},
    {BULKI_T_UINT8, 1, BULKI_KIND_UNSIGNED, "PDC_UINT8"},
    {BULKI_T_INT16, 2, BULKI_KIND_SIGNED, "PDC_INT16"},
    {BULKI_T_UINT16, 2, BULKI_KIND_UNSIGNED, "PDC_UINT16"},
    {BULKI_T_INT32, 4, BULKI_KIND_SIGNED, "PDC_INT32"},
    {BULKI_T_UINT32, 4, BULKI_KIND_UNSIGNED, "PDC_UINT32"},
    {BULKI_T_INT64, 8, BULKI_KIND_SIGNED, "PDC_INT64"},
    {BULKI_T_UINT64, 8, BULKI_KIND_UNSIGNED, "PDC_UINT64"},
    {BULKI_T_FLOAT, 4, BULKI_KIND_FLOAT, "PDC_FLOAT"},
    {BULKI_T_DOUBLE, 8, BULKI_KIND_FLOAT, "PDC_DOUBLE"},
    {BULKI_T_CHAR, 1, BULKI_KIND_UNSIGNED, "PDC_CHAR"},
    {BULKI_T_STRING, 0, BULKI_KIND_STRING, "PDC_STRING"},
    {BULKI_T_BOOLEAN, 1, BULKI_KIND_BOOL, "PDC_BOOLEAN"},
    {BULKI_T_VOID_PTR, 8, BULKI_KIND_UNSIGNED, "PDC_VOID_PTR"},
    {BULKI_T_SIZE_T, 8, BULKI_KIND_UNSIGNED, "PDC_SIZE_T"},
    {BULKI_T_BULKI, 0, BULKI_KIND_NESTED, "PDC_BULKI"},
    {BULKI_T_BULKI_ENT, 0, BULKI_KIND_NESTED, "PDC_BULKI_ENT"},
};


/* Items (class 0) at [code], arrays (class 1) at [code | 32]. */
#define FN(w) (BULKI_FAST_OK | (w))
#define FB (BULKI_FAST_OK | BULKI_FAST_BOOL | 1)
#define FS (BULKI_FAST_OK | BULKI_FAST_STR)
const uint8_t bulki_fast_tc[64] = {
    /* items: SHORT INT UINT LONG INT8 UINT8 INT16 UINT16 INT32 UINT32 INT64
     * UINT64 FLOAT DOUBLE CHAR STRING BOOLEAN VOID_PTR SIZE_T (BULKI,
     * BULKI_ENT: 0) */
    [1] = FN(2), [2] = FN(4), [3] = FN(4), [4] = FN(8), [5] = FN(1), [6] = FN(1),
    [7] = FN(2), [8] = FN(2), [9] = FN(4), [10] = FN(4), [11] = FN(8), [12] = FN(8),
    [13] = FN(4), [14] = FN(8), [15] = FN(1), [16] = FS, [17] = FB, [18] = FN(8),
    [19] = FN(8),
    /* arrays: the same widths; no string arrays in BULKI v0.1 */
    [32 + 1] = FN(2), [32 + 2] = FN(4), [32 + 3] = FN(4), [32 + 4] = FN(8),
    [32 + 5] = FN(1), [32 + 6] = FN(1), [32 + 7] = FN(2), [32 + 8] = FN(2),
    [32 + 9] = FN(4), [32 + 10] = FN(4), [32 + 11] = FN(8), [32 + 12] = FN(8),
    [32 + 13] = FN(4), [32 + 14] = FN(8), [32 + 15] = FN(1), [32 + 17] = FB,
    [32 + 18] = FN(8), [32 + 19] = FN(8),
};
#undef FN
#undef FB
#undef FS

/* Items only (class 0), by the whole type byte: entries 32..255 (arrays,
 * invalid classes) and the types without a fixed width (STRING,
 * BOOLEAN's 0/1 check, BULKI, BULKI_ENT) hold none. */
#define IH(code, width) ((18u + (width)) | (code) << 8 | 1u << 16)
#define NH BULKI_NO_HDR
#define NH8 NH, NH, NH, NH, NH, NH, NH, NH
#define NH32 NH8, NH8, NH8, NH8
const uint32_t bulki_item_hdr[256] = {
    NH,       IH(1, 2),  IH(2, 4),  IH(3, 4),  IH(4, 8),  IH(5, 1),  IH(6, 1),  IH(7, 2),
    IH(8, 2), IH(9, 4),  IH(10, 4), IH(11, 8), IH(12, 8), IH(13, 4), IH(14, 8), IH(15, 1),
    NH,       NH,        IH(18, 8), IH(19, 8), NH,        NH,        NH,        NH,
    NH,       NH,        NH,        NH,        NH,        NH,        NH,        NH,
    NH32, NH32, NH32, NH32, NH32, NH32, NH32,
};
#undef IH
#undef NH
#undef NH8
#undef NH32

const struct bulki_type_info *bulki_type_info(unsigned code)
{
    return bulki_ti(code);
}

unsigned bulki_type_by_name(const char *name)
{
    if (name == NULL)
        return 0;
    for (unsigned i = 1; i < BULKI_NTYPES; i++)
        if (strcmp(bulki_type_table[i].name, name) == 0)
            return i;
    return 0;
}

const char *bulki_strerror(int err)
{
    switch (err) {
#define BULKI_X_MSG(name, code, msg)                                           \
    case code:                                                                 \
        return msg;
        BULKI_ERRORS(BULKI_X_MSG)
#undef BULKI_X_MSG
    default:
        return "unknown BULKI error";
    }
}

const char *bulki_errname(int err)
{
    switch (err) {
#define BULKI_X_NAME(name, code, msg)                                          \
    case code:                                                                 \
        return #name;
        BULKI_ERRORS(BULKI_X_NAME)
#undef BULKI_X_NAME
    default:
        return "BULKI_E_UNKNOWN";
    }
}
