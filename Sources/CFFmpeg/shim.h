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
