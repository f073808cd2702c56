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

// ---------- colour, reduced ----------

static uint8_t clamp_byte(float v) {
    v += 0.5f;
    return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
}

/// The part of the output one decoded tile covers: each output pixel the mean of its `factor`×`factor` block of the
/// tile (fewer where the picture ends inside the tile), converted to RGB. `factor` divides the tile's sides, so a
/// block never straddles two tiles.
static void convert_tile(const struct dedog_hevc_output *out, int tile_x, int tile_y, int tile_width, int tile_height,
                         const uint8_t *y, int y_stride, const uint8_t *cb, const uint8_t *cr, int c_stride) {
    const int k = out->factor;
    const int used_w = out->width - tile_x < tile_width ? out->width - tile_x : tile_width;
    const int used_h = out->height - tile_y < tile_height ? out->height - tile_y : tile_height;
    if (used_w <= 0 || used_h <= 0) return;
    const int out_width = (out->width + k - 1) / k;
    const float kr = out->kr, kb = out->kb, kg = 1 - kr - kb;
    for (int r = 0; r * k < used_h; r++) {
        const int y0 = r * k, y1 = y0 + k < used_h ? y0 + k : used_h;
        const int cy0 = y0 / 2, cy1 = (y1 - 1) / 2;
        uint8_t *row_out = out->rgb + ((size_t)(tile_y / k + r) * out_width + tile_x / k) * 3;
        for (int c = 0; c * k < used_w; c++) {
            const int x0 = c * k, x1 = x0 + k < used_w ? x0 + k : used_w;
            const int cx0 = x0 / 2, cx1 = (x1 - 1) / 2;
            unsigned luma = 0, blue = 0, red = 0;
            for (int yy = y0; yy < y1; yy++) {
                const uint8_t *line = y + (size_t)yy * y_stride;
                for (int xx = x0; xx < x1; xx++) luma += line[xx];
            }
            for (int yy = cy0; yy <= cy1; yy++) {
                const uint8_t *b = cb + (size_t)yy * c_stride, *rr = cr + (size_t)yy * c_stride;
                for (int xx = cx0; xx <= cx1; xx++) {
                    blue += b[xx];
                    red += rr[xx];
                }
            }
            const float chroma_count = (float)((cy1 - cy0 + 1) * (cx1 - cx0 + 1));
            float yv = (float)luma / (float)((y1 - y0) * (x1 - x0));
            float cbv = (float)blue / chroma_count - 128, crv = (float)red / chroma_count - 128;
            if (!out->full_range) {
                yv = (yv - 16) * (255.0f / 219.0f);
                cbv *= 255.0f / 224.0f;
                crv *= 255.0f / 224.0f;
            }
            const float rv = yv + (2 - 2 * kr) * crv, bv = yv + (2 - 2 * kb) * cbv;
            const float gv = yv - (kr * (2 - 2 * kr) * crv + kb * (2 - 2 * kb) * cbv) / kg;
            row_out[c * 3] = clamp_byte(rv);
            row_out[c * 3 + 1] = clamp_byte(gv);
            row_out[c * 3 + 2] = clamp_byte(bv);
        }
    }
}

// ---------- tiles ----------

struct tiles_job {
    const uint8_t *headers;
    size_t headers_size;
    int length_size;
    const struct dedog_hevc_tile *tiles;
    int tile_width, tile_height, filters, wavefront_threads;
    const struct dedog_hevc_output *out;
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
            int y_stride = 0, cb_stride = 0, cr_stride = 0;
            const uint8_t *y = p_de265_get_image_plane(picture, 0, &y_stride);
            const uint8_t *cb = p_de265_get_image_plane(picture, 1, &cb_stride);
            const uint8_t *cr = p_de265_get_image_plane(picture, 2, &cr_stride);
            if (w == job->tile_width && h == job->tile_height && p_de265_get_chroma_format(picture) == de265_chroma_420 &&
                p_de265_get_bits_per_pixel(picture, 0) == 8 && p_de265_get_bits_per_pixel(picture, 1) == 8 &&
                p_de265_get_bits_per_pixel(picture, 2) == 8 && p_de265_get_image_width(picture, 1) == w / 2 &&
                p_de265_get_image_height(picture, 1) == h / 2 && p_de265_get_image_width(picture, 2) == w / 2 &&
                p_de265_get_image_height(picture, 2) == h / 2 && y && cb && cr && y_stride >= w &&
                cb_stride >= w / 2 && cb_stride == cr_stride) {
                convert_tile(job->out, tile->x, tile->y, w, h, y, y_stride, cb, cr, cb_stride);
                outcome = DEDOG_HEVC_OK;
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
                            int filters, int threads, const struct dedog_hevc_output *out) {
    if (!dedog_hevc_load()) return DEDOG_HEVC_NO_LIBRARY;
    if (count < 1 || tile_width < 2 || tile_height < 2 || tile_width % 2 || tile_height % 2 ||
        (length_size != 1 && length_size != 2 && length_size != 4) || !out || !out->rgb || out->factor < 1 ||
        tile_width % out->factor || tile_height % out->factor || out->width < 1 || out->height < 1)
        return DEDOG_HEVC_UNEXPECTED;
    for (int i = 0; i < count; i++) {
        // Tiles start on the tile grid, inside the picture.
        if (tiles[i].x < 0 || tiles[i].y < 0 || tiles[i].x % tile_width || tiles[i].y % tile_height ||
            tiles[i].x >= out->width || tiles[i].y >= out->height)
            return DEDOG_HEVC_UNEXPECTED;
    }
    int *outcomes = calloc((size_t)count, sizeof(int));
    if (!outcomes) return DEDOG_HEVC_NO_MEMORY;
    if (threads < 1) threads = 1;
    struct tiles_job job = {headers, headers_size, length_size, tiles, tile_width, tile_height, filters,
                            count == 1 ? threads : 1, out, outcomes, {NULL}};
    parallel_for(count, count == 1 ? 1 : threads, run_tile, &job);
    for (int w = 0; w < MAX_THREADS; w++) {
        if (job.decoders[w]) p_de265_free_decoder(job.decoders[w]);
    }
    int outcome = DEDOG_HEVC_OK;
    for (int i = 0; i < count && outcome == DEDOG_HEVC_OK; i++) outcome = outcomes[i];
    free(outcomes);
    return outcome;
}
