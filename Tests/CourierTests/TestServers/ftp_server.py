#!/usr/bin/env python3
"""FTP servers for Courier's FTP handler tests (pyftpdlib, 127.0.0.1 only).

    python3 ftp_server.py --root DIR [--cert-dir DIR] [--drop-after BYTES] [--verbose]

Starts, in this one process, on ephemeral ports of 127.0.0.1:

- standard: pyftpdlib as it comes (EPSV, PASV, PORT/EPRT, MLSD/MLST, REST, SIZE, MDTM), with
            150 before every transfer.
- quirks:   125 instead of 150 before every transfer; no EPSV, MLSD or MLST (500, not in
            FEAT); multi-line 220 banner and 230 login reply.
- drop:     like standard, but every RETR data connection is closed after --drop-after bytes
            (1 MiB) and the control connection answers 426.
- tls:      explicit FTPS (AUTH TLS); TLS required on control and data connections.
- implicit: implicit FTPS (TLS from the first byte, as for ftps:// URLs).
- eager:    like standard without EPSV (500), but it answers PASV before it is asked: as soon as a
            data connection closes (after its 226) it opens the next passive port and sends that
            227, and the PASV that follows gets no reply of its own. A client that reuses the
            control connection finds the 227 there the moment it has sent PASV, as from a very
            fast server.
- listings: like standard, but MLSD in a directory named `endless` sends entries (with 4000-byte
            names) for ever, and in a directory named `stalled` sends 100 entries, then nothing for
            60 s, then 100 more. Other directories list as usual.

Every server has the users `courier` / `open sesame` (read and write on the whole root) and
anonymous (read only). The TLS certificate (self-signed, 127.0.0.1 and localhost) is
cert.pem/key.pem in --cert-dir, made with openssl when missing (default: a temporary directory).

When all listen, one line of JSON goes to stdout:
    {"ports": {"standard": N, "quirks": N, ...}, "cert": "/path/cert.pem"}
The process then serves until its stdin closes (by hand: `sleep infinity | python3 ...`),
SIGTERM or SIGINT. Exit status 3: pyftpdlib or pyOpenSSL is missing (run scripts/setup).
"""

import argparse
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

try:
    from pyftpdlib.authorizers import DummyAuthorizer
    from pyftpdlib.handlers import DTPHandler, FTPHandler, TLS_DTPHandler, TLS_FTPHandler
    from pyftpdlib.ioloop import IOLoop
    from pyftpdlib.log import logger
    from pyftpdlib.servers import FTPServer
except ImportError as error:
    print(f"ftp_server.py: {error}: pyftpdlib and pyOpenSSL are needed (run scripts/setup, "
          f"or {sys.executable} -m pip install -r scripts/requirements-test.txt)", file=sys.stderr)
    sys.exit(3)

HOST = "127.0.0.1"
USER, PASSWORD = "courier", "open sesame"


class StandardHandler(FTPHandler):
    """pyftpdlib's defaults, tuned for tests on 127.0.0.1."""
    banner = "Courier test FTP server ready."
    # Data connections stay on 127.0.0.1: PASV/EPSV listen on the control connection's local
    # address, with no masquerading; PORT/EPRT must name the client's own address (127.0.0.1).
    masquerade_address = None
    permit_foreign_addresses = False
    permit_privileged_ports = False
    # Answer a wrong password at once rather than after 3 s.
    auth_failed_timeout = 0.05
    # Always send through send(), so the data connection handlers below see every byte.
    use_sendfile = False
    # The preliminary reply of every transfer (RETR, STOR, APPE, LIST, NLST, MLSD...). pyftpdlib
    # says 125 when the data connection is already open (it is, with PASV/EPSV and PORT), 150
    # otherwise; here it is always this one.
    transfer_reply = "150 Opening data connection."

    def _on_dtp_connection(self):
        # pyftpdlib (2.2.0) keeps the PORT/EPRT connector after handing its socket to the data
        # handler and closes it at QUIT: that unregisters the connector's old descriptor number from
        # the I/O loop, a number the kernel may have given to a new control connection meanwhile,
        # which then never hears its commands (a client sending USER waited forever, about one run
        # of the FTP suite in ten under load). The connector's work ends here, so forget it.
        self._dtp_connector = None
        super()._on_dtp_connection()

    def respond(self, resp, *args, **kwargs):
        if resp[:4] in ("125 ", "150 "):
            text = resp[4:] if resp[4:].startswith("FILE:") else self.transfer_reply[4:]  # STOU names its file
            resp = self.transfer_reply[:4] + text
        super().respond(resp, *args, **kwargs)


class QuirksHandler(StandardHandler):
    banner = "Courier quirks server."
    transfer_reply = "125 Data connection already open; transfer starting."
    # Without EPSV, MLSD and MLST pyftpdlib answers `500 Command "X" not understood.` and
    # leaves them out of FEAT.
    proto_cmds = {name: value for name, value in FTPHandler.proto_cmds.items()
                  if name not in ("EPSV", "MLSD", "MLST")}

    def handle(self):
        self.push("220-Welcome to the Courier quirks server.\r\n"
                  "220-This greeting spans several lines,\r\n"
                  " and this one has no code at all.\r\n")
        super().handle()

    def handle_auth_success(self, home, password, msg_login):
        self.push("230-Welcome aboard.\r\n"
                  " This login reply spans several lines;\r\n"
                  "230-the last one ends it.\r\n")
        super().handle_auth_success(home, password, "Login successful.")


class DropDTPHandler(DTPHandler):
    """Sends at most `drop_after` bytes of a RETR, then closes the data connection."""
    drop_after = 1 << 20

    def send(self, data):
        if self.cmd != "RETR":
            return super().send(data)
        left = self.drop_after - self.tot_bytes_sent
        sent = super().send(data[:left]) if left > 0 else 0
        if self.tot_bytes_sent >= self.drop_after and not self._resp:
            # Close from the loop, not from inside asynchat's send path; close() sends the reply.
            self._resp = ("426 Connection closed; transfer aborted.", logger.info)
            self.ioloop.call_later(0, self.close)
        return sent


class DropHandler(StandardHandler):
    banner = "Courier drop server."
    dtp_handler = DropDTPHandler


class EagerPassiveHandler(StandardHandler):
    banner = "Courier eager server."
    proto_cmds = {name: value for name, value in FTPHandler.proto_cmds.items() if name != "EPSV"}
    eager_passive = False

    def _on_dtp_close(self):
        super()._on_dtp_close()
        if self.connected and not self._quit_pending:
            self.eager_passive = True
            self._make_epasv(extmode=False)  # sends the 227 now

    def ftp_PASV(self, line):
        if self.eager_passive and self._dtp_acceptor is not None:
            self.eager_passive = False  # answered already
            return
        self.eager_passive = False
        super().ftp_PASV(line)


ENDLESS_NAME = "n" * 4000
STALLED_ENTRIES, STALL_SECONDS = 100, 60


def mlsd_lines(prefix, start, count, name_suffix=""):
    return b"".join(f"type=file;size={index};modify=20261120091403; {prefix}{index}{name_suffix}\r\n".encode()
                    for index in range(start, start + count))


class EndlessListing:
    """An asynchat producer of MLSD lines that never runs dry."""
    def __init__(self):
        self.index = 0

    def more(self):
        self.index += 16
        return mlsd_lines("entry-", self.index, 16, ENDLESS_NAME)


class ChunksProducer:
    """An asynchat producer of a list of chunks, one per call (so each is sent on its own)."""
    def __init__(self, chunks):
        self.chunks = list(chunks)

    def more(self):
        return self.chunks.pop(0) if self.chunks else b""


class ListingDTPHandler(DTPHandler):
    """Stops sending (without blocking the loop) for STALL_SECONDS after the first bytes of a
    listing its control connection asked to stall."""

    def send(self, data):
        sent = super().send(data)
        if sent and getattr(self.cmd_channel, "stall_listing", False):
            self.cmd_channel.stall_listing = False
            self.del_channel()

            def resume():
                if self.connected and not getattr(self, "_closed", False):
                    try:
                        self.add_channel(events=self.ioloop.WRITE)
                    except Exception:
                        self.close()

            self.ioloop.call_later(STALL_SECONDS, resume, _errback=self.handle_error)
        return sent


class ListingsHandler(StandardHandler):
    banner = "Courier listings server."
    dtp_handler = ListingDTPHandler
    stall_listing = False

    def ftp_MLSD(self, path):
        name = os.path.basename(path.rstrip("/"))
        if name == "endless":
            self.push_dtp_data(EndlessListing(), isproducer=True, cmd="MLSD")
            return path
        if name == "stalled":
            self.stall_listing = True
            chunks = [mlsd_lines("early-", 0, STALLED_ENTRIES), mlsd_lines("late-", 0, STALLED_ENTRIES)]
            self.push_dtp_data(ChunksProducer(chunks), isproducer=True, cmd="MLSD")
            return path
        return super().ftp_MLSD(path)


class TLSDataHandler(TLS_DTPHandler):
    """pyftpdlib's TLS data connection, minus a busy loop: while it waits for the client's part
    of the handshake with data queued to send, it keeps polling for writing and spins a CPU (until
    the handshake or the 300 s timeout; libcurl 7.88 never does the handshake in active mode).
    Here it polls for reading only until the handshake completes."""
    _events_after_handshake = None

    def _do_ssl_handshake(self):
        super()._do_ssl_handshake()
        if self._ssl_accepting and self._ssl_want_read and self._wanted_io_events != self.ioloop.READ:
            self._events_after_handshake = self._wanted_io_events
            self._wanted_io_events = self.ioloop.READ

    def handle_ssl_established(self):
        if self._events_after_handshake is not None:
            self._wanted_io_events, self._events_after_handshake = self._events_after_handshake, None


class TLSHandler(TLS_FTPHandler, StandardHandler):
    banner = "Courier explicit FTPS server."
    tls_control_required = True
    tls_data_required = True
    dtp_handler = TLSDataHandler


class ImplicitTLSHandler(TLSHandler):
    """Implicit FTPS: the TLS handshake comes first, then the 220 greeting inside TLS."""
    banner = "Courier implicit FTPS server."

    def handle(self):
        self.secure_connection(self.ssl_context)

    def handle_ssl_established(self):
        TLSHandler.handle(self)


def make_certificate(directory):
    """cert.pem and key.pem in `directory` (made with openssl when missing)."""
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    if not (os.path.exists(cert) and os.path.exists(key)):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", key, "-out", cert, "-days", "7", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return cert, key


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True, help="the directory the servers serve")
    parser.add_argument("--cert-dir", help="where cert.pem and key.pem are (made when missing)")
    parser.add_argument("--drop-after", type=int, default=1 << 20, help="bytes the drop server sends per RETR")
    parser.add_argument("--verbose", action="store_true", help="log every command and reply to stderr")
    options = parser.parse_args()

    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if options.verbose else logging.INFO,
                        format="[%(asctime)s] %(message)s")
    root = os.path.realpath(options.root)
    temporary = None
    cert_dir = options.cert_dir
    if cert_dir is None:
        cert_dir = temporary = tempfile.mkdtemp(prefix="courier-ftp-cert-")
    os.makedirs(cert_dir, exist_ok=True)
    cert, key = make_certificate(cert_dir)

    authorizer = DummyAuthorizer()
    authorizer.add_user(USER, PASSWORD, root, perm="elradfmwMT")
    authorizer.add_anonymous(root)  # read only: "elr"
    DropDTPHandler.drop_after = options.drop_after
    TLSHandler.certfile, TLSHandler.keyfile = cert, key
    handlers = {"standard": StandardHandler, "quirks": QuirksHandler, "drop": DropHandler,
                "tls": TLSHandler, "implicit": ImplicitTLSHandler, "listings": ListingsHandler,
                "eager": EagerPassiveHandler}

    ioloop = IOLoop.instance()
    ports = {}
    for name, handler in handlers.items():
        handler.authorizer = authorizer
        server = FTPServer((HOST, 0), handler, ioloop=ioloop)
        ports[name] = server.address[1]

    def stop(*_):
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def watch_stdin():
        # Signals go to the main thread, whose poll they interrupt (the loop has no timeout).
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        sys.stdin.buffer.read()  # until the parent, holding the other end, exits
        stop()

    threading.Thread(target=watch_stdin, daemon=True).start()

    print(json.dumps({"ports": ports, "cert": cert, "key": key}), flush=True)
    ioloop.loop()  # no poll timeout: scheduled calls (delayed replies, drops) run on time


if __name__ == "__main__":
    main()
