/* Collectives and point-to-point on sub-communicators of a 2D grid of processes: row and column
 * communicators from MPI_Comm_split (bcast, reduce, allreduce, allgather, alltoall on them, a
 * ring shift with MPI_Sendrecv and MPI_Isend/MPI_Irecv inside each row), a duplicate of a row
 * communicator, a Cartesian communicator and its row slices (MPI_Cart_create, MPI_Cart_sub),
 * MPI_COMM_SELF, MPI_Comm_split_type, MPI_Comm_dup_with_info, MPI_Comm_create_group, an intercommunicator between
 * two rows merged with MPI_Intercomm_merge, and world collectives in between. Integer data only: the checksum printed by
 * rank 0 is exact.
 *
 * usage: commsplit [rounds=2] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int rank, size, dims[2] = {0, 0};
    MPI_Init(&argc, &argv);
    int rounds = argc > 1 ? atoi(argv[1]) : 2;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 2, dims);
    int myrow = rank / dims[1], mycol = rank % dims[1];

    MPI_Comm rowc, colc, rowdup;
    MPI_Comm_split(MPI_COMM_WORLD, myrow, mycol, &rowc);
    MPI_Comm_split(MPI_COMM_WORLD, mycol, myrow, &colc);
    int rr, rs, cr, cs;
    MPI_Comm_rank(rowc, &rr);
    MPI_Comm_size(rowc, &rs);
    MPI_Comm_rank(colc, &cr);
    MPI_Comm_size(colc, &cs);

    long check = 0;
    long *sendv = malloc(size * sizeof(long)), *recvv = malloc(size * sizeof(long));
    for (int round = 0; round < rounds; round++) {
        long v = rank + 1 + round, r = 0;
        /* Row: bcast from the row's first rank, allreduce, alltoall. */
        long b = rr == 0 ? 100 * (myrow + 1) + round : -1;
        MPI_Bcast(&b, 1, MPI_LONG, 0, rowc);
        MPI_Allreduce(&v, &r, 1, MPI_LONG, MPI_SUM, rowc);
        check += b + r;
        for (int i = 0; i < rs; i++) sendv[i] = rank * 10 + i;
        MPI_Alltoall(sendv, 1, MPI_LONG, recvv, 1, MPI_LONG, rowc);
        for (int i = 0; i < rs; i++) check += recvv[i] * (i + 1);
        /* Column: reduce to the column's last rank, allgather. */
        MPI_Reduce(&v, &r, 1, MPI_LONG, MPI_SUM, cs - 1, colc);
        if (cr == cs - 1) check += r;
        MPI_Allgather(&v, 1, MPI_LONG, recvv, 1, MPI_LONG, colc);
        for (int i = 0; i < cs; i++) check += recvv[i] * (i + 2);
        /* World in between. */
        MPI_Allreduce(&check, &r, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
        check += r % 1000;
        /* Point-to-point along the row: a ring shift, blocking then nonblocking. */
        if (rs > 1) {
            int next = (rr + 1) % rs, prev = (rr + rs - 1) % rs;
            long in = 0, out = v * 3;
            MPI_Sendrecv(&out, 1, MPI_LONG, next, 7, &in, 1, MPI_LONG, prev, 7, rowc,
                         MPI_STATUS_IGNORE);
            check += in;
            MPI_Request req[2];
            MPI_Irecv(&in, 1, MPI_LONG, MPI_ANY_SOURCE, 8, rowc, &req[0]);
            MPI_Isend(&out, 1, MPI_LONG, next, 8, rowc, &req[1]);
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
            check += 2 * in;
        }
    }

    /* A duplicate of the row communicator, the Cartesian grid and its row slices, and
     * MPI_COMM_SELF. */
    MPI_Comm_dup(rowc, &rowdup);
    MPI_Barrier(rowdup);
    MPI_Comm cart, cartrow;
    int periods[2] = {1, 0}, remain[2] = {0, 1};
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_sub(cart, remain, &cartrow);
    long s = rank, t = 0;
    MPI_Allreduce(&s, &t, 1, MPI_LONG, MPI_SUM, cartrow);
    check += t;
    MPI_Allreduce(&s, &t, 1, MPI_LONG, MPI_SUM, MPI_COMM_SELF);
    check += t;

    /* A duplicate of the column communicator with an info object, and the even world ranks
     * (a communicator created by its members only). */
    MPI_Comm coldup, evens;
    MPI_Comm_dup_with_info(colc, MPI_INFO_NULL, &coldup);
    MPI_Barrier(coldup);
    MPI_Group wg, eg;
    int nev = (size + 1) / 2, *ev = malloc(nev * sizeof(int));
    for (int i = 0; i < nev; i++) ev[i] = 2 * i;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_incl(wg, nev, ev, &eg);
    if (rank % 2 == 0) {
        MPI_Comm_create_group(MPI_COMM_WORLD, eg, 9, &evens);
        MPI_Allreduce(&s, &t, 1, MPI_LONG, MPI_SUM, evens);
        check += t;
        MPI_Comm_free(&evens);
    }
    MPI_Group_free(&eg);
    MPI_Group_free(&wg);
    free(ev);
    /* Rows 0 and 1 joined by an intercommunicator (leaders: each row's first rank), merged
     * into one intracommunicator, row 0 first. */
    if (dims[0] >= 2 && myrow < 2) {
        MPI_Comm inter, merged;
        int remote_leader = myrow == 0 ? dims[1] : 0;
        MPI_Intercomm_create(rowc, 0, MPI_COMM_WORLD, remote_leader, 11, &inter);
        MPI_Intercomm_merge(inter, myrow, &merged);
        MPI_Allreduce(&s, &t, 1, MPI_LONG, MPI_SUM, merged);
        check += t;
        MPI_Comm_free(&merged);
        MPI_Comm_free(&inter);
    }
    MPI_Comm_free(&coldup);
    /* The ranks sharing this node's memory (all of them on one machine). */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Barrier(node);
    MPI_Comm_free(&node);

    long total = 0;
    MPI_Reduce(&check, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("commsplit: %d ranks on a %dx%d grid, %d rounds, checksum %ld\n", size, dims[0],
               dims[1], rounds, total);
    MPI_Comm_free(&cartrow);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&rowdup);
    MPI_Comm_free(&colc);
    MPI_Comm_free(&rowc);
    free(sendv);
    free(recvv);
    MPI_Finalize();
    return 0;
}
