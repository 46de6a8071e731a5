/*
 * ckpt_export.h - CKPT_API marks the public API of pdc-ckpt's libraries.
 *
 * The libraries are compiled with hidden visibility (-fvisibility=hidden):
 * only declarations marked CKPT_API are exported from the shared libraries:
 * the public headers (bulki.h, ckpt_store.h, ckpt_hooks.h, ckpt_hooks_mpi.h)
 * and the few internals one library calls in another (ckpt_fs.h,
 * hooks_int.h). Every exported name starts with ckpt_ or bulki_ (the ctest
 * install_exported_symbols checks the built libraries). Static linking is
 * unaffected.
 */
#ifndef PDC_CKPT_EXPORT_H
#define PDC_CKPT_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define CKPT_API __attribute__((visibility("default")))
#else
#define CKPT_API
#endif

#endif
