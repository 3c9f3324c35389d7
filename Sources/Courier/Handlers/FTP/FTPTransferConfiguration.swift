internal import CCurl
import Foundation

/// Turns an FTP request and one ``FTPOperation`` into easy-handle options: the URL (without user
/// info: the login is set separately by ``FTPLogin``), passive or active mode, TLS, timeouts, and the
/// operation's commands.
enum FTPTransferConfiguration {
    /// The protocols libcurl may use for an FTP transfer (`CURLOPT_PROTOCOLS_STR`, and
    /// `CURLOPT_REDIR_PROTOCOLS_STR`).
    static let protocols = "ftp,ftps"

    /// Bytes per read from the data connection (as for HTTP: fewer callbacks per megabyte).
    static let bufferSize = 512 * 1024
    /// Bytes per read of an upload body (libcurl's largest upload buffer is 2 MiB).
    static let uploadBufferSize = 1024 * 1024

    /// Sets `transfer` up for `operation` on `request`, with the load's `configuration` (its
    /// environment, and its idle timeout as the connect, command and accept timeouts).
    static func configure(_ transfer: CurlTransfer, for request: URLRequest, operation: FTPOperation,
                          configuration: HandlerConfiguration) throws(URLError) {
        let environment = configuration.environment
        guard let url = request.url else { throw URLError(.badURL, url: nil, description: "The request has no URL.") }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        components?.user = nil
        components?.password = nil
        components?.query = nil
        components?.fragment = nil
        guard let address = components?.string, transfer.set(CURLOPT_URL, address) else {
            throw URLError(.badURL, url: url, description: "libcurl does not accept this FTP URL.")
        }
        // libcurl speaks only FTP for this handler, whatever string the URL became, and follows
        // nothing (FTP has no redirects; libcurl needs a non-empty list, so it names FTP's own).
        transfer.set(CURLOPT_PROTOCOLS_STR, protocols)
        transfer.set(CURLOPT_REDIR_PROTOCOLS_STR, protocols)
        transfer.set(CURLOPT_FOLLOWLOCATION, 0)
        transfer.set(CURLOPT_BUFFERSIZE, bufferSize)
        transfer.set(CURLOPT_UPLOAD_BUFFERSIZE, uploadBufferSize)
        transfer.set(CURLOPT_TCP_KEEPALIVE, 1)
        let timeout = configuration.requestTimeout
        if timeout > 0, timeout.isFinite {
            let milliseconds = Int(min(timeout, 1e6) * 1000)
            transfer.set(CURLOPT_CONNECTTIMEOUT_MS, milliseconds)
            // A server that stops answering commands fails the load like an idle HTTP server.
            transfer.set(CURLOPT_SERVER_RESPONSE_TIMEOUT, max(1, milliseconds / 1000))
            transfer.set(CURLOPT_ACCEPTTIMEOUT_MS, milliseconds)
        }
        if request.ftpUsesActiveMode {
            // "-": the address of the control connection's local end.
            transfer.set(CURLOPT_FTPPORT, "-")
        }
        let scheme = url.scheme?.lowercased()
        if scheme == "ftps" || request.ftpRequiresTLS {
            transfer.set(CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue))
            transfer.set(CURLOPT_SSLVERSION, TLSVersionOption.value(for: environment.tlsVersions))
        }
        environment.tlsTrustAnchors?.apply(to: transfer)
        // Modification times (MDTM) make the resume validator.
        transfer.set(CURLOPT_FILETIME, 1)

        switch operation {
        case .probe:
            transfer.set(CURLOPT_NOBODY, 1)
        case .download(let offset):
            if offset > 0 { transfer.set(CURLOPT_RESUME_FROM_LARGE, offset: offset) }
        case .list(let machineReadable):
            if machineReadable { transfer.set(CURLOPT_CUSTOMREQUEST, "MLSD") }
        case .upload:
            guard let body = CurlRequestBody.make(for: request) else {
                throw URLError(.badURL, url: url, description: "The upload has no body.")
            }
            transfer.set(CURLOPT_UPLOAD, 1)
            if let length = body.length { transfer.set(CURLOPT_INFILESIZE_LARGE, offset: length) }
            if request.ftpCreatesMissingDirectories {
                transfer.set(CURLOPT_FTP_CREATE_MISSING_DIRS, Int(CURLFTP_CREATE_DIR_RETRY.rawValue))
            }
            transfer.setBody(body)
        }
    }
}
