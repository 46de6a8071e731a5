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
