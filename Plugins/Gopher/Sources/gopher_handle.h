/*
 * gopher_handle.h — what the gopher plugin's files share: one load's handle, and the parsing of
 * its URL (gopher_url.c) that the handler table (gopher.c) runs when a load is created.
 */
#ifndef COURIER_GOPHER_HANDLE_H
#define COURIER_GOPHER_HANDLE_H

#include "courier_gopher.h"

#include <pthread.h>
#include <stdatomic.h>

#define GOPHER_DEFAULT_PORT "70"
#define GOPHER_CHUNK 65536
/* A reply's first bytes are held back this long at most to recognise an error item. */
#define GOPHER_PEEK 1024

/* Text states for the terminator and dot-unstuffing of types 0, 1 and 7. */
enum text_state { LINE_START, MID_LINE, AFTER_DOT, AFTER_DOT_CR, TEXT_END };

typedef struct gopher_handle {
    const courier_client *client;
    void *context;
    /* Parsed from the URL in create; a parse error is reported by start. */
    char *host;
    char *port;
    char type;
    char *request_line; /* selector [TAB search] CRLF */
    const char *mime_type;
    int parse_error;    /* a COURIER_ERROR_* code, or 0 */
    char parse_message[256];
    /* Worker thread and its wake-up pipe. */
    int wake[2];
    pthread_t thread;
    int thread_started;
    atomic_int stopped;
} gopher_handle;

/* Whether an item type is text with a "." terminator and dot-stuffing (0, 1 and 7). */
static inline int gopher_is_text_type(char type) { return type == '0' || type == '1' || type == '7'; }

/* Parses a gopher URL into the handle. Never fails hard: a problem is kept for start to report. */
void gopher_parse_url(gopher_handle *h, const char *url);

#endif
