/*
 * A test fixture: a plugin that calls its client wrongly, one way per scheme. Courier must turn
 * each into an orderly outcome (a URLError, or the call ignored) and never crash.
 *
 *   misbehave-twice        response, data "hello", finished twice, then failed and more data
 *   misbehave-null         a NULL response
 *   misbehave-nulldata     a response, then 5 bytes of data at NULL
 *   misbehave-badcode      failed with the code 12345 and a NULL message
 *   misbehave-badstatus    a response with status 42
 *   misbehave-noresponse   data and finished without a response
 *   misbehave-http         a 201 response with a header field, then "created"
 *   misbehave-redirect     a redirect to misbehave-twice://fixture/redirected (its own scheme), then
 *                          finished (ignored: the redirect ended the load)
 *   misbehave-badredirect  a redirect to NULL
 *   misbehave-nocreate     create returns NULL
 *   misbehave-late         finished, then 200 ms later data and finished from another thread,
 *                          after the host has destroyed the handle
 *   misbehave-hang         nothing at all until stopped
 *   misbehave-echo         (read, write) the method, a space and the body
 */
#define _POSIX_C_SOURCE 200809L
#include "misbehaving.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_llong counters[4]; /* created, started, stopped, destroyed */

typedef struct handle {
    const courier_client *client;
    void *context;
    char scheme[32];
    char method[16];
    uint8_t *body;
    size_t body_length;
} handle;

COURIER_PLUGIN_EXPORT void courier_test_misbehaving_counters(int64_t counts[4]) {
    for (int i = 0; i < 4; i++) counts[i] = atomic_load(&counters[i]);
}

static void *create(const courier_request *request, const courier_client *client, void *context) {
    if (!request || !request->url) return NULL;
    const char *colon = strchr(request->url, ':');
    size_t length = colon ? (size_t)(colon - request->url) : 0;
    if (length == 0 || length >= sizeof ((handle *)0)->scheme) return NULL;
    if (strncmp(request->url, "misbehave-nocreate", length) == 0) return NULL;
    handle *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->client = client;
    h->context = context;
    memcpy(h->scheme, request->url, length);
    strncpy(h->method, request->method ? request->method : "GET", sizeof h->method - 1);
    if (request->body && request->body_length > 0) {
        h->body = malloc(request->body_length);
        if (h->body) {
            memcpy(h->body, request->body, request->body_length);
            h->body_length = request->body_length;
        }
    }
    atomic_fetch_add(&counters[0], 1);
    return h;
}

static courier_response plain_response(const char *mime) {
    courier_response response = { .struct_size = sizeof(courier_response), .mime_type = mime, .expected_length = -1 };
    return response;
}

typedef struct late_call {
    const courier_client *client;
    void *context;
} late_call;

static void *late_thread(void *argument) {
    late_call *call = argument;
    struct timespec pause = { 0, 200 * 1000 * 1000 };
    nanosleep(&pause, NULL);
    courier_response response = plain_response("text/plain");
    call->client->received_response(call->context, &response);
    call->client->received_data(call->context, (const uint8_t *)"late", 4);
    call->client->finished(call->context);
    call->client->failed(call->context, -1, "late");
    free(call);
    return NULL;
}

static void start(void *opaque) {
    handle *h = opaque;
    atomic_fetch_add(&counters[1], 1);
    const courier_client *c = h->client;
    void *x = h->context;
    const char *s = h->scheme;
    courier_response text = plain_response("text/plain");
    if (strcmp(s, "misbehave-twice") == 0) {
        c->received_response(x, &text);
        c->received_data(x, (const uint8_t *)"hello", 5);
        c->finished(x);
        c->finished(x);
        c->failed(x, -1004, "too late");
        c->received_data(x, (const uint8_t *)"more", 4);
        c->received_response(x, &text);
    } else if (strcmp(s, "misbehave-null") == 0) {
        c->received_response(x, NULL);
        c->finished(x);
    } else if (strcmp(s, "misbehave-nulldata") == 0) {
        c->received_response(x, &text);
        c->received_data(x, NULL, 5);
        c->finished(x);
    } else if (strcmp(s, "misbehave-badcode") == 0) {
        c->failed(x, 12345, NULL);
    } else if (strcmp(s, "misbehave-badstatus") == 0) {
        courier_response bad = plain_response("text/plain");
        bad.status_code = 42;
        c->received_response(x, &bad);
        c->finished(x);
    } else if (strcmp(s, "misbehave-noresponse") == 0) {
        c->received_data(x, (const uint8_t *)"orphan", 6);
        c->finished(x);
    } else if (strcmp(s, "misbehave-http") == 0) {
        courier_header headers[] = { { "X-Fixture", "yes" }, { "Content-Type", "text/plain; charset=utf-8" } };
        courier_response http = plain_response(NULL);
        http.status_code = 201;
        http.headers = headers;
        http.header_count = 2;
        http.expected_length = 7;
        c->received_response(x, &http);
        c->received_data(x, (const uint8_t *)"created", 7);
        c->finished(x);
    } else if (strcmp(s, "misbehave-redirect") == 0) {
        c->redirected(x, "misbehave-twice://fixture/redirected", NULL);
        c->finished(x);
    } else if (strcmp(s, "misbehave-badredirect") == 0) {
        c->redirected(x, NULL, NULL);
    } else if (strcmp(s, "misbehave-late") == 0) {
        c->received_response(x, &text);
        c->finished(x);
        late_call *call = malloc(sizeof *call);
        pthread_t thread;
        if (call) {
            call->client = c;
            call->context = x;
            if (pthread_create(&thread, NULL, late_thread, call) == 0) pthread_detach(thread);
            else free(call);
        }
    } else if (strcmp(s, "misbehave-echo") == 0) {
        c->received_response(x, &text);
        c->received_data(x, (const uint8_t *)h->method, strlen(h->method));
        c->received_data(x, (const uint8_t *)" ", 1);
        c->received_data(x, h->body, h->body_length);
        c->finished(x);
    }
    /* misbehave-hang: nothing. */
}

static void stop(void *opaque) {
    (void)opaque;
    atomic_fetch_add(&counters[2], 1);
}

static void destroy(void *opaque) {
    handle *h = opaque;
    atomic_fetch_add(&counters[3], 1);
    free(h->body);
    free(h);
}

#define READ COURIER_CAPABILITY_READ
static const courier_scheme schemes[] = {
    { "misbehave-twice", READ }, { "misbehave-null", READ }, { "misbehave-nulldata", READ },
    { "misbehave-badcode", READ }, { "misbehave-badstatus", READ }, { "misbehave-noresponse", READ },
    { "misbehave-http", READ }, { "misbehave-redirect", READ }, { "misbehave-badredirect", READ },
    { "misbehave-nocreate", READ }, { "misbehave-late", READ }, { "misbehave-hang", READ },
    { "misbehave-echo", READ | COURIER_CAPABILITY_WRITE },
};

/* No resume_producing: the table ends at destroy, as an older plugin's would. */
static const courier_handler_table handlers = {
    .struct_size = offsetof(courier_handler_table, resume_producing),
    .create = create,
    .start = start,
    .stop = stop,
    .destroy = destroy,
};

static const courier_plugin_descriptor descriptor = {
    .abi_version = COURIER_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(courier_plugin_descriptor),
    .name = "misbehaving",
    .version = "0.1",
    .schemes = schemes,
    .scheme_count = sizeof schemes / sizeof schemes[0],
    .handlers = &handlers,
};

COURIER_PLUGIN_EXPORT const courier_plugin_descriptor *courier_plugin_entry(void) {
    return &descriptor;
}
