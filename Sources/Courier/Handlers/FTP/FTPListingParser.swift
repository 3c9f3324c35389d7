import Foundation

/// Turns the bodies FTP servers send for directory listings into ``URLDirectoryEntry`` values:
/// `MLSD` answers (RFC 3659, see ``FTPMLSDParser``) and `LIST` answers, whose format no standard
/// fixes (Unix `ls -l` and Windows/DOS styles, see ``FTPLISTParser``).
///
/// Parsing never fails and never traps: lines that cannot be understood are skipped, and so are
/// `.`, `..` and names no directory entry can have (empty, or containing `/`, a newline or NUL).
enum FTPListingParser {

    /// The entries of a listing body as the server sent it.
    ///
    /// Lines end in CRLF or LF. Each line is decoded as UTF-8 or, when it is not valid UTF-8, as
    /// ISO Latin-1, so no byte is lost.
    /// - Parameters:
    ///   - data: The body.
    ///   - mlsd: Whether the body answers `MLSD` (otherwise `LIST`).
    ///   - now: The current time, to place `LIST` dates that have no year.
    static func parse(_ data: Data, mlsd: Bool, now: Date = Date()) -> [URLDirectoryEntry] {
        entries(inLines: lines(of: data), mlsd: mlsd, now: now)
    }

    /// The entries of an `MLSD` listing (`fact=value;fact=value; name` lines).
    static func parseMLSD(_ text: String) -> [URLDirectoryEntry] {
        entries(inLines: lines(of: text.utf8), mlsd: true, now: Date())
    }

    /// The entries of a `LIST` listing, each line in Unix `ls -l` or Windows/DOS style.
    /// - Parameter now: The current time, to place dates that have no year (`Nov 20 09:14`).
    static func parseLIST(_ text: String, now: Date = Date()) -> [URLDirectoryEntry] {
        entries(inLines: lines(of: text.utf8), mlsd: false, now: now)
    }

    private static func entries(inLines lines: [String], mlsd: Bool, now: Date) -> [URLDirectoryEntry] {
        lines.compactMap { entry(fromLine: $0, mlsd: mlsd, now: now) }
    }

    /// The entry one line of a listing describes, or `nil` (see ``FTPMLSDParser`` and ``FTPLISTParser``).
    static func entry(fromLine line: String, mlsd: Bool, now: Date) -> URLDirectoryEntry? {
        mlsd ? FTPMLSDParser.entry(fromLine: line) : FTPLISTParser.entry(fromLine: line, now: now)
    }

    // MARK: - Shared helpers

    /// The non-empty lines of `bytes` (split on LF), each decoded by ``text(ofLine:)``.
    static func lines<Bytes: BidirectionalCollection>(of bytes: Bytes) -> [String] where Bytes.Element == UInt8 {
        bytes.split(separator: 0x0A).compactMap { text(ofLine: $0) }
    }

    /// One line without its LF (a CR before it is dropped), decoded as UTF-8, or as ISO Latin-1 when
    /// not valid UTF-8; `nil` when it is empty.
    static func text<Bytes: BidirectionalCollection>(ofLine bytes: Bytes) -> String? where Bytes.Element == UInt8 {
        let line = bytes.last == 0x0D ? bytes.dropLast() : bytes[...]
        guard !line.isEmpty else { return nil }
        let text = String(decoding: line, as: UTF8.self)
        if text.utf8.elementsEqual(line) { return text }
        return String(String.UnicodeScalarView(line.map { Unicode.Scalar($0) }))
    }

    /// Whether `name` can be an entry's name: not empty, `.` or `..`, and without `/`, a line break
    /// or NUL.
    static func isAcceptableName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".."
            && !name.unicodeScalars.contains { $0 == "/" || $0 == "\n" || $0 == "\r" || $0 == "\0" }
    }

    /// The instant of a UTC calendar date and time, or `nil` when a field is out of range.
    static func utcDate(year: Int, month: Int, day: Int,
                        hour: Int = 0, minute: Int = 0, second: Double = 0) -> Date? {
        guard (1...9999).contains(year), (1...12).contains(month),
              (1...daysInMonth(month, year: year)).contains(day),
              (0...23).contains(hour), (0...59).contains(minute),
              second >= 0, second < 61 else { return nil }
        // Days since 1970-01-01 (H. Hinnant's days_from_civil; years here are positive).
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: Double(days) * 86_400 + Double(hour * 3_600 + minute * 60) + second)
    }

    /// The UTC calendar year of `date`, or `nil` when it is too far from now to matter.
    static func utcYear(of date: Date) -> Int? {
        guard let days = Int(exactly: (date.timeIntervalSince1970 / 86_400).rounded(.down)),
              abs(days) < 100_000_000 else { return nil }
        // H. Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153 // 0 is March
        return yearOfEra + era * 400 + (shiftedMonth >= 10 ? 1 : 0)
    }

    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
