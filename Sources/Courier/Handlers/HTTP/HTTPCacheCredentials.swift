internal import CCurl
import Foundation

/// What one HTTP load sends that ties its response to a user, as the cache rules see it.
///
/// Courier's `URLCache` is shared by every session of the process that uses it (`URLCache.shared`
/// serves every `.default` session) and its disk store outlives the process, so a response must
/// not reach another user through it:
/// - a load that **authorizes** itself (an `Authorization` header, the request's own or the
///   configuration's; a user or password in the URL; a credential answering a challenge, which
///   libcurl turns into `Authorization`; a client certificate) has its response stored only when
///   the response is `public` and not `private` (RFC 9111 §3.5), see ``HTTPCacheStorage``;
/// - a load that sends **cookies** (the request's `Cookie` header, or the session's stored cookies
///   the handler adds) is cached under a scope made from them (``URLCacheScope``): its response is
///   served only to requests that send the same cookies.
struct HTTPCacheCredentials: Equatable, Sendable {
    /// The load authorizes itself (see the type's description).
    var authorizes = false
    /// The `Cookie` header the load sends, if any.
    var cookie: String?

    /// Whether `request` itself carries authorization: an `Authorization` header or a user or
    /// password in its URL (which libcurl sends as Basic authorization).
    static func requestAuthorizes(_ request: URLRequest) -> Bool {
        request.value(forHTTPHeaderField: "Authorization") != nil || request.url?.user != nil || request.url?.password != nil
    }

    /// The cache scope of a load sending `cookie`: `nil` without cookies, else `sha256:` and the
    /// hexadecimal SHA-256 of the header. Where libcrypto's SHA-256 is not found, a scope no other
    /// load shares, so such responses are neither shared nor reused.
    static func scope(ofCookie cookie: String?) -> String? {
        guard let cookie else { return nil }
        var digest = [UInt8](repeating: 0, count: 32)
        let bytes = Array(cookie.utf8)
        guard bytes.withUnsafeBytes({ courier_sha256($0.baseAddress, $0.count, &digest) }) == 1 else {
            return "unshared:" + UUID().uuidString
        }
        return "sha256:" + digest.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// Whether `request` was marked with the scope these credentials' cookies make, so that a
    /// response stored for it is keyed by the cookies that were really sent.
    func matchScope(of request: URLRequest) -> Bool {
        Self.scope(ofCookie: cookie) == URLCacheScope.of(request)
    }
}
