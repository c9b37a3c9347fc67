/* ---- timeless proxy runtime (shared by every generated proxy) ---------------------------- */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Not every proxy calls every helper. */
#if defined(__GNUC__)
#define PROXY_HELPER static __attribute__((unused))
#else
#define PROXY_HELPER static
#endif

static int me, world_size;
static MPI_Comm comms[PROXY_COMMS];
static int *comm_members[PROXY_COMMS];
static int comm_sizes[PROXY_COMMS];
static char *sbuf, *rbuf;
static long mismatches;
static double kernel_iters_per_sec;
static volatile double kernel_sink;

/* A pending isend/irecv, keyed by (src, dst, tag) in world ranks as the TI `wait` names it. */
typedef struct {
    MPI_Request req;
    int src, dst, tag, is_recv;
    long count;
    MPI_Datatype dt;
} stored_t;
static stored_t *store;
static int nstore, capstore;

static void fail(const char *what)
{
    fprintf(stderr, "proxy: rank %d: %s\n", me, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* A TI receive records the count the program posted, an upper bound of what arrives (NAS MG
   posts its whole buffer and receives less): fewer elements are what the original got too.
   More would be truncated by MPI itself; a mismatch is a count above the posted one (undefined
   counts included). */
PROXY_HELPER void check_count(MPI_Status *st, MPI_Datatype dt, long expected)
{
    int got = 0;
    MPI_Get_count(st, dt, &got);
    if ((got < 0 || got > expected) && ++mismatches <= 5)
        fprintf(stderr, "proxy: rank %d: received %d elements from rank %d (tag %d) where the trace has %ld\n",
                me, got, st->MPI_SOURCE, st->MPI_TAG, expected);
}

PROXY_HELPER void store_push(MPI_Request q, int src, int dst, int tag, int is_recv, long count, MPI_Datatype dt)
{
    if (nstore == capstore) {
        capstore = capstore ? 2 * capstore : 64;
        store = realloc(store, (size_t)capstore * sizeof *store);
        if (!store)
            fail("out of memory for requests");
    }
    stored_t s = {q, src, dst, tag, is_recv, count, dt};
    store[nstore++] = s;
}

/* Index of the oldest stored request with this key, or -1. */
PROXY_HELPER int store_find(int src, int dst, int tag)
{
    for (int i = 0; i < nstore; i++)
        if (store[i].src == src && store[i].dst == dst && store[i].tag == tag)
            return i;
    return -1;
}

PROXY_HELPER void store_remove(int i)
{
    memmove(store + i, store + i + 1, (size_t)(nstore - i - 1) * sizeof *store);
    nstore--;
}

PROXY_HELPER void store_wait(int i)
{
    MPI_Status st;
    if (i < 0) {
        if (++mismatches <= 5)
            fprintf(stderr, "proxy: rank %d: a wait names no pending request\n", me);
        return;
    }
    MPI_Wait(&store[i].req, &st);
    if (store[i].is_recv)
        check_count(&st, store[i].dt, store[i].count);
    store_remove(i);
}

/* A test that found request i complete in the trace: complete it here, leaving a marker
   (MPI_REQUEST_NULL) that the trace's next wait on its key takes away, as SimGrid's replay
   does. */
PROXY_HELPER void store_complete(int i)
{
    MPI_Status st;
    if (i < 0)
        return;
    MPI_Wait(&store[i].req, &st);
    if (store[i].is_recv) {
        check_count(&st, store[i].dt, store[i].count);
        store[i].is_recv = 0;
    }
}

PROXY_HELPER void store_waitall(void)
{
    if (nstore == 0)
        return;
    MPI_Request *q = malloc((size_t)nstore * sizeof *q);
    MPI_Status *st = malloc((size_t)nstore * sizeof *st);
    if (!q || !st)
        fail("out of memory for waitall");
    for (int i = 0; i < nstore; i++)
        q[i] = store[i].req;
    MPI_Waitall(nstore, q, st);
    for (int i = 0; i < nstore; i++)
        if (store[i].is_recv)
            check_count(&st[i], store[i].dt, store[i].count);
    free(q);
    free(st);
    nstore = 0;
}

/* Rank of world rank w in communicator c. */
PROXY_HELPER int comm_rank_of(int c, int w)
{
    if (c == 0)
        return w;
    for (int i = 0; i < comm_sizes[c]; i++)
        if (comm_members[c][i] == w)
            return i;
    fail("a peer is not a member of the communicator");
    return MPI_PROC_NULL;
}

/* Communicator c of the members me + disp[i], created by the members only. */
PROXY_HELPER void comm_create(int c, const int *disp, int n)
{
    MPI_Group wg, g;
    int *m = malloc((size_t)n * sizeof *m);
    if (!m)
        fail("out of memory for a communicator");
    for (int i = 0; i < n; i++)
        m[i] = me + disp[i];
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_incl(wg, n, m, &g);
    /* Ranks may number one communicator differently: the tag must not depend on c. */
    MPI_Comm_create_group(MPI_COMM_WORLD, g, 0, &comms[c]);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    free(comm_members[c]);
    comm_members[c] = m;
    comm_sizes[c] = n;
}

PROXY_HELPER void prefix(const int *counts, int n, int *displs)
{
    int d = 0;
    for (int i = 0; i < n; i++) {
        displs[i] = d;
        d += counts[i];
    }
}

/* Probe, then receive what was probed (a TI receive of unknown size). */
PROXY_HELPER void recv_probed(int src, int tag, MPI_Datatype dt, MPI_Comm comm)
{
    MPI_Status st;
    int n = 0;
    MPI_Probe(src, tag, comm, &st);
    MPI_Get_count(&st, dt, &n);
    MPI_Recv(rbuf, n, dt, src, tag, comm, MPI_STATUS_IGNORE);
}

PROXY_HELPER double kernel(long iters)
{
    double x = 1.0, y = 0.5;
    for (long i = 0; i < iters; i++) {
        x = x * 1.0000001 + y;
        y = y * 0.9999999 - 1e-9;
    }
    return x + y;
}

/* This thread's CPU time: the tracer's compute volumes are CPU seconds, and ranks that share
   cores calibrate at the same time; wall time would measure a fraction of the rate, and each
   burst would do that fraction of the work. */
PROXY_HELPER double cpu_now(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return MPI_Wtime();
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Iterations of the kernel per CPU second on this machine, measured in about `budget_secs` of
   this thread's CPU time: the run length doubles from 4096 iterations until one run takes a
   twelfth of the budget (at most a third of the budget spent so far), then three runs of a fifth
   of the budget each, whose median is the rate. 0 skips it (a rank that never computes). */
PROXY_HELPER void calibrate(double budget_secs)
{
    if (!(budget_secs > 0))
        return;
    long iters = 1 << 12;
    double t;
    for (;;) {
        double t0 = cpu_now();
        kernel_sink += kernel(iters);
        t = cpu_now() - t0;
        if (t >= budget_secs / 12 || iters > (1L << 40))
            break;
        iters *= 2;
    }
    if (t > 0)
        iters = (long)((double)iters / t * (budget_secs / 5)) + 1;
    double r[3];
    for (int k = 0; k < 3; k++) {
        double t0 = cpu_now();
        kernel_sink += kernel(iters);
        t = cpu_now() - t0;
        r[k] = t > 0 ? (double)iters / t : 0;
    }
    double lo = r[0] < r[1] ? r[0] : r[1], hi = r[0] < r[1] ? r[1] : r[0];
    kernel_iters_per_sec = r[2] < lo ? lo : (r[2] > hi ? hi : r[2]);
}

/* CPU seconds a rank spends calibrating its kernel: 1 % of the computation it will do, within
   [0.3 ms, 6 ms] (a 0.3 ms run reads the CPU clock to better than 0.1 % here; 6 ms, the cap,
   is reached at 0.6 s of computation); 0 for a rank that does not compute. A fixed cost
   weighed on short runs: 26 ms of CPU per rank took 4-7 % of a 1.4 s proxy folded 2 ranks per
   core. */
PROXY_HELPER double calibration_budget_secs(double compute_secs)
{
    if (!(compute_secs > 0))
        return 0;
    double b = 0.01 * compute_secs;
    return b < 3e-4 ? 3e-4 : (b > 6e-3 ? 6e-3 : b);
}

/* A compute burst that lasted `secs` on the reference machine (its flops at the trace's
   reference speed): busy work of that duration at the kernel's measured rate, a sleep, or
   nothing. */
PROXY_HELPER void compute(double secs)
{
    secs *= PROXY_SCALE_COMPUTE;
    if (secs <= 0)
        return;
#if PROXY_COMPUTE == 1
    kernel_sink += kernel((long)(secs * kernel_iters_per_sec));
#elif PROXY_COMPUTE == 2
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    nanosleep(&ts, NULL);
#endif
}

static void proxy_run(int rank);
/* Seconds of computation `rank` does over the whole run (its group's total), before
   PROXY_SCALE_COMPUTE. */
PROXY_HELPER double proxy_compute_secs(int rank);

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (world_size != PROXY_RANKS) {
        if (me == 0)
            fprintf(stderr, "proxy: generated for %d ranks, run with %d\n", PROXY_RANKS, world_size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    comms[0] = MPI_COMM_WORLD;
    sbuf = calloc(PROXY_BUF_BYTES + 1, 1);
    rbuf = calloc(PROXY_BUF_BYTES + 1, 1);
    if (!sbuf || !rbuf)
        fail("out of memory for message buffers");
#if PROXY_COMPUTE == 1
    calibrate(calibration_budget_secs(proxy_compute_secs(me) * PROXY_SCALE_COMPUTE));
#endif
    double t0 = MPI_Wtime();
    proxy_run(me);
    double elapsed = MPI_Wtime() - t0;
    double tmax, tmin, tsum;
    long bad;
    /* PMPI_: the report is not part of the reproduced calls (a tracer does not see it). */
    PMPI_Reduce(&elapsed, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    PMPI_Reduce(&elapsed, &tmin, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    PMPI_Reduce(&elapsed, &tsum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Allreduce(&mismatches, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) {
        printf("proxy: %d ranks, time max %.6f s, min %.6f s, mean %.6f s\n", world_size, tmax, tmin,
               tsum / world_size);
        printf("proxy: %ld size mismatches\n", bad);
    }
    MPI_Finalize();
    return bad ? 1 : 0;
}
/* ---- end of runtime ------------------------------------------------------------------------ */
