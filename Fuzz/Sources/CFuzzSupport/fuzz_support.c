#include "fuzz_support.h"
#include <sndfile.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const unsigned char *data;
    sf_count_t size;
    sf_count_t offset;
} memory_file;

static sf_count_t mf_length(void *p) { return ((memory_file *)p)->size; }

static sf_count_t mf_seek(sf_count_t offset, int whence, void *p) {
    memory_file *f = p;
    sf_count_t base = whence == SEEK_CUR ? f->offset : whence == SEEK_END ? f->size : 0;
    if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) return -1;
    if ((offset > 0 && base > INT64_MAX - offset) || base + offset < 0) return -1;
    f->offset = base + offset;
    return f->offset;
}

static sf_count_t mf_read(void *ptr, sf_count_t count, void *p) {
    memory_file *f = p;
    if (count <= 0 || f->offset >= f->size) return 0;
    sf_count_t n = f->size - f->offset < count ? f->size - f->offset : count;
    memcpy(ptr, f->data + f->offset, (size_t)n);
    f->offset += n;
    return n;
}

static sf_count_t mf_write(const void *ptr, sf_count_t count, void *p) { (void)ptr; (void)count; (void)p; return 0; }
static sf_count_t mf_tell(void *p) { return ((memory_file *)p)->offset; }

int ktv_fuzz_probe_audio(const unsigned char *data, size_t size, int *rate, int *channels, long long *frames) {
    memory_file f = { data, (sf_count_t)size, 0 };
    SF_VIRTUAL_IO vio = { mf_length, mf_seek, mf_read, mf_write, mf_tell };
    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *h = sf_open_virtual(&vio, SFM_READ, &info, &f);
    if (!h) return -1;
    *rate = info.samplerate;
    *channels = info.channels;
    *frames = info.frames;
    if ((info.frames <= 0 || info.frames == INT64_MAX) && info.channels > 0 && info.channels <= 64) {
        float buffer[4096];
        sf_count_t chunk = 4096 / info.channels, got, total = 0;
        while ((got = sf_readf_float(h, buffer, chunk)) > 0) total += got;
        *frames = total;
    }
    sf_close(h);
    return 0;
}
