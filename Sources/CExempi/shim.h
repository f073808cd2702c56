// Exempi, the Adobe XMP toolkit with a C interface (Debian: libexempi-dev, BSD licence): XMP sidecars are parsed,
// edited and written by it (DedogSidecar).
#include <exempi/xmp.h>
#include <exempi/xmpconsts.h>
