/* Experiment of validation/tracing/contention.sh: the smallest possible "tracer" around MPI_Send
 * and MPI_Recv, doing only what CLOCKWRAP_MODE says before and after each call:
 *   0 nothing, 1 read CLOCK_THREAD_CPUTIME_ID (a system call that updates the task's scheduler
 *   accounting), 2 read CLOCK_MONOTONIC (vDSO, no system call), 3 a getppid() system call.
 * Build: mpicc -O2 -shared -fPIC -o libclockwrap.so clockwrap.c */
#include <mpi.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int mode = -1;
static volatile long sink;

static void point(void) {
    struct timespec ts;
    if (mode < 0) {
        const char *m = getenv("CLOCKWRAP_MODE");
        mode = m ? atoi(m) : 0;
    }
    switch (mode) {
    case 1: clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); sink += ts.tv_nsec; break;
    case 2: clock_gettime(CLOCK_MONOTONIC, &ts); sink += ts.tv_nsec; break;
    case 3: sink += syscall(SYS_getppid); break;
    default: break;
    }
}

int MPI_Send(const void *b, int c, MPI_Datatype d, int dst, int tag, MPI_Comm comm) {
    point();
    int r = PMPI_Send(b, c, d, dst, tag, comm);
    point();
    return r;
}

int MPI_Recv(void *b, int c, MPI_Datatype d, int src, int tag, MPI_Comm comm, MPI_Status *st) {
    point();
    int r = PMPI_Recv(b, c, d, src, tag, comm, st);
    point();
    return r;
}
