/* Every kind of communicator creation, and one communication on each (4 ranks exactly).
 * The timeless profile tests derive the expected mpisee names, sizes, calls and bytes from
 * this program by hand (simulator/cli/tests/profile_mpi.rs). Prints "commkinds: ok".
 * Under Open MPI 4.1 with more ranks than cores, run it with OMPI_MCA_topo=basic: the treematch
 * topology component livelocks now and then in MPI_Dist_graph_create (5 of 12 plain runs here). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        if (rank == 0) fprintf(stderr, "commkinds needs 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char buf[128], buf2[128];
    memset(buf, 1, sizeof buf);
    int one = rank, sum = 0;

    /* 1. Cartesian 2x2: allreduce of one int. */
    int dims[2] = {2, 2}, periods[2] = {0, 0};
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, cart);

    /* 2. Rows of the grid: bcast of 8 bytes from the row's rank 0. */
    int remain[2] = {0, 1};
    MPI_Comm row;
    MPI_Cart_sub(cart, remain, &row);
    MPI_Bcast(buf, 8, MPI_BYTE, 0, row);

    /* 3. Split by parity: comm rank 0 sends 100 bytes to comm rank 1. */
    MPI_Comm par;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &par);
    int prank;
    MPI_Comm_rank(par, &prank);
    if (prank == 0)
        MPI_Send(buf, 100, MPI_BYTE, 1, 5, par);
    else
        MPI_Recv(buf2, 100, MPI_BYTE, 0, 5, par, MPI_STATUS_IGNORE);

    /* 4. Shared-memory node (all 4 ranks on this machine): barrier. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Barrier(node);

    /* 5. Dup: alltoall of 4 bytes per peer. */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Alltoall(buf, 4, MPI_BYTE, buf2, 4, MPI_BYTE, dup);

    /* 6. Idup: allgather of 4 bytes. */
    MPI_Comm idup;
    MPI_Request req;
    MPI_Comm_idup(MPI_COMM_WORLD, &idup, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Allgather(buf, 4, MPI_BYTE, buf2, 4, MPI_BYTE, idup);

    /* 7. Create of world ranks {0, 3}: sendrecv of 50 bytes each way. */
    MPI_Group world_group, g03;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int r03[2] = {0, 3};
    MPI_Group_incl(world_group, 2, r03, &g03);
    MPI_Comm c03;
    MPI_Comm_create(MPI_COMM_WORLD, g03, &c03);
    if (c03 != MPI_COMM_NULL) {
        int me;
        MPI_Comm_rank(c03, &me);
        MPI_Sendrecv(buf, 50, MPI_BYTE, 1 - me, 0, buf2, 50, MPI_BYTE, 1 - me, 0, c03,
                     MPI_STATUS_IGNORE);
    }

    /* 8. Create_group on the odd half, by its members only: isend/irecv of 10 bytes. */
    MPI_Comm cg = MPI_COMM_NULL;
    if (rank % 2 == 1) {
        MPI_Group pg;
        MPI_Comm_group(par, &pg);
        MPI_Comm_create_group(par, pg, 9, &cg);
        MPI_Request r;
        int me;
        MPI_Comm_rank(cg, &me);
        if (me == 0)
            MPI_Isend(buf, 10, MPI_BYTE, 1, 3, cg, &r);
        else
            MPI_Irecv(buf2, 10, MPI_BYTE, 0, 3, cg, &r);
        MPI_Waitall(1, &r, MPI_STATUSES_IGNORE);
        MPI_Group_free(&pg);
    }

    /* 9. Intercommunicator between the parity halves (leaders: world 0 and 1). */
    MPI_Comm inter;
    MPI_Intercomm_create(par, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 7, &inter);

    /* 10. Merged back: reduce of 8 bytes to rank 0. */
    MPI_Comm merged;
    MPI_Intercomm_merge(inter, rank % 2, &merged);
    double d = rank, dsum = 0;
    MPI_Reduce(&d, &dsum, 1, MPI_DOUBLE, MPI_SUM, 0, merged);

    /* 11. Graph topology, a ring: neighbour allgather of 4 bytes (2 neighbours). */
    int index[4] = {2, 4, 6, 8}, edges[8] = {3, 1, 0, 2, 1, 3, 2, 0};
    MPI_Comm graph;
    MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, 0, &graph);
    MPI_Neighbor_allgather(buf, 4, MPI_BYTE, buf2, 4, MPI_BYTE, graph);

    /* 12. Distributed graph, adjacent form, the same ring: neighbour alltoall of 4 bytes. */
    int nb[2] = {(rank + 3) % 4, (rank + 1) % 4}, w[2] = {1, 1};
    MPI_Comm dga;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, nb, w, 2, nb, w, MPI_INFO_NULL, 0, &dga);
    MPI_Neighbor_alltoall(buf, 4, MPI_BYTE, buf2, 4, MPI_BYTE, dga);

    /* 13. Distributed graph, general form (each rank gives its own edges): barrier. */
    int src = rank, deg = 2;
    MPI_Comm dg;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, nb, w, MPI_INFO_NULL, 0, &dg);
    MPI_Barrier(dg);

    MPI_Comm_free(&dg);
    MPI_Comm_free(&dga);
    MPI_Comm_free(&graph);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    if (cg != MPI_COMM_NULL) MPI_Comm_free(&cg);
    if (c03 != MPI_COMM_NULL) MPI_Comm_free(&c03);
    MPI_Group_free(&g03);
    MPI_Group_free(&world_group);
    MPI_Comm_free(&idup);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&node);
    MPI_Comm_free(&par);
    MPI_Comm_free(&row);
    MPI_Comm_free(&cart);
    if (rank == 0) printf("commkinds: ok\n");
    MPI_Finalize();
    return 0;
}
