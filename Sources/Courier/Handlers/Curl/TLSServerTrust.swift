internal import CCurl
import Foundation

/// A TLS server (https, ftps) the delegate accepted after a server-trust challenge: later attempts of the same load
/// connect without chain verification but pin the accepted certificate's public key, so only that
/// server is accepted.
final class TLSServerTrust: @unchecked Sendable {
    /// What `CURLOPT_PINNEDPUBLICKEY` is set to: `sha256//` and the base64 SHA-256 of the key,
    /// so no file is written (a file could outlive a process that exits without releasing its
    /// sessions); a temporary DER file of the key only where libcrypto's SHA-256 is not found.
    private let pin: String
    /// That temporary file, removed with this object.
    private let keyFile: URL?
    /// The pinned SubjectPublicKeyInfo (DER).
    let publicKey: Data

    /// Pins the leaf of `trust`; `nil` when its certificate cannot be read.
    init?(accepting trust: SecTrust) {
        guard let leaf = trust.certificates.first,
              let publicKey = DERSubjectPublicKeyInfo.extract(fromCertificate: leaf) else { return nil }
        self.publicKey = publicKey
        var digest = [UInt8](repeating: 0, count: 32)
        let hashed = publicKey.withUnsafeBytes { courier_sha256($0.baseAddress, $0.count, &digest) } == 1
        if hashed {
            pin = "sha256//" + Data(digest).base64EncodedString()
            keyFile = nil
            return
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-pin-\(UUID().uuidString).der")
        guard FileManager.default.createFile(atPath: file.path, contents: publicKey,
                                             attributes: [.posixPermissions: 0o600]) else { return nil }
        pin = file.path
        keyFile = file
    }

    deinit { if let keyFile { try? FileManager.default.removeItem(at: keyFile) } }

    /// Sets the options that accept the pinned server on `transfer`.
    func apply(to transfer: CurlTransfer) {
        transfer.set(CURLOPT_SSL_VERIFYPEER, 0)
        transfer.set(CURLOPT_SSL_VERIFYHOST, 0)
        transfer.set(CURLOPT_PINNEDPUBLICKEY, pin)
    }

    /// The `URLError` code for a failed certificate verification, from libcurl's message.
    static func errorCode(forVerificationFailure message: String) -> URLError.Code {
        let text = message.lowercased()
        if text.contains("expired") { return .serverCertificateHasBadDate }
        if text.contains("not yet valid") { return .serverCertificateNotYetValid }
        if text.contains("unable to get local issuer") || text.contains("unknown ca") { return .serverCertificateHasUnknownRoot }
        return .serverCertificateUntrusted
    }
}
