/* Writes the examples' inputs and golden outputs (little-endian f32 files) into the
 * directory given as the only argument: vector_add/{x,y,golden}.bin and
 * pipeline/{x,golden}.bin, N values each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096

static int write_f32(const char *dir, const char *name, const float *v, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(v, sizeof *v, n, f) != n || fclose(f) != 0) {
        perror(path);
        return 1;
    }
    return 0;
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
    return rc;
}
