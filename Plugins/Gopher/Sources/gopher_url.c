/*
 * gopher_url.c — the gopher plugin's URL parsing (RFC 4266): host, port, item type, selector and
 * search string, percent-decoded, and the MIME type the reply is delivered with.
 */
#define _GNU_SOURCE

#include "gopher_handle.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hex_value(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Percent-decodes [start, start+length) into a new string; NULL when out of memory. */
static char *percent_decode(const char *start, size_t length) {
    char *out = malloc(length + 1);
    if (!out) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < length; i++) {
        if (start[i] == '%' && i + 2 < length && hex_value(start[i + 1]) >= 0 && hex_value(start[i + 2]) >= 0) {
            out[o++] = (char)(hex_value(start[i + 1]) * 16 + hex_value(start[i + 2]));
            i += 2;
        } else {
            out[o++] = start[i];
        }
    }
    out[o] = '\0';
    return out;
}

static void set_parse_error(gopher_handle *h, int code, const char *message) {
    h->parse_error = code;
    snprintf(h->parse_message, sizeof h->parse_message, "%s", message);
}

static const char *mime_type_for(char type, const char *selector) {
    switch (type) {
    case '0': return "text/plain";
    case '1':
    case '7': return "application/gopher-menu";
    case 'h': return "text/html";
    case 'g': return "image/gif";
    case '4': return "application/mac-binhex40";
    case '6': return "text/x-uuencode";
    case 's': return "audio/basic";
    case 'I': {
        const char *dot = strrchr(selector, '.');
        if (dot && strcasecmp(dot, ".png") == 0) return "image/png";
        if (dot && (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0)) return "image/jpeg";
        if (dot && strcasecmp(dot, ".gif") == 0) return "image/gif";
        return "application/octet-stream";
    }
    default: return "application/octet-stream";
    }
}

void gopher_parse_url(gopher_handle *h, const char *url) {
    if (strncasecmp(url, "gopher://", 9) != 0) {
        set_parse_error(h, COURIER_ERROR_BAD_URL, "not a gopher:// URL");
        return;
    }
    const char *authority = url + 9;
    const char *path = strchr(authority, '/');
    const char *authority_end = path ? path : authority + strlen(authority);
    /* Drop a fragment from the path. */
    const char *host_start = authority, *host_end, *port_start = NULL, *port_end = authority_end;
    const char *at = memchr(authority, '@', (size_t)(authority_end - authority));
    if (at) host_start = at + 1;
    if (*host_start == '[') {
        host_end = memchr(host_start, ']', (size_t)(authority_end - host_start));
        if (!host_end) { set_parse_error(h, COURIER_ERROR_BAD_URL, "unterminated IPv6 address"); return; }
        if (host_end + 1 < authority_end && host_end[1] == ':') port_start = host_end + 2;
        host_start++;
    } else {
        const char *colon = memchr(host_start, ':', (size_t)(authority_end - host_start));
        host_end = colon ? colon : authority_end;
        if (colon) port_start = colon + 1;
    }
    if (host_end <= host_start) { set_parse_error(h, COURIER_ERROR_BAD_URL, "the URL has no host"); return; }
    h->host = strndup(host_start, (size_t)(host_end - host_start));
    if (port_start && port_start < port_end) {
        size_t n = (size_t)(port_end - port_start);
        for (size_t i = 0; i < n; i++) {
            if (!isdigit((unsigned char)port_start[i]) || n > 5) {
                set_parse_error(h, COURIER_ERROR_BAD_URL, "invalid port");
                return;
            }
        }
        h->port = strndup(port_start, n);
        long value = strtol(h->port ? h->port : "0", NULL, 10);
        if (value < 1 || value > 65535) { set_parse_error(h, COURIER_ERROR_BAD_URL, "invalid port"); return; }
    } else {
        h->port = strdup(GOPHER_DEFAULT_PORT);
    }
    if (!h->host || !h->port) { set_parse_error(h, COURIER_ERROR_UNKNOWN, "out of memory"); return; }

    /* Path: "/" type selector; a fragment is not part of it. */
    const char *p = path ? path + 1 : "";
    size_t plen = strcspn(p, "#");
    h->type = plen > 0 ? p[0] : '1';
    const char *rest = plen > 0 ? p + 1 : p;
    size_t rest_len = plen > 0 ? plen - 1 : 0;
    char *decoded = NULL;
    const char *query = NULL;
    if (h->type == '7') {
        /* A search may also be given as the URL's query. */
        const char *q = memchr(rest, '?', rest_len);
        if (q) { query = q + 1; rest_len = (size_t)(q - rest); }
    }
    decoded = percent_decode(rest, rest_len);
    if (!decoded) { set_parse_error(h, COURIER_ERROR_UNKNOWN, "out of memory"); return; }
    /* Selector, then an optional TAB and search string; a further TAB starts Gopher+ data. */
    char *tab = strchr(decoded, '\t');
    char *search = NULL;
    if (tab) {
        *tab = '\0';
        search = tab + 1;
        char *tab2 = strchr(search, '\t');
        if (tab2) *tab2 = '\0';
    }
    char *query_decoded = NULL;
    if (!search && query) {
        query_decoded = percent_decode(query, strcspn(query, "#"));
        search = query_decoded;
    }
    if (strpbrk(decoded, "\r\n") || (search && strpbrk(search, "\r\n"))) {
        set_parse_error(h, COURIER_ERROR_BAD_URL, "the selector contains a line break");
    } else if (strchr("0145679ghIsd", h->type) == NULL) {
        char message[96];
        snprintf(message, sizeof message, "gopher item type '%c' cannot be fetched", h->type);
        set_parse_error(h, COURIER_ERROR_UNSUPPORTED_URL, message);
    } else {
        h->mime_type = mime_type_for(h->type, decoded);
        size_t need = strlen(decoded) + (search ? strlen(search) + 1 : 0) + 3;
        h->request_line = malloc(need);
        if (!h->request_line) set_parse_error(h, COURIER_ERROR_UNKNOWN, "out of memory");
        else if (search) snprintf(h->request_line, need, "%s\t%s\r\n", decoded, search);
        else snprintf(h->request_line, need, "%s\r\n", decoded);
    }
    free(decoded);
    free(query_decoded);
}
