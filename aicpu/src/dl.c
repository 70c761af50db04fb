/* libc's dynamic loader calls at the glibc baseline's symbol versions (GLIBC_2.17 on
 * aarch64, the first aarch64 glibc): linked against a newer glibc, they would otherwise
 * bind to GLIBC_2.34, where glibc moved them into libc.so.6. */
#include <dlfcn.h>

#if defined(__aarch64__)
__asm__(".symver dlopen,dlopen@GLIBC_2.17");
__asm__(".symver dlsym,dlsym@GLIBC_2.17");
__asm__(".symver dlclose,dlclose@GLIBC_2.17");
#elif defined(__x86_64__)
__asm__(".symver dlopen,dlopen@GLIBC_2.2.5");
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
__asm__(".symver dlclose,dlclose@GLIBC_2.2.5");
#endif

void *pto_dl_open(const char *path, int flags) { return dlopen(path, flags); }
void *pto_dl_sym(void *handle, const char *name) { return dlsym(handle, name); }
int pto_dl_close(void *handle) { return dlclose(handle); }
