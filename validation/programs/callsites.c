/* Call sites (timeless trace --callsites): the same MPI_Send from two source lines, a wildcard
 * MPI_Irecv completed later, all in a loop. Built with -g; the tests find the expected lines by
 * the SITE markers. Usage: callsites [iterations]; even number of ranks. */
#include <mpi.h>
#include <stdlib.h>

/* Not inlined, and the send is not its last act (a tail call would return straight to main). */
__attribute__((noinline)) static void send_b(double *buf, int n, int dst)
{
    if (MPI_Send(buf, n, MPI_DOUBLE, dst, 1, MPI_COMM_WORLD) != MPI_SUCCESS) /* SITE B */
        abort();
}

int main(int argc, char **argv)
{
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 10;
    double buf[64] = {0};
    MPI_Init(&argc, &argv); /* SITE INIT */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    for (int i = 0; i < iters; i++) {
        if (rank % 2 == 0) {
            MPI_Send(buf, 8, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD); /* SITE A */
            send_b(buf, 8, peer);
        } else {
            MPI_Request r;
            MPI_Irecv(buf, 8, MPI_DOUBLE, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &r); /* SITE IRECV */
            MPI_Wait(&r, MPI_STATUS_IGNORE); /* SITE WAIT */
            MPI_Recv(buf, 8, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* SITE RECV */
        }
    }
    MPI_Barrier(MPI_COMM_WORLD); /* SITE BARRIER */
    MPI_Finalize(); /* SITE FINALIZE */
    return 0;
}
