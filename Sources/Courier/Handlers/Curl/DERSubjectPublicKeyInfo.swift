import Foundation

/// Reads the SubjectPublicKeyInfo out of an X.509 certificate in DER form — the part libcurl pins
/// with `CURLOPT_PINNEDPUBLICKEY`. A minimal reader of the DER structure; it never trusts lengths it
/// has not checked against the input.
enum DERSubjectPublicKeyInfo {
    private struct Element {
        var tag: UInt8
        /// The whole element, header included.
        var range: Range<Int>
        /// Its contents.
        var content: Range<Int>
    }

    /// The SubjectPublicKeyInfo element (header included), or `nil` for input that is not a
    /// certificate.
    static func extract(fromCertificate der: Data) -> Data? {
        let bytes = [UInt8](der)
        guard let certificate = element(in: bytes, at: 0), certificate.tag == 0x30,
              let tbs = element(in: bytes, at: certificate.content.lowerBound), tbs.tag == 0x30 else { return nil }
        var children: [Element] = []
        var offset = tbs.content.lowerBound
        while offset < tbs.content.upperBound, children.count < 8, let child = element(in: bytes, at: offset) {
            children.append(child)
            offset = child.range.upperBound
        }
        if children.first?.tag == 0xA0 { children.removeFirst() }
        // serial, signature, issuer, validity, subject, subjectPublicKeyInfo
        guard children.count >= 6, children[5].tag == 0x30 else { return nil }
        return Data(bytes[children[5].range])
    }

    private static func element(in bytes: [UInt8], at start: Int) -> Element? {
        guard start + 2 <= bytes.count else { return nil }
        let tag = bytes[start]
        var length = Int(bytes[start + 1])
        var header = 2
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard count > 0, count <= 4, start + 2 + count <= bytes.count else { return nil }
            length = 0
            for index in 0..<count { length = length << 8 | Int(bytes[start + 2 + index]) }
            header += count
        }
        let end = start + header + length
        guard length >= 0, end <= bytes.count else { return nil }
        return Element(tag: tag, range: start..<end, content: (start + header)..<end)
    }
}
