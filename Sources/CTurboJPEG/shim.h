// libjpeg-turbo's TurboJPEG API (Debian: libturbojpeg0-dev).
#include <turbojpeg.h>
