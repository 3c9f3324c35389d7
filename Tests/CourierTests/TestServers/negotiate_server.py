#!/usr/bin/env python3
"""An HTTP/1.1 server on 127.0.0.1 that requires Negotiate (SPNEGO with Kerberos, RFC 4559), for
Courier's Negotiate tests. pyspnego accepts the client's token with the keytab KRB5_KTNAME names
(the service principal HTTP/127.0.0.1 of the tests' own KDC, KerberosTestRealm.swift).

Paths:
  /data   200 with the body "hello <client principal>" once the token is accepted.
  /ws     the WebSocket opening handshake (RFC 6455) once the token is accepted: 101, then an echo
          of text and binary messages, a pong for each ping, and the close handshake (the close
          frame echoed, then the connection closed).
  /ws-open  the same WebSocket endpoint without authentication (the benchmark's baseline,
          Benchmarks/negotiate-part.sh).
A request without an `Authorization: Negotiate` field, or with a token that is not accepted, is
answered 401 with `WWW-Authenticate: Negotiate` and the body "negotiate required". An accepted
token's answer carries the server's token (`WWW-Authenticate: Negotiate <token>`) when there is one;
the 101 names the client's principal in `X-Negotiate-Principal`.

The chosen port is written to --port-file once the server listens. Runs until killed (the tests
start it with a parent-death signal).
"""

import argparse
import base64
import hashlib
import http.server
import os
import struct
import sys

import spnego

WEBSOCKET_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def accept(token):
    """Returns (client principal, server token or None), or None when the token is refused."""
    try:
        context = spnego.server(service="HTTP", hostname="127.0.0.1", protocol="negotiate")
        answer = context.step(token)
        if not context.complete:
            return None
        return str(context.client_principal), answer
    except Exception as error:  # pyspnego raises its own SpnegoError family and GSS errors
        sys.stderr.write("negotiate_server: token refused: %s\n" % error)
        sys.stderr.flush()
        return None


def read_exact(stream, count):
    data = b""
    while len(data) < count:
        chunk = stream.read(count - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def read_frame(stream):
    """One client frame: (fin, opcode, payload), or None at end of stream."""
    head = read_exact(stream, 2)
    if head is None:
        return None
    fin = head[0] & 0x80 != 0
    opcode = head[0] & 0x0F
    length = head[1] & 0x7F
    if length == 126:
        raw = read_exact(stream, 2)
        if raw is None:
            return None
        length = struct.unpack("!H", raw)[0]
    elif length == 127:
        raw = read_exact(stream, 8)
        if raw is None:
            return None
        length = struct.unpack("!Q", raw)[0]
    mask = read_exact(stream, 4) if head[1] & 0x80 else b"\0\0\0\0"
    payload = read_exact(stream, length) if length else b""
    if mask is None or payload is None:
        return None
    return fin, opcode, bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def frame(opcode, payload):
    """An unmasked server frame."""
    length = len(payload)
    if length < 126:
        head = struct.pack("!BB", 0x80 | opcode, length)
    elif length < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, 126, length)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, length)
    return head + payload


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        sys.stderr.write("negotiate_server: " + (format % args) + "\n")
        sys.stderr.flush()

    def refuse(self):
        body = b"negotiate required"
        self.send_response(401)
        self.send_header("WWW-Authenticate", "Negotiate")
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def authenticated(self):
        field = self.headers.get("Authorization", "")
        scheme, _, value = field.partition(" ")
        if scheme.lower() != "negotiate" or not value.strip():
            return None
        try:
            token = base64.b64decode(value.strip(), validate=True)
        except ValueError:
            return None
        return accept(token)

    def do_GET(self):
        if self.path not in ("/data", "/ws", "/ws-open"):
            self.send_error(404)
            return
        if self.path == "/ws-open":
            self.upgrade(None)
            return
        result = self.authenticated()
        if result is None:
            self.refuse()
            return
        principal, server_token = result
        if self.path == "/data":
            body = ("hello " + principal).encode()
            self.send_response(200)
            if server_token:
                self.send_header("WWW-Authenticate", "Negotiate " + base64.b64encode(server_token).decode())
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.upgrade(server_token, principal)

    def upgrade(self, server_token, principal=None):
        """Answers a WebSocket handshake with 101 (with the server's token and the client's principal
        in `X-Negotiate-Principal`, when authenticated), then echoes."""
        key = self.headers.get("Sec-WebSocket-Key", "")
        if self.headers.get("Upgrade", "").lower() != "websocket" or not key:
            self.send_error(400)
            return
        accept_value = base64.b64encode(hashlib.sha1(key.encode() + WEBSOCKET_GUID).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept_value)
        if server_token:
            self.send_header("WWW-Authenticate", "Negotiate " + base64.b64encode(server_token).decode())
        if principal:
            self.send_header("X-Negotiate-Principal", principal)
        self.end_headers()
        self.wfile.flush()
        self.echo()
        self.close_connection = True

    def echo(self):
        message_opcode, parts = None, []
        while True:
            received = read_frame(self.rfile)
            if received is None:
                return
            fin, opcode, payload = received
            if opcode == 0x8:
                self.wfile.write(frame(0x8, payload[:125]))
                self.wfile.flush()
                return
            if opcode == 0x9:
                self.wfile.write(frame(0xA, payload))
                self.wfile.flush()
                continue
            if opcode in (0x1, 0x2):
                message_opcode, parts = opcode, [payload]
            elif opcode == 0x0:
                parts.append(payload)
            else:
                continue
            if fin and message_opcode is not None:
                self.wfile.write(frame(message_opcode, b"".join(parts)))
                self.wfile.flush()
                message_opcode, parts = None, []


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    arguments = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    temporary = arguments.port_file + ".tmp"
    with open(temporary, "w") as handle:
        handle.write(str(server.server_address[1]))
    os.rename(temporary, arguments.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
