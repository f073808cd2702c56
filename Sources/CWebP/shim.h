// libwebp's decoder and demuxer (Debian: libwebp-dev): still and animated WebP, and the EXIF chunk.
#include <webp/decode.h>
#include <webp/demux.h>
