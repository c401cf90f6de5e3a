// FFmpeg's headers for KTVAudio's FFmpegDecoder, whose libraries are loaded only when a file needs
// them (loader.c): a process that never decodes MP4, WebM or video does not map libavcodec and
// the hundred-odd libraries it needs, which cost every `ktv` run 35 ms and 25 MB.
#include <stddef.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libswresample/swresample.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>

// Macros Swift does not import.
static inline int ktv_averror_eof(void) { return AVERROR_EOF; }
static inline int ktv_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int64_t ktv_av_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int ktv_avseek_size(void) { return AVSEEK_SIZE; }

/// Loads libavformat, libavcodec, libswresample and libavutil (the major versions ktv was built
/// against) and every function FFmpegDecoder calls, once per process. Returns 1 when they are
/// ready; 0 when not, with the loader's reason in `reason` (`size` bytes, NUL-terminated). No other
/// FFmpeg function may be called before this returned 1.
int ktv_ffmpeg_load(char *reason, size_t size);
