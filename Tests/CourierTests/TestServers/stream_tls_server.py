#!/usr/bin/env python3
"""TLS servers for Courier's stream-task tests, on 127.0.0.1 (an ephemeral port).

Modes:
  tls-echo   TLS from the first byte, then echo; at the client's end of stream (close_notify or
             TCP FIN) it closes.
  starttls   Plain text: sends "220 ready\\r\\n", reads a line; on "STARTTLS" sends
             "220 go ahead\\r\\n" and starts TLS, then echoes. Anything else is answered
             "500 no\\r\\n" and the connection closed.
  upgrade    Reads an HTTP/1.1 request head. With an Upgrade field it answers "101 Switching
             Protocols" (Upgrade: echo) followed, in the same packet, by "welcome\n", then echoes
             the raw bytes (those sent after the request head first). Without one it answers
             "200 OK" with the body "ok" and keeps the connection for the next request.

The chosen port is written to --port-file once the server listens. Runs until killed.
"""

import argparse
import os
import socket
import ssl
import threading


def echo(connection):
    while True:
        try:
            data = connection.recv(65536)
        except (ssl.SSLError, OSError):
            return
        if not data:
            return
        try:
            connection.sendall(data)
        except (ssl.SSLError, OSError):
            return


def read_line(connection):
    line = b""
    while not line.endswith(b"\n"):
        byte = connection.recv(1)
        if not byte:
            break
        line += byte
    return line


def serve(raw, mode, context):
    try:
        if mode == "tls-echo":
            with context.wrap_socket(raw, server_side=True) as secure:
                echo(secure)
        elif mode == "starttls":
            raw.sendall(b"220 ready\r\n")
            if read_line(raw).strip() != b"STARTTLS":
                raw.sendall(b"500 no\r\n")
                return
            raw.sendall(b"220 go ahead\r\n")
            with context.wrap_socket(raw, server_side=True) as secure:
                echo(secure)
        elif mode == "upgrade":
            pending = b""
            while True:
                while b"\r\n\r\n" not in pending:
                    chunk = raw.recv(4096)
                    if not chunk:
                        return
                    pending += chunk
                head, pending = pending.split(b"\r\n\r\n", 1)
                if b"\nupgrade:" not in head.lower():
                    raw.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                    continue
                raw.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\nwelcome\n")
                if pending:
                    raw.sendall(pending)
                echo(raw)
                return
    except (ssl.SSLError, OSError):
        pass
    finally:
        try:
            raw.close()
        except OSError:
            pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", required=True, choices=["tls-echo", "starttls", "upgrade"])
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--port-file", required=True)
    arguments = parser.parse_args()
    context = None
    if arguments.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(arguments.cert, arguments.key)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    temporary = arguments.port_file + ".tmp"
    with open(temporary, "w") as handle:
        handle.write(str(listener.getsockname()[1]))
    os.rename(temporary, arguments.port_file)
    while True:
        raw, _ = listener.accept()
        threading.Thread(target=serve, args=(raw, arguments.mode, context), daemon=True).start()


if __name__ == "__main__":
    main()
