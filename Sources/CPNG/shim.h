// libpng's simplified png_image_* API (Debian: libpng-dev).
#include <png.h>

// Composite macros that Swift cannot import, as constants.
static const unsigned int CPNG_FORMAT_RGBA = PNG_FORMAT_RGBA;
