/* foldbsp: a bulk-synchronous kernel whose burst length, imbalance and synchronisation are
 * set on the command line, to measure how a run folded several ranks per core spends its
 * cores (validation/external/README.md, "The folded-run lab").
 *
 *   foldbsp D_US SECS [IMB] [SYNC]
 *
 * Every iteration, rank r computes a dependent multiply-add chain of about
 * D_US x (1 + IMB x r) microseconds (at 3.3e8 chain steps per second: the nominal length;
 * the replay needs no exact value), then synchronises: SYNC 0 (default) an MPI_Allreduce of
 * one double, SYNC 1 a halo exchange with both ring neighbours (MPI_Irecv x2, MPI_Isend x2 of
 * 8 KiB, MPI_Waitall). SECS / (D_US x 1e-6) iterations. */
#include <mpi.h>
#include <stdlib.h>

static volatile double sink;

static void work(long n)
{
    double a = 1.0, b = 1.0000001;
    for (long i = 0; i < n; i++)
        a = a * b + 1e-9;
    sink = a;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, s;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    if (argc < 3) {
        if (r == 0)
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double d = atof(argv[1]) * 1e-6, secs = atof(argv[2]);
    double imb = argc > 3 ? atof(argv[3]) : 0.0;
    int sync = argc > 4 ? atoi(argv[4]) : 0;
    long n = (long)(d * (1.0 + imb * r) * 3.3e8);
    long iters = (long)(secs / d);
    static double out[2][1024], in[2][1024];
    double x = 1.0, y;
    for (long i = 0; i < iters; i++) {
        work(n);
        if (sync == 0) {
            MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        } else {
            MPI_Request q[4];
            int left = (r + s - 1) % s, right = (r + 1) % s;
            MPI_Irecv(in[0], 1024, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &q[0]);
            MPI_Irecv(in[1], 1024, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &q[1]);
            MPI_Isend(out[0], 1024, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &q[2]);
            MPI_Isend(out[1], 1024, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &q[3]);
            MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
        }
    }
    MPI_Finalize();
    return 0;
}
