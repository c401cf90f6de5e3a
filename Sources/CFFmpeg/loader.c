// FFmpeg's libraries loaded on first use (dlopen), not linked: libavcodec alone needs about a
// hundred shared libraries (codecs, X11, OpenCL, cairo…), and mapping and relocating them at every
// start made `ktv --version` 3.5× slower (49 ms against 14 ms) and every process 25 MB bigger,
// though most commands never decode MP4/WebM. Each function FFmpegDecoder calls is defined here
// under its own name (the header's declaration checks the signature) and forwards to the
// library's; hidden, so the loaded libraries never bind to these instead of each other's.
#include "shim.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KTV_STR2(x) #x
#define KTV_STR(x) KTV_STR2(x)
#ifdef __APPLE__
#define KTV_SONAME(name, major) "lib" name "." KTV_STR(major) ".dylib"
#else
#define KTV_SONAME(name, major) "lib" name ".so." KTV_STR(major)
#endif

enum { AVUTIL, SWRESAMPLE, AVCODEC, AVFORMAT, LIBRARIES };
static const char *const sonames[LIBRARIES] = {
    KTV_SONAME("avutil", LIBAVUTIL_VERSION_MAJOR),
    KTV_SONAME("swresample", LIBSWRESAMPLE_VERSION_MAJOR),
    KTV_SONAME("avcodec", LIBAVCODEC_VERSION_MAJOR),
    KTV_SONAME("avformat", LIBAVFORMAT_VERSION_MAJOR),
};

// Every function used: its library and name. The table's field types come from the headers.
#define KTV_FFMPEG_FUNCTIONS(X) \
    X(AVUTIL, av_channel_layout_copy) X(AVUTIL, av_channel_layout_uninit) X(AVUTIL, av_frame_alloc) \
    X(AVUTIL, av_frame_free) X(AVUTIL, av_frame_unref) X(AVUTIL, av_freep) X(AVUTIL, av_log_set_level) \
    X(AVUTIL, av_malloc) X(AVUTIL, av_strerror) \
    X(SWRESAMPLE, swr_alloc_set_opts2) X(SWRESAMPLE, swr_convert) X(SWRESAMPLE, swr_free) X(SWRESAMPLE, swr_init) \
    X(AVCODEC, av_packet_alloc) X(AVCODEC, av_packet_free) X(AVCODEC, av_packet_unref) \
    X(AVCODEC, avcodec_alloc_context3) X(AVCODEC, avcodec_find_decoder) X(AVCODEC, avcodec_flush_buffers) \
    X(AVCODEC, avcodec_free_context) X(AVCODEC, avcodec_get_name) X(AVCODEC, avcodec_open2) \
    X(AVCODEC, avcodec_parameters_to_context) X(AVCODEC, avcodec_receive_frame) X(AVCODEC, avcodec_send_packet) \
    X(AVFORMAT, av_find_best_stream) X(AVFORMAT, av_read_frame) X(AVFORMAT, av_seek_frame) \
    X(AVFORMAT, avformat_alloc_context) X(AVFORMAT, avformat_close_input) X(AVFORMAT, avformat_find_stream_info) \
    X(AVFORMAT, avformat_free_context) X(AVFORMAT, avformat_open_input) X(AVFORMAT, avformat_seek_file) \
    X(AVFORMAT, avio_alloc_context) X(AVFORMAT, avio_context_free)

static struct {
#define KTV_FIELD(lib, name) __typeof__(name) *name;
    KTV_FFMPEG_FUNCTIONS(KTV_FIELD)
#undef KTV_FIELD
} ff;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static char failure[512];

static void load(void) {
    void *handles[LIBRARIES];
    // Dependencies first; RTLD_GLOBAL so each finds the ones loaded before it.
    for (int k = 0; k < LIBRARIES; k++) {
        handles[k] = dlopen(sonames[k], RTLD_NOW | RTLD_GLOBAL);
        if (!handles[k]) {
            const char *why = dlerror();
            snprintf(failure, sizeof failure, "cannot load %s (%s)", sonames[k], why ? why : "not found");
            return;
        }
    }
#define KTV_RESOLVE(lib, name) \
    *(void **)&ff.name = dlsym(handles[lib], #name); \
    if (!ff.name) { snprintf(failure, sizeof failure, "%s has no function %s", sonames[lib], #name); return; }
    KTV_FFMPEG_FUNCTIONS(KTV_RESOLVE)
#undef KTV_RESOLVE
    loaded = 1;
}

int ktv_ffmpeg_load(char *reason, size_t size) {
    pthread_once(&once, load);
    if (!loaded && reason && size > 0) {
        strncpy(reason, failure, size - 1);
        reason[size - 1] = 0;
    }
    return loaded;
}

// Called only after ktv_ffmpeg_load returned 1; a call before is a programming error, stopped here
// rather than jumping through a null pointer.
static void require(void) {
    if (!loaded && !ktv_ffmpeg_load(NULL, 0)) {
        fprintf(stderr, "ktv: internal error: an FFmpeg function was called without FFmpeg loaded: %s\n", failure);
        abort();
    }
}

#define KTV_HIDDEN __attribute__((visibility("hidden")))
#define FWD(name, ...) require(); return ff.name(__VA_ARGS__)
#define FWDV(name, ...) require(); ff.name(__VA_ARGS__)

KTV_HIDDEN int av_channel_layout_copy(AVChannelLayout *dst, const AVChannelLayout *src) { FWD(av_channel_layout_copy, dst, src); }
KTV_HIDDEN void av_channel_layout_uninit(AVChannelLayout *layout) { FWDV(av_channel_layout_uninit, layout); }
KTV_HIDDEN AVFrame *av_frame_alloc(void) { require(); return ff.av_frame_alloc(); }
KTV_HIDDEN void av_frame_free(AVFrame **frame) { FWDV(av_frame_free, frame); }
KTV_HIDDEN void av_frame_unref(AVFrame *frame) { FWDV(av_frame_unref, frame); }
KTV_HIDDEN void av_freep(void *ptr) { FWDV(av_freep, ptr); }
KTV_HIDDEN void av_log_set_level(int level) { FWDV(av_log_set_level, level); }
KTV_HIDDEN void *av_malloc(size_t size) { FWD(av_malloc, size); }
KTV_HIDDEN int av_strerror(int errnum, char *buf, size_t size) { FWD(av_strerror, errnum, buf, size); }
KTV_HIDDEN int swr_alloc_set_opts2(struct SwrContext **ps, AVChannelLayout *out_layout, enum AVSampleFormat out_format, int out_rate,
                                   AVChannelLayout *in_layout, enum AVSampleFormat in_format, int in_rate, int log_offset, void *log_ctx) {
    FWD(swr_alloc_set_opts2, ps, out_layout, out_format, out_rate, in_layout, in_format, in_rate, log_offset, log_ctx);
}
KTV_HIDDEN int swr_convert(struct SwrContext *s, uint8_t **out, int out_count, const uint8_t **in, int in_count) {
    FWD(swr_convert, s, out, out_count, in, in_count);
}
KTV_HIDDEN void swr_free(struct SwrContext **s) { FWDV(swr_free, s); }
KTV_HIDDEN int swr_init(struct SwrContext *s) { FWD(swr_init, s); }
KTV_HIDDEN AVPacket *av_packet_alloc(void) { require(); return ff.av_packet_alloc(); }
KTV_HIDDEN void av_packet_free(AVPacket **pkt) { FWDV(av_packet_free, pkt); }
KTV_HIDDEN void av_packet_unref(AVPacket *pkt) { FWDV(av_packet_unref, pkt); }
KTV_HIDDEN AVCodecContext *avcodec_alloc_context3(const AVCodec *codec) { FWD(avcodec_alloc_context3, codec); }
KTV_HIDDEN const AVCodec *avcodec_find_decoder(enum AVCodecID id) { FWD(avcodec_find_decoder, id); }
KTV_HIDDEN void avcodec_flush_buffers(AVCodecContext *ctx) { FWDV(avcodec_flush_buffers, ctx); }
KTV_HIDDEN void avcodec_free_context(AVCodecContext **ctx) { FWDV(avcodec_free_context, ctx); }
KTV_HIDDEN const char *avcodec_get_name(enum AVCodecID id) { FWD(avcodec_get_name, id); }
KTV_HIDDEN int avcodec_open2(AVCodecContext *ctx, const AVCodec *codec, AVDictionary **options) { FWD(avcodec_open2, ctx, codec, options); }
KTV_HIDDEN int avcodec_parameters_to_context(AVCodecContext *ctx, const AVCodecParameters *par) { FWD(avcodec_parameters_to_context, ctx, par); }
KTV_HIDDEN int avcodec_receive_frame(AVCodecContext *ctx, AVFrame *frame) { FWD(avcodec_receive_frame, ctx, frame); }
KTV_HIDDEN int avcodec_send_packet(AVCodecContext *ctx, const AVPacket *pkt) { FWD(avcodec_send_packet, ctx, pkt); }
KTV_HIDDEN int av_find_best_stream(AVFormatContext *ic, enum AVMediaType type, int wanted, int related, const AVCodec **decoder, int flags) {
    FWD(av_find_best_stream, ic, type, wanted, related, decoder, flags);
}
KTV_HIDDEN int av_read_frame(AVFormatContext *s, AVPacket *pkt) { FWD(av_read_frame, s, pkt); }
KTV_HIDDEN int av_seek_frame(AVFormatContext *s, int stream, int64_t timestamp, int flags) { FWD(av_seek_frame, s, stream, timestamp, flags); }
KTV_HIDDEN AVFormatContext *avformat_alloc_context(void) { require(); return ff.avformat_alloc_context(); }
KTV_HIDDEN void avformat_close_input(AVFormatContext **s) { FWDV(avformat_close_input, s); }
KTV_HIDDEN int avformat_find_stream_info(AVFormatContext *ic, AVDictionary **options) { FWD(avformat_find_stream_info, ic, options); }
KTV_HIDDEN void avformat_free_context(AVFormatContext *s) { FWDV(avformat_free_context, s); }
KTV_HIDDEN int avformat_open_input(AVFormatContext **ps, const char *url, const AVInputFormat *fmt, AVDictionary **options) {
    FWD(avformat_open_input, ps, url, fmt, options);
}
KTV_HIDDEN int avformat_seek_file(AVFormatContext *s, int stream, int64_t min_ts, int64_t ts, int64_t max_ts, int flags) {
    FWD(avformat_seek_file, s, stream, min_ts, ts, max_ts, flags);
}
KTV_HIDDEN AVIOContext *avio_alloc_context(unsigned char *buffer, int size, int write_flag, void *opaque,
                                           int (*read_packet)(void *, uint8_t *, int), int (*write_packet)(void *, uint8_t *, int),
                                           int64_t (*seek)(void *, int64_t, int)) {
    FWD(avio_alloc_context, buffer, size, write_flag, opaque, read_packet, write_packet, seek);
}
KTV_HIDDEN void avio_context_free(AVIOContext **s) { FWDV(avio_context_free, s); }
