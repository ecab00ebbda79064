#include "pictures.h"

#include <dlfcn.h>
#include <gif_lib.h>
#include <libpng16/png.h>
#include <pthread.h>
#include <sixel/sixel.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include <webp/decode.h>
#include <webp/demux.h>

// Each library's functions, found with dlsym, typed from its own header.
static struct {
    tjhandle (*init_decompress)(void);
    int (*decompress_header)(tjhandle, const unsigned char *, unsigned long, int *, int *, int *, int *);
    tjscalingfactor *(*scaling_factors)(int *);
    int (*decompress)(tjhandle, const unsigned char *, unsigned long, unsigned char *, int, int, int, int, int);
    int (*destroy)(tjhandle);
    char *(*error_string)(tjhandle);
} jpeg;

static struct {
    int (*begin_read)(png_imagep, png_const_voidp, size_t);
    int (*finish_read)(png_imagep, png_const_colorp, void *, png_int_32, void *);
    void (*free)(png_imagep);
    int (*write_to_memory)(png_imagep, void *, png_alloc_size_t *, int, const void *, png_int_32, const void *);
} png;

static struct {
    int (*init_config)(WebPDecoderConfig *, int);
    VP8StatusCode (*decode)(const uint8_t *, size_t, WebPDecoderConfig *);
    void (*free_buffer)(WebPDecBuffer *);
    WebPDemuxer *(*demux)(const WebPData *, int, WebPDemuxState *, int);
    uint32_t (*demux_get)(const WebPDemuxer *, WebPFormatFeature);
    int (*get_frame)(const WebPDemuxer *, int, WebPIterator *);
    void (*release_iterator)(WebPIterator *);
    void (*demux_delete)(WebPDemuxer *);
} webp;

static struct {
    GifFileType *(*open)(void *, InputFunc, int *);
    int (*record_type)(GifFileType *, GifRecordType *);
    int (*image_desc)(GifFileType *);
    int (*line)(GifFileType *, GifPixelType *, int);
    int (*extension)(GifFileType *, int *, GifByteType **);
    int (*extension_next)(GifFileType *, GifByteType **);
    int (*to_gcb)(size_t, const GifByteType *, GraphicsControlBlock *);
    int (*close)(GifFileType *, int *);
} gif;

static struct {
    SIXELSTATUS (*output_new)(sixel_output_t **, sixel_write_function, void *, sixel_allocator_t *);
    void (*output_destroy)(sixel_output_t *);
    SIXELSTATUS (*dither_new)(sixel_dither_t **, int, sixel_allocator_t *);
    SIXELSTATUS (*dither_initialize)(sixel_dither_t *, unsigned char *, int, int, int, int, int, int);
    void (*dither_unref)(sixel_dither_t *);
    SIXELSTATUS (*encode)(unsigned char *, int, int, int, sixel_dither_t *, sixel_output_t *);
} sixel;

static pthread_mutex_t loading = PTHREAD_MUTEX_INITIALIZER;

// Opens `soname` and finds each symbol into its field; a sentence on failure.
static const char *load_library(const char *soname, const char *package, const char **symbols, void **fields,
                                int count, char *failure, size_t failure_size) {
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(failure, failure_size, "%s is missing (Debian's %s)", soname, package);
        return failure;
    }
    for (int i = 0; i < count; i++) {
        if (!(fields[i] = dlsym(library, symbols[i]))) {
            snprintf(failure, failure_size, "%s has no %s", soname, symbols[i]);
            return failure;
        }
    }
    return NULL;
}

const char *fs_picture_load(int kind) {
    static int loaded[6];
    static const char *results[6];
    static char failures[6][160];
    if (kind < FS_JPEG || kind > FS_SIXEL) return "no such picture kind";
    pthread_mutex_lock(&loading);
    if (!loaded[kind]) {
        char *failure = failures[kind];
        size_t room = sizeof failures[kind];
        const char *result = NULL;
        switch (kind) {
        case FS_JPEG: {
            const char *names[] = {"tjInitDecompress", "tjDecompressHeader3", "tjGetScalingFactors",
                                   "tjDecompress2", "tjDestroy", "tjGetErrorStr2"};
            void *fields[6];
            result = load_library("libturbojpeg.so.0", "libturbojpeg0", names, fields, 6, failure, room);
            if (!result) memcpy(&jpeg, fields, sizeof jpeg);
            break;
        }
        case FS_PNG: {
            const char *names[] = {"png_image_begin_read_from_memory", "png_image_finish_read", "png_image_free",
                                   "png_image_write_to_memory"};
            void *fields[4];
            result = load_library("libpng16.so.16", "libpng16-16", names, fields, 4, failure, room);
            if (!result) memcpy(&png, fields, sizeof png);
            break;
        }
        case FS_WEBP: {
            const char *names[] = {"WebPInitDecoderConfigInternal", "WebPDecode", "WebPFreeDecBuffer"};
            const char *demux_names[] = {"WebPDemuxInternal", "WebPDemuxGetI", "WebPDemuxGetFrame",
                                         "WebPDemuxReleaseIterator", "WebPDemuxDelete"};
            void *fields[8];
            result = load_library("libwebp.so.7", "libwebp7", names, fields, 3, failure, room);
            if (!result)
                result = load_library("libwebpdemux.so.2", "libwebpdemux2", demux_names, fields + 3, 5, failure, room);
            if (!result) memcpy(&webp, fields, sizeof webp);
            break;
        }
        case FS_GIF: {
            const char *names[] = {"DGifOpen", "DGifGetRecordType", "DGifGetImageDesc", "DGifGetLine",
                                   "DGifGetExtension", "DGifGetExtensionNext", "DGifExtensionToGCB",
                                   "DGifCloseFile"};
            void *fields[8];
            result = load_library("libgif.so.7", "libgif7", names, fields, 8, failure, room);
            if (!result) memcpy(&gif, fields, sizeof gif);
            break;
        }
        case FS_SIXEL: {
            const char *names[] = {"sixel_output_new", "sixel_output_destroy", "sixel_dither_new",
                                   "sixel_dither_initialize", "sixel_dither_unref", "sixel_encode"};
            void *fields[6];
            result = load_library("libsixel.so.1", "libsixel1", names, fields, 6, failure, room);
            if (!result) memcpy(&sixel, fields, sizeof sixel);
            break;
        }
        }
        results[kind] = result;
        loaded[kind] = 1;
    }
    const char *result = results[kind];
    pthread_mutex_unlock(&loading);
    return result;
}

static int fail(char *error, size_t size, const char *message) {
    snprintf(error, size, "%s", message);
    return -1;
}

static int allocate(fs_image *out, int width, int height) {
    out->rgba = calloc((size_t)width * (size_t)height, 4);
    out->width = width;
    out->height = height;
    return out->rgba ? 0 : -1;
}

void fs_image_free(fs_image *image) {
    free(image->rgba);
    image->rgba = NULL;
}

static int decode_jpeg(const unsigned char *data, size_t size, int min_width, int min_height, long long max_pixels,
                       fs_image *out, char *error, size_t error_size) {
    tjhandle handle = jpeg.init_decompress();
    if (!handle) return fail(error, error_size, "TurboJPEG did not start");
    int width, height, subsampling, colorspace;
    int result = -1;
    if (jpeg.decompress_header(handle, data, size, &width, &height, &subsampling, &colorspace) != 0) {
        fail(error, error_size, jpeg.error_string(handle));
        goto done;
    }
    if ((long long)width * height > max_pixels || width <= 0 || height <= 0) {
        fail(error, error_size, "too many pixels");
        goto done;
    }
    // The smallest scale that keeps both sides at least as asked.
    int count = 0;
    tjscalingfactor *factors = jpeg.scaling_factors(&count);
    int scaled_width = width, scaled_height = height;
    for (int i = 0; factors && i < count; i++) {
        int w = TJSCALED(width, factors[i]), h = TJSCALED(height, factors[i]);
        if (w >= (min_width < width ? min_width : width) && h >= (min_height < height ? min_height : height) &&
            (long long)w * h < (long long)scaled_width * scaled_height) {
            scaled_width = w;
            scaled_height = h;
        }
    }
    int cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
    if (allocate(out, scaled_width, scaled_height) != 0) {
        fail(error, error_size, "out of memory");
        goto done;
    }
    int flags = TJFLAG_FASTDCT | TJFLAG_FASTUPSAMPLE | TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS;
    if (jpeg.decompress(handle, data, size, out->rgba, scaled_width, 0, scaled_height, cmyk ? TJPF_CMYK : TJPF_RGBA,
                        flags) != 0) {
        fail(error, error_size, jpeg.error_string(handle));
        fs_image_free(out);
        goto done;
    }
    if (cmyk) {
        // Adobe's CMYK JPEGs store the inks inverted: each channel times K is the colour.
        for (size_t i = 0; i < (size_t)scaled_width * scaled_height; i++) {
            unsigned char *p = out->rgba + i * 4;
            int k = p[3];
            p[0] = (unsigned char)(p[0] * k / 255);
            p[1] = (unsigned char)(p[1] * k / 255);
            p[2] = (unsigned char)(p[2] * k / 255);
            p[3] = 255;
        }
    }
    result = 0;
done:
    jpeg.destroy(handle);
    return result;
}

static int decode_png(const unsigned char *data, size_t size, long long max_pixels, fs_image *out, char *error,
                      size_t error_size) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png.begin_read(&image, data, size)) return fail(error, error_size, image.message);
    if ((long long)image.width * image.height > max_pixels || image.width == 0 || image.height == 0) {
        png.free(&image);
        return fail(error, error_size, "too many pixels");
    }
    image.format = PNG_FORMAT_RGBA;
    if (allocate(out, (int)image.width, (int)image.height) != 0) {
        png.free(&image);
        return fail(error, error_size, "out of memory");
    }
    if (!png.finish_read(&image, NULL, out->rgba, 0, NULL) || PNG_IMAGE_FAILED(image)) {
        fail(error, error_size, image.message[0] ? image.message : "damaged PNG");
        png.free(&image);
        fs_image_free(out);
        return -1;
    }
    png.free(&image);
    return 0;
}

static int decode_webp(const unsigned char *data, size_t size, int min_width, int min_height, long long max_pixels,
                       fs_image *out, char *error, size_t error_size) {
    WebPData whole = {data, size};
    WebPDemuxer *demuxer = webp.demux(&whole, 0, NULL, WEBP_DEMUX_ABI_VERSION);
    if (!demuxer) return fail(error, error_size, "damaged WebP");
    int result = -1;
    WebPIterator frame;
    memset(&frame, 0, sizeof frame);
    long long canvas = (long long)webp.demux_get(demuxer, WEBP_FF_CANVAS_WIDTH) *
                       webp.demux_get(demuxer, WEBP_FF_CANVAS_HEIGHT);
    if (canvas > max_pixels) {
        fail(error, error_size, "too many pixels");
        goto done;
    }
    if (!webp.get_frame(demuxer, 1, &frame)) {
        fail(error, error_size, "a WebP with no frame");
        goto done;
    }
    WebPDecoderConfig config;
    if (!webp.init_config(&config, WEBP_DECODER_ABI_VERSION)) {
        fail(error, error_size, "libwebp is of another version");
        goto done;
    }
    int width = frame.width, height = frame.height;
    if (width <= 0 || height <= 0 || (long long)width * height > max_pixels) {
        fail(error, error_size, "too many pixels");
        goto done;
    }
    // Scaled while decoding, keeping the picture's shape, to the least size both sides allow.
    double scale_w = min_width > 0 ? (double)min_width / width : 1, scale_h = min_height > 0 ? (double)min_height / height : 1;
    double scale = scale_w > scale_h ? scale_w : scale_h;
    if (scale < 1) {
        config.options.use_scaling = 1;
        config.options.scaled_width = (int)(width * scale + 0.999);
        config.options.scaled_height = (int)(height * scale + 0.999);
        if (config.options.scaled_width < 1) config.options.scaled_width = 1;
        if (config.options.scaled_height < 1) config.options.scaled_height = 1;
        width = config.options.scaled_width;
        height = config.options.scaled_height;
    }
    config.output.colorspace = MODE_RGBA;
    if (webp.decode(frame.fragment.bytes, frame.fragment.size, &config) != VP8_STATUS_OK) {
        fail(error, error_size, "damaged WebP");
        goto done;
    }
    if (allocate(out, width, height) == 0) {
        for (int y = 0; y < height; y++)
            memcpy(out->rgba + (size_t)y * width * 4, config.output.u.RGBA.rgba + (size_t)y * config.output.u.RGBA.stride,
                   (size_t)width * 4);
        result = 0;
    } else {
        fail(error, error_size, "out of memory");
    }
    webp.free_buffer(&config.output);
done:
    webp.release_iterator(&frame);
    webp.demux_delete(demuxer);
    return result;
}

// giflib reads through this from memory.
typedef struct {
    const unsigned char *data;
    size_t size, at;
} gif_source;

static int gif_read(GifFileType *file, GifByteType *into, int length) {
    gif_source *source = file->UserData;
    size_t left = source->size - source->at;
    size_t count = length < 0 ? 0 : (size_t)length < left ? (size_t)length : left;
    memcpy(into, source->data + source->at, count);
    source->at += count;
    return (int)count;
}

// The first frame only, line by line (DGifSlurp would decode every frame of an animation).
static int decode_gif(const unsigned char *data, size_t size, long long max_pixels, fs_image *out, char *error,
                      size_t error_size) {
    gif_source source = {data, size, 0};
    int code = 0;
    GifFileType *file = gif.open(&source, gif_read, &code);
    if (!file) return fail(error, error_size, "damaged GIF");
    int result = -1, transparent = -1;
    GifPixelType *line = NULL;
    int width = file->SWidth, height = file->SHeight;
    if (width <= 0 || height <= 0 || (long long)width * height > max_pixels) {
        fail(error, error_size, "too many pixels");
        goto done;
    }
    for (;;) {
        GifRecordType type;
        if (gif.record_type(file, &type) == GIF_ERROR) {
            fail(error, error_size, "damaged GIF");
            goto done;
        }
        if (type == TERMINATE_RECORD_TYPE) {
            fail(error, error_size, "a GIF with no frame");
            goto done;
        }
        if (type == EXTENSION_RECORD_TYPE) {
            int kind;
            GifByteType *block;
            if (gif.extension(file, &kind, &block) == GIF_ERROR) {
                fail(error, error_size, "damaged GIF");
                goto done;
            }
            while (block) {
                if (kind == GRAPHICS_EXT_FUNC_CODE) {
                    GraphicsControlBlock control;
                    if (gif.to_gcb(block[0], block + 1, &control) == GIF_OK) transparent = control.TransparentColor;
                }
                if (gif.extension_next(file, &block) == GIF_ERROR) {
                    fail(error, error_size, "damaged GIF");
                    goto done;
                }
            }
            continue;
        }
        if (type != IMAGE_DESC_RECORD_TYPE) continue;
        if (gif.image_desc(file) == GIF_ERROR) {
            fail(error, error_size, "damaged GIF");
            goto done;
        }
        GifImageDesc *frame = &file->Image;
        ColorMapObject *colours = frame->ColorMap ? frame->ColorMap : file->SColorMap;
        if (!colours || frame->Width <= 0 || frame->Height <= 0 || (long long)frame->Width * frame->Height > max_pixels) {
            fail(error, error_size, "damaged GIF");
            goto done;
        }
        if (allocate(out, width, height) != 0 || !(line = malloc((size_t)frame->Width))) {
            fail(error, error_size, "out of memory");
            goto done;
        }
        static const int starts[] = {0, 4, 2, 1}, steps[] = {8, 8, 4, 2};
        int passes = frame->Interlace ? 4 : 1;
        for (int pass = 0; pass < passes; pass++) {
            for (int y = frame->Interlace ? starts[pass] : 0; y < frame->Height; y += frame->Interlace ? steps[pass] : 1) {
                if (gif.line(file, line, frame->Width) == GIF_ERROR) {
                    fail(error, error_size, "damaged GIF");
                    fs_image_free(out);
                    goto done;
                }
                int row = frame->Top + y;
                if (row < 0 || row >= height) continue;
                for (int x = 0; x < frame->Width; x++) {
                    int column = frame->Left + x;
                    if (column < 0 || column >= width || line[x] == transparent || line[x] >= colours->ColorCount)
                        continue;
                    GifColorType colour = colours->Colors[line[x]];
                    unsigned char *p = out->rgba + ((size_t)row * width + column) * 4;
                    p[0] = colour.Red;
                    p[1] = colour.Green;
                    p[2] = colour.Blue;
                    p[3] = 255;
                }
            }
        }
        result = 0;
        goto done;
    }
done:
    free(line);
    gif.close(file, &code);
    return result;
}

int fs_picture_decode(int kind, const unsigned char *data, size_t size, int min_width, int min_height,
                      long long max_pixels, fs_image *out, char *error, size_t error_size) {
    memset(out, 0, sizeof *out);
    const char *missing = fs_picture_load(kind);
    if (missing) return fail(error, error_size, missing);
    switch (kind) {
    case FS_JPEG: return decode_jpeg(data, size, min_width, min_height, max_pixels, out, error, error_size);
    case FS_PNG: return decode_png(data, size, max_pixels, out, error, error_size);
    case FS_WEBP: return decode_webp(data, size, min_width, min_height, max_pixels, out, error, error_size);
    case FS_GIF: return decode_gif(data, size, max_pixels, out, error, error_size);
    default: return fail(error, error_size, "no decoder for this kind");
    }
}

int fs_png_encode(const fs_image *image, unsigned char **out, size_t *size) {
    *out = NULL;
    if (fs_picture_load(FS_PNG)) return -1;
    png_image header;
    memset(&header, 0, sizeof header);
    header.version = PNG_IMAGE_VERSION;
    header.width = (png_uint_32)image->width;
    header.height = (png_uint_32)image->height;
    header.format = PNG_FORMAT_RGBA;
    png_alloc_size_t length = 0;
    if (!png.write_to_memory(&header, NULL, &length, 0, image->rgba, 0, NULL)) return -1;
    if (!(*out = malloc(length))) return -1;
    if (!png.write_to_memory(&header, *out, &length, 0, image->rgba, 0, NULL)) {
        free(*out);
        *out = NULL;
        return -1;
    }
    *size = length;
    return 0;
}

// libsixel writes its output through this, into a growing buffer.
typedef struct {
    unsigned char *bytes;
    size_t count, room;
    int failed;
} sixel_sink;

static int sixel_write(char *data, int size, void *context) {
    sixel_sink *sink = context;
    if (sink->count + (size_t)size > sink->room) {
        size_t room = (sink->room ? sink->room * 2 : 16384) + (size_t)size;
        unsigned char *grown = realloc(sink->bytes, room);
        if (!grown) {
            sink->failed = 1;
            return size;
        }
        sink->bytes = grown;
        sink->room = room;
    }
    memcpy(sink->bytes + sink->count, data, (size_t)size);
    sink->count += (size_t)size;
    return size;
}

int fs_sixel_encode(const fs_image *image, unsigned char **out, size_t *size) {
    *out = NULL;
    if (fs_picture_load(FS_SIXEL)) return -1;
    size_t pixels = (size_t)image->width * image->height;
    // Sixel has no partial transparency: over black, as a dark terminal shows it.
    unsigned char *rgb = malloc(pixels * 3);
    if (!rgb) return -1;
    for (size_t i = 0; i < pixels; i++) {
        const unsigned char *p = image->rgba + i * 4;
        for (int c = 0; c < 3; c++) rgb[i * 3 + c] = (unsigned char)(p[c] * p[3] / 255);
    }
    sixel_sink sink = {NULL, 0, 0, 0};
    sixel_output_t *output = NULL;
    sixel_dither_t *dither = NULL;
    int result = -1;
    if (SIXEL_FAILED(sixel.output_new(&output, sixel_write, &sink, NULL))) goto done;
    if (SIXEL_FAILED(sixel.dither_new(&dither, 256, NULL))) goto done;
    if (SIXEL_FAILED(sixel.dither_initialize(dither, rgb, image->width, image->height, SIXEL_PIXELFORMAT_RGB888,
                                             SIXEL_LARGE_AUTO, SIXEL_REP_AUTO, SIXEL_QUALITY_AUTO)))
        goto done;
    if (SIXEL_FAILED(sixel.encode(rgb, image->width, image->height, 3, dither, output)) || sink.failed) goto done;
    *out = sink.bytes;
    *size = sink.count;
    sink.bytes = NULL;
    result = 0;
done:
    if (dither) sixel.dither_unref(dither);
    if (output) sixel.output_destroy(output);
    free(sink.bytes);
    free(rgb);
    return result;
}
