import Foundation

/// Reads `WWW-Authenticate` / `Proxy-Authenticate` values into the schemes a server offers, each
/// with its realm, in the server's order of preference.
enum HTTPAuthenticationHeader {
    /// One offered scheme.
    struct Offer: Equatable {
        /// The scheme as sent ("Basic", "Digest", "NTLM", "Negotiate", …).
        var scheme: String
        var realm: String?

        /// Apple's constant for this scheme, or `nil` for schemes Courier cannot answer.
        var authenticationMethod: String? {
            switch scheme.lowercased() {
            case "basic": return NSURLAuthenticationMethodHTTPBasic
            case "digest": return NSURLAuthenticationMethodHTTPDigest
            case "ntlm": return NSURLAuthenticationMethodNTLM
            case "negotiate": return NSURLAuthenticationMethodNegotiate
            default: return nil
            }
        }
    }

    /// The offers in `value` (several headers may have been joined with commas), each scheme and
    /// realm once: a server that repeats an offer (the same scheme, compared case-insensitively, with
    /// the same realm) raises one challenge for it, not one per copy.
    static func offers(in value: String) -> [Offer] {
        var seen = Set<String>()
        return allOffers(in: value).filter { offer in
            seen.insert(offer.scheme.lowercased() + "\u{0}" + (offer.realm.map { "\u{1}" + $0 } ?? "")).inserted
        }
    }

    /// Every offer in `value`, repeated ones included.
    private static func allOffers(in value: String) -> [Offer] {
        var offers: [Offer] = []
        var index = value.startIndex
        func skipSpaceAndCommas() {
            while index < value.endIndex, value[index] == " " || value[index] == "," || value[index] == "\t" {
                index = value.index(after: index)
            }
        }
        func token() -> String {
            let start = index
            while index < value.endIndex, !" \t,=\"".contains(value[index]) { index = value.index(after: index) }
            return String(value[start..<index])
        }
        func quotedOrToken() -> String {
            guard index < value.endIndex, value[index] == "\"" else { return token() }
            index = value.index(after: index)
            var result = ""
            while index < value.endIndex, value[index] != "\"" {
                if value[index] == "\\" { index = value.index(after: index); if index == value.endIndex { break } }
                result.append(value[index])
                index = value.index(after: index)
            }
            if index < value.endIndex { index = value.index(after: index) }
            return result
        }
        while true {
            skipSpaceAndCommas()
            guard index < value.endIndex else { break }
            let word = token()
            guard !word.isEmpty else {
                index = value.index(after: index)
                continue
            }
            while index < value.endIndex, value[index] == " " || value[index] == "\t" { index = value.index(after: index) }
            if index < value.endIndex, value[index] == "=" {
                // A parameter of the current offer (or token68 padding).
                index = value.index(after: index)
                while index < value.endIndex, value[index] == "=" { index = value.index(after: index) }
                while index < value.endIndex, value[index] == " " { index = value.index(after: index) }
                let parameter = quotedOrToken()
                if word.lowercased() == "realm", !offers.isEmpty { offers[offers.count - 1].realm = parameter }
            } else {
                offers.append(Offer(scheme: word, realm: nil))
            }
        }
        return offers
    }
}
