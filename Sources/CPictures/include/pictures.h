#ifndef FEEDSYNC_PICTURES_H
#define FEEDSYNC_PICTURES_H

#include <stddef.h>

// Debian's picture libraries, each loaded on first use (dlopen, as libcurl and libxml2 are), so a
// command that shows no picture loads none: libjpeg-turbo's TurboJPEG, libpng, libwebp (with its
// demuxer, for animated files), giflib to decode; libpng and libsixel to encode what a terminal
// shows. Every call takes bytes and gives plain pixels, 8-bit RGBA, rows top down, no padding.

typedef struct {
    unsigned char *rgba;
    int width;
    int height;
} fs_image;

enum { FS_JPEG = 1, FS_PNG = 2, FS_GIF = 3, FS_WEBP = 4, FS_SIXEL = 5 };

/// Loads the library `kind` needs (FS_SIXEL: libsixel's encoder). NULL once it is loaded, else a
/// sentence naming the file that is missing (the same sentence on every later call).
const char *fs_picture_load(int kind);

/// Decodes the first frame of `size` bytes of a `kind` picture, refusing one whose header claims
/// more than `max_pixels` pixels, a frame's or the whole picture's (before decoding any) or whose data is damaged anywhere (a
/// warning is a failure: no half-drawn picture). Where the format can scale while decoding (JPEG
/// by 1/2 to 1/8, WebP to any size) the result is the smallest at least `min_width` by
/// `min_height` (never larger than the picture). 0 and `out` (free with fs_image_free), else -1
/// and one line in `error`.
int fs_picture_decode(int kind, const unsigned char *data, size_t size, int min_width, int min_height,
                      long long max_pixels, fs_image *out, char *error, size_t error_size);

void fs_image_free(fs_image *image);

/// A PNG file of `image` (libpng's simplified writer), in a buffer to free(). 0, or -1.
int fs_png_encode(const fs_image *image, unsigned char **out, size_t *size);

/// Sixel data of `image` (libsixel, at most 256 colours, 7-bit: `ESC P q ... ESC \`), in a buffer
/// to free(). 0, or -1.
int fs_sixel_encode(const fs_image *image, unsigned char **out, size_t *size);

#endif
