import Foundation

/// Parses the lines of a `LIST` listing. No standard fixes its format, so each line is recognised
/// on its own as one of:
///
/// - Unix `ls -l` style (vsftpd, ProFTPD, pure-ftpd, pyftpdlib and most others):
///   `drwxr-sr-x+ 2 owner group 4096 Nov 20 09:14 name with spaces`. The link count and the
///   group may be missing; a device has `major, minor` instead of a size; the date is
///   `Nov 20 09:14` (the year is the latest that does not put the date more than a day after
///   `now`), `Nov 20  2024`, `Nov 20 09:14:03 2024` (BSD `ls -T`), or `2024-11-20 09:14[:03[.f]]
///   [+0100]` (GNU `--time-style=long-iso`/`full-iso`); a symbolic link is `name -> target`.
/// - Windows/DOS style (IIS and others): `11-20-26  09:14AM  <DIR>  docs`,
///   `11-20-2026  21:14  1204 notes.txt`; `<JUNCTION>` and `<SYMLINKD>` entries are links
///   (`name [target]`).
///
/// Dates without a time zone are taken as UTC. Other lines (`total 12`, blank lines, other
/// formats) are skipped.
enum FTPLISTParser {

    /// The entry one line describes, or `nil` when the line is not understood or names `.` or `..`.
    /// - Parameter now: The current time, to place dates that have no year.
    static func entry(fromLine line: String, now: Date) -> URLDirectoryEntry? {
        let tokens = Token.leading(in: line, limit: 12)
        guard let first = tokens.first else { return nil }
        if let mode = UnixMode(first.text) {
            return unixEntry(line, tokens: tokens, mode: mode, now: now)
        }
        return dosEntry(line, tokens: tokens)
    }

    // MARK: - Unix style

    private static func unixEntry(_ line: String, tokens: [Token], mode: UnixMode, now: Date) -> URLDirectoryEntry? {
        // The date follows the size, but the fields before it vary (link count or group missing,
        // "major, minor" for a device): try the usual positions first, so that an owner named
        // like a month does not fool the parser.
        for index in [5, 4, 6, 3, 7, 8, 2] where index < tokens.count {
            guard isSize(tokens[index - 1].text),
                  let (date, last) = dateFields(tokens, at: index, now: now) else { continue }
            var name = remainder(of: line, after: tokens[last], skippingAllBlanks: false)
            var destination: String?
            if mode.type == .symbolicLink {
                (name, destination) = split(name, at: " -> ")
            }
            guard FTPListingParser.isAcceptableName(name) else { return nil }
            let size = mode.isDevice ? nil : Int64(tokens[index - 1].text)
            return URLDirectoryEntry(name: name, type: mode.type, size: size, modificationDate: date,
                                     permissions: mode.permissions, symbolicLinkDestination: destination)
        }
        return nil
    }

    /// What an `ls -l` mode string (`-rw-r--r--`, `drwxr-sr-x+`, `crw-rw----`) says.
    private struct UnixMode {
        var type: URLDirectoryEntry.EntryType
        var isDevice: Bool
        var permissions: UInt16

        /// The mode `text` spells, or `nil` when it is not a mode string. A trailing `+`, `@` or
        /// `.` (ACL, extended attributes, SELinux context) is allowed.
        init?(_ text: String) {
            var letters = Array(text.unicodeScalars)
            if letters.count == 11, let last = letters.last, "+@.".unicodeScalars.contains(last) {
                letters.removeLast()
            }
            guard letters.count == 10 else { return nil }
            switch letters[0] {
            case "-": type = .file
            case "d": type = .directory
            case "l": type = .symbolicLink
            case "c", "b", "p", "s", "D": type = .other
            default: return nil
            }
            isDevice = letters[0] == "c" || letters[0] == "b"
            var bits: UInt16 = 0
            for triplet in 0..<3 {
                let shift = UInt16(3 * (2 - triplet)) // owner, group, others
                let special: UInt16 = triplet == 0 ? 0o4000 : triplet == 1 ? 0o2000 : 0o1000
                switch letters[1 + 3 * triplet] {
                case "r": bits |= 0o4 << shift
                case "-": break
                default: return nil
                }
                switch letters[2 + 3 * triplet] {
                case "w": bits |= 0o2 << shift
                case "-": break
                default: return nil
                }
                switch letters[3 + 3 * triplet] {
                case "-": break
                case "x": bits |= 0o1 << shift
                case "s" where triplet < 2, "t" where triplet == 2: bits |= 0o1 << shift | special
                case "S" where triplet < 2, "T" where triplet == 2, "l" where triplet == 1, "L" where triplet == 1:
                    bits |= special // set-id or sticky without execute ("l": mandatory locking)
                default: return nil
                }
            }
            permissions = bits
        }
    }

    /// Whether `text` can be the size field: digits, or a device's `major,minor`.
    private static func isSize(_ text: String) -> Bool {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        return (1...2).contains(parts.count) && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(isDigit) }
    }

    /// The date starting at `tokens[index]` and the index of its last token, or `nil` when no date
    /// starts there. The date itself is `nil` when the fields do not make a calendar date.
    private static func dateFields(_ tokens: [Token], at index: Int, now: Date) -> (Date?, Int)? {
        guard index + 1 < tokens.count else { return nil }
        let first = tokens[index].text
        let second = tokens[index + 1].text
        if let month = month(first) {
            // "Nov 20 09:14", "Nov 20  2024", "Nov 20 09:14:03 2024"
            guard index + 2 < tokens.count, let day = number(second, digits: 1...2), (1...31).contains(day) else {
                return nil
            }
            let third = tokens[index + 2].text
            if let year = number(third, digits: 4...4) {
                return (FTPListingParser.utcDate(year: year, month: month, day: day), index + 2)
            }
            guard let clock = Clock(third) else { return nil }
            if !clock.hasSeconds {
                return (inferredDate(month: month, day: day, clock: clock, now: now), index + 2)
            }
            guard index + 3 < tokens.count, let year = number(tokens[index + 3].text, digits: 4...4) else { return nil }
            return (clock.date(year: year, month: month, day: day), index + 3)
        }
        // "2024-11-20 09:14", "2024-11-20 09:14:03.123456789 +0100"
        let parts = first.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, let year = number(parts[0], digits: 4...4),
              let month = number(parts[1], digits: 2...2), let day = number(parts[2], digits: 2...2),
              let clock = Clock(second) else { return nil }
        var date = clock.date(year: year, month: month, day: day)
        var last = index + 1
        if clock.hasSeconds, index + 2 < tokens.count, let offset = zoneOffset(tokens[index + 2].text) {
            date = date?.addingTimeInterval(-offset)
            last = index + 2
        }
        return (date, last)
    }

    /// The latest date on `month`/`day` at `clock` that is not more than a day after `now`.
    private static func inferredDate(month: Int, day: Int, clock: Clock, now: Date) -> Date? {
        guard let year = FTPListingParser.utcYear(of: now) else { return nil }
        let latest = now.addingTimeInterval(86_400)
        // Eight years back at most: enough to reach a February 29.
        for candidate in stride(from: year + 1, through: year - 8, by: -1) {
            if let date = clock.date(year: candidate, month: month, day: day), date <= latest {
                return date
            }
        }
        return nil
    }

    /// The month (1–12) an English abbreviation (`Nov`, any case) names.
    private static func month(_ text: String) -> Int? {
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        guard text.utf8.count == 3, let index = months.firstIndex(of: text.lowercased()) else { return nil }
        return index + 1
    }

    /// A `+hhmm` or `-hhmm` time zone offset, in seconds.
    private static func zoneOffset(_ text: String) -> TimeInterval? {
        guard text.utf8.count == 5, let sign = text.first, sign == "+" || sign == "-",
              let value = number(text.dropFirst(), digits: 4...4), value % 100 < 60, value / 100 < 24 else {
            return nil
        }
        let seconds = TimeInterval(value / 100 * 3_600 + value % 100 * 60)
        return sign == "-" ? -seconds : seconds
    }

    // MARK: - Windows/DOS style

    private static func dosEntry(_ line: String, tokens: [Token]) -> URLDirectoryEntry? {
        guard tokens.count >= 3, let (year, month, day) = dosDate(tokens[0].text) else { return nil }
        // "09:14AM", "09:14 PM" or "21:14"
        var time = tokens[1].text.lowercased()
        var next = 2
        var meridiem: String?
        if time.hasSuffix("am") || time.hasSuffix("pm") {
            meridiem = String(time.suffix(2))
            time.removeLast(2)
        } else if ["am", "pm"].contains(tokens[2].text.lowercased()) {
            meridiem = tokens[2].text.lowercased()
            next = 3
        }
        guard next < tokens.count, var clock = Clock(time) else { return nil }
        if let meridiem {
            guard (1...12).contains(clock.hour) else { return nil }
            clock.hour = clock.hour % 12 + (meridiem == "pm" ? 12 : 0)
        }

        let field = tokens[next].text
        var name = remainder(of: line, after: tokens[next], skippingAllBlanks: true)
        var type = URLDirectoryEntry.EntryType.file
        var size: Int64?
        var destination: String?
        switch field.uppercased() {
        case "<DIR>":
            type = .directory
        case "<JUNCTION>", "<SYMLINKD>", "<SYMLINK>":
            type = .symbolicLink
            if name.hasSuffix("]") {
                let (linkName, target) = split(name, at: " [")
                if let target {
                    name = linkName
                    destination = String(target.dropLast())
                }
            }
        default:
            // "1204", or "1,204" with grouping
            let digits = field.filter { $0 != "," }
            guard !digits.isEmpty, digits.allSatisfy(isDigit) else { return nil }
            size = Int64(digits)
        }
        guard FTPListingParser.isAcceptableName(name) else { return nil }
        return URLDirectoryEntry(name: name, type: type, size: size,
                                 modificationDate: clock.date(year: year, month: month, day: day),
                                 symbolicLinkDestination: destination?.isEmpty == false ? destination : nil)
    }

    /// `MM-DD-YY`, `MM-DD-YYYY` or `YYYY-MM-DD` (with `-`, `/` or `.`). Two-digit years below 70
    /// are 20xx, the others 19xx.
    private static func dosDate(_ text: String) -> (year: Int, month: Int, day: Int)? {
        let parts = text.split(omittingEmptySubsequences: false) { $0 == "-" || $0 == "/" || $0 == "." }
        guard parts.count == 3 else { return nil }
        let date: (year: Int, month: Int, day: Int)
        if let year = number(parts[0], digits: 4...4) {
            guard let month = number(parts[1], digits: 1...2),
                  let day = number(parts[2], digits: 1...2) else { return nil }
            date = (year, month, day)
        } else {
            guard let month = number(parts[0], digits: 1...2),
                  let day = number(parts[1], digits: 1...2) else { return nil }
            if let year = number(parts[2], digits: 4...4) {
                date = (year, month, day)
            } else if let year = number(parts[2], digits: 2...2) {
                date = (year < 70 ? 2000 + year : 1900 + year, month, day)
            } else {
                return nil
            }
        }
        guard (1...12).contains(date.month), (1...31).contains(date.day) else { return nil }
        return date
    }

    // MARK: - Shared pieces

    /// A time of day: `HH:MM`, `HH:MM:SS` or `HH:MM:SS.fraction`.
    private struct Clock {
        var hour: Int
        var minute: Int
        var second: Double
        var hasSeconds: Bool

        init?(_ text: String) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard (2...3).contains(parts.count), let hour = number(parts[0], digits: 1...2),
                  let minute = number(parts[1], digits: 2...2), hour < 24, minute < 60 else { return nil }
            (self.hour, self.minute, second, hasSeconds) = (hour, minute, 0, parts.count == 3)
            if parts.count == 3 {
                let pieces = parts[2].split(separator: ".", omittingEmptySubsequences: false)
                guard (1...2).contains(pieces.count), let whole = number(pieces[0], digits: 2...2), whole <= 60 else {
                    return nil
                }
                second = Double(whole)
                if pieces.count == 2 {
                    guard number(pieces[1], digits: 1...9) != nil,
                          let fraction = Double("0." + pieces[1]) else { return nil }
                    second += fraction
                }
            }
        }

        func date(year: Int, month: Int, day: Int) -> Date? {
            FTPListingParser.utcDate(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        }
    }

    /// A run of non-blank characters in a line, and where it ends.
    private struct Token {
        var text: String
        var end: String.Index

        /// The first `limit` tokens of `line` (the rest is only ever part of a name).
        static func leading(in line: String, limit: Int) -> [Token] {
            let scalars = line.unicodeScalars
            var tokens: [Token] = []
            var start: String.Index?
            var index = scalars.startIndex
            while index < scalars.endIndex, tokens.count < limit {
                if isBlank(scalars[index]) {
                    if let begin = start {
                        tokens.append(Token(text: String(Substring(scalars[begin..<index])), end: index))
                        start = nil
                    }
                } else if start == nil {
                    start = index
                }
                index = scalars.index(after: index)
            }
            if let begin = start, tokens.count < limit {
                tokens.append(Token(text: String(Substring(scalars[begin...])), end: scalars.endIndex))
            }
            return tokens
        }
    }

    /// What follows `token` in `line`, after one blank (`ls` puts exactly one before the name, which
    /// may itself start with a space) or after all of them.
    private static func remainder(of line: String, after token: Token, skippingAllBlanks: Bool) -> String {
        let rest = line.unicodeScalars[token.end...]
        return String(Substring(skippingAllBlanks ? rest.drop(while: isBlank) : rest.dropFirst()))
    }

    /// `text` split at the first `separator`: what precedes it, and what follows (`nil` when
    /// `separator` does not occur or nothing follows it).
    private static func split(_ text: String, at separator: String) -> (String, String?) {
        let scalars = text.unicodeScalars
        let pattern = separator.unicodeScalars
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let rest = scalars[index...]
            if rest.starts(with: pattern) {
                let after = rest.dropFirst(pattern.count)
                return (String(Substring(scalars[..<index])), after.isEmpty ? nil : String(Substring(after)))
            }
            index = scalars.index(after: index)
        }
        return (text, nil)
    }

    /// The value of `text` when it is all ASCII digits and has a length in `digits`.
    private static func number(_ text: some StringProtocol, digits: ClosedRange<Int>) -> Int? {
        guard digits.contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return text.utf8.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    private static func isDigit(_ character: Character) -> Bool {
        character.isASCII && character.isNumber
    }

    private static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t"
    }
}
