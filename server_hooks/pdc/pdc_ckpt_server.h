/*
 * pdc_ckpt_server.h - what PDC's own server (hpc-io/pdc 2e5de75a, patched
 * with pdc-2e5de75a.patch) calls into pdc-ckpt. The patch includes this
 * header and calls these functions under `#ifdef PDC_CKPT`; the code lives
 * in pdc_ckpt_server.c, which PDC's CMake compiles into pdc_server_lib.
 *
 * Modes (read once at start-up, PDC_Server_init):
 *   PDC_CKPT=off            the store is not opened; every function here is
 *                           a no-op or says "not handled", so PDC runs its
 *                           own fwrite checkpoint/restart unchanged.
 *   default                 every mutation is logged to the rank's store
 *                           ($PDC_TMPDIR/pdc-ckpt, PDC_CKPT_DIR to move it);
 *                           close_server commits and closes the store.
 *   PDC_CKPT_RESTART=map    (default) `pdc_server.exe restart` opens the
 *                           store and is ready; records are faulted into
 *                           PDC's tables on first lookup.
 *   PDC_CKPT_RESTART=rebuild  restart refills PDC's tables at start.
 *
 * Every function runs on the RPC thread of PDC's single-threaded build
 * (ENABLE_MULTITHREAD off, as PDC's CI builds it); none takes PDC's
 * table mutexes. Errors of the store are logged to stderr with the
 * function that failed; the server keeps serving.
 */
#ifndef PDC_CKPT_SERVER_H
#define PDC_CKPT_SERVER_H

#include <stdint.h>

#include "pdc_client_server_common.h"
#include "pdc_server_metadata.h"

/* Start-up, in PDC_Server_init, where PDC restarts or initialises its
 * hash tables. Returns 1 if the store took over (the tables are initialised
 * and, on restart, filled or set to fault in), 0 if PDC must do its own
 * start (PDC_CKPT=off, or a fresh start: PDC fills its empty tables), -1 if a
 * start or restart was refused (logged; the server must not serve). */
int PDC_ckpt_start(int is_restart);
/* 1 if PDC_ckpt_start refused to start (a bad PDC_CKPT_* setting, a store
 * that cannot be opened, a fresh start over an existing store, a failed
 * restart; the reason is logged): the server must exit non-zero. */
int PDC_ckpt_refused(void);
/* 1 if the store is open. */
int PDC_ckpt_enabled(void);
/* PDC_Server_gen_obj_id: a new id from the store's sequence. Returns 1 and
 * sets *id, or 0 when the store is off (use PDC's counter). */
int PDC_ckpt_new_id(uint64_t *id);

/* Mutations: call after the in-memory change succeeded. */
void PDC_ckpt_obj_create(const pdc_metadata_t *m);
void PDC_ckpt_obj_update(const pdc_metadata_t *m);
void PDC_ckpt_obj_delete(uint64_t obj_id);
void PDC_ckpt_kvtag_put(uint64_t owner, const pdc_kvtag_t *tag);
void PDC_ckpt_kvtag_delete(uint64_t owner, const char *name);
/* Create, or replace after a legacy tag append. */
void PDC_ckpt_cont_put(const pdc_cont_hash_table_entry_t *c);
void PDC_ckpt_cont_delete(uint64_t cont_id);
void PDC_ckpt_cont_add_objs(uint64_t cont_id, const uint64_t *obj_ids, int n);
void PDC_ckpt_cont_remove_objs(uint64_t cont_id, const uint64_t *obj_ids, int n);
void PDC_ckpt_region_put(uint64_t obj_id, const region_list_t *r);
/* PDC's data-server region table: a region appended to an object's
 * region_storage_head (PDC_Server_data_write_out). */
void PDC_ckpt_data_region_put(uint64_t obj_id, const region_list_t *r);
/* PDC's transfer-request table: a region appended by
 * transfer_request_metadata_query_append. */
void PDC_ckpt_xfer_region_put(uint64_t obj_id, int ndim, const uint64_t *start, const uint64_t *count,
                              uint64_t unit, uint32_t data_server_id);

/* Data server reads (PDC_Server_data_read_from): 1 if every requested
 * element lies in a region of the object's data-server table (always 1
 * with the store off), 0 if the read must be refused. */
int PDC_ckpt_read_covered(const data_server_region_t *d, const struct pdc_region_info *ri);
/* A refused read's transfer request: its wait is answered with an error
 * (take: 1 once if the request was refused). */
void PDC_ckpt_request_failed(uint64_t transfer_request_id);
int PDC_ckpt_request_take_failed(uint64_t transfer_request_id);

/* Before a mutation (object or container create, object delete, kvtag
 * put/delete, region write): 1 if it may go ahead, 0 if it must be refused
 * to the client because the store's commits fail (full disk, I/O error,
 * damaged page; logged) and a commit tried now failed again. */
int PDC_ckpt_writable(void);
/* 1 if close could not persist the state (logged with the number of
 * mutations lost): close_server and the server exit non-zero. */
int PDC_ckpt_close_failed(void);

/* Periodic and on-request checkpoint (PDC_Server_checkpoint): returns 1 if
 * the store committed (or failed, logged), 0 when the store is off. */
int PDC_ckpt_checkpoint(void);
/* close_server (PDC_Server_set_close): commit, close the store, dump PDC's
 * IDIOMS index beside it. Returns 1 if handled, 0 when the store is off. */
int PDC_ckpt_close(void);

/* Map-form restart: make the records a lookup needs present in PDC's
 * tables. No-ops unless the server restarted in map form. */
void PDC_ckpt_fault_id(uint64_t id);                     /* object or container */
void PDC_ckpt_fault_obj_name(const char *name, int32_t time_step);
void PDC_ckpt_fault_cont_name(const char *name);
void PDC_ckpt_fault_all(void);                            /* whole-table scans */

/* kvtag queries (PDC_Server_query_kvtag_someta). After a map-form restart,
 * the objects not in PDC's tables yet are answered from the store's tag
 * index: every object that carries a kvtag named in->name and is neither in
 * PDC's tables nor deleted since the restart is matched with `match` (PDC's
 * _is_matching_kvtag, so PDC's rules: type, exact or wildcard string
 * pattern, number compare) against its kvtag in the store, and appended to
 * (*obj_ids)[*n ...] (grown by doubling *alloc_size, as PDC's scan does).
 * PDC's scan of its tables then adds the objects they hold; no object is in
 * both. A tag name pattern (leading or trailing '*') is not in the index:
 * then everything is faulted in and nothing appended. No-op outside the map
 * form, or once everything was faulted in. */
typedef pbool_t (*PDC_ckpt_kvtag_match_t)(pdc_kvtag_t *in, pdc_kvtag_t *kvtag);
void PDC_ckpt_query_kvtag(pdc_kvtag_t *in, PDC_ckpt_kvtag_match_t match, uint32_t *n, uint64_t **obj_ids,
                          uint64_t *alloc_size);

/* IDIOMS (DART): an entry PDC_Server_dart_perform_one_server inserted
 * (insert 1) into or deleted (insert 0) from PDC's index, after the index
 * changed. A restart with the store restores the index from these entries
 * (PDC's own dump and recovery are not used). */
void PDC_ckpt_dart_log(int insert, const char *key, const void *value, uint32_t value_len, int32_t type,
                       uint64_t obj_ref, uint32_t vnode_id, uint32_t src_client_id, int is_suffix);

#endif /* PDC_CKPT_SERVER_H */
