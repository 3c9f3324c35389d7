import Foundation

/// An ordered, case-insensitive collection of HTTP header fields.
///
/// HTTP field names are case-insensitive (RFC 9110 §5.1), so `Content-Type` and `content-type` name
/// the same field. This storage keeps the spelling under which a name was first seen, remembers the
/// order in which fields were added, and keeps each name's lowercased form (its *key*) beside it, so
/// a look-up lowercases only the queried name, once, and never the stored names.
///
/// Most messages carry a dozen fields or so, whose keys are short enough to be stored inline in a
/// `String` (15 bytes or fewer): comparing such keys one after the other is cheaper than hashing
/// one. So a look-up scans the keys, and a hash index is built only when a collection grows past
/// ``indexThreshold`` fields.
///
/// Used by `URLRequest` for request headers and by `HTTPURLResponse` for response headers.
internal struct HTTPHeaderFields: Sendable {

    /// One header field: the name as first spelled, and its (possibly comma-joined) value.
    internal struct Field: Sendable, Hashable {
        /// The field name, with the spelling under which it was first added.
        internal var name: String
        /// The field value.
        internal var value: String
    }

    /// The field count above which look-ups go through a hash index instead of a scan.
    private static let indexThreshold = 24

    /// The fields, in the order in which their names were first added.
    private var fields: [Field]
    /// The lowercased name of each field, at the same positions as `fields`.
    private var keys: [String]
    /// Lowercased field name → position in `fields`; only for collections past the threshold.
    private var index: [String: Int]?

    /// Creates an empty collection.
    internal init() {
        fields = []
        keys = []
        index = nil
    }

    /// Creates an empty collection with room for `capacity` fields.
    internal init(minimumCapacity capacity: Int) {
        self.init()
        fields.reserveCapacity(capacity)
        keys.reserveCapacity(capacity)
    }

    /// Creates a collection holding the entries of `dictionary`.
    ///
    /// A dictionary has no order, so its entries are added sorted by name to make the resulting
    /// order (and the order headers are written on the wire) deterministic. If the dictionary holds
    /// two names that differ only in case, the one that sorts last wins.
    internal init(_ dictionary: [String: String]) {
        self.init(minimumCapacity: dictionary.count)
        for (name, value) in dictionary.sorted(by: { $0.key < $1.key }) {
            set(value, for: name)
        }
    }

    /// Creates a collection from name/value pairs in order; repeated names are joined with `,`
    /// as by `add(_:for:)`.
    internal init<S: Sequence>(pairs: S) where S.Element == (String, String) {
        self.init()
        for (name, value) in pairs {
            add(value, for: name)
        }
    }

    /// The number of distinct field names.
    internal var count: Int { fields.count }

    /// Whether the collection holds no field.
    internal var isEmpty: Bool { fields.isEmpty }

    /// The value stored for `name` (compared case-insensitively), or `nil` if there is none.
    internal func value(for name: String) -> String? {
        guard let position = position(ofName: name) else { return nil }
        return fields[position].value
    }

    /// Whether a field named `name` (compared case-insensitively) is present.
    internal func contains(_ name: String) -> Bool {
        position(ofName: name) != nil
    }

    /// Replaces the value of `name` with `value`; a `nil` value removes the field.
    ///
    /// Replacing keeps both the original spelling of the name and the field's position.
    internal mutating func set(_ value: String?, for name: String) {
        let key = Self.key(for: name)
        guard let value else {
            remove(key: key)
            return
        }
        if let position = position(ofKey: key) {
            fields[position].value = value
        } else {
            append(Field(name: name, value: value), key: key)
        }
    }

    /// Appends `value` to the field `name`, joining it to an existing value with `,` (no space,
    /// as Apple's loading system does), or adds the field if it is absent.
    internal mutating func add(_ value: String, for name: String) {
        add(value, for: name, key: Self.key(for: name))
    }

    /// `add(_:for:)` with the index key of `name` already computed (`key(for: name)`), for parsers
    /// that lowercase the name on the wire bytes.
    internal mutating func add(_ value: String, for name: String, key: String) {
        if let position = position(ofKey: key) {
            fields[position].value += "," + value
        } else {
            append(Field(name: name, value: value), key: key)
        }
    }

    /// Removes the field `name` (compared case-insensitively), if present.
    internal mutating func remove(_ name: String) {
        remove(key: Self.key(for: name))
    }

    /// The fields as a dictionary keyed by their first-seen spelling.
    internal var dictionary: [String: String] {
        var result = [String: String](minimumCapacity: fields.count)
        for field in fields {
            result[field.name] = field.value
        }
        return result
    }

    /// The field names in insertion order, with their first-seen spelling.
    internal var names: [String] { fields.map(\.name) }

    // MARK: - Private

    /// The position of the field whose key is `key`.
    @inline(__always)
    private func position(ofKey key: String) -> Int? {
        if let index { return index[key] }
        // Most keys differ from the one sought in length, which a string knows without looking at
        // its bytes: comparing lengths first skips nearly every full comparison.
        let length = key.utf8.count
        return keys.firstIndex { $0.utf8.count == length && $0 == key }
    }

    /// The position of the field named `name`: ``position(ofKey:)`` of `key(for: name)`, without
    /// making that key. An ASCII name (every valid field name) is compared with the stored keys
    /// byte by byte, folding its case as it goes; only a name with other bytes is lowercased first.
    private func position(ofName name: String) -> Int? {
        if index != nil { return position(ofKey: Self.key(for: name)) }
        let found: Int?? = name.utf8.withContiguousStorageIfAvailable { bytes -> Int? in
            // A well-known name's key is a string the parser stored too: compared by identity first.
            if let known = HTTPWellKnownFieldNames.shared.entry(forName: UnsafeRawBufferPointer(bytes)) {
                return position(ofKey: known.key)
            }
            for byte in bytes where byte >= 0x80 { return position(ofKey: Self.key(for: name)) }
            for (position, key) in keys.enumerated() where Self.key(key, equalsFolded: bytes) {
                return position
            }
            return nil
        }
        if let found { return found }
        return position(ofKey: Self.key(for: name))
    }

    /// Whether `key` (a stored key: lowercased) is `name`'s ASCII bytes with their case folded.
    /// Lengths are compared first, then the bytes of the two contiguous buffers, so that a look-up
    /// costs a few instructions per stored key instead of an iterator per byte.
    @inline(__always)
    private static func key(_ key: String, equalsFolded name: UnsafeBufferPointer<UInt8>) -> Bool {
        let length = name.count
        guard key.utf8.count == length else { return false }
        let equal: Bool? = key.utf8.withContiguousStorageIfAvailable { stored in
            for offset in 0..<length {
                let byte = name[offset]
                let folded = (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
                if stored[offset] != folded { return false }
            }
            return true
        }
        if let equal { return equal }
        return key.utf8.elementsEqual(name.lazy.map { ($0 >= 0x41 && $0 <= 0x5A) ? $0 | 0x20 : $0 })
    }

    private mutating func append(_ field: Field, key: String) {
        fields.append(field)
        keys.append(key)
        if index != nil {
            index?[key] = fields.count - 1
        } else if fields.count > Self.indexThreshold {
            rebuildIndex()
        }
    }

    private mutating func remove(key: String) {
        guard let position = position(ofKey: key) else { return }
        fields.remove(at: position)
        keys.remove(at: position)
        if index != nil { rebuildIndex() }
    }

    private mutating func rebuildIndex() {
        var rebuilt = [String: Int](minimumCapacity: keys.count)
        for (position, key) in keys.enumerated() { rebuilt[key] = position }
        index = rebuilt
    }

    /// The index key for a field name: its ASCII-lowercased form. Names that are already lowercase
    /// (the usual case for HTTP/2 and for most look-ups) are returned without copying.
    @inline(__always)
    internal static func key(for name: String) -> String {
        var needsLowering = false
        for byte in name.utf8 {
            if byte >= 0x80 {
                // Not a valid token character; fall back to full Unicode lowercasing.
                return name.lowercased()
            }
            if byte >= 0x41 && byte <= 0x5A {
                needsLowering = true
            }
        }
        guard needsLowering else { return name }
        let utf8 = name.utf8
        return String(unsafeUninitializedCapacity: utf8.count) { buffer in
            var count = 0
            for byte in utf8 {
                buffer[count] = (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
                count += 1
            }
            return count
        }
    }

    /// The index key for a field name given as bytes (ASCII-lowercased); `nil` when the name is not
    /// ASCII (the caller then goes through `key(for:)` with the decoded name).
    internal static func key(forASCII bytes: UnsafeRawBufferPointer) -> String? {
        for byte in bytes where byte >= 0x80 { return nil }
        return String(unsafeUninitializedCapacity: bytes.count) { buffer in
            var count = 0
            for byte in bytes {
                buffer[count] = (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
                count += 1
            }
            return count
        }
    }
}

extension HTTPHeaderFields: Sequence {
    /// Iterates over the fields in insertion order.
    internal func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }
}

extension HTTPHeaderFields: Hashable {
    /// Two collections are equal when they hold the same names (compared case-insensitively) with
    /// exactly the same values, whatever their order or spelling.
    internal static func == (lhs: HTTPHeaderFields, rhs: HTTPHeaderFields) -> Bool {
        guard lhs.fields.count == rhs.fields.count else { return false }
        for (position, key) in lhs.keys.enumerated() {
            guard let other = rhs.position(ofKey: key), rhs.fields[other].value == lhs.fields[position].value else {
                return false
            }
        }
        return true
    }

    /// Hashes the fields independently of their order and of the case of their names.
    internal func hash(into hasher: inout Hasher) {
        var combined = 0
        for (position, key) in keys.enumerated() {
            var fieldHasher = Hasher()
            fieldHasher.combine(key)
            fieldHasher.combine(fields[position].value)
            combined = combined &+ fieldHasher.finalize()
        }
        hasher.combine(fields.count)
        hasher.combine(combined)
    }
}

extension HTTPHeaderFields: ExpressibleByDictionaryLiteral {
    /// Creates a collection from a literal, keeping the literal's order; repeated names are joined.
    internal init(dictionaryLiteral elements: (String, String)...) {
        self.init(pairs: elements)
    }
}
