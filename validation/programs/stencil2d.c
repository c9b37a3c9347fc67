/* 2D Jacobi stencil on a Cartesian grid of processes: each iteration exchanges halos with up to
 * four neighbours with MPI_Isend/MPI_Irecv and MPI_Waitall (MPI_PROC_NULL at the borders), the
 * east/west columns through a derived datatype (MPI_Type_vector), then updates its block. Every
 * 10 iterations the residual is reduced with MPI_Allreduce.
 *
 * usage: stencil2d [n=64 local block side] [iterations=20] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define IDX(i, j) ((i) * (n + 2) + (j))

int main(int argc, char **argv) {
    int rank, size, dims[2] = {0, 0};
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 64;
    int iters = argc > 2 ? atoi(argv[2]) : 20;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 2, dims);
    int row = rank / dims[1], col = rank % dims[1];
    int north = row > 0 ? rank - dims[1] : MPI_PROC_NULL;
    int south = row < dims[0] - 1 ? rank + dims[1] : MPI_PROC_NULL;
    int west = col > 0 ? rank - 1 : MPI_PROC_NULL;
    int east = col < dims[1] - 1 ? rank + 1 : MPI_PROC_NULL;

    double *u = calloc((size_t)(n + 2) * (n + 2), sizeof(double));
    double *v = calloc((size_t)(n + 2) * (n + 2), sizeof(double));
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= n; j++) u[IDX(i, j)] = (double)(rank + i * j % 7);

    MPI_Datatype column;
    MPI_Type_vector(n, 1, n + 2, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);

    for (int it = 0; it < iters; it++) {
        MPI_Request req[8];
        int k = 0;
        MPI_Irecv(&u[IDX(0, 1)], n, MPI_DOUBLE, north, 1, MPI_COMM_WORLD, &req[k++]);
        MPI_Irecv(&u[IDX(n + 1, 1)], n, MPI_DOUBLE, south, 2, MPI_COMM_WORLD, &req[k++]);
        MPI_Irecv(&u[IDX(1, 0)], 1, column, west, 3, MPI_COMM_WORLD, &req[k++]);
        MPI_Irecv(&u[IDX(1, n + 1)], 1, column, east, 4, MPI_COMM_WORLD, &req[k++]);
        MPI_Isend(&u[IDX(1, 1)], n, MPI_DOUBLE, north, 2, MPI_COMM_WORLD, &req[k++]);
        MPI_Isend(&u[IDX(n, 1)], n, MPI_DOUBLE, south, 1, MPI_COMM_WORLD, &req[k++]);
        MPI_Isend(&u[IDX(1, 1)], 1, column, west, 4, MPI_COMM_WORLD, &req[k++]);
        MPI_Isend(&u[IDX(1, n)], 1, column, east, 3, MPI_COMM_WORLD, &req[k++]);
        MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
        double local = 0.0;
        for (int i = 1; i <= n; i++)
            for (int j = 1; j <= n; j++) {
                v[IDX(i, j)] = 0.25 * (u[IDX(i - 1, j)] + u[IDX(i + 1, j)] + u[IDX(i, j - 1)] + u[IDX(i, j + 1)]);
                double d = v[IDX(i, j)] - u[IDX(i, j)];
                local += d * d;
            }
        double *t = u;
        u = v;
        v = t;
        if (it % 10 == 9) {
            double global;
            MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            if (rank == 0) printf("stencil2d: iteration %d residual %g\n", it + 1, global);
        }
    }
    MPI_Type_free(&column);
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
