// libzip loaded on first use (dlopen), not linked: see shim.h. Each function MXLContainer calls is
// defined here under its own name (the header's declaration checks the signature) and forwards to
// the library's; hidden, so no library ever binds to these instead of libzip's own.
// Declared without zip.h's default visibility, so the definitions below can be hidden.
#define ZIP_EXTERN
#include "shim.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// libzip's soname has been libzip.so.4 since 1.0 (2015); .so.5 in case it moves.
#ifdef __APPLE__
static const char *const sonames[] = { "libzip.5.dylib", "libzip.dylib" };
#else
static const char *const sonames[] = { "libzip.so.4", "libzip.so.5" };
#endif

#define KTV_ZIP_FUNCTIONS(X) \
    X(zip_discard) X(zip_error_fini) X(zip_error_init) X(zip_error_strerror) X(zip_fclose) X(zip_file_strerror) \
    X(zip_fopen_index) X(zip_fread) X(zip_get_name) X(zip_get_num_entries) X(zip_name_locate) X(zip_open_from_source) \
    X(zip_source_buffer_create) X(zip_source_free) X(zip_stat_index) X(zip_stat_init) X(zip_strerror)

static struct {
#define KTV_FIELD(name) __typeof__(name) *name;
    KTV_ZIP_FUNCTIONS(KTV_FIELD)
#undef KTV_FIELD
} fz;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static char failure[512];

static void load(void) {
    void *handle = NULL;
    for (size_t k = 0; k < sizeof sonames / sizeof sonames[0] && !handle; k++) handle = dlopen(sonames[k], RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        snprintf(failure, sizeof failure, "cannot load %s (%s)", sonames[0], why ? why : "not found");
        return;
    }
#define KTV_RESOLVE(name) \
    *(void **)&fz.name = dlsym(handle, #name); \
    if (!fz.name) { snprintf(failure, sizeof failure, "libzip has no function %s", #name); return; }
    KTV_ZIP_FUNCTIONS(KTV_RESOLVE)
#undef KTV_RESOLVE
    loaded = 1;
}

int ktv_zip_load(char *reason, size_t size) {
    pthread_once(&once, load);
    if (!loaded && reason && size > 0) {
        strncpy(reason, failure, size - 1);
        reason[size - 1] = 0;
    }
    return loaded;
}

static void require(void) {
    if (!loaded && !ktv_zip_load(NULL, 0)) {
        fprintf(stderr, "ktv: internal error: a libzip function was called without libzip loaded: %s\n", failure);
        abort();
    }
}

#define H __attribute__((visibility("hidden")))
H void zip_discard(zip_t *a) { require(); fz.zip_discard(a); }
H void zip_error_fini(zip_error_t *e) { require(); fz.zip_error_fini(e); }
H void zip_error_init(zip_error_t *e) { require(); fz.zip_error_init(e); }
H const char *zip_error_strerror(zip_error_t *e) { require(); return fz.zip_error_strerror(e); }
H int zip_fclose(zip_file_t *f) { require(); return fz.zip_fclose(f); }
H const char *zip_file_strerror(zip_file_t *f) { require(); return fz.zip_file_strerror(f); }
H zip_file_t *zip_fopen_index(zip_t *a, zip_uint64_t i, zip_flags_t fl) { require(); return fz.zip_fopen_index(a, i, fl); }
H zip_int64_t zip_fread(zip_file_t *f, void *b, zip_uint64_t n) { require(); return fz.zip_fread(f, b, n); }
H const char *zip_get_name(zip_t *a, zip_uint64_t i, zip_flags_t fl) { require(); return fz.zip_get_name(a, i, fl); }
H zip_int64_t zip_get_num_entries(zip_t *a, zip_flags_t fl) { require(); return fz.zip_get_num_entries(a, fl); }
H zip_int64_t zip_name_locate(zip_t *a, const char *n, zip_flags_t fl) { require(); return fz.zip_name_locate(a, n, fl); }
H zip_t *zip_open_from_source(zip_source_t *s, int fl, zip_error_t *e) { require(); return fz.zip_open_from_source(s, fl, e); }
H zip_source_t *zip_source_buffer_create(const void *d, zip_uint64_t n, int fr, zip_error_t *e) { require(); return fz.zip_source_buffer_create(d, n, fr, e); }
H void zip_source_free(zip_source_t *s) { require(); fz.zip_source_free(s); }
H int zip_stat_index(zip_t *a, zip_uint64_t i, zip_flags_t fl, zip_stat_t *st) { require(); return fz.zip_stat_index(a, i, fl, st); }
H void zip_stat_init(zip_stat_t *st) { require(); fz.zip_stat_init(st); }
H const char *zip_strerror(zip_t *a) { require(); return fz.zip_strerror(a); }
