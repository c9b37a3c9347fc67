/* 3D Jacobi stencil on a periodic Cartesian grid of processes (Pilgrim's second benchmark,
 * 000_* section 4.1): MPI_Dims_create splits the ranks into px x py x pz, every rank holds an
 * n x n x n block and has six neighbours, wrapping around in every dimension. Each iteration
 * packs its six faces, posts an MPI_Irecv from and an MPI_Isend to each neighbour (n*n doubles,
 * tag = the face the message lands on at the receiver), MPI_Waitall on the twelve requests,
 * unpacks the ghost faces and applies the 7-point update to every cell. All communication is
 * on MPI_COMM_WORLD (no Cartesian communicator), so the trace names world ranks only.
 *
 * With a dimension of 2 processes, the - and + neighbours are the same rank (two messages with
 * different tags); with a dimension of 1, a rank is its own neighbour (self messages).
 *
 * Prints the grid and, at the end, the global sum of squares of the block (MPI_Allreduce): it
 * decreases with the iterations and depends only on the number of ranks, n and the iterations.
 *
 * usage: stencil3d [n=16 local block side] [iterations=20] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Cell (i, j, k) of the block with its ghost layer, 0 <= i, j, k <= n + 1. */
#define IDX(i, j, k) (((size_t)(i) * (n + 2) + (j)) * (n + 2) + (k))

/* Copies face `f` of the interior (ghost = 0) or of the ghost layer (ghost = 1) to or from
 * buf (n*n doubles). Faces: 0 = -x, 1 = +x, 2 = -y, 3 = +y, 4 = -z, 5 = +z. */
static void face(double *u, int n, int f, int ghost, double *buf, int pack) {
    int axis = f / 2, plus = f % 2;
    int layer = plus ? (ghost ? n + 1 : n) : (ghost ? 0 : 1);
    size_t m = 0;
    for (int a = 1; a <= n; a++)
        for (int b = 1; b <= n; b++, m++) {
            size_t c = axis == 0 ? IDX(layer, a, b) : axis == 1 ? IDX(a, layer, b) : IDX(a, b, layer);
            if (pack)
                buf[m] = u[c];
            else
                u[c] = buf[m];
        }
}

int main(int argc, char **argv) {
    int rank, size, dims[3] = {0, 0, 0};
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 16;
    int iters = argc > 2 ? atoi(argv[2]) : 20;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 3, dims);
    /* Row-major placement, as MPI_Cart_create numbers ranks: rank = (x * py + y) * pz + z. */
    int c[3] = {rank / (dims[1] * dims[2]), rank / dims[2] % dims[1], rank % dims[2]};
    int nb[6];
    for (int f = 0; f < 6; f++) {
        int d[3] = {c[0], c[1], c[2]};
        d[f / 2] = (d[f / 2] + (f % 2 ? 1 : dims[f / 2] - 1)) % dims[f / 2];
        nb[f] = (d[0] * dims[1] + d[1]) * dims[2] + d[2];
    }
    if (rank == 0) printf("stencil3d: %d x %d x %d ranks, block %d^3, %d iterations\n", dims[0], dims[1], dims[2], n, iters);

    size_t cells = (size_t)(n + 2) * (n + 2) * (n + 2), fn = (size_t)n * n;
    double *u = calloc(cells, sizeof(double));
    double *v = calloc(cells, sizeof(double));
    double *sendbuf = malloc(6 * fn * sizeof(double));
    double *recvbuf = malloc(6 * fn * sizeof(double));
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= n; j++)
            for (int k = 1; k <= n; k++) u[IDX(i, j, k)] = (double)((rank + i * j + k) % 11);

    for (int it = 0; it < iters; it++) {
        MPI_Request req[12];
        for (int f = 0; f < 6; f++) face(u, n, f, 0, sendbuf + f * fn, 1);
        /* The ghost face f is filled by the neighbour across f, from its opposite face. */
        for (int f = 0; f < 6; f++)
            MPI_Irecv(recvbuf + f * fn, (int)fn, MPI_DOUBLE, nb[f], f, MPI_COMM_WORLD, &req[f]);
        for (int f = 0; f < 6; f++)
            MPI_Isend(sendbuf + f * fn, (int)fn, MPI_DOUBLE, nb[f], f ^ 1, MPI_COMM_WORLD, &req[6 + f]);
        MPI_Waitall(12, req, MPI_STATUSES_IGNORE);
        for (int f = 0; f < 6; f++) face(u, n, f, 1, recvbuf + f * fn, 0);
        for (int i = 1; i <= n; i++)
            for (int j = 1; j <= n; j++)
                for (int k = 1; k <= n; k++)
                    v[IDX(i, j, k)] = (u[IDX(i - 1, j, k)] + u[IDX(i + 1, j, k)] + u[IDX(i, j - 1, k)] +
                                       u[IDX(i, j + 1, k)] + u[IDX(i, j, k - 1)] + u[IDX(i, j, k + 1)] +
                                       u[IDX(i, j, k)]) /
                                      7.0;
        double *t = u;
        u = v;
        v = t;
    }
    double local = 0.0, global = 0.0;
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= n; j++)
            for (int k = 1; k <= n; k++) local += u[IDX(i, j, k)] * u[IDX(i, j, k)];
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("stencil3d: sum of squares %.6f\n", global);
    free(u);
    free(v);
    free(sendbuf);
    free(recvbuf);
    MPI_Finalize();
    return 0;
}
