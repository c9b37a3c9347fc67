/* The seed's ring (Desprez et al., RR-7489, Figure 1): on a ring of processes, each one
 * computes one million floating-point operations and sends one million bytes to its neighbour;
 * rank 0 starts each round and closes it by receiving from the last rank.
 *
 * usage: ring [rounds=4] [bytes=1000000] [flops=1000000] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

/* About `flops` floating-point operations (one multiply and one add per iteration). */
static void compute(long flops) {
    double x = 1.0, a = 1.0000001, b = 1e-9;
    for (long i = 0; i < flops / 2; i++) x = x * a + b;
    sink = x;
}

int main(int argc, char **argv) {
    int rank, size;
    int rounds = argc > 1 ? atoi(argv[1]) : 4;
    int bytes = argc > 2 ? atoi(argv[2]) : 1000000;
    long flops = argc > 3 ? atol(argv[3]) : 1000000;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *buf = calloc(bytes > 0 ? bytes : 1, 1);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int i = 0; i < rounds; i++) {
        if (rank == 0) {
            compute(flops);
            MPI_Send(buf, bytes, MPI_BYTE, next, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_BYTE, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, bytes, MPI_BYTE, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            compute(flops);
            MPI_Send(buf, bytes, MPI_BYTE, next, 0, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) printf("ring: %d rounds of %d bytes on %d ranks\n", rounds, bytes, size);
    free(buf);
    MPI_Finalize();
    return 0;
}
