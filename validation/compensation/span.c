/* Uninstrumented run time for the compensation experiment: an LD_PRELOAD shim that intercepts
 * only MPI_Init and MPI_Finalize (two events per rank, nothing else) and prints, from rank 0,
 *   span_secs <latest MPI_Finalize entry - earliest start>
 * where each rank starts after MPI_Init and a barrier. Times are CLOCK_MONOTONIC, the clock of
 * the tracer's timestamps (TIMELESS_TIMESTAMPS), so the span is comparable to the measured total
 * of `timeless compensate` (earliest record after start-up to latest MPI_Finalize entry).
 *
 * build: mpicc -O2 -shared -fPIC -o libspan.so span.c */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double t_start;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void started(void) {
    PMPI_Barrier(MPI_COMM_WORLD);
    t_start = now();
}

int MPI_Init(int *argc, char ***argv) {
    int rc = PMPI_Init(argc, argv);
    started();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    started();
    return rc;
}

int MPI_Finalize(void) {
    double t_end = now(), end, start;
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Reduce(&t_end, &end, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    PMPI_Reduce(&t_start, &start, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    if (rank == 0) fprintf(stderr, "span_secs %.9f\n", end - start);
    return PMPI_Finalize();
}
