/*
 * courier_plugin.h — the contract between Courier and a handler plugin.
 *
 * A plugin is a shared library that serves one or more URL schemes. Courier finds it through a
 * JSON manifest beside the library, opens the library the first time one of its schemes is used,
 * calls the one exported entry symbol, COURIER_PLUGIN_ENTRY_SYMBOL, and checks the descriptor it
 * returns against the manifest. Only plain C types cross this boundary, so a plugin may be built
 * by any compiler in any language that can export a C function (C, C++, Rust, Zig, Swift with
 * @_cdecl), independently of the Courier build that loads it.
 *
 * ABI VERSIONING
 *   COURIER_PLUGIN_ABI_VERSION is the version of this contract. A host loads a plugin whose
 *   descriptor's abi_version it supports and refuses any other. Within one version the contract
 *   only grows: new fields and new function pointers are added at the END of a struct, and every
 *   struct that can grow starts with `struct_size`, set by whoever fills the struct to
 *   sizeof(the struct as it knew it). The reader uses a field only when struct_size covers it, so
 *   an older plugin works with a newer host and the other way round. Removing, reordering or
 *   changing the meaning of anything increments COURIER_PLUGIN_ABI_VERSION.
 *
 * OWNERSHIP (every pointer)
 *   - The descriptor returned by the entry function, and everything it points to (name, version,
 *     schemes and their names, the handler table), belongs to the plugin and must stay valid and
 *     unchanged for as long as the library is loaded. Courier never closes a plugin library.
 *   - The request passed to `create` and everything it points to belongs to Courier and is valid
 *     only during that call: copy what you need.
 *   - The client table passed to `create` belongs to Courier and stays valid for the life of the
 *     process. The client context is an opaque token, never a pointer the plugin may dereference.
 *   - Every pointer the plugin passes to a client function (responses, headers, strings, data)
 *     belongs to the plugin and is needed only during that call: Courier copies what it keeps.
 *   - The handle returned by `create` belongs to the plugin; Courier passes it back and frees
 *     nothing. `destroy` releases it.
 *
 * THREADING
 *   - Courier calls start, stop, resume_producing and destroy for one handle one at a time, never
 *     concurrently, each on a Courier thread; they must return promptly (do blocking work on a
 *     thread of your own). Different handles may be called concurrently from different threads.
 *   - A plugin may call the client from any thread, including from inside start. Courier
 *     serializes what it hears and delivers it to the task's delegate on the session's delegate
 *     queue, in order.
 *   - `destroy` is called exactly once per successful `create`, after the load is over: after
 *     `stop` returned, or after the plugin reported finished, failed or a redirect. It is never
 *     called from inside a client call, but it can run while a plugin thread is still returning
 *     from its last client call: join or otherwise synchronize with your threads in destroy.
 *   - After reporting finished, failed or a redirect, the plugin should call the client no more.
 *     Calls after that, calls after destroy, repeated terminal calls, NULL pointers, unknown error
 *     codes and bad status codes are ignored or turned into a failure by Courier; they never crash
 *     the host.
 *
 * ERRORS
 *   `failed` takes a URLError code (the negative NSURLError… values, e.g. -1004 cannot connect to
 *   host, -1100 file does not exist) and a UTF-8 message for people. An unknown code becomes -1
 *   (unknown). Courier sets the failing URL itself.
 */
#ifndef COURIER_PLUGIN_H
#define COURIER_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this contract. See ABI VERSIONING above. */
#define COURIER_PLUGIN_ABI_VERSION 1

/* The name of the one function every plugin exports, of type courier_plugin_entry_fn. */
#define COURIER_PLUGIN_ENTRY_SYMBOL "courier_plugin_entry"

/* Marks the entry function as exported from the shared library. */
#if defined(_WIN32)
#define COURIER_PLUGIN_EXPORT __declspec(dllexport)
#else
#define COURIER_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* What a plugin can do with a scheme; a scheme's capabilities are a bitwise OR of these. */
enum {
    COURIER_CAPABILITY_READ = 1u << 0,   /* fetch a resource (GET) */
    COURIER_CAPABILITY_WRITE = 1u << 1,  /* store a request body (PUT/POST and other methods) */
    COURIER_CAPABILITY_LIST = 1u << 2,   /* answer a directory-like URL with a listing */
    COURIER_CAPABILITY_RESUME = 1u << 3, /* continue a download at a byte offset */
};

/* URLError codes a plugin commonly reports through courier_client.failed. Any code Foundation's
 * URLError defines is accepted. */
enum {
    COURIER_ERROR_UNKNOWN = -1,
    COURIER_ERROR_CANCELLED = -999,
    COURIER_ERROR_BAD_URL = -1000,
    COURIER_ERROR_TIMED_OUT = -1001,
    COURIER_ERROR_UNSUPPORTED_URL = -1002,
    COURIER_ERROR_CANNOT_FIND_HOST = -1003,
    COURIER_ERROR_CANNOT_CONNECT_TO_HOST = -1004,
    COURIER_ERROR_NETWORK_CONNECTION_LOST = -1005,
    COURIER_ERROR_RESOURCE_UNAVAILABLE = -1008,
    COURIER_ERROR_BAD_SERVER_RESPONSE = -1011,
    COURIER_ERROR_CANNOT_DECODE_RAW_DATA = -1015,
    COURIER_ERROR_CANNOT_PARSE_RESPONSE = -1017,
    COURIER_ERROR_FILE_DOES_NOT_EXIST = -1100,
    COURIER_ERROR_FILE_IS_DIRECTORY = -1101,
    COURIER_ERROR_NO_PERMISSIONS_TO_READ_FILE = -1102,
    COURIER_ERROR_CANNOT_OPEN_FILE = -3001,
};

/* One scheme the plugin serves. `name` is lowercase ASCII: a letter, then letters, digits, '+',
 * '-' or '.' (RFC 3986). */
typedef struct courier_scheme {
    const char *name;
    uint32_t capabilities;
} courier_scheme;

/* One header field: NUL-terminated UTF-8 name and value. */
typedef struct courier_header {
    const char *name;
    const char *value;
} courier_header;

/* The request a handler is created for (owned by Courier, valid during `create` only). */
typedef struct courier_request {
    uint32_t struct_size;
    const char *url;                 /* absolute URL, never NULL */
    const char *method;              /* "GET", "HEAD", "PUT", …; never NULL */
    const courier_header *headers;   /* header_count fields; NULL when header_count is 0 */
    size_t header_count;
    const uint8_t *body;             /* the request body, or NULL */
    size_t body_length;
    double timeout_seconds;          /* the idle timeout Courier enforces; informational */
    int64_t resume_offset;           /* > 0: continue the body at this byte offset; else -1 */
    const char *resume_validator;    /* the validator the resource had then, or NULL */
} courier_request;

/* A response (owned by the plugin, valid during the client call only). */
typedef struct courier_response {
    uint32_t struct_size;
    int32_t status_code;             /* 0: not HTTP-like (a URLResponse); 100…599: an HTTPURLResponse */
    const char *url;                 /* the response's URL, or NULL for the request's URL */
    const char *mime_type;           /* e.g. "text/plain", or NULL */
    const char *text_encoding;       /* e.g. "utf-8", or NULL */
    int64_t expected_length;         /* body length in bytes, or -1 when unknown */
    const courier_header *headers;   /* header_count fields; NULL when header_count is 0 */
    size_t header_count;
} courier_response;

/* The functions a handler reports through. `context` is the token passed to `create`. */
typedef struct courier_client {
    uint32_t struct_size;
    /* The response; call once, before any data. */
    void (*received_response)(void *context, const courier_response *response);
    /* Some of the body: `length` bytes at `bytes`, copied before the call returns. */
    void (*received_data)(void *context, const uint8_t *bytes, size_t length);
    /* The request was redirected to `url` (absolute); `response` may be NULL. Ends this load:
     * Courier asks the delegate and starts a new handler for the new URL. Only to the plugin's own
     * schemes, http and https: a redirect (or the delegate's answer) to any other scheme fails the
     * task with unsupported URL (-1002). Authorization, Cookie and Proxy-Authorization are dropped
     * when the new URL is another origin (scheme, host, port). */
    void (*redirected)(void *context, const char *url, const courier_response *response);
    /* The load finished successfully. */
    void (*finished)(void *context);
    /* The load failed with a URLError code and a message (may be NULL). */
    void (*failed)(void *context, int32_t url_error_code, const char *message);
    /* 1 when the consumer wants more data now, 0 when the plugin should pause until
     * resume_producing is called (the task is suspended or its delegate lags behind). */
    int (*can_accept_more_data)(void *context);
    /* The body delivered from now on continues at `offset` of `expected_total` bytes (-1 unknown):
     * call before received_response when honouring request->resume_offset. */
    void (*resumed)(void *context, int64_t offset, int64_t expected_total);
    /* A string that changes when the resource changes; stored in resume data and passed back as
     * request->resume_validator when the download is resumed. */
    void (*set_resume_validator)(void *context, const char *validator);
    /* Upload progress for requests with a body. */
    void (*sent_body_data)(void *context, int64_t bytes_sent, int64_t total_sent, int64_t total_expected);
} courier_client;

/* The plugin's functions, called by Courier. */
typedef struct courier_handler_table {
    uint32_t struct_size;
    /* Creates a handler for `request`, reporting to `client` with `context`. Returns an opaque
     * handle, or NULL when the request cannot be served (the task then fails). Must not call the
     * client. */
    void *(*create)(const courier_request *request, const courier_client *client, void *context);
    /* Starts loading. */
    void (*start)(void *handle);
    /* Stops loading (the task was cancelled, timed out, redirected or ended). Report nothing more;
     * `destroy` follows. It may come after the plugin reported the end: it must then do nothing. */
    void (*stop)(void *handle);
    /* Releases the handle. Called exactly once per handle. */
    void (*destroy)(void *handle);
    /* Optional (may be NULL): the consumer can take data again after can_accept_more_data
     * returned 0. */
    void (*resume_producing)(void *handle);
} courier_handler_table;

/* What the entry function returns (owned by the plugin, valid while the library is loaded). */
typedef struct courier_plugin_descriptor {
    uint32_t abi_version;            /* COURIER_PLUGIN_ABI_VERSION the plugin was built against */
    uint32_t struct_size;            /* sizeof(courier_plugin_descriptor) */
    const char *name;                /* the plugin's name, as in its manifest */
    const char *version;             /* the plugin's version, as in its manifest */
    const courier_scheme *schemes;   /* scheme_count schemes, as in its manifest */
    size_t scheme_count;
    const courier_handler_table *handlers;
} courier_plugin_descriptor;

/* The type of the entry function. It may be called more than once and must return the same
 * descriptor each time; it must not call into Courier. */
typedef const courier_plugin_descriptor *(*courier_plugin_entry_fn)(void);

/* The ABI version this header describes; lets Swift code read COURIER_PLUGIN_ABI_VERSION. */
uint32_t courier_plugin_header_abi_version(void);

#ifdef __cplusplus
}
#endif

#endif /* COURIER_PLUGIN_H */
