internal import CCurl
import Foundation
import Logging
import Synchronization

/// One libcurl easy handle and the C callbacks that feed its ``CurlTransferDelegate``.
///
/// The handle is configured on the handler's thread before it is added to the loop; afterwards only
/// the loop thread touches it. Callbacks find the transfer through libcurl's user-data pointer
/// (unretained: the loop keeps the transfer alive while the handle is in the multi handle).
final class CurlTransfer: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    /// Where the handle goes back when the transfer is released (`nil`: it is cleaned up).
    private let pool: CurlEasyHandlePool?
    private let lock = Lock()
    /// Who hears the transfer's reports; guarded by `lock` (``finish(result:)`` and ``release()`` clear
    /// it from whichever thread ends the transfer, while the loop thread's callbacks read it).
    private weak var delegate: (any CurlTransferDelegate)?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// A shared header list the transfer sends instead of a list of its own, kept alive while
    /// libcurl may read it.
    private var sharedHeaders: CurlSharedHeaderList?
    /// Touched only by libcurl's header callback for this handle, which runs one call at a time on
    /// the thread driving the multi handle: no dynamic exclusivity check per header line.
    @exclusivity(unchecked) private var headParser = CurlResponseHeadParser()
    private var body: CurlRequestBody?
    private var finished = false
    /// The handler stopped: the next callback aborts the transfer (see ``abandon()``).
    private let abandoned = Atomic<Bool>(false)
    /// What the header callback receives: HTTP response heads, or FTP server replies.
    private let headerMode: HeaderMode
    /// The loop running the transfer (set when it starts it); guarded by `lock`.
    private weak var loop: CurlMultiLoop?
    /// The last FTP server reply line (ftp mode), for error messages.
    private var lastReplyLine = ""
    /// The TLS version and cipher suite the connection negotiated, read while the transfer runs.
    private var tls: (version: UInt16, cipherSuite: UInt16)?
    /// Whether the connection's TLS parameters were looked for. An HTTP transfer looks once, at
    /// the first header line (the handshake is over by then; a plain connection has none); an FTP
    /// transfer at every reply until found, as explicit FTPS starts TLS after the greeting.
    @exclusivity(unchecked) private var tlsLookedUp = false
    /// The address given as `CURLOPT_URL`, and the URL to report while libcurl's effective URL is
    /// still that address (see ``effectiveURL``).
    private var requestedAddress: (address: String, url: URL)?
    /// The load's logger when it logs at `debug` or below (the connection is logged when the
    /// transfer ends), else `nil`. Set while the transfer is configured.
    var logger: Logger?
    /// libcurl's trace of this transfer, when the logger logs at `trace` (libcurl holds it
    /// unretained). Set while the transfer is configured.
    var wireTrace: CurlWireTrace?
    /// Body bytes taken while the loop hands the connection over (``beginCapture()``), instead of
    /// going to the delegate; `nil` otherwise. Touched only with the loop's drive lock held, as the
    /// write callback is.
    private var captured: Data?
    /// The TLS session cache the handle is attached to (``useTLSSessions(_:)``), kept alive until
    /// the handle is cleaned up or detached.
    private var tlsSessions: CurlTLSSessionCache?
    /// libcurl's detailed message for the last failure (CURLOPT_ERRORBUFFER).
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    /// What libcurl passes to the header callback.
    enum HeaderMode {
        /// HTTP status lines and fields, parsed into ``CurlResponseHead``s.
        case http
        /// FTP server replies ("213 1024"), of which the last line is kept for error messages.
        case ftp
    }

    /// A transfer with an easy handle from `pool` (or a fresh one); `nil` if libcurl cannot make one.
    init?(delegate: any CurlTransferDelegate, headerMode: HeaderMode = .http, pool: CurlEasyHandlePool? = nil) {
        guard CurlGlobal.isInitialized, let easy = pool?.take() ?? curl_easy_init() else { return nil }
        self.easy = easy
        self.pool = pool
        self.delegate = delegate
        self.headerMode = headerMode
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = courier_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = courier_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, me)
        _ = courier_easy_setopt_write_function(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback)
        _ = courier_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me)
        _ = courier_easy_setopt_write_function(easy, CURLOPT_WRITEFUNCTION, curlWriteCallback)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        _ = courier_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer)
    }

    deinit {
        if let pool {
            tlsSessions?.detach(easy)
            pool.recycle(easy)
        } else {
            curl_easy_cleanup(easy)
        }
        if let headerList { curl_slist_free_all(headerList) }
        errorBuffer.deallocate()
    }

    /// Lets the connection resume, and store, TLS sessions in `cache` (call it while configuring).
    func useTLSSessions(_ cache: CurlTLSSessionCache) {
        if cache.attach(easy) { tlsSessions = cache }
    }

    /// libcurl's detailed message for the failure, when it gave one.
    var errorDetail: String? {
        let text = String(cString: errorBuffer)
        return text.isEmpty ? nil : text
    }

    // MARK: Configuration (before the transfer is added to the loop)

    /// Sets `CURLOPT_URL` to `address`; `url` is what ``effectiveURL`` reports while libcurl's
    /// effective URL is that same string (`nil`: parse libcurl's string).
    @discardableResult
    func setURL(_ address: String, reportedAs url: URL?) -> Bool {
        if let url { requestedAddress = (address, url) }
        return set(CURLOPT_URL, address)
    }

    /// The URL libcurl last requested (`CURLINFO_EFFECTIVE_URL`): the URL given to ``setURL(_:reportedAs:)``
    /// when libcurl's string is the address it was given (no parsing then), or the parsed string.
    var effectiveURL: URL? {
        var value: UnsafeMutablePointer<CChar>? = nil
        guard courier_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &value) == CURLE_OK, let value else { return nil }
        if let requestedAddress, requestedAddress.address.withCString({ strcmp($0, value) == 0 }) {
            return requestedAddress.url
        }
        return URL(string: String(cString: value))
    }

    /// Sets a string option. libcurl copies every string option it is given (all but
    /// `CURLOPT_POSTFIELDS`, which Courier does not use), so the string need not outlive the call.
    @discardableResult
    func set(_ option: CURLoption, _ value: String) -> Bool {
        value.withCString { courier_easy_setopt_string(easy, option, $0) } == CURLE_OK
    }

    @discardableResult
    func set(_ option: CURLoption, _ value: Int) -> Bool {
        courier_easy_setopt_long(easy, option, value) == CURLE_OK
    }

    @discardableResult
    func set(_ option: CURLoption, offset value: Int64) -> Bool {
        courier_easy_setopt_off(easy, option, curl_off_t(value)) == CURLE_OK
    }

    /// The request header lines ("Name: value"; "Name:" removes a header libcurl would add).
    func setHeaders(_ lines: [String]) {
        var list: UnsafeMutablePointer<curl_slist>? = nil
        for line in lines {
            // withCString hands over the string's own bytes; passing the String itself would make a
            // temporary C array per line.
            guard let appended = line.withCString({ curl_slist_append(list, $0) }) else { continue }
            list = appended
        }
        headerList = list
        _ = courier_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, UnsafeRawPointer(list))
    }

    /// The request header lines of a list made once for many transfers (``CurlSharedHeaderList``).
    func setHeaders(_ shared: CurlSharedHeaderList) {
        sharedHeaders = shared
        _ = courier_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, UnsafeRawPointer(shared.list))
    }

    /// Streams the request body from `body` through libcurl's read callback, with progress
    /// reports (`didSend`). Transfers without a body leave libcurl's progress callback off. The
    /// seek callback lets libcurl send the body again from its start (a request retried on a new
    /// connection after a reused one turned out closed) when the body can go back.
    func setBody(_ body: CurlRequestBody) {
        self.body = body
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = courier_easy_setopt_pointer(easy, CURLOPT_READDATA, me)
        _ = courier_easy_setopt_read_function(easy, curlReadCallback)
        _ = courier_easy_setopt_pointer(easy, CURLOPT_SEEKDATA, me)
        _ = courier_easy_setopt_seek_function(easy, curlSeekCallback)
        _ = courier_easy_setopt_pointer(easy, CURLOPT_XFERINFODATA, me)
        _ = courier_easy_setopt_xferinfo_function(easy, curlProgressCallback)
        _ = courier_easy_setopt_long(easy, CURLOPT_NOPROGRESS, 0)
    }

    /// The loop started the transfer: a streamed body that paused the upload (nothing read from the
    /// app's stream yet) unpauses it there once it can be read again, and an FTP reply that can stall
    /// libcurl nudges it (``CurlFTPDoPhaseNudge``).
    func attach(to loop: CurlMultiLoop) {
        lock.withLock { self.loop = loop }
        body?.onReadable = { [weak loop, weak self] in
            guard let loop, let self else { return }
            loop.unpause(self)
        }
    }

    // MARK: Reports (loop thread)

    /// The last reply line an FTP server sent (ftp mode), without its line ending.
    var lastServerReply: String? {
        let line = lock.withLock { lastReplyLine }
        return line.isEmpty ? nil : line
    }

    /// The TLS version and IANA cipher suite of the connection, when it used TLS (OpenSSL backend).
    var negotiatedTLS: (version: UInt16, cipherSuite: UInt16)? {
        lock.withLock { tls }
    }

    /// Reads the connection's TLS parameters at the first header line (header callbacks run while
    /// the connection belongs to this transfer). Header callbacks are serialised by the loop.
    private func recordTLSIfNeeded() {
        guard !tlsLookedUp else { return }
        tlsLookedUp = headerMode == .http
        var version: Int32 = 0
        var cipher: Int32 = 0
        courier_tls_negotiated(easy, &version, &cipher)
        guard version > 0, let tlsVersion = UInt16(exactly: version) else { return }
        tlsLookedUp = true
        lock.withLock { tls = (tlsVersion, UInt16(truncatingIfNeeded: cipher)) }
    }

    fileprivate func header(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if abandoned.load(ordering: .relaxed) { return false }
        recordTLSIfNeeded()
        if headerMode == .ftp {
            let line = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !line.isEmpty { lock.withLock { lastReplyLine = String(line.prefix(512)) } }
            if CurlFTPDoPhaseNudge.isNeeded(afterReplyLine: line) { lock.withLock { loop }?.nudge() }
            return true
        }
        switch headParser.consume(bytes) {
        case .needMore, .informational:
            return true
        case .malformed:
            return false
        case .head(let head):
            reportee?.transfer(self, didReceiveHead: head)
            return true
        }
    }

    /// What the write callback answers libcurl: the byte count (taken), `CURL_WRITEFUNC_PAUSE`, or 0
    /// (abort) once the transfer was abandoned, also by the delegate while it took these bytes.
    fileprivate func write(_ bytes: UnsafeRawBufferPointer) -> Int {
        if captured != nil {
            captured?.append(contentsOf: bytes)
            return bytes.count
        }
        if abandoned.load(ordering: .relaxed) { return 0 }
        let taken = reportee?.transfer(self, didReceive: bytes) ?? true
        if abandoned.load(ordering: .relaxed) { return 0 }
        return taken ? bytes.count : Int(CURL_WRITEFUNC_PAUSE)
    }

    fileprivate func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        body?.read(into: buffer) ?? 0
    }

    fileprivate func seek(to offset: Int64) -> Bool {
        body?.seek(to: offset) ?? false
    }

    fileprivate func progress(uploaded: Int64, uploadTotal: Int64) {
        guard let body else { return }
        let sent = body.bytesRead
        guard sent > 0 else { return }
        reportee?.transfer(self, didSend: sent, of: body.length ?? -1)
    }

    /// Reports the end once; later calls are ignored.
    func finish(result: CURLcode) {
        let reportee: (any CurlTransferDelegate)?? = lock.withLock {
            defer { finished = true; delegate = nil }
            return finished ? .none : .some(delegate)
        }
        guard case .some(let reportee) = reportee else { return }
        reportee?.transfer(self, didFinishWith: result)
    }

    /// The handler stopped (its task was cancelled, or failed because the body grew too large):
    /// libcurl's next header or body callback aborts the transfer, so it reads and decodes nothing
    /// more while the loop gets to removing it. Callable from any thread, also from a callback.
    func abandon() {
        abandoned.store(true, ordering: .relaxed)
    }

    /// Whether ``abandon()`` was called: the loop does not add such a transfer (it was stopped
    /// before the loop took it).
    var isAbandoned: Bool { abandoned.load(ordering: .relaxed) }

    /// From now on body bytes are kept here, not reported (the loop hands the connection over).
    /// Drive lock held.
    func beginCapture() { captured = Data() }

    /// The body bytes kept since ``beginCapture()``; capturing ends. Drive lock held.
    func endCapture() -> Data {
        defer { captured = nil }
        return captured ?? Data()
    }

    /// Stops reporting (the handler stopped).
    func release() {
        lock.withLock {
            finished = true
            delegate = nil
        }
    }

    /// The delegate, read under the lock; `nil` once the transfer was finished or released.
    private var reportee: (any CurlTransferDelegate)? {
        lock.withLock { delegate }
    }

    // MARK: Information after the transfer

    func info(long info: CURLINFO) -> Int? {
        var value = 0
        return courier_easy_getinfo_long(easy, info, &value) == CURLE_OK ? value : nil
    }

    func info(offset info: CURLINFO) -> Int64? {
        var value: curl_off_t = 0
        return courier_easy_getinfo_off(easy, info, &value) == CURLE_OK ? Int64(value) : nil
    }

    func info(string info: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>? = nil
        guard courier_easy_getinfo_string(easy, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }
}

private func transfer(from userdata: UnsafeMutableRawPointer?) -> CurlTransfer? {
    guard let userdata else { return nil }
    return Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
}

private let curlHeaderCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, userdata in
    let length = size * count
    guard let transfer = transfer(from: userdata), let data else { return length }
    return transfer.header(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

private let curlWriteCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, userdata in
    let length = size * count
    guard let transfer = transfer(from: userdata), let data else { return length }
    return transfer.write(UnsafeRawBufferPointer(start: data, count: length))
}

private let curlReadCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, userdata in
    guard let transfer = transfer(from: userdata), let data else { return 0 }
    return transfer.read(into: UnsafeMutableRawBufferPointer(start: data, count: size * count))
}

private let curlSeekCallback: @convention(c) (UnsafeMutableRawPointer?, curl_off_t, Int32) -> Int32 = { userdata, offset, origin in
    // libcurl rewinds with SEEK_SET; anything else, or a body that cannot go back, is CANTSEEK.
    guard origin == SEEK_SET, let transfer = transfer(from: userdata) else { return 2 } // CURL_SEEKFUNC_CANTSEEK
    return transfer.seek(to: Int64(offset)) ? 0 : 2 // CURL_SEEKFUNC_OK : CURL_SEEKFUNC_CANTSEEK
}

private let curlProgressCallback: @convention(c) (UnsafeMutableRawPointer?, curl_off_t, curl_off_t, curl_off_t, curl_off_t) -> Int32 = { userdata, _, _, uploadTotal, uploaded in
    transfer(from: userdata)?.progress(uploaded: Int64(uploaded), uploadTotal: Int64(uploadTotal))
    return 0
}
