/* Writes the examples' inputs and golden outputs (little-endian files) into the directory
 * given as the only argument: vector_add/{x,y,golden}.bin and pipeline/{x,golden}.bin (N
 * f32 values each); experts/route.bin (T u32: the expert each token chose; experts 3 and 6
 * none), experts/x.bin (T f32), experts/out.golden (EXPERTS x T f32: the chosen experts'
 * outputs, zeros for the two skipped) and experts/y.golden (T f32); layers/{x,golden}.bin
 * (N f32) and layers/w.bin (LAYERS x N f32). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096
#define T 256
#define EXPERTS 8
#define LAYERS 4

static int write_words(const char *dir, const char *name, const void *v, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(v, 4, n, f) != n || fclose(f) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

static int write_f32(const char *dir, const char *name, const float *v, size_t n) {
    return write_words(dir, name, v, n);
}

/* The experts example: who chose which expert, the input, and the golden outputs. */
static int experts(const char *dir) {
    static const uint32_t chosen[6] = {0, 1, 2, 4, 5, 7};
    static uint32_t route[T];
    static float x[T], out[EXPERTS * T], y[T];
    for (int t = 0; t < T; t++) {
        route[t] = chosen[(t * 5) % 6];
        x[t] = 0.5f * (float)(t % 32) - 4.0f;
        y[t] = (float)(route[t] + 1) * x[t];
    }
    for (uint32_t e = 0; e < EXPERTS; e++) {
        int used = 0;
        for (int t = 0; t < T; t++) used |= route[t] == e;
        for (int t = 0; t < T; t++)
            out[e * T + t] = !used ? 0.0f : route[t] == e ? (float)(e + 1) * x[t] : -1.0f;
    }
    return write_words(dir, "experts/route.bin", route, T) |
           write_f32(dir, "experts/x.bin", x, T) |
           write_f32(dir, "experts/out.golden", out, EXPERTS * T) |
           write_f32(dir, "experts/y.golden", y, T);
}

/* The layers example: x, the layers' weights, and y after every layer's (x + w) + w, added
 * in the kernels' order (multiples of 1/8: exact in f32). */
static int layers(const char *dir) {
    static float x[N], w[LAYERS * N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = 0.5f * (float)(i % 7);
        y[i] = x[i];
    }
    for (int l = 0; l < LAYERS; l++)
        for (int i = 0; i < N; i++) {
            w[l * N + i] = 0.125f * (float)(l + 1) * (float)(i % 5 - 2);
            float t = y[i] + w[l * N + i];
            y[i] = t + w[l * N + i];
        }
    return write_f32(dir, "layers/x.bin", x, N) | write_f32(dir, "layers/w.bin", w, LAYERS * N) |
           write_f32(dir, "layers/golden.bin", y, N);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    static float x[N], y[N], z[N];
    double sum = 0;
    for (int i = 0; i < N; i++) {
        x[i] = 0.25f * (float)i;
        y[i] = 1000.0f - (float)i;
        z[i] = x[i] + y[i];
    }
    int rc = write_f32(argv[1], "vector_add/x.bin", x, N) |
             write_f32(argv[1], "vector_add/y.bin", y, N) |
             write_f32(argv[1], "vector_add/golden.bin", z, N);
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i % 17 - 8) * 0.5f;
        sum += (double)x[i] * x[i];
    }
    float s = (float)sum;
    rc |= write_f32(argv[1], "pipeline/x.bin", x, N) | write_f32(argv[1], "pipeline/golden.bin", &s, 1);
    return rc | experts(argv[1]) | layers(argv[1]);
}
