/* A program mixing MPI-4 sessions with the world model (MPI_Init), in the order given by its
 * argument (default "si"):
 *   si  MPI_Session_init, MPI_Init, MPI_Session_finalize, MPI_Finalize
 *   sf  MPI_Session_init, MPI_Init, MPI_Finalize, MPI_Session_finalize
 *   is  MPI_Init, MPI_Session_init, MPI_Session_finalize, MPI_Finalize
 * Each rank makes a communicator from the session's "mpi://WORLD" process set and calls
 * MPI_Barrier on it after making it and before freeing it, with one MPI_Barrier on
 * MPI_COMM_WORLD in between. The tracer starts at the first of MPI_Session_init and MPI_Init
 * and ends at the last of MPI_Session_finalize and MPI_Finalize (tracer/preload/src/session.rs).
 *
 * Needs an MPI library with sessions (MPICH >= 4.0): validation/programs/Makefile builds it
 * only then.
 *
 * usage: sessions_mixed [si|sf|is] */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static MPI_Session session;
static MPI_Comm comm;

static void open_session(void) {
    MPI_Group group;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
    MPI_Group_from_session_pset(session, "mpi://WORLD", &group);
    MPI_Comm_create_from_group(group, "timeless.sessions_mixed", MPI_INFO_NULL,
                               MPI_ERRORS_RETURN, &comm);
    MPI_Group_free(&group);
    MPI_Barrier(comm);
}

static void close_session(void) {
    MPI_Barrier(comm);
    MPI_Comm_free(&comm);
    MPI_Session_finalize(&session);
}

int main(int argc, char **argv) {
    const char *order = argc > 1 ? argv[1] : "si";
    int rank;
    if (strcmp(order, "si") && strcmp(order, "sf") && strcmp(order, "is")) {
        fprintf(stderr, "usage: sessions_mixed [si|sf|is]\n");
        return 2;
    }
    if (order[0] == 's') open_session();
    MPI_Init(&argc, &argv);
    if (order[0] == 'i') open_session();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (strcmp(order, "sf") == 0) {
        MPI_Finalize();
        close_session();
    } else {
        close_session();
        MPI_Finalize();
    }
    if (rank == 0) printf("sessions_mixed %s: done\n", order);
    return 0;
}
