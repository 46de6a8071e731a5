/*
 * pdc_serde_util.c - a quiet free for PDC's BULKI structures (see
 * pdc_serde_util.h). Mirrors PDC's BULKI_free / BULKI_Entity_free, which
 * print a line per entity they free.
 */
#include "pdc_serde_util.h"

#include <stdlib.h>

static void bulki_internals_free(BULKI *b);

/* What an entity owns (not the entity itself). */
static void entity_internals_free(BULKI_Entity *e)
{
    if (e->pdc_type == PDC_BULKI && e->pdc_class == PDC_CLS_ITEM) {
        pdcs_free(e->data);
        return;
    }
    if (e->pdc_type == PDC_BULKI && e->data != NULL)
        for (uint64_t i = 0; i < e->count; i++)
            bulki_internals_free((BULKI *)e->data + i);
    else if (e->pdc_type == PDC_BULKI_ENT && e->data != NULL)
        for (uint64_t i = 0; i < e->count; i++)
            entity_internals_free((BULKI_Entity *)e->data + i);
    free(e->data);
}

static void bulki_internals_free(BULKI *b)
{
    for (uint64_t i = 0; i < b->numKeys; i++) {
        entity_internals_free(&b->header->keys[i]);
        entity_internals_free(&b->data->values[i]);
    }
    free(b->header->keys);
    free(b->header);
    free(b->data->values);
    free(b->data);
}

void pdcs_free(BULKI *b)
{
    if (b == NULL)
        return;
    bulki_internals_free(b);
    free(b);
}
