internal import CCurl
import Foundation
import Logging

/// What libcurl measured about a finished transfer, as Apple's transaction metrics.
struct CurlTransferMetrics: Sendable {
    private let started: Date
    private let protocolName: String?
    private let reused: Bool
    private let remoteAddress: String?
    private let remotePort: Int?
    private let localAddress: String?
    private let localPort: Int?
    private let uploaded: Int64
    private let downloaded: Int64
    private let headerBytes: Int64
    private let requestBytes: Int64
    private let timings: [Int64?]
    private let tls: (version: UInt16, cipherSuite: UInt16)?

    /// - Parameters:
    ///   - dataConnections: connections the transfer opened besides the one it talks on (an FTP
    ///     passive-mode data connection), so a reused control connection still counts as reused.
    ///   - protocolName: the name to report when libcurl's HTTP version says nothing (`ftp`).
    init(_ transfer: CurlTransfer, started: Date, dataConnections: Int = 0, protocolName fallbackName: String? = nil) {
        self.started = started
        tls = transfer.negotiatedTLS
        timings = [CURLINFO_NAMELOOKUP_TIME_T, CURLINFO_CONNECT_TIME_T, CURLINFO_APPCONNECT_TIME_T,
                   CURLINFO_PRETRANSFER_TIME_T, CURLINFO_STARTTRANSFER_TIME_T, CURLINFO_TOTAL_TIME_T]
            .map { transfer.info(offset: $0) }
        switch transfer.info(long: CURLINFO_HTTP_VERSION) {
        case Int(CURL_HTTP_VERSION_1_0): protocolName = "http/1.0"
        case Int(CURL_HTTP_VERSION_1_1): protocolName = "http/1.1"
        case Int(CURL_HTTP_VERSION_2_0): protocolName = "h2"
        case Int(CURL_HTTP_VERSION_3): protocolName = "h3"
        default: protocolName = fallbackName
        }
        remoteAddress = transfer.info(string: CURLINFO_PRIMARY_IP).flatMap { $0.isEmpty ? nil : $0 }
        remotePort = transfer.info(long: CURLINFO_PRIMARY_PORT).flatMap { $0 > 0 ? $0 : nil }
        localAddress = transfer.info(string: CURLINFO_LOCAL_IP).flatMap { $0.isEmpty ? nil : $0 }
        localPort = transfer.info(long: CURLINFO_LOCAL_PORT).flatMap { $0 > 0 ? $0 : nil }
        reused = remoteAddress != nil && (transfer.info(long: CURLINFO_NUM_CONNECTS) ?? 1) - dataConnections <= 0
        uploaded = transfer.info(offset: CURLINFO_SIZE_UPLOAD_T) ?? 0
        downloaded = transfer.info(offset: CURLINFO_SIZE_DOWNLOAD_T) ?? 0
        headerBytes = Int64(transfer.info(long: CURLINFO_HEADER_SIZE) ?? 0)
        requestBytes = Int64(transfer.info(long: CURLINFO_REQUEST_SIZE) ?? 0)
    }

    /// Writes the measurements into `values`.
    func apply(to values: inout URLSessionTaskTransactionMetrics.Values) {
        func date(_ index: Int) -> Date? {
            guard let micros = timings[index], micros > 0 else { return nil }
            return started.addingTimeInterval(Double(micros) / 1e6)
        }
        values.fetchStartDate = started
        if let tls {
            values.negotiatedTLSProtocolVersion = tls_protocol_version_t(rawValue: tls.version)
            values.negotiatedTLSCipherSuite = tls_ciphersuite_t(rawValue: tls.cipherSuite)
        }
        if !reused {
            values.domainLookupStartDate = started
            values.domainLookupEndDate = date(0)
            values.connectStartDate = date(0) ?? started
            values.connectEndDate = date(2) ?? date(1)
            if let tls = date(2) {
                values.secureConnectionStartDate = date(1)
                values.secureConnectionEndDate = tls
            }
        }
        values.requestStartDate = date(3) ?? started
        values.requestEndDate = date(3) ?? started
        values.responseStartDate = date(4)
        values.responseEndDate = date(5)
        values.networkProtocolName = protocolName
        values.isReusedConnection = reused
        values.remoteAddress = remoteAddress
        values.remotePort = remotePort.map(String.init)
        values.localAddress = localAddress
        values.localPort = localPort.map(String.init)
        values.countOfRequestBodyBytesSent = uploaded
        values.countOfRequestBodyBytesBeforeEncoding = uploaded
        values.countOfRequestHeaderBytesSent = max(requestBytes - uploaded, 0)
        values.countOfResponseBodyBytesAfterDecoding = downloaded
        values.countOfResponseBodyBytesReceived = downloaded
        values.countOfResponseHeaderBytesReceived = headerBytes
        values.resourceFetchType = .networkLoad
    }
}

extension CurlTransferMetrics {
    /// Logs the connection the transfer used at `debug`: the address, whether it was new or
    /// reused, the HTTP version (or the protocol), and the TLS version and cipher suite, e.g.
    /// `connection 127.0.0.1:8443 new, http/1.1, TLSv1.3 TLS_AES_256_GCM_SHA384`.
    func logConnection(to logger: Logger, url: URL?) {
        var metadata: Logger.Metadata = [
            CourierLogKey.url: "\(LogRedaction.url(url))",
            "courier.remote": "\(remoteAddress ?? "")\(remotePort.map { ":\($0)" } ?? "")",
            "courier.reused": "\(reused)",
            "courier.tls": "\(tls.map { Self.tlsVersionName($0.version) } ?? "none")",
        ]
        if let protocolName { metadata["courier.protocol"] = "\(protocolName)" }
        logger.debug("\(connectionSummary)", metadata: metadata)
    }

    /// The one-line description of ``logConnection(to:url:)``.
    var connectionSummary: String {
        var parts = ["connection \(remoteAddress ?? "?")\(remotePort.map { ":\($0)" } ?? "") \(reused ? "reused" : "new")"]
        if let protocolName { parts.append(protocolName) }
        if let tls {
            let suite = tls_ciphersuite_t(rawValue: tls.cipherSuite).map { "TLS_\($0)" }
                ?? "cipher 0x" + String(tls.cipherSuite, radix: 16, uppercase: true)
            parts.append("\(Self.tlsVersionName(tls.version)) \(suite)")
        }
        return parts.joined(separator: ", ")
    }

    /// `TLSv1.2`, `TLSv1.3`, or the version number in hex.
    private static func tlsVersionName(_ version: UInt16) -> String {
        switch version {
        case 0x0301: "TLSv1.0"
        case 0x0302: "TLSv1.1"
        case 0x0303: "TLSv1.2"
        case 0x0304: "TLSv1.3"
        default: "TLS 0x" + String(version, radix: 16, uppercase: true)
        }
    }
}
