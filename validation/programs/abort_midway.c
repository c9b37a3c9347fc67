/* A run that dies midway: a ring of blocking sends (rank 0 first) where rank `victim` calls
 * MPI_Abort(MPI_COMM_WORLD, 3) after receiving in round `round`. The other ranks are blocked in
 * MPI_Recv when the launcher kills them (Open MPI sends SIGTERM, then SIGKILL a second later).
 * Their traces must hold every record made before, in whole lines. With delay_ms > 0 the victim
 * waits that long before aborting, the others blocked meanwhile (the tracer's periodic flush).
 *
 * usage: abort_midway [round=2] [victim=1] [delay_ms=0] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    int round = argc > 1 ? atoi(argv[1]) : 2;
    int victim = argc > 2 ? atoi(argv[2]) : 1;
    long delay_ms = argc > 3 ? atol(argv[3]) : 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    double buf[16] = {0};
    for (int i = 0;; i++) {
        if (rank == 0) {
            MPI_Send(buf, 16, MPI_DOUBLE, next, i, MPI_COMM_WORLD);
            MPI_Recv(buf, 16, MPI_DOUBLE, prev, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, 16, MPI_DOUBLE, prev, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (i == round && rank == victim) {
                struct timespec d = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
                nanosleep(&d, NULL);
                fprintf(stderr, "abort_midway: rank %d aborts in round %d\n", rank, i);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
            MPI_Send(buf, 16, MPI_DOUBLE, next, i, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
