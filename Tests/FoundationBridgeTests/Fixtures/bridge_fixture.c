/*
 * A test fixture for the FoundationNetworking bridge: a plugin serving one scheme of its own,
 * `bridge-fixture` (no other test loads it, so it never collides with the plugin tests' plugins).
 * The path says what to do:
 *
 *   /hello      a text/plain body, "Hello through the bridge\n"
 *   /redirect   redirected to bridge-fixture://fixture/hello (with no response)
 *   /http-redirect  the same, with an HTTP-like 302 response carrying Location
 *   /hang       nothing: the load runs until it is cancelled
 *   otherwise   failed(fileDoesNotExist)
 */
#define _POSIX_C_SOURCE 200809L
#include "courier_plugin.h"

#include <stdlib.h>
#include <string.h>

COURIER_PLUGIN_EXPORT const courier_plugin_descriptor *courier_plugin_entry(void);

static const char hello[] = "Hello through the bridge\n";
static const char target[] = "bridge-fixture://fixture/hello";

typedef struct handle {
    const courier_client *client;
    void *context;
    char *url;
} handle;

static void *create(const courier_request *request, const courier_client *client, void *context) {
    if (!request || !request->url) return NULL;
    handle *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->client = client;
    h->context = context;
    h->url = strdup(request->url);
    if (!h->url) {
        free(h);
        return NULL;
    }
    return h;
}

/* The path of `url` (from the first '/' after "scheme://host"), or "" when there is none. */
static const char *path_of(const char *url) {
    const char *authority = strstr(url, "://");
    if (!authority) return "";
    const char *path = strchr(authority + 3, '/');
    return path ? path : "";
}

static void start(void *opaque) {
    handle *h = opaque;
    const courier_client *c = h->client;
    const char *path = path_of(h->url);
    if (strcmp(path, "/hello") == 0) {
        courier_response response = { .struct_size = sizeof response, .mime_type = "text/plain",
                                      .expected_length = (int64_t)strlen(hello) };
        c->received_response(h->context, &response);
        c->received_data(h->context, (const uint8_t *)hello, strlen(hello));
        c->finished(h->context);
    } else if (strcmp(path, "/redirect") == 0) {
        c->redirected(h->context, target, NULL);
    } else if (strcmp(path, "/http-redirect") == 0) {
        courier_header location[] = { { "Location", target } };
        courier_response response = { .struct_size = sizeof response, .status_code = 302, .expected_length = 0,
                                      .headers = location, .header_count = 1 };
        c->redirected(h->context, target, &response);
    } else if (strcmp(path, "/hang") != 0) {
        c->failed(h->context, COURIER_ERROR_FILE_DOES_NOT_EXIST, "no such fixture path");
    }
}

static void stop(void *opaque) { (void)opaque; }

static void destroy(void *opaque) {
    handle *h = opaque;
    free(h->url);
    free(h);
}

static const courier_scheme schemes[] = {
    { "bridge-fixture", COURIER_CAPABILITY_READ },
};

static const courier_handler_table handlers = {
    .struct_size = sizeof(courier_handler_table),
    .create = create,
    .start = start,
    .stop = stop,
    .destroy = destroy,
};

static const courier_plugin_descriptor descriptor = {
    .abi_version = COURIER_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(courier_plugin_descriptor),
    .name = "bridge-fixture",
    .version = "0.1",
    .schemes = schemes,
    .scheme_count = sizeof schemes / sizeof schemes[0],
    .handlers = &handlers,
};

COURIER_PLUGIN_EXPORT const courier_plugin_descriptor *courier_plugin_entry(void) {
    return &descriptor;
}
