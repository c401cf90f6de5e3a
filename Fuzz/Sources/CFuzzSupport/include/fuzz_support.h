#ifndef KTV_FUZZ_SUPPORT_H
#define KTV_FUZZ_SUPPORT_H
#include <stddef.h>

/// Opens `data` with libsndfile's virtual I/O as ktv's AudioReader does and reports what it finds:
/// returns 0 and fills the sample rate, channel count and frame count (counted by decoding when the
/// header gives none), or -1 when libsndfile does not open it.
int ktv_fuzz_probe_audio(const unsigned char *data, size_t size, int *rate, int *channels, long long *frames);

#endif
