/*
 * gopher.c — a Courier plugin serving gopher:// URLs (RFC 1436, URLs as in RFC 4266).
 *
 * Written in C against courier_plugin.h alone: it links nothing of Courier.
 *
 *   gopher://host[:port]/<type><selector>[%09<search>]
 *
 * An empty path is the server's root menu (type 1). The selector (and, for type 7, the search
 * string after %09 or '?') is sent followed by CRLF; the reply is read until the server closes the
 * connection or, for text (0) and menus (1, 7), until the terminating "." line, with dot-stuffed
 * lines ("..") unstuffed. Menus are delivered as they are, with the MIME type
 * application/gopher-menu; text is text/plain; other types by the table below.
 *
 * One thread per load does the network work; stop and resume_producing wake it through a pipe, so
 * stop is prompt even while it waits for the server. The thread honours can_accept_more_data: it
 * stops reading from the socket while the consumer lags (TCP then slows the server down).
 *
 * Errors: unknown host -> cannot find host; refused -> cannot connect to host; connection reset
 * -> network connection lost; a server error item ("3...") answering a text or menu request ->
 * file does not exist; an item type that cannot be fetched (telnet, CSO, error) -> unsupported URL.
 */
#define _GNU_SOURCE

#include "gopher_handle.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

/* ---- reporting ----------------------------------------------------------------------------- */

static int stopped(gopher_handle *h) { return atomic_load(&h->stopped); }

static void report_failure(gopher_handle *h, int code, const char *message) {
    if (!stopped(h)) h->client->failed(h->context, code, message);
}

static void report_data(gopher_handle *h, const char *bytes, size_t length) {
    if (length > 0 && !stopped(h)) h->client->received_data(h->context, (const uint8_t *)bytes, length);
}

/* Drains the wake-up pipe. */
static void drain(int fd) {
    char buffer[64];
    while (read(fd, buffer, sizeof buffer) > 0) {}
}

/* Waits until `fd` (when >= 0) is ready for `events` or the handle is woken by stop or
 * resume_producing. Returns 1 when ready, 0 when woken or stopped (check stopped()), -1 on error. */
static int wait_for(gopher_handle *h, int fd, short events) {
    struct pollfd fds[2];
    nfds_t count = 0;
    if (fd >= 0) fds[count++] = (struct pollfd){ .fd = fd, .events = events };
    nfds_t wake_index = count;
    fds[count++] = (struct pollfd){ .fd = h->wake[0], .events = POLLIN };
    for (;;) {
        if (stopped(h)) return 0;
        int n = poll(fds, count, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (fds[wake_index].revents) { drain(h->wake[0]); return 0; }
        if (fd >= 0 && fds[0].revents) return 1;
    }
}

/* Connects to the handle's host and port; returns the socket or -1 after reporting. */
static int connect_to_server(gopher_handle *h) {
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
    struct addrinfo *addresses = NULL;
    int status = getaddrinfo(h->host, h->port, &hints, &addresses);
    if (status != 0) {
        char message[512];
        snprintf(message, sizeof message, "cannot find the host %s: %s", h->host, gai_strerror(status));
        report_failure(h, COURIER_ERROR_CANNOT_FIND_HOST, message);
        return -1;
    }
    int last_error = ECONNREFUSED;
    int fd = -1;
    for (struct addrinfo *a = addresses; a && !stopped(h); a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) { last_error = errno; continue; }
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
        if (errno == EINPROGRESS) {
            int ready = wait_for(h, fd, POLLOUT);
            int error = 0;
            socklen_t length = sizeof error;
            if (ready == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0) break;
            last_error = ready == 1 ? error : EINTR;
        } else {
            last_error = errno;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(addresses);
    if (fd < 0 && !stopped(h)) {
        char message[512];
        snprintf(message, sizeof message, "cannot connect to %s port %s: %s", h->host, h->port, strerror(last_error));
        report_failure(h, COURIER_ERROR_CANNOT_CONNECT_TO_HOST, message);
    }
    return fd;
}

static int send_all(gopher_handle *h, int fd, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t sent = send(fd, bytes, length, MSG_NOSIGNAL);
        if (sent > 0) { bytes += sent; length -= (size_t)sent; continue; }
        if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            if (wait_for(h, fd, POLLOUT) != 1) return -1;
            continue;
        }
        return -1;
    }
    return 0;
}

/* Applies the text terminator and dot-unstuffing to `in`, writing to `out` (at least as large).
 * Returns the output length; sets *state to TEXT_END at the terminator. */
static size_t unstuff(const char *in, size_t length, char *out, enum text_state *state) {
    size_t o = 0;
    for (size_t i = 0; i < length && *state != TEXT_END; i++) {
        char c = in[i];
        switch (*state) {
        case LINE_START:
            if (c == '.') { *state = AFTER_DOT; break; }
            out[o++] = c;
            *state = c == '\n' ? LINE_START : MID_LINE;
            break;
        case MID_LINE:
            out[o++] = c;
            if (c == '\n') *state = LINE_START;
            break;
        case AFTER_DOT:
            if (c == '\r') { *state = AFTER_DOT_CR; break; }
            if (c == '\n') { *state = TEXT_END; break; }
            if (c == '.') { out[o++] = '.'; *state = MID_LINE; break; }
            out[o++] = '.';
            out[o++] = c;
            *state = MID_LINE;
            break;
        case AFTER_DOT_CR:
            if (c == '\n') { *state = TEXT_END; break; }
            out[o++] = '.';
            out[o++] = '\r';
            out[o++] = c;
            *state = c == '\n' ? LINE_START : MID_LINE;
            break;
        case TEXT_END:
            break;
        }
    }
    return o;
}

/* Whether a reply starts with a gopher error item: "3" display TAB selector TAB host TAB port. */
static int is_error_item(const char *bytes, size_t length) {
    if (length == 0 || bytes[0] != '3') return 0;
    int tabs = 0;
    for (size_t i = 0; i < length && bytes[i] != '\n'; i++) if (bytes[i] == '\t') tabs++;
    return tabs >= 3;
}

/* Reports a server error item as "file does not exist", with its display text. */
static void report_error_item(gopher_handle *h, const char *bytes, size_t length) {
    size_t end = 1;
    while (end < length && bytes[end] != '\t' && bytes[end] != '\r' && bytes[end] != '\n') end++;
    char message[512];
    snprintf(message, sizeof message, "the gopher server reported: %.*s", (int)(end - 1 < 400 ? end - 1 : 400), bytes + 1);
    report_failure(h, COURIER_ERROR_FILE_DOES_NOT_EXIST, message);
}

/* ---- the worker thread --------------------------------------------------------------------- */

static void *gopher_worker(void *argument) {
    gopher_handle *h = argument;
    int fd = connect_to_server(h);
    if (fd < 0) return NULL;
    if (send_all(h, fd, h->request_line, strlen(h->request_line)) != 0) {
        if (!stopped(h)) report_failure(h, COURIER_ERROR_NETWORK_CONNECTION_LOST, "the connection was lost while sending the selector");
        close(fd);
        return NULL;
    }

    char *buffer = malloc(GOPHER_CHUNK);
    char *text = malloc(GOPHER_CHUNK * 2 + 4);
    if (!buffer || !text) {
        report_failure(h, COURIER_ERROR_UNKNOWN, "out of memory");
        free(buffer); free(text); close(fd);
        return NULL;
    }
    const int textual = gopher_is_text_type(h->type);
    enum text_state state = LINE_START;
    size_t held = 0;        /* bytes held back in `buffer` to recognise an error item */
    int responded = 0;
    int failed = 0;
    for (;;) {
        if (stopped(h)) break;
        if (responded && !h->client->can_accept_more_data(h->context)) {
            /* Paused: wait for resume_producing or stop. */
            if (wait_for(h, -1, POLLIN) < 0) break;
            continue;
        }
        int ready = wait_for(h, fd, POLLIN);
        if (ready == 0) continue;
        if (ready < 0) { report_failure(h, COURIER_ERROR_NETWORK_CONNECTION_LOST, "poll failed"); failed = 1; break; }
        ssize_t count = recv(fd, buffer + held, (size_t)(GOPHER_CHUNK - held), 0);
        if (count < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
            char message[256];
            snprintf(message, sizeof message, "the connection was lost: %s", strerror(errno));
            report_failure(h, COURIER_ERROR_NETWORK_CONNECTION_LOST, message);
            failed = 1;
            break;
        }
        size_t available = held + (size_t)count;
        if (!responded) {
            /* Hold the first bytes until the first line is complete (or enough arrived, or EOF). */
            if (count > 0 && available < GOPHER_PEEK && !memchr(buffer, '\n', available)) { held = available; continue; }
            held = 0;
            if (textual && is_error_item(buffer, available)) { report_error_item(h, buffer, available); failed = 1; break; }
            courier_response response = {
                .struct_size = sizeof(courier_response),
                .status_code = 0,
                .mime_type = h->mime_type,
                .expected_length = -1,
            };
            if (stopped(h)) break;
            h->client->received_response(h->context, &response);
            responded = 1;
        }
        if (available == 0) break; /* EOF */
        if (textual) {
            size_t n = unstuff(buffer, available, text, &state);
            report_data(h, text, n);
            if (state == TEXT_END) break;
        } else {
            report_data(h, buffer, available);
        }
        if (count == 0) break; /* EOF after a held first line */
    }
    if (!failed && !stopped(h)) h->client->finished(h->context);
    free(buffer);
    free(text);
    close(fd);
    return NULL;
}

/* ---- the handler table --------------------------------------------------------------------- */

static void *gopher_create(const courier_request *request, const courier_client *client, void *context) {
    if (!request || !client || !request->url) return NULL;
    gopher_handle *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->client = client;
    h->context = context;
    h->wake[0] = h->wake[1] = -1;
    atomic_init(&h->stopped, 0);
    gopher_parse_url(h, request->url);
    return h;
}

static void gopher_start(void *handle) {
    gopher_handle *h = handle;
    if (h->parse_error) { report_failure(h, h->parse_error, h->parse_message); return; }
    if (pipe2(h->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        h->wake[0] = h->wake[1] = -1;
        report_failure(h, COURIER_ERROR_UNKNOWN, "cannot create a pipe");
        return;
    }
    if (pthread_create(&h->thread, NULL, gopher_worker, h) != 0) {
        report_failure(h, COURIER_ERROR_UNKNOWN, "cannot start a thread");
        return;
    }
    h->thread_started = 1;
}

static void wake(gopher_handle *h) {
    if (h->wake[1] >= 0) { ssize_t ignored = write(h->wake[1], "w", 1); (void)ignored; }
}

static void gopher_stop(void *handle) {
    gopher_handle *h = handle;
    atomic_store(&h->stopped, 1);
    wake(h);
}

static void gopher_resume(void *handle) { wake(handle); }

static void gopher_destroy(void *handle) {
    gopher_handle *h = handle;
    if (h->thread_started) {
        /* The host calls destroy after stop or after the end was reported: the thread is leaving. */
        atomic_store(&h->stopped, 1);
        wake(h);
        pthread_join(h->thread, NULL);
    }
    if (h->wake[0] >= 0) close(h->wake[0]);
    if (h->wake[1] >= 0) close(h->wake[1]);
    free(h->host);
    free(h->port);
    free(h->request_line);
    free(h);
}

static const courier_scheme gopher_schemes[] = {
    { .name = "gopher", .capabilities = COURIER_CAPABILITY_READ | COURIER_CAPABILITY_LIST },
};

static const courier_handler_table gopher_handlers = {
    .struct_size = sizeof(courier_handler_table),
    .create = gopher_create,
    .start = gopher_start,
    .stop = gopher_stop,
    .destroy = gopher_destroy,
    .resume_producing = gopher_resume,
};

static const courier_plugin_descriptor gopher_descriptor = {
    .abi_version = COURIER_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(courier_plugin_descriptor),
    .name = "gopher",
    .version = "1.0.0",
    .schemes = gopher_schemes,
    .scheme_count = sizeof gopher_schemes / sizeof gopher_schemes[0],
    .handlers = &gopher_handlers,
};

COURIER_PLUGIN_EXPORT const courier_plugin_descriptor *courier_plugin_entry(void) {
    return &gopher_descriptor;
}
