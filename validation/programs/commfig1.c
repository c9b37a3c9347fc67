/* The example of mpisee's Fig. 1 (001_* §III-A), 4 processes: MPI_Cart_create, MPI_Comm_split
 * into {P0, P1} and {P2, P3}, then P0 and P1 MPI_Comm_dup their half while P2 and P3
 * MPI_Comm_create on theirs a communicator of P2 alone; a barrier on each new communicator.
 * Prints "commfig1: ok". */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) MPI_Abort(MPI_COMM_WORLD, 1);
    int dims[2] = {2, 2}, periods[2] = {0, 0};
    MPI_Comm cart, half, third = MPI_COMM_NULL;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &half);
    if (rank < 2) {
        MPI_Comm_dup(half, &third);
    } else {
        MPI_Group hg, g2;
        int first = 0;
        MPI_Comm_group(half, &hg);
        MPI_Group_incl(hg, 1, &first, &g2);
        MPI_Comm_create(half, g2, &third);
        MPI_Group_free(&g2);
        MPI_Group_free(&hg);
    }
    MPI_Barrier(cart);
    MPI_Barrier(half);
    if (third != MPI_COMM_NULL) {
        MPI_Barrier(third);
        MPI_Comm_free(&third);
    }
    MPI_Comm_free(&half);
    MPI_Comm_free(&cart);
    if (rank == 0) printf("commfig1: ok\n");
    MPI_Finalize();
    return 0;
}
