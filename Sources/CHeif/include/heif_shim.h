// libheif's C API (Debian: libheif-dev for the header, libheif1 at run time): HEIC/HEIF through libde265, AVIF
// through libdav1d or libaom. The library is opened on first use, not linked: with its codecs it adds some 4 ms
// to the start of every dedog process (relocations and their static constructors), and most runs decode no HEIF.
#ifndef DEDOG_HEIF_SHIM_H
#define DEDOG_HEIF_SHIM_H

#include <libheif/heif.h>

/// Opens libheif once (thread-safe); 1 when its functions below can be called, 0 when not
/// (`dedog_heif_load_error` says why).
int dedog_heif_load(void);
/// Why `dedog_heif_load` failed (dlerror's words), or an empty string.
const char *dedog_heif_load_error(void);

// The libheif functions dedog calls, under these names; each calls libheif's own. Only after `dedog_heif_load`
// returned 1.
struct heif_context *dedog_heif_context_alloc(void);
void dedog_heif_context_free(struct heif_context *context);
void dedog_heif_context_set_max_decoding_threads(struct heif_context *context, int max_threads);
struct heif_error dedog_heif_context_read_from_memory_without_copy(struct heif_context *context, const void *memory,
                                                                   size_t size, const struct heif_reading_options *options);
struct heif_error dedog_heif_context_get_primary_image_handle(struct heif_context *context,
                                                              struct heif_image_handle **handle);
void dedog_heif_image_handle_release(const struct heif_image_handle *handle);
int dedog_heif_image_handle_get_width(const struct heif_image_handle *handle);
int dedog_heif_image_handle_get_height(const struct heif_image_handle *handle);
int dedog_heif_image_handle_has_alpha_channel(const struct heif_image_handle *handle);
int dedog_heif_image_handle_is_premultiplied_alpha(const struct heif_image_handle *handle);
int dedog_heif_image_handle_get_number_of_thumbnails(const struct heif_image_handle *handle);
int dedog_heif_image_handle_get_list_of_thumbnail_IDs(const struct heif_image_handle *handle, heif_item_id *ids, int count);
struct heif_error dedog_heif_image_handle_get_thumbnail(const struct heif_image_handle *handle, heif_item_id id,
                                                        struct heif_image_handle **thumbnail);
struct heif_decoding_options *dedog_heif_decoding_options_alloc(void);
void dedog_heif_decoding_options_free(struct heif_decoding_options *options);
struct heif_error dedog_heif_decode_image(const struct heif_image_handle *handle, struct heif_image **image,
                                          enum heif_colorspace colorspace, enum heif_chroma chroma,
                                          const struct heif_decoding_options *options);
void dedog_heif_image_release(const struct heif_image *image);
int dedog_heif_image_get_width(const struct heif_image *image, enum heif_channel channel);
int dedog_heif_image_get_height(const struct heif_image *image, enum heif_channel channel);
int dedog_heif_image_get_bits_per_pixel_range(const struct heif_image *image, enum heif_channel channel);
const uint8_t *dedog_heif_image_get_plane_readonly(const struct heif_image *image, enum heif_channel channel,
                                                   int *stride);

#endif
