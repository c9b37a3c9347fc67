/* Per-event overhead O as 004 §3 measures it: "an experiment where N trace events are generated
 * immediately following each other. The amount of time consumed is then divided by N." Each rank
 * makes K back-to-back MPI_Iprobe calls (one traced call = two events, enter and exit) and rank 0
 * prints the mean wall time per call over the ranks:
 *   call_secs <seconds per call>
 * Run it once under the tracer and once without; O = (traced - untraced) / 2.
 *
 * usage: overhead [K=2000] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int k = argc > 1 ? atoi(argv[1]) : 2000, flag, rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Status st;
    double t0 = now();
    for (int i = 0; i < k; i++) MPI_Iprobe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &flag, &st);
    double per = (now() - t0) / k, sum;
    MPI_Reduce(&per, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("call_secs %.9e\n", sum / size);
    MPI_Finalize();
    return 0;
}
