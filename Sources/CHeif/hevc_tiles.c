#include "hevc_tiles.h"

#include <dlfcn.h>
#include <libde265/de265.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// The libde265 functions used, opened as libheif is (see heif_shim.c), typed as its header declares them.
#define DEDOG_DE265_FUNCTIONS(X)                                                                                      \
    X(de265_new_decoder)                                                                                             \
    X(de265_free_decoder)                                                                                            \
    X(de265_reset)                                                                                                   \
    X(de265_set_parameter_bool)                                                                                      \
    X(de265_start_worker_threads)                                                                                    \
    X(de265_push_NAL)                                                                                                \
    X(de265_flush_data)                                                                                              \
    X(de265_decode)                                                                                                  \
    X(de265_get_next_picture)                                                                                        \
    X(de265_release_next_picture)                                                                                    \
    X(de265_get_image_width)                                                                                         \
    X(de265_get_image_height)                                                                                        \
    X(de265_get_chroma_format)                                                                                       \
    X(de265_get_bits_per_pixel)                                                                                      \
    X(de265_get_image_plane)

#define DEDOG_DE265_POINTER(name) static __typeof__(&name) p_##name;
DEDOG_DE265_FUNCTIONS(DEDOG_DE265_POINTER)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;

static void load(void) {
    // The soname of Debian's libde265-0, which libheif1 depends on.
    void *library = dlopen("libde265.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
#define DEDOG_DE265_FIND(name)                                                                                        \
    p_##name = (__typeof__(&name))dlsym(library, #name);                                                              \
    if (!p_##name) return;
    DEDOG_DE265_FUNCTIONS(DEDOG_DE265_FIND)
    loaded = 1;  // open for the life of the process
}

int dedog_hevc_load(void) {
    pthread_once(&once, load);
    return loaded;
}

// ---------- work shared among threads: items taken in turn from a counter ----------

struct parallel {
    pthread_mutex_t lock;
    int next, count;
    void (*run)(void *context, int item, int worker);
    void *context;
};

struct worker_start {
    struct parallel *parallel;
    int worker;
};

static void *worker(void *argument) {
    const struct worker_start *start = argument;
    struct parallel *p = start->parallel;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        int item = p->next < p->count ? p->next++ : -1;
        pthread_mutex_unlock(&p->lock);
        if (item < 0) return NULL;
        p->run(p->context, item, start->worker);
    }
}

enum { MAX_THREADS = 16 };

/// Runs `run(context, i, worker)` for i in 0..<count on up to `threads` threads (the caller's among them), `worker`
/// numbering the thread (0 the caller's) so that each can keep state of its own.
static void parallel_for(int count, int threads, void (*run)(void *, int, int), void *context) {
    struct parallel p = {.next = 0, .count = count, .run = run, .context = context};
    pthread_mutex_init(&p.lock, NULL);
    if (threads > count) threads = count;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    pthread_t started[MAX_THREADS];
    struct worker_start starts[MAX_THREADS];
    int running = 0;
    for (int t = 1; t < threads; t++) {
        starts[t] = (struct worker_start){&p, t};
        if (pthread_create(&started[running], NULL, worker, &starts[t]) == 0) running++;
    }
    starts[0] = (struct worker_start){&p, 0};
    worker(&starts[0]);  // the caller works too, so the work gets done even if no thread could start
    for (int t = 0; t < running; t++) pthread_join(started[t], NULL);
    pthread_mutex_destroy(&p.lock);
}

// ---------- tiles ----------

struct tiles_job {
    const uint8_t *headers;
    size_t headers_size;
    int length_size;
    const struct dedog_hevc_tile *tiles;
    int tile_width, tile_height, filters, wavefront_threads;
    uint8_t *y, *cb, *cr;
    int canvas_width, canvas_height;
    int *outcomes;
    /// Each worker's decoder, made on its first tile and reset between tiles (a new decoder per tile allocates
    /// and faults in its picture buffers again: a third of the time on one thread).
    de265_decoder_context *decoders[MAX_THREADS];
};

static size_t read_length(const uint8_t *p, int size) {
    size_t n = 0;
    for (int i = 0; i < size; i++) n = n << 8 | p[i];
    return n;
}

/// Feeds `size` bytes of length-prefixed NAL units; 0 when a length runs past the end.
static int push_units(de265_decoder_context *decoder, const uint8_t *data, size_t size, int length_size) {
    size_t at = 0;
    while (at < size) {
        if (size - at < (size_t)length_size) return 0;
        size_t length = read_length(data + at, length_size);
        at += (size_t)length_size;
        if (length > size - at || length > 0x7fffffff) return 0;
        if (length > 0 && p_de265_push_NAL(decoder, data + at, (int)length, 0, NULL) != DE265_OK) return 0;
        at += length;
    }
    return 1;
}

static int decode_tile(struct tiles_job *job, int index, int worker) {
    const struct dedog_hevc_tile *tile = &job->tiles[index];
    de265_decoder_context *decoder = job->decoders[worker];
    if (decoder) {
        p_de265_reset(decoder);
    } else {
        decoder = job->decoders[worker] = p_de265_new_decoder();
        if (!decoder) return DEDOG_HEVC_NO_MEMORY;
        if (!job->filters) {
            p_de265_set_parameter_bool(decoder, DE265_DECODER_PARAM_DISABLE_DEBLOCKING, 1);
            p_de265_set_parameter_bool(decoder, DE265_DECODER_PARAM_DISABLE_SAO, 1);
        }
        if (job->wavefront_threads > 1) p_de265_start_worker_threads(decoder, job->wavefront_threads);
    }
    int outcome = DEDOG_HEVC_DAMAGED;
    if (push_units(decoder, job->headers, job->headers_size, 4) &&
        push_units(decoder, tile->data, tile->size, job->length_size)) {
        p_de265_flush_data(decoder);
        const struct de265_image *picture = NULL;
        int more = 1;
        for (int rounds = 0; more && !picture && rounds < 1000000; rounds++) {
            more = 0;
            if (p_de265_decode(decoder, &more) != DE265_OK) break;
            picture = p_de265_get_next_picture(decoder);
        }
        if (picture) {
            outcome = DEDOG_HEVC_UNEXPECTED;
            int w = p_de265_get_image_width(picture, 0), h = p_de265_get_image_height(picture, 0);
            if (w == job->tile_width && h == job->tile_height && p_de265_get_chroma_format(picture) == de265_chroma_420 &&
                p_de265_get_bits_per_pixel(picture, 0) == 8 && p_de265_get_bits_per_pixel(picture, 1) == 8 &&
                p_de265_get_bits_per_pixel(picture, 2) == 8 && p_de265_get_image_width(picture, 1) == w / 2 &&
                p_de265_get_image_height(picture, 1) == h / 2) {
                outcome = DEDOG_HEVC_OK;
                for (int c = 0; c < 3; c++) {
                    int stride = 0;
                    const uint8_t *plane = p_de265_get_image_plane(picture, c, &stride);
                    int shift = c == 0 ? 0 : 1;
                    int cw = w >> shift, ch = h >> shift, canvas = job->canvas_width >> shift;
                    if (!plane || stride < cw) {
                        outcome = DEDOG_HEVC_UNEXPECTED;
                        break;
                    }
                    uint8_t *to = (c == 0 ? job->y : c == 1 ? job->cb : job->cr) + (size_t)(tile->y >> shift) * canvas +
                                  (tile->x >> shift);
                    for (int row = 0; row < ch; row++) memcpy(to + (size_t)row * canvas, plane + (size_t)row * stride, cw);
                }
            }
            p_de265_release_next_picture(decoder);
        }
    }
    return outcome;
}

static void run_tile(void *context, int index, int worker) {
    struct tiles_job *job = context;
    job->outcomes[index] = decode_tile(job, index, worker);
}

int dedog_hevc_decode_tiles(const uint8_t *headers, size_t headers_size, int length_size,
                            const struct dedog_hevc_tile *tiles, int count, int tile_width, int tile_height,
                            int filters, int threads,
                            uint8_t *y, uint8_t *cb, uint8_t *cr, int canvas_width, int canvas_height) {
    if (!dedog_hevc_load()) return DEDOG_HEVC_NO_LIBRARY;
    if (count < 1 || tile_width < 2 || tile_height < 2 || tile_width % 2 || tile_height % 2 || canvas_width % 2 ||
        canvas_height % 2 || (length_size != 1 && length_size != 2 && length_size != 4))
        return DEDOG_HEVC_UNEXPECTED;
    for (int i = 0; i < count; i++) {
        if (tiles[i].x < 0 || tiles[i].y < 0 || tiles[i].x % 2 || tiles[i].y % 2 ||
            tiles[i].x > canvas_width - tile_width || tiles[i].y > canvas_height - tile_height)
            return DEDOG_HEVC_UNEXPECTED;
    }
    int *outcomes = calloc((size_t)count, sizeof(int));
    if (!outcomes) return DEDOG_HEVC_NO_MEMORY;
    if (threads < 1) threads = 1;
    struct tiles_job job = {headers, headers_size, length_size, tiles, tile_width, tile_height, filters,
                            count == 1 ? threads : 1, y, cb, cr, canvas_width, canvas_height, outcomes, {NULL}};
    parallel_for(count, count == 1 ? 1 : threads, run_tile, &job);
    for (int w = 0; w < MAX_THREADS; w++) {
        if (job.decoders[w]) p_de265_free_decoder(job.decoders[w]);
    }
    int outcome = DEDOG_HEVC_OK;
    for (int i = 0; i < count && outcome == DEDOG_HEVC_OK; i++) outcome = outcomes[i];
    free(outcomes);
    return outcome;
}

// ---------- colour, reduced ----------

struct convert_job {
    const uint8_t *y, *cb, *cr;
    int canvas_width, width, height, factor, out_width, full_range;
    float kr, kb;
    uint8_t *rgb;
};

static uint8_t clamp_byte(float v) {
    v += 0.5f;
    return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
}

static void convert_row(void *context, int out_row, int worker) {
    (void)worker;
    const struct convert_job *j = context;
    const int k = j->factor, chroma_stride = j->canvas_width / 2;
    const float kg = 1 - j->kr - j->kb;
    const int y0 = out_row * k, y1 = y0 + k < j->height ? y0 + k : j->height;
    const int cy0 = y0 / 2, cy1 = (y1 - 1) / 2;
    uint8_t *out = j->rgb + (size_t)out_row * j->out_width * 3;
    for (int ox = 0; ox < j->out_width; ox++) {
        const int x0 = ox * k, x1 = x0 + k < j->width ? x0 + k : j->width;
        const int cx0 = x0 / 2, cx1 = (x1 - 1) / 2;
        unsigned luma = 0, blue = 0, red = 0;
        for (int yy = y0; yy < y1; yy++) {
            const uint8_t *row = j->y + (size_t)yy * j->canvas_width;
            for (int xx = x0; xx < x1; xx++) luma += row[xx];
        }
        for (int yy = cy0; yy <= cy1; yy++) {
            const uint8_t *b = j->cb + (size_t)yy * chroma_stride, *r = j->cr + (size_t)yy * chroma_stride;
            for (int xx = cx0; xx <= cx1; xx++) {
                blue += b[xx];
                red += r[xx];
            }
        }
        const float chroma_count = (float)((cy1 - cy0 + 1) * (cx1 - cx0 + 1));
        float yv = (float)luma / (float)((y1 - y0) * (x1 - x0));
        float cbv = (float)blue / chroma_count - 128, crv = (float)red / chroma_count - 128;
        if (!j->full_range) {
            yv = (yv - 16) * (255.0f / 219.0f);
            cbv *= 255.0f / 224.0f;
            crv *= 255.0f / 224.0f;
        }
        const float rv = yv + (2 - 2 * j->kr) * crv, bv = yv + (2 - 2 * j->kb) * cbv;
        const float gv = yv - (j->kr * (2 - 2 * j->kr) * crv + j->kb * (2 - 2 * j->kb) * cbv) / kg;
        out[ox * 3] = clamp_byte(rv);
        out[ox * 3 + 1] = clamp_byte(gv);
        out[ox * 3 + 2] = clamp_byte(bv);
    }
}

void dedog_ycbcr420_to_rgb(const uint8_t *y, const uint8_t *cb, const uint8_t *cr, int canvas_width,
                           int width, int height, int factor, float kr, float kb, int full_range,
                           uint8_t *rgb, int threads) {
    if (factor < 1 || width < 1 || height < 1) return;
    struct convert_job job = {y, cb, cr, canvas_width, width, height, factor, (width + factor - 1) / factor,
                              full_range, kr, kb, rgb};
    parallel_for((height + factor - 1) / factor, threads, convert_row, &job);
}
