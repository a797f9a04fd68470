/*
 * examples/cholesky/main.c - parex-cholesky: tiled Cholesky factorization whose tile kernels
 * (single-threaded OpenBLAS) run as ops on the parex dependency engine.
 *
 *   parex-cholesky --n 4096 --tile 256 --engine per_device --workers 2 --json
 *   parex-cholesky --matrix ../shared/data/matrices/bcsstk09.mtx --tile 128
 *   PX_PROFILE=trace.json parex-cholesky --n 2048 --tile 256    (timeline for Perfetto)
 */

#include <stdio.h>
#include <stdlib.h>

#include "chol_cli.h"

int main(int argc, char **argv)
{
    /* Tiles are the unit of parallelism: each BLAS call must stay on its worker's core. */
    chol_blas_single_thread();
    int rc = px_initialize(&argc, &argv);
    if (rc != PX_OK) {
        fprintf(stderr, "parex-cholesky: px_initialize: %s\n", px_strerror(rc));
        return CHOL_EXIT_USAGE;
    }
    chol_options o;
    chol_options_default(&o);
    int code;
    if (chol_parse_args(argc, argv, &o, stderr) != PX_OK) {
        code = CHOL_EXIT_USAGE;
    } else if (o.help) {
        chol_usage(stdout);
        code = CHOL_EXIT_OK;
    } else {
        code = chol_run(&o, stdout, stderr);
    }
    rc = px_finalize();
    if (rc != PX_OK) {
        fprintf(stderr, "parex-cholesky: px_finalize: %s\n", px_strerror(rc));
        if (code == CHOL_EXIT_OK)
            code = CHOL_EXIT_FAIL;
    }
    return code;
}
