/* Persistent requests: a ring halo exchange set up once with MPI_Send_init/MPI_Recv_init (the
 * receive from the left neighbour with MPI_ANY_SOURCE, from the right neighbour by rank), run
 * `iters` times with MPI_Startall + MPI_Waitall, then once more with MPI_Start + MPI_Wait on
 * each request, then freed with MPI_Request_free. Every rank sums what it received; rank 0
 * prints the total.
 *
 * usage: persistent [iterations=5] [count=100] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    int iters = argc > 1 ? atoi(argv[1]) : 5;
    int n = argc > 2 ? atoi(argv[2]) : 100;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    double *out = malloc(n * sizeof(double)), *from_left = malloc(n * sizeof(double)),
           *from_right = malloc(n * sizeof(double));
    MPI_Request req[4];
    MPI_Recv_init(from_left, n, MPI_DOUBLE, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &req[0]);
    MPI_Recv_init(from_right, n, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &req[1]);
    MPI_Send_init(out, n, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[2]);
    MPI_Send_init(out, n, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &req[3]);
    double sum = 0.0;
    for (int it = 0; it <= iters; it++) {
        for (int i = 0; i < n; i++) out[i] = rank * 1000 + it * 10 + i % 7;
        if (it < iters) {
            MPI_Startall(4, req);
            MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
        } else {
            for (int k = 0; k < 4; k++) MPI_Start(&req[k]);
            for (int k = 0; k < 4; k++) MPI_Wait(&req[k], MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < n; i++) sum += from_left[i] + from_right[i];
    }
    for (int k = 0; k < 4; k++) MPI_Request_free(&req[k]);
    double total = 0.0;
    MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("persistent: %d ranks, %d iterations, total %.1f\n", size, iters, total);
    free(out);
    free(from_left);
    free(from_right);
    MPI_Finalize();
    return 0;
}
