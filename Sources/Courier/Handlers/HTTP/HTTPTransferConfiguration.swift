internal import CCurl
import Foundation

/// Turns a `URLRequest` into easy-handle options: URL, method, headers (with stored cookies), body,
/// HTTP version, content decoding, timeouts and proxy.
enum HTTPTransferConfiguration {
    /// The `User-Agent` sent when the request sets none.
    static let defaultUserAgent: String = {
        let process = ProcessInfo.processInfo.processName
        return "\(process) Courier/1.0 \(CurlGlobal.version.split(separator: " ").first ?? "libcurl")"
    }()

    /// The `User-Agent` line sent when the request sets none, made once.
    static let defaultUserAgentLine = "User-Agent: \(defaultUserAgent)"

    /// The lines Courier adds to a request that sets no field of its own, sends no cookie and
    /// resumes nothing: most requests.
    static let defaultLines = [defaultUserAgentLine, "Accept: */*", "Expect:"]

    /// ``defaultLines`` as one libcurl list, made (and checked) once and shared by the transfers that
    /// send exactly those lines; `nil` if the process name made the `User-Agent` line unsendable.
    static let defaultHeaderList: CurlSharedHeaderList? = {
        let url = URL(fileURLWithPath: "/")
        guard (try? HTTPRequestHeadValidation.validate(addedLines: defaultLines[...], url: url)) != nil else { return nil }
        return CurlSharedHeaderList(defaultLines)
    }()

    /// The URL libcurl is given — absolute, without its fragment — and whether it is `url`'s own
    /// string (so that `url` can stand for it). A URL without a base URL and without a fragment is
    /// passed as it is (the usual case, which needs no parsing); any other goes through
    /// `URLComponents`.
    private static func addressAndOrigin(of url: URL) -> (address: String, isURLString: Bool)? {
        if url.baseURL == nil {
            let string = url.absoluteString
            let hasFragment = string.utf8.withContiguousStorageIfAvailable { $0.contains(UInt8(ascii: "#")) }
                ?? string.utf8.contains(UInt8(ascii: "#"))
            if !hasFragment { return (string, true) }
        }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        components?.fragment = nil
        return components?.string.map { ($0, false) }
    }

    /// The protocols libcurl may use for an HTTP transfer (`CURLOPT_PROTOCOLS_STR`, and
    /// `CURLOPT_REDIR_PROTOCOLS_STR`). A proxy's own scheme (`socks5h`, `http`) is not restricted
    /// by them.
    static let protocols = "http,https"

    /// Bytes per read of a request body: fewer read callbacks and progress reports per megabyte
    /// than libcurl's 64 KiB (its largest is 2 MiB).
    static let uploadBufferSize = 1024 * 1024

    /// Sets `transfer` up for `request`; returns the `Cookie` header it sends, if any (the
    /// request's own or the session's stored cookies).
    @discardableResult
    /// `configuration`: the load's environment, and its idle timeout, also the connect timeout.
    static func configure(_ transfer: CurlTransfer, for request: URLRequest, configuration: HandlerConfiguration) throws(URLError) -> String? {
        let environment = configuration.environment
        guard let url = request.url else { throw URLError(.badURL, url: nil, description: "The request has no URL.") }
        guard let (address, isURLString) = addressAndOrigin(of: url),
              transfer.setURL(address, reportedAs: isURLString ? url : nil) else {
            throw URLError(.badURL, url: url, description: "libcurl does not accept this URL.")
        }
        // libcurl speaks only HTTP for this handler, whatever string the URL became: a URL libcurl
        // reads as another scheme fails with unsupportedURL instead of reaching another protocol.
        // Redirects are the session's (libcurl follows none); were one followed, it stays HTTP too.
        transfer.set(CURLOPT_PROTOCOLS_STR, protocols)
        transfer.set(CURLOPT_REDIR_PROTOCOLS_STR, protocols)
        transfer.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        transfer.set(CURLOPT_FOLLOWLOCATION, 0)
        transfer.set(CURLOPT_TCP_KEEPALIVE, 1)
        // Larger reads mean fewer callbacks and fewer deliveries per megabyte (curl's own choice).
        transfer.set(CURLOPT_BUFFERSIZE, 100 * 1024)
        if HTTPSchemeCheck.isHTTPS(url) {
            transfer.set(CURLOPT_SSLVERSION, TLSVersionOption.value(for: environment.tlsVersions))
            // Requests started together wait for the first connection's ALPN answer and share it
            // when it is HTTP/2, instead of each opening a connection of its own.
            transfer.set(CURLOPT_PIPEWAIT, 1)
        }
        // Also for http: the request may go through an https proxy.
        environment.tlsTrustAnchors?.apply(to: transfer)
        let connectTimeout = configuration.requestTimeout
        if connectTimeout > 0, connectTimeout.isFinite {
            transfer.set(CURLOPT_CONNECTTIMEOUT_MS, Int(min(connectTimeout, 1e6) * 1000))
        }

        var fields = request.allHTTPHeaderFields ?? [:]
        let method = request.uppercasedHTTPMethod
        try HTTPRequestHeadValidation.validate(method: method, fields: fields, url: url)
        let names = Set(fields.keys.map { $0.lowercased() })
        if let encoding = fields.first(where: { $0.key.lowercased() == "accept-encoding" }) {
            transfer.set(CURLOPT_ACCEPT_ENCODING, encoding.value)
            fields.removeValue(forKey: encoding.key)
        } else {
            transfer.set(CURLOPT_ACCEPT_ENCODING, "")
        }
        var lines = fields.sorted { $0.key < $1.key }.map { $0.value.isEmpty ? "\($0.key);" : "\($0.key): \($0.value)" }
        let requestLineCount = lines.count
        lines.reserveCapacity(requestLineCount + 6)
        if !names.contains("user-agent") { lines.append(defaultUserAgentLine) }
        if !names.contains("accept") { lines.append("Accept: */*") }
        if !names.contains("expect") { lines.append("Expect:") }
        if let resume = ResumeRequest.parameters(of: request), !names.contains("range") {
            lines += HTTPResumeSupport.requestHeaders(offset: resume.offset, validator: resume.validator)
        }
        let cookie = HTTPCookieHandling.sentCookieHeader(for: request, environment: environment)
        if !names.contains("cookie"), let cookie {
            lines.append("Cookie: \(cookie)")
        }
        // The shared default lines were checked when their list was made.
        let sendsDefaultLines = lines == defaultLines && defaultHeaderList != nil
        if !sendsDefaultLines {
            try HTTPRequestHeadValidation.validate(addedLines: lines[requestLineCount...], url: url)
        }

        let body = CurlRequestBody.make(for: request)
        switch (method, body) {
        case ("GET", nil):
            transfer.set(CURLOPT_HTTPGET, 1)
        case ("HEAD", _):
            transfer.set(CURLOPT_NOBODY, 1)
        case (_, let body?):
            transfer.set(CURLOPT_UPLOAD, 1)
            transfer.set(CURLOPT_CUSTOMREQUEST, method)
            if let length = body.length { transfer.set(CURLOPT_INFILESIZE_LARGE, offset: length) }
            transfer.set(CURLOPT_UPLOAD_BUFFERSIZE, uploadBufferSize)
            transfer.setBody(body)
        case (_, nil):
            transfer.set(CURLOPT_CUSTOMREQUEST, method)
            if method == "POST" || method == "PUT" || method == "PATCH" { lines.append("Content-Length: 0") }
        }
        if sendsDefaultLines, lines.count == defaultLines.count, let shared = defaultHeaderList {
            transfer.setHeaders(shared)
        } else {
            transfer.setHeaders(lines)
        }
        HTTPProxyConfiguration.apply(environment.proxyDictionary, for: url, environment: environment.proxyEnvironment, to: transfer)
        // The proxy's answer to CONNECT is not the server's response: keep it from the header parser.
        transfer.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        return cookie
    }
}
