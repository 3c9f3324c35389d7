import Foundation

/// The validator FTP downloads store in resume data: the remote file's size and modification time
/// (from `SIZE` and `MDTM`). A file that changed in either restarts from byte zero.
enum FTPResumeValidator {
    /// "ftp:SIZE:MTIME" (MTIME in seconds since 1970, or `-` when the server does not tell), or `nil`
    /// when the size is unknown: such a download cannot be resumed safely.
    static func make(size: Int64?, modificationTime: Int64?) -> String? {
        guard let size, size >= 0 else { return nil }
        let time = modificationTime.flatMap { $0 >= 0 ? String($0) : nil } ?? "-"
        return "ftp:\(size):\(time)"
    }
}
