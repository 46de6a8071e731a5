/*
 * ckpt_fs.h - the few filesystem steps the store, the hooks (shared copies,
 * re-homing) and the tools share. Each returns 0 or an errno value.
 */
#ifndef PDC_CKPT_FS_H
#define PDC_CKPT_FS_H

#include "ckpt_export.h"

/* Exported (CKPT_API) because libckpt_hooks and libckpt_hooks_mpi call them;
 * not an installed header. */

/* mkdir -p; what it creates is owner-only (0700). ENOTDIR if path ends up
 * being something other than a directory. */
CKPT_API int ckpt_fs_mkdirs(const char *path);
/* rm -rf, not following symlinks; 0 if path does not exist. */
CKPT_API int ckpt_fs_rmtree(const char *path);
/* fsync a file or a directory (for renames to be durable). */
CKPT_API int ckpt_fs_fsync(const char *path);

#endif
