"""What the authentication test servers (ntlm_server.py, negotiate_server.py) share: serving one
HTTP/1.1 handler class on 127.0.0.1 over plain TCP and, with a certificate, over TLS on a second
port; the port file the Swift launchers wait for (TestServers/AuthTestServerLaunch.swift); and a
small WebSocket endpoint (RFC 6455): the 101 answer and an echo of the client's messages.

Imported by those scripts, which run from this directory (Python puts a script's directory on
its path).
"""

import argparse
import base64
import hashlib
import http.server
import json
import os
import socket
import ssl
import struct
import threading

WEBSOCKET_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def arguments(description):
    """The servers' command line: --port-file, and --cert and --key for the TLS port."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    return parser.parse_args()


def serve(handler, parsed):
    """Serves `handler` on an ephemeral 127.0.0.1 port and, when `parsed` has --cert and --key, over
    TLS on another; writes {"http": port, "https": port or 0} to --port-file (atomically, once both
    listen), then runs until killed."""
    ports = {"http": _listen(handler, None), "https": 0}
    if parsed.cert and parsed.key:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(parsed.cert, parsed.key)
        ports["https"] = _listen(handler, context)
    temporary = parsed.port_file + ".tmp"
    with open(temporary, "w") as file:
        json.dump(ports, file)
    os.rename(temporary, parsed.port_file)
    threading.Event().wait()


class _TLSServer(http.server.ThreadingHTTPServer):
    """Python's threading HTTP server with Nagle's algorithm off on each connection, for the TLS
    port: the end of a TLS 1.3 handshake (the server's session tickets) and the answer after it are
    small writes in a row, and with Nagle the answer waited for the client's delayed acknowledgement
    (about 40 ms a handshake; the plain port has no such pair of writes and keeps the default)."""

    daemon_threads = True

    def get_request(self):
        connection, address = super().get_request()
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address


def _listen(handler, context):
    """A threading server for `handler` (over TLS with `context`) on its own thread; its port."""
    if context is None:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
    else:
        server = _TLSServer(("127.0.0.1", 0), handler)
        # The TLS handshake runs on the connection's thread, at its first read.
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def upgrade(request, extra_headers=()):
    """Answers `request`'s (a BaseHTTPRequestHandler's) WebSocket handshake with 101 and the
    `extra_headers` (name, value) pairs (over TLS also `X-TLS-Session-Reused: 0|1`), then echoes until the close handshake or the end of the
    stream; a request that is no WebSocket handshake gets 400."""
    key = request.headers.get("Sec-WebSocket-Key", "")
    if request.headers.get("Upgrade", "").lower() != "websocket" or not key:
        request.send_response(400)
        request.send_header("Content-Length", "0")
        request.end_headers()
        return
    accept = base64.b64encode(hashlib.sha1(key.encode() + WEBSOCKET_GUID).digest()).decode()
    request.send_response(101)
    request.send_header("Upgrade", "websocket")
    request.send_header("Connection", "Upgrade")
    request.send_header("Sec-WebSocket-Accept", accept)
    for name, value in extra_headers:
        request.send_header(name, value)
    if isinstance(request.connection, ssl.SSLSocket):
        # Whether the client resumed an earlier TLS session on this connection (the tests of
        # Courier's per-session TLS session cache read it).
        request.send_header("X-TLS-Session-Reused", "1" if request.connection.session_reused else "0")
    request.end_headers()
    request.wfile.flush()
    request.close_connection = True
    _echo(request.rfile, request.wfile)


def _echo(rfile, wfile):
    """Echoes text and binary messages (fragmented ones reassembled, sent back whole), answers each
    ping with a pong, and a close frame with the same close frame."""
    message_opcode, parts = None, []
    while True:
        received = _read_frame(rfile)
        if received is None:
            return
        fin, opcode, payload = received
        if opcode == 0x8:
            _send_frame(wfile, 0x8, payload[:125])
            return
        if opcode == 0x9:
            _send_frame(wfile, 0xA, payload)
            continue
        if opcode in (0x1, 0x2):
            message_opcode, parts = opcode, [payload]
        elif opcode == 0x0:
            parts.append(payload)
        else:
            continue
        if fin and message_opcode is not None:
            _send_frame(wfile, message_opcode, b"".join(parts))
            message_opcode, parts = None, []


def _read_exact(stream, count):
    """`count` bytes of `stream`, or None at its end."""
    data = b""
    while len(data) < count:
        chunk = stream.read(count - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _read_frame(stream):
    """One client frame: (fin, opcode, unmasked payload), or None at the end of the stream."""
    head = _read_exact(stream, 2)
    if head is None:
        return None
    length = head[1] & 0x7F
    if length in (126, 127):
        raw = _read_exact(stream, 2 if length == 126 else 8)
        if raw is None:
            return None
        length = struct.unpack("!H" if len(raw) == 2 else "!Q", raw)[0]
    mask = _read_exact(stream, 4) if head[1] & 0x80 else b"\0\0\0\0"
    payload = _read_exact(stream, length) if length else b""
    if mask is None or payload is None:
        return None
    return head[0] & 0x80 != 0, head[0] & 0x0F, bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def _send_frame(wfile, opcode, payload):
    """Writes one unmasked, final server frame and flushes."""
    length = len(payload)
    if length < 126:
        head = struct.pack("!BB", 0x80 | opcode, length)
    elif length < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, 126, length)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, length)
    wfile.write(head + payload)
    wfile.flush()
