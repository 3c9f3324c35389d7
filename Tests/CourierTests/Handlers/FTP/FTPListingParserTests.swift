import Foundation
import Testing
@testable import Courier

/// The FTP directory-listing parsers (`MLSD` per RFC 3659, `LIST` in Unix and DOS styles), fed
/// what real servers send, without a server.
@Suite("FTPListingParser")
struct FTPListingParserTests {

    /// The "now" every year-less `LIST` date is placed against: 2026-11-25 12:00 UTC.
    static let now = utc(2026, 11, 25, 12, 0)

    /// A UTC instant, computed with Foundation's calendar (not the parser's own arithmetic).
    static func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0,
                    _ second: Int = 0) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        return calendar.date(from: components) ?? .distantPast
    }

    private func list(_ text: String, now: Date = Self.now) -> [URLDirectoryEntry] {
        FTPListingParser.parseLIST(text, now: now)
    }

    /// The entries by name (names are unique in every sample).
    private func byName(_ entries: [URLDirectoryEntry]) -> [String: URLDirectoryEntry] {
        Dictionary(entries.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    // MARK: - LIST, Unix style

    @Test func vsftpd() throws {
        // vsftpd shows numeric ids unless hide_ids is set, and never a "total" line.
        let entries = list("""
            drwxr-xr-x    2 1000     1000         4096 Nov 20 09:14 docs
            -rw-r--r--    1 1000     1000         1204 Nov 20 09:14 notes.txt
            -rw-r--r--    1 ftp      ftp       5242880 Mar 03  2024 archive.tar.gz
            lrwxrwxrwx    1 1000     1000            4 Nov 19 17:00 latest -> docs
            """)
        #expect(entries.map(\.name) == ["docs", "notes.txt", "archive.tar.gz", "latest"])
        #expect(entries[0] == URLDirectoryEntry(name: "docs", type: .directory, size: 4096,
                                                modificationDate: Self.utc(2026, 11, 20, 9, 14), permissions: 0o755))
        #expect(entries[1] == URLDirectoryEntry(name: "notes.txt", type: .file, size: 1204,
                                                modificationDate: Self.utc(2026, 11, 20, 9, 14), permissions: 0o644))
        #expect(entries[2].size == 5_242_880)
        #expect(entries[2].modificationDate == Self.utc(2024, 3, 3))
        #expect(entries[3] == URLDirectoryEntry(name: "latest", type: .symbolicLink, size: 4,
                                                modificationDate: Self.utc(2026, 11, 19, 17, 0), permissions: 0o777,
                                                symbolicLinkDestination: "docs"))
    }

    @Test func proftpd() throws {
        let entries = byName(list("""
            total 16
            drwxr-xr-x   3 ftpuser  ftpgroup     4096 Nov 20 09:14 docs
            -rw-r--r--   1 ftpuser  ftpgroup     1204 Nov 20 09:14 notes.txt
            -rw-r-----+  1 ftpuser  ftpgroup      512 Jan  5  2025 acl.txt
            """))
        #expect(entries.count == 3)
        #expect(entries["docs"]?.type == .directory)
        #expect(entries["notes.txt"]?.size == 1204)
        // The '+' (an ACL) after the mode does not change the bits.
        #expect(entries["acl.txt"]?.permissions == 0o640)
        #expect(entries["acl.txt"]?.modificationDate == Self.utc(2025, 1, 5))
    }

    @Test func pureFTPd() throws {
        // pure-ftpd lists "." and ".." too; they are not entries.
        let entries = list("""
            drwxr-xr-x    4 1000       1000             4096 Nov 20 09:14 .
            drwxr-xr-x    3 0          0                4096 Oct  1  2025 ..
            drwxr-xr-x    2 1000       1000             4096 Nov 20 09:14 docs
            -rw-r--r--    1 1000       1000             1204 Nov 20 09:14 notes.txt
            """)
        #expect(entries.map(\.name) == ["docs", "notes.txt"])
        #expect(entries[1].modificationDate == Self.utc(2026, 11, 20, 9, 14))
    }

    @Test func pyftpdlib() throws {
        let entries = byName(list("""
            -rw-r--r--   1 giampaolo staff        1204 Nov 20 09:14 notes.txt
            drwxr-xr-x   3 giampaolo staff          96 Jun 02  2025 docs
            lrwxr-xr-x   1 giampaolo staff           4 Nov 20 09:14 latest -> docs
            """))
        #expect(entries["notes.txt"]?.permissions == 0o644)
        #expect(entries["docs"]?.modificationDate == Self.utc(2025, 6, 2))
        #expect(entries["latest"]?.symbolicLinkDestination == "docs")
        #expect(entries["latest"]?.permissions == 0o755)
    }

    @Test func missingFields() throws {
        // No group, and neither link count nor group (old Mac servers).
        let entries = list("""
            -rw-r--r--   1 owner         1204 Nov 20 09:14 no group.txt
            drwxr-xr-x               folder        0 Nov 20 09:14 no links
            """)
        #expect(entries.map(\.name) == ["no group.txt", "no links"])
        #expect(entries.map(\.size) == [1204, 0])
        #expect(entries[1].type == .directory)
    }

    @Test func ownerNamedLikeAMonth() throws {
        // The owner "jan" and group "12" followed by a 4-digit size look like a date.
        let entries = list("-rw-r--r--   1 jan      12           2024 Nov 20 09:14 report.txt")
        #expect(entries.map(\.name) == ["report.txt"])
        #expect(entries.first?.size == 2024)
    }

    @Test func namesWithSpaces() throws {
        let entries = list("""
            -rw-r--r--   1 u  g   1 Nov 20 09:14 two  inner   spaces.txt
            -rw-r--r--   1 u  g   2 Nov 20  2024  leading space
            -rw-r--r--   1 u  g   3 Nov 20 09:14 trailing space\u{20}
            -rw-r--r--   1 u  g   4 Nov 20 09:14 Nov 20 09:14 looks like a date
            """)
        #expect(entries.map(\.name) == ["two  inner   spaces.txt", " leading space", "trailing space ",
                                        "Nov 20 09:14 looks like a date"])
    }

    @Test func symbolicLinks() throws {
        let entries = list("""
            lrwxrwxrwx   1 u  g  11 Nov 20 09:14 my link -> my target/x
            lrwxrwxrwx   1 u  g  11 Nov 20 09:14 a -> b -> c
            lrwxrwxrwx   1 u  g  11 Nov 20 09:14 no arrow
            -rw-r--r--   1 u  g  11 Nov 20 09:14 file -> not a link
            """)
        #expect(entries.map(\.name) == ["my link", "a", "no arrow", "file -> not a link"])
        #expect(entries.map(\.symbolicLinkDestination) == ["my target/x", "b -> c", nil, nil])
        #expect(entries.map(\.type) == [.symbolicLink, .symbolicLink, .symbolicLink, .file])
    }

    @Test func devicesAndSpecialFiles() throws {
        let entries = byName(list("""
            crw-rw----   1 root     dialout    4,  64 Nov 20 09:14 ttyS0
            crw-rw-rw-   1 root     root       1,3 Nov 20 09:14 null
            brw-rw----   1 root     disk       8,   0 Nov 20 09:14 sda
            srwxrwxrwx   1 root     root            0 Nov 20 09:14 socket
            prw-r--r--   1 root     root            0 Nov 20 09:14 fifo
            """))
        #expect(entries.count == 5)
        for name in ["ttyS0", "null", "sda"] {
            #expect(entries[name]?.type == .other)
            #expect(entries[name]?.size == nil)
            #expect(entries[name]?.modificationDate == Self.utc(2026, 11, 20, 9, 14))
        }
        #expect(entries["ttyS0"]?.permissions == 0o660)
        #expect(entries["socket"]?.type == .other)
        #expect(entries["socket"]?.size == 0)
        #expect(entries["fifo"]?.permissions == 0o644)
    }

    @Test func specialPermissionBits() throws {
        let cases: [(String, UInt16)] = [
            ("-rwsr-xr-x", 0o4755), ("-rwSr--r--", 0o4644), ("drwxrwsr-x", 0o2775), ("-rw-r-Sr--", 0o2644),
            ("-rw-r-lr--", 0o2644), ("drwxrwxrwt", 0o1777), ("drwxrwxrwT", 0o1776), ("-rwsrwsrwt", 0o7777),
            ("----------", 0), ("-r--------@", 0o400), ("-rw-rw-r--.", 0o664),
        ]
        for (mode, bits) in cases {
            let entries = list("\(mode)   1 u  g  1 Nov 20 09:14 f")
            #expect(entries.first?.permissions == bits, "\(mode)")
        }
        // Letters in the wrong place: not a mode string.
        for mode in ["-rwtr-xr-x", "-rw-r--r-s", "-wr-r--r--", "xrw-r--r--", "-rw-r--r--x", "-rw-r--r-"] {
            #expect(list("\(mode)   1 u  g  1 Nov 20 09:14 f").isEmpty, "\(mode)")
        }
    }

    @Test func yearInference() throws {
        // now is 2026-11-25 12:00 UTC.
        let cases: [(String, Date)] = [
            ("Nov 20 09:14", Self.utc(2026, 11, 20, 9, 14)),
            ("Nov 25 23:59", Self.utc(2026, 11, 25, 23, 59)), // later today (a server ahead of UTC)
            ("Nov 26 11:00", Self.utc(2026, 11, 26, 11, 0)), // less than a day ahead
            ("Nov 26 13:00", Self.utc(2025, 11, 26, 13, 0)), // more than a day ahead: last year
            ("Dec 24 18:00", Self.utc(2025, 12, 24, 18, 0)),
            ("Jan  1 00:00", Self.utc(2026, 1, 1)),
            ("Feb 29 10:00", Self.utc(2024, 2, 29, 10, 0)), // the last year that has one
            ("Nov 20  2019", Self.utc(2019, 11, 20)),
        ]
        for (date, expected) in cases {
            let entries = list("-rw-r--r--   1 u  g  1 \(date) f")
            #expect(entries.first?.modificationDate == expected, "\(date)")
        }
        // Just before New Year, a file dated January 1st (in a time zone ahead) is next year's.
        let newYearsEve = Self.utc(2026, 12, 31, 20, 0)
        #expect(list("-rw-r--r--   1 u  g  1 Jan  1 01:00 f", now: newYearsEve).first?.modificationDate
                == Self.utc(2027, 1, 1, 1, 0))
    }

    @Test func otherDateStyles() throws {
        let entries = list("""
            -rw-r--r--   1 u  g  1 2025-11-20 09:14 long-iso
            -rw-r--r--   1 u  g  1 2025-11-20 09:14:03.500000000 +0100 full-iso
            -rw-r--r--   1 u  g  1 Nov 20 09:14:03 2025 bsd
            -rw-r--r--   1 u  g  1 NOV 20 09:14 upper case month
            -rw-r--r--   1 u  g  1 Feb 30  2025 impossible date
            """)
        #expect(entries.map(\.name) == ["long-iso", "full-iso", "bsd", "upper case month", "impossible date"])
        #expect(entries[0].modificationDate == Self.utc(2025, 11, 20, 9, 14))
        #expect(entries[1].modificationDate == Self.utc(2025, 11, 20, 8, 14, 3).addingTimeInterval(0.5))
        #expect(entries[2].modificationDate == Self.utc(2025, 11, 20, 9, 14, 3))
        #expect(entries[3].modificationDate == Self.utc(2026, 11, 20, 9, 14))
        #expect(entries[4].modificationDate == nil)
    }

    @Test func hugeNumbers() throws {
        let entries = list("""
            -rw-r--r--   1 u  g  9223372036854775807 Nov 20 09:14 largest
            -rw-r--r--   1 u  g  99999999999999999999999999999 Nov 20 09:14 too large
            """)
        #expect(entries.map(\.name) == ["largest", "too large"])
        #expect(entries.map(\.size) == [Int64.max, nil])
    }

    // MARK: - LIST, Windows/DOS style

    @Test func iis() throws {
        let entries = list("""
            11-20-26  09:14AM       <DIR>          docs
            11-20-26  09:14PM                 1204 notes.txt
            11-20-2026  09:14PM                 1204 four digit year.txt
            02-29-24  11:59PM       <DIR>          my documents
            01-01-99  12:00AM                    0 midnight
            01-01-99  12:30PM                    0 half past noon
            """)
        #expect(entries.map(\.name) == ["docs", "notes.txt", "four digit year.txt", "my documents",
                                        "midnight", "half past noon"])
        #expect(entries[0] == URLDirectoryEntry(name: "docs", type: .directory,
                                                modificationDate: Self.utc(2026, 11, 20, 9, 14)))
        #expect(entries[1] == URLDirectoryEntry(name: "notes.txt", type: .file, size: 1204,
                                                modificationDate: Self.utc(2026, 11, 20, 21, 14)))
        #expect(entries[2].modificationDate == Self.utc(2026, 11, 20, 21, 14))
        #expect(entries[3].modificationDate == Self.utc(2024, 2, 29, 23, 59))
        #expect(entries[4].modificationDate == Self.utc(1999, 1, 1, 0, 0))
        #expect(entries[5].modificationDate == Self.utc(1999, 1, 1, 12, 30))
        #expect(entries.allSatisfy { $0.permissions == nil })
    }

    @Test func dosVariants() throws {
        let entries = list("""
            11-20-26  21:14                 1204 evening.txt
            11-20-26  00:05       <DIR>          night
            11/20/2026  09:14 PM        1,204,000 grouped.bin
            2026-11-20  09:14       <dir>          iso dir
            11-20-26  09:14AM       <JUNCTION>     Application Data [C:\\Users\\me\\AppData\\Roaming]
            11-20-26  09:14AM       <SYMLINKD>     bare link
            13-45-26  09:14AM                    1 bad date
            11-20-26  25:14                      1 bad time
            11-20-26  09:14AM       <WHAT>         unknown kind
            """)
        #expect(entries.map(\.name) == ["evening.txt", "night", "grouped.bin", "iso dir", "Application Data", "bare link"])
        #expect(entries[0].modificationDate == Self.utc(2026, 11, 20, 21, 14))
        #expect(entries[1].modificationDate == Self.utc(2026, 11, 20, 0, 5))
        #expect(entries[2].size == 1_204_000)
        #expect(entries[2].modificationDate == Self.utc(2026, 11, 20, 21, 14))
        #expect(entries[3].type == .directory)
        #expect(entries[4].type == .symbolicLink)
        #expect(entries[4].symbolicLinkDestination == "C:\\Users\\me\\AppData\\Roaming")
        #expect(entries[5].type == .symbolicLink)
        #expect(entries[5].symbolicLinkDestination == nil)
    }

    @Test func skippedLines() throws {
        let entries = list("""
            total 24

            ls: cannot access 'x': No such file or directory
            drwxr-xr-x   2 u  g   4096 Nov 20
            drwxr-xr-x   2 u  g   4096 Nov 20 09:14
            drwxr-xr-x   2 u  g   4096 Nov 20 09:14\u{20}
            -rw-r--r--   1 u  g   12 Nov 20 09:14 dir/file
            -rw-r--r--   1 u  g   x12 Nov 20 09:14 bad size
            +i8388621.48594,m825718503,r,s280,\tdjb.html
            -rw-r--r--   1 u  g   12 Nov 20 09:14 kept
            """)
        #expect(entries.map(\.name) == ["kept"])
    }

    // MARK: - MLSD

    @Test func mlsdPyftpdlib() throws {
        let entries = FTPListingParser.parseMLSD("""
            type=dir;size=4096;perm=elcmpd;modify=20261120091403;unix.mode=0755;unix.uid=1000;unix.gid=1000;unique=803g1a2b; docs
            type=file;size=1204;perm=r;modify=20261120091403;unix.mode=0644;unix.uid=1000;unix.gid=1000;unique=803g1a2c; notes.txt
            type=file;size=7;perm=r;modify=20261120091403.537; no mode.txt
            """)
        try #require(entries.count == 3)
        #expect(entries[0] == URLDirectoryEntry(name: "docs", type: .directory, size: 4096,
                                                modificationDate: Self.utc(2026, 11, 20, 9, 14, 3), permissions: 0o755))
        #expect(entries[1] == URLDirectoryEntry(name: "notes.txt", type: .file, size: 1204,
                                                modificationDate: Self.utc(2026, 11, 20, 9, 14, 3), permissions: 0o644))
        // Without UNIX.mode the permissions are unknown; fractional seconds are kept.
        #expect(entries[2].name == "no mode.txt")
        #expect(entries[2].permissions == nil)
        let date = try #require(entries[2].modificationDate)
        #expect(abs(date.timeIntervalSince(Self.utc(2026, 11, 20, 9, 14, 3)) - 0.537) < 0.000_1)
    }

    @Test func mlsdProFTPD() throws {
        let entries = FTPListingParser.parseMLSD("""
            modify=20261120091403;perm=flcdmpe;type=cdir;unique=FD01U2A3B4;UNIX.group=1000;UNIX.groupname=ftp;UNIX.mode=0755;UNIX.owner=1000;UNIX.ownername=ftp; .
            modify=20261001000000;perm=flcdmpe;type=pdir;unique=FD01U2A3B0;UNIX.group=0;UNIX.groupname=root;UNIX.mode=0755;UNIX.owner=0;UNIX.ownername=root; ..
            modify=20261120091403;perm=adfrw;size=1204;type=file;unique=FD01U2A3B5;UNIX.group=1000;UNIX.groupname=ftp;UNIX.mode=0644;UNIX.owner=1000;UNIX.ownername=ftp; notes.txt
            modify=20261119170000;perm=adfrw;size=4;type=OS.unix=symlink;unique=FD01U2A3B6;UNIX.group=1000;UNIX.groupname=ftp;UNIX.mode=0777;UNIX.owner=1000;UNIX.ownername=ftp; latest
            modify=20261119170000;perm=flcdmpe;type=dir;unique=FD01U2A3B7;UNIX.group=1000;UNIX.groupname=ftp;UNIX.mode=02775;UNIX.owner=1000;UNIX.ownername=ftp; shared
            """)
        #expect(entries.map(\.name) == ["notes.txt", "latest", "shared"])
        #expect(entries[0].permissions == 0o644)
        #expect(entries[1].type == .symbolicLink)
        #expect(entries[1].symbolicLinkDestination == nil)
        #expect(entries[1].modificationDate == Self.utc(2026, 11, 19, 17, 0))
        #expect(entries[2].type == .directory)
        #expect(entries[2].size == nil)
        #expect(entries[2].permissions == 0o2775)
    }

    @Test func mlsdPureFTPd() throws {
        // vsftpd does not implement MLSD; pure-ftpd reports directory sizes as "sizd".
        let entries = FTPListingParser.parseMLSD("""
            type=cdir;sizd=4096;modify=20261120091403;UNIX.mode=0755;UNIX.uid=1000;UNIX.gid=1000;unique=803g2a1; .
            type=pdir;sizd=4096;modify=20261001000000;UNIX.mode=0755;UNIX.uid=0;UNIX.gid=0;unique=803g2; ..
            type=dir;sizd=4096;modify=20261120091403;UNIX.mode=0755;UNIX.uid=1000;UNIX.gid=1000;unique=803g2a2; docs
            type=file;size=1204;modify=20261120091403;UNIX.mode=0644;UNIX.uid=1000;UNIX.gid=1000;unique=803g2a3; notes.txt
            """)
        #expect(entries.map(\.name) == ["docs", "notes.txt"])
        #expect(entries[0].size == 4096)
        #expect(entries[0].type == .directory)
    }

    @Test func mlsdDetails() throws {
        let entries = FTPListingParser.parseMLSD("""
            Type=File;Size=3;Modify=20261120091403;Unix.Mode=644; mixed case facts
            type=file;size=3;  leading space
            type=file;size=3; semi;colons; and=equals
            type=OS.unix=slink:/srv/target-dir;size=10; link with target
            type=OS.UNIX=slink; link without target
            type=OS.unix=chr-4/64; a device
            size=3; no type
             no facts at all
            type=file;size=-1;modify=2026112009140;unix.mode=0999; bad values
            type=file;size=99999999999999999999999;modify=20261320091403;unix.mode=077777777777777777777; huge values
            type=file;size=3;modify=20261120091403.x; bad fraction
            type=file;size=3;no-space-before-name
            type=file;size=3; .
            type=dir;size=3; ..
            type=file;size=3; a/b
            """)
        #expect(entries.map(\.name) == ["mixed case facts", " leading space", "semi;colons; and=equals",
                                        "link with target", "link without target", "a device", "no type",
                                        "no facts at all", "bad values", "huge values", "bad fraction"])
        let named = byName(entries)
        #expect(named["mixed case facts"] == URLDirectoryEntry(
            name: "mixed case facts", type: .file, size: 3,
            modificationDate: Self.utc(2026, 11, 20, 9, 14, 3), permissions: 0o644))
        #expect(named["link with target"]?.type == .symbolicLink)
        #expect(named["link with target"]?.symbolicLinkDestination == "/srv/target-dir")
        #expect(named["link without target"]?.type == .symbolicLink)
        #expect(named["link without target"]?.symbolicLinkDestination == nil)
        #expect(named["a device"]?.type == .other)
        #expect(named["no type"]?.type == .other)
        #expect(named["no facts at all"]?.type == .other)
        for name in ["bad values", "huge values"] {
            #expect(named[name]?.size == nil)
            #expect(named[name]?.modificationDate == nil)
            #expect(named[name]?.permissions == nil)
        }
        #expect(named["bad fraction"]?.modificationDate == nil)
    }

    // MARK: - Bytes

    @Test func lineEndingsAndDispatch() throws {
        let body = Data(("type=file;size=1; a\r\ntype=file;size=2; b\n\r\n\ntype=file;size=3; c").utf8)
        #expect(FTPListingParser.parse(body, mlsd: true).map(\.name) == ["a", "b", "c"])
        #expect(FTPListingParser.parse(body, mlsd: false).isEmpty)

        let list = Data("total 1\r\n-rw-r--r-- 1 u g 1 Nov 20 09:14 a\r\n11-20-26  09:14AM  <DIR>  b\r\n".utf8)
        #expect(FTPListingParser.parse(list, mlsd: false, now: Self.now).map(\.name) == ["a", "b"])
        #expect(FTPListingParser.parse(list, mlsd: true).isEmpty)
        #expect(FTPListingParser.parse(Data(), mlsd: true).isEmpty)
        #expect(FTPListingParser.parse(Data(), mlsd: false).isEmpty)
    }

    @Test func latin1AndUTF8() throws {
        var body = Data("-rw-r--r-- 1 u g 5 Nov 20 09:14 caf".utf8)
        body.append(contentsOf: [0xE9, 0x2E, 0x74, 0x78, 0x74, 0x0D, 0x0A]) // "é.txt" in Latin-1, CRLF
        body.append(Data("-rw-r--r-- 1 u g 5 Nov 20 09:14 naïve €.txt\r\n".utf8))
        body.append(Data("11-20-26  09:14AM  12 ".utf8))
        body.append(contentsOf: [0x47, 0xFC, 0x6C, 0x6C, 0x65]) // "Gülle" in Latin-1
        let names = FTPListingParser.parse(body, mlsd: false, now: Self.now).map(\.name)
        #expect(names == ["café.txt", "naïve €.txt", "Gülle"])

        var mlsd = Data("type=file;size=1; ".utf8)
        mlsd.append(contentsOf: [0xC5, 0x72, 0xF8]) // "Årø" in Latin-1 (invalid UTF-8)
        #expect(FTPListingParser.parse(mlsd, mlsd: true).map(\.name) == ["Årø"])
    }
}
