/* Pipelined wavefront, as in NAS LU's SSOR sweeps: on a 2D grid of processes (rank = row x
 * columns + column, MPI_COMM_WORLD only), each iteration runs a lower sweep over `nz` planes
 * (receive the boundary row from the north and the boundary column from the west with blocking
 * MPI_Recv, update the block, send the own last row south and last column east with blocking
 * MPI_Send), then an upper sweep the other way (from south and east, to north and west), then
 * reduces a norm with MPI_Allreduce. The pipeline fills diagonally, as LU's does.
 *
 * usage: wavefront [n=48 local block side] [nz=6 planes] [iterations=3] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define U(k, i, j) u[((size_t)(k) * (n + 2) + (i)) * (n + 2) + (j)]

int main(int argc, char **argv) {
    int rank, size, dims[2] = {0, 0};
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 48;
    int nz = argc > 2 ? atoi(argv[2]) : 6;
    int iters = argc > 3 ? atoi(argv[3]) : 3;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 2, dims);
    int pi = rank / dims[1], pj = rank % dims[1];
    int north = pi > 0 ? rank - dims[1] : MPI_PROC_NULL;
    int south = pi < dims[0] - 1 ? rank + dims[1] : MPI_PROC_NULL;
    int west = pj > 0 ? rank - 1 : MPI_PROC_NULL;
    int east = pj < dims[1] - 1 ? rank + 1 : MPI_PROC_NULL;

    double *u = calloc((size_t)nz * (n + 2) * (n + 2), sizeof(double));
    double *row = malloc(n * sizeof(double)), *col = malloc(n * sizeof(double));
    for (int k = 0; k < nz; k++)
        for (int i = 1; i <= n; i++)
            for (int j = 1; j <= n; j++) U(k, i, j) = (double)((rank + i * 7 + j * 3 + k) % 11) / 11.0;

    double norm = 0.0;
    for (int it = 0; it < iters; it++) {
        /* Lower sweep: north-west to south-east. */
        for (int k = 0; k < nz; k++) {
            MPI_Recv(&U(k, 0, 1), n, MPI_DOUBLE, north, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(col, n, MPI_DOUBLE, west, 1000 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (west != MPI_PROC_NULL)
                for (int i = 1; i <= n; i++) U(k, i, 0) = col[i - 1];
            for (int i = 1; i <= n; i++)
                for (int j = 1; j <= n; j++)
                    U(k, i, j) = 0.25 * (U(k, i - 1, j) + U(k, i, j - 1)) + 0.5 * U(k, i, j);
            for (int i = 1; i <= n; i++) col[i - 1] = U(k, i, n);
            MPI_Send(&U(k, n, 1), n, MPI_DOUBLE, south, k, MPI_COMM_WORLD);
            MPI_Send(col, n, MPI_DOUBLE, east, 1000 + k, MPI_COMM_WORLD);
        }
        /* Upper sweep: south-east to north-west. */
        for (int k = nz - 1; k >= 0; k--) {
            MPI_Recv(&U(k, n + 1, 1), n, MPI_DOUBLE, south, 2000 + k, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Recv(col, n, MPI_DOUBLE, east, 3000 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (east != MPI_PROC_NULL)
                for (int i = 1; i <= n; i++) U(k, i, n + 1) = col[i - 1];
            for (int i = n; i >= 1; i--)
                for (int j = n; j >= 1; j--)
                    U(k, i, j) = 0.25 * (U(k, i + 1, j) + U(k, i, j + 1)) + 0.5 * U(k, i, j);
            for (int i = 1; i <= n; i++) {
                row[i - 1] = U(k, 1, i);
                col[i - 1] = U(k, i, 1);
            }
            MPI_Send(row, n, MPI_DOUBLE, north, 2000 + k, MPI_COMM_WORLD);
            MPI_Send(col, n, MPI_DOUBLE, west, 3000 + k, MPI_COMM_WORLD);
        }
        double local = 0.0;
        for (int k = 0; k < nz; k++)
            for (int i = 1; i <= n; i++)
                for (int j = 1; j <= n; j++) local += U(k, i, j) * U(k, i, j);
        MPI_Allreduce(&local, &norm, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("wavefront: %d ranks on a %dx%d grid, n %d, nz %d, %d iterations, norm %.10e\n",
               size, dims[0], dims[1], n, nz, iters, norm);
    free(u);
    free(row);
    free(col);
    MPI_Finalize();
    return 0;
}
