#!/usr/bin/env python3
"""WebSocket test server for Courier's WebSocket task tests (Python `websockets`).

Serves plain ws on one ephemeral port of 127.0.0.1 and wss on another (with the certificate and
key given), prints one JSON line {"ws": port, "wss": port} on stdout, and exits when its stdin
reaches end-of-file (the test process ended). Exit status 3: the `websockets` package is missing.

Paths (query parameters in brackets):
  /echo                  every message back, as it came (text or binary)
(every path selects the first of the offered subprotocols that is chat or superchat)
  /headers               one text message: the handshake request's fields as JSON, then echo
  /setcookie             the 101 sets the cookie ws-session=abc; then echo
  /close[code, reason]   closes at once with that code and reason
  /closeafter[code]      echoes one message, then closes with that code
  /fragmented            one text message in three fragments ("frag-1 frag-2 frag-3" joined), then echo
  /large[size]           one binary message of size bytes (byte i is i % 251), then echo
  /flood[count, size]    count binary messages of size bytes as fast as the client takes them
  /reject                answers 403 Forbidden with a body
  /redirect[to]          answers 302 with Location: to (default /echo)
  /auth                  401 with Basic realm "ws" unless Authorization is Basic user:secret; then echo
  /digest[algorithm]     401 with Digest realm "ws-digest" (qop auth, MD5 or the algorithm given, an
                         opaque) unless Authorization is a valid Digest answer for user:secret; then echo
"""
import asyncio
import json
import ssl
import sys
import argparse
import hashlib
import re
from urllib.parse import urlparse, parse_qs

try:
    from websockets.asyncio.server import serve
    from websockets.datastructures import Headers
except ImportError as error:  # pragma: no cover
    print(f"websockets is not installed: {error}", file=sys.stderr)
    sys.exit(3)


def query(path):
    parsed = urlparse(path)
    return parsed.path, {key: values[-1] for key, values in parse_qs(parsed.query).items()}


async def echo(connection):
    async for message in connection:
        await connection.send(message)


async def handler(connection):
    path, params = query(connection.request.path)
    if path == "/headers":
        fields = {}
        for name, value in connection.request.headers.raw_items():
            fields[name] = value if name not in fields else fields[name] + ", " + value
        await connection.send(json.dumps(fields))
        await echo(connection)
    elif path == "/close":
        await connection.close(code=int(params.get("code", "1000")), reason=params.get("reason", ""))
    elif path == "/closeafter":
        message = await connection.recv()
        await connection.send(message)
        await connection.close(code=int(params.get("code", "1000")), reason="")
    elif path == "/fragmented":
        await connection.send(["frag-1 ", "frag-2 ", "frag-3"])
        await echo(connection)
    elif path == "/large":
        size = int(params.get("size", "1048576"))
        await connection.send(bytes(i % 251 for i in range(size)))
        await echo(connection)
    elif path == "/flood":
        count, size = int(params.get("count", "100")), int(params.get("size", "65536"))
        payload = bytes(size)
        for _ in range(count):
            await connection.send(payload)
        await echo(connection)
    else:
        await echo(connection)


DIGEST_NONCE = "dcd98b7102dd2f0e8b11d0f600bfb0c093"
DIGEST_OPAQUE = "5ccc069c403ebaf9f0171e9517f40e41"


def digest_valid(value, target, algorithm):
    """Whether `value` answers the /digest challenge for user:secret (RFC 7616, qop=auth)."""
    if not value or not value.lower().startswith("digest "):
        return False
    fields = {name.lower(): quoted if quoted else token
              for name, quoted, token in re.findall(r'(\w+)=(?:"([^"]*)"|([^,\s]*))', value[7:])}
    digest = {"MD5": hashlib.md5, "SHA-256": hashlib.sha256}[algorithm]

    def h(text):
        return digest(text.encode()).hexdigest()

    if (fields.get("username") != "user" or fields.get("realm") != "ws-digest" or fields.get("nonce") != DIGEST_NONCE
            or fields.get("uri") != target or fields.get("qop") != "auth" or fields.get("opaque") != DIGEST_OPAQUE
            or fields.get("algorithm", "MD5").upper() != algorithm):
        return False
    expected = h(f"{h('user:ws-digest:secret')}:{DIGEST_NONCE}:{fields.get('nc')}:{fields.get('cnonce')}:auth:{h('GET:' + target)}")
    return fields.get("response") == expected


def process_request(connection, request):
    path, params = query(request.path)
    if path == "/reject":
        return connection.respond(403, "no WebSockets here\n")
    if path == "/redirect":
        response = connection.respond(302, "moved\n")
        response.headers["Location"] = params.get("to", "/echo")
        return response
    if path == "/auth":
        if request.headers.get("Authorization") != "Basic dXNlcjpzZWNyZXQ=":
            response = connection.respond(401, "who are you?\n")
            response.headers["WWW-Authenticate"] = 'Basic realm="ws"'
            return response
    if path == "/digest":
        algorithm = params.get("algorithm", "MD5")
        if not digest_valid(request.headers.get("Authorization"), request.path, algorithm):
            response = connection.respond(401, "digest required\n")
            response.headers["WWW-Authenticate"] = (f'Digest realm="ws-digest", nonce="{DIGEST_NONCE}", qop="auth", '
                                                    f'algorithm={algorithm}, opaque="{DIGEST_OPAQUE}"')
            return response
    return None


def select_subprotocol(connection, offered):
    """The first subprotocol the client offers that the server knows (chat, superchat), or none."""
    return next((name for name in offered if name in ("chat", "superchat")), None)


def process_response(connection, request, response):
    path, _ = query(request.path)
    if path == "/setcookie" and response.status_code == 101:
        response.headers["Set-Cookie"] = "ws-session=abc; Path=/"
    return None


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    arguments = parser.parse_args()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(arguments.cert, arguments.key)
    options = dict(select_subprotocol=select_subprotocol, process_request=process_request,
                   process_response=process_response, max_size=None, max_queue=4,
                   compression=None, ping_interval=None)
    async with serve(handler, "127.0.0.1", 0, **options) as plain, \
            serve(handler, "127.0.0.1", 0, ssl=context, **options) as secure:
        ports = {"ws": plain.sockets[0].getsockname()[1], "wss": secure.sockets[0].getsockname()[1]}
        print(json.dumps(ports), flush=True)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.read)


if __name__ == "__main__":
    asyncio.run(main())
