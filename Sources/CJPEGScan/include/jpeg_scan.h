#ifndef DEDOG_JPEG_SCAN_H
#define DEDOG_JPEG_SCAN_H

#include <stddef.h>

/// What libjpeg said while reading every scan of a JPEG's entropy-coded data (no pixels are made).
///
/// TurboJPEG reports only the first warning, as text. Telling a harmless warning (extraneous bytes before a
/// marker, which some cameras and editors write and every browser shows) from real damage (a bad Huffman code,
/// data that ends early) needs each warning's code, which only libjpeg's own error manager sees: hence this.
typedef struct {
    /// Warnings that leave the pixels as the encoder made them: extraneous bytes between segments, an unknown
    /// JFIF revision or Adobe transform, sequential SOS parameters out of range, a bad ICC marker, an
    /// inconsistent progression.
    int harmless;
    /// Warnings that mean the entropy-coded data is damaged, so pixels are lost or wrong.
    int damaged;
    /// Warnings that mean the data ends before the image does.
    int truncated;
    /// libjpeg gave up with an error (or the file has more than `max_scans` scans).
    int failed;
    /// libjpeg's words for the first warning that was not harmless, or for the error.
    char message[200];
} dedog_jpeg_scan_report;

/// Reads the JPEG in `data` to its end, as a decoder would, and reports what libjpeg warned about.
void dedog_jpeg_scan(const unsigned char *data, size_t size, int max_scans, dedog_jpeg_scan_report *report);

#endif
