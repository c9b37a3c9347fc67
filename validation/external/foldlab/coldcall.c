#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
/* The cold-call lab (validation/external/README.md, run 12): how long a 2-rank MPI_Allreduce
   of one double takes right after each rank streamed through W bytes of its own memory.
   Usage: mpirun -np 2 --bind-to core ./coldcall [W_BYTES ...] (default: 8 KiB to 64 MiB).
   Per W: 2,000 iterations of (update W bytes, barrier, update W bytes again, allreduce); the
   allreduce's time on each rank, and per iteration the smaller of the two (the last rank to
   arrive, which waits for nobody). Prints the median and the 10th percentile of that time.
   The replay's network model is calibrated by back-to-back ping-pongs (warm caches); after a
   burst larger than the caches the MPI library's shared state must come back to the core
   first (timeless/cold-call-secs). */
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void update(double *a, long n) {
    for (long i = 0; i < n; i++) a[i] = a[i] * 1.0000001 + 1.0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r; MPI_Comm_rank(MPI_COMM_WORLD, &r);
    long sizes[32]; int ns = 0;
    for (int i = 1; i < argc && ns < 32; i++) sizes[ns++] = atol(argv[i]);
    if (ns == 0) for (long w = 8192; w <= (64L << 20); w *= 8) sizes[ns++] = w;
    enum { ITERS = 2000 };
    static double took[ITERS], last[ITERS];
    double sink = 0;
    for (int s = 0; s < ns; s++) {
        long n = sizes[s] / (long)sizeof(double);
        if (n < 1) n = 1;
        double *a = malloc((size_t)n * sizeof(double));
        if (!a) MPI_Abort(MPI_COMM_WORLD, 1);
        for (long i = 0; i < n; i++) a[i] = (double)i;
        for (int it = 0; it < ITERS; it++) {
            update(a, n);
            MPI_Barrier(MPI_COMM_WORLD);
            update(a, n);
            double x = a[it % n], y, t0 = MPI_Wtime();
            MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            took[it] = MPI_Wtime() - t0;
            sink += y;
        }
        MPI_Reduce(took, last, ITERS, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        if (r == 0) {
            qsort(last, ITERS, sizeof(double), cmp);
            printf("W = %9ld B: allreduce of the last to arrive: median %7.2f us, p10 %7.2f us\n",
                   sizes[s], 1e6 * last[ITERS / 2], 1e6 * last[ITERS / 10]);
        }
        free(a);
    }
    if (r == 0 && sink == 42.0) printf("\n");
    MPI_Finalize();
    return 0;
}
