/*
 * ckpt-workload - the model PDC server on every MPI rank against this
 * project's store: write, restart, verify, demo (workload_main.c says how;
 * docs/TOOLS.md). The installed program: it links the libraries a server
 * links and nothing of the benchmarks (ckpt-bench-workload, tools/bench/,
 * is the same program with the benchmark's persistence methods).
 */
#include "workload_cli.h"

int main(int argc, char **argv)
{
    return wl_main(argc, argv, "ckpt-workload", NULL);
}
