// libheif's C API (Debian: libheif-dev): HEIC/HEIF through libde265, AVIF through libdav1d or libaom.
#include <libheif/heif.h>
