import Foundation

/// The contents of a persistent credential storage's file (`Credentials.json`): JSON holding the
/// `.permanent` credentials of each protection space and, when it is `.permanent` too, the
/// space's default credential.
///
/// ```json
/// {"format": "Courier.Credentials", "version": 1,
///  "spaces": [{"space": {"host": "example.com", "port": 443, "protocol": "https", "realm": "api",
///                        "authenticationMethod": "NSURLAuthenticationMethodHTTPBasic", "proxy": false},
///              "credentials": [{"user": "me", "password": "secret"}],
///              "defaultCredential": {"user": "me", "password": "secret"}}]}
/// ```
///
/// Passwords are stored as they are: the file's protection is its mode (0600, checked before it
/// is read) and its directory's (0700). A file in any other shape is damaged: decoding returns
/// `nil` and the storage starts empty.
enum CredentialStoreFile {

    /// A protection space as the file stores it.
    struct Space: Codable, Equatable {
        var host: String
        var port: Int
        var `protocol`: String?
        var proxyType: String?
        var realm: String?
        var authenticationMethod: String
        var proxy: Bool
    }

    /// A user name and password.
    struct Secret: Codable, Equatable {
        var user: String
        var password: String
    }

    /// One protection space's stored credentials.
    struct Entry: Codable {
        var space: Space
        var credentials: [Secret]
        var defaultCredential: Secret?
    }

    /// The whole file.
    struct Document: Codable {
        var format: String
        var version: Int
        var spaces: [Entry]
    }

    /// The value of `Document.format`.
    static let format = "Courier.Credentials"

    /// The layout version this code writes and reads.
    static let version = 1

    /// What an intact file holds, ready for `URLCredentialStorage`'s state.
    struct Contents {
        var credentials: [URLProtectionSpace: [String: URLCredential]] = [:]
        var defaults: [URLProtectionSpace: URLCredential] = [:]
    }

    /// Encodes the `.permanent` credentials and default credentials; the others are left out.
    ///
    /// Spaces and users are sorted, so the same contents always give the same bytes.
    static func encode(credentials: [URLProtectionSpace: [String: URLCredential]],
                       defaults: [URLProtectionSpace: URLCredential]) -> Data? {
        var entries: [Entry] = []
        for space in Set(credentials.keys).union(defaults.keys) {
            let secrets = (credentials[space] ?? [:]).values
                .compactMap(secret(for:))
                .sorted { $0.user < $1.user }
            let defaultSecret = defaults[space].flatMap(secret(for:))
            guard !secrets.isEmpty || defaultSecret != nil else { continue }
            entries.append(Entry(space: record(for: space), credentials: secrets, defaultCredential: defaultSecret))
        }
        entries.sort { sortKey($0.space) < sortKey($1.space) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try? encoder.encode(Document(format: format, version: version, spaces: entries))
    }

    /// Decodes a file; `nil` when it is damaged (not JSON, another format or version).
    static func decode(_ data: Data) -> Contents? {
        guard let document = try? JSONDecoder().decode(Document.self, from: data),
              document.format == format, document.version == version else { return nil }
        var contents = Contents()
        for entry in document.spaces {
            let space = protectionSpace(from: entry.space)
            for secret in entry.credentials {
                contents.credentials[space, default: [:]][secret.user] = credential(from: secret)
            }
            if let secret = entry.defaultCredential {
                contents.defaults[space] = credential(from: secret)
            }
        }
        return contents
    }

    /// The secret of a `.permanent` password credential; `nil` for any other credential.
    private static func secret(for credential: URLCredential) -> Secret? {
        guard credential.persistence == .permanent, let user = credential.user,
              let password = credential.password else { return nil }
        return Secret(user: user, password: password)
    }

    private static func credential(from secret: Secret) -> URLCredential {
        URLCredential(user: secret.user, password: secret.password, persistence: .permanent)
    }

    /// The record for a protection space.
    static func record(for space: URLProtectionSpace) -> Space {
        Space(host: space.host, port: space.port, protocol: space.protocol, proxyType: space.proxyType,
              realm: space.realm, authenticationMethod: space.authenticationMethod, proxy: space.isProxy())
    }

    /// The protection space a record describes.
    static func protectionSpace(from record: Space) -> URLProtectionSpace {
        if record.proxy {
            return URLProtectionSpace(proxyHost: record.host, port: record.port, type: record.proxyType,
                                      realm: record.realm, authenticationMethod: record.authenticationMethod)
        }
        return URLProtectionSpace(host: record.host, port: record.port, protocol: record.protocol,
                                  realm: record.realm, authenticationMethod: record.authenticationMethod)
    }

    private static func sortKey(_ space: Space) -> String {
        [space.host.lowercased(), String(space.port), space.protocol ?? "", space.proxyType ?? "",
         space.realm ?? "", space.authenticationMethod, space.proxy ? "1" : "0"].joined(separator: "\u{0}")
    }
}
