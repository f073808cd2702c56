#include "heif_shim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// Each function: its return type, name, parameters, and the arguments passed on.
#define DEDOG_HEIF_FUNCTIONS(X)                                                                                      \
    X(struct heif_context *, heif_context_alloc, (void), ())                                                         \
    X(void, heif_context_free, (struct heif_context * c), (c))                                                       \
    X(void, heif_context_set_max_decoding_threads, (struct heif_context * c, int n), (c, n))                         \
    X(struct heif_error, heif_context_read_from_memory_without_copy,                                                 \
      (struct heif_context * c, const void *m, size_t s, const struct heif_reading_options *o), (c, m, s, o))         \
    X(struct heif_error, heif_context_get_primary_image_handle, (struct heif_context * c, struct heif_image_handle **h), \
      (c, h))                                                                                                        \
    X(void, heif_image_handle_release, (const struct heif_image_handle *h), (h))                                     \
    X(int, heif_image_handle_get_width, (const struct heif_image_handle *h), (h))                                    \
    X(int, heif_image_handle_get_height, (const struct heif_image_handle *h), (h))                                   \
    X(int, heif_image_handle_has_alpha_channel, (const struct heif_image_handle *h), (h))                            \
    X(int, heif_image_handle_is_premultiplied_alpha, (const struct heif_image_handle *h), (h))                       \
    X(int, heif_image_handle_get_number_of_thumbnails, (const struct heif_image_handle *h), (h))                     \
    X(int, heif_image_handle_get_list_of_thumbnail_IDs, (const struct heif_image_handle *h, heif_item_id *ids, int n), \
      (h, ids, n))                                                                                                   \
    X(struct heif_error, heif_image_handle_get_thumbnail,                                                            \
      (const struct heif_image_handle *h, heif_item_id id, struct heif_image_handle **t), (h, id, t))                \
    X(struct heif_decoding_options *, heif_decoding_options_alloc, (void), ())                                       \
    X(void, heif_decoding_options_free, (struct heif_decoding_options * o), (o))                                     \
    X(struct heif_error, heif_decode_image,                                                                          \
      (const struct heif_image_handle *h, struct heif_image **i, enum heif_colorspace s, enum heif_chroma c,         \
       const struct heif_decoding_options *o),                                                                       \
      (h, i, s, c, o))                                                                                               \
    X(void, heif_image_release, (const struct heif_image *i), (i))                                                   \
    X(int, heif_image_get_width, (const struct heif_image *i, enum heif_channel c), (i, c))                          \
    X(int, heif_image_get_height, (const struct heif_image *i, enum heif_channel c), (i, c))                         \
    X(int, heif_image_get_bits_per_pixel_range, (const struct heif_image *i, enum heif_channel c), (i, c))           \
    X(const uint8_t *, heif_image_get_plane_readonly, (const struct heif_image *i, enum heif_channel c, int *s),      \
      (i, c, s))

// The pointers, typed as libheif's own functions (so a changed signature in its header fails to compile here).
#define DEDOG_HEIF_POINTER(type, name, parameters, arguments) static __typeof__(&name) p_##name;
DEDOG_HEIF_FUNCTIONS(DEDOG_HEIF_POINTER)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char load_error[512];

static void load(void) {
    // The soname of the Debian package libheif1 (the ABI the header above describes).
    void *library = dlopen("libheif.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(load_error, sizeof load_error, "%s", dlerror());
        return;
    }
#define DEDOG_HEIF_FIND(type, name, parameters, arguments)                                                            \
    p_##name = (__typeof__(&name))dlsym(library, #name);                                                              \
    if (!p_##name) {                                                                                                  \
        snprintf(load_error, sizeof load_error, "libheif.so.1 has no %s", #name);                                     \
        return;                                                                                                       \
    }
    DEDOG_HEIF_FUNCTIONS(DEDOG_HEIF_FIND)
    loaded = 1;  // the library stays open for the life of the process
}

int dedog_heif_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *dedog_heif_load_error(void) {
    pthread_once(&once, load);
    return load_error;
}

#define DEDOG_HEIF_CALL(type, name, parameters, arguments)                                                            \
    type dedog_##name parameters { return p_##name arguments; }
DEDOG_HEIF_FUNCTIONS(DEDOG_HEIF_CALL)
