/*
 * ckpt_hooks_mpi.h - the collective (MPI) part of the hooks: restart on any
 * number of server ranks. Kept apart from ckpt_hooks.h so that code that
 * does not use MPI does not need mpi.h. docs/ELASTIC.md has the protocol.
 */
#ifndef PDC_CKPT_HOOKS_MPI_H
#define PDC_CKPT_HOOKS_MPI_H

#include "ckpt_export.h"

#include <mpi.h>

#include "ckpt_hooks.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ckpt_rehome_stats {
    int old_nranks;          /* rank count the store was written with */
    int new_nranks;          /* rank count now (the communicator's size) */
    uint64_t records;        /* records read from the old layout (all ranks) */
    uint64_t moved;          /* of them, records now on another rank (all ranks) */
    double seconds;          /* re-homing time, max over ranks (0 if none) */
    int recovered;           /* an interrupted re-homing was rolled forward (1) or back (-1) */
};

/*
 * Collective over comm: restart this rank (opts->rank must be the rank in
 * comm, opts->nranks its size) from the store at opts->store_root,
 * whatever rank count wrote it.
 *  - No store there yet (no rank directory under the root): a first start
 *    (ckpt_hooks_open on every rank), so a server can always call this.
 *  - Same count: a map restart (ckpt_hooks_restart_map).
 *  - Another count: every record (objects, kvtags, containers with members
 *    and kvtags, regions) moves to its home under the new count by PDC's
 *    routing rule, sent between ranks with MPI; each rank reads the old
 *    environments assigned to it through the map. Ids keep their values;
 *    an id directory lets an id-based lookup find the record's new home
 *    (ckpt_hooks_id_home); each rank's sequence continues above every id
 *    its range ever handed out. The new layout replaces the old one only
 *    after it is committed and durable; a crash at any point leaves a store
 *    that restarts, on either count, and the next restart finishes or
 *    undoes the interrupted re-homing.
 * Before anything changes, rank 0 takes the store's lock (ckpt_root_lock)
 * and, for an existing store, refuses a root holding entries that belong
 * to no rank of it (ckpt_root_check: CKPT_E_EXISTS naming them); a
 * re-homing keeps the lock until the new layout is in place, so it is
 * refused (CKPT_E_BUSY, naming the writer's pid) while any process has a
 * rank open for writing. Every rank returns the same error.
 * On success *out is the rank's hooks handle, open for logging.
 */
CKPT_API int ckpt_hooks_restart_elastic(ckpt_hooks **out, const struct ckpt_hooks_opts *opts, MPI_Comm comm,
                                        struct ckpt_rehome_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
