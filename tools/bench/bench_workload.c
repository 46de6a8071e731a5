/*
 * ckpt-bench-workload - ckpt-workload (tools/model/workload_cli.h) with the
 * benchmark's persistence methods behind `write|restart --method NAME`
 * (methods.h): what bin/ckpt-bench runs. Built with the benchmarks, never
 * installed: its methods link SQLite and RocksDB.
 */
#include "methods.h"

int main(int argc, char **argv)
{
    return wl_main(argc, argv, "ckpt-bench-workload", &bench_methods);
}
