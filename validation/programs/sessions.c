/* An MPI-4 sessions program (no MPI_Init): the seed's ring (ring.c) on a communicator made
 * from a process set, in the order opposite to the world's.
 *
 * It starts a session, makes three communicators with MPI_Comm_create_from_group: `world`
 * from the "mpi://WORLD" process set, `self` from "mpi://SELF", and `reversed`, the world
 * group in reverse order (rank k of `reversed` is world rank size-1-k). Then `rounds` rounds
 * of the ring on `reversed`: its rank 0 (world rank size-1) computes `flops` and sends `bytes`
 * to its rank 1 (world rank size-2), and so on; each round ends with rank 0 receiving from the
 * last. Then one message to itself on `self`, and MPI_Reduce of the world ranks on `world`
 * (root 0) to check the ranks. Everything is freed before MPI_Session_finalize.
 *
 * Needs an MPI library with sessions (MPICH >= 4.0): validation/programs/Makefile builds it
 * only then.
 *
 * usage: sessions [rounds=4] [bytes=1000000] [flops=1000000] */
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

static void check(int rc, const char *what) {
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "sessions: %s failed (%d)\n", what, rc);
        exit(1);
    }
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 4;
    int bytes = argc > 2 ? atoi(argv[2]) : 1000000;
    long flops = argc > 3 ? atol(argv[3]) : 1000000;
    MPI_Session session;
    MPI_Group wgroup, sgroup, rgroup;
    MPI_Comm world, self, reversed;
    int rank, size, rrank;

    check(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session), "MPI_Session_init");
    check(MPI_Group_from_session_pset(session, "mpi://WORLD", &wgroup), "WORLD pset");
    check(MPI_Comm_create_from_group(wgroup, "timeless.sessions.world", MPI_INFO_NULL,
                                     MPI_ERRORS_RETURN, &world), "world communicator");
    check(MPI_Group_from_session_pset(session, "mpi://SELF", &sgroup), "SELF pset");
    check(MPI_Comm_create_from_group(sgroup, "timeless.sessions.self", MPI_INFO_NULL,
                                     MPI_ERRORS_RETURN, &self), "self communicator");
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    int *order = malloc(size * sizeof(int));
    for (int k = 0; k < size; k++) order[k] = size - 1 - k;
    check(MPI_Group_incl(wgroup, size, order, &rgroup), "MPI_Group_incl");
    check(MPI_Comm_create_from_group(rgroup, "timeless.sessions.reversed", MPI_INFO_NULL,
                                     MPI_ERRORS_RETURN, &reversed), "reversed communicator");
    MPI_Comm_rank(reversed, &rrank);

    char *buf = calloc(bytes > 0 ? bytes : 1, 1);
    int next = (rrank + 1) % size, prev = (rrank + size - 1) % size;
    for (int i = 0; i < rounds; i++) {
        if (rrank == 0) {
            compute(flops);
            MPI_Send(buf, bytes, MPI_BYTE, next, 0, reversed);
            MPI_Recv(buf, bytes, MPI_BYTE, prev, 0, reversed, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, bytes, MPI_BYTE, prev, 0, reversed, MPI_STATUS_IGNORE);
            compute(flops);
            MPI_Send(buf, bytes, MPI_BYTE, next, 0, reversed);
        }
    }

    int to_self = rank, from_self = -1;
    MPI_Request req;
    MPI_Irecv(&from_self, 1, MPI_INT, 0, 1, self, &req);
    MPI_Send(&to_self, 1, MPI_INT, 0, 1, self);
    MPI_Wait(&req, MPI_STATUS_IGNORE);

    int sum = -1;
    MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, 0, world);
    int ok = from_self == rank && rrank == size - 1 - rank &&
             (rank != 0 || sum == size * (size - 1) / 2);
    if (rank == 0)
        printf("sessions: %d rounds of %d bytes on %d ranks, reversed ring, rank sum %d: %s\n",
               rounds, bytes, size, sum, ok ? "ok" : "WRONG");
    else if (!ok)
        printf("sessions: rank %d: WRONG\n", rank);

    free(buf);
    free(order);
    MPI_Group_free(&rgroup);
    MPI_Group_free(&sgroup);
    MPI_Group_free(&wgroup);
    MPI_Comm_free(&reversed);
    MPI_Comm_free(&self);
    MPI_Comm_free(&world);
    check(MPI_Session_finalize(&session), "MPI_Session_finalize");
    return ok ? 0 : 1;
}
