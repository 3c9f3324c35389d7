import Foundation

extension URLRequest {
    /// The protocol-property key behind ``sftpResumesUpload``.
    static let sftpResumesUploadKey = "Courier.SFTPResumesUpload"

    /// Whether an upload to an `sftp:` URL continues a file an earlier, interrupted upload left
    /// behind instead of replacing it. Default `false`.
    ///
    /// Give the upload task the whole body again, as for the first attempt. When this is `true` and
    /// the remote file exists and is not longer than the body, the handler keeps the file's first
    /// bytes, skips as many bytes of the body, and writes the rest from there (like OpenSSH's
    /// `sftp reput`). The bytes already on the server are not compared with the body, and the first
    /// `didSendBodyData` message counts them as sent, so progress still ends at the body's length. A
    /// remote file longer than the body, or a missing one, is written from the start.
    ///
    /// Stored as a protocol property of the request (``URLProtocol/property(forKey:in:)``), so it
    /// does not take part in request equality and is ignored by other schemes.
    public var sftpResumesUpload: Bool {
        get { protocolProperty(forKey: Self.sftpResumesUploadKey) as? Bool ?? false }
        set {
            if newValue {
                setProtocolProperty(true, forKey: Self.sftpResumesUploadKey)
            } else {
                removeProtocolProperty(forKey: Self.sftpResumesUploadKey)
            }
        }
    }
}
