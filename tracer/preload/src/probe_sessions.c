/* Compiled by build.rs to learn whether the MPI library has MPI-4 sessions (MPICH 4.0, Open MPI
 * 5): the functions the tracer wraps (src/session.rs) and the pset name it uses. Not linked. */
#include <mpi.h>

int timeless_probe_sessions(MPI_Session *s, MPI_Group *g, MPI_Comm *c)
{
    int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, s);
    rc |= MPI_Group_from_session_pset(*s, "mpi://WORLD", g);
    rc |= MPI_Comm_create_from_group(*g, "probe", MPI_INFO_NULL, MPI_ERRORS_RETURN, c);
    return rc | MPI_Session_finalize(s);
}
