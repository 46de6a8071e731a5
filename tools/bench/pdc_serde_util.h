/*
 * pdc_serde_util.h - helpers around PDC's own BULKI serializer (compiled
 * unchanged from PDC_CKPT_PDC_SOURCES, tools/bench/pdc_serde.cmake) for
 * pdc-serde-bench and the test that decodes pdc-ckpt's records with it.
 */
#ifndef PDC_CKPT_PDC_SERDE_UTIL_H
#define PDC_CKPT_PDC_SERDE_UTIL_H

#include "bulki_serde.h" /* PDC's: BULKI, BULKI_Entity, BULKI_deserialize, ... */

/* BULKI_free without its printing (it prints a line per entity): frees a
 * BULKI built by BULKI_init/BULKI_put or returned by BULKI_deserialize,
 * nested BULKIs and entity arrays included, and the struct itself.
 * free(NULL)-like: NULL is a no-op. What PDC's deserializer leaks itself
 * (one BULKI_Entity per entity it decodes) cannot be freed by anyone. */
void pdcs_free(BULKI *b);

#endif
