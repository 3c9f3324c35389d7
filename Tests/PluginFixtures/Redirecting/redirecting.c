/*
 * A test fixture: a plugin that redirects to whatever URL its request names, so the tests can check
 * which redirects Courier follows and which header fields go with them. Two schemes, both its own:
 * `redirecting` and `redirecting-alt`. The path says what to do:
 *
 *   /to?<url>        redirected(<url>) with no response (a URLResponse)
 *   /http-to?<url>   redirected(<url>) with an HTTP-like 302 response carrying Location: <url>
 *   /headers         a text/plain body: the request's method, then one "name: value" line per
 *                    header field it was given, in the order given
 *   anything else    failed(fileDoesNotExist)
 *
 * The <url> is everything after the first '?', taken as it is (no percent-decoding).
 */
#define _POSIX_C_SOURCE 200809L
#include "redirecting.h"

#include <stdlib.h>
#include <string.h>

typedef struct handle {
    const courier_client *client;
    void *context;
    char *url;
    char *head; /* what /headers answers */
} handle;

/* A copy of the request's method and header fields as text, or NULL when out of memory. */
static char *describe_head(const courier_request *request) {
    size_t length = strlen(request->method) + 2;
    for (size_t i = 0; i < request->header_count; i++) {
        const courier_header *field = &request->headers[i];
        if (!field->name || !field->value) continue;
        length += strlen(field->name) + strlen(field->value) + 3;
    }
    char *text = malloc(length);
    if (!text) return NULL;
    char *end = text;
    end = stpcpy(end, request->method);
    end = stpcpy(end, "\n");
    for (size_t i = 0; i < request->header_count; i++) {
        const courier_header *field = &request->headers[i];
        if (!field->name || !field->value) continue;
        end = stpcpy(end, field->name);
        end = stpcpy(end, ": ");
        end = stpcpy(end, field->value);
        end = stpcpy(end, "\n");
    }
    return text;
}

static void *create(const courier_request *request, const courier_client *client, void *context) {
    if (!request || !request->url || !request->method) return NULL;
    handle *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->client = client;
    h->context = context;
    h->url = strdup(request->url);
    h->head = describe_head(request);
    if (!h->url || !h->head) {
        free(h->url);
        free(h->head);
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

static int starts_with(const char *text, const char *prefix) {
    return strncmp(text, prefix, strlen(prefix)) == 0;
}

static void start(void *opaque) {
    handle *h = opaque;
    const courier_client *c = h->client;
    const char *path = path_of(h->url);
    const char *query = strchr(path, '?');
    if (starts_with(path, "/to?")) {
        c->redirected(h->context, query + 1, NULL);
    } else if (starts_with(path, "/http-to?")) {
        courier_header location[] = { { "Location", query + 1 } };
        courier_response response = { .struct_size = sizeof response, .status_code = 302, .expected_length = 0,
                                      .headers = location, .header_count = 1 };
        c->redirected(h->context, query + 1, &response);
    } else if (strcmp(path, "/headers") == 0) {
        courier_response response = { .struct_size = sizeof response, .mime_type = "text/plain",
                                      .expected_length = (int64_t)strlen(h->head) };
        c->received_response(h->context, &response);
        c->received_data(h->context, (const uint8_t *)h->head, strlen(h->head));
        c->finished(h->context);
    } else {
        c->failed(h->context, COURIER_ERROR_FILE_DOES_NOT_EXIST, "no such fixture path");
    }
}

static void stop(void *opaque) { (void)opaque; }

static void destroy(void *opaque) {
    handle *h = opaque;
    free(h->url);
    free(h->head);
    free(h);
}

static const courier_scheme schemes[] = {
    { "redirecting", COURIER_CAPABILITY_READ },
    { "redirecting-alt", COURIER_CAPABILITY_READ },
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
    .name = "redirecting",
    .version = "0.1",
    .schemes = schemes,
    .scheme_count = sizeof schemes / sizeof schemes[0],
    .handlers = &handlers,
};

COURIER_PLUGIN_EXPORT const courier_plugin_descriptor *courier_plugin_entry(void) {
    return &descriptor;
}
