#!/usr/bin/env python3
"""An HTTP/1.1 server on 127.0.0.1 that requires Negotiate (SPNEGO with Kerberos, RFC 4559), for
Courier's Negotiate tests. pyspnego accepts the client's token with the keytab KRB5_KTNAME names
(the service principal HTTP/127.0.0.1 of the tests' own KDC, KerberosTestRealm.swift).

Paths:
  /data   200 with the body "hello <client principal>" once the token is accepted.
  /ws     the WebSocket opening handshake (RFC 6455) once the token is accepted: 101, then an echo
          of text and binary messages, a pong for each ping, and the close handshake (the close
          frame echoed, then the connection closed; auth_server_support.py).
  /ws-open  the same WebSocket endpoint without authentication (the benchmark's baseline,
          Benchmarks/websocket-auth-part.sh).
A request without an `Authorization: Negotiate` field, or with a token that is not accepted, is
answered 401 with `WWW-Authenticate: Negotiate` and the body "negotiate required". An accepted
token's answer carries the server's token (`WWW-Authenticate: Negotiate <token>`) when there is one;
the 101 names the client's principal in `X-Negotiate-Principal`.

Serves on an ephemeral 127.0.0.1 port and, when --cert and --key are given, the same over TLS on
another (wss and https); writes {"http": port, "https": port} to --port-file once it listens
(auth_server_support.py). Runs until killed (the tests start it with a parent-death signal).
"""

import base64
import http.server
import sys

import spnego

# The shared module beside this script, imported without leaving a __pycache__ in the source tree.
sys.dont_write_bytecode = True
import auth_server_support  # noqa: E402


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
        headers = []
        if server_token:
            headers.append(("WWW-Authenticate", "Negotiate " + base64.b64encode(server_token).decode()))
        if principal:
            headers.append(("X-Negotiate-Principal", principal))
        auth_server_support.upgrade(self, headers)


def main():
    auth_server_support.serve(Handler, auth_server_support.arguments("Negotiate test server"))


if __name__ == "__main__":
    main()
