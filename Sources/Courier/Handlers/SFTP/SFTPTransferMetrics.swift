import Foundation

/// What an SSH connection measured while it was set up, shared by the jobs it serves.
struct SSHConnectionInfo: Sendable {
    var connectStart: Date?
    var connectEnd: Date?
    var handshakeStart: Date?
    var handshakeEnd: Date?
    var remote: (address: String, port: Int)?
    var local: (address: String, port: Int)?
}

/// What one sftp load measured, as Apple's transaction metrics (protocol name `"sftp"`).
struct SFTPTransferMetrics: Sendable {
    var fetchStart = Date()
    var connection = SSHConnectionInfo()
    var reusedConnection = false
    var requestStart: Date?
    var responseStart: Date?
    var responseEnd: Date?
    var bytesReceived: Int64 = 0
    var bytesSent: Int64 = 0

    /// Writes the measurements into `values`.
    func apply(to values: inout URLSessionTaskTransactionMetrics.Values) {
        values.fetchStartDate = fetchStart
        if !reusedConnection {
            values.connectStartDate = connection.connectStart
            values.connectEndDate = connection.handshakeEnd ?? connection.connectEnd
            values.secureConnectionStartDate = connection.handshakeStart
            values.secureConnectionEndDate = connection.handshakeEnd
        }
        values.requestStartDate = requestStart
        values.requestEndDate = requestStart
        values.responseStartDate = responseStart
        values.responseEndDate = responseEnd
        values.networkProtocolName = "sftp"
        values.isReusedConnection = reusedConnection
        values.remoteAddress = connection.remote?.address
        values.remotePort = connection.remote.map { String($0.port) }
        values.localAddress = connection.local?.address
        values.localPort = connection.local.map { String($0.port) }
        values.countOfRequestBodyBytesSent = bytesSent
        values.countOfRequestBodyBytesBeforeEncoding = bytesSent
        values.countOfResponseBodyBytesReceived = bytesReceived
        values.countOfResponseBodyBytesAfterDecoding = bytesReceived
        values.resourceFetchType = .networkLoad
    }
}
