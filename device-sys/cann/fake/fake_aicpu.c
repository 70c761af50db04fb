/* The fake's AICPU side, done the way CANN does it: the bootstrap launch through the
 * extend-kernels library (rtAicpuKernelLaunchExWithArgs, kernel type 5: the names and
 * offsets in the 304-byte argument block are checked, the dispatcher SO is written out of
 * device memory, loaded, and its ...KernelServerInit is called with the device arguments;
 * a second upload in one process is refused, where CANN would silently ignore it), the
 * registration of AICPU kernels from a JSON file (rtsBinaryLoadFromFile: the name must end
 * in .json, each entry's SO is loaded from the preinstall directory with RTLD_LAZY |
 * RTLD_GLOBAL and stays loaded), and their launch (rtsLaunchCpuKernel: blockDim threads,
 * each with its own copy of the payload; a non-zero return is 507018 at the next sync). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../pto_cann.h"
#include "fake_internal.h"

#define BOOT_ARGS_BYTES 304
#define BOOT_KERNEL_OFF 208
#define BOOT_SO_OFF 240
#define MAX_ENTRIES 8
#define MAX_BINARIES 16
#define MAX_AICPU_THREADS 16
#define MAX_PAYLOAD (64u << 10)

typedef uint32_t (*entry_fn)(void *);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int uploaded;

/* ---- the bootstrap ---- */

struct boot {
    uint8_t args[BOOT_ARGS_BYTES];
};

static uint64_t word(const uint8_t *p, size_t off) {
    uint64_t v;
    memcpy(&v, p + off, 8);
    return v;
}

/* Writes `len` bytes at `data` to `path` through a temporary file and a rename. */
static int write_file(const char *path, const void *data, size_t len) {
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    if (fd < 0) return -1;
    ssize_t w = write(fd, data, len);
    close(fd);
    if (w != (ssize_t)len || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static uint32_t boot_run(void *ctx, uint32_t index) {
    (void)index;
    struct boot *b = ctx;
    const uint8_t *dev_args = (const uint8_t *)(uintptr_t)word(b->args, 40);
    if (!dev_args) return 1;
    const void *disp = (const void *)(uintptr_t)word(dev_args, 96);
    uint64_t disp_len = word(dev_args, 104), device = word(dev_args, 112);
    if (!disp || disp_len == 0) return 2;
    char path[512];
    snprintf(path, sizeof path, "%s/libpto_dispatcher_%llu.so", fake_preinstall_dir(),
             (unsigned long long)device);
    if (write_file(path, disp, disp_len) != 0) return 3;
    void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (!h) return 4;
    /* The three names CANN's extend-kernels library looks for; only ...Init is called. */
    entry_fn init = (entry_fn)dlsym(h, "DynTileFwkBackendKernelServerInit");
    int all = init && dlsym(h, "DynTileFwkBackendKernelServer") &&
              dlsym(h, "StaticTileFwkBackendKernelServer");
    uint32_t rc = all ? init((void *)dev_args) : 5;
    /* The dispatcher stays loaded, as in CANN's AICPU process. */
    return rc;
}

static void boot_done(void *ctx) { free(ctx); }

static int name_at(const rtAicpuArgsEx_t *a, uint32_t off, const char *want) {
    if (off + 32 > a->argsSize) return 0;
    const char *s = (const char *)a->args + off;
    return strnlen(s, 32) < 32 && !strcmp(s, want);
}

rtError_t rtAicpuKernelLaunchExWithArgs(uint32_t kernelType, const char *opName,
                                        uint32_t blockDim, const rtAicpuArgsEx_t *argsInfo,
                                        void *smDesc, rtStream_t stm, uint32_t flags) {
    (void)smDesc, (void)flags;
    if (FAKE_ENTER()) return FAKE_FAIL;
    if (kernelType != RT_KERNEL_TYPE_AICPU_KFC || !opName || strcmp(opName, "AST_DYN_AICPU"))
        return fake_error(FAKE_BAD_PARAM, "fake CANN: bootstrap wants kernel type 5 and op AST_DYN_AICPU");
    if (blockDim != 1 || !argsInfo || !argsInfo->args || argsInfo->argsSize < BOOT_ARGS_BYTES)
        return fake_error(FAKE_BAD_PARAM, "fake CANN: bootstrap wants blockDim 1 and %d argument bytes",
                          BOOT_ARGS_BYTES);
    if (argsInfo->kernelNameAddrOffset != BOOT_KERNEL_OFF || argsInfo->soNameAddrOffset != BOOT_SO_OFF ||
        !name_at(argsInfo, BOOT_KERNEL_OFF, "DynTileFwkKernelServerInit") ||
        !name_at(argsInfo, BOOT_SO_OFF, "libaicpu_extend_kernels.so"))
        return fake_error(FAKE_BAD_PARAM, "fake CANN: bootstrap kernel or SO name wrong or misplaced");
    pthread_mutex_lock(&mu);
    int again = uploaded;
    uploaded = 1;
    pthread_mutex_unlock(&mu);
    if (again)
        return fake_error(FAKE_BAD_PARAM,
                          "fake CANN: a second AICPU SO upload in one process (CANN ignores it)");
    struct boot *b = malloc(sizeof *b);
    if (!b) return FAKE_FAIL;
    memcpy(b->args, argsInfo->args, BOOT_ARGS_BYTES);
    int rc = fake_stream_submit(stm, 1, boot_run, b, boot_done, FAKE_AICPU_EXCEPTION);
    if (rc) {
        free(b);
        pthread_mutex_lock(&mu);
        uploaded = 0;
        pthread_mutex_unlock(&mu);
    }
    return rc;
}

/* ---- registration from JSON ---- */

struct entry {
    char op_type[96];
    entry_fn fn;
};

struct binary {
    int live;
    int n;
    struct entry e[MAX_ENTRIES];
};
static struct binary binaries[MAX_BINARIES];

static const char *ws(const char *p) {
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    return p;
}

/* Reads a JSON string (no escapes) into out; the text after it, or NULL. */
static const char *jstring(const char *p, char *out, size_t cap) {
    p = ws(p);
    if (*p != '"') return NULL;
    const char *end = strchr(p + 1, '"');
    if (!end || (size_t)(end - p - 1) >= cap) return NULL;
    memcpy(out, p + 1, (size_t)(end - p - 1));
    out[end - p - 1] = 0;
    return end + 1;
}

struct spec {
    char function[160], so[160], lib[160], engine[160];
};

/* Reads {"key": "value", ...} keeping the keys a kernel entry has. */
static const char *jentry(const char *p, struct spec *s) {
    p = ws(p);
    if (*p++ != '{') return NULL;
    for (;;) {
        p = ws(p);
        if (*p == '}') return p + 1;
        char key[64], val[160];
        if (!(p = jstring(p, key, sizeof key))) return NULL;
        p = ws(p);
        if (*p++ != ':') return NULL;
        if (!(p = jstring(p, val, sizeof val))) return NULL;
        if (!strcmp(key, "functionName")) snprintf(s->function, sizeof s->function, "%s", val);
        else if (!strcmp(key, "kernelSo")) snprintf(s->so, sizeof s->so, "%s", val);
        else if (!strcmp(key, "opKernelLib")) snprintf(s->lib, sizeof s->lib, "%s", val);
        else if (!strcmp(key, "engine")) snprintf(s->engine, sizeof s->engine, "%s", val);
        p = ws(p);
        if (*p == ',') p++;
    }
}

static void *load_so(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fake_preinstall_dir(), name);
    /* dlopen of a loaded file hands back the same handle: the SO stays loaded. */
    return dlopen(path, RTLD_LAZY | RTLD_GLOBAL);
}

static int parse(const char *text, struct binary *b) {
    const char *p = ws(text);
    if (*p++ != '{') return fake_error(FAKE_BAD_PARAM, "fake CANN: the registration is not a JSON object");
    for (;;) {
        p = ws(p);
        if (*p == '}') break;
        if (b->n == MAX_ENTRIES) return fake_error(FAKE_BAD_PARAM, "fake CANN: too many kernels");
        struct entry *e = &b->e[b->n];
        struct spec s = {0};
        if (!(p = jstring(p, e->op_type, sizeof e->op_type))) break;
        p = ws(p);
        if (*p++ != ':' || !(p = jentry(p, &s)))
            return fake_error(FAKE_BAD_PARAM, "fake CANN: malformed entry %s", e->op_type);
        if (strcmp(s.lib, "AICPUKernel") || strcmp(s.engine, "DNN_VM_AICPU") || !s.function[0] ||
            !s.so[0] || strchr(s.so, '/'))
            return fake_error(FAKE_BAD_PARAM,
                              "fake CANN: entry %s wants opKernelLib AICPUKernel, engine "
                              "DNN_VM_AICPU, a functionName and a kernelSo file name",
                              e->op_type);
        void *h = load_so(s.so);
        if (!h)
            return fake_error(FAKE_BAD_PARAM, "fake CANN: kernel SO %s is not in %s: %s", s.so,
                              fake_preinstall_dir(), dlerror());
        e->fn = (entry_fn)dlsym(h, s.function);
        if (!e->fn)
            return fake_error(FAKE_BAD_PARAM, "fake CANN: %s exports no %s", s.so, s.function);
        b->n++;
        p = ws(p);
        if (*p == ',') p++;
    }
    return b->n ? 0 : fake_error(FAKE_BAD_PARAM, "fake CANN: the registration names no kernel");
}

rtError_t rtsBinaryLoadFromFile(const char *binPath, const rtLoadBinaryConfig_t *optionalCfg,
                                rtBinHandle *handle) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    size_t n = binPath ? strlen(binPath) : 0;
    if (!handle || n < 5 || strcmp(binPath + n - 5, ".json"))
        return fake_error(FAKE_BAD_PARAM, "fake CANN: a registration file's name must end in .json");
    if (!optionalCfg || optionalCfg->numOpt != 1 || !optionalCfg->options ||
        optionalCfg->options->optionId != RT_LOAD_BINARY_OPT_CPU_KERNEL_MODE ||
        optionalCfg->options->value.cpuKernelMode != 0)
        return fake_error(FAKE_BAD_PARAM, "fake CANN: want one option: CPU kernel mode 0");
    FILE *f = fopen(binPath, "rb");
    if (!f) return fake_error(FAKE_BAD_PARAM, "fake CANN: cannot read %s", binPath);
    char text[8192];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    struct binary b = {0};
    int rc = parse(text, &b);
    if (rc) return rc;
    pthread_mutex_lock(&mu);
    struct binary *slot = NULL;
    for (int i = 0; i < MAX_BINARIES && !slot; i++)
        if (!binaries[i].live) slot = &binaries[i];
    if (slot) {
        *slot = b;
        slot->live = 1;
    }
    pthread_mutex_unlock(&mu);
    if (!slot) return fake_error(FAKE_FAIL, "fake CANN: too many binaries");
    fake_live_add(FK_CPU_BINARY, 1);
    *handle = slot;
    return 0;
}

rtError_t rtsBinaryUnload(rtBinHandle binHandle) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    struct binary *b = binHandle;
    pthread_mutex_lock(&mu);
    int ok = b >= binaries && b < binaries + MAX_BINARIES && b->live;
    if (ok) b->live = 0;
    pthread_mutex_unlock(&mu);
    if (!ok) return fake_error(FAKE_BAD_PARAM, "fake CANN: not a loaded binary");
    fake_live_add(FK_CPU_BINARY, -1);
    return 0;
}

rtError_t rtsFuncGetByName(rtBinHandle binHandle, const char *kernelName,
                           rtFuncHandle *funcHandle) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    struct binary *b = binHandle;
    rtError_t rc = fake_error(FAKE_BAD_PARAM, "fake CANN: no kernel %s", kernelName ? kernelName : "(null)");
    pthread_mutex_lock(&mu);
    if (b >= binaries && b < binaries + MAX_BINARIES && b->live && kernelName && funcHandle)
        for (int i = 0; i < b->n; i++)
            if (!strcmp(b->e[i].op_type, kernelName)) {
                *funcHandle = &b->e[i];
                rc = 0;
            }
    pthread_mutex_unlock(&mu);
    return rc;
}

/* ---- launching ---- */

struct cpu_launch {
    entry_fn fn;
    uint32_t size;
    uint8_t *copies; /* blockDim copies of the payload */
};

static uint32_t cpu_run(void *ctx, uint32_t index) {
    struct cpu_launch *l = ctx;
    return l->fn(l->copies + (size_t)index * l->size);
}

static void cpu_done(void *ctx) {
    struct cpu_launch *l = ctx;
    free(l->copies);
    free(l);
}

rtError_t rtsLaunchCpuKernel(rtFuncHandle funcHandle, uint32_t blockDim, rtStream_t stm,
                             const rtKernelLaunchCfg_t *cfg, rtCpuKernelArgs_t *argsInfo) {
    if (FAKE_ENTER()) return FAKE_FAIL;
    struct entry *e = funcHandle;
    entry_fn fn = NULL;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < MAX_BINARIES && !fn; i++)
        if (binaries[i].live && e >= binaries[i].e && e < binaries[i].e + binaries[i].n) fn = e->fn;
    pthread_mutex_unlock(&mu);
    if (!fn) return fake_error(FAKE_BAD_PARAM, "fake CANN: not a kernel of a loaded binary");
    if (!cfg || !cfg->attrs)
        return fake_error(FAKE_BAD_PARAM, "fake CANN: rtsLaunchCpuKernel wants a config with attribute storage");
    if (blockDim == 0 || blockDim > MAX_AICPU_THREADS)
        return fake_error(FAKE_BAD_PARAM, "fake CANN: blockDim %u (1..%d AICPU threads)", blockDim,
                          MAX_AICPU_THREADS);
    if (!argsInfo || !argsInfo->baseArgs.args || argsInfo->baseArgs.argsSize == 0 ||
        argsInfo->baseArgs.argsSize > MAX_PAYLOAD)
        return fake_error(FAKE_BAD_PARAM, "fake CANN: no payload, or one over %u bytes", MAX_PAYLOAD);
    struct cpu_launch *l = malloc(sizeof *l);
    uint32_t size = argsInfo->baseArgs.argsSize;
    uint8_t *copies = malloc((size_t)size * blockDim);
    if (!l || !copies) {
        free(l);
        free(copies);
        return FAKE_FAIL;
    }
    for (uint32_t i = 0; i < blockDim; i++) memcpy(copies + (size_t)i * size, argsInfo->baseArgs.args, size);
    *l = (struct cpu_launch){fn, size, copies};
    int rc = fake_stream_submit(stm, blockDim, cpu_run, l, cpu_done, FAKE_AICPU_EXCEPTION);
    if (rc) cpu_done(l);
    return rc;
}
