/* Measurements behind presets/host.toml (this machine as the NP simulator's machine).
 *
 *   cc -O2 -o /tmp/host_latency scripts/host_latency.c && /tmp/host_latency
 *
 * clock: a chain of dependent 1-cycle integer adds (one add retires per cycle on any x86
 *        core), so adds per second = the running clock.
 * chase: load-to-load latency of a pointer chase over a random cyclic permutation of 64-byte
 *        lines in a 2 MiB-aligned buffer (transparent huge pages asked with madvise, to keep
 *        TLB misses out of the cache figures), best of 5 runs of 20 M loads per size.
 * Both are wall-clock figures: run them on an idle machine, or take the best of several runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void clock_mhz(void) {
    unsigned long x = 1, n = 400000000UL;
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        for (unsigned long i = 0; i < n; i += 8)
            __asm__ volatile("add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\t"
                             "add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0"
                             : "+r"(x));
        double dt = now() - t0;
        if (dt < best) best = dt;
    }
    printf("clock: %.0f MHz (%lu)\n", n / best / 1e6, x);
}

static void chase(size_t bytes) {
    const size_t huge = 2u << 20;
    size_t n = bytes / 64, alloc = (n * 64 + huge - 1) / huge * huge;
    char *buf = aligned_alloc(huge, alloc);
    size_t *perm = malloc(n * sizeof(size_t));
    if (!buf || !perm) { perror("alloc"); exit(1); }
    madvise(buf, alloc, MADV_HUGEPAGE);
    for (size_t i = 0; i < n; i++) perm[i] = i;
    srand(7);
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = ((size_t)rand() * RAND_MAX + rand()) % (i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (size_t i = 0; i < n; i++) *(void **)(buf + perm[i] * 64) = buf + perm[(i + 1) % n] * 64;
    void *p = buf;
    for (size_t i = 0; i < 2 * n; i++) p = *(void **)p;
    const size_t iters = 20000000;
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        for (size_t i = 0; i < iters; i++) p = *(void **)p;
        double ns = (now() - t0) / iters * 1e9;
        if (ns < best) best = ns;
    }
    printf("chase: %8zu KiB %7.2f ns (%p)\n", bytes >> 10, best, p);
    free(buf);
    free(perm);
}

int main(void) {
    clock_mhz();
    size_t sizes[] = {24 << 10, 256 << 10, 768 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 64 << 20, 512 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) chase(sizes[i]);
    return 0;
}
