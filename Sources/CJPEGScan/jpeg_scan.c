#include "jpeg_scan.h"

#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

typedef struct {
    struct jpeg_error_mgr base;
    struct jpeg_progress_mgr progress;
    jmp_buf escape;
    dedog_jpeg_scan_report *report;
    int max_scans;
} scanner;

static void keep_message(j_common_ptr cinfo, dedog_jpeg_scan_report *report) {
    if (report->message[0] != '\0') return;
    char text[JMSG_LENGTH_MAX];
    cinfo->err->format_message(cinfo, text);
    snprintf(report->message, sizeof report->message, "%s", text);
}

static void on_error(j_common_ptr cinfo) {
    scanner *s = (scanner *)cinfo->err;
    s->report->failed = 1;
    s->report->message[0] = '\0';
    keep_message(cinfo, s->report);
    longjmp(s->escape, 1);
}

static void on_message(j_common_ptr cinfo, int level) {
    if (level >= 0) return;  // trace messages
    scanner *s = (scanner *)cinfo->err;
    switch (cinfo->err->msg_code) {
    case JWRN_EXTRANEOUS_DATA:
    case JWRN_JFIF_MAJOR:
    case JWRN_ADOBE_XFORM:
    case JWRN_NOT_SEQUENTIAL:
    case JWRN_BOGUS_ICC:
    case JWRN_BOGUS_PROGRESSION:
        s->report->harmless += 1;
        break;
    case JWRN_JPEG_EOF:
        s->report->truncated += 1;
        keep_message(cinfo, s->report);
        break;
    default:  // JWRN_HUFF_BAD_CODE, JWRN_ARITH_BAD_CODE, JWRN_HIT_MARKER, JWRN_MUST_RESYNC and anything new
        s->report->damaged += 1;
        keep_message(cinfo, s->report);
        break;
    }
}

static void on_progress(j_common_ptr cinfo) {
    scanner *s = (scanner *)cinfo->err;
    j_decompress_ptr d = (j_decompress_ptr)cinfo;
    if (d->is_decompressor && d->input_scan_number > s->max_scans) {
        s->report->failed = 1;
        snprintf(s->report->message, sizeof s->report->message,
                 "more than %d scans (a progressive JPEG built to use up time)", s->max_scans);
        longjmp(s->escape, 1);
    }
}

void dedog_jpeg_scan(const unsigned char *data, size_t size, int max_scans, dedog_jpeg_scan_report *report) {
    memset(report, 0, sizeof *report);
    struct jpeg_decompress_struct cinfo;
    scanner s;
    memset(&s, 0, sizeof s);
    s.report = report;
    s.max_scans = max_scans;
    cinfo.err = jpeg_std_error(&s.base);
    s.base.error_exit = on_error;
    s.base.emit_message = on_message;
    if (setjmp(s.escape)) {
        jpeg_destroy_decompress(&cinfo);
        return;
    }
    jpeg_create_decompress(&cinfo);
    s.progress.progress_monitor = on_progress;
    cinfo.progress = &s.progress;
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    jpeg_read_coefficients(&cinfo);  // every scan's entropy-coded data, without the inverse DCT
    jpeg_finish_decompress(&cinfo);  // the markers after the last scan, up to EOI
    jpeg_destroy_decompress(&cinfo);
}
