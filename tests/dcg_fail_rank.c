/* tests/dcg_fail_rank.c - helper of check_dcg (test_dcg_one_rank_failing_alone_aborts_the_job):
 * a failure that only one rank sees in the middle of dcg_solve must end the job, not leave the
 * other ranks waiting forever for its halo messages and allreduces.
 *
 * Run as `mpirun -np 2 dcg_fail_rank`: both ranks build the HPCG problem (8^3 per rank), then
 * the last rank shrinks its halo block from neighbour 0 by one value, so its first receive is
 * shorter than the message (MPI_ERR_TRUNCATE): that op fails with PX_EMPI on that rank only,
 * its later ops are skipped, and it never contributes to the allreduce the other rank waits
 * in. dcg_solve must then report "failed alone" and MPI_Abort the job (dcg.h). Should it
 * return instead, this program says so on stdout and exits 0 (check_dcg fails on that).
 *
 * With PX_DCG_FAIL=record the last rank instead opens a graph recording of its own before
 * dcg_solve (and leaves the halo alone), so that dcg_solve's recording of the iteration
 * (px_graph_begin: PX_EBUSY) fails on that rank only. The ranks agree on the recording before
 * the first iteration, so every rank must return that status (rank 0 with "another rank
 * failed to record its iteration"), not abort: each rank prints its line, exit 0.
 *
 * With PX_DCG_CG=pipelined the solve is the pipelined CG, whose start holds the first halo
 * exchange (dcg.c, pipe_setup): the truncation then fails that start on the last rank, before
 * the ranks agree to iterate, so every rank returns (rank 0 with "another rank failed to start
 * or record its iteration"); each rank prints its line, exit 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcg.h"
#include "parex.h"

int main(int argc, char **argv)
{
    if (px_mpi_init(&argc, &argv) != PX_OK || px_initialize(&argc, &argv) != PX_OK) {
        fprintf(stderr, "dcg_fail_rank: initialization failed\n");
        return 2;
    }
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cgp_part part;
    char err[256];
    if (cgp_hpcg(MPI_COMM_WORLD, 8, 8, 8, &part, err, sizeof err) != CGP_OK) {
        fprintf(stderr, "dcg_fail_rank: %s\n", err);
        return 2;
    }
    const char *fail = getenv("PX_DCG_FAIL");
    const int record = fail && strcmp(fail, "record") == 0;
    if (record && rank == size - 1 && px_graph_begin(px_engine_default()) != PX_OK) {
        fprintf(stderr, "dcg_fail_rank: px_graph_begin failed\n");
        return 2;
    }
    if (!record && rank == size - 1 && part.n_neighbors > 0 && part.recv_ptr[1] > 0)
        for (int k = 1; k <= part.n_neighbors; k++)
            part.recv_ptr[k] -= 1; /* block 0 one value short; the others shift down */
    cg_options o = {1e-8, 200, 0, 0.0, NULL};
    cg_result res;
    dcg_stats st;
    px_space *s = px_space_by_name("serial");
    /* PX_DCG_MODE=push takes the pushed iterations; else the recorded graph (the default). */
    const char *m = getenv("PX_DCG_MODE");
    dcg_params prm;
    prm.mode = m && strcmp(m, "push") == 0 ? DCG_PUSH : DCG_GRAPH;
    prm.interior_chunk = 0;
    prm.plain_dots = 0;
    prm.clock_every = 0; /* DCG_CLOCK_EVERY_DEFAULT */
    /* PX_DCG_CG=pipelined takes the pipelined CG, whose start (before the ranks agree to
     * iterate) holds the first exchange: the truncation then fails every rank alike */
    const char *v = getenv("PX_DCG_CG");
    prm.variant = v && strcmp(v, "pipelined") == 0 ? DCG_CG_PIPELINED : DCG_CG_PLAIN;
    const int rc = dcg_solve(s, MPI_COMM_WORLD, &part, &o, &prm, &res, &st);
    printf("dcg_fail_rank: rank %d: dcg_solve returned %s (%s)\n", rank, px_strerror(rc),
           res.message);
    fflush(stdout);
    if (record && rank == size - 1) {
        px_graph *g = NULL; /* end the helper's own (empty) recording */
        if (px_graph_end(px_engine_default(), &g) == PX_OK)
            (void)px_graph_destroy(g);
    }
    cgp_free(&part);
    px_finalize();
    px_mpi_finalize();
    return 0;
}
