internal import CCurl
import Foundation

/// A TLS server (https, ftps) the delegate accepted after a server-trust challenge: later attempts of the same load
/// connect without chain verification but pin the accepted certificate's public key, so only that
/// server is accepted.
final class TLSServerTrust: @unchecked Sendable {
    private let keyFile: URL
    /// `keyFile`'s path, made once: every later transfer to the server sets it.
    private let keyFilePath: String
    /// The pinned SubjectPublicKeyInfo (DER).
    let publicKey: Data

    /// Pins the leaf of `trust`; `nil` when its certificate cannot be read.
    init?(accepting trust: SecTrust) {
        guard let leaf = trust.certificates.first,
              let publicKey = DERSubjectPublicKeyInfo.extract(fromCertificate: leaf) else { return nil }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-pin-\(UUID().uuidString).der")
        guard FileManager.default.createFile(atPath: file.path, contents: publicKey,
                                             attributes: [.posixPermissions: 0o600]) else { return nil }
        keyFile = file
        keyFilePath = file.path
        self.publicKey = publicKey
    }

    deinit { try? FileManager.default.removeItem(at: keyFile) }

    /// Sets the options that accept the pinned server on `transfer`.
    func apply(to transfer: CurlTransfer) {
        transfer.set(CURLOPT_SSL_VERIFYPEER, 0)
        transfer.set(CURLOPT_SSL_VERIFYHOST, 0)
        transfer.set(CURLOPT_PINNEDPUBLICKEY, keyFilePath)
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
