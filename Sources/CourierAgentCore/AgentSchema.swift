/// The agent database's schema and its migrations (`Documentation/Background.md`, "Database").
///
/// `schema_version` holds one row: the version the file is at. Migration `n` (index `n - 1` of
/// ``migrations``) brings a file from version `n - 1` to `n`; opening runs the missing ones in one
/// transaction each. A file at a version newer than this code knows is refused, never changed.
enum AgentSchema {
    /// The version this code writes.
    static var currentVersion: Int { migrations.count }

    /// Every migration, oldest first.
    static let migrations: [String] = [
        // 1: sessions, tasks, undelivered events.
        """
        CREATE TABLE sessions (
            identifier TEXT PRIMARY KEY,
            last_task_id INTEGER NOT NULL DEFAULT 0,
            settings BLOB
        );
        CREATE TABLE tasks (
            session TEXT NOT NULL,
            task_id INTEGER NOT NULL,
            kind TEXT NOT NULL,
            request BLOB NOT NULL,
            phase TEXT NOT NULL,
            upload_file TEXT,
            earliest_begin REAL,
            description TEXT,
            bytes_received INTEGER NOT NULL DEFAULT 0,
            bytes_expected INTEGER NOT NULL DEFAULT -1,
            bytes_sent INTEGER NOT NULL DEFAULT 0,
            bytes_expected_to_send INTEGER NOT NULL DEFAULT -1,
            resume_data BLOB,
            response BLOB,
            created REAL NOT NULL,
            PRIMARY KEY (session, task_id)
        );
        CREATE TABLE events (
            sequence INTEGER PRIMARY KEY AUTOINCREMENT,
            session TEXT NOT NULL,
            task_id INTEGER NOT NULL,
            payload BLOB NOT NULL
        );
        CREATE INDEX events_by_session ON events (session, sequence);
        """,
        // 2: partial downloads kept for the resume data of failed downloads, until they expire.
        """
        CREATE TABLE kept_partials (
            name TEXT PRIMARY KEY,
            expires REAL NOT NULL
        );
        """,
        // 3: the app's byte-count hints (countOfBytesClientExpectsToReceive / …ToSend; -1: none).
        """
        ALTER TABLE tasks ADD COLUMN client_expects_receive INTEGER NOT NULL DEFAULT -1;
        ALTER TABLE tasks ADD COLUMN client_expects_send INTEGER NOT NULL DEFAULT -1;
        """,
    ]
}
