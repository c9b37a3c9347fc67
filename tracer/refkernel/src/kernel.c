/* The reference kernel of timeless (used by the tracer, tracer/preload, and by
 * `timeless calibrate compute`): y = a*x + y on 512 doubles, 2 flops per element, repeated `reps`
 * times, compiled at -O2 without vectorisation. Changing it changes every calibrated speed. */
#include <time.h>

double timeless_refkernel_daxpy(long reps) {
    enum { N = 512 };
    static double x[N], y[N];
    volatile double a_src = 1.0000001;
    double a = a_src;
    for (int i = 0; i < N; i++) {
        x[i] = 1e-9 * i;
        y[i] = 1.0;
    }
    for (long r = 0; r < reps; r++) {
        for (int i = 0; i < N; i++) y[i] = a * x[i] + y[i];
        __asm__ volatile("" ::: "memory");
    }
    double s = 0.0;
    for (int i = 0; i < N; i++) s += y[i];
    return s;
}

double timeless_refkernel_thread_cpu_secs(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
