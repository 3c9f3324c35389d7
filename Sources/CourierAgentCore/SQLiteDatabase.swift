import CSQLite
import Foundation

/// Why a database call failed.
struct SQLiteError: Error, CustomStringConvertible {
    /// SQLite's result code.
    let code: Int32
    /// SQLite's message, with what was being done.
    let message: String

    var description: String { "SQLite error \(code): \(message)" }
}

/// A value bound to, or read from, a statement's column.
enum SQLiteValue: Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// The integer, or 0.
    var integer: Int64 { if case .integer(let value) = self { return value } else { return 0 } }
    /// The real, the integer as a real, or 0.
    var real: Double {
        switch self {
        case .real(let value): return value
        case .integer(let value): return Double(value)
        default: return 0
        }
    }
    /// The text, or `nil`.
    var text: String? { if case .text(let value) = self { return value } else { return nil } }
    /// The blob (a text's bytes), or `nil`.
    var blob: Data? {
        switch self {
        case .blob(let value): return value
        case .text(let value): return Data(value.utf8)
        default: return nil
        }
    }
}

/// One SQLite connection: statements run with bound values, rows come back as arrays of
/// ``SQLiteValue``. Not thread-safe: the agent uses it only under its state's lock.
final class SQLiteDatabase {
    private var handle: OpaquePointer?
    /// The database file.
    let path: String

    /// Opens (creating) the database at `path`.
    init(path: String) throws {
        self.path = path
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX
        let result = sqlite3_open_v2(path, &opened, flags, nil)
        guard result == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close(opened)
            throw SQLiteError(code: result, message: "\(path): \(message)")
        }
        handle = opened
        sqlite3_busy_timeout(opened, 5_000)
    }

    deinit { sqlite3_close(handle) }

    /// Runs `sql` (one or more statements, no values).
    func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &error)
        guard result == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? "failed"
            sqlite3_free(error)
            throw SQLiteError(code: result, message: message)
        }
    }

    /// Runs one statement with `values` bound to its `?`s and returns its rows.
    @discardableResult
    func query(_ sql: String, _ values: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw SQLiteError(code: sqlite3_errcode(handle), message: "\(lastMessage) in \(sql)")
        }
        defer { sqlite3_finalize(statement) }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .null: sqlite3_bind_null(statement, index)
            case .integer(let number): sqlite3_bind_int64(statement, index, number)
            case .real(let number): sqlite3_bind_double(statement, index, number)
            case .text(let text): sqlite3_bind_text(statement, index, text, -1, courier_sqlite_transient())
            case .blob(let data):
                _ = data.withUnsafeBytes { raw in
                    sqlite3_bind_blob(statement, index, raw.baseAddress, Int32(raw.count), courier_sqlite_transient())
                }
            }
        }
        var rows: [[SQLiteValue]] = []
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { break }
            guard step == SQLITE_ROW else { throw SQLiteError(code: step, message: "\(lastMessage) in \(sql)") }
            var row: [SQLiteValue] = []
            for column in 0..<sqlite3_column_count(statement) {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.integer(sqlite3_column_int64(statement, column)))
                case SQLITE_FLOAT: row.append(.real(sqlite3_column_double(statement, column)))
                case SQLITE_TEXT: row.append(.text(String(cString: sqlite3_column_text(statement, column))))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    if let bytes = sqlite3_column_blob(statement, column), count > 0 {
                        row.append(.blob(Data(bytes: bytes, count: count)))
                    } else {
                        row.append(.blob(Data()))
                    }
                default: row.append(.null)
                }
            }
            rows.append(row)
        }
        return rows
    }

    /// The rowid of the last insert.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    func transaction<R>(_ body: () throws -> R) throws -> R {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    private var lastMessage: String { String(cString: sqlite3_errmsg(handle)) }
}
