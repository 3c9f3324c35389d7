#!/usr/bin/env python3
"""NTLM test server for Courier's NTLM tests (WebSocket handshake and data tasks).

NTLM is verified by pyspnego's acceptor (an implementation independent of Courier's and
libcurl's), with the users of a file this server writes (NTLM_USER_FILE): `user` with password
`secret` (no domain) and `EXAMPLE\\alice` with password `wonderland` (the file is the port file's
name plus ".users"). HTTP/1.1 with keep-alive on one ephemeral port of 127.0.0.1 and, when --cert
and --key are given, the same over TLS on another; writes {"http": port, "https": port} to
--port-file once it listens, and runs until killed (auth_server_support.py). Exit status 3:
pyspnego is missing.

Each connection has its own NTLM context: a request with `Authorization: NTLM <NEGOTIATE>` gets a
401 with `WWW-Authenticate: NTLM <CHALLENGE>`; the AUTHENTICATE must come on the same connection.
A request without NTLM, or whose AUTHENTICATE fails, gets a 401 with `WWW-Authenticate: NTLM`.

Paths:
  /data        200 with the body "authenticated DOMAIN\\user" (or "authenticated user")
  /ws          WebSocket: after 101 echoes messages, answers pings and the close handshake
               (auth_server_support.py); the CHALLENGE's 401 has a Content-Length body
  /ws-chunked  as /ws, the CHALLENGE's 401 body is chunked (in two chunks and a trailer field)
  /ws-close    as /ws, but the CHALLENGE's 401 says Connection: close and the server closes
  /ws-garbage  as /ws, but the CHALLENGE is three zero bytes (not an NTLM message)
  /ws-open     WebSocket without authentication; /ws-basic with Basic (user:secret) instead of NTLM
               (the benchmark's comparisons, Benchmarks/websocket-auth-part.sh)
"""
import base64
import http.server
import os
import sys

# The shared module beside this script, imported without leaving a __pycache__ in the source tree.
sys.dont_write_bytecode = True
import auth_server_support  # noqa: E402

try:
    import spnego
except ImportError as error:  # pragma: no cover
    print(f"pyspnego is not installed: {error}", file=sys.stderr)
    sys.exit(3)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.ntlm = None

    def log_message(self, format, *args):
        sys.stderr.write("%s\n" % (format % args))

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        authorization = self.headers.get("Authorization", "")
        if path == "/ws-open":
            return auth_server_support.upgrade(self)
        if path == "/ws-basic":
            if authorization == "Basic " + base64.b64encode(b"user:secret").decode():
                return auth_server_support.upgrade(self)
            return self.unauthorized('Basic realm="ntlm-server"')
        if not authorization.upper().startswith("NTLM "):
            # /ws-both offers Negotiate first, then NTLM, as IIS does (only NTLM is answered here).
            return self.unauthorized("Negotiate", "NTLM") if path == "/ws-both" else self.unauthorized()
        try:
            token = base64.b64decode(authorization[5:].strip())
        except ValueError:
            return self.unauthorized()
        message_type = token[8:12]
        if message_type == b"\x01\x00\x00\x00":
            self.ntlm = spnego.server(protocol="ntlm", options=spnego.NegotiateOptions.use_ntlm)
            challenge = self.ntlm.step(token)
            if path == "/ws-garbage":
                challenge = b"\x00\x00\x00"
            return self.challenge(path, base64.b64encode(challenge).decode())
        if message_type != b"\x03\x00\x00\x00" or self.ntlm is None:
            return self.unauthorized()
        context, self.ntlm = self.ntlm, None
        try:
            context.step(token)
        except spnego.exceptions.SpnegoError as error:
            sys.stderr.write(f"NTLM refused: {error}\n")
            return self.unauthorized()
        if not context.complete:
            return self.unauthorized()
        principal = context.client_principal or ""
        if path.startswith("/ws"):
            return auth_server_support.upgrade(self)
        body = f"authenticated {principal}".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def unauthorized(self, *offers):
        body = b"authentication required\n"
        self.send_response(401)
        for offer in offers or ("NTLM",):
            self.send_header("WWW-Authenticate", offer)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def challenge(self, path, token):
        body = b"NTLM challenge: send the AUTHENTICATE message on this connection\n"
        self.send_response(401)
        self.send_header("WWW-Authenticate", f"NTLM {token}")
        self.send_header("Content-Type", "text/plain")
        if path == "/ws-chunked":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            half = len(body) // 2
            for part in (body[:half], body[half:]):
                self.wfile.write(b"%x;note=1\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\nX-Trailer: done\r\n\r\n")
            return
        if path == "/ws-close":
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

def main():
    parsed = auth_server_support.arguments("NTLM test server")
    users = parsed.port_file + ".users"
    with open(users, "w") as file:
        file.write(":user:secret\nEXAMPLE:alice:wonderland\n")
    os.environ["NTLM_USER_FILE"] = users
    auth_server_support.serve(Handler, parsed)


if __name__ == "__main__":
    main()
