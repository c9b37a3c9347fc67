/* Per-call CPU cost of an MPI tracer, free of scheduling noise: one rank sends to itself in a
 * loop (MPI_Irecv, MPI_Send, MPI_Wait: 3 calls per iteration), so no partner rank's scheduling
 * enters the measurement, and the loop's CPU time (CLOCK_PROCESS_CPUTIME_ID) is what the
 * library and the tracer spend. Run it with and without the tracer: the difference per call is
 * the tracer's cost (validation/tracing/run.py).
 *
 * usage: callcost [ITERATIONS]   (default 100000; run on 1 rank) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double secs(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int rank, x = 1, y = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Request r;
    double c0 = secs(CLOCK_PROCESS_CPUTIME_ID), w0 = secs(CLOCK_MONOTONIC);
    for (long i = 0; i < n; i++) {
        MPI_Irecv(&y, 1, MPI_INT, rank, 7, MPI_COMM_WORLD, &r);
        MPI_Send(&x, 1, MPI_INT, rank, 7, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    double c1 = secs(CLOCK_PROCESS_CPUTIME_ID), w1 = secs(CLOCK_MONOTONIC);
    if (rank == 0)
        printf("callcost: %ld calls, %.1f ns CPU per call, %.1f ns wall per call\n", 3 * n,
               (c1 - c0) / (3.0 * n) * 1e9, (w1 - w0) / (3.0 * n) * 1e9);
    MPI_Finalize();
    return 0;
}
