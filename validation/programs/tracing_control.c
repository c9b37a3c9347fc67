/* Tracing switched off and on from inside the program: five phases of a ring exchange (tag =
 * phase number) after a compute loop, heavy in phases 1, 2 and 4. Phase 2 runs between
 * MPI_Pcontrol(0) and MPI_Pcontrol(1), phase 4 between MPI_Info_set(info, "TIMELESS_TRACING",
 * "OFF") and "ON": a trace holds the messages of phases 1, 3 and 5 and one heavy compute burst
 * per rank. Untraced, the switches change nothing.
 *
 * usage: tracing_control [heavy flops=20000000] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

static void compute(long flops) {
    double x = 1.0, a = 1.0000001, b = 1e-9;
    for (long i = 0; i < flops / 2; i++) x = x * a + b;
    sink = x;
}

static long phase(int tag, long flops, int rank, int size, long value) {
    compute(flops);
    long in = 0;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (rank == 0) {
        MPI_Send(&value, 1, MPI_LONG, next, tag, MPI_COMM_WORLD);
        MPI_Recv(&in, 1, MPI_LONG, prev, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&in, 1, MPI_LONG, prev, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&value, 1, MPI_LONG, next, tag, MPI_COMM_WORLD);
    }
    return in;
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    long heavy = argc > 1 ? atol(argv[1]) : 20000000;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long sum = phase(1, heavy, rank, size, rank + 1);
    MPI_Pcontrol(0);
    sum += 2 * phase(2, heavy, rank, size, rank + 2);
    MPI_Pcontrol(1);
    sum += 3 * phase(3, 1000, rank, size, rank + 3);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "TIMELESS_TRACING", "OFF");
    sum += 4 * phase(4, heavy, rank, size, rank + 4);
    MPI_Info_set(info, "TIMELESS_TRACING", "ON");
    MPI_Info_free(&info);
    sum += 5 * phase(5, 1000, rank, size, rank + 5);
    long total = 0;
    MPI_Reduce(&sum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("tracing_control: %d ranks, checksum %ld\n", size, total);
    MPI_Finalize();
    return 0;
}
