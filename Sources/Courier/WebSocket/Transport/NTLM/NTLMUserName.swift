/// A credential's user name as NTLM sends it: `DOMAIN\user` or `DOMAIN/user` splits at the first
/// backslash (or, when there is none, the first slash) into the domain and the user, as libcurl
/// splits it for a data task; any other name is a user with an empty domain.
struct NTLMUserName: Equatable, Sendable {
    /// The domain (empty when the name has none).
    let domain: String
    /// The user.
    let user: String

    /// Splits `name`.
    init(_ name: String) {
        guard let separator = name.firstIndex(of: "\\") ?? name.firstIndex(of: "/") else {
            domain = ""
            user = name
            return
        }
        domain = String(name[..<separator])
        user = String(name[name.index(after: separator)...])
    }
}
