internal import CCurl
import Foundation

/// The TLS sessions one `URLSession`'s WebSocket connections may resume: a libcurl share object
/// (`CURL_LOCK_DATA_SSL_SESSION`) made on first use and kept with the session's other handler
/// resources (``HandlerSessionResources``), so it is never shared with another session.
///
/// Without it every wss connection is a new easy handle with an empty session cache, and the
/// connection that answers a 401 (Basic, Digest, NTLM, Negotiate), or the next WebSocket task to
/// the same server, pays a full TLS handshake again. libcurl resumes a session only for the same
/// host and port and the same TLS settings (versions, trust anchors, pinned key, client
/// certificate), so a session of a server the delegate accepted (pinned) never serves a connection
/// that verifies, nor the other way round. The sessions live in memory only and go with the
/// session (also an ephemeral one).
final class CurlTLSSessionCache: HandlerSessionResource, @unchecked Sendable {
    /// The share and its locks (libcurl locks it through the C functions of `CCurl.h`). Every
    /// ``CurlTransfer`` attached to it keeps this object alive, so it is freed after its last handle.
    private let share: UnsafeMutablePointer<courier_share>

    private init?() {
        guard let share = courier_share_new_tls_sessions() else { return nil }
        self.share = share
    }

    /// The cache of `environment`'s session, made on first use; `nil` when libcurl cannot make a
    /// share (the connection then does a full handshake) or the session is gone.
    static func of(_ environment: HandlerEnvironment) -> CurlTLSSessionCache? {
        environment.resources.resource("curl.tls-sessions") { CurlTLSSessionCache() }
    }

    /// Attaches `easy` (a handle that is not in use) to the share; `false` when libcurl refuses.
    func attach(_ easy: UnsafeMutableRawPointer) -> Bool {
        courier_easy_set_share(easy, share) == CURLE_OK
    }

    /// Detaches `easy` (before it is reused for another session's transfer).
    func detach(_ easy: UnsafeMutableRawPointer) {
        _ = courier_easy_set_share(easy, nil)
    }

    /// Nothing to stop: the sessions are freed with the last handle that uses them.
    func shutDown() {}

    deinit {
        // Every attached transfer holds this object, so no handle uses the share any more and
        // this cannot fail; if it did, leaking the share is the safe outcome.
        _ = courier_share_free(share)
    }
}
