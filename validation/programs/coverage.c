/* Calls every MPI function the tracer records at least once, with exact receive sizes so that
 * sent and received bytes match per pair of ranks. Needs at least 2 ranks; checked with 4.
 *
 * Sections: send modes (ssend, bsend, rsend, issend), sendrecv with tag 0 and another tag,
 * sendrecv_replace, completion by test/testall/testany/testsome/waitany/waitsome, iprobe,
 * request_free, matched probes (mprobe/mrecv, improbe/imrecv), every blocking collective (with MPI_IN_PLACE and a derived datatype), the
 * nonblocking collectives, and communicators (split, dup, create, free); then MPI-3 calls:
 * comm_idup, alltoallw, neighbourhood collectives on a Cartesian grid, intercomm_create. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 64

/* Neighbour alltoall sends 3 ints to each of up to 4 neighbours: 12 ints of x. */
static int *big_for_neighbors(int *x) { return x; }

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "coverage needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    double a[N], b[N];
    int x[N], y[N], flag;
    for (int i = 0; i < N; i++) {
        a[i] = rank + i;
        x[i] = rank * i;
        b[i] = 0.0;
        y[i] = 0;
    }
    MPI_Status st;
    MPI_Request r[4];

    /* Send modes around the ring; even ranks send first. */
    if (rank % 2 == 0) {
        MPI_Ssend(a, 10, MPI_DOUBLE, next, 1, MPI_COMM_WORLD);
        MPI_Recv(b, 10, MPI_DOUBLE, prev, 1, MPI_COMM_WORLD, &st);
    } else {
        MPI_Recv(b, 10, MPI_DOUBLE, prev, 1, MPI_COMM_WORLD, &st);
        MPI_Ssend(a, 10, MPI_DOUBLE, next, 1, MPI_COMM_WORLD);
    }
    int bsize = N * (int)sizeof(double) + MPI_BSEND_OVERHEAD;
    char *bbuf = malloc(bsize);
    MPI_Buffer_attach(bbuf, bsize);
    MPI_Bsend(a, 5, MPI_DOUBLE, next, 2, MPI_COMM_WORLD);
    MPI_Recv(b, 5, MPI_DOUBLE, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Buffer_detach(&bbuf, &bsize);
    free(bbuf);
    MPI_Irecv(b, 3, MPI_DOUBLE, prev, 3, MPI_COMM_WORLD, &r[0]);
    MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted before the ready send */
    MPI_Rsend(a, 3, MPI_DOUBLE, next, 3, MPI_COMM_WORLD);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MPI_Issend(x, 7, MPI_INT, next, 4, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(y, 7, MPI_INT, prev, 4, MPI_COMM_WORLD, &r[1]);
    for (int done = 0; done < 2; done++) {
        int idx;
        MPI_Waitany(2, r, &idx, &st);
    }

    /* Send-receive: tag 0 both ways (SimGrid's sendRecv), then other tags; then in place. */
    MPI_Sendrecv(a, 8, MPI_DOUBLE, next, 0, b, 8, MPI_DOUBLE, prev, 0, MPI_COMM_WORLD, &st);
    MPI_Sendrecv(x, 6, MPI_INT, next, 5, y, 6, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st);
    MPI_Sendrecv_replace(a, 4, MPI_DOUBLE, next, 6, prev, 6, MPI_COMM_WORLD, &st);

    /* Completion by test loops. */
    MPI_Irecv(b, 2, MPI_DOUBLE, prev, 7, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(a, 2, MPI_DOUBLE, next, 7, MPI_COMM_WORLD, &r[1]);
    do MPI_Test(&r[0], &flag, &st); while (!flag);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    MPI_Irecv(b, 2, MPI_DOUBLE, prev, 8, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(a, 2, MPI_DOUBLE, next, 8, MPI_COMM_WORLD, &r[1]);
    do MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE); while (!flag);
    MPI_Irecv(b, 2, MPI_DOUBLE, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(a, 2, MPI_DOUBLE, next, 9, MPI_COMM_WORLD, &r[1]);
    for (int left = 2; left > 0;) {
        int idx;
        MPI_Testany(2, r, &idx, &flag, &st);
        if (flag && idx != MPI_UNDEFINED) left--;
    }
    MPI_Irecv(b, 2, MPI_DOUBLE, prev, 10, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(a, 2, MPI_DOUBLE, next, 10, MPI_COMM_WORLD, &r[1]);
    for (int left = 2; left > 0;) {
        int out, idx[2];
        MPI_Testsome(2, r, &out, idx, MPI_STATUSES_IGNORE);
        if (out != MPI_UNDEFINED) left -= out;
    }
    MPI_Irecv(b, 2, MPI_DOUBLE, prev, 11, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(a, 2, MPI_DOUBLE, next, 11, MPI_COMM_WORLD, &r[1]);
    for (int left = 2; left > 0;) {
        int out, idx[2];
        MPI_Status sts[2];
        MPI_Waitsome(2, r, &out, idx, sts);
        left -= out;
    }

    /* Probe for a message, then receive it from whoever sent it. */
    MPI_Send(x, 3, MPI_INT, next, 12, MPI_COMM_WORLD);
    do MPI_Iprobe(MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &flag, &st); while (!flag);
    MPI_Recv(y, 3, MPI_INT, st.MPI_SOURCE, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    /* A send request freed by the program: the receive still completes. */
    MPI_Isend(x, 1, MPI_INT, next, 13, MPI_COMM_WORLD, &r[0]);
    MPI_Request_free(&r[0]);
    MPI_Recv(y, 1, MPI_INT, prev, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Blocking collectives. */
    int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
    int *mine = malloc(size * sizeof(int)); /* alltoallv: 1 + rank elements to every rank */
    int *big = malloc(size * N * sizeof(int)), *big2 = malloc(size * N * sizeof(int));
    for (int i = 0; i < size; i++) {
        counts[i] = 1 + i;
        mine[i] = 1 + rank;
        displs[i] = i * N;
    }
    for (int i = 0; i < size * N; i++) big[i] = i;
    MPI_Bcast(a, 16, MPI_DOUBLE, 1 % size, MPI_COMM_WORLD);
    MPI_Reduce(a, b, 16, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, a, 16, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Gather(x, 4, MPI_INT, big, 4, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Gather(MPI_IN_PLACE, 4, MPI_INT, big, 4, MPI_INT, 0, MPI_COMM_WORLD);
    else
        MPI_Gather(x, 4, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
    MPI_Gatherv(x, 1 + rank, MPI_INT, big, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatter(big, 5, MPI_INT, y, 5, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatterv(big, counts, displs, MPI_INT, y, 1 + rank, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allgather(x, 2, MPI_INT, big, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgatherv(x, 1 + rank, MPI_INT, big, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoall(big, 3, MPI_INT, big2, 3, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallv(big, mine, displs, MPI_INT, big2, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Reduce_scatter(big, big2, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block(big, big2, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Scan(a, b, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan(a, b, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Datatype triple;
    MPI_Type_contiguous(3, MPI_INT, &triple);
    MPI_Type_commit(&triple);
    MPI_Bcast(x, 2, triple, 0, MPI_COMM_WORLD); /* 2 x 12 bytes, written as 24 MPI_BYTE */
    MPI_Type_free(&triple);

    /* Nonblocking collectives. */
    MPI_Ibarrier(MPI_COMM_WORLD, &r[0]);
    MPI_Ibcast(a, 8, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r[1]);
    MPI_Iallreduce(a, b, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r[2]);
    MPI_Ialltoall(big, 1, MPI_INT, big2, 1, MPI_INT, MPI_COMM_WORLD, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);

    /* Communicators: a split into even and odd ranks, a duplicate of the world, a create. */
    MPI_Comm half, dup, firsts;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hrank, hsize;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    MPI_Bcast(a, 4, MPI_DOUBLE, 0, half);
    if (hsize > 1)
        MPI_Sendrecv(a, 2, MPI_DOUBLE, (hrank + 1) % hsize, 20, b, 2, MPI_DOUBLE,
                     (hrank + hsize - 1) % hsize, 20, half, MPI_STATUS_IGNORE);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Allreduce(a, b, 2, MPI_DOUBLE, MPI_SUM, dup);
    MPI_Group wg, g;
    int first[1] = {0};
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_incl(wg, 1, first, &g);
    MPI_Comm_create(MPI_COMM_WORLD, g, &firsts);
    if (firsts != MPI_COMM_NULL) MPI_Comm_free(&firsts);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);

    free(counts);
    free(mine);
    free(displs);
    free(big);
    free(big2);
    /* Matched probes: MPI_Mprobe + MPI_Mrecv from the previous rank, MPI_Improbe (polled) +
     * MPI_Imrecv from the next one. */
    {
        MPI_Message msg;
        MPI_Request sr[2];
        int got = 0;
        MPI_Isend(x, 3, MPI_INT, next, 30, MPI_COMM_WORLD, &sr[0]);
        MPI_Isend(x, 4, MPI_INT, prev, 31, MPI_COMM_WORLD, &sr[1]);
        MPI_Mprobe(MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &msg, &st);
        MPI_Mrecv(y, 3, MPI_INT, &msg, MPI_STATUS_IGNORE);
        while (!got) MPI_Improbe(MPI_ANY_SOURCE, 31, MPI_COMM_WORLD, &got, &msg, &st);
        MPI_Imrecv(y + 3, 4, MPI_INT, &msg, &r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        MPI_Wait(&sr[0], MPI_STATUS_IGNORE);
        MPI_Wait(&sr[1], MPI_STATUS_IGNORE);
    }

    /* MPI-3 calls: a nonblocking duplicate, MPI_Alltoallw with a datatype per peer,
     * neighbourhood collectives on a Cartesian grid, an intercommunicator. */
    {
        MPI_Comm idup;
        MPI_Request ir;
        MPI_Comm_idup(MPI_COMM_WORLD, &idup, &ir);
        MPI_Wait(&ir, MPI_STATUS_IGNORE);
        MPI_Barrier(idup);
        MPI_Comm_free(&idup);

        /* Rank r sends 1 + r elements to every peer i, ints to even peers and doubles to odd
         * ones; displacements are in bytes, 64 per peer. */
        int *sc = malloc(size * sizeof(int)), *rc = malloc(size * sizeof(int));
        int *sd = malloc(size * sizeof(int)), *rd = malloc(size * sizeof(int));
        MPI_Datatype *stypes = malloc(size * sizeof(MPI_Datatype));
        MPI_Datatype *rtypes = malloc(size * sizeof(MPI_Datatype));
        char *sbuf = calloc(size, 64), *rbuf = calloc(size, 64);
        for (int i = 0; i < size; i++) {
            sc[i] = 1 + rank;
            stypes[i] = i % 2 == 0 ? MPI_INT : MPI_DOUBLE;
            rc[i] = 1 + i;
            rtypes[i] = rank % 2 == 0 ? MPI_INT : MPI_DOUBLE;
            sd[i] = rd[i] = 64 * i;
        }
        MPI_Alltoallw(sbuf, sc, sd, stypes, rbuf, rc, rd, rtypes, MPI_COMM_WORLD);
        free(sc), free(rc), free(sd), free(rd), free(stypes), free(rtypes), free(sbuf), free(rbuf);

        /* A 2-D grid (size/2 x 2), periodic in dimension 0 only. */
        MPI_Comm cart;
        int dims[2] = {size / 2, 2}, periods[2] = {1, 0};
        if (size % 2 == 0) {
            MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
            int nb[8] = {0}, nb2[24] = {0};
            MPI_Neighbor_allgather(x, 2, MPI_INT, nb, 2, MPI_INT, cart);
            MPI_Neighbor_alltoall(big_for_neighbors(x), 3, MPI_INT, nb2, 3, MPI_INT, cart);
            for (int i = 0; i < 8; i++) y[i] += nb[i];
            MPI_Comm_free(&cart);
        }

        /* Even and odd ranks joined by an intercommunicator (leaders: world ranks 0 and 1);
         * local rank k of each group exchanges with remote rank k. */
        MPI_Comm local, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 99, &inter);
        int lrank, rsize;
        MPI_Comm_rank(local, &lrank);
        MPI_Comm_remote_size(inter, &rsize);
        if (lrank < rsize)
            MPI_Sendrecv(a, 2, MPI_DOUBLE, lrank, 40, b, 2, MPI_DOUBLE, lrank, 40, inter,
                         MPI_STATUS_IGNORE);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }

    /* What rank 0 received last, as a result line that tracing must not change. */
    double sum = 0.0;
    for (int i = 0; i < N; i++) sum += b[i] + y[i];
    if (rank == 0) printf("coverage: done on %d ranks, checksum %.6f\n", size, sum);
    MPI_Finalize();
    return 0;
}
