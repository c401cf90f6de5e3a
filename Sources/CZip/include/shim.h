// libzip's header for KTVScore's MXLContainer (compressed MusicXML); the library is loaded only
// when an .mxl is read (loader.c): linked, it and the libcrypto it needs were mapped and relocated
// at every `ktv` start, about 2 MB more for every process.
#include <stddef.h>
#include <zip.h>

/// Loads libzip and every function MXLContainer calls, once per process. Returns 1 when they are
/// ready; 0 when not, with the loader's reason in `reason` (`size` bytes, NUL-terminated). No other
/// zip function may be called before this returned 1.
int ktv_zip_load(char *reason, size_t size);
