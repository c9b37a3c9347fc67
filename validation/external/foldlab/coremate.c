#include <mpi.h>
#include <stdio.h>
/* The core-mate lab (README, next step 7): run with 3 ranks on 2 cores pinned r mod 2
   (mpirun -np 3 --oversubscribe --map-by core --bind-to core:overload-allowed ./coremate):
   rank 0 and rank 2 share core 0, rank 1 is on core 1. Rank 0 ping-pongs
   with rank 1; in phase 1 rank 2 computes meanwhile on rank 0's core. With -np 5 or 7, the
   even ranks from 2 on (2 or 3 core-mates of rank 0) compute, the odd ones wait in the
   barrier on core 1. */
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r; MPI_Comm_rank(MPI_COMM_WORLD, &r);
    const int n = 200; char b[8] = {0};
    for (int phase = 0; phase < 3; phase++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (r >= 2 && r % 2 == 0) {
            if (phase >= 1) { double t0 = MPI_Wtime(); volatile double x = 0; while (MPI_Wtime() - t0 < 3.0) x += 1; }
        } else if (r == 0) {
            double t0 = MPI_Wtime();
            for (int i = 0; i < n; i++) {
                if (phase == 2) { /* rank 0 computes 100 us between round trips too */
                    double t1 = MPI_Wtime(); volatile double x = 0; while (MPI_Wtime() - t1 < 100e-6) x += 1; }
                MPI_Send(b, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(b, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            double t = MPI_Wtime() - t0;
            printf("phase %d (%s): %d round trips, %.1f us each\n", phase,
                   phase == 0 ? "core-mate idle in barrier" : phase == 1 ? "core-mate computing" : "core-mate computing, 100 us of own compute per trip",
                   n, t / n * 1e6 - (phase == 2 ? 100 : 0));
            fflush(stdout);
        } else if (r == 1) {
            for (int i = 0; i < n; i++) {
                MPI_Recv(b, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(b, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
