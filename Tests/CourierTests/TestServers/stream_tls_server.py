#!/usr/bin/env python3
"""TLS servers for Courier's stream-task tests, on 127.0.0.1 (an ephemeral port).

Modes:
  tls-echo   TLS from the first byte, then echo; at the client's end of stream (close_notify or
             TCP FIN) it closes.
  starttls   Plain text: sends "220 ready\\r\\n", reads a line; on "STARTTLS" sends
             "220 go ahead\\r\\n" and starts TLS, then echoes. Anything else is answered
             "500 no\\r\\n" and the connection closed.
  upgrade    Reads an HTTP/1.1 request head, answers "101 Switching Protocols" (Upgrade: echo), then
             echoes the raw bytes.

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
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = raw.recv(4096)
                if not chunk:
                    return
                head += chunk
            rest = head.split(b"\r\n\r\n", 1)[1]
            raw.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
            if rest:
                raw.sendall(rest)
            echo(raw)
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
