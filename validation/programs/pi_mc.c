/* Master/worker Monte-Carlo estimation of pi. The master (rank 0) broadcasts the chunk size,
 * hands out chunks, and collects results from whichever worker finishes first: blocking
 * MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG) for the first result, then MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG)
 * completed by MPI_Wait. Workers probe for their next message (MPI_Probe) before receiving it.
 * Workers tag their results TAG_RESULT + rank, so a traced wildcard receive must record the real
 * source and tag. A final MPI_Reduce sums the samples each worker drew. Work messages carry the
 * chunk number, which seeds the chunk's generator: the estimate does not depend on which worker
 * drew which chunk.
 *
 * usage: pi_mc [chunks=24] [samples per chunk=200000] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { TAG_WORK = 1, TAG_STOP = 2, TAG_RESULT = 10 };

static long hits(long samples, unsigned *seed) {
    long h = 0;
    for (long i = 0; i < samples; i++) {
        double x = rand_r(seed) / (double)RAND_MAX, y = rand_r(seed) / (double)RAND_MAX;
        if (x * x + y * y <= 1.0) h++;
    }
    return h;
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long params[2] = {argc > 1 ? atol(argv[1]) : 24, argc > 2 ? atol(argv[2]) : 200000};
    MPI_Bcast(params, 2, MPI_LONG, 0, MPI_COMM_WORLD);
    long chunks = params[0], samples = params[1], drawn = 0;
    if (size < 2) {
        fprintf(stderr, "pi_mc needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) {
        long sent = 0, done = 0, total = 0, result;
        MPI_Status st;
        for (int w = 1; w < size; w++) {
            int tag = sent < chunks ? TAG_WORK : TAG_STOP;
            MPI_Send(&sent, 1, MPI_LONG, w, tag, MPI_COMM_WORLD);
            if (tag == TAG_WORK) sent++;
        }
        while (done < sent) {
            if (done == 0) {
                MPI_Recv(&result, 1, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            } else {
                MPI_Request r;
                MPI_Irecv(&result, 1, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
                MPI_Wait(&r, &st);
            }
            done++;
            total += result;
            int tag = sent < chunks ? TAG_WORK : TAG_STOP;
            MPI_Send(&sent, 1, MPI_LONG, st.MPI_SOURCE, tag, MPI_COMM_WORLD);
            if (tag == TAG_WORK) sent++;
        }
        printf("pi_mc: pi ~ %.6f from %ld chunks\n", 4.0 * total / (double)(chunks * samples), chunks);
    } else {
        for (;;) {
            MPI_Status st;
            long chunk;
            MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Recv(&chunk, 1, MPI_LONG, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (st.MPI_TAG == TAG_STOP) break;
            unsigned seed = 12345u + 977u * (unsigned)chunk;
            long h = hits(samples, &seed);
            drawn += samples;
            MPI_Send(&h, 1, MPI_LONG, 0, TAG_RESULT + rank, MPI_COMM_WORLD);
        }
    }
    long all_drawn = 0;
    MPI_Reduce(&drawn, &all_drawn, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("pi_mc: %ld samples drawn by the workers\n", all_drawn);
    MPI_Finalize();
    return 0;
}
